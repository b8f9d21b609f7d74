"""Why the store refused a request: a :class:`StoreError` that is also a :class:`~humeval.errors.Refused`.

It carries a code, a field and the HTTP status the server maps it to; the server's handler
turns it into its one JSON error shape. :class:`StoreUnwritable` is the store that cannot
write at all (a full disk): 503 with ``Retry-After``.
"""

from __future__ import annotations

from humeval.errors import Refused, StoreError

__all__ = ["Refusal", "StoreUnwritable"]


class Refusal(Refused, StoreError):
    """A request the store will not carry out (nothing was written)."""


class StoreUnwritable(Refusal):
    """503: the store cannot write (its disk is full); nothing was written."""

    def __init__(self, where: str, reason: str, retry_after: int = 60) -> None:
        super().__init__("store_unwritable", f"the study's store ({where}) cannot write right now ({reason}); nothing "
                         f"was stored; please try again in {retry_after} s", status=503, retry_after=retry_after)
        self.where = where


#: what SQLite, PostgreSQL and the OS say when the disk is full (PostgreSQL's SQLSTATE 53100 is disk_full)
_FULL = ("database or disk is full", "no space left on device", "could not extend file", "disk full")


def disk_full(exc: BaseException) -> str | None:
    """Why ``exc`` means the store cannot write for lack of space, or None when it means something else."""
    import errno

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            return "no space left on device"
        if getattr(exc, "sqlstate", None) == "53100" or getattr(exc, "pgcode", None) == "53100":
            return "disk full"
        text = str(exc).lower()
        for phrase in _FULL:
            if phrase in text:
                return phrase
        exc = getattr(exc, "orig", None) or exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return None
