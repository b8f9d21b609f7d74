"""Sessions: a watched comparison admits whole participant lists while its rule can use them.

In-process (httpx.ASGITransport) on SQLite, the ``list`` strategy: participants beyond the
admitted sessions are told ``wait`` (by the API, and by the pages before they start); an
admitted session is served whole; the outcomes admitted but unused at the decision stay
within the bound stated before launch; the sessions cut by the decision end with the
completion code and a word that they are paid in full; someone arriving after the decision
is told the study is closed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from humeval.stopping.admission import admits, allowance, distance, unused_bound, wanted
from humeval.stopping.registry import get_rule
from tests.integration.server.test_live_stopping import Client, decision, make_study

pytestmark = pytest.mark.timeout(120)


def test_the_admission_rule_by_hand() -> None:
    rule = get_rule("anytime", delta=0.05)
    a = rule.boundary(40)
    assert distance(rule.a_min, 0, 0) == int(next(n for n in range(1, 41) if a[n - 1] <= n))  # all one way: 17
    for _ in range(10):
        rule.update(1)
    assert rule.distance() == distance(rule.a_min, 10, 10) == 7  # 17 straight wins decide
    assert allowance(2, 10, 1) == 10 and allowance(1, 10, 1) == 0 and allowance(1, 10, 3) == 2
    assert admits(0, 10, 3, 0)  # nothing pending: never stall
    assert admits(10, 10, 17, 3) and not admits(10, 10, 16, 3)
    assert wanted(0, 10, 17, 10) == 2 and wanted(20, 10, 17, 10) == 0 and wanted(0, 10, 2, 0) == 1
    assert unused_bound(1, 10, 1) == 9 and unused_bound(3, 10, 1) == 20


def test_sessions_are_admitted_whole_and_waiting_participants_are_told(tmp_path: Path) -> None:
    study = make_study(tmp_path / "study", per_participant=10, checks=0, items=120)

    async def go() -> None:
        c = Client(study)
        try:
            first = c.store.recruitment()
            admission = first.comparisons[0]
            assert (admission.distance, admission.session, admission.wanted) == (17, 10, 2)  # (17 + 10) // 10
            heads = [await c.enter(f"P{i}") for i in range(3)]
            tasks = [await c.next(h) for h in heads]
            assert tasks[0] is not None and tasks[1] is not None
            assert tasks[2] is None  # two sessions admitted: the third participant waits
            r = await c.http.get("/api/v1/status", headers=heads[2])
            assert r.status_code == 200 and r.json()["progress"]["done"] == 0
            assert r.json()["progress"]["reason"] == "wait"
            # the pages tell a newcomer before they start (no consent, no instructions)
            page = await c.http.get("/?participant_id=P9", follow_redirects=False)
            assert page.status_code == 200 and 'data-reason="wait"' in page.text
            # an admitted session is served whole, although nothing of it has reached the rule
            done = 0
            while (a := await c.next(heads[0])) is not None:
                r = await c.submit(heads[0], a["assignment_id"], c.answer(a["assignment_id"], prefer="candidate", spam=False))
                assert r.status_code == 201
                done += 1
            assert done == 10 and decision(c.store)["n"] == 10  # settled at the end: fed in one go
            after = c.store.recruitment().comparisons[0]
            assert after.pending == 10 and after.distance == 7 and after.wanted == 0  # 10 + 10 > 7 + 10
        finally:
            await c.close()

    asyncio.run(go())


def test_a_crowd_reaches_the_decision_within_the_stated_bound(tmp_path: Path) -> None:
    study = make_study(tmp_path / "study", per_participant=10, checks=0, items=200)

    async def go() -> None:
        c = Client(study)
        try:
            bound = c.store.recruitment().comparisons[0].unused_bound
            working: dict[str, dict[str, str]] = {}
            finished: list[str] = []
            k = 0
            while decision(c.store)["outcome"] == "continue":
                rec = c.store.recruitment()
                for _ in range(rec.wanted):  # places open: that many newcomers arrive
                    k += 1
                    h = await c.enter(f"P{k}")
                    assert await c.next(h) is not None  # admitted with work: never nothing to do
                    working[f"P{k}"] = h
                assert working, "collection stalled"
                # the oldest participant answers a task; one who has nothing left is finished
                pid, h = next(iter(working.items()))
                a = await c.next(h)
                if a is None:
                    finished.append(working.pop(pid))
                    continue
                r = await c.submit(h, a["assignment_id"], c.answer(a["assignment_id"], prefer="candidate", spam=False))
                assert r.status_code == 201
            d = decision(c.store)
            assert d["outcome"] == "A" or d["outcome"] == "B"
            judged = c.store.read(lambda conn: conn.exec_driver_sql(
                "SELECT count(*) FROM judgements j JOIN watched_tasks w ON w.task_id = j.task_id").scalar())
            assert judged - d["n"] <= bound  # admitted and paid, but not used by the decision
            # the sessions in progress end with their code, told they are paid in full
            for pid, h in working.items():
                assert await c.next(h) is None
                assert (await c.store.progress(pid)).completed == (await c.store.progress(pid)).done > 0
                assert await c.store.ended_early(pid)
            late = await c.enter("late")
            assert await c.next(late) is None
            assert c.store.recruitment().finished
            assert k <= 6  # places: the decision needs about 20 outcomes here, two sessions' worth and one more
        finally:
            await c.close()

    asyncio.run(go())


def test_a_participant_whose_first_task_the_decision_withdrew_is_paid(tmp_path: Path) -> None:
    # an allowance of 29 (min_in_flight 30) admits three sessions at once; two of them decide the comparison
    study = make_study(tmp_path / "study", per_participant=10, checks=0, items=120, min_in_flight=30)

    async def go() -> None:
        c = Client(study)
        try:
            slow = await c.enter("slow")
            first = await c.next(slow)
            assert first is not None  # a lease of their first task, not answered yet
            for pid in ("P1", "P2"):
                await c.work(pid, prefer="candidate")
            assert decision(c.store)["outcome"] in ("A", "B")
            r = await c.submit(slow, first["assignment_id"], "A")
            assert r.status_code == 409 and "lease_withdrawn" in r.text
            assert await c.next(slow) is None
            prog = await c.store.progress("slow")
            assert prog.completed and prog.done == 0  # their code and full pay: the session had begun
            status = await c.http.get("/api/v1/status", headers=slow)
            assert status.json()["completion"]["code"] == "DONE-1"
            assert await c.store.ended_early("slow")
        finally:
            await c.close()

    asyncio.run(go())
