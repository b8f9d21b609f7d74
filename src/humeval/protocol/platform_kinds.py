"""The platforms ``platform.kind`` names, and what is known of each as plain data (:data:`PLATFORM_KINDS`).

The names are written here only: the protocol's ``platform.kind`` accepts them (:func:`kind_problem`), its
JSON Schema ``enum`` and description list them, and the docs' table is generated from them.

The facts the protocol, ``validate`` and the budget read (the platform's title, the URL parameters it
appends to the study link, its published fee and minimum pay, whether a participant turned away is
asked to return the study, why a completion code is required) are written here once, with the
dotted name of the adapter that implements the platform's operations
(:class:`humeval.platforms.base.CrowdPlatform`). This module imports no platform: the adapter is
loaded by that name when an operation is asked for (:func:`humeval.platforms.registry.platform_of`),
so reading a fact never imports the platform's API client, its lock checks or its study files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from humeval.errors import ProtocolError, did_you_mean
from humeval.registry import Registry

__all__ = ["PLATFORM_KINDS", "PlatformKind", "kind_problem", "platform_kind", "url_entry_kinds"]


@dataclass(frozen=True)
class PlatformKind:
    """What is known of one platform without asking it (see the module docstring)."""

    #: the registered name (``platform.kind``)
    name: str
    #: the platform's name in messages
    title: str
    #: ``"module:Class"``, the :class:`~humeval.platforms.base.CrowdPlatform` implementing its operations
    adapter: str = "humeval.platforms.base:CrowdPlatform"
    #: the URL parameters the platform appends to the study link (the participant id first)
    entry_parameters: tuple[str, ...] = ()
    #: the platform's fee as a share of participant rewards, and its source (None: none known)
    fee: tuple[float, str] | None = None
    #: the minimum pay per hour the platform enforces, by currency
    minimum_hourly: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    #: a participant turned away should return the study on the platform, so that their place goes to someone else
    asks_return: bool = False
    #: why the protocol must give ``platform.completion_code`` on this platform, and where to find it ("": it need not)
    completion_code_required: str = ""
    #: participants arrive through the platform's URL parameters (the ``platform`` entry route is its default)
    url_entry: bool = False
    #: the currencies the platform pays in (empty: any ``pay.currency``)
    currencies: tuple[str, ...] = ()
    #: the attempts at a comprehension check the platform's policy asks for before a participant is screened out
    #: for failing it, and its source (``design.qualification_attempts``; None: no policy known)
    check_attempts: tuple[int, str] | None = None


PLATFORM_KINDS: Registry[PlatformKind] = Registry("platform", "platform.kind", error=ProtocolError)


def _add(name: str, title: str, *, summary: str, **facts: Any) -> None:
    PLATFORM_KINDS.add(name, PlatformKind(name, title, **facts), summary=summary)


_add("local", "humeval's server", summary="humeval's web server: people you invite, or anyone with the link")
_add("prolific", "Prolific", summary="Prolific, driven through its REST API (`humeval prolific`)",
     adapter="humeval.platforms.prolific.platform:Prolific",
     entry_parameters=("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
     # www.prolific.com/pricing, read 2026-09-20 (docs/budget.md)
     fee=(0.428, "Prolific platform fee (www.prolific.com/pricing, 2026-09-20)"),
     # researcher-help.prolific.com, "Prolific's payment principles"
     minimum_hourly=MappingProxyType({"GBP": 6.00, "USD": 8.00}), currencies=("GBP", "USD"),
     asks_return=True, url_entry=True,
     # researcher-help.prolific.com, "Prolific's attention and comprehension check policy"
     check_attempts=(2, "Prolific's attention and comprehension check policy"),
     completion_code_required=("the code participants are shown at the end and submit to Prolific (copy it from the "
                               "study's 'Completion paths' in Prolific, e.g. completion_code: C1A2B3C4)"))
_add("connect", "CloudResearch Connect", summary="CloudResearch Connect, a URL-parameter panel",
     entry_parameters=("participantId", "assignmentId", "projectId"), url_entry=True)
_add("sona", "SONA Systems", summary="SONA Systems, a URL-parameter panel granting credit",
     adapter="humeval.platforms.panels:Sona", entry_parameters=("id",), url_entry=True)
_add("panel", "the panel", summary="a generic URL-parameter panel (`platform.id_parameter`)",
     adapter="humeval.platforms.panels:Panel", url_entry=True)
_add("files", "files", summary="spreadsheets handed out, or judgements imported from files (such as old MTurk batches)")


def platform_kind(kind: str) -> PlatformKind:
    """The facts of the platform ``platform.kind`` names (an unknown name: :class:`~humeval.errors.ProtocolError`
    with the nearest name)."""
    return PLATFORM_KINDS.get(kind)


def url_entry_kinds() -> tuple[str, ...]:
    """The kinds whose participants arrive through the platform's URL parameters."""
    return tuple(e.name for e in PLATFORM_KINDS.entries() if e.value.url_entry)


def kind_problem(kind: str) -> str:
    """Why ``kind`` is no ``platform.kind`` ("" when it is one): the registered names and the nearest."""
    if kind in PLATFORM_KINDS:
        return ""
    return f"unknown platform {kind!r}. {did_you_mean(kind, PLATFORM_KINDS.all_names())}"
