"""On a first entry from Prolific: does that participant hold an active submission of this study?

The link's ``SESSION_ID`` is the submission id, so one request settles it:
``GET /api/v1/submissions/{SESSION_ID}/`` must answer a submission of this study (``study_id``,
also the link's ``STUDY_ID``) by this participant (``participant_id``, or ``participant``) whose
``status`` is ``ACTIVE`` (Prolific's API reference, "Retrieve a submission" and the submission
object; docs.prolific.com/api-reference/submissions/get-submission). Whoever merely knows a
``PROLIFIC_PID`` has no such submission and is refused before anything is stored.

Answers are cached: a confirmed submission for as long as the process runs (the store then pins
the participant to that session), a refusal for ``refused_ttl`` seconds. When Prolific cannot be
reached (no answer, 5xx, 429 after the retries), the entry is let in with a logged warning and the
store's pinning to the first session remains the protection; that outcome is cached for
``unreachable_ttl`` seconds so that an outage does not hold every new participant for a timeout.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from humeval.errors import HumevalError
from humeval.platforms.base import EntryVerdict
from humeval.platforms.prolific.client import ProlificClient, ProlificError

__all__ = ["EntryVerdict", "SubmissionCheck"]

log = logging.getLogger("humeval.server")

#: a submission id as it may appear in a request path (Prolific's are 24 hexadecimal digits)
_SESSION = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: answers of Prolific that settle a check (a submission that is not this one, or none); others mean "unreachable"
_SETTLED = (400, 403, 404)


class SubmissionCheck:
    """Checks a first entry against Prolific's submissions of ``study_id`` (thread-safe, cached).

    ``client_factory`` makes a :class:`ProlificClient` (short timeout, few retries: a participant waits).
    """

    def __init__(self, study_id: str, client_factory: Callable[[], ProlificClient], *, refused_ttl: float = 60.0,
                 unreachable_ttl: float = 30.0, max_cached: int = 100_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.study_id = study_id
        self.client_factory = client_factory
        self.refused_ttl, self.unreachable_ttl, self.max_cached = refused_ttl, unreachable_ttl, max_cached
        self.clock = clock
        self._cache: dict[tuple[str, str, str], tuple[EntryVerdict, float]] = {}
        self._lock = threading.Lock()
        self.asked = 0  #: requests sent to Prolific (for tests and the log)

    def check(self, participant_id: str, params: dict[str, Any]) -> EntryVerdict:
        """The verdict on a first entry of ``participant_id`` with the link parameters ``params``."""
        study, session = str(params.get("STUDY_ID", "")), str(params.get("SESSION_ID", ""))
        if study != self.study_id:
            return EntryVerdict(False, f"STUDY_ID {study[:40]!r} is not this study's Prolific id")
        if not _SESSION.fullmatch(session):
            return EntryVerdict(False, f"SESSION_ID: Prolific's submission id (letters, digits, _ and -), got "
                                       f"{session[:40]!r}")
        key = (participant_id, study, session)
        now = self.clock()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and (hit[1] == float("inf") or hit[1] > now):
                return hit[0]
        verdict = self._ask(participant_id, session)
        ttl = float("inf") if verdict.allowed and verdict.checked else (
            self.refused_ttl if verdict.checked else self.unreachable_ttl)
        with self._lock:
            if len(self._cache) >= self.max_cached:
                self._cache.clear()  # a flood of made-up ids: start again rather than grow without bound
            self._cache[key] = (verdict, now + ttl)
        return verdict

    def _ask(self, participant_id: str, session: str) -> EntryVerdict:
        self.asked += 1
        try:
            with self.client_factory() as client:
                sub = client.get(f"/api/v1/submissions/{session}/")
        except HumevalError as exc:  # Prolific's refusal, no answer, or no token or HTTP library in this process
            if isinstance(exc, ProlificError) and exc.status in _SETTLED:
                return EntryVerdict(False, f"no submission {session[:40]} on Prolific ({exc.status})")
            log.warning("Prolific could not be asked about the entry of %s (session %s): %s; let in, pinned to "
                        "this session", participant_id, session[:40], exc)
            return EntryVerdict(True, f"Prolific unreachable: {exc}", checked=False)
        sub = sub if isinstance(sub, dict) else {}
        owner = str(sub.get("participant_id") or sub.get("participant") or "")
        if owner != participant_id or str(sub.get("study_id", "")) != self.study_id:
            return EntryVerdict(False, f"submission {session[:40]} is not this participant's in this study")
        if sub.get("status") != "ACTIVE":
            return EntryVerdict(False, f"submission {session[:40]} is {sub.get('status')!r}, not ACTIVE")
        return EntryVerdict(True)
