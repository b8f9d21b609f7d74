"""Cheap clickers in the simulated crowd: who they are, what they answer, and what the same-side rule does to the
honest members of the crowd (its false-positive rate)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from humeval.judgements.exclusion import exclusion_rows
from humeval.protocol.models import Protocol
from humeval.rehearsal.participants import (
    Answerer,
    AnswerKey,
    Population,
    RehearsalError,
    SimulatedParticipant,
)
from humeval.study import StudyFolder
from humeval.templates import init_study

SYSTEMS = ["baseline", "candidate", "reference"]
TEXTS = {"baseline": "t-base", "candidate": "t-cand", "reference": "t-ref"}


@pytest.fixture(scope="module")
def protocol(tmp_path_factory: pytest.TempPathFactory) -> Protocol:
    root = Path(tmp_path_factory.mktemp("cheap")) / "s"
    init_study(root, "demo", items=4, seed=1)
    return StudyFolder.open(root).protocol


def _answerer(protocol: Protocol, population: Population, seed: int = 3) -> Answerer:
    key = AnswerKey({("i1", t): (s,) for s, t in TEXTS.items()},
                    {("attention-1", "check 2afc B"): "B", ("attention-2", "check rankme"): 100})
    return Answerer(protocol, key, "crowd", SYSTEMS, population, seed=seed)


def _pair(first: str, second: str) -> dict:
    return {"task": {"family": "pair"}, "criteria": [{"name": "preference"}], "outputs": [TEXTS[first], TEXTS[second]]}


def test_the_pool_marks_disjoint_cheap_clickers_without_changing_the_others():
    population = Population(size=40)  # defaults: 10 % spammers, 10 % first clickers, 10 % straight-liners
    pool = population.pool(5)
    assert [int(m.sum()) for m in (pool.spammer, pool.first_clicker, pool.straight_liner)] == [4, 4, 4]
    assert not (pool.spammer & pool.first_clicker).any() and not (pool.first_clicker & pool.straight_liner).any()
    plain = Population(size=40, first_share=0.0, straight_share=0.0).pool(5)
    assert plain.first_clicker is None and plain.straight_liner is None
    assert plain.capability.tolist() == pool.capability.tolist() and plain.spammer.tolist() == pool.spammer.tolist()
    with pytest.raises(RehearsalError, match="more than the crowd"):
        Population(spammer_share=0.5, first_share=0.3, straight_share=0.3)


def test_first_clickers_choose_a_and_the_first_point_checks_included(protocol):
    answerer = _answerer(protocol, Population(size=10, spammer_share=0.0, first_share=1.0, straight_share=0.0))
    who = answerer.participant(0)
    assert who.strategy == "first"
    rng = np.random.default_rng(0)
    for first, second in [("baseline", "reference"), ("reference", "baseline"), ("candidate", "baseline")]:
        assert answerer.values(_pair(first, second), rng, who) == {"preference": "A"}
    check = {"task": {}, "criteria": [{"name": "preference"}], "outputs": ["check 2afc B", "check 2afc B"]}
    assert answerer.values(check, rng, who) == {"preference": "A"}  # fails a check asking for B
    rank = {"task": {}, "criteria": [{"name": "naturalness"}], "outputs": list(TEXTS.values())}
    assert answerer.values(rank, rng, who) == {"naturalness": [100.0, 100.0, 100.0]}


def test_straight_liners_give_one_answer_to_every_task(protocol):
    answerer = _answerer(protocol, Population(size=20, spammer_share=0.0, first_share=0.0, straight_share=1.0))
    rng = np.random.default_rng(1)
    people = [answerer.participant(i) for i in range(20)]
    assert {p.strategy for p in people} == {"straight"} and len({p.level for p in people}) == 20
    for who in people:
        pairs = {answerer.values(_pair(a, b), rng, who)["preference"] for a, b in
                 [("baseline", "reference"), ("reference", "baseline"), ("candidate", "reference")] * 3}
        ranks = {tuple(answerer.values({"task": {}, "criteria": [{"name": "naturalness"}],
                                        "outputs": list(TEXTS.values())}, rng, who)["naturalness"]) for _ in range(5)}
        assert pairs == {"A" if who.level < 0.5 else "B"} and len(ranks) == 1
    assert {answerer.values(_pair("baseline", "reference"), rng, p)["preference"] for p in people} == {"A", "B"}


def _honest_table(protocol: Protocol, n_people: int, n_tasks: int, seed: int, bias: float) -> dict[str, list]:
    """``n_people`` honest simulated participants (the default crowd's capability and position bias, no spammers),
    each answering ``n_tasks`` pair tasks of the demo's watched pair, sides drawn at random per task."""
    answerer = _answerer(protocol, Population(size=n_people, spammer_share=0.0, first_share=0.0, straight_share=0.0,
                                              position_bias=bias), seed=seed)
    rng = np.random.default_rng(seed)
    table: dict[str, list] = {c: [] for c in ("participant_id", "task_id", "kind", "criterion", "system", "system_b",
                                              "value", "choice", "seconds")}
    flips = rng.random((n_people, n_tasks)) < 0.5
    for p in range(n_people):
        who = answerer.participant(p)
        assert who == SimulatedParticipant(who.capability, False)
        for k in range(n_tasks):
            a, b = ("baseline", "reference") if flips[p, k] else ("reference", "baseline")
            for col, v in (("participant_id", f"p{p}"), ("task_id", f"i{k}|baseline+reference|preference"),
                           ("kind", "task"), ("criterion", "preference"), ("system", a), ("system_b", b),
                           ("value", np.nan), ("choice", answerer.values(_pair(a, b), rng, who)["preference"]),
                           ("seconds", 10.0)):
                table[col].append(v)
    return table


@pytest.mark.parametrize(("n_tasks", "bias", "most"), [
    # P(one side n times) = E[prod p + prod (1 - p)]: with p = 0.55 (bias 0.1) 0.55**10 + 0.45**10 = 0.0028
    (10, 0.1, 0.01),
    # 8 (the pairwise template's min_tasks: its lists hold 8 pair tasks at the default 24 items): 0.0101
    (8, 0.1, 0.02),
    # 5 tasks: 0.55**5 + 0.45**5 = 0.069; the rule's default min_tasks (10) keeps such short records out
    (5, 0.1, 0.11),
])
def test_same_side_false_positive_rate_on_honest_participants(protocol, n_tasks, bias, most):
    n = 2000
    table = _honest_table(protocol, n, n_tasks, seed=7, bias=bias)
    rule = Protocol.model_validate(protocol.model_dump() | {"exclusion": [{"rule": "same-side", "min_tasks": n_tasks}]})
    share = len(exclusion_rows(table, rule)) / n
    expected = 0.55 ** n_tasks + 0.45 ** n_tasks
    assert share <= most and abs(share - expected) < 4 * np.sqrt(expected / n) + 0.01, (share, expected)
