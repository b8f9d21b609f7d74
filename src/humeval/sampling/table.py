"""The long outputs table as dense (item x system) arrays: what every sampler reads.

A long table has one row per (item, system). Samplers work on items, so the table is
reshaped once into arrays of shape ``(n_items, n_systems)``: output texts, automatic
metric columns (``auto.*``) and human scores (``human.*``). Items keep their order of
first appearance; systems are sorted by name, or kept in their order of first appearance
(``system_order="data"``) for a sampler whose choices depend on it (``casf-faithful``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from humeval.errors import DataError, did_you_mean

__all__ = ["AUTO", "HUMAN", "SYSTEM_ORDERS", "ItemTable", "SystemOrder", "as_item_table", "require_complete_scores"]

AUTO = "auto."
HUMAN = "human."
#: ``sorted``: systems sorted by name; ``data``: systems in their order of first appearance in the long table
SystemOrder = Literal["sorted", "data"]
SYSTEM_ORDERS: tuple[str, ...] = ("sorted", "data")
_EXAMPLES = 5


@dataclass(frozen=True, eq=False)
class ItemTable:
    """Items x systems arrays of one data set.

    ``outputs[i, j]`` is the output of system ``systems[j]`` for item ``item_ids[i]``;
    ``metrics`` and ``human`` map a column name (``auto.x`` / ``human.x``) to a float
    array of the same shape (NaN where the source had no value).
    """

    item_ids: np.ndarray
    systems: list[str]
    outputs: np.ndarray
    metrics: dict[str, np.ndarray] = field(default_factory=dict)
    human: dict[str, np.ndarray] = field(default_factory=dict)
    properties: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    def with_system_order(self, systems: Sequence[str]) -> ItemTable:
        """The same table with its systems (columns of every array) in the order ``systems``."""
        if sorted(map(str, systems)) != sorted(self.systems):
            raise DataError(f"data: system order {list(systems)} does not name the table's systems {self.systems}")
        perm = np.array([self.systems.index(str(s)) for s in systems], dtype=np.int64)
        return ItemTable(
            self.item_ids, [self.systems[j] for j in perm], self.outputs[:, perm],
            {k: v[:, perm] for k, v in self.metrics.items()}, {k: v[:, perm] for k, v in self.human.items()},
            self.properties,
        )

    @classmethod
    def from_long(
        cls, frame: pd.DataFrame, *, item: str = "item_id", system: str = "system", output: str = "output",
        system_order: SystemOrder = "sorted",
    ) -> ItemTable:
        """Reshape a long table; every item needs exactly one row per system.

        Columns starting with ``auto.`` become ``metrics``, ``human.`` become ``human``;
        other columns that are constant within an item become item ``properties``.
        ``system_order``: ``sorted`` (by name) or ``data`` (order of first appearance in ``frame``).
        """
        if system_order not in SYSTEM_ORDERS:
            raise DataError(f"data: unknown system order {system_order!r}. {did_you_mean(str(system_order), SYSTEM_ORDERS)}")
        for col in (item, system, output):
            if col not in frame.columns:
                raise DataError(f"data: missing column '{col}'. {did_you_mean(col, [str(c) for c in frame.columns])}")
        if frame.empty:
            raise DataError("data: the table has no rows")
        item_codes, item_ids = pd.factorize(frame[item].astype(str), sort=False)
        names = frame[system].astype(str)
        systems = list(names.unique()) if system_order == "data" else sorted(names.unique())
        sys_codes = pd.Index(systems).get_indexer(names)
        n, m = len(item_ids), len(systems)
        flat = item_codes * m + sys_codes
        counts = np.bincount(flat, minlength=n * m).reshape(n, m)
        if (counts > 1).any():
            i, j = np.argwhere(counts > 1)[0]
            raise DataError(
                f"data: {int((counts > 1).sum())} (item, system) pair(s) occur more than once, "
                f"e.g. item '{item_ids[i]}' system '{systems[j]}'"
            )
        if (counts == 0).any():
            bad = np.flatnonzero((counts == 0).any(axis=1))
            shown = ", ".join(f"'{item_ids[i]}' ({int(counts[i].sum())} of {m})" for i in bad[:_EXAMPLES])
            raise DataError(
                f"data: {len(bad)} item(s) lack outputs of some systems, e.g. {shown}; every item needs every system"
            )
        outputs = np.empty(n * m, dtype=object)
        outputs[flat] = frame[output].fillna("").astype(str).to_numpy()
        metrics: dict[str, np.ndarray] = {}
        human: dict[str, np.ndarray] = {}
        for col in frame.columns:
            name = str(col)
            if name.startswith((AUTO, HUMAN)):
                values = np.full(n * m, np.nan)
                values[flat] = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float)
                (metrics if name.startswith(AUTO) else human)[name] = values.reshape(n, m)
        first = frame.groupby(item_codes, sort=True).first()
        props = pd.DataFrame(index=range(n))
        skip = {item, system, output}
        for col in frame.columns:
            name = str(col)
            if name in skip or name.startswith((AUTO, HUMAN)) or "." in name:
                continue
            try:
                constant = frame.groupby(item_codes)[col].nunique(dropna=False).max() <= 1
            except TypeError:  # unhashable cells (lists of references)
                continue
            if constant:
                props[name] = first[col].to_numpy()
        return cls(np.asarray(item_ids, dtype=object), systems, outputs.reshape(n, m), metrics, human, props)

    # ----------------------------------------------------------------- look-ups
    def metric(self, name: str) -> np.ndarray:
        """The ``(n_items, n_systems)`` array of metric column ``name`` (``auto.`` prefix optional)."""
        key = name if name.startswith(AUTO) else AUTO + name
        if key not in self.metrics:
            available = sorted(self.metrics) or ["(none: compute them with `humeval metrics`)"]
            raise DataError(f"sampling: unknown metric column '{name}'. {did_you_mean(key, available)}")
        values = self.metrics[key]
        if np.isnan(values).any():
            bad = np.flatnonzero(np.isnan(values).any(axis=1))
            raise DataError(
                f"sampling: metric column '{key}' has no value for {len(bad)} item(s), e.g. "
                + ", ".join(f"'{self.item_ids[i]}'" for i in bad[:_EXAMPLES])
            )
        return values

    def aspects(self, names: Sequence[str] | None = None) -> list[str]:
        """Human-score columns to use: ``names`` (checked) or every ``human.*`` column."""
        if not names:
            if not self.human:
                raise DataError("sampling: the data has no human score columns (human.*)")
            return sorted(self.human)
        out = []
        for name in names:
            key = name if name.startswith(HUMAN) else HUMAN + name
            if key not in self.human:
                raise DataError(f"sampling: unknown human score column '{name}'. {did_you_mean(key, sorted(self.human))}")
            out.append(key)
        return out

    def scores(self, aspects: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        """Human scores ``(len(rows), n_systems, n_aspects)``; every value must be present."""
        idx = np.arange(self.n_items) if rows is None else np.asarray(rows)
        out = np.stack([self.human[a][idx] for a in aspects], axis=-1)
        missing = np.isnan(out)
        if missing.any():
            for k, aspect in enumerate(aspects):
                bad = idx[missing[..., k].any(axis=1)]
                if len(bad):
                    shown = ", ".join(f"'{self.item_ids[i]}'" for i in bad[:_EXAMPLES])
                    raise DataError(
                        f"human scores: aspect '{aspect}' is missing for {len(bad)} item(s), e.g. {shown}; "
                        "every selected item needs a score of every system for every aspect"
                    )
        return out

    def take(self, rows: np.ndarray) -> ItemTable:
        """The sub-table of items ``rows`` (in that order)."""
        rows = np.asarray(rows)
        props = self.properties.iloc[rows].reset_index(drop=True) if len(self.properties.columns) else pd.DataFrame(index=range(len(rows)))
        return ItemTable(
            self.item_ids[rows],
            list(self.systems),
            self.outputs[rows],
            {k: v[rows] for k, v in self.metrics.items()},
            {k: v[rows] for k, v in self.human.items()},
            props,
        )

    def with_metrics(self, metrics: dict[str, np.ndarray]) -> ItemTable:
        """A copy with extra (or replaced) metric columns."""
        merged = dict(self.metrics)
        for key, values in metrics.items():
            if values.shape != self.outputs.shape:
                raise DataError(f"metric '{key}': shape {values.shape} does not match the table {self.outputs.shape}")
            merged[key] = values
        return ItemTable(self.item_ids, self.systems, self.outputs, merged, self.human, self.properties)

    def index_of(self, ids: Sequence[str]) -> np.ndarray:
        """Row positions of item ids (a :class:`DataError` names an unknown id)."""
        pos = pd.Index(self.item_ids).get_indexer(pd.Index([str(i) for i in ids]))
        if (pos < 0).any():
            bad = [str(ids[k]) for k in np.flatnonzero(pos < 0)[:_EXAMPLES]]
            raise DataError(f"item ids not in the data: {', '.join(bad)}")
        return pos


def as_item_table(data: pd.DataFrame | ItemTable, *, system_order: SystemOrder = "sorted") -> ItemTable:
    """Accept a long table (``item_id``, ``system``, ``output`` columns) or an :class:`ItemTable`.

    ``system_order`` applies to a long table (an :class:`ItemTable` is returned as it is).
    """
    if isinstance(data, ItemTable):
        return data
    return ItemTable.from_long(data, system_order=system_order)


def require_complete_scores(table: ItemTable, aspects: Sequence[str] | None = None) -> list[str]:
    """For a replay: every item must have every aspect's score (a :class:`DataError` names the gaps)."""
    names = table.aspects(list(aspects) if aspects else None)
    table.scores(names)
    return names
