"""Assignment ids say nothing of their task: no rank correlation between an id and the task's kind or number.

Under the null (ids independent of their tasks) Spearman's rho over n = 200 pairs is close to normal with
standard deviation 1 / sqrt(n - 1) = 0.071; the bound 0.25 is 3.5 of them (a two-sided tail of 5e-4). The ids'
tokens are drawn from a seeded generator here, so the test is deterministic; the same features of ids of the
earlier format (``<token>.<seq>``) correlate almost perfectly with the task's kind, which is what the test catches.
"""

from __future__ import annotations

import random

import pytest
from scipy.stats import spearmanr

from humeval.store import Store
from tests.integration.server.test_entry import make_study

N = 200
BOUND = 0.25


def _features(aid: str) -> dict[str, object]:
    """What a script could rank ids by: the whole id (as text), the part after the token, its last character."""
    _, dot, tail = aid.rpartition(".")
    return {"whole": aid, "rest": int(tail) if dot else int(aid[24:], 16), "last": aid[-1]}


def _ranks(values: list[object]) -> list[int]:
    order = sorted(range(len(values)), key=lambda i: values[i])  # type: ignore[index]
    ranks = [0] * len(values)
    for r, i in enumerate(order):
        ranks[i] = r
    return ranks


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    study = make_study(tmp_path_factory.mktemp("ids") / "study", items=12, per_participant=6,
                       checks="2, repeated_items: 2")
    st = Store.open(study)
    st.prepare()
    yield st
    st.close()


def _ids(store: Store, make) -> tuple[list[str], list[int], list[int]]:
    rng = random.Random(7)
    tasks = sorted(store.context.tasks.values(), key=lambda t: t.seq)
    picked = [tasks[rng.randrange(len(tasks))] for _ in range(N)]
    ids = [make(task, rng.getrandbits(96).to_bytes(12, "big").hex()) for task in picked]
    return ids, [int(t.kind != "task") for t in picked], [t.seq for t in picked]


def test_assignment_ids_reveal_neither_kind_nor_order(store: Store) -> None:
    ids, kinds, seqs = _ids(store, store.context.assignment_id)
    assert 0.1 < sum(kinds) / N < 0.9  # checks and repeats among them
    assert len(set(ids)) == N and all(store.context.task_of(a) is not None for a in ids)
    for name in ("whole", "rest", "last"):
        values = _ranks([_features(a)[name] for a in ids])
        for target in (kinds, seqs):
            rho = spearmanr(values, target).statistic
            assert abs(rho) < BOUND, (name, rho)


def test_ids_of_the_earlier_format_would_tell_checks_apart(store: Store) -> None:
    ids, kinds, _ = _ids(store, lambda task, token: f"{token}.{task.seq}")
    rho = spearmanr([_features(a)["rest"] for a in ids], kinds).statistic
    assert rho > 0.7  # a check's or repeat's number is above every regular task's
