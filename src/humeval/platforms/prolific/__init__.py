"""Prolific: a study run through Prolific's REST API from the locked protocol (``humeval prolific``).

Modules: :mod:`~.client` (HTTP, token, retries, dry run), :mod:`~.study` (the study body and
its budget), :mod:`~.actions` (create, transitions, status, review, bonus), :mod:`~.ledger`
(bonus intents and their reconciliation) and :mod:`~.webhooks` (signed hook requests), :mod:`~.waves` (places opened as the stopping rule needs them);
:mod:`~.hooks` (the workspace's hook secret and confirmed subscriptions), :mod:`~.entry_check` (a first
entry checked against Prolific's active submissions); :mod:`~.export_file` reads the submissions CSV
downloaded from the app.
"""

from humeval.platforms.prolific.actions import (
    TRANSITIONS,
    BonusResult,
    CreateResult,
    ReviewDecision,
    StatusRow,
    prolific_bonus,
    prolific_create,
    prolific_review,
    prolific_status,
    prolific_transition,
)
from humeval.platforms.prolific.client import (
    DryRun,
    ProlificClient,
    ProlificError,
    UncertainOutcome,
    read_token,
)
from humeval.platforms.prolific.export_file import read_submissions
from humeval.platforms.prolific.study import study_body
from humeval.platforms.prolific.waves import SyncResult, prolific_sync

__all__ = [
    "TRANSITIONS",
    "BonusResult",
    "CreateResult",
    "DryRun",
    "ProlificClient",
    "ProlificError",
    "ReviewDecision",
    "StatusRow",
    "SyncResult",
    "UncertainOutcome",
    "prolific_bonus",
    "prolific_create",
    "prolific_review",
    "prolific_status",
    "prolific_sync",
    "prolific_transition",
    "read_submissions",
    "read_token",
    "study_body",
]
