"""The response store: SQLAlchemy Core over SQLite (WAL, one writer) or PostgreSQL.

Public API: :class:`Store` (open, prepare, enter, next_assignment, submit, reads),
:class:`Refusal` (a refused request with code/field/status), the records it returns, and
:func:`database_url`.
"""

from humeval.store.engine import database_url
from humeval.store.records import AssignmentView, Progress, StoredJudgement
from humeval.store.refusal import Refusal
from humeval.store.store import Store
from humeval.store.submit import SubmitResult

__all__ = [
    "AssignmentView",
    "Progress",
    "Refusal",
    "Store",
    "StoredJudgement",
    "SubmitResult",
    "database_url",
]
