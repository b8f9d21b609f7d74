"""``design.practice``: practice items with feedback, first in every list.

In-process (httpx.ASGITransport), the study of ``test_live_feed.py`` (two qualification checks with two attempts,
the ``attention`` rule with no failure tolerated, ``stopping.feed: judgement``) with two practice items:

* the first two assignments are the practice items, said to be practice, their outputs in the protocol's order
  (never shuffled); the answer is told ``feedback``: right or not against the answer the item names (an item that
  names none judges nothing), the expected answer and the explanation;
* practice is no task: the qualification's second attempt is still open after it, nothing is fed before the
  qualification, no exclusion rule judges practice (a participant who answers the practice wrongly is kept);
* a list given on (its holder screened out at the qualification) opens again for the next holder with the practice
  and the qualification, places of their own, before any watched task (SQLite and PostgreSQL);
* the export holds the practice rows (kind ``practice``), the exclusion counts and the report count them, prereg
  states them, and the analysis replay equals the live decision.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from humeval.analysis.decisions import replay_decisions
from humeval.judgements.exclusion import valid_judgements
from humeval.judgements.practice import practice_counts
from tests.integration.server.inprocess import InProcess
from tests.integration.server.test_live_feed import CODE, Member, exported, feed_study, n_of

pytestmark = pytest.mark.timeout(300)

FIRST, SECOND = "The cat sat on the mat.", "Mat the on sat cat the."
PRACTICE = (', practice: ['
            f'{{criterion: quality, outputs: ["{FIRST}", "{SECOND}"], answer: A, '
            'explanation: "The first output is a grammatical sentence; the second is its words reversed."}, '
            '{criterion: quality, input: "Say hello.", outputs: ["Hello!", "Hi there!"], '
            'explanation: "Both greet; either answer is fine."}]')


def test_practice_comes_first_with_feedback_and_is_no_task(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study", attempts=2, design=PRACTICE)
    srv = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        m = await Member(c, srv, "P1").enter()
        a = await m.next()
        assert a is not None and a["practice"] == {"number": 1, "of": 2}, a
        assert a["outputs"] == [FIRST, SECOND]  # the protocol's order: "A" is the first output
        r = await m.submit(a["assignment_id"], "B")
        assert r.status_code == 201, r.text
        assert r.json()["feedback"] == {"correct": False, "expected": "A", "explanation":
                                        "The first output is a grammatical sentence; the second is its words reversed."}
        a = await m.next()
        assert a is not None and a["practice"] == {"number": 2, "of": 2} and a["input"] == "Say hello."
        r = await m.submit(a["assignment_id"], "B")
        assert r.json()["feedback"]["correct"] is None and r.json()["feedback"]["expected"] is None, r.text
        a = await m.next()
        assert a is not None and "practice" not in a
        aid = a["assignment_id"]
        task, _ = m.shown(aid)
        assert task.kind == "attention"
        right = str(task.expected)
        r = await m.submit(aid, "B" if right == "A" else "A")
        assert r.json()["attempts_left"] == 1, r.text  # the practice before it gave no attempt up
        r = await m.submit(aid, right)
        assert r.status_code == 201 and "feedback" not in r.json(), r.text
        await m.step()  # the second qualification check
        assert n_of(srv) == 0
        await m.step()  # qualified: the first watched judgement is fed at once
        assert n_of(srv) == 1
        assert await m.work() == 8 - 1
        st = await m.status()
        assert st["completion"]["code"] == CODE and not st["completion"]["screened_out"]

    try:
        srv.run(body)
        frame, excluded = exported(srv, study)
        practice = frame[frame["kind"] == "practice"]
        assert sorted(practice["item_id"]) == ["practice-1", "practice-2"]
        assert set(practice["system"]) == {"output-1"} and set(practice["system_b"]) == {"output-2"}
        assert excluded.empty  # the wrong practice answer is judged by no rule
        assert practice_counts(frame, study.read_lists()) == {"participants": 1, "items": [
            {"item": 1, "criterion": "quality", "expected": "A", "answered": 1, "right": 0},
            {"item": 2, "criterion": "quality", "expected": None, "answered": 1, "right": None}]}
        record = replay_decisions(valid_judgements(frame, excluded), study.protocol, study.protocol.systems)[0]
        assert record["n"] == srv.store.stopping()[0]["n"] == 8  # the practice rows are fed to no rule
    finally:
        srv.close()


def test_every_list_opens_with_the_practice_items(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study", design=PRACTICE, lock=False)
    lists = study.read_lists()
    assert len(lists) > 1
    for pl in lists:
        assert [t.item_id for t in pl.tasks[:2]] == ["practice-1", "practice-2"]
        assert [t.kind for t in pl.tasks[2:4]] == ["attention", "attention"]  # then the qualification
        assert sum(t.kind == "practice" for t in pl.tasks) == 2


def test_a_list_given_on_opens_again_with_its_practice_and_qualification(tmp_path: Path, db_url: str | None) -> None:
    """One who fails the qualification is screened out and their list goes to the next participant: that one, too,
    practises and answers the qualification (places of their own) before any watched task is served or fed."""
    study = feed_study(tmp_path / "study", items=16, per=8, design=PRACTICE)  # 2 lists
    srv = InProcess(study, db_url)

    async def body(c: httpx.AsyncClient) -> None:
        first = await Member(c, srv, "P1", spam=True).enter()
        kinds = []
        while (step := await first.step()) is not None:
            kinds.append(step[0].kind)
        assert kinds == ["practice", "practice", "attention", "attention"]  # screened out after the qualification
        assert (await first.status())["completion"]["screened_out"]
        taker = await Member(c, srv, "P2").enter()
        other = await Member(c, srv, "P3").enter()
        for m in (taker, other):
            kinds = []
            while (step := await m.step()) is not None:
                kinds.append(step[0].kind)
                if step[0].kind == "task":
                    assert len([k for k in kinds if k == "attention"]) == 2  # qualified before any watched task
            assert kinds[:4] == ["practice", "practice", "attention", "attention"], kinds
            assert kinds.count("task") == 8
            assert not (await m.status())["completion"]["screened_out"]
        assert n_of(srv) == 16  # both lists' watched tasks, fed once each

    try:
        srv.run(body)
        frame, excluded = exported(srv, study)
        assert set(excluded["participant_id"]) == {"P1"}
        lists = frame.groupby("participant_id")["list_id"].first()
        assert lists["P1"] in set(lists[["P2", "P3"]])  # the screened-out list was given on
        assert practice_counts(frame, study.read_lists())["participants"] == 3
    finally:
        srv.close()
