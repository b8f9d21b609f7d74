"""CASF: constrained active sampling (Ruan et al., AAAI 2024) and its ablations.

Phase 0 (preliminary) sorts the items by an automatic metric summed over systems (or,
for ``8m``, by the mean of z-scored metrics) and picks systematically. Each later phase
refits a gradient-boosted regressor on every human score collected so far (each aspect
z-scored, summed over aspects and systems), predicts the quality of the remaining items
with **the new model**, sorts them by it, cuts the ranked list into as many buckets as
items are wanted, and lets the constrained controller pick one item per bucket.

Ablations (the paper's names): ``sm`` = preliminary phase only on one metric; ``8m`` =
preliminary phase only on the mean of normalised metrics; ``ol`` = CASF without the
controller (the initial pick of every bucket is taken).

Differences from the authors' code (see docs/sampling.md): the learner's new predictions
sort every batch phase; redundancy is a *similarity* (Dice) with a threshold; the
preliminary sort is an exact sort.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np
import scipy.sparse as sp

from humeval.errors import DataError
from humeval.sampling.base import PhaseScores, SamplerBase
from humeval.sampling.controller import control
from humeval.sampling.features import (
    feature_matrix,
    item_quality,
    learner_target,
    normalised_quality,
    preliminary_metric,
    resolve_features,
)
from humeval.sampling.redundancy import DEFAULT_THRESHOLD, bigram_matrix, similar_pairs
from humeval.sampling.simple import remaining
from humeval.sampling.table import ItemTable

if TYPE_CHECKING:
    from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor

__all__ = ["CASFSampler", "EightMetricSampler", "OnlineSampler", "SingleMetricSampler", "split_phases"]

#: training rows from which the learner switches to histogram-based gradient boosting
HIST_FROM = 1000
_GRAPHS: weakref.WeakKeyDictionary[ItemTable, dict[float, sp.csr_matrix]] = weakref.WeakKeyDictionary()


def split_phases(size: int, phases: int, n_items: int) -> list[int]:
    """``size`` items over ``phases`` phases as evenly as possible (earlier phases get the remainder)."""
    if isinstance(phases, bool) or not isinstance(phases, int) or phases < 1:
        raise DataError(f"sampling.params.phases: must be a whole number >= 1, got {phases!r}")
    if n_items < phases:
        raise DataError(
            f"sampling: {n_items} item(s) cannot fill {phases} phases; use params.phases <= {n_items}"
        )
    if size < phases:
        raise DataError(
            f"sampling: {size} selected item(s) cannot be split into {phases} phases (each phase needs at least one); "
            f"raise the rate or use params.phases <= {size}"
        )
    base, extra = divmod(size, phases)
    return [base + (1 if p < extra else 0) for p in range(phases)]


def redundancy_graph(table: ItemTable, threshold: float) -> sp.csr_matrix:
    """Pairs of redundant items of ``table`` (computed once per table and threshold)."""
    cache = _GRAPHS.setdefault(table, {})
    if threshold not in cache:
        cache[threshold] = similar_pairs(bigram_matrix(table.outputs), threshold)
    return cache[threshold]


@dataclass(frozen=True)
class CASFSampler(SamplerBase):
    """Constrained active sampling.

    Parameters: ``phases`` (preliminary + batch phases, default 5: 10 % each at a 50 % rate);
    ``metric`` (preliminary sort key; default MoverScore when stored, else METEOR, ...);
    ``features`` (learner inputs; default the paper's 8 metrics when stored, else every
    ``auto.*`` column); ``aspects`` (human columns of the learner target; default all);
    ``controller`` (apply the constrained controller); ``redundancy_threshold`` (Dice at or
    above which two items are redundant); ``start`` (initial pick inside a bucket: ``first``
    as in the paper, or ``middle``); ``preliminary`` (``metric`` or ``mean`` of normalised
    features); GBDT settings ``n_estimators``, ``learning_rate``, ``max_depth`` (least squares;
    scikit-learn's ``GradientBoostingRegressor`` below 1 000 training items, the histogram-based
    ``HistGradientBoostingRegressor`` from 1 000 on, so that 100k-item data sets stay fast).
    """

    name: str = "casf"
    needs_metrics: ClassVar[bool] = True
    phases: int = 5
    metric: str | None = None
    features: tuple[str, ...] = ()
    aspects: tuple[str, ...] = ()
    controller: bool = True
    redundancy_threshold: float = DEFAULT_THRESHOLD
    start: Literal["first", "middle"] = "first"
    preliminary: Literal["metric", "mean"] = "metric"
    n_estimators: int = 100
    learning_rate: float = 0.1
    max_depth: int = 3

    def __post_init__(self) -> None:
        if self.start not in ("first", "middle"):
            raise DataError(f"sampling.params.start: must be 'first' or 'middle', got {self.start!r}")
        if self.preliminary not in ("metric", "mean"):
            raise DataError(f"sampling.params.preliminary: must be 'metric' or 'mean', got {self.preliminary!r}")
        if not 0 < self.redundancy_threshold <= 1:
            raise DataError(
                f"sampling.params.redundancy_threshold: must be in (0, 1], got {self.redundancy_threshold!r}"
            )
        object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "aspects", tuple(self.aspects))

    @property
    def needs_scores(self) -> bool:  # type: ignore[override]
        return self.phases > 1

    def plan(self, size: int, n_items: int) -> list[int]:
        return split_phases(size, self.phases, n_items)

    def quality(
        self, table: ItemTable, phase: int, chosen: np.ndarray, scores: PhaseScores | None, seed: int,
        rows: np.ndarray | None = None,
    ) -> np.ndarray:
        """Predicted quality of the items ``rows`` (default: every item) in this phase (higher first)."""
        rows = np.arange(table.n_items) if rows is None else rows
        if phase == 0:
            if self.preliminary == "mean":
                return normalised_quality(table, resolve_features(table, self.features or None))[rows]
            return item_quality(table, preliminary_metric(table, self.metric))[rows]
        if scores is None or len(scores) != len(chosen):
            raise DataError(f"casf phase {phase}: human scores of the {len(chosen)} chosen items are required")
        from threadpoolctl import threadpool_limits  # imported here: it sets KMP_DUPLICATE_LIB_OK

        x = feature_matrix(table, resolve_features(table, self.features or None))
        model = self.learner(len(chosen), seed)
        # one OpenMP thread: the trees are small, and spinning threads on a busy machine cost far more
        with threadpool_limits(limits=1, user_api="openmp"):
            model.fit(x[chosen], learner_target(scores))
            # only the rows asked for, column after column: each tree reads a few features of every row
            # (in row order, three times slower), and prediction is most of a phase's time
            return model.predict(np.asfortranarray(x[rows]))

    def learner(self, n_train: int, seed: int) -> GradientBoostingRegressor | HistGradientBoostingRegressor:
        """The GBDT regressor (least squares): exact splits below ``HIST_FROM`` training items, histograms above."""
        # imported here: importing scikit-learn sets KMP_INIT_AT_FORK and draws from the global
        # random module, which importing humeval must not do
        from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor

        if n_train < HIST_FROM:
            return GradientBoostingRegressor(
                n_estimators=self.n_estimators, learning_rate=self.learning_rate, max_depth=self.max_depth,
                random_state=seed,
            )
        return HistGradientBoostingRegressor(
            max_iter=self.n_estimators, learning_rate=self.learning_rate, max_depth=self.max_depth,
            early_stopping=False, random_state=seed,
        )

    def choose(
        self, table: ItemTable, phase: int, n: int, chosen: np.ndarray, scores: PhaseScores | None, seed: int
    ) -> np.ndarray:
        pool = remaining(table.n_items, chosen)
        quality = self.quality(table, phase, chosen, scores, seed, pool)
        order = pool[np.argsort(-quality, kind="stable")]
        width = len(order) // n
        offset = 0 if self.start == "first" else (width - 1) // 2
        if not self.controller or phase == 0:
            return order[np.arange(n) * width + offset]
        selected = np.zeros(table.n_items, dtype=bool)
        selected[chosen] = True
        graph = redundancy_graph(table, self.redundancy_threshold)
        return control(order, n, width, offset, graph, selected, self.redundancy_threshold)


@dataclass(frozen=True)
class SingleMetricSampler(CASFSampler):
    """``sm``: the preliminary phase only, on one metric (CASF ablation)."""

    name: str = "sm"
    phases: int = 1


@dataclass(frozen=True)
class EightMetricSampler(CASFSampler):
    """``8m``: the preliminary phase only, on the mean of the normalised metrics (CASF ablation)."""

    name: str = "8m"
    phases: int = 1
    preliminary: Literal["metric", "mean"] = "mean"


@dataclass(frozen=True)
class OnlineSampler(CASFSampler):
    """``ol``: CASF without the constrained controller (CASF ablation)."""

    name: str = "ol"
    controller: bool = False
