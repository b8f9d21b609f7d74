"""A first entry through the platform route, checked with the platform where the server can ask it.

For a Prolific study served with an API token and a Prolific study id (``humeval prolific create``),
a new participant must hold an active submission of this study whose id is the link's
``SESSION_ID`` (:class:`humeval.platforms.prolific.entry_check.SubmissionCheck`): otherwise 403
``no_platform_submission`` and nothing is stored. A returning participant is not asked about again:
the store pins them to the link of their first entry (403 ``entry_session_mismatch``).
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from humeval.platforms.entry import Entry
from humeval.server.errors import HttpError
from humeval.study import Study

__all__ = ["check_platform_entry", "submission_check"]


def submission_check(study: Study, enabled: bool) -> Any:
    """The check of first Prolific entries (None when off, or when no Prolific study id is known yet)."""
    if not enabled or study.protocol.platform.kind != "prolific":
        return None
    from humeval.files import read_json
    from humeval.platforms.prolific.client import ProlificClient
    from humeval.platforms.prolific.entry_check import SubmissionCheck
    from humeval.platforms.prolific.study import state_file

    path = state_file(study)
    if not path.is_file():
        return None

    def client() -> ProlificClient:
        made = ProlificClient.from_env(study.root)
        made.timeout, made.retries = min(made.timeout, 5.0), 1  # a participant is waiting
        return made

    return SubmissionCheck(str(read_json(path)["study_id"]), client)


async def check_platform_entry(request: Request, entry: Entry) -> None:
    """Refuse (403) a new participant the platform says holds no active submission of this study."""
    check = getattr(request.app.state, "submission_check", None)
    if check is None or entry.route != "platform":
        return
    if await request.app.state.store.route_of(entry.participant_id) is not None:
        return  # returning: pinned to their first link by the store
    verdict = await run_in_threadpool(check.check, entry.participant_id, entry.params)
    if not verdict.allowed:
        raise HttpError("no_platform_submission", f"no active Prolific submission of this study for this participant "
                        f"({verdict.reason}); open the study from Prolific", status=403)
