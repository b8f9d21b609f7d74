"""Error spans (ESA/MQM): error counts, the MQM-style weighted error score, and span agreement.

Input: the long judgements table's rows of one ``esa`` criterion, with ``spans`` a JSON list of
``{"start", "end", "severity"}`` (character offsets, end exclusive) per judgement.

* :func:`error_counts`: minor and major errors and marked characters per judgement.
* :func:`error_scores`: per system, the mean number of minor and major errors per output and
  the weighted error score ``w_minor * minor + w_major * major`` (MQM-style penalty; lower is
  better; Freitag et al. 2021 weigh minor 1, major 5), each with a percentile bootstrap
  interval over judgements (resampled within the system). Counts are never negative, so the
  percentile interval stays inside ``[0, inf)``.
* :func:`span_agreement`: for every output judged by two or more participants, every pair of
  participants' marked characters (severity ignored) compared by F1 = 2|A∩B| / (|A| + |B|)
  (Dice); pairs where neither marked anything are left out (they agree on "no error" and are
  counted in ``n_both_clean``). The estimate is the mean over pairs; its interval resamples
  outputs (cluster bootstrap). Severity agreement on overlapping characters is reported as
  the share of overlapping characters given the same severity by both.

All of it is vectorised (spans exploded into one row each, pairs by a self-merge per output).
Checked against: hand-computed cases in ``tests/unit/stats/test_spans.py``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from humeval.rng import Seed, as_generator
from humeval.stats._bootstrap import no_interval, percentile_ci, resample_weights
from humeval.stats._result import Estimate

__all__ = ["error_counts", "error_scores", "explode_spans", "span_agreement"]


def explode_spans(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per span: the judgement's index (``row``), ``start``, ``end``, ``severity``.

    Examples:
        >>> import pandas as pd
        >>> from humeval.stats.spans import explode_spans
        >>> two = '[{"start": 0, "end": 4, "severity": "minor"}, {"start": 9, "end": 12, "severity": "major"}]'
        >>> frame = pd.DataFrame({"spans": [two, "[]"]})
        >>> explode_spans(frame)
           row  start  end severity
        0    0      0    4    minor
        1    0      9   12    major
    """
    parsed = frame["spans"].fillna("").map(lambda s: json.loads(s) if s else [])
    flat = parsed.explode().dropna()
    if flat.empty:
        return pd.DataFrame({"row": pd.Series(dtype=int), "start": pd.Series(dtype=int),
                             "end": pd.Series(dtype=int), "severity": pd.Series(dtype=str)})
    spans = pd.DataFrame(flat.tolist(), index=flat.index)
    return pd.DataFrame({"row": flat.index, "start": spans["start"].astype(int).to_numpy(),
                         "end": spans["end"].astype(int).to_numpy(), "severity": spans["severity"].astype(str).to_numpy()})


def error_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """``minor``, ``major`` (error counts) and ``chars`` (marked characters) per judgement (``frame``'s index).

    Examples:
        >>> import pandas as pd
        >>> from humeval.stats.spans import error_counts
        >>> two = '[{"start": 0, "end": 4, "severity": "minor"}, {"start": 9, "end": 12, "severity": "major"}]'
        >>> frame = pd.DataFrame({"spans": [two, "[]"]})
        >>> error_counts(frame)  # chars: 4 + 3 marked characters
           minor  major  chars
        0      1      1      7
        1      0      0      0
    """
    spans = explode_spans(frame)
    out = pd.DataFrame(0, index=frame.index, columns=["minor", "major", "chars"])
    if not spans.empty:
        by = spans.assign(minor=spans["severity"] == "minor", major=spans["severity"] == "major",
                          chars=spans["end"] - spans["start"]).groupby("row")[["minor", "major", "chars"]].sum()
        out.loc[by.index, ["minor", "major", "chars"]] = by.to_numpy()
    return out.astype(int)


def error_scores(frame: pd.DataFrame, systems: list[str], *, minor_weight: float = 1.0, major_weight: float = 5.0,
                 seed: Seed, n_boot: int = 2000, confidence_level: float = 0.95,
                 weighted: np.ndarray | None = None) -> list[dict[str, Any]]:
    """Per system: errors per output (minor, major) and the weighted error score, with bootstrap intervals.

    ``weighted``: each judgement's weighted error score when the task type weighs its errors otherwise (an MQM
    score: by category and severity); by default ``minor_weight * minor + major_weight * major``.

    Examples:
        >>> import pandas as pd
        >>> from humeval.stats.spans import error_scores
        >>> minor, major = '{"start": 0, "end": 4, "severity": "minor"}', '{"start": 5, "end": 9, "severity": "major"}'
        >>> frame = pd.DataFrame({"system": ["A", "A", "B", "B"],
        ...                       "spans": [f"[{minor}]", f"[{minor}, {major}]", "[]", f"[{minor}]"]})
        >>> rows = error_scores(frame, ["A", "B"], seed=0, n_boot=200)
        >>> # A: minor errors 1 and 1, major 0 and 1: (1 + 1) / 2 minor, (0 + 1) / 2 major, weighted 1 + 5 x 0.5 = 3.5
        >>> [(r["system"], r["minor"].estimate, r["major"].estimate, r["weighted"].estimate) for r in rows]
        [('A', 1.0, 0.5, 3.5), ('B', 0.5, 0.0, 0.5)]
    """
    counts = error_counts(frame)
    if weighted is None:
        weighted = (minor_weight * counts["minor"] + major_weight * counts["major"]).to_numpy(float)
    rng = as_generator(seed)
    out = []
    for system in systems:
        mask = (frame["system"] == system).to_numpy()
        n = int(mask.sum())
        if n == 0:
            continue
        values = np.column_stack([counts["minor"].to_numpy()[mask], counts["major"].to_numpy()[mask],
                                  np.asarray(weighted, dtype=float)[mask]]).astype(float)
        boots = np.vstack([w @ values / n for w in resample_weights(rng, n, n_boot)])
        row: dict[str, Any] = {"system": system, "n": n}
        for j, name in enumerate(("minor", "major", "weighted")):
            mean = float(values[:, j].mean())
            low, high, _, reason = percentile_ci(boots[:, j], confidence_level, mean)
            row[name] = Estimate(mean, low, high, n=n, method="mean, percentile bootstrap",
                                 extra={"n_boot": n_boot} | no_interval(reason))
        row["outputs_with_errors"] = int(((values[:, 0] + values[:, 1]) > 0).sum())
        out.append(row)
    return out


def _pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """Every pair of judgements of the same output (item, system) by different participants."""
    units = frame.assign(row=frame.index)[["item_id", "system", "participant_id", "row"]]
    pairs = units.merge(units, on=["item_id", "system"], suffixes=("_a", "_b"))
    return pairs[pairs["participant_id_a"] < pairs["participant_id_b"]].reset_index(drop=True)


def span_agreement(frame: pd.DataFrame, *, seed: Seed, n_boot: int = 2000,
                   confidence_level: float = 0.95) -> Estimate:
    """Mean pairwise character-level F1 of the marked spans, over pairs where at least one marked an error.

    Examples:
        >>> import pandas as pd
        >>> from humeval.stats.spans import span_agreement
        >>> # one output, two participants: characters 0-9 and 5-9 marked, F1 = 2 x 5 / (10 + 5)
        >>> frame = pd.DataFrame({"item_id": ["i1", "i1"], "system": ["A", "A"], "participant_id": ["p1", "p2"],
        ...                       "spans": ['[{"start": 0, "end": 10, "severity": "major"}]',
        ...                                 '[{"start": 5, "end": 10, "severity": "minor"}]']})
        >>> r = span_agreement(frame, seed=0, n_boot=100)
        >>> round(r.estimate, 4), round(2 * 5 / 15, 4), r.extra["severity_agreement"]
        (0.6667, 0.6667, 0.0)
    """
    pairs = _pairs(frame)
    chars = error_counts(frame)["chars"]
    spans = explode_spans(frame)
    if pairs.empty:
        return Estimate(float("nan"), n=0, method="pairwise span F1 (characters)",
                        extra={"undefined": "no output was judged by two participants"})
    # overlap of every span of judgement a with every span of judgement b, per pair (intervals are disjoint within a judgement)
    cross = (pairs.reset_index().rename(columns={"index": "pair"})
             .merge(spans.add_suffix("_a"), left_on="row_a", right_on="row_a")
             .merge(spans.add_suffix("_b"), left_on="row_b", right_on="row_b"))
    inter = (np.minimum(cross["end_a"], cross["end_b"]) - np.maximum(cross["start_a"], cross["start_b"])).clip(lower=0)
    overlap = pd.Series(inter.to_numpy(), index=cross["pair"]).groupby(level=0).sum().reindex(pairs.index, fill_value=0)
    same = pd.Series((inter * (cross["severity_a"] == cross["severity_b"])).to_numpy(), index=cross["pair"])
    same_chars = float(same.sum())
    size = chars.loc[pairs["row_a"]].to_numpy() + chars.loc[pairs["row_b"]].to_numpy()
    marked = size > 0
    f1 = np.where(marked, 2.0 * overlap.to_numpy() / np.where(marked, size, 1), np.nan)
    kept = pairs[marked].assign(f1=f1[marked])
    n_clean = int((~marked).sum())
    if kept.empty:
        return Estimate(float("nan"), n=0, method="pairwise span F1 (characters)",
                        extra={"undefined": "no pair of judgements marked any error", "n_both_clean": n_clean})
    unit = kept.groupby(["item_id", "system"], sort=False)["f1"].agg(["sum", "count"])
    sums, cnts = unit["sum"].to_numpy(), unit["count"].to_numpy(dtype=float)
    boots = np.concatenate([(w @ sums) / np.maximum(w @ cnts, 1e-300)
                            for w in resample_weights(as_generator(seed), len(unit), n_boot)])
    f1_mean = float(kept["f1"].mean())
    low, high, _, reason = percentile_ci(boots, confidence_level, f1_mean)
    total = float(overlap.sum())
    return Estimate(f1_mean, low, high, n=len(kept), method="pairwise span F1 (characters)",
                    extra={"outputs": len(unit), "n_both_clean": n_clean, "n_boot": n_boot,
                           "severity_agreement": same_chars / total if total else float("nan")}
                    | no_interval(reason))
