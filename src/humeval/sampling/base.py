"""What every sampler is and returns.

A sampler selects items in one or more *phases*. :meth:`Sampler.plan` splits the
requested size into phase sizes; :meth:`Sampler.choose` selects the items of one phase
given the items chosen before and the human scores collected on them (``None`` for
samplers that never look at human scores). :func:`run_phases` runs every phase with
scores from a data set (replay) and :meth:`Sampler.select` is the one-call form.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias
from typing import Protocol as TypingProtocol

from humeval.errors import DataError

if TYPE_CHECKING:  # NumPy and pandas: imported where a selection runs, not where a sampler is named
    import numpy as np
    import pandas as pd

    from humeval.sampling.table import ItemTable, SystemOrder

__all__ = [
    "PhaseScores",
    "Sampler",
    "SamplerBase",
    "Selection",
    "check_rate",
    "phase_loop",
    "run_phases",
    "sample_size",
    "to_selection",
]

#: human scores of chosen items: ``(n_chosen, n_systems, n_aspects)``, rows in ``chosen`` order
PhaseScores: TypeAlias = "np.ndarray"


@dataclass(frozen=True)
class Selection:
    """Selected item ids in selection order, with the phase each was selected in (0 = first)."""

    item_ids: list[str]
    phases: list[int]

    def to_json(self) -> dict[str, list]:
        return {"selected": list(self.item_ids), "phases": list(self.phases)}


class Sampler(TypingProtocol):
    """A subset-selection strategy (a small dataclass holding its parameters)."""

    name: str
    #: whether phases after the first need human scores of the items chosen before
    needs_scores: bool
    @property
    def needs_metrics(self) -> bool:
        """Whether the sampler reads metric columns (``auto.*``)."""

    @property
    def system_order(self) -> SystemOrder:
        """Order of the table's systems: ``sorted`` by name, or ``data`` (first appearance) where ties or sums
        depend on it (``casf-faithful``, as the authors' code reads the data)."""

    def plan(self, size: int, n_items: int) -> list[int]:
        """Number of items chosen in each phase (sums to ``size``)."""
        ...

    def choose(
        self, table: ItemTable, phase: int, n: int, chosen: np.ndarray, scores: PhaseScores | None, seed: int
    ) -> np.ndarray:
        """Row positions of the ``n`` items chosen in ``phase`` (never one of ``chosen``)."""
        ...

    def select(self, outputs: pd.DataFrame | ItemTable, size: int, seed: int) -> Selection:
        """Every phase at once (human scores, if needed, come from the table's ``human.*`` columns)."""
        ...


def check_rate(rate: float, *, where: str = "sampling.rate") -> float:
    """``rate`` if it lies in (0, 1]; otherwise a :class:`DataError` naming it."""
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1 or math.isnan(rate):
        raise DataError(f"{where}: the sampling rate must be in (0, 1], got {rate!r}")
    return float(rate)


def sample_size(n_items: int, rate: float) -> int:
    """Number of items a rate selects: ``rate * n`` rounded half up, at least 1."""
    check_rate(rate)
    if n_items < 1:
        raise DataError("sampling: there are no items to select from")
    return max(1, min(n_items, math.floor(rate * n_items + 0.5)))


#: human scores of the given rows, or None when they are not (all) collected yet
ScoreSource: TypeAlias = "Callable[[np.ndarray], PhaseScores | None]"


def run_phases(
    sampler: Sampler,
    table: ItemTable,
    size: int,
    seed: int,
    scores: ScoreSource | None = None,
    *,
    phases: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Run the first ``phases`` phases (all by default); return (rows in selection order, phase of each).

    ``scores(rows)`` returns the human scores of ``rows`` (``n, n_systems, n_aspects``);
    it is called before every phase after the first when the sampler needs scores.
    """
    rows, phase_of, waiting = phase_loop(sampler, table, size, seed, scores, phases=phases)
    if waiting:
        raise DataError(
            f"sampler '{sampler.name}': phase {int(phase_of.max()) + 1} needs human scores of the items chosen so far"
        )
    return rows, phase_of


def phase_loop(
    sampler: Sampler,
    table: ItemTable,
    size: int,
    seed: int,
    scores: ScoreSource | None,
    *,
    phases: int | None = None,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """The one loop over phases: (rows, phase of each, whether it stopped waiting for scores).

    It stops before the first phase whose scores ``scores`` cannot give (no source, or the
    source returns None).
    """
    import numpy as np

    if not 1 <= size <= table.n_items:
        raise DataError(f"sampling: cannot select {size} of {table.n_items} items")
    plan = sampler.plan(size, table.n_items)
    chosen = np.empty(0, dtype=np.int64)
    phase_of = np.empty(0, dtype=np.int64)
    for phase, n in enumerate(plan[: phases if phases is not None else len(plan)]):
        known = None
        if sampler.needs_scores and phase > 0:
            known = scores(chosen) if scores is not None else None
            if known is None:
                return chosen, phase_of, True
        new = np.asarray(sampler.choose(table, phase, n, chosen, known, seed), dtype=np.int64)
        if len(new) != n or len(np.unique(new)) != n or np.isin(new, chosen).any():
            raise RuntimeError(f"sampler '{sampler.name}' phase {phase}: returned an invalid choice")  # a bug
        chosen = np.concatenate([chosen, new])
        phase_of = np.concatenate([phase_of, np.full(n, phase)])
    return chosen, phase_of, False


def to_selection(table: ItemTable, rows: np.ndarray, phases: np.ndarray) -> Selection:
    """Rows and phases as a :class:`Selection` of item ids."""
    return Selection([str(i) for i in table.item_ids[rows]], [int(p) for p in phases])


class SamplerBase:
    """Defaults for single-phase samplers that never look at human scores.

    Subclasses (dataclasses) set ``name`` and implement :meth:`choose`.
    """

    name: str = "base"
    needs_scores: bool = False
    #: whether the sampler reads metric columns (``auto.*``); they are computed when missing
    needs_metrics: ClassVar[bool] = False
    #: order of the systems in the table read from a long table (``sorted`` | ``data``)
    system_order: ClassVar[SystemOrder] = "sorted"
    #: human aspects the learner uses (empty: all ``human.*`` columns); samplers with scores only
    aspects: tuple[str, ...] = ()

    def plan(self, size: int, n_items: int) -> list[int]:
        return [size]

    def choose(
        self, table: ItemTable, phase: int, n: int, chosen: np.ndarray, scores: PhaseScores | None, seed: int
    ) -> np.ndarray:
        raise NotImplementedError

    def select(self, outputs: pd.DataFrame | ItemTable, size: int, seed: int) -> Selection:
        """Every phase; human scores (if the sampler needs them) are replayed from ``human.*`` columns."""
        from humeval.sampling.table import as_item_table, require_complete_scores

        table = as_item_table(outputs, system_order=self.system_order)
        source = None
        if self.needs_scores:
            aspects = require_complete_scores(table, list(self.aspects) or None)
            def source(rows: Any) -> Any:
                return table.scores(aspects, rows)
        rows, phases = run_phases(self, table, size, seed, source)
        return to_selection(table, rows, phases)
