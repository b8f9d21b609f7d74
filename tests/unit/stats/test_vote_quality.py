"""The per-participant sequential outlier test: against a loop written from the definition, on a simulated crowd
with planted bad voters (detection and false flags), and as the exclusion rules vote-outlier and vote-cap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from humeval.errors import DataError
from humeval.simulate.voters import planted_crowd as crowd
from humeval.stats.davidson import davidson_fit
from humeval.stats.vote_quality import BETS, vote_outliers


def _reference(who, a, b, won, alpha, prior=0.1):
    """The e-process of each participant by a loop over votes, from the module docstring's definitions."""
    people = sorted(set(who))
    models = sorted(set(a) | set(b))
    k = len(models)
    idx = {m: i for i, m in enumerate(models)}
    out = {}
    for person in people:
        wins = np.zeros((k, k))
        for w, x, y, z in zip(who, a, b, won, strict=True):
            if w != person and not math.isnan(z):
                wins[(idx[x], idx[y]) if z == 1 else (idx[y], idx[x])] += 1
        theta = davidson_fit(wins, np.zeros((k, k)), prior=prior).theta
        weights = {"side-a": 1 / 6, "side-b": 1 / 6, "random": 1 / 3} | {f"rig:{m}": 1 / (3 * k) for m in models}
        wealth = {(d, lam): 1.0 for d in weights for lam in BETS}
        best = 1.0
        for w, x, y, z in zip(who, a, b, won, strict=True):
            if w != person or math.isnan(z):
                continue
            p = 1 / (1 + math.exp(-(theta[idx[x]] - theta[idx[y]])))
            for d, lam in wealth:
                g = {"side-a": 1.0, "side-b": -1.0, "random": 2 * (0.5 - p)}.get(d)
                if g is None:
                    m = d[4:]
                    g = 1.0 if x == m else -1.0 if y == m else 0.0
                wealth[(d, lam)] *= 1 + lam * g * (z - p)
            best = max(best, sum(weights[d] / len(BETS) * v for (d, _), v in wealth.items()))
        out[person] = (math.log(best), best >= len(people) / alpha)
    return out


def test_matches_a_loop_over_votes() -> None:
    rng = np.random.default_rng(3)
    who, a, b, won, _ = crowd(rng, 30, honest=6, bad=1, k=4, rigged=3)
    won[::7] = np.nan  # ties are skipped
    got = vote_outliers(who, a, b, won, alpha=0.05)
    ref = _reference(list(who), list(a), list(b), list(won), 0.05)
    for person, log_e, flagged in zip(got.participants, got.log_e, got.flagged, strict=True):
        assert log_e == pytest.approx(ref[person][0], abs=1e-9)
        assert bool(flagged) == ref[person][1]
    assert got.extra["skipped_ties"] == int(np.isnan(won).sum())


def test_planted_bad_voters_are_found_and_honest_ones_are_not() -> None:
    rng = np.random.default_rng(11)
    caught = {k: [] for k in range(4)}
    any_honest = 0
    for _ in range(8):
        who, a, b, won, kind = crowd(rng, 100)
        r = vote_outliers(who, a, b, won, alpha=0.05)
        kind_of = dict(zip(who, kind, strict=True))
        for p, f in zip(r.participants, r.flagged, strict=True):
            caught[kind_of[p]].append(bool(f))
        any_honest += any(f and kind_of[p] == 0 for p, f in zip(r.participants, r.flagged, strict=True))
    assert np.mean(caught[2]) == 1.0 and np.mean(caught[3]) >= 0.9  # always-A, riggers
    assert any_honest <= 1 and np.mean(caught[0]) <= 0.01  # family-wise level 0.05 over 8 crowds
    who, a, b, won, kind = crowd(rng, 100)
    r = vote_outliers(who, a, b, won)
    rigger = [d for d, p in zip(r.direction, r.participants, strict=True) if dict(zip(who, kind, strict=True))[p] == 3]
    assert rigger.count("rig:m6") >= 4


def test_refusals() -> None:
    with pytest.raises(DataError, match="alpha must be in"):
        vote_outliers(["p", "q"], ["A", "B"], ["B", "A"], [1, 0], alpha=0)
    with pytest.raises(DataError, match="1, 0 or NaN"):
        vote_outliers(["p", "q"], ["A", "B"], ["B", "A"], [1, 0.5])
    with pytest.raises(DataError, match="at least 2 participants"):
        vote_outliers(["p", "p"], ["A", "B"], ["B", "A"], [1, 0])
    with pytest.raises(DataError, match="with itself"):
        vote_outliers(["p", "q"], ["A", "B"], ["A", "A"], [1, 0])


def test_exclusion_rules_vote_outlier_and_vote_cap() -> None:
    from tests.unit.analysis.conftest import make_protocol

    from humeval.judgements.exclusion import exclusion_rows

    rng = np.random.default_rng(5)
    who, a, b, won, kind = crowd(rng, 60, honest=30, bad=2)
    choice = np.where(won == 1, "A", "B")
    table = {"participant_id": list(who), "task_id": [f"t{i}" for i in range(who.size)],
             "kind": ["task"] * who.size, "criterion": ["q"] * who.size, "system": list(a), "system_b": list(b),
             "value": [float("nan")] * who.size, "choice": list(choice), "seconds": [10.0] * who.size}
    protocol = make_protocol(systems=[f"m{i}" for i in range(8)],
                             criteria=[{"name": "q", "type": "2afc", "question": "Which?"}],
                             exclusion=[{"rule": "vote-outlier", "alpha": 0.05}, {"rule": "vote-cap", "max_votes": 50}])
    rows = exclusion_rows(table, protocol)
    flagged = {r["participant_id"] for r in rows if r["rule"] == "vote-outlier"}
    kind_of = dict(zip(who, kind, strict=True))
    assert {kind_of[p] for p in flagged} <= {1, 2, 3} and sum(kind_of[p] == 2 for p in flagged) == 2
    assert "strongest alternative: side-a" in next(r["detail"] for r in rows if kind_of[r["participant_id"]] == 2
                                                    and r["rule"] == "vote-outlier")
    capped = [r for r in rows if r["rule"] == "vote-cap"]
    assert len(capped) == 10 * len(set(who)) and capped[0]["detail"].startswith("vote 51 of 60 on q")
    one = {k: [v for v, w in zip(col, who, strict=True) if w == who[0]] for k, col in table.items()}
    assert [r["rule"] for r in exclusion_rows(one, protocol)] == ["vote-cap"] * 10  # alone: no crowd to test against


def test_the_rules_are_stated_in_the_preregistration_and_a_rejection() -> None:
    from humeval.platforms.prolific.actions import rejection_message
    from humeval.protocol.models import VoteCapExclusion, VoteOutlierExclusion
    from humeval.report.prereg import _exclusion_text

    outlier, cap = VoteOutlierExclusion(rule="vote-outlier", alpha=0.01), VoteCapExclusion(rule="vote-cap", max_votes=30)
    assert _exclusion_text(outlier).startswith("vote-outlier: ") and "0.01" in _exclusion_text(outlier)
    assert _exclusion_text(cap) == "vote-cap: a participant's pairwise votes of a criterion after the first 30"
    assert "error level 0.01" in rejection_message(outlier) and len(rejection_message(outlier)) >= 100
