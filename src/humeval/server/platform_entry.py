"""A first entry through the platform route, checked with the platform where the server can ask it.

The study's platform gives the check (:meth:`humeval.platforms.base.CrowdPlatform.entry_check`; Prolific's,
served with an API token and a Prolific study id, asks for an active submission of this study whose id is
the link's ``SESSION_ID``): a new participant it refuses gets 403 ``no_platform_submission`` and nothing is
stored. A returning participant is not asked about again: the store pins them to the link of their first
entry (403 ``entry_session_mismatch``).
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from humeval.platforms.base import EntryCheck
from humeval.platforms.entry import Entry
from humeval.platforms.registry import platform_of
from humeval.server.errors import HttpError
from humeval.study import StudyFolder

__all__ = ["check_platform_entry", "submission_check"]


def submission_check(study: StudyFolder, enabled: bool) -> EntryCheck | None:
    """The check of first entries with the study's platform (None when off, or when the platform has none yet)."""
    return platform_of(study.protocol.platform.kind).entry_check(study) if enabled else None


async def check_platform_entry(request: Request, entry: Entry) -> None:
    """Refuse (403) a new participant the platform says holds no active submission of this study."""
    check = getattr(request.app.state, "submission_check", None)
    if check is None or entry.route != "platform":
        return
    if await request.app.state.store.route_of(entry.participant_id) is not None:
        return  # returning: pinned to their first link by the store
    verdict = await run_in_threadpool(check.check, entry.participant_id, entry.params)
    if not verdict.allowed:
        title = platform_of(request.app.state.store.context.protocol.platform.kind).title
        raise HttpError("no_platform_submission", f"no active {title} submission of this study for this participant "
                        f"({verdict.reason}); open the study from {title}", status=403)
