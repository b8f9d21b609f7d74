"""Group commit (:mod:`humeval.store.group`): batches waiting while a group is in flight go out together, each
gets its own rows back, and a failed group leaves every batch to run alone."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from humeval.store.group import GroupCommit
from humeval.store.sql import Rows


def _echo(sent: list[list[str]], gate: threading.Event | None = None, fail: str | None = None):
    """A ``send`` that records each group's statements and answers each statement with its own text."""

    def send(steps):
        if gate is not None:
            gate.wait(5)
        sent.append([sql for sql, _ in steps])
        if fail is not None and any(sql == fail for sql, _ in steps):
            raise RuntimeError("a statement of the group failed")
        return [Rows(1, [(sql,)]) for sql, _ in steps]

    return send


def test_one_batch_alone_is_sent_at_once_and_gets_its_rows() -> None:
    group, sent = GroupCommit(), []
    rows = group.run([("a1", None), ("a2", None)], _echo(sent))
    assert [r.rows for r in rows] == [[("a1",)], [("a2",)]]
    assert sent == [["a1", "a2"]] and group.stats == {"groups": 1, "batches": 1, "alone": 0}


def test_batches_waiting_while_a_group_is_in_flight_go_out_together_each_with_its_rows() -> None:
    group, sent, gate = GroupCommit(), [], threading.Event()
    send = _echo(sent, gate)
    with ThreadPoolExecutor(6) as pool:
        first = pool.submit(group.run, [("lead", None)], send)
        time.sleep(0.1)  # the first batch leads and waits at the gate; five more arrive meanwhile
        rest = [pool.submit(group.run, [(f"b{k}", None), (f"c{k}", None)], send) for k in range(5)]
        time.sleep(0.1)
        gate.set()
        assert [r.rows for r in first.result(5)] == [[("lead",)]]
        for k, f in enumerate(rest):
            assert [r.rows for r in f.result(5)] == [[(f"b{k}",)], [(f"c{k}",)]]
    assert sent[0] == ["lead"]
    assert sorted(s for g in sent[1:] for s in g) == sorted([f"b{k}" for k in range(5)] + [f"c{k}" for k in range(5)])
    assert len(sent) == 2  # the five waiting went out as one group, led by one of them
    assert group.stats == {"groups": 2, "batches": 6, "alone": 0}


def test_a_failed_group_leaves_every_batch_of_it_to_run_alone() -> None:
    group, sent, gate = GroupCommit(), [], threading.Event()
    send = _echo(sent, gate, fail="bad")
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(group.run, [("lead", None)], send)
        time.sleep(0.1)
        rest = [pool.submit(group.run, [(sql, None)], send) for sql in ("ok1", "bad", "ok2")]
        time.sleep(0.1)
        gate.set()
        assert first.result(5) is not None
        assert [f.result(5) for f in rest] == [None, None, None]
    assert group.stats == {"groups": 2, "batches": 4, "alone": 3}


def test_groups_are_at_most_most_batches_and_the_lead_passes_on() -> None:
    group, sent, gate = GroupCommit(most=2), [], threading.Event()
    send = _echo(sent, gate)
    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(group.run, [("lead", None)], send)]
        time.sleep(0.1)
        futures += [pool.submit(group.run, [(f"b{k}", None)], send) for k in range(5)]
        time.sleep(0.1)
        gate.set()
        assert all(f.result(5) is not None for f in futures)
    assert [len(g) for g in sent] == [1, 2, 2, 1]
    assert group.stats["batches"] == 6 and group._leading is False
