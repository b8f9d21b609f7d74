"""Prediction-powered system means on the shared CASF sets: human-only beside PPI++ on the same subsets.

For each set, each human aspect and each human budget (10 % and 25 % of the items), draw
random item subsets; humans "label" the subset (the set's stored human scores of every
system's output of those items), the judge scores every item. Per subset and system:
the human-only mean of the subset and the PPI++ mean (:func:`humeval.stats.ppi_mean_arrays`)
with their 95 % intervals. Reported per set and budget, averaged over the set's aspects:

* mean Kendall tau-b of the system ranking by each estimate against the ranking by the
  full-data human means (:func:`humeval.sampling.ranking.kendall_tau_b`);
* coverage: the share of (subset, system) intervals containing the full-data human mean;
* the PPI interval's width over the human-only one.

The judge is fixed before any human score is seen: the mean of the set's automatic metrics,
each z-scored over all outputs (stored ``auto.*`` columns; computed BLEU/chrF/ROUGE where a set
stores none, as the CASF reproduction does). No weighting is fitted to human scores.

The estimand is the mean over the set's items, a finite population from which the subset is
drawn without replacement, while both intervals are the usual infinite-population ones: their
coverage of the full-data mean is slightly conservative (about 96 % nominally 95 % at a 10 %
budget, 97.6 % at 25 % for the human-only mean), and the docs report what the command prints.
"""

from __future__ import annotations

import numpy as np

from humeval.data.casf import CASF_SETS, PAPER_SETS, load_casf
from humeval.reproduce import Reproduction, Row
from humeval.rng import as_generator, child_seeds
from humeval.sampling.prepare import prepare_table
from humeval.sampling.ranking import kendall_tau_b
from humeval.sampling.table import ItemTable
from humeval.stats import ppi_mean_arrays

__all__ = ["judge_matrix", "ppi", "subset_estimates"]

BUDGETS = (0.10, 0.25)


def judge_matrix(table: ItemTable) -> np.ndarray:
    """items x systems: the mean of every metric, each z-scored over all outputs (no human score used)."""
    stacked = []
    for values in table.metrics.values():
        m = np.asarray(values, dtype=float)
        sd = m.std()
        if np.isfinite(sd) and sd > 0:
            stacked.append((m - m.mean()) / sd)
    if not stacked:
        raise ValueError("the table has no informative metric column")
    return np.mean(stacked, axis=0)


def subset_estimates(human: np.ndarray, judge: np.ndarray, budget: float, iterations: int,
                     seed: int) -> dict[str, float]:
    """Human-only and PPI++ over ``iterations`` random subsets of ``budget`` of the items (items x systems arrays)."""
    n_items = human.shape[0]
    n = max(2, round(budget * n_items))
    rng = as_generator(seed)
    order = np.argsort(rng.random((iterations, n_items)), axis=1)  # one random permutation per subset
    labelled, unlabelled = order[:, :n], order[:, n:]
    # (subsets, systems, items) views of the labelled and unlabelled outputs
    y = np.transpose(human[labelled], (0, 2, 1))
    yhat = np.transpose(judge[labelled], (0, 2, 1))
    yhat_u = np.transpose(judge[unlabelled], (0, 2, 1))
    est = ppi_mean_arrays(y, yhat, yhat_u, confidence_level=0.95)
    truth = human.mean(axis=0)
    covered_ppi = (est["ci_low"] <= truth) & (truth <= est["ci_high"])
    covered_human = (est["human_ci_low"] <= truth) & (truth <= est["human_ci_high"])
    human_width = est["human_ci_high"] - est["human_ci_low"]
    with np.errstate(invalid="ignore", divide="ignore"):  # a subset whose human scores are all equal has width 0
        width = np.where(human_width > 0, (est["ci_high"] - est["ci_low"]) / np.where(human_width > 0, human_width, 1), np.nan)
    return {
        "n_labelled": n,
        "tau_human": float(np.nanmean(kendall_tau_b(est["human"], truth))),
        "tau_ppi": float(np.nanmean(kendall_tau_b(est["estimate"], truth))),
        "coverage_human": float(covered_human.mean()),
        "coverage_ppi": float(covered_ppi.mean()),
        "width_ratio": float(np.nanmedian(width)),
        "lam": float(np.mean(est["lam"])),
    }


def ppi(iterations: int | None = None, seed: int = 0, fast: bool = False) -> Reproduction:
    """Every shared set (``fast``: the four sets with stored metrics, 200 subsets) at 10 % and 25 % budgets."""
    runs = iterations or (200 if fast else 1000)
    sets = PAPER_SETS if fast else CASF_SETS
    rows: list[Row] = []
    per_set: dict[str, dict[str, dict[str, float]]] = {}
    for name, set_seed in zip(sets, child_seeds(seed, len(sets)), strict=True):
        table = prepare_table(load_casf(name), "auto", progress=False)
        judge = judge_matrix(table)
        aspects = table.aspects(None)
        per_set[name] = {}
        for budget, b_seed in zip(BUDGETS, child_seeds(set_seed, len(BUDGETS)), strict=True):
            results = [subset_estimates(np.asarray(table.human[a], dtype=float), judge, budget, runs, s)
                       for a, s in zip(aspects, child_seeds(b_seed, len(aspects)), strict=True)]
            mean = {k: float(np.mean([r[k] for r in results])) for k in results[0]}
            per_set[name][f"{budget:g}"] = mean
            label = f"{name} | {budget:.0%} of {table.n_items} items ({len(aspects)} aspect(s))"
            gain = mean["tau_ppi"] - mean["tau_human"]
            rows += [
                Row(f"{label} | mean tau-b human-only", None, round(mean["tau_human"], 3)),
                Row(f"{label} | mean tau-b prediction-powered", None, round(mean["tau_ppi"], 3),
                    f"{'+' if gain >= 0 else ''}{gain:.3f} vs human-only"
                    + ("" if gain > 0.005 else ": the judge does not help here")),
                Row(f"{label} | 95% coverage human-only", None, round(mean["coverage_human"], 3)),
                Row(f"{label} | 95% coverage prediction-powered", None, round(mean["coverage_ppi"], 3)),
                Row(f"{label} | interval width PPI / human-only (median)", None, round(mean["width_ratio"], 3),
                    f"mean lambda {mean['lam']:.2f}"),
            ]
    settings = {"iterations": runs, "seed": seed, "sets": list(sets), "budgets": list(BUDGETS),
                "judge": "mean of the set's z-scored automatic metrics", "results": per_set}
    return Reproduction("ppi", rows, settings)
