"""Item-level quantities derived from metric columns and human scores.

* quality proxy of an item: a metric summed over systems (the CASF preliminary sort key);
* learner features: every metric of every system, one row per item;
* learner target: human scores standardised per aspect, summed over systems and aspects.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from humeval.errors import DataError
from humeval.sampling.table import AUTO, ItemTable

__all__ = [
    "CASF_FEATURES",
    "PRELIMINARY_METRICS",
    "feature_matrix",
    "item_quality",
    "learner_target",
    "mean_length",
    "normalised_quality",
    "preliminary_metric",
    "resolve_features",
    "zscore",
]

#: the 8 automatic metrics of the CASF paper, in the authors' order
CASF_FEATURES = (
    "auto.bert_score_f",
    "auto.mover_score",
    "auto.rouge1_f",
    "auto.rouge2_f",
    "auto.rougel_f",
    "auto.bart_score_avg_f",
    "auto.BLEU_4",
    "auto.METEOR",
)
#: preferred preliminary metric, first available wins (MoverScore as in the paper, then METEOR)
PRELIMINARY_METRICS = ("auto.mover_score", "auto.METEOR", "auto.meteor", "auto.chrf", "auto.rougeL", "auto.length")


def zscore(values: np.ndarray, axis: int | None = None) -> np.ndarray:
    """``(x - mean) / sd`` (population sd); a constant input gives zeros, not NaN."""
    mean = values.mean(axis=axis, keepdims=True)
    sd = values.std(axis=axis, keepdims=True)
    return np.divide(values - mean, sd, out=np.zeros_like(values, dtype=float), where=sd > 0)


def resolve_features(table: ItemTable, names: Sequence[str] | None = None) -> list[str]:
    """The metric columns a learner uses: ``names`` (checked), the CASF 8, or every ``auto.*`` column."""
    if names:
        for name in names:
            table.metric(name)  # raises with "did you mean" for an unknown column
        return [n if n.startswith(AUTO) else AUTO + n for n in names]
    if all(f in table.metrics for f in CASF_FEATURES):
        return list(CASF_FEATURES)
    if not table.metrics:
        raise DataError(
            "sampling: the data has no metric columns (auto.*); compute them with `humeval metrics` "
            "or pass --compute-metrics"
        )
    return sorted(table.metrics)


def preliminary_metric(table: ItemTable, name: str | None = None) -> str:
    """The metric that sorts items before any human score exists."""
    if name:
        table.metric(name)
        return name if name.startswith(AUTO) else AUTO + name
    for candidate in PRELIMINARY_METRICS:
        if candidate in table.metrics:
            return candidate
    return resolve_features(table)[0]


def item_quality(table: ItemTable, metric: str) -> np.ndarray:
    """Quality proxy per item: ``metric`` summed over systems."""
    return table.metric(metric).sum(axis=1)


def normalised_quality(table: ItemTable, metrics: Sequence[str]) -> np.ndarray:
    """Per item: the mean over ``metrics`` of each metric z-scored over all outputs, summed over systems."""
    stacked = np.stack([zscore(table.metric(m)) for m in metrics], axis=-1)
    return stacked.mean(axis=-1).sum(axis=1)


def feature_matrix(table: ItemTable, metrics: Sequence[str]) -> np.ndarray:
    """``(n_items, n_systems * n_metrics)``: every metric of every system."""
    return np.concatenate([table.metric(m) for m in metrics], axis=1)


def learner_target(scores: np.ndarray) -> np.ndarray:
    """Human scores ``(n, n_systems, n_aspects)`` -> one target per item.

    Each aspect is z-scored over all collected (item, system) scores, then the values are
    summed over systems and aspects (the CASF learner target).
    """
    n, m, k = scores.shape
    standard = zscore(scores.reshape(n * m, k), axis=0).reshape(n, m, k)
    return standard.sum(axis=(1, 2))


def mean_length(table: ItemTable) -> np.ndarray:
    """Mean output length in whitespace tokens per item (vectorised over the text array)."""
    flat = table.outputs.ravel()
    counts = np.fromiter((len(t.split()) for t in flat), dtype=float, count=flat.size)
    return counts.reshape(table.outputs.shape).mean(axis=1)
