"""The one exception hierarchy of humeval.

::

    HumevalError              a user error: exit 1, one message, no traceback
    ├── ProtocolError         humeval.yaml is malformed, inconsistent, or changed after lock
    ├── DataError             a data file is missing, unreadable or inconsistent
    ├── StoreError            the response store refused an operation
    │   └── store.refusal.Refusal          + Refused: a request the store will not carry out
    ├── PlatformError         a crowd platform file or API answered something unusable
    │   └── platforms.entry.EntryRefused   + Refused: an entry request naming no valid route
    └── Refused               a participant's or client's request refused, nothing written
        └── server.errors.HttpError        refused by the web server before the store (its own tree)

A message says what went wrong, where (file, line or field path), the bad value and
what would be valid. ``HumevalError.problems`` carries every problem found when a
check reports several at once (``humeval validate`` prints them all).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

__all__ = [
    "DataError",
    "HumevalError",
    "PlatformError",
    "ProtocolError",
    "Refused",
    "StoreError",
    "did_you_mean",
]


class HumevalError(Exception):
    """Base class for every error humeval reports to a user."""

    def __init__(self, message: str, problems: Sequence[str] | None = None) -> None:
        self.problems: list[str] = list(problems) if problems else [message]
        super().__init__(message)


class ProtocolError(HumevalError):
    """The study protocol is invalid, or changed after it was locked."""


class DataError(HumevalError):
    """A data file is missing, malformed or inconsistent with the protocol."""


class StoreError(HumevalError):
    """The response store refused an operation."""


class PlatformError(HumevalError):
    """A crowd-platform file or API gave something humeval cannot use."""


class Refused(HumevalError):
    """A request refused with nothing written: a machine-readable ``code``, the ``field`` at fault,
    the HTTP ``status`` the server answers with, and ``retry_after`` seconds when coming back helps.

    The server turns every :class:`Refused` into its one JSON error shape; the store, the entry
    routes and the server each raise their own subclass.
    """

    def __init__(self, code: str, message: str, *, status: int = 400, field: str | None = None,
                 retry_after: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.field = field
        self.retry_after = retry_after

    def to_json(self) -> dict[str, dict[str, str]]:
        body = {"code": self.code, "message": self.message}
        if self.field is not None:
            body["field"] = self.field
        return {"error": body}


def did_you_mean(value: object, valid: Iterable[str]) -> str:
    """Return ``"Did you mean 'x'? Available: a, b, c"`` for an unknown name."""
    options = sorted(str(v) for v in valid)
    close = difflib.get_close_matches(str(value), options, n=1, cutoff=0.6)
    hint = f"Did you mean '{close[0]}'? " if close else ""
    return f"{hint}Available: {', '.join(options)}"
