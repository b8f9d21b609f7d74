"""Why the store refused a request: a :class:`StoreError` with a code, a field and a status.

The server turns a refusal into its one JSON error shape
``{"error": {"code": ..., "message": ..., "field": ...}}`` with ``status`` as HTTP status.
"""

from __future__ import annotations

from humeval.errors import StoreError

__all__ = ["Refusal"]


class Refusal(StoreError):
    """A request the store will not carry out (nothing was written)."""

    def __init__(self, code: str, message: str, *, status: int = 400, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.field = field

    def to_json(self) -> dict[str, dict[str, str]]:
        body = {"code": self.code, "message": self.message}
        if self.field is not None:
            body["field"] = self.field
        return {"error": body}
