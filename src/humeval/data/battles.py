"""Pairwise battle logs as users have them: FastChat's JSON arrays and JSON lines, and arena Parquet files.

FastChat's ``clean_battle_data.py`` writes its battles with ``json.dump(battles, fout,
indent=2)``: one JSON array of objects with ``model_a``, ``model_b``, ``winner``
(``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``), ``judge``, ``turn``, ``anony``,
``language``, ``tstamp``, ``conversation_a``/``conversation_b`` and more. Arena data sets
ship the same columns as Parquet (newer ones spell the both-bad tie ``both_bad``); the
preference sets with one-hot ``winner_model_a``, ``winner_model_b``, ``winner_tie`` columns
are read too. :func:`read_battle_table` reads any of them (``.json``, ``.jsonl``,
``.parquet``) into the battles DataFrame of :mod:`humeval.stats.rankings`;
:func:`battles_to_judgements` turns battles into ``2afc`` judgements.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from humeval.errors import DataError
from humeval.files import iter_jsonl, read_json

__all__ = ["BATTLE_LAYOUT", "BATTLE_WINNERS", "battles_to_judgements", "read_battle_table"]

BATTLE_WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
#: spellings of the arena data sets for the canonical winners
_ALIASES = {"both_bad": "tie (bothbad)", "tie(bothbad)": "tie (bothbad)", "bothbad": "tie (bothbad)"}
BATTLE_LAYOUT = ("a FastChat battle log: a JSON array (clean_battle_*.json), JSON lines or Parquet, one battle per "
                 "object or row with model_a, model_b and winner (model_a, model_b, tie, tie (bothbad)); or "
                 "winner_model_a, winner_model_b, winner_tie as 0/1 columns")


def _records(path: Path) -> tuple[pd.DataFrame, Any]:
    """The battles and a function naming battle ``i`` (0-based) in messages: its line, battle or row number."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        pairs = list(iter_jsonl(path, what="battle log"))
        lines = [number for number, _ in pairs]
        return pd.DataFrame.from_records([obj for _, obj in pairs]), lambda i: f"{path}:{lines[i]}"
    if suffix == ".json":
        data = read_json(path, what="battle file", hint=f"expected {BATTLE_LAYOUT}")
        if isinstance(data, dict) and len(data) == 1 and isinstance(next(iter(data.values())), list):
            data = next(iter(data.values()))  # {"battles": [...]}
        if not isinstance(data, list):
            raise DataError(f"{path}: the JSON is a {type(data).__name__}, not an array of battles; expected {BATTLE_LAYOUT}")
        bad = next((i for i, obj in enumerate(data) if not isinstance(obj, dict)), None)
        if bad is not None:
            raise DataError(f"{path}: battle {bad + 1} is a {type(data[bad]).__name__}, not an object; expected {BATTLE_LAYOUT}")
        return pd.DataFrame.from_records(data), lambda i: f"{path}: battle {i + 1}"
    if suffix == ".parquet":
        from humeval.data.readers import read_table

        return read_table(path), lambda i: f"{path}: row {i + 1}"
    raise DataError(f"{path}: unsupported battle file type '{suffix}'. Use .json (FastChat's array), .jsonl or .parquet")


def read_battle_table(path: str | Path) -> pd.DataFrame:
    """Battles (``model_a``, ``model_b``, ``winner`` and every other column) from a battle log.

    Raises :class:`DataError` naming the file, the battle (1-based) and the expected layout for
    a broken file, a missing column or an unknown winner; never a raw decode error.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no battle log")
    frame, where = _records(path)
    if frame.empty:
        raise DataError(f"{path}: no battles in file")
    if "winner" not in frame.columns and {"winner_model_a", "winner_model_b", "winner_tie"} <= set(frame.columns):
        onehot = frame[["winner_model_a", "winner_model_b", "winner_tie"]].apply(pd.to_numeric, errors="coerce").to_numpy()
        ok = np.isfinite(onehot).all(axis=1) & (onehot.sum(axis=1) == 1)
        if not ok.all():
            row = int(np.argmax(~ok))
            raise DataError(f"{where(row)}: winner_model_a, winner_model_b, winner_tie must hold one 1 and "
                            f"two 0s, got {onehot[row].tolist()}")
        frame["winner"] = np.array(["model_a", "model_b", "tie"])[onehot.argmax(axis=1)]
    missing = [c for c in ("model_a", "model_b", "winner") if c not in frame.columns]
    if missing:
        raise DataError(f"{where(0)}: missing field {', '.join(map(repr, missing))} (found: "
                        f"{', '.join(map(str, frame.columns[:12]))}); expected {BATTLE_LAYOUT}")
    for col in ("model_a", "model_b", "winner"):
        absent = frame[col].isna().to_numpy()
        if absent.any():
            raise DataError(f"{where(int(np.argmax(absent)))}: missing field {col!r}; expected {BATTLE_LAYOUT}")
    winner = frame["winner"].map(lambda w: _ALIASES.get(w, w) if isinstance(w, str) else w)
    bad = ~winner.isin(BATTLE_WINNERS)
    if bad.any():
        row = int(np.argmax(bad.to_numpy()))
        raise DataError(f"{where(row)}: winner {frame['winner'].iloc[row]!r} is not valid; valid: "
                        f"{', '.join(BATTLE_WINNERS)} (or both_bad)")
    frame["winner"] = winner
    for col in ("model_a", "model_b"):
        blank = frame[col].isna() | (frame[col].astype(str).str.strip() == "")
        if blank.any():
            raise DataError(f"{where(int(np.argmax(blank.to_numpy())))}: {col} is empty")
    return frame.reset_index(drop=True)


_CHOICE = {"model_a": "A", "model_b": "B", "tie": "tie", "tie (bothbad)": "both-bad"}


def _iso(value: Any) -> str:
    """A FastChat ``tstamp`` (seconds since the epoch) as ISO 8601; anything else as text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return datetime.fromtimestamp(float(value), tz=UTC).isoformat()
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def battles_to_judgements(battles: pd.DataFrame, *, criterion: str, item: str = "question_id",
                          participant: str = "judge") -> pd.DataFrame:
    """``2afc`` judgements (the long table of :mod:`humeval.judgements`, ``task_id`` empty) from battles.

    ``item``: the column naming the item (FastChat's ``question_id``; without it, the battle's
    row number); ``participant``: the column naming who judged (FastChat's ``judge``; without
    it, one anonymous participant per battle). ``model_a`` is the system shown first (A);
    ``winner`` becomes the choice ``A``, ``B``, ``tie`` or ``both-bad``.
    """
    n = len(battles)
    items = battles[item].astype(str) if item in battles.columns else pd.Series([f"battle-{i + 1}" for i in range(n)])
    who = (battles[participant].astype(str) if participant in battles.columns
           else pd.Series([f"anonymous-{i + 1}" for i in range(n)]))
    stamps = battles["tstamp"].map(_iso) if "tstamp" in battles.columns else pd.Series([""] * n)
    return pd.DataFrame({
        "participant_id": who.to_numpy(), "list_id": "", "task_id": "", "kind": "task", "item_id": items.to_numpy(),
        "criterion": criterion, "system": battles["model_a"].astype(str).to_numpy(),
        "system_b": battles["model_b"].astype(str).to_numpy(), "position": 0, "value": math.nan,
        "choice": battles["winner"].map(_CHOICE).to_numpy(), "seconds": math.nan, "submitted_at": stamps.to_numpy(),
        "stop_seq": pd.NA, "spans": "", "comment": ""})
