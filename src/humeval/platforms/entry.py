"""Who is entering: the participant id and platform parameters from an entry link or request.

=============  ===================================================  ==========================
platform        parameters                                           participant id
=============  ===================================================  ==========================
``prolific``    ``PROLIFIC_PID``, ``STUDY_ID``, ``SESSION_ID``       ``PROLIFIC_PID``
``mturk``       ``workerId``, ``assignmentId``, ``hitId``            ``workerId``
``invite``      ``invite`` (a token signed with the store's secret)  the invited id
``local``       ``participant_id``                                   as given
=============  ===================================================  ==========================
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from humeval.store.refusal import Refusal

__all__ = ["ENTRY_FIELDS", "LINK_FIELDS", "PARTICIPANT_ID", "Entry", "resolve_entry"]

PARTICIPANT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,127}$")
PLATFORM_FIELDS = {
    "prolific": ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
    "mturk": ("workerId", "assignmentId", "hitId"),
}
#: what an entry link may carry (consent is never taken from a link: it is given on the consent page)
LINK_FIELDS = ("participant_id", "invite", *PLATFORM_FIELDS["prolific"], *PLATFORM_FIELDS["mturk"])
ENTRY_FIELDS = (*LINK_FIELDS, "consent")
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"


@dataclass(frozen=True)
class Entry:
    participant_id: str
    platform: str
    params: dict[str, str] = field(default_factory=dict)


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Refusal("invalid_value", f"{key}: expected a string, got {type(value).__name__}", status=422, field=key)
    if len(value) > 128:
        raise Refusal("invalid_value", f"{key}: at most 128 characters, got {len(value)}", status=422, field=key)
    return value


def _checked_id(value: str, key: str) -> str:
    if not PARTICIPANT_ID.match(value):
        raise Refusal(
            "invalid_value",
            f"{key}: a participant id is 1-128 letters, digits or _.:@+- (starting with a letter or digit), got {value[:40]!r}",
            status=422, field=key,
        )
    return value


def resolve_entry(data: Mapping[str, Any], read_invite: Callable[[str], str | None]) -> Entry:
    """The entry described by ``data`` (JSON body or query parameters); raise :class:`Refusal`."""
    unknown = sorted(k for k in data if k not in ENTRY_FIELDS)
    if unknown:
        raise Refusal("invalid_value", f"{unknown[0][:60]}: unknown field; expected {', '.join(ENTRY_FIELDS)}", status=422, field=unknown[0][:60])
    if _text(data, "PROLIFIC_PID"):
        params = {k: _text(data, k) for k in PLATFORM_FIELDS["prolific"] if _text(data, k)}
        return Entry(_checked_id(params["PROLIFIC_PID"], "PROLIFIC_PID"), "prolific", params)
    if _text(data, "workerId"):
        params = {k: _text(data, k) for k in PLATFORM_FIELDS["mturk"] if _text(data, k)}
        if params.get("assignmentId") == MTURK_PREVIEW:
            raise Refusal("mturk_preview", "this is an MTurk preview: accept the HIT to start", status=400, field="assignmentId")
        return Entry(_checked_id(params["workerId"], "workerId"), "mturk", params)
    if invite := _text(data, "invite"):
        pid = read_invite(invite)
        if pid is None:
            raise Refusal("invalid_invite", "this invite link is not valid (it was altered or is from another study)", status=401, field="invite")
        return Entry(pid, "invite", {})
    pid = _text(data, "participant_id")
    if not pid:
        raise Refusal("invalid_value", "participant_id: required (or PROLIFIC_PID, workerId, invite)", status=422, field="participant_id")
    return Entry(_checked_id(pid, "participant_id"), "local", {})
