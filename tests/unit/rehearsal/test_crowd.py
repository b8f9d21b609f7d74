"""A simulated crowd in a rehearsal: the agent model's choice probability, spammers, attention checks, the pool."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

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
def protocol(tmp_path_factory: pytest.TempPathFactory):
    root = Path(tmp_path_factory.mktemp("crowd")) / "s"
    init_study(root, "demo", items=4, seed=1)
    return StudyFolder.open(root).protocol


def _answerer(protocol, population: Population) -> Answerer:
    key = AnswerKey({("i1", t): (s,) for s, t in TEXTS.items()},
                    {("attention-1", "check 2afc"): "A", ("attention-2", "check rankme"): 100})
    return Answerer(protocol, key, "crowd", SYSTEMS, population, seed=3)


def _assignment(criterion: str, systems: list[str], kind: str = "task", item: str = "i1",
                texts: list[str] | None = None) -> dict:
    return {"task": {"kind": kind, "item_id": item}, "criteria": [{"name": criterion}],
            "outputs": texts if texts is not None else [TEXTS[s] for s in systems]}


@pytest.mark.parametrize(("first", "second", "expected"), [
    # 2afc latent scale 1..5, evenly spaced: baseline 2, reference 4, gap -2/4 = -0.5;
    # P(first) = (c d + 1) / 2 + b / 2 = (0.8 * -0.5 + 1) / 2 + 0.05 = 0.35, and 0.75 the other way round
    ("baseline", "reference", 0.35),
    ("reference", "baseline", 0.75),
    ("candidate", "reference", (0.8 * -0.25 + 1) / 2 + 0.05),
])
def test_choice_probability_is_the_agent_model(protocol, first, second, expected):
    answerer = _answerer(protocol, Population(position_bias=0.1, difficulty_var=0.0))
    who = SimulatedParticipant(0.8, False)
    rng = np.random.default_rng(0)
    n = 20000
    chose_first = sum(answerer.values(_assignment("preference", [first, second]), rng, who)["preference"] == "A"
                      for _ in range(n))
    assert abs(chose_first / n - expected) < 4 * np.sqrt(expected * (1 - expected) / n)


def test_spammer_chooses_at_random_with_the_position_bias_and_fails_checks(protocol):
    answerer = _answerer(protocol, Population(position_bias=0.2))
    spammer, careful = SimulatedParticipant(0.0, True), SimulatedParticipant(0.9, False)
    rng = np.random.default_rng(1)
    n = 20000
    first = sum(answerer.values(_assignment("preference", ["baseline", "reference"]), rng, spammer)["preference"] == "A"
                for _ in range(n)) / n
    assert abs(first - 0.6) < 0.015  # P = 0.5 + b / 2, whatever the outputs
    check = _assignment("naturalness", [], kind="attention", item="attention-2", texts=["check rankme"])
    assert answerer.values(check, rng, careful) == {"naturalness": [100.0]}
    assert all(answerer.values(check, rng, spammer)["naturalness"] != [100.0] for _ in range(50))
    pair_check = _assignment("preference", [], kind="attention", item="attention-1", texts=["check 2afc", "x"])
    assert answerer.values(pair_check, rng, careful) == {"preference": "A"}


def test_rankme_scores_centre_on_the_system_with_a_bias_for_the_first_shown(protocol):
    population = Population(position_bias=0.4)
    answerer = _answerer(protocol, population)
    who = SimulatedParticipant(1.0, False)
    rng = np.random.default_rng(2)
    low, high = np.log(100 / 4), np.log(100 * 4)  # RankME's log scale around the modulus 100
    first, second = [], []
    for _ in range(4000):
        a = answerer.values(_assignment("naturalness", ["candidate", "baseline"]), rng, who)["naturalness"]
        b = answerer.values(_assignment("naturalness", ["baseline", "candidate"]), rng, who)["naturalness"]
        first.append(np.log(a[0]))
        second.append(np.log(b[1]))
    centre = (low + high) / 2  # the middle of three evenly spaced systems
    assert abs(np.mean(second) - centre) < 0.03
    assert abs(np.mean(first) - np.mean(second) - 0.4 * (high - low) / 4) < 0.05


def test_pool_has_the_spammer_share_and_repeats():
    population = Population(spammer_share=0.1, size=40)
    pool = population.pool(5)
    assert int(pool.spammer.sum()) == 4 and np.all(pool.effective[pool.spammer] == 0)
    caps = pool.capability[~pool.spammer]
    assert caps.min() >= 0.7 and caps.max() <= 1.0
    assert population.pool(5).capability.tolist() == pool.capability.tolist()


def test_participants_come_from_the_pool_in_turn(protocol):
    answerer = _answerer(protocol, Population(size=5, spammer_share=0.2))
    people = [answerer.participant(i) for i in range(10)]
    assert people[:5] == people[5:] and sum(p.spammer for p in people[:5]) == 1


@pytest.mark.parametrize("bad", [{"capability": (0.0, 1.0)}, {"capability": (0.9, 0.8)}, {"position_bias": 2.0},
                                 {"spammer_share": 1.0}, {"difficulty_var": -1.0}, {"size": 0}])
def test_population_refuses_bad_values(bad):
    with pytest.raises(RehearsalError, match="crowd: "):
        Population(**bad)


def test_dummy_kinds_have_no_participants(protocol):
    key = AnswerKey({("i1", t): (s,) for s, t in TEXTS.items()}, {})
    assert Answerer(protocol, key, "static", SYSTEMS).participant(0) is None
