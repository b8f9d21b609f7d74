"""What humeval asks of a crowd platform: the interface every platform implements (its part of it).

A platform is one entry of :data:`humeval.protocol.platform_kinds.PLATFORM_KINDS` under the name
``platform.kind`` gives: its facts as plain data, and the dotted name of the subclass of
:class:`CrowdPlatform` that implements its operations, loaded on first use by :func:`platform_of`
(also :func:`humeval.platforms.registry.platform_of`). The server, ``serve`` (:mod:`humeval.collect`)
and the budget (:mod:`humeval.costs`) ask it; none of them names a platform.

=================================  ==================================================  ================
part                                what it is                                          default
=================================  ==================================================  ================
``entry_fields(platform)``          the URL parameters the platform appends to the      none
                                    study link, the participant id first
``completion_url(platform, code)``  the link a participant is sent to at the end,       none
                                    built from the code when the protocol gives none
``personal_url(url, pid)``          that link for one participant                       as given
``fee``, ``minimum_hourly``         the published fee (share of rewards, source) and    none known
                                    minimum pay per hour by currency, for the budget
                                    (facts: :class:`PlatformKind`)
``create(study, budget)``           the study on the platform, with the budget's        unsupported
                                    places and reward
``recruit(study)``                  places opened to the number the store's             unsupported
                                    recruitment asks for (waves; pause, start, stop)
``status(study)``                   the submissions, with returned and timed-out        unsupported
                                    participants' lists released
``review(study)``                   approve or reject by the preregistered rules        unsupported
``bonus(study)``                    bonuses paid at most once                           unsupported
``serving(study, say)``             what ``serve`` needs from the environment (a hook   nothing
                                    secret, whether first entries are checked)
``hook_routes(study, ...)``         the routes the platform's hooks call                none
``entry_check(study)``              a check of a first entry with the platform          none
``recruit_every(study, s, ...)``    :meth:`recruit` every ``s`` seconds beside          unsupported
                                    the server
``recruitment_state(study)``        the places, waves and status kept for the admin     empty
                                    page
``asks_return``                     a participant turned away is asked to return the    no
                                    study on the platform (their place goes to another)
                                    (a fact)
``completion_code_required``        why ``platform.completion_code`` is required        not required
                                    (a fact)
=================================  ==================================================  ================

An operation a platform does not have raises :class:`~humeval.errors.PlatformError` naming the
platforms that have it. A URL-parameter panel (CloudResearch Connect, SONA, a generic panel)
implements the entry and completion parts: its places and payments are set on the panel.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from humeval.errors import PlatformError
from humeval.protocol.platform_kinds import PLATFORM_KINDS, PlatformKind

if TYPE_CHECKING:
    from humeval.costs import Budget
    from humeval.protocol.models import Platform
    from humeval.study import StudyFolder

__all__ = ["OPERATIONS", "CrowdPlatform", "EntryCheck", "EntryVerdict", "Serving", "platform_of"]

#: the operations of a platform's API, in the order of a study
OPERATIONS = ("create", "recruit", "status", "review", "bonus", "recruit_every")


@dataclass(frozen=True)
class EntryVerdict:
    """``allowed``; ``reason`` says why not (or that the platform could not be asked); ``checked``: it answered."""

    allowed: bool
    reason: str = ""
    checked: bool = True


class EntryCheck(Protocol):
    """A check of a participant's first entry with the platform (e.g. an active submission of this study)."""

    def check(self, participant_id: str, params: dict[str, Any]) -> EntryVerdict: ...


@dataclass(frozen=True)
class Serving:
    """What ``serve`` takes from the environment for a platform: the secret its hooks are signed with (empty: no
    hook routes) and whether first entries are checked with the platform."""

    hook_secret: str = ""
    check_entries: bool = False


class CrowdPlatform:
    """A crowd platform (see the module table), made from its facts; subclasses override the parts they implement.

    A platform with no behaviour beyond its facts (its entry parameters) is this class itself."""

    def __init__(self, kind: PlatformKind) -> None:
        #: the platform's facts (:data:`~humeval.protocol.platform_kinds.PLATFORM_KINDS`)
        self.kind = kind

    @property
    def name(self) -> str:
        """The registered name (``platform.kind``)."""
        return self.kind.name

    @property
    def title(self) -> str:
        """The platform's name in messages."""
        return self.kind.title

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    # ---------------------------------------------------------------- entry and completion
    def entry_fields(self, platform: Platform) -> tuple[str, ...]:
        """The platform route's URL parameters (the participant id first)."""
        return self.kind.entry_parameters

    def completion_url(self, platform: Platform, code: str) -> str:
        """The link to send a participant to at the end when the protocol gives none ("" for none)."""
        return ""

    def personal_url(self, url: str, participant_id: str) -> str:
        """A completion link for one participant (``{participant_id}`` placeholders are filled before)."""
        return url

    # ---------------------------------------------------------------- the platform's API
    def operations(self) -> tuple[str, ...]:
        """The API operations this platform implements."""
        return tuple(op for op in OPERATIONS if getattr(type(self), op) is not getattr(CrowdPlatform, op))

    def _unsupported(self, operation: str) -> PlatformError:
        have = [name for name in PLATFORM_KINDS if operation in platform_of(name).operations()]
        return PlatformError(f"platform.kind: {self.name!r} has no {operation!r}: humeval drives that on "
                             f"{', '.join(have) or 'no platform'} only; on {self.title or self.name} it is done on the "
                             "platform itself (docs/platforms.md)")

    def create(self, study: StudyFolder, *, budget: Budget, **options: Any) -> Any:
        """Create the study on the platform with the budget's places and reward."""
        raise self._unsupported("create")

    def recruit(self, study: StudyFolder, *, db: str | None = None, **options: Any) -> Any:
        """Open places up to the number the store's recruitment asks for (and pause, start or stop)."""
        raise self._unsupported("recruit")

    def status(self, study: StudyFolder, *, db: str | None = None, **options: Any) -> Any:
        """The submissions; the lists of returned and timed-out participants released."""
        raise self._unsupported("status")

    def review(self, study: StudyFolder, *, db: str | None = None, **options: Any) -> Any:
        """Approve or reject the submissions by the preregistered rules."""
        raise self._unsupported("review")

    def bonus(self, study: StudyFolder, *, db: str | None = None, **options: Any) -> Any:
        """Pay the bonuses the protocol declares, at most once each."""
        raise self._unsupported("bonus")

    def recruit_every(self, study: StudyFolder, seconds: float, *, db: str | None, say: Callable[[str], None]) -> None:
        """Check what :meth:`recruit` needs now, then run it every ``seconds`` beside the server."""
        raise self._unsupported("recruit_every")

    # ---------------------------------------------------------------- the server
    def serving(self, study: StudyFolder, say: Callable[[str], None]) -> Serving:
        """What ``serve`` takes from the environment for this platform (said through ``say``)."""
        return Serving()

    def hook_routes(self, study: StudyFolder, secret: str, *, db: str | None, first_delivery: Callable[..., bool],
                    forget_delivery: Callable[[str], Any]) -> list[Any]:
        """The routes the platform's hooks call (``secret``: :attr:`Serving.hook_secret`, never empty here), with the
        store's record of hook deliveries (``first_delivery(key, keep=seconds)``, ``forget_delivery(key)``)."""
        return []

    def entry_check(self, study: StudyFolder) -> EntryCheck | None:
        """The check of first entries with the platform (None: none)."""
        return None

    def recruitment_state(self, study: StudyFolder) -> dict[str, Any]:
        """The places, waves, status and recorded budget kept for the admin page (empty: none kept)."""
        return {}


@functools.cache
def platform_of(kind: str) -> CrowdPlatform:
    """The platform ``platform.kind`` names: its adapter (:attr:`PlatformKind.adapter`), imported by that name on
    first use and made from its facts (an unknown name: :class:`~humeval.errors.ProtocolError` with the nearest
    name)."""
    facts = PLATFORM_KINDS.get(kind)
    module, _, attribute = facts.adapter.partition(":")
    adapter = getattr(importlib.import_module(module), attribute)
    if not (isinstance(adapter, type) and issubclass(adapter, CrowdPlatform)):
        raise TypeError(f"platform {facts.name!r}: adapter {facts.adapter!r} is not a CrowdPlatform subclass")
    return adapter(facts)
