"""The bounds and patterns of the collection API, written once.

The request models of :mod:`humeval.server.contract` (and so ``openapi.json``), the entry
routes (:mod:`humeval.platforms.entry`), the JSON API (:mod:`humeval.server.api`) and the
store's checks (:mod:`humeval.store.submit`, :mod:`humeval.judgements.values`) all read these
constants; nothing else spells a bound or a pattern of the wire format.

:func:`read_body` is the one reader of a request body with its limit: every route that reads a
body (the JSON API, the participant pages' forms, Prolific's hook) reads it through it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Protocol

from humeval.errors import Refused

__all__ = [
    "ASSIGNMENT_ID_MAX",
    "MAX_HOOK_BODY",
    "IDEMPOTENCY_KEY",
    "IDEMPOTENCY_KEY_PATTERN",
    "INVITE",
    "INVITE_MAX",
    "INVITE_PATTERN",
    "MAX_BODY",
    "MAX_FORM",
    "MAX_INVITES",
    "MAX_COMMENT",
    "MAX_SCORE",
    "MAX_SECONDS",
    "PARAM_MAX",
    "PARTICIPANT_ID",
    "PARTICIPANT_ID_PATTERN",
    "read_body",
]

#: a participant id: 1-128 letters, digits or ``_.:@+-``, starting with a letter or digit
PARTICIPANT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,127}$"
PARTICIPANT_ID = re.compile(PARTICIPANT_ID_PATTERN)
#: a client's idempotency key for a submit (a UUID fits)
IDEMPOTENCY_KEY_PATTERN = r"^[A-Za-z0-9_.:-]{8,128}$"
IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)
#: a signed invite token: ``i1.<participant id, base64url>.<HMAC, base64url>``
INVITE_PATTERN = r"^i1\.[A-Za-z0-9_-]{1,200}\.[A-Za-z0-9_-]{1,64}$"
INVITE = re.compile(INVITE_PATTERN)
INVITE_MAX = 600
#: a platform link parameter (``STUDY_ID``, ``SESSION_ID``, ...)
PARAM_MAX = 128
#: an assignment id as ``GET /api/v1/next`` hands it out
ASSIGNMENT_ID_MAX = 64
#: seconds a participant may report for one judgement (a week)
MAX_SECONDS = 7 * 24 * 3600
#: the largest magnitude-estimation or RankME score
MAX_SCORE = 1e9
#: characters of a participant's optional comment on a task (``presentation.comments``)
MAX_COMMENT = 2000
#: participant ids per ``POST /api/v1/admin/invites``
MAX_INVITES = 10_000
#: bytes of a JSON body, and of a participant page's form
MAX_BODY = 64 * 1024
MAX_FORM = 16 * 1024
#: bytes of a Prolific hook request (its payloads are a few hundred bytes)
MAX_HOOK_BODY = 16 * 1024


class _Request(Protocol):  # a Starlette request, as far as reading its body goes
    @property
    def headers(self) -> object: ...

    def stream(self) -> AsyncIterator[bytes]: ...


async def read_body(request: _Request, limit: int = MAX_BODY) -> bytes:
    """The request's body, at most ``limit`` bytes; 413 (``too_large``) as soon as ``Content-Length`` or the
    bytes received so far exceed it: the body is streamed, never read whole before it is measured."""
    length = request.headers.get("content-length")  # type: ignore[attr-defined]
    if length is not None and (not length.isascii() or not length.strip().isdigit() or int(length) > limit):
        raise Refused("too_large", f"request body over {limit} bytes (Content-Length: {length[:20]!r})", status=413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Refused("too_large", f"request body over {limit} bytes", status=413)
        chunks.append(chunk)
    return b"".join(chunks)
