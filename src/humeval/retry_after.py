"""``Retry-After`` read strictly (RFC 9110, section 10.2.3), with a cap: the one reader of every HTTP client of humeval.

The header is either *delay-seconds* (digits; a decimal fraction such as ``2.5`` is accepted too) or an
*HTTP-date* (``Tue, 14 Nov 2023 22:13:30 GMT``). Anything else (``nan``, ``inf``, ``-1``, ``1e3``,
``soon``, a date without a zone) is unreadable: the caller waits its own backoff instead, never
zero seconds and never forever. A wait is at most ``cap`` seconds (a date in the past waits 0).
"""

from __future__ import annotations

import re
import time

__all__ = ["MAX_RETRY_AFTER", "retry_after"]

#: the longest wait a ``Retry-After`` can ask for, in seconds
MAX_RETRY_AFTER = 60.0
_SECONDS = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,9})?")


def retry_after(value: str | None, fallback: float, *, cap: float = MAX_RETRY_AFTER, now: float | None = None) -> float:
    """Seconds to wait for a ``Retry-After`` header ``value``: its delay-seconds or the time until its HTTP-date,
    between 0 and ``cap``; ``fallback`` (the caller's backoff, also capped) when the header is absent or unreadable.

    >>> retry_after("7", 1.0), retry_after("3600", 1.0), retry_after("nan", 1.5), retry_after(None, 2.0)
    (7.0, 60.0, 1.5, 2.0)
    """
    seconds = _seconds(value.strip(), time.time() if now is None else now) if value is not None else None
    return min(max(fallback if seconds is None else seconds, 0.0), cap)


def _seconds(value: str, now: float) -> float | None:
    if _SECONDS.fullmatch(value):
        return float(value)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP-date is always in GMT; a date without a zone is not one
        return None
    return when.timestamp() - now
