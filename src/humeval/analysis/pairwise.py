"""The plan for a ``2afc`` criterion: win rates with sign tests, agreement, pairwise rankings.

Per pair of systems (names sorted): wins of each, ties (``tie``, ``both-good``,
``both-bad``) and the win rate of the first system among decisive judgements with its
exact Clopper-Pearson interval; the sign test (two-sided exact binomial test of a 0.5 win
rate, ties left out) decides whether one system is preferred, p-values corrected over
pairs as declared. The win-rate matrix (ties as half wins) feeds the heatmap. When the
protocol has a stopping rule, its replayed decision (:mod:`humeval.analysis.decisions`) is
reported with the criterion (the decision-bound figure).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

import pandas as pd

from humeval.analysis.agreement_plan import agreement
from humeval.analysis.rankings_plan import rankings
from humeval.judgements import pair_units, winners
from humeval.protocol.models import Analysis, Criterion
from humeval.results import ArenaBoardResult, ArenaBoardRow, Leaderboard, SignTest, Stopping
from humeval.rng import child_seeds
from humeval.stats import adjust_pvalues, sign_test

__all__ = ["analyze_pairwise", "battles_from_choices"]

_TIES = {"tie": "tie", "both-good": "tie", "both-bad": "tie (bothbad)"}


def battles_from_choices(frame: pd.DataFrame) -> pd.DataFrame:
    """FastChat battles (model_a, model_b, winner) from ``2afc`` judgements."""
    winner = frame["choice"].map({"A": "model_a", "B": "model_b"} | _TIES)
    return pd.DataFrame({"model_a": frame["system"].to_numpy(), "model_b": frame["system_b"].to_numpy(),
                         "winner": winner.to_numpy()})


def _pair_record(first: str, second: str, won: pd.Series, alpha: float) -> dict[str, Any]:
    a, b = int((won == first).sum()), int((won == second).sum())
    ties = int(len(won) - a - b)
    record: dict[str, Any] = {"a": first, "b": second, "wins_a": a, "wins_b": b, "ties": ties, "n": len(won),
                              "method": "sign_test"}
    if a + b == 0:
        return record | {"estimate": None, "ci_low": None, "ci_high": None, "p_value": None,
                         "undefined": "no decisive judgements (only ties)"}
    test = sign_test(a, b, confidence_level=1 - alpha)  # alpha: the plan's significance level
    return record | {"estimate": test.estimate, "ci_low": test.ci_low, "ci_high": test.ci_high,
                     "p_value": test.p_value, "tie_rate": ties / len(won)}


def board_record(frame: pd.DataFrame, systems: list[str], seed: int, *, n_boot: int = 1000) -> ArenaBoardResult:
    """The leaderboard of the judgements ``frame`` over ``systems`` (K >= 3): :func:`humeval.stopping.board.arena_board`
    on the votes in the order they were submitted (``submitted_at``, stable), with percentile bootstrap intervals of
    the scores (:func:`humeval.stopping.board.davidson_intervals`, ``n_boot`` resamples from ``seed``)."""
    from humeval.stopping.board import TIE_CHOICES, arena_board, davidson_intervals

    used = frame[frame["choice"].isin(("A", "B", *TIE_CHOICES)) & frame["system"].isin(systems)
                 & frame["system_b"].isin(systems)]
    if "submitted_at" in used:
        used = used.sort_values("submitted_at", kind="stable")
    board = arena_board(systems, used["system"].astype(str).tolist(), used["system_b"].astype(str).tolist(),
                        used["choice"].astype(str).tolist(), seed=seed)
    low, high = davidson_intervals(board.wins, board.ties, seed=seed, n_boot=n_boot, prior=0.5 if board.ridge else 0.0)
    rows = [ArenaBoardRow(system=board.systems[i], score=float(board.theta[i]), ci_low=float(low[i]),
                          ci_high=float(high[i]), rank_low=int(board.rank_low[i]), rank_high=int(board.rank_high[i]),
                          won=int(board.wins[i].sum()), lost=int(board.wins[:, i].sum()), ties=int(board.ties[i].sum()))
            for i in board.order]
    return ArenaBoardResult(goal=board.goal, delta=board.delta, basis=board.basis, batch=board.batch, fed=board.fed,
                            pending=board.pending, ridge=board.ridge, answer=board.answer, reason=board.reason,
                            interval_method=f"percentile bootstrap over votes ({n_boot} resamples, fixed n)",
                            rows=tuple(rows))


def analyze_pairwise(
    frame: pd.DataFrame,
    criterion: Criterion,
    plan: Analysis,
    systems: list[str],
    required: int,
    seed: int,
    decision: dict[str, Any] | None = None,
    texts: Mapping[tuple[str, str], str] | None = None,
) -> dict[str, Any]:
    """Run the plan on the valid pairwise judgements ``frame`` of one criterion.

    ``texts``: ``(item_id, system) -> output text``, what the ``style-controlled`` ranking measures style on.

    ``decision``: the stopping rule's replayed decision for this criterion
    (:func:`humeval.analysis.decisions.replay_decisions`), reported as ``stopping``.
    """
    s_agree, s_rank = child_seeds(seed, 2)
    won = winners(frame)
    systems = [s for s in systems if ((frame["system"] == s) | (frame["system_b"] == s)).any()]
    pair_key = [tuple(sorted(p)) for p in zip(frame["system"], frame["system_b"], strict=True)]
    frame = frame.assign(won=won.to_numpy(), pair=["|".join(p) for p in pair_key])
    pairs = []
    for first, second in combinations(sorted(systems), 2):
        sub = frame[frame["pair"] == f"{first}|{second}"]
        if len(sub):
            pairs.append(_pair_record(first, second, sub["won"], plan.alpha))
    defined = [p for p in pairs if p.get("p_value") is not None]
    if len(defined) > 1:
        from humeval.analysis.ratings import CORRECTION_NAMES

        adjusted = adjust_pvalues([p["p_value"] for p in defined], CORRECTION_NAMES[plan.correction])
        for p, adj in zip(defined, adjusted, strict=True):
            p |= {"p_unadjusted": p["p_value"], "p_value": float(adj), "correction": plan.correction}
    matrix = {s: {t: None for t in systems} for s in systems}
    for p in pairs:
        half = p["ties"] / 2
        matrix[p["a"]][p["b"]] = (p["wins_a"] + half) / p["n"]
        matrix[p["b"]][p["a"]] = (p["wins_b"] + half) / p["n"]
    units, categories = pair_units(frame)
    out: dict[str, Any] = {"seeds": {"agreement": s_agree, "rankings": s_rank}, "pairs": [SignTest(**p) for p in pairs],
                           "win_rates": matrix, "decision": "sign test per pair (exact binomial, ties left out)"}
    out["agreement"] = agreement(units, criterion.type, plan, required, s_agree, categories)
    style = None
    if texts is not None and "style-controlled" in plan.rankings:
        from humeval.stats import style_covariates

        items = frame["item_id"].astype(str)
        style = style_covariates([texts.get(k, "") for k in zip(items, frame["system"].astype(str), strict=True)],
                                 [texts.get(k, "") for k in zip(items, frame["system_b"].astype(str), strict=True)])
    out["rankings"] = rankings(plan, [], None, battles_from_choices(frame), s_rank, style=style)
    out["battles_from"] = "per judgement (2afc choices)"
    if len(systems) >= 3 and (decision is None or decision.get("goal") in (None, "pair")):
        out["arena_board"] = board_record(frame, systems, seed)
    if decision is not None:
        out["stopping"] = Stopping(**decision)
        if not out["stopping"].pairwise:
            from humeval.analysis.leaderboard import goal_leaderboard

            out["leaderboard"] = Leaderboard(**goal_leaderboard(decision, battles_from_choices(frame), s_rank))
    return out
