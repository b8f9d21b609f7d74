"""The leaderboard of a goal over K systems: Bradley-Terry scores, anytime-valid intervals, contention, cost.

For a criterion watched by a goal (``best``, ``top-k``, ``ranking``; the replayed decision of
:func:`humeval.analysis.decisions.replay_decisions`) one row per system:

* ``rating`` with ``ci_low``/``ci_high``: the Bradley-Terry fit on the criterion's valid
  judgements (:func:`humeval.stats.bradley_terry`, Elo scale, percentile bootstrap; a
  fixed-n interval, not anytime-valid);
* ``vs_leader_low``/``vs_leader_high``: an anytime-valid interval for the system's strength
  minus the leader's on the Bradley-Terry logit scale, logit of the pair's confidence sequence
  for P(system preferred to leader) intersected over every n so far (the running
  intersection of a confidence sequence is one too; :func:`humeval.stopping.goals.win_rate_cs`, at the goal's
  pairwise level delta / (K (K - 1) / 2), so it holds for all systems at once and whenever the
  leaderboard is looked at); infinite ends where the pair was never judged;
* ``rank_low``/``rank_high``: the goal's anytime-valid rank set; ``in_contention``.

``cost`` sets the judgements the goal used against what a uniform round-robin design (every
pair equally often) with the same tests would need: the mean of ``runs`` simulated studies
(:func:`humeval.simulate.multi.simulate_goal`) at the fitted strengths, a plug-in estimate
(the fit itself comes from the adaptively collected data).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from humeval.rng import child_seeds

__all__ = ["goal_leaderboard"]


def goal_leaderboard(decision: dict[str, Any], battles: pd.DataFrame, seed: int, *, n_boot: int = 1000,
                     runs: int = 200) -> dict[str, Any]:
    """Leaderboard rows (best first) and the cost against uniform pair sampling; see the module docstring."""
    from humeval.simulate.multi import simulate_goal
    from humeval.stats import bradley_terry

    names = list(decision["systems"])
    k = len(names)
    s_boot, s_sim = child_seeds(seed, 2)
    mine = battles[battles["model_a"].isin(names) & battles["model_b"].isin(names)]
    try:
        bt = bradley_terry(mine, n_boot=n_boot, seed=s_boot)
        fit = {s: bt.score(s) for s in bt.systems}
    except Exception:  # noqa: BLE001 - no MLE (a system never won or never lost): ratings left out, said why
        bt, fit = None, {}
    wins = np.array([[decision["wins"][a].get(b, 0) if a != b else 0 for b in names] for a in names], dtype=float)
    games = wins + wins.T
    theta = np.array([float(fit[s].extra["theta"]) if s in fit else np.nan for s in names])
    leader = int(np.nanargmax(theta)) if np.isfinite(theta).any() else int(np.argmax(wins.sum(1) / np.maximum(games.sum(1), 1)))
    lo, hi = _running_cs(decision.get("sequence") or [], leader, k, decision["pair_delta"], wins, games,
                         float(decision["prior_strength"]))
    with np.errstate(divide="ignore"):
        vs_lo, vs_hi = np.log(lo / (1 - lo)), np.log(hi / (1 - hi))
    rows = []
    for i, name in enumerate(names):
        est = fit.get(name)
        low, high = decision["rank_sets"][name]
        rows.append({
            "system": name, "rating": None if est is None else float(est.estimate),
            "ci_low": None if est is None else float(est.ci_low), "ci_high": None if est is None else float(est.ci_high),
            "theta": None if not np.isfinite(theta[i]) else float(theta[i]),
            "vs_leader_low": 0.0 if i == leader else _finite(vs_lo[i]),
            "vs_leader_high": 0.0 if i == leader else _finite(vs_hi[i]),
            "rank_low": int(low), "rank_high": int(high), "in_contention": name in decision["contention"],
            "judgements": int(games[i].sum()),
            **({"no_interval": est.extra["no_interval"]} if est is not None and "no_interval" in est.extra else {}),
        })
    rows.sort(key=lambda r: (r["rank_low"], -(r["theta"] if r["theta"] is not None else -np.inf)))
    cost: dict[str, Any] = {"spent": int(decision["n"]), "uniform_expected": None}
    if np.isfinite(theta).all() and decision["goal"] != "pair":
        horizon = int(max(20 * max(decision["n"], 1), 10_000))
        sims = {p: simulate_goal(k, "fitted", decision["goal"], p, delta=decision["delta"],
                                 top=decision["top"] if decision["goal"] == "top-k" else None, iterations=runs,
                                 max_judgements=horizon, seed=s_sim, strengths=theta - theta.mean())
                for p in ("adaptive", "uniform")}
        cost |= {"uniform_expected": sims["uniform"].mean_effort, "uniform_decided_share": sims["uniform"].decided_share,
                 "adaptive_expected": sims["adaptive"].mean_effort, "runs": runs, "horizon": horizon, "seed": s_sim,
                 "method": "simulated at the fitted Bradley-Terry strengths (plug-in)"}
    return {"goal": decision["goal"], "leader": names[leader], "rows": rows, "cost": cost,
            "rating_method": "bradley_terry (bootstrap, fixed-n)" if bt is not None else "no Bradley-Terry fit: "
            "a system never won or never lost", "interval_method": "anytime-valid (beta-binomial mixture CS vs the leader, "
            f"delta {decision['pair_delta']:.3g} per pair)", "timeline": decision.get("timeline", [])}


def _running_cs(sequence: list[list[int]], leader: int, k: int, delta: float, wins: np.ndarray,
                games: np.ndarray, prior: float) -> tuple[np.ndarray, np.ndarray]:
    """Per system: the confidence sequence for P(system beats leader), intersected over the pair's history."""
    from humeval.stopping.goals import win_rate_cs

    lo, hi = np.zeros(k), np.ones(k)
    seq = np.asarray(sequence, dtype=int).reshape(-1, 3)
    for i in range(k):
        if i == leader:
            continue
        mine = seq[((seq[:, 0] == i) & (seq[:, 1] == leader)) | ((seq[:, 0] == leader) & (seq[:, 1] == i))]
        if len(mine) == 0:  # no history (a record without a sequence): the current counts only
            if games[i, leader] > 0:
                lo[i], hi[i] = (x[0] for x in win_rate_cs(wins[i:i + 1, leader], games[i:i + 1, leader], delta, prior))
            continue
        won, n = np.cumsum(mine[:, 2] == i), np.arange(1, len(mine) + 1)
        for start in range(0, len(n), 500):  # prefixes x grid in blocks of ~8 MB
            low, high = win_rate_cs(won[start:start + 500], n[start:start + 500], delta, prior, grid=2001)
            lo[i], hi[i] = max(lo[i], float(np.nanmax(low))), min(hi[i], float(np.nanmin(high)))
    return lo, hi


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None
