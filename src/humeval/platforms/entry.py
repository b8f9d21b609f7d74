"""Who is entering: the entry route, participant id and platform parameters of an entry link or request.

A study accepts the routes its protocol declares (``platform.entry``; by default
``[platform]`` for a recruitment platform, ``[open]`` for a local study):

===========  ==================================================================  ==================
route         fields                                                              participant id
===========  ==================================================================  ==================
``platform``  the platform's URL parameters (its ``entry_fields``), e.g.           the first field
              ``prolific``: ``PROLIFIC_PID``, ``STUDY_ID``, ``SESSION_ID``;
              ``sona``: ``id`` (SONA's ``%SURVEY_CODE%``);
              ``panel``: the protocol's ``id_parameter``
``invite``    ``invite`` (a token signed with the store's secret)                  the invited id
``open``      ``participant_id``                                                  as given
===========  ==================================================================  ==================

A participant is pinned to the route of their first entry (the store refuses another):
an invited participant cannot be entered by id alone, nor a Prolific participant by an
open id. A request naming fields of a route the study does not accept is refused (403
``route_not_accepted``); fields no route knows are refused (422).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from humeval.errors import PlatformError, Refused
from humeval.platforms.registry import platform_of
from humeval.protocol.models import Platform
from humeval.wire import (
    INVITE,
    INVITE_MAX,
    INVITE_PATTERN,
    PARAM_MAX,
    PARTICIPANT_ID,
    PARTICIPANT_ID_PATTERN,
)

__all__ = [
    "ROUTE_FIELDS",
    "Entry",
    "EntryRefused",
    "accepted_fields",
    "describe_routes",
    "entry_body",
    "entry_model",
    "link_fields",
    "platform_fields",
    "resolve_entry",
    "route_ids",
    "route_label",
]

#: the fields of the routes that do not depend on the platform
ROUTE_FIELDS: dict[str, tuple[str, ...]] = {"invite": ("invite",), "open": ("participant_id",)}
_DESCRIBE = {"invite": "an invite link (invite)", "open": "a participant id (participant_id)"}
#: how the store labels a participant's route (``participants.platform``); ``local`` is an open id
_OPEN_LABEL, _INVITE_LABEL = "local", "invite"


class EntryRefused(Refused, PlatformError):
    """An entry request the study does not accept (nothing was written): the code, field and status say why."""


@dataclass(frozen=True)
class Entry:
    """A resolved entry: who, through which route, stored under which platform label, with what parameters."""

    participant_id: str
    platform: str
    params: dict[str, str] = field(default_factory=dict)
    route: str = "open"


def platform_fields(platform: Platform) -> tuple[str, ...]:
    """The platform route's URL parameters (the participant id first; the platform's
    :meth:`~humeval.platforms.base.CrowdPlatform.entry_fields`); empty for local and files."""
    return platform_of(platform.kind).entry_fields(platform)


def route_label(platform: Platform, route: str) -> str:
    """What the store records as the participant's platform for ``route``."""
    return platform.kind if route == "platform" else _INVITE_LABEL if route == "invite" else _OPEN_LABEL


def _fields_of(platform: Platform, route: str) -> tuple[str, ...]:
    return platform_fields(platform) if route == "platform" else ROUTE_FIELDS[route]


def accepted_fields(platform: Platform) -> tuple[str, ...]:
    """Every field an entry of this study may carry (``consent`` is added by the JSON API)."""
    return tuple(f for route in platform.routes for f in _fields_of(platform, route))


def link_fields(platform: Platform) -> tuple[str, ...]:
    """The query parameters an entry link is read from: every route's, so a wrong route is named, not ignored."""
    known = [*ROUTE_FIELDS["invite"], *ROUTE_FIELDS["open"], *platform_fields(platform)]
    return tuple(dict.fromkeys(known))


def describe_routes(platform: Platform) -> str:
    parts = []
    for route in platform.routes:
        if route == "platform":
            parts.append(f"the {platform.kind} link ({', '.join(platform_fields(platform))})")
        else:
            parts.append(_DESCRIBE[route])
    return " or ".join(parts) or "no route (this study is not served)"


def entry_body(platform: Platform, participant_id: str) -> dict[str, str]:
    """A JSON entry body for ``participant_id`` through the study's platform or open route (rehearsals)."""
    if "platform" in platform.routes:
        names = platform_fields(platform)
        return {names[0]: participant_id} | {n: f"rehearsal-{n.lower()}" for n in names[1:]}
    if "open" in platform.routes:
        return {"participant_id": participant_id}
    raise EntryRefused("route_not_accepted", f"this study accepts only {describe_routes(platform)}", status=403)


def _text(data: Mapping[str, Any], key: str) -> str:
    if key not in data:
        return ""
    value = data[key]
    if not isinstance(value, str):
        raise EntryRefused("invalid_value", f"{key}: expected a string, got {type(value).__name__}", status=422, field=key)
    limit = INVITE_MAX if key == "invite" else PARAM_MAX
    if len(value) > limit:
        raise EntryRefused("invalid_value", f"{key}: at most {limit} characters, got {len(value)}", status=422, field=key)
    return value


def _checked_id(value: str, key: str) -> str:
    if not PARTICIPANT_ID.match(value):
        raise EntryRefused(
            "invalid_value",
            f"{key}: a participant id is 1-128 letters, digits or _.:@+- (starting with a letter or digit), got {value[:40]!r}",
            status=422, field=key,
        )
    return value


def resolve_entry(data: Mapping[str, Any], platform: Platform, read_invite: Callable[[str], str | None],
                  *, extra: tuple[str, ...] = ()) -> Entry:
    """The entry described by ``data`` (JSON body or link parameters) for a study on ``platform``.

    ``extra``: further fields the caller reads itself (``consent``). Raises :class:`EntryRefused`:
    422 for unknown or malformed fields, 403 ``route_not_accepted`` for a route the study
    does not accept, 401 ``invalid_invite`` for a forged or foreign invite.
    """
    known = set(link_fields(platform)) | set(extra)
    unknown = sorted(k for k in data if k not in known)
    if unknown:
        expected = ", ".join((*accepted_fields(platform), *extra))
        raise EntryRefused("invalid_value", f"{unknown[0][:60]}: unknown field; expected {expected}", status=422, field=unknown[0][:60])
    for name in route_ids(platform).values():
        if name in data and not _text(data, name):
            raise EntryRefused("invalid_value", f"{name}: must not be empty", status=422, field=name)
    given = [route for route in ("platform", "invite", "open")
             if (route != "platform" or platform_fields(platform))
             and any(_text(data, f) for f in _fields_of(platform, route))]
    if not given:
        first = accepted_fields(platform)[:1] or ("participant_id",)
        raise EntryRefused("invalid_value", f"{first[0]}: required; this study accepts {describe_routes(platform)}", status=422, field=first[0])
    if len(given) > 1:
        raise EntryRefused("invalid_value", f"give one entry route, not {' and '.join(given)}", status=422)
    route = given[0]
    if route not in platform.routes:
        raise EntryRefused("route_not_accepted", f"this study does not accept entry by {route}: it accepts only "
                      f"{describe_routes(platform)}", status=403, field=_fields_of(platform, route)[0])
    if route == "platform":
        names = platform_fields(platform)
        if not _text(data, names[0]):
            raise EntryRefused("invalid_value", f"{names[0]}: required (the participant id of the {platform.kind} link)", status=422, field=names[0])
        params = {k: _text(data, k) for k in names if _text(data, k)}
        return Entry(_checked_id(params[names[0]], names[0]), route_label(platform, route), params, route)
    if route == "invite":
        invite = _text(data, "invite")
        pid = read_invite(invite) if INVITE.match(invite) else None
        if pid is None:
            raise EntryRefused("invalid_invite", "this invite link is not valid (it was altered or is from another study)", status=401, field="invite")
        return Entry(pid, route_label(platform, route), {}, route)
    return Entry(_checked_id(_text(data, "participant_id"), "participant_id"), route_label(platform, route), {}, route)


def entry_model(platform: Platform) -> type[BaseModel]:
    """The JSON body of ``POST /api/v1/enter`` for a study on ``platform``, as a pydantic model (the
    contract published in ``openapi.json``): the fields of every accepted route and ``consent``,
    nothing else, none of them null, and exactly one route's id (``oneOf``). :func:`resolve_entry`
    applies the same rules with the codes of the error shape."""
    fields: dict[str, Any] = {}
    ids = route_ids(platform)
    id_fields = set(ids.values())
    for name in accepted_fields(platform):
        if name == "invite":
            fields[name] = (str, Field(None, min_length=1, max_length=INVITE_MAX, pattern=INVITE_PATTERN,
                                       description="a signed invite token (from POST /api/v1/admin/invites)"))
        elif name in id_fields:
            fields[name] = (str, Field(None, pattern=PARTICIPANT_ID_PATTERN, description="the participant id"))
        else:
            fields[name] = (str, Field(None, max_length=PARAM_MAX, description=f"the {platform.kind} link parameter {name}"))
    fields["consent"] = (bool, Field(False, description="consent given on a page of your own (skips POST /api/v1/consent)"))
    one_route: list[Any] = [{"required": [ids[r]]} for r in platform.routes if r in ids]
    config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"oneOf": one_route} if one_route else None)
    return create_model(f"Enter{platform.kind.capitalize()}", __config__=config, **fields)


def route_ids(platform: Platform) -> dict[str, str]:
    """The field naming the participant in each route the study could be entered by (``route -> field``)."""
    ids = {"invite": "invite", "open": "participant_id"}
    if platform_fields(platform):
        ids["platform"] = platform_fields(platform)[0]
    return ids
