"""``humeval reproduce rankme``: Tables 2, 3 and 4 of Novikova, Dušek & Rieser (NAACL 2018).

Data: the twelve CrowdFlower exports of ``jeknov/RankME`` (read by
:func:`humeval.data.rankme.load_rankme`). Analysis choices, fixed before comparing with the
paper and applied to every cell alike:

* magnitude-estimation scores (plain ME, RankME) are log-transformed; Likert scores are not;
* Table 3: ICC(1,k) (one-way random effects, average of the judgements: different crowd
  workers rate different outputs) over the 300 outputs of each cell, all judgements used
  (the 8 Likert setup-1 outputs with 4-5 judgements make the design unbalanced);
* Table 2: Spearman's rho between two criteria over the 300 outputs, each output scored by
  the mean of its judgements (setup 1 and 2 alike);
* Table 4 (setup 2): per-output mean score, all pairs of systems tested by paired bootstrap
  on the same resamples (Koehn 2004, one-sided, 95%); "added"/"missing" information from
  the checkboxes of all three setup-2 quality tasks (share of judgements ticking it, lower
  is better); TrueSkill over the win/loss/tie comparisons of every pair of outputs within
  each setup-2 RankME judgement, rank ranges from bootstrap samples of those comparisons.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from humeval.data.rankme import SYSTEM_NAMES, load_rankme
from humeval.errors import DataError
from humeval.reproduce import Reproduction, Row
from humeval.stats import battles_from_scores, icc, rank_by_scores, spearman, trueskill_ranking

__all__ = [
    "PAPER_TABLE2",
    "PAPER_TABLE3",
    "PAPER_TABLE4",
    "find_data",
    "rankme",
    "table2",
    "table3",
    "table4",
]

SETUPS = {"stp1": "setup1", "stp2": "setup2"}
TOLERANCE = 0.01  # a cell "matches" when ours, rounded to the paper's 2 decimals, is within 0.01


def _matches(ours: float, paper: float) -> bool:
    """Compare at the paper's printed precision (2 decimals), allowing one unit in the last place."""
    return abs(round(ours, 2) - paper) <= TOLERANCE + 1e-9


# Table 3 of the paper: ICC; (value, starred = p < 0.05)
PAPER_TABLE3: dict[tuple[str, str, str], tuple[float, bool]] = {
    ("likert", "naturalness", "stp1"): (0.07, False),
    ("likert", "naturalness", "stp2"): (0.12, False),
    ("likert", "quality", "stp1"): (0.02, False),
    ("likert", "quality", "stp2"): (0.41, True),
    ("likert", "informativeness", "stp1"): (0.93, True),
    ("likert", "informativeness", "stp2"): (0.78, True),
    ("plainME", "naturalness", "stp1"): (-0.03, False),
    ("plainME", "naturalness", "stp2"): (0.27, True),
    ("plainME", "quality", "stp1"): (0.22, True),
    ("plainME", "quality", "stp2"): (0.60, True),
    ("plainME", "informativeness", "stp1"): (0.59, True),
    ("plainME", "informativeness", "stp2"): (0.79, True),
    ("rankME", "naturalness", "stp1"): (0.11, False),
    ("rankME", "naturalness", "stp2"): (0.42, True),
    ("rankME", "quality", "stp1"): (0.10, False),
    ("rankME", "quality", "stp2"): (0.68, True),
    ("rankME", "informativeness", "stp1"): (0.72, True),
    ("rankME", "informativeness", "stp2"): (0.82, True),
}

# Table 2: Spearman rho between criteria; (value, starred)
PAPER_TABLE2: dict[tuple[str, str, str, str], tuple[float, bool]] = {
    ("naturalness", "quality", "likert", "stp1"): (0.54, True),
    ("naturalness", "quality", "likert", "stp2"): (-0.01, False),
    ("naturalness", "quality", "plainME", "stp1"): (0.44, True),
    ("naturalness", "quality", "plainME", "stp2"): (-0.03, False),
    ("naturalness", "quality", "rankME", "stp1"): (0.28, True),
    ("naturalness", "quality", "rankME", "stp2"): (-0.04, False),
    ("informativeness", "quality", "likert", "stp1"): (0.00, False),
    ("informativeness", "quality", "likert", "stp2"): (0.54, True),
    ("informativeness", "quality", "plainME", "stp1"): (0.48, True),
    ("informativeness", "quality", "plainME", "stp2"): (0.71, True),
    ("informativeness", "quality", "rankME", "stp1"): (0.55, True),
    ("informativeness", "quality", "rankME", "stp2"): (0.74, True),
    ("naturalness", "informativeness", "likert", "stp1"): (0.15, True),
    ("naturalness", "informativeness", "likert", "stp2"): (-0.18, True),
    ("naturalness", "informativeness", "plainME", "stp1"): (0.03, False),
    ("naturalness", "informativeness", "plainME", "stp2"): (-0.07, False),
    ("naturalness", "informativeness", "rankME", "stp1"): (0.09, False),
    ("naturalness", "informativeness", "rankME", "stp2"): (-0.08, False),
}

_S, _T, _H = "Slug2Slug", "TGen", "Sheffield NLP"
# Table 4 (setup 2): system -> (best rank, worst rank). The extracted table lists each ranking
# followed by the rows that produce it; "added information" follows the first ranking and
# "missing information" the second.
_ORDER = {_S: (1, 1), _T: (2, 2), _H: (3, 3)}
PAPER_TABLE4: dict[tuple[str, str], dict[str, tuple[int, int]]] = {
    ("plainME", "informativeness"): _ORDER,
    ("rankME", "quality"): _ORDER,
    ("trueskill", "quality"): _ORDER,
    ("checkbox", "added"): _ORDER,
    ("checkbox", "missing"): {_T: (1, 1), _S: (2, 2), _H: (3, 3)},
    ("plainME", "quality"): {_S: (1, 2), _T: (1, 2), _H: (3, 3)},
    ("rankME", "informativeness"): {_S: (1, 2), _T: (1, 2), _H: (3, 3)},
    ("trueskill", "informativeness"): {_S: (1, 2), _T: (1, 2), _H: (3, 3)},
    ("likert", "quality"): {_S: (1, 2), _T: (1, 2), _H: (3, 3)},
    ("likert", "informativeness"): {_S: (1, 2), _T: (1, 2), _H: (3, 3)},
    ("likert", "naturalness"): {_S: (1, 2), _H: (1, 2), _T: (3, 3)},
    ("plainME", "naturalness"): {_S: (1, 3), _T: (1, 3), _H: (1, 3)},
    ("rankME", "naturalness"): {_S: (1, 3), _T: (1, 3), _H: (1, 3)},
    ("trueskill", "naturalness"): {_S: (1, 3), _T: (1, 3), _H: (1, 3)},
}

# Cells known not to reproduce with the choices above; not tuned away. The notes add numbers
# computed from the data (job dates, worker concentration, the raw-score alternative).
_KNOWN_T3 = {
    ("plainME", "informativeness", "stp2"): "known not to reproduce",
    ("rankME", "informativeness", "stp2"): "known not to reproduce",
    ("rankME", "quality", "stp2"): "known not to reproduce",
}


def find_data(data_dir: str | Path | None = None) -> Path:
    """The RankME data directory: ``data_dir``, ``$HUMEVAL_SHARED_DATA/rankme``, or ``shared/data/rankme``
    found next to the working directory or the source tree."""
    tried: list[Path] = []
    if data_dir is not None:
        candidates = [Path(data_dir)]
    else:
        candidates = []
        if os.environ.get("HUMEVAL_SHARED_DATA"):
            candidates.append(Path(os.environ["HUMEVAL_SHARED_DATA"]) / "rankme")
        for base in (Path.cwd(), *Path.cwd().parents, *Path(__file__).resolve().parents):
            candidates.append(base / "shared" / "data" / "rankme")
    for path in candidates:
        tried.append(path)
        if (path / "stp1_likert.zip").is_file():
            return path
    raise DataError(
        "reproduce rankme: RankME data not found; set HUMEVAL_SHARED_DATA to the folder holding rankme/ "
        f"(the 12 zips of jeknov/RankME data/). Looked in: {', '.join(str(p) for p in tried[:4])}"
        + (" ..." if len(tried) > 4 else "")
    )


def _cell(data: pd.DataFrame, setup: str, method: str, criterion: str) -> pd.DataFrame:
    cell = data[
        (data["setup"] == setup) & (data["method"] == method) & (data["criterion"] == criterion)
    ]
    if method != "likert":
        cell = cell.assign(score=np.log(cell["score"]))
    return cell


def _icc_matrix(cell: pd.DataFrame) -> np.ndarray:
    """Outputs x judgement slots (NaN-padded where an output has fewer judgements than the most)."""
    ordered = cell.sort_values(["created_at", "judgement", "position"])
    slot = ordered.groupby(["mr_id", "system"]).cumcount()
    return (
        ordered.assign(slot=slot)
        .pivot(index=["mr_id", "system"], columns="slot", values="score")
        .to_numpy()
    )


def _output_means(cell: pd.DataFrame, column: str = "score") -> pd.DataFrame:
    """Outputs (mr_id) x systems table of mean judgement scores."""
    return cell.groupby(["mr_id", "system"])[column].mean().unstack("system")


def table3(data: pd.DataFrame) -> list[Row]:
    rows = []
    raw_results = {}
    for method, criterion, setup in PAPER_TABLE3:
        raw = data[
            (data["setup"] == setup) & (data["method"] == method) & (data["criterion"] == criterion)
        ]
        raw_results[(method, criterion, setup)] = icc(_icc_matrix(raw), "1,k").estimate
    raw_breaks = sum(
        not _matches(raw_results[key], paper) for key, (paper, _) in PAPER_TABLE3.items()
    )
    for (method, criterion, setup), (paper, star) in PAPER_TABLE3.items():
        cell = _cell(data, setup, method, criterion)
        result = icc(_icc_matrix(cell), "1,k")
        ours = round(result.estimate, 3)
        if _matches(result.estimate, paper):
            note = f"match (at 2 decimals, within {TOLERANCE})"
        else:
            note = f"differs by {result.estimate - paper:+.3f}"
            if (method, criterion, setup) in _KNOWN_T3:
                note = f"{_KNOWN_T3[(method, criterion, setup)]}: {note}; " + _diagnose(
                    data, cell, setup
                )
            if method != "likert":
                note += (
                    f"; raw (unlogged) scores give {raw_results[(method, criterion, setup)]:.3f}, but "
                    f"raw scores miss {raw_breaks} of the 18 cells, so the log transform stays for all"
                )
        if (result.p_value < 0.05) != star:
            note += f"; significance differs (ours p = {result.p_value:.3g}, paper {'*' if star else 'no *'})"
        key = f"table3/icc(1,k)/{method}/{criterion}/{SETUPS[setup]}"
        rows.append(Row(key, paper, ours, note))
    return rows


def _diagnose(data: pd.DataFrame, cell: pd.DataFrame, setup: str) -> str:
    """Facts about a cell's job that bear on its ICC: when it ran, how concentrated its workers are."""
    first, last = cell["created_at"].min(), cell["created_at"].max()
    others = data[(data["setup"] == setup) & (data["source"] != cell["source"].iloc[0])]
    starts = (
        others.groupby("source")["created_at"].min().dt.date.astype(str).value_counts().sort_index()
    )
    other_dates = ", ".join(f"{day} ({count})" for day, count in starts.items())
    per_worker = cell.groupby("worker_id")["judgement"].nunique().sort_values(ascending=False)
    top3 = per_worker.iloc[:3].sum() / cell["judgement"].nunique()
    return (
        f"job ran {first:%Y-%m-%d}..{last:%Y-%m-%d}; the other {SETUPS[setup]} jobs started on {other_dates}; "
        f"{per_worker.size} workers, the top 3 gave {top3:.0%} of its judgements; " + _odd_worker(cell, list(per_worker.index[:3]))
    )


def _odd_worker(cell: pd.DataFrame, top: list[str]) -> str:
    """Of the main workers, the one least in line with the others: their share, scores, correlations, and the ICC without them."""
    per_output = cell.groupby(["worker_id", "mr_id", "system"])["score"].mean().unstack("worker_id")
    corr = per_output[top].corr()
    odd = min(top, key=lambda w: corr.loc[w, [o for o in top if o != w]].mean())
    mine = cell[cell["worker_id"] == odd]
    at_max = float((mine["score"] == cell["score"].max()).mean())
    others = ", ".join(f"{corr.loc[odd, o]:.2f}" if pd.notna(corr.loc[odd, o]) else "n/a (no common outputs)"
                       for o in top if o != odd)
    without = icc(_icc_matrix(cell[cell["worker_id"] != odd]), "1,k").estimate
    return (f"worker {odd} gave {len(mine)} of {len(cell)} scores ({at_max:.0%} at the scale's maximum) and correlates "
            f"{others} (per output) with the other main workers; without that worker ICC(1,k) = {without:.3f}")


def table2(data: pd.DataFrame) -> list[Row]:
    rows = []
    for (c1, c2, method, setup), (paper, star) in PAPER_TABLE2.items():
        a = _output_means(_cell(data, setup, method, c1))
        b = _output_means(_cell(data, setup, method, c2))
        a, b = a.stack().sort_index(), b.stack().sort_index()
        result = spearman(a.to_numpy(), b.loc[a.index].to_numpy())
        if _matches(result.estimate, paper):
            note = f"match (at 2 decimals, within {TOLERANCE})"
        else:
            note = f"differs by {result.estimate - paper:+.3f}"
            if (c1, c2) == ("naturalness", "quality") and setup == "stp2":
                alt = _judgement_pairs_rho(data, setup, method, c1, c2)
                note += (
                    f"; pairing individual judgements by arrival order instead of output means gives "
                    f"{alt:+.3f}, so the paper likely used judgement-level pairs for this sub-table only "
                    "(that choice breaks the other setup-2 cells)"
                )
        if (result.p_value < 0.05) != star:
            note += f"; significance differs (ours p = {result.p_value:.3g}, paper {'*' if star else 'no *'})"
        rows.append(
            Row(
                f"table2/spearman/{c1}~{c2}/{method}/{SETUPS[setup]}",
                paper,
                round(result.estimate, 3),
                note,
            )
        )
    return rows


def _judgement_pairs_rho(data: pd.DataFrame, setup: str, method: str, c1: str, c2: str) -> float:
    """Spearman over judgement pairs matched by (output, arrival order): the alternative in the notes."""
    parts = []
    for c in (c1, c2):
        cell = _cell(data, setup, method, c).sort_values(["created_at", "judgement", "position"])
        cell = cell.assign(slot=cell.groupby(["mr_id", "system"]).cumcount())
        parts.append(cell.set_index(["mr_id", "system", "slot"])["score"].rename(c))
    joined = pd.concat(parts, axis=1).dropna()
    return spearman(joined[c1].to_numpy(), joined[c2].to_numpy()).estimate


def _ranges(ranking: Any) -> dict[str, tuple[int, int]]:
    return {SYSTEM_NAMES[s]: ranking.rank_range(s) for s in ranking.systems}


def _paper_label(ranks: dict[str, tuple[int, int]]) -> str:
    groups: dict[tuple[int, int], list[str]] = {}
    for name, rr in sorted(ranks.items(), key=lambda kv: (kv[1], kv[0])):
        groups.setdefault(rr, []).append(name)
    return "; ".join(
        (f"{lo}. " if lo == hi else f"{lo}.-{hi}. ") + " + ".join(names)
        for (lo, hi), names in groups.items()
    )


def table4(data: pd.DataFrame, *, n_boot: int, trueskill_boot: int, seed: int) -> list[Row]:
    rows = []
    stp2 = data[data["setup"] == "stp2"]
    for (method, criterion), paper in PAPER_TABLE4.items():
        if method in ("likert", "plainME", "rankME"):
            ranking = rank_by_scores(
                _output_means(_cell(data, "stp2", method, criterion)), n_boot=n_boot, seed=seed
            )
            how = f"paired bootstrap ({n_boot} samples, 95%)"
        elif method == "checkbox":
            quality = stp2[stp2["criterion"] == "quality"]
            ranking = rank_by_scores(-_output_means(quality, criterion), n_boot=n_boot, seed=seed)
            how = f"share of judgements ticking '{criterion}' (lower is better), paired bootstrap"
        else:
            cell = _cell(data, "stp2", "rankME", criterion)
            battles = battles_from_scores(cell, group="judgement", system="system", score="score")
            ranking = trueskill_ranking(battles, n_boot=trueskill_boot, seed=seed)
            how = f"TrueSkill over {len(battles)} RankME comparisons, rank ranges from {trueskill_boot} bootstrap samples"
        ours = _ranges(ranking)
        note = f"match ({how})" if ours == paper else f"differs ({how})"
        if ranking.method == "paired_bootstrap":
            pairs = ", ".join(
                f"{' > '.join(SYSTEM_NAMES[s] for s in k.split(' > '))}: p={v:.3f}"
                for k, v in ranking.extra["pairs"].items()
            )
            note += f"; one-sided p: {pairs}"
            close = [p for p in ranking.extra["pairs"].values() if 0.025 <= p <= 0.1]
            if close:
                se = max(np.sqrt(p * (1 - p) / n_boot) for p in close)
                note += (
                    f"; borderline: a p-value near 0.05 (Monte-Carlo SE {se:.3f} with {n_boot} samples), "
                    "so this decision can change with the number of bootstrap samples or the seed"
                )
        if method == "checkbox" and ours != paper:
            per_method = []
            for m in ("likert", "plainME", "rankME"):
                sub = stp2[(stp2["criterion"] == "quality") & (stp2["method"] == m)]
                r = rank_by_scores(-_output_means(sub, criterion), n_boot=n_boot, seed=seed)
                per_method.append(f"{m} task alone: {_paper_label(_ranges(r))}")
            note += "; " + "; ".join(per_method)
        rows.append(
            Row(
                f"table4/{method}/{criterion}/setup2", _paper_label(paper), _paper_label(ours), note
            )
        )
    return rows


def rankme(
    *,
    iterations: int | None = None,
    seed: int = 0,
    fast: bool = False,
    data_dir: str | Path | None = None,
) -> Reproduction:
    """Reproduce Tables 2-4 of the RankME paper: one row per published number, paper next to ours.

    ``iterations`` = bootstrap samples for the paired bootstrap (default 1000, ``fast``: 200);
    TrueSkill uses a tenth of them (at least 20) because each sample re-runs the sequential
    TrueSkill updates in Python. ``seed`` seeds every bootstrap. Table 2 and 3 involve no
    randomness, so ``fast`` changes only Table 4's Monte-Carlo precision.
    """
    if iterations is None:
        iterations = 200 if fast else 1000
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 20:
        raise DataError(
            f"reproduce rankme: iterations must be an integer >= 20, got {iterations!r}"
        )
    trueskill_boot = max(20, iterations // 10)
    path = find_data(data_dir)
    data = load_rankme(path)
    rows = (
        table3(data)
        + table2(data)
        + table4(data, n_boot=iterations, trueskill_boot=trueskill_boot, seed=seed)
    )
    return Reproduction(
        "rankme",
        rows,
        {
            "data": str(path),
            "judgements": len(data),
            "seed": seed,
            "paired_bootstrap_samples": iterations,
            "trueskill_bootstrap_samples": trueskill_boot,
            "fast": fast,
            "me_transform": "log",
            "icc": "ICC(1,k), one-way random, all judgements (unbalanced where an output has 4-5)",
            "spearman": "over 300 outputs, mean judgement per output",
            "tolerance": TOLERANCE,
        },
    )
