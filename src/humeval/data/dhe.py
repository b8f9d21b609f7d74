"""Importer for the AMT batch-result CSVs of the Dynamic Human Evaluation study.

One row of an AMT "batch results" export is one worker's judgement of one sentence pair:
``Input.id`` (pair), ``WorkerId``, ``Input.model1`` / ``Input.model2`` (the models that
produced Sentence A / Sentence B; the side is randomised per pair) and
``Answer.Selection.label`` ("Sentence A" or "Sentence B", a *position*). The chosen model
is ``Input.model1`` for "Sentence A" and ``Input.model2`` for "Sentence B".

Data card: ../shared/data/dhe/README.md (no licence stated: read it in place, never copy
it into the package). WorkerId is personal data: :func:`read_amt_batch` hashes it.
Checked against: the data card's derived facts (share of answers for CGA 0.875 / 0.597 /
0.623) in tests/unit/simulate/test_dhe_data.py.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from humeval.errors import DataError

__all__ = ["DHE_BATCHES", "MODEL_NAMES", "REQUIRED_COLUMNS", "AmtBatch", "read_amt_batch", "read_amt_csv", "read_dhe_batch"]

REQUIRED_COLUMNS = ("Input.id", "WorkerId", "Input.model1", "Input.model2", "Answer.Selection.label")
POSITIONS = ("Sentence A", "Sentence B")

#: checkpoint name -> model (from the data card)
MODEL_NAMES = {
    "2021-Apr-27-09:53:10_6000_1": "CGA",
    "2021-Apr-30-09:22:17_6000_1": "V1",
    "2021-Apr-26-12:28:06_6000_1": "V2",
}

#: the paper's three comparisons -> batch file
DHE_BATCHES = {
    "v1": "Batch_4444974_batch_results.csv",
    "r1": "Batch_4447602_batch_results.csv",
    "r2": "Batch_4483006_batch_results.csv",
}


@dataclass(frozen=True)
class AmtBatch:
    """One AMT batch in long form: ``pair, worker, position (A/B), model1, model2, chosen``.

    ``first_model1`` is the ``Input.model1`` of the file's first row (the orientation the
    authors' analysis called "model1").
    """

    name: str
    frame: pd.DataFrame
    first_model1: str

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.frame["model1"]) | set(self.frame["model2"])))

    @property
    def pairs(self) -> np.ndarray:
        """Pair ids in ascending order (the order of the authors' analysis)."""
        return np.sort(self.frame["pair"].unique())

    def _matrix(self, values: pd.Series) -> np.ndarray:
        f = self.frame.assign(_v=values.to_numpy())
        f = f.sort_values(["pair", "worker"], kind="stable")
        counts = f.groupby("pair", sort=True).size()
        if counts.nunique() != 1:
            raise DataError(
                f"{self.name}: pairs have different numbers of answers ({counts.min()}..{counts.max()}); "
                "resampling needs the same number per pair"
            )
        return f["_v"].to_numpy().reshape(len(counts), int(counts.iloc[0]))

    def votes_for(self, model: str) -> np.ndarray:
        """(pairs, answers) matrix: 1 where the answer chose ``model`` (pairs ascending)."""
        if model not in self.models:
            raise DataError(f"{self.name}: model {model!r} not in this batch. Available: {', '.join(self.models)}")
        return self._matrix((self.frame["chosen"] == model).astype(np.int8))

    def position_votes(self) -> np.ndarray:
        """(pairs, answers) matrix: 1 where the answer was "Sentence A"."""
        return self._matrix((self.frame["position"] == "A").astype(np.int8))


def read_amt_csv(path: str | Path, columns: tuple[str, ...] | None = None) -> pd.DataFrame:
    """An AMT batch-results CSV as text cells (only ``columns``, when given); errors name the file."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: AMT batch file not found")
    try:
        return pd.read_csv(p, dtype=str, keep_default_na=False,
                           usecols=None if columns is None else (lambda c: c in columns))
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"{p}: not a readable CSV file ({exc})") from None


def read_amt_batch(path: str | Path) -> AmtBatch:
    """Read and validate an AMT batch CSV; errors name the file and what is missing."""
    p = Path(path)
    raw = read_amt_csv(p)
    missing = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if missing:
        raise DataError(
            f"{p}: AMT batch CSV is missing column(s) {', '.join(missing)}; required: {', '.join(REQUIRED_COLUMNS)}"
        )
    if raw.empty:
        raise DataError(f"{p}: AMT batch CSV has no rows")
    label = raw["Answer.Selection.label"]
    bad = ~label.isin(POSITIONS)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0]) + 2
        raise DataError(
            f"{p}:{row}: Answer.Selection.label is {label[bad].iloc[0]!r}; expected 'Sentence A' or 'Sentence B' "
            f"({int(bad.sum())} such rows)"
        )
    pair = pd.to_numeric(raw["Input.id"], errors="coerce")
    if pair.isna().any():
        row = int(np.flatnonzero(pair.isna().to_numpy())[0]) + 2
        raise DataError(f"{p}:{row}: Input.id {raw['Input.id'][pair.isna()].iloc[0]!r} is not an integer pair id")
    pos = np.where(label == "Sentence A", "A", "B")
    chosen = np.where(pos == "A", raw["Input.model1"], raw["Input.model2"])
    worker = raw["WorkerId"].map(lambda w: hashlib.sha256(w.encode()).hexdigest()[:12])
    frame = pd.DataFrame({
        "pair": pair.astype(np.int64).to_numpy(),
        "worker": worker.to_numpy(),
        "position": pos,
        "model1": raw["Input.model1"].map(lambda m: MODEL_NAMES.get(m, m)).to_numpy(),
        "model2": raw["Input.model2"].map(lambda m: MODEL_NAMES.get(m, m)).to_numpy(),
    })
    frame["chosen"] = pd.Series(chosen).map(lambda m: MODEL_NAMES.get(m, m)).to_numpy()
    dup = frame.duplicated(["pair", "worker"])
    if dup.any():
        raise DataError(f"{p}: {int(dup.sum())} rows repeat a (pair, worker) judgement")
    return AmtBatch(p.name, frame, str(frame["model1"].iloc[0]))


def read_dhe_batch(which: str, directory: str | Path) -> AmtBatch:
    """Read one of the paper's batches by short name ``v1``, ``r1`` or ``r2`` from ``directory``."""
    key = which.lower()
    if key not in DHE_BATCHES:
        raise DataError(f"unknown DHE batch {which!r}; available: {', '.join(DHE_BATCHES)}")
    return read_amt_batch(Path(directory) / DHE_BATCHES[key])
