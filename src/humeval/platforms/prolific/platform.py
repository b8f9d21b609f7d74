"""Prolific as a :class:`~humeval.platforms.base.CrowdPlatform`: every part of the interface, over the REST API.

Each operation makes a :class:`~humeval.platforms.prolific.client.ProlificClient` from the environment
(``$PROLIFIC_TOKEN`` or ``$PROLIFIC_TOKEN_FILE``) and runs the module that owns it: ``create``, ``status``,
``review`` and ``bonus`` in :mod:`~.actions`, ``recruit`` in :mod:`~.waves`, the hooks in
:mod:`~.webhooks`, the entry check in :mod:`~.entry_check`. ``humeval prolific`` calls those modules
itself, with its own client (a dry run, a token file).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from humeval.files import read_json
from humeval.platforms.base import CrowdPlatform, EntryCheck, Serving

if TYPE_CHECKING:
    from humeval.costs import Budget
    from humeval.platforms.prolific.client import ProlificClient
    from humeval.protocol.models import Platform
    from humeval.study import StudyFolder

__all__ = ["COMPLETE_URL", "Prolific"]

#: Prolific's completion link; the completion (or screen-out) code follows
COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc="


class Prolific(CrowdPlatform):
    """Prolific (its facts, the entry parameters, fee and minimum pay: :mod:`humeval.protocol.platform_kinds`)."""

    def completion_url(self, platform: Platform, code: str) -> str:
        return COMPLETE_URL + quote(code) if code else ""

    @staticmethod
    def client(study: StudyFolder) -> ProlificClient:
        from humeval.platforms.prolific.client import ProlificClient

        return ProlificClient.from_env(study.root)

    def create(self, study: StudyFolder, *, budget: Budget, **options: Any) -> Any:
        from humeval.platforms.prolific.actions import prolific_create

        with self.client(study) as client:
            return prolific_create(study, client=client, budget=budget, **options)

    def recruit(self, study: StudyFolder, *, db: str | None = None, **options: Any) -> Any:
        from humeval.platforms.prolific.waves import prolific_sync

        with self.client(study) as client:
            return prolific_sync(study, client=client, db=db)

    def status(self, study: StudyFolder, *, db: str | None = None, **options: Any) -> Any:
        from humeval.platforms.prolific.actions import prolific_status

        with self.client(study) as client:
            return prolific_status(study, client=client, db=db)

    def review(self, study: StudyFolder, *, db: str | None = None, **options: Any) -> Any:
        from humeval.platforms.prolific.actions import prolific_review

        with self.client(study) as client:
            return prolific_review(study, client=client, db=db)

    def bonus(self, study: StudyFolder, *, db: str | None = None, **options: Any) -> Any:
        from humeval.platforms.prolific.actions import prolific_bonus

        with self.client(study) as client:
            return prolific_bonus(study, client=client, db=db, **options)

    def recruit_every(self, study: StudyFolder, seconds: float, *, db: str | None, say: Callable[[str], None]) -> None:
        """``prolific sync`` every ``seconds`` in a thread of this process until the Prolific study is stopped; the
        token and the study id are checked first, before anything is served."""
        import threading

        from humeval.platforms.prolific.actions import study_id_of
        from humeval.platforms.prolific.waves import sync_every

        with self.client(study) as client:
            study_id_of(study, client)
        threading.Thread(target=sync_every, args=(study, seconds),
                         kwargs={"client_factory": lambda: self.client(study), "db": db, "say": say},
                         daemon=True, name="humeval-prolific-sync").start()
        say(f"prolific sync every {seconds:g} s: places opened in waves as the stopping rule needs them")

    def serving(self, study: StudyFolder, say: Callable[[str], None]) -> Serving:
        """``$PROLIFIC_HOOK_SECRET`` (the server then answers Prolific's hooks), and whether first entries are
        checked against Prolific's submissions: with an API token and a Prolific study id (``prolific create``)."""
        from humeval.platforms.prolific.client import TOKEN_ENV, TOKEN_FILE_ENV
        from humeval.platforms.prolific.study import state_file
        from humeval.platforms.prolific.webhooks import HOOK_SECRET_ENV

        secret = os.environ.get(HOOK_SECRET_ENV, "")
        if not (os.environ.get(TOKEN_ENV) or os.environ.get(TOKEN_FILE_ENV)):
            say("note: no Prolific API token: a first entry from Prolific is not checked against Prolific's submissions "
                "(a participant is still pinned to the session of their first entry)")
            return Serving(secret, False)
        if not state_file(study).is_file():
            return Serving(secret, False)
        say("first entries from Prolific are checked against the study's active submissions")
        return Serving(secret, True)

    def hook_routes(self, study: StudyFolder, secret: str, *, db: str | None, first_delivery: Callable[..., bool],
                    forget_delivery: Callable[[str], Any]) -> list[Any]:
        """``POST /prolific/hook``: a verified hook runs ``prolific status`` (which releases the lists of returned
        and timed-out participants at once), once per signed delivery (``first_delivery`` keeps the deliveries of
        the last ``2 x MAX_AGE`` seconds: a replay does nothing)."""
        from humeval.platforms.prolific.webhooks import MAX_AGE, webhook_routes

        def sync() -> None:
            self.status(study, db=db)

        # a timestamp is fresh up to MAX_AGE on either side of now: a delivery is kept until it can no longer be
        return webhook_routes(sync, secret, first_delivery=lambda key: first_delivery(key, keep=2 * MAX_AGE + 60),
                              forget_delivery=forget_delivery)

    def entry_check(self, study: StudyFolder) -> EntryCheck | None:
        """A new participant must hold an active submission of this study whose id is the link's ``SESSION_ID``
        (None before ``prolific create`` wrote the study id)."""
        from humeval.platforms.prolific.entry_check import SubmissionCheck
        from humeval.platforms.prolific.study import state_file

        path = state_file(study)
        if not path.is_file():
            return None

        def client() -> ProlificClient:
            made = self.client(study)
            made.timeout, made.retries = min(made.timeout, 5.0), 1  # a participant is waiting
            return made

        return SubmissionCheck(str(read_json(path)["study_id"]), client)

    def recruitment_state(self, study: StudyFolder) -> dict[str, Any]:
        """``.humeval/prolific.json``: places, waves, status, stopped and the budget ``prolific create`` recorded."""
        from humeval.platforms.prolific.study import state_file

        path = state_file(study)
        return dict(read_json(path)) if path.is_file() else {}
