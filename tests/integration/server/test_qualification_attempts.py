"""``design.qualification_attempts: 2``: a failed qualification check is asked once more (Prolific's policy).

In-process (httpx.ASGITransport), the study of ``test_live_feed.py`` (two qualification checks, the ``attention``
rule with no failure tolerated, ``stopping.feed: judgement``) with two attempts per check:

* a wrong first answer is answered ``attempts_left: 1``; the same assignment answered again as it asks qualifies
  the participant, who is then counted at once; the export's row of that check has ``revision`` 1;
* two wrong answers screen the participant out at once (nothing fed, the screen-out code), and a third is refused;
* moving on to the next task instead of the second attempt gives the attempt up;
* with one attempt (the default) nothing changes: a wrong answer is final;
* the exclude stage and the analysis replay reproduce the live decision with retrying participants (SQLite and
  PostgreSQL).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pandas as pd
import pytest

from humeval.analysis.decisions import replay_decisions
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.judgements.exclusion import exclusion_counts, valid_judgements
from tests.integration.server.inprocess import InProcess
from tests.integration.server.test_live_feed import CODE, SCREENOUT, Member, exported, feed_study, n_of

pytestmark = pytest.mark.timeout(300)


def wrong(choice: str) -> str:
    return "B" if choice == "A" else "A"


async def check(m: Member) -> tuple[str, str]:
    """The participant's next assignment, a qualification check: (its id, the answer it asks for)."""
    a = await m.next()
    assert a is not None
    aid = a["assignment_id"]
    task, _ = m.shown(aid)
    assert task.kind == "attention"
    return aid, str(task.expected)


def test_a_second_attempt_at_a_failed_check_qualifies(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study", attempts=2)
    srv = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        m = await Member(c, srv, "P1").enter()
        aid, right = await check(m)
        r = await m.submit(aid, wrong(right))
        assert r.status_code == 201 and r.json()["attempts_left"] == 1, r.text
        r = await m.submit(aid, right)  # the second attempt: an edit of the same check
        assert r.status_code == 201 and r.json()["revision"] == 1 and "attempts_left" not in r.json(), r.text
        r = await m.submit(aid, wrong(right))  # answered as it asks: no attempt is left
        assert r.status_code == 409 and r.json()["error"]["code"] == "judgement_final", r.text
        aid, right = await check(m)
        r = await m.submit(aid, right)
        assert r.status_code == 201 and "attempts_left" not in r.json(), r.text
        assert n_of(srv) == 0
        await m.step()  # qualified: the first watched judgement is fed at once
        assert n_of(srv) == 1
        assert await m.work() == 8 - 1
        st = await m.status()
        assert st["completion"]["code"] == CODE and not st["completion"]["screened_out"]

    try:
        srv.run(body)
        frame, excluded = exported(srv, study)
        checks = frame[frame["kind"] == "attention"]
        assert sorted(checks["revision"]) == [0, 1]
        assert excluded.empty
    finally:
        srv.close()


def test_two_failed_attempts_screen_out_at_once(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study", attempts=2)
    srv = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        m = await Member(c, srv, "S1").enter()
        aid, right = await check(m)
        assert (await m.submit(aid, right)).status_code == 201  # the first check passed
        aid, right = await check(m)
        r = await m.submit(aid, wrong(right))
        assert r.json()["attempts_left"] == 1, r.text
        st = await m.status()
        assert not st["progress"]["completed"]  # not decided while an attempt is left
        r = await m.submit(aid, wrong(right))
        assert r.status_code == 201 and "attempts_left" not in r.json(), r.text
        st = await m.status()
        assert st["progress"]["completed"] and st["completion"]["code"] == SCREENOUT
        r = await m.submit(aid, right)  # a third attempt: the session is settled
        assert r.status_code == 409, r.text
        assert await m.next() is None and n_of(srv) == 0

    try:
        srv.run(body)
        _, excluded = exported(srv, study)
        assert list(excluded.loc[excluded["scope"] == "participant", "participant_id"]) == ["S1"]
    finally:
        srv.close()


def test_moving_on_gives_the_attempt_up(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study", attempts=2)
    srv = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        m = await Member(c, srv, "S1").enter()
        aid, right = await check(m)
        assert (await m.submit(aid, wrong(right))).json()["attempts_left"] == 1
        nxt, right2 = await check(m)  # the next check, answered instead of the second attempt
        r = await m.submit(nxt, right2)
        assert r.status_code == 201 and "attempts_left" not in r.json(), r.text
        # still the qualification: the first check may be answered again until a task after it is
        r = await m.submit(aid, right)
        assert r.status_code == 201, r.text
        task, _ = await m.step()  # type: ignore[misc]
        assert task.kind == "task" and n_of(srv) == 1
        # a participant who fails, then answers a watched task, gave the attempt up: screened out
        s = await Member(c, srv, "S2").enter()
        aid, right = await check(s)
        await s.submit(aid, right)
        aid, right = await check(s)
        assert (await s.submit(aid, wrong(right))).json()["attempts_left"] == 1
        a = await s.next()
        assert a is not None and s.shown(a["assignment_id"])[0].kind == "task"
        assert (await s.submit(a["assignment_id"], "A")).status_code == 201
        st = await s.status()
        assert st["progress"]["completed"] and st["completion"]["code"] == SCREENOUT
        r = await s.submit(aid, right)
        assert r.status_code == 409, r.text
        assert n_of(srv) == 1

    try:
        srv.run(body)
    finally:
        srv.close()


def test_one_attempt_is_the_default(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study")
    srv = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        m = await Member(c, srv, "S1").enter()
        aid, right = await check(m)
        r = await m.submit(aid, wrong(right))
        assert r.status_code == 201 and "attempts_left" not in r.json(), r.text
        r = await m.submit(aid, right)
        assert r.status_code == 409 and r.json()["error"]["code"] == "judgement_final", r.text

    try:
        srv.run(body)
    finally:
        srv.close()


def test_replay_equals_live_with_second_attempts(tmp_path: Path, db_url: str | None) -> None:
    study = feed_study(tmp_path / "study", items=120, per=4, attempts=2)
    srv = InProcess(study, db_url)

    async def participant(m: Member, i: int) -> None:
        """Every third fails the first check once and retries it; one in four fails both attempts at it (one given
        the rest of a list, without its checks, or no place, just works)."""
        for k in range(2):
            a = await m.next()
            if a is None or m.shown(a["assignment_id"])[0].kind != "attention":
                break
            aid, right = a["assignment_id"], str(m.shown(a["assignment_id"])[0].expected)
            if (k == 0 and i % 3 == 0) or i % 4 == 1:
                r = await m.submit(aid, wrong(right))
                assert r.json()["attempts_left"] == 1, r.text
            r = await m.submit(aid, wrong(right) if i % 4 == 1 else right)
            assert r.status_code == 201 and "attempts_left" not in r.json(), r.text
            if i % 4 == 1:
                break  # failed: the rest of the qualification is answered as it asks, then nothing more
        await m.work()

    async def body(c: httpx.AsyncClient) -> int:
        i = 0
        while srv.store.stopping()[0]["outcome"] == "continue" and i < 60:
            i += 1
            prefer = "baseline" if i % 4 == 1 else "candidate"
            await participant(await Member(c, srv, f"P{i:03d}", prefer=prefer).enter(), i)
        return i

    try:
        arrived = srv.run(body)
        live = srv.store.stopping()[0]
        frame, excluded = exported(srv, study)
        assert live["outcome"] == "B", (live, arrived)
        failed = set(excluded.loc[excluded["scope"] == "participant", "participant_id"])
        assert failed and all(int(p[1:]) % 4 == 1 for p in failed)
        retried = set(frame.loc[(frame["kind"] == "attention") & (frame["revision"] == 1), "participant_id"])
        assert retried - failed  # some qualified at their second attempt
        fed = frame[frame["stop_seq"].notna()]
        assert not set(fed["participant_id"]) & failed and retried - failed <= set(fed["participant_id"])
        counts = exclusion_counts(frame, excluded, study.protocol, study.read_lists())["qualification"]
        assert counts["failed"] == len(failed) and counts["passed_retried"] == len(retried - failed) > 0
        assert counts["retried"] == len(retried) and counts["passed"] + counts["failed"] == counts["participants"]
        valid = valid_judgements(pd.DataFrame(frame, columns=JUDGEMENT_COLUMNS), excluded)
        record = replay_decisions(valid, study.protocol, study.protocol.systems)[0]
        assert (record["outcome"], record["n"]) == (live["outcome"], live["n"]) and record["agrees_with_live"]
    finally:
        srv.close()


FIXED = """
version: 1
study: {name: fixed-qualification, seed: 9}
data: {files: [data/outputs.jsonl]}
systems: [baseline, candidate]
criteria:
  - {name: quality, type: 2afc, question: "Which is better?"}
design: {judgements_per_item: 1, items_per_participant: 4, attention_checks: 2, qualification: 2,
         qualification_attempts: 2}
exclusion:
  - {rule: attention, max_failures: 0}
platform: {kind: local, completion_code: DONE-9, screenout_code: SCREEN-9}
"""


def test_without_a_stopping_rule_the_second_attempt_is_judged_at_the_end(tmp_path: Path) -> None:
    """No live rule: the attempts work alike, and the screen-out is decided at the end of the list."""
    from humeval.files import write_jsonl
    from humeval.lock import lock_study
    from humeval.pipeline import run
    from humeval.study import StudyFolder
    from humeval.templates import generate_outputs

    root = tmp_path / "fixed"
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(16, seed=5))
    (root / "humeval.yaml").write_text(FIXED, encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    srv = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        for pid, second in (("R1", "right"), ("F1", "wrong")):
            m = await Member(c, srv, pid).enter()
            aid, right = await check(m)
            assert (await m.submit(aid, wrong(right))).json()["attempts_left"] == 1
            r = await m.submit(aid, right if second == "right" else wrong(right))
            assert r.status_code == 201 and "attempts_left" not in r.json(), r.text
            assert (await m.submit(aid, right)).status_code == 409  # no third attempt
            assert await m.work() == 1 + 4  # the other check and the list's tasks: nothing ends early
            st = await m.status()
            assert st["completion"]["code"] == ("DONE-9" if second == "right" else "SCREEN-9"), st

    try:
        srv.run(body)
        frame, excluded = exported(srv, study)
        assert list(excluded.loc[excluded["scope"] == "participant", "participant_id"]) == ["F1"]
        assert sorted(frame.loc[frame["kind"] == "attention", "revision"]) == [0, 0, 1, 1]
    finally:
        srv.close()


def test_the_preregistration_states_the_attempts(tmp_path: Path) -> None:
    from humeval.report.prereg import prereg

    md = prereg(feed_study(tmp_path / "study", attempts=2)).markdown.read_text(encoding="utf-8")
    assert ("the first 2 check(s) of every list are the qualification, with 2 attempts at each: a check answered "
            "otherwise than it asks is shown again at once, the last attempt is judged, and answering anything after "
            "the qualification gives the attempts left up.") in md
