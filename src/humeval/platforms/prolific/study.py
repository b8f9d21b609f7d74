"""A Prolific study built from the locked protocol: time, reward, places, link and completion codes.

=========================  ==================================================================
field of the study          from
=========================  ==================================================================
``name``/``description``    ``platform.prolific.title``/``description``, else the study's own
``external_study_url``      ``platform.prolific.study_url`` with ``PROLIFIC_PID``, ``STUDY_ID``
                            and ``SESSION_ID`` filled in by Prolific (``{{%...%}}``)
``estimated_completion_     a pilot's judgements (``platform.prolific.pilot``), else the
time``                      rehearsal's (``results/rehearsal/judgements.jsonl``): the median
                            over participants of their summed seconds per task, plus
                            ``extra_minutes``; else ``estimated_minutes`` as declared
``reward``                  ``hourly_pay`` x minutes / 60, in cents, rounded up
``total_available_places``  the number of participant lists of the design
``completion_codes``        ``platform.completion_code`` (COMPLETED) and
                            ``platform.screenout_code`` (FAILED_ATTENTION_CHECK),
                            both reviewed by hand (``humeval prolific review``)
``filters``                 ``platform.prolific.filters`` and a blocklist of ``exclude_groups``
=========================  ==================================================================
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from humeval.errors import DataError, ProtocolError
from humeval.protocol.models import ProlificSettings
from humeval.study import Study

__all__ = [
    "ENTRY_QUERY",
    "MINIMUM_HOURLY_PAY",
    "LaunchBudget",
    "estimate_minutes",
    "launch_budget",
    "state_file",
    "study_body",
    "study_url",
]

#: Prolific's minimum hourly pay per currency (researcher help centre, "What is the minimum pay?")
MINIMUM_HOURLY_PAY = {"GBP": 6.0, "USD": 8.0}
ENTRY_QUERY = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


@dataclass(frozen=True)
class LaunchBudget:
    """What a Prolific study will cost before anything is spent (shown by ``prolific create``)."""

    places: int
    minutes: int
    time_source: str
    currency: str
    hourly_pay: float
    reward_cents: int
    implied_hourly: float
    minimum_hourly: float
    total_rewards: float

    def rows(self) -> list[dict[str, Any]]:
        """The budget as ``{"item", "value"}`` rows for a table."""
        c = self.currency
        return [
            {"item": "places (participant lists)", "value": self.places},
            {"item": "estimated time per place", "value": f"{self.minutes} min ({self.time_source})"},
            {"item": "reward per place", "value": f"{self.reward_cents / 100:.2f} {c}"},
            {"item": "implied hourly pay", "value": f"{self.implied_hourly:.2f} {c}/h (minimum {self.minimum_hourly:.2f})"},
            {"item": "rewards in total (before Prolific's fee)", "value": f"{self.total_rewards:.2f} {c}"},
        ]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _timed_minutes(path: Path) -> float | None:
    """Median over participants of the summed seconds per task in a judgements file; None if untimed."""
    from humeval.judgements import read_judgements

    frame = read_judgements(path)
    timed = frame[frame["seconds"].notna()]
    if timed.empty:
        return None
    per_task = timed.groupby(["participant_id", "task_id"])["seconds"].first()
    return float(per_task.groupby(level=0).sum().median()) / 60.0


def estimate_minutes(study: Study) -> tuple[int, str]:
    """Minutes per participant list and where they come from (pilot, rehearsal or declared)."""
    settings = study.protocol.platform.prolific
    sources = []
    if settings.pilot:
        pilot = study.root / settings.pilot
        if not pilot.is_file():
            raise DataError(f"{pilot}: platform.prolific.pilot names a judgements file that does not exist")
        sources.append((pilot, "pilot"))
    sources.append((study.results_dir / "rehearsal" / "judgements.jsonl", "rehearsal"))
    for path, name in sources:
        if path.is_file() and (measured := _timed_minutes(path)) is not None:
            minutes = max(1, math.ceil(measured + settings.extra_minutes))
            return minutes, f"{name}: median {measured:.1f} min + {settings.extra_minutes:g} min"
    if settings.estimated_minutes is not None:
        return settings.estimated_minutes, "declared"
    raise ProtocolError(f"{study.protocol_file}: platform.prolific: no time per participant list: declare "
                        "estimated_minutes, name a pilot's judgements file (pilot), or run `humeval rehearse`")


def launch_budget(study: Study) -> LaunchBudget:
    """Places, time, reward and the hourly-pay check of the study on Prolific (refuses a pay below the minimum).

    The one place this is computed: ``prolific create`` prints it before any request.
    """
    settings = study.protocol.platform.prolific
    places = len(study.read_lists())
    if places == 0:
        raise DataError(f"{study.lists_file}: the design has no participant lists; Prolific places are one per list")
    minutes, source = estimate_minutes(study)
    if settings.hourly_pay <= 0:
        raise ProtocolError(f"{study.protocol_file}: platform.prolific.hourly_pay: declare the pay per hour "
                            f"(in {settings.currency}); the reward is computed from it")
    reward_cents = math.ceil(round(settings.hourly_pay * minutes / 60 * 100, 6))
    minimum = settings.minimum_hourly_pay or MINIMUM_HOURLY_PAY[settings.currency]
    implied = reward_cents / 100 * 60 / minutes
    if implied < minimum:
        raise ProtocolError(f"{study.protocol_file}: platform.prolific.hourly_pay: {settings.hourly_pay:g} "
                            f"{settings.currency}/h is below the minimum of {minimum:g} {settings.currency}/h")
    return LaunchBudget(places, minutes, source, settings.currency, settings.hourly_pay, reward_cents,
                        round(implied, 4), minimum, round(places * reward_cents / 100, 2))


def study_url(settings: ProlificSettings) -> str:
    """The study link Prolific sends participants to, with its three placeholders."""
    base = settings.study_url.strip()
    if not base.startswith(("https://", "http://")):
        raise ProtocolError(f"platform.prolific.study_url: the public address of `humeval serve` (https://...), got {base!r}")
    return base + ("&" if "?" in base else "?") + ENTRY_QUERY


def study_body(study: Study, budget: LaunchBudget) -> dict[str, Any]:
    """The body of ``POST /api/v1/studies/`` for this study."""
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
        codes.append({"code": platform.screenout_code, "code_type": "FAILED_ATTENTION_CHECK", "actor": "participant",
                      "actions": [{"action": "MANUALLY_REVIEW"}]})
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
        "total_available_places": budget.places,
        "estimated_completion_time": budget.minutes,
        "reward": budget.reward_cents,
        "device_compatibility": list(settings.devices),
        "filters": filters,
    }


def state_file(study: Study) -> Path:
    """Where the Prolific study id of this study is kept (``.humeval/prolific.json``)."""
    return study.state_dir / "prolific.json"
