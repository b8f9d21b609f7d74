"""``stopping.feed: judgement``: qualify first, then count at once.

In-process (httpx.ASGITransport), the ``list`` strategy with a live stopping rule, two attention checks at the start
of every list (``design.qualification: 2``) judged by the ``attention`` rule:

* once a participant answered the qualification and passed it, each watched judgement they submit reaches the rule
  at once: the stopping state's ``n`` (what the admin page shows) grows while their session still runs, and settling
  them at the end feeds nothing twice;
* one who fails the qualification is settled at once: excluded, nothing of theirs fed, given no further task, and
  the screen-out code;
* the exclude stage and the analysis replay reproduce the live decision (SQLite and PostgreSQL).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

from humeval.analysis.decisions import replay_decisions
from humeval.errors import ProtocolError, StoreError
from humeval.files import write_jsonl
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.judgements.exclusion import exclusions, valid_judgements
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.store.store import Store
from humeval.study import StudyFolder
from humeval.templates import generate_outputs
from tests.integration.server.inprocess import ADMIN, InProcess, enter

pytestmark = pytest.mark.timeout(300)
CODE, SCREENOUT = "DONE-77", "SCREEN-77"
PROTOCOL = """
version: 1
study: {{name: feed, seed: 9}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?", tie: true}}
presentation: {{setup: separate}}
design: {{judgements_per_item: 1, items_per_participant: {per}, counterbalancing: latin-square, attention_checks: 2,
         qualification: 2{attempts}{design}}}
assignment: {{strategy: list, lease_seconds: 600}}
stopping: {{rule: anytime, delta: 0.05, systems: [baseline, candidate], feed: {feed}}}
exclusion:
  - {{rule: attention, max_failures: 0}}
  - {{rule: min-time, seconds: 0.5, scope: judgement}}{more}
platform: {{kind: local, completion_code: {code}, screenout_code: {screenout}}}
"""


def feed_study(root: Path, *, items: int = 80, per: int = 8, feed: str = "judgement", more: str = "",
               lock: bool = True, attempts: int = 1, design: str = "") -> StudyFolder:
    """``more``: further exclusion rules (YAML lines); ``attempts``: ``design.qualification_attempts``; ``design``:
    further fields of ``design`` (YAML flow items, each after a comma)."""
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(items, seed=5))
    text = PROTOCOL.format(per=per, feed=feed, code=CODE, screenout=SCREENOUT, more=more, design=design,
                           attempts=f", qualification_attempts: {attempts}" if attempts > 1 else "")
    (root / "humeval.yaml").write_text(text, encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    if lock:
        lock_study(study)
    return study


class Member:
    """A participant on the JSON API: answers the checks as asked (or, ``spam``, wrongly) and prefers ``prefer``."""

    keys = 0

    def __init__(self, c: httpx.AsyncClient, srv: InProcess, pid: str, *, prefer: str = "candidate",
                 spam: bool = False, seconds: float = 3.0) -> None:
        self.c, self.srv, self.pid, self.prefer, self.spam, self.seconds = c, srv, pid, prefer, spam, seconds
        self.h: dict[str, str] = {}

    async def enter(self) -> Member:
        self.h = await enter(self.c, self.pid)
        return self

    async def next(self) -> dict[str, Any] | None:
        r = await self.c.get("/api/v1/next", headers=self.h)
        assert r.status_code in (200, 204), r.text
        return r.json() if r.status_code == 200 else None

    def shown(self, aid: str) -> tuple[Any, list[str]]:
        mark = "%(a)s" if "postgresql" in self.srv.store.url else ":a"
        task_id, display = self.srv.store.read(lambda conn: conn.exec_driver_sql(
            "SELECT task_id, display FROM assignments WHERE assignment_id = " + mark, {"a": aid}).one())
        return self.srv.store.context.tasks[task_id], json.loads(display)

    def choice(self, aid: str) -> str:
        task, display = self.shown(aid)
        if task.kind == "attention":
            right = str(task.expected)
            return ("B" if right == "A" else "A") if self.spam else right
        return "A" if display[0] == self.prefer else "B"

    async def submit(self, aid: str, choice: str) -> httpx.Response:
        Member.keys += 1
        return await self.c.post("/api/v1/judgements", headers=self.h, json={
            "assignment_id": aid, "idempotency_key": f"key-{self.pid}-{Member.keys:06d}",
            "values": {"quality": choice}, "seconds": self.seconds})

    async def step(self) -> tuple[Any, dict[str, Any]] | None:
        """Answer the next task; (the task, the assignment) or None when nothing is left."""
        a = await self.next()
        if a is None:
            return None
        r = await self.submit(a["assignment_id"], self.choice(a["assignment_id"]))
        assert r.status_code == 201, r.text
        return self.shown(a["assignment_id"])[0], a

    async def work(self) -> int:
        n = 0
        while await self.step() is not None:
            n += 1
        return n

    async def status(self) -> dict[str, Any]:
        r = await self.c.get("/api/v1/status", headers=self.h)
        assert r.status_code == 200, r.text
        return r.json()


def n_of(srv: InProcess) -> int:
    return int(srv.store.stopping()[0]["n"])


def exported(srv: InProcess, study: StudyFolder) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The export's judgements and what the exclude stage excludes of them."""
    frame = pd.DataFrame(srv.store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
    return frame, exclusions(frame, study.protocol, study.read_lists())


def test_a_qualified_participant_is_counted_while_their_session_runs(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study")
    srv = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        m = await Member(c, srv, "P1").enter()
        kinds, seen = [], []
        for _ in range(2):  # the qualification: the list's first two places are its attention checks
            task, _ = await m.step()  # type: ignore[misc]
            kinds.append(task.kind)
            assert n_of(srv) == 0
        assert kinds == ["attention", "attention"]
        for k in range(3):  # qualified: each watched judgement is fed as it is submitted
            task, a = await m.step()  # type: ignore[misc]
            assert task.kind == "task"
            seen.append(a)
            assert n_of(srv) == k + 1
        assert not (await m.status())["progress"]["completed"]  # the session still runs
        # the admin page shows the rule's n of the running session
        page = await c.get("/admin", params={"token": ADMIN}, follow_redirects=True)
        assert page.status_code == 200 and "after n = 3 outcomes" in page.text, page.text[:2000]
        # a fed judgement is final
        r = await m.submit(seen[0]["assignment_id"], "A")
        assert r.status_code == 409 and r.json()["error"]["code"] == "judgement_final", r.text
        rest = await m.work()
        assert rest == 8 - 3
        assert n_of(srv) == 8  # settling at the end fed nothing twice (no ties chosen, nothing too fast)
        body = await m.status()
        assert body["progress"]["completed"] and body["completion"]["code"] == CODE

    try:
        srv.run(body)
        frame = pd.DataFrame(srv.store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
        fed = frame[frame["stop_seq"].notna()]
        assert list(fed["stop_seq"]) == list(range(1, 9))  # fed in submission order (the export's row order)
    finally:
        srv.close()


def test_failing_the_qualification_feeds_nothing_and_ends_the_session_at_once(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study")
    srv = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        s = await Member(c, srv, "S1", prefer="baseline", spam=True).enter()
        assert await s.work() == 2  # the two checks, then nothing more
        assert n_of(srv) == 0
        st = await s.status()
        assert st["progress"]["completed"] and st["completion"]["screened_out"]
        assert st["completion"]["code"] == SCREENOUT
        settled = srv.store.read(lambda conn: conn.exec_driver_sql(
            "SELECT participant_id, excluded, reason FROM settled").all())
        assert [(p, x) for p, x, _ in settled] == [("S1", 1)] and "attention" in settled[0][2]
        # the rest of S1's list goes to the next participant, who answers its qualification first (places of their
        # own before the list's first, humeval.store.assign.lead_in), then is counted at once
        p2 = await Member(c, srv, "P2").enter()
        for _ in range(2):
            task, _ = await p2.step()  # type: ignore[misc]
            assert task.kind == "attention"
        task, _ = await p2.step()  # type: ignore[misc]
        assert task.kind == "task" and n_of(srv) == 1
        assert await p2.work() == 8 - 1
        assert n_of(srv) == 8
        # a participant with a list of their own qualifies and is counted at once
        p3 = await Member(c, srv, "P3").enter()
        for _ in range(3):
            await p3.step()
        assert n_of(srv) == 9

    try:
        srv.run(body)
        _, excluded = exported(srv, study)
        assert set(excluded.loc[excluded["scope"] == "participant", "participant_id"]) == {"S1"}
        assert set(excluded["rule"]) == {"attention"}
    finally:
        srv.close()


def test_a_too_fast_judgement_is_not_fed(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study")
    srv = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        m = await Member(c, srv, "P1").enter()
        for _ in range(3):
            await m.step()
        assert n_of(srv) == 1
        m.seconds = 0.1  # below the judgement-scope min-time: decided before feeding
        await m.step()
        assert n_of(srv) == 1
        m.seconds = 3.0
        await m.step()
        assert n_of(srv) == 2

    try:
        srv.run(body)
        frame, excluded = exported(srv, study)
        fast = excluded[excluded["scope"] == "judgement"]
        assert len(fast) == 1 and frame.loc[frame["task_id"] == fast["task_id"].iloc[0], "stop_seq"].isna().all()
    finally:
        srv.close()


def test_replay_equals_live_with_qualification_failures(tmp_path: Path, db_url: str | None) -> None:
    study = feed_study(tmp_path / "study", items=120, per=4)
    srv = InProcess(study, db_url)

    async def body(c: httpx.AsyncClient) -> int:
        i = 0
        while srv.store.stopping()[0]["outcome"] == "continue" and i < 60:
            i += 1
            spam = i % 4 == 1  # fail the qualification and favour the baseline
            await (await Member(c, srv, f"P{i:03d}", prefer="baseline" if spam else "candidate", spam=spam,
                                seconds=0.2 if i % 5 == 0 else 3.0).enter()).work()
        return i

    try:
        arrived = srv.run(body)
        live = srv.store.stopping()[0]
        assert live["outcome"] == "B", (live, arrived)  # the candidate (system B) wins: only qualified votes count
        frame, excluded = exported(srv, study)
        failed = set(excluded.loc[excluded["scope"] == "participant", "participant_id"])
        assert failed and all(int(p[1:]) % 4 == 1 for p in failed)
        fed = frame[frame["stop_seq"].notna()]
        assert not set(fed["participant_id"]) & failed
        assert sorted(fed["stop_seq"]) == list(range(1, live["n"] + 1))
        valid = valid_judgements(frame, excluded)
        record = replay_decisions(valid, study.protocol, study.protocol.systems)[0]
        assert (record["outcome"], record["n"]) == (live["outcome"], live["n"]) and record["agrees_with_live"]
    finally:
        srv.close()


def test_admission_counts_what_a_running_session_fed_as_no_longer_pending(tmp_path: Path) -> None:
    """``pending`` (outcomes admitted but not fed) falls as a qualified participant's judgements are fed; with
    ``feed: session`` the same session keeps all its watched tasks pending until it ends."""
    pending: dict[str, list[int]] = {}
    for feed in ("judgement", "session"):
        study = feed_study(tmp_path / feed, feed=feed)
        srv = InProcess(study)

        async def body(c: httpx.AsyncClient, srv: InProcess = srv, feed: str = feed) -> None:
            m = await Member(c, srv, "P1").enter()
            seen = []
            for _ in range(5):  # the two checks, then three watched tasks
                await m.step()
                seen.append(srv.store.recruitment().comparisons[0].pending)
            pending[feed] = seen

        try:
            srv.run(body)
        finally:
            srv.close()
    assert pending == {"judgement": [8, 8, 7, 6, 5], "session": [8] * 5}


def test_the_lock_and_the_store_refuse_what_validate_refuses(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study", more="\n  - {rule: same-side, min_tasks: 5}", lock=False)
    why = r"exclusion\[2\]: rule 'same-side' judges a participant's whole session"
    with pytest.raises(ProtocolError, match=why):
        lock_study(study)
    store = Store.open(study)
    try:
        store.prepare()
        with pytest.raises(StoreError, match=why):
            store.context  # noqa: B018 (loaded on first use: before any participant is served)
    finally:
        store.close()


def test_the_preregistration_states_the_qualification_and_when_judgements_are_fed(tmp_path: Path) -> None:
    from humeval.report.prereg import prereg

    md = prereg(feed_study(tmp_path / "judgement")).markdown.read_text(encoding="utf-8")
    assert "attention checks per list: 2; repeated tasks per list: 0; the first 2 check(s) of every list are the " \
           "qualification." in md
    assert ("Feeding (`stopping.feed: judgement`): the first 2 attention check(s) of every list are the "
            "qualification, answered before any watched task. A participant who fails more than 0 of them is "
            f"screened out at once: excluded, nothing of theirs fed, no further task, shown the screen-out code "
            f"`{SCREENOUT}`. Once qualified") in md
    study = feed_study(tmp_path / "session", feed="session")
    md = prereg(study).markdown.read_text(encoding="utf-8")
    assert "Feeding (`stopping.feed: session`): a participant's watched judgements reach the rule when their " \
           "session ends" in md and "screened out at once" not in md
