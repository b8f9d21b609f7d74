"""Automatic judges' scores as data: what a metric or an LLM judge said about each output.

humeval reads what one produced (``data.judges`` in the protocol; ``humeval judge`` writes the file of
a judge with ``llm``: :mod:`humeval.judging`),
checks it against the study's outputs, and hands it to the analysis plan for
prediction-powered estimates (:mod:`humeval.analysis.judges`). Judge files are inputs like
the data files: the lock hashes them (:meth:`humeval.study.StudyFolder.input_files`).

``scores``: one row per output, columns ``item_id``, ``system``, ``score`` (a number).
``verdicts``: one row per item and pair, columns ``item_id``, ``system_a``, ``system_b``,
``winner`` (the name of ``system_a`` or ``system_b``, or ``tie``); read into the outcome
for ``system_a`` (1, 0, 0.5 for a tie).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from humeval.data.readers import read_table, require_columns
from humeval.errors import DataError, did_you_mean
from humeval.protocol.models import Criterion, Judge

__all__ = ["JudgeScores", "read_judge"]

_COLUMNS = {"scores": ("item_id", "system", "score"), "verdicts": ("item_id", "system_a", "system_b", "winner")}


@dataclass(frozen=True)
class JudgeScores:
    """One judge's scores. ``frame``: ``item_id, system, score`` (scores) or ``item_id, system_a,
    system_b, outcome`` (verdicts; ``outcome`` for ``system_a``: 1 win, 0 loss, 0.5 tie)."""

    judge: Judge
    frame: pd.DataFrame

    @property
    def name(self) -> str:
        return self.judge.name

    def fits(self, criterion: Criterion) -> bool:
        """Whether this judge stands in for ``criterion`` (named in ``criteria``, or of the kind's type)."""
        if self.judge.criteria:
            return criterion.name in self.judge.criteria
        return criterion.task.pairwise == (self.judge.kind == "verdicts")

    def scores(self, system: str) -> pd.Series:
        """``item_id -> score`` of one system's outputs (scores)."""
        rows = self.frame[self.frame["system"] == system]
        return pd.Series(rows["score"].to_numpy(float), index=rows["item_id"].to_numpy())

    def outcomes(self, system_a: str, system_b: str) -> pd.Series:
        """``item_id -> outcome for system_a`` against ``system_b`` (verdicts given either way round)."""
        f = self.frame
        ab = f[(f["system_a"] == system_a) & (f["system_b"] == system_b)]
        ba = f[(f["system_a"] == system_b) & (f["system_b"] == system_a)]
        return pd.concat([pd.Series(ab["outcome"].to_numpy(float), index=ab["item_id"].to_numpy()),
                          pd.Series(1 - ba["outcome"].to_numpy(float), index=ba["item_id"].to_numpy())])


def read_judge(judge: Judge, root: Path, items: set[str], systems: list[str]) -> JudgeScores:
    """Read and check ``judge``'s file: the columns of its kind, known items and systems, no duplicates.

    Every problem is a :class:`DataError` naming the file, the row (1-based, after the header)
    and the bad value.
    """
    path = root / judge.file
    frame = read_table(path)
    source = f"{path} (judge '{judge.name}')"
    problems = require_columns(frame, _COLUMNS[judge.kind], source=source)
    if problems:
        raise DataError("\n".join(problems))
    frame = frame[list(_COLUMNS[judge.kind])].copy()
    frame["item_id"] = frame["item_id"].astype(str)
    unknown = ~frame["item_id"].isin(items)
    if unknown.any():
        row = int(np.argmax(unknown.to_numpy()))
        raise DataError(f"{source}: row {row + 1}: item_id {frame['item_id'].iloc[row]!r} is not an item of the data "
                        f"({int(unknown.sum())} such row(s)); judge the study's own items")
    system_columns = ("system",) if judge.kind == "scores" else ("system_a", "system_b")
    for column in system_columns:
        frame[column] = frame[column].astype(str)
        bad = ~frame[column].isin(systems)
        if bad.any():
            value = frame[column][bad].iloc[0]
            raise DataError(f"{source}: {column} {value!r} is not a system of the study. {did_you_mean(value, systems)}")
    if judge.kind == "scores":
        raw = frame["score"]
        frame["score"] = pd.to_numeric(raw, errors="coerce")
        bad = ~np.isfinite(frame["score"].to_numpy(float))
        if bad.any():
            row = int(np.argmax(bad))
            raise DataError(f"{source}: row {row + 1}: score must be a finite number, got {raw.iloc[row]!r}")
        keys = ["item_id", "system"]
    else:
        winner = frame["winner"].astype(str)
        ok = (winner == frame["system_a"]) | (winner == frame["system_b"]) | (winner == "tie")
        if not ok.all():
            row = int(np.argmax(~ok.to_numpy()))
            raise DataError(f"{source}: row {row + 1}: winner {winner.iloc[row]!r} must be system_a "
                            f"({frame['system_a'].iloc[row]!r}), system_b ({frame['system_b'].iloc[row]!r}) or 'tie'")
        frame["outcome"] = np.where(winner == frame["system_a"], 1.0, np.where(winner == "tie", 0.5, 0.0))
        frame = frame.drop(columns="winner")
        keys = ["item_id", "system_a", "system_b"]
    dup = frame.duplicated(keys)
    if dup.any():
        row = int(np.argmax(dup.to_numpy()))
        raise DataError(f"{source}: row {row + 1}: a second row for {tuple(frame[keys].iloc[row])}; "
                        "one judgement per output (or item and pair)")
    return JudgeScores(judge, frame.reset_index(drop=True))
