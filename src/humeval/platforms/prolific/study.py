"""A Prolific study built from the locked protocol: time, reward, places, link and completion codes.

=========================  ==================================================================
field of the study          from
=========================  ==================================================================
``name``/``description``    ``platform.prolific.title``/``description``, else the study's own
``external_study_url``      ``platform.prolific.study_url`` with ``PROLIFIC_PID``, ``STUDY_ID``
                            and ``SESSION_ID`` filled in by Prolific (``{{%...%}}``)
``estimated_completion_     :func:`humeval.costs.budget`'s minutes per list (the ``pay`` section:
time``                      declared, or measured on ``pay.pilot`` or a rehearsal)
``reward``                  its reward per list, in cents (``pay.hourly`` x minutes / 60,
                            rounded up to the cent, or ``platform.reward``)
``total_available_places``  the number of participant lists of the design, or with dynamic
                            stopping its first wave (:mod:`~.waves`; later waves by ``sync``)
``completion_codes``        ``platform.completion_code`` (COMPLETED) and
                            ``platform.screenout_code`` (FAILED_ATTENTION_CHECK), both reviewed
                            (``humeval prolific review``); with ``screenout_reward`` the screen-out
                            code is FIXED_SCREENOUT, paid by Prolific (:func:`screenout_code`)
``filters``                 ``platform.prolific.filters`` and a blocklist of ``exclude_groups``
=========================  ==================================================================
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from humeval.errors import ProtocolError
from humeval.protocol.models import ProlificSettings
from humeval.study import StudyFolder

if TYPE_CHECKING:
    from humeval.costs import Budget
    from humeval.store.live import Recruitment

__all__ = [
    "ENTRY_QUERY",
    "dynamic",
    "first_wave",
    "screenout_code",
    "state_file",
    "study_body",
    "study_url",
    "wave_places",
]

ENTRY_QUERY = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


def study_url(settings: ProlificSettings) -> str:
    """The study link Prolific sends participants to, with its three placeholders."""
    base = settings.study_url.strip()
    if not base.startswith(("https://", "http://")):
        raise ProtocolError(f"platform.prolific.study_url: the public address of `humeval serve` (https://...), got {base!r}")
    return base + ("&" if "?" in base else "?") + ENTRY_QUERY


def study_body(study: StudyFolder, budget: Budget, places: int | None = None) -> dict[str, Any]:
    """The body of ``POST /api/v1/studies/`` for this study (``places``: the first wave; default every list)."""
    protocol = study.protocol
    platform, settings = protocol.platform, protocol.platform.prolific
    if platform.kind != "prolific":
        raise ProtocolError(f"{study.protocol_file}: platform.kind is {platform.kind!r}; `humeval prolific` needs "
                            "platform.kind: prolific")
    if not platform.completion_code:
        raise ProtocolError(f"{study.protocol_file}: platform.completion_code: required for Prolific (shown on the "
                            "completion page and checked by Prolific)")
    completed: dict[str, Any] = {"code": platform.completion_code, "code_type": "COMPLETED", "actor": "participant",
                                 "actions": [{"action": "MANUALLY_REVIEW"}]}
    if settings.completed_group:
        completed["actions"].append({"action": "ADD_TO_PARTICIPANT_GROUP", "participant_group": settings.completed_group})
    codes = [completed]
    if platform.screenout_code:
        if platform.screenout_code == platform.completion_code:
            raise ProtocolError(f"{study.protocol_file}: platform.screenout_code must differ from "
                                "platform.completion_code")
        codes.append(screenout_code(study, budget))
    elif settings.screenout_reward > 0:
        raise ProtocolError(f"{study.protocol_file}: platform.prolific.screenout_reward is paid to those who submit "
                            "platform.screenout_code; set that code (or set screenout_reward to 0)")
    filters = [dict(f) for f in settings.filters]
    if settings.exclude_groups:
        filters.append({"filter_id": "participant_group_blocklist", "selected_values": list(settings.exclude_groups)})
    return {
        "name": settings.title or protocol.study.name,
        "internal_name": f"humeval {protocol.study.name}",
        "description": settings.description or protocol.study.description or protocol.study.name,
        "external_study_url": study_url(settings),
        "prolific_id_option": "url_parameters",
        "completion_codes": codes,
        "total_available_places": budget.places if places is None else places,
        "estimated_completion_time": int(budget.minutes_per_list),
        "reward": round(budget.reward_per_list * 100),
        "device_compatibility": list(settings.devices),
        "filters": filters,
    }


def screenout_code(study: StudyFolder, budget: Budget) -> dict[str, Any]:
    """The completion code of ``platform.screenout_code``.

    With ``platform.prolific.screenout_reward``: a ``FIXED_SCREENOUT`` code whose
    ``FIXED_SCREEN_OUT_PAYMENT`` action makes Prolific pay that reward (in cents) to each of at most
    ``slots`` participants who submit it, with no review (``screenout_places``, default one per list).
    Without it: a ``FAILED_ATTENTION_CHECK`` code reviewed by hand (``humeval prolific review``).
    """
    platform, settings = study.protocol.platform, study.protocol.platform.prolific
    if settings.screenout_reward <= 0:
        return {"code": platform.screenout_code, "code_type": "FAILED_ATTENTION_CHECK", "actor": "participant",
                "actions": [{"action": "MANUALLY_REVIEW"}]}
    cents = round(settings.screenout_reward * 100)
    reward = round(budget.reward_per_list * 100)
    if not 0 < cents < reward:
        raise ProtocolError(f"{study.protocol_file}: platform.prolific.screenout_reward: a screen-out payment below "
                            f"the reward per list ({reward / 100:.2f} {budget.currency}) and at least 0.01, got "
                            f"{settings.screenout_reward:g}")
    slots = settings.screenout_places or budget.places
    return {"code": platform.screenout_code, "code_type": "FIXED_SCREENOUT", "actor": "participant",
            "actions": [{"action": "FIXED_SCREEN_OUT_PAYMENT", "fixed_screen_out_reward": cents, "slots": slots}]}


def state_file(study: StudyFolder) -> Path:
    """Where the Prolific study id of this study is kept (``.humeval/prolific.json``)."""
    return study.state_dir / "prolific.json"


def wave_places(target: int, opened: int, wave: int, lists: int) -> int:
    """Places to have open: ``opened`` while the target fits; else the target rounded up to a multiple of
    ``wave``, at least one wave more than ``opened``, at most ``lists``.

    >>> wave_places(3, 0, 2, 20), wave_places(4, 4, 2, 20), wave_places(5, 4, 4, 20), wave_places(21, 16, 4, 18)
    (4, 4, 8, 18)
    """
    if target <= opened or opened >= lists:
        return opened
    return min(lists, max(opened + wave, math.ceil(target / wave) * wave))


def dynamic(recruitment: Recruitment) -> bool:
    """Whether the store admits sessions by the stopping rule (a watched comparison, ``list`` strategy)."""
    return bool(recruitment.comparisons)


def first_wave(study: StudyFolder) -> tuple[int, Recruitment | None]:
    """The places ``prolific create`` opens, with the fresh store's recruitment (None for a fixed design).

    The target is read from a store seeded in a temporary folder (the study's own store may not exist
    yet, and is never touched): the sessions the rule admits before any outcome is in.
    """
    from humeval.store.store import Store

    lists = len(study.read_lists())
    if study.protocol.stopping is None:
        return lists, None
    with tempfile.TemporaryDirectory(prefix="humeval-wave-") as folder:
        store = Store.open(study, str(Path(folder) / "fresh.db"))
        try:
            store.prepare()
            fresh = store.recruitment()
        finally:
            store.close()
    if not dynamic(fresh):
        return lists, None
    return wave_places(fresh.target, 0, study.protocol.crowd.wave, lists), fresh
