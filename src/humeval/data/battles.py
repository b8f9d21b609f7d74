"""Pairwise battle logs as users have them: FastChat's JSON arrays and JSON lines, and arena Parquet files.

FastChat's ``clean_battle_data.py`` writes its battles with ``json.dump(battles, fout,
indent=2)``: one JSON array of objects with ``model_a``, ``model_b``, ``winner``
(``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``), ``judge``, ``turn``, ``anony``,
``language``, ``tstamp``, ``conversation_a``/``conversation_b`` and more. Arena data sets
ship the same columns as Parquet (newer ones spell the both-bad tie ``both_bad``); the
preference sets with one-hot ``winner_model_a``, ``winner_model_b``, ``winner_tie`` columns
are read too. :func:`read_battle_table` reads any of them (``.json``, ``.jsonl``,
``.parquet``) into the battles DataFrame of :mod:`humeval.stats.rankings`;
:func:`battles_to_judgements` turns battles into ``2afc`` judgements, and :func:`read_battle_judgements` does both
keeping only the columns judgements need (a 200 MB FastChat file is read in 0.72x its size).

A battle's prompt is read back into the judgements' ``prompt`` (``prompt_source`` ``log``): the ``prompt`` field
(what :func:`humeval.arena.export.battle_log` writes, and arena Parquet sets), or, in a JSON or JSON-lines log
without one, the first user turn of FastChat's ``conversation_a`` (``[{"role": "user", "content": ...}, ...]``),
taken as each battle is read so the conversations are never held.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from humeval.data.cells import Kind, column_problems, time_cell
from humeval.errors import DataError
from humeval.files import iter_json_array, iter_jsonl

__all__ = ["BATTLE_LAYOUT", "BATTLE_WINNERS", "battles_to_judgements", "read_battle_judgements", "read_battle_table"]

BATTLE_WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
#: spellings of the arena data sets for the canonical winners
_ALIASES = {"both_bad": "tie (bothbad)", "tie(bothbad)": "tie (bothbad)", "bothbad": "tie (bothbad)"}
BATTLE_LAYOUT = ("a FastChat battle log: a JSON array (clean_battle_*.json), JSON lines or Parquet, one battle per "
                 "object or row with model_a, model_b and winner (model_a, model_b, tie, tie (bothbad)); or "
                 "winner_model_a, winner_model_b, winner_tie as 0/1 columns")


def _records(path: Path, columns: Collection[str] | None) -> tuple[pd.DataFrame, Callable[[int], str]]:
    """The battles (only ``columns``, when given) and a function naming battle ``i`` (0-based) in messages: its
    line, battle or row number. A JSON array is read a battle at a time (:func:`humeval.files.iter_json_array`),
    so memory follows the columns kept, not the file (FastChat's conversations are most of it)."""
    def keep(obj: dict[str, Any]) -> dict[str, Any]:
        if columns is None:
            return obj
        kept = {k: v for k, v in obj.items() if k in columns}
        if "prompt" in columns and "prompt" not in obj and (asked := _first_turn(obj.get("conversation_a"))):
            kept["prompt"] = asked
        return kept

    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        lines, rows = [], []
        for number, obj in iter_jsonl(path, what="battle log"):
            lines.append(number)
            rows.append(keep(obj))
        return pd.DataFrame.from_records(rows), lambda i: f"line {lines[i]}"
    if suffix == ".json":
        rows = []
        for number, obj in iter_json_array(path, what="battle file", hint=f"expected {BATTLE_LAYOUT}", unwrap=True):
            if not isinstance(obj, dict):
                raise DataError(f"{path}: battle {number} is a {type(obj).__name__}, not an object; expected "
                                f"{BATTLE_LAYOUT}")
            rows.append(keep(obj))
        return pd.DataFrame.from_records(rows), lambda i: f"battle {i + 1}"
    if suffix == ".parquet":
        from humeval.data.readers import read_parquet

        return read_parquet(path, columns), lambda i: f"row {i + 1}"
    raise DataError(f"{path}: unsupported battle file type '{suffix}'. Use .json (FastChat's array), .jsonl or .parquet")


def _first_turn(conversation: Any) -> str | None:
    """The first user turn's text of a FastChat conversation (a list of ``{"role", "content"}``; an array of them in
    Parquet), or None."""
    if isinstance(conversation, (list, tuple, np.ndarray)):
        for turn in conversation:
            if isinstance(turn, dict) and turn.get("role") == "user" and isinstance(turn.get("content"), str):
                return turn["content"]
    return None


def read_battle_table(path: str | Path, *, columns: Collection[str] | None = None,
                      ids: Collection[str] = ("question_id", "judge")) -> pd.DataFrame:
    """Battles (``model_a``, ``model_b``, ``winner`` and every other column, or only ``columns``) from a battle log.

    Raises :class:`DataError` naming the file, the battle (1-based) and the expected layout for
    a broken file, a missing column, an unknown winner, a system or an ``ids`` column (the item, the judge)
    that is not text (bytes, a list, a NUL character), or a ``tstamp`` that is not a time (NaN, missing);
    never a raw decode error.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no battle log")
    frame, row_name = _records(path, None if columns is None else {*columns, *_JUDGED_COLUMNS})
    if "prompt" not in frame.columns and "conversation_a" in frame.columns:
        asked = frame["conversation_a"].map(_first_turn)
        if asked.notna().any():
            frame["prompt"] = asked

    def where(i: int) -> str:
        name = row_name(i)
        return f"{path}:{name.removeprefix('line ')}" if name.startswith("line ") else f"{path}: {name}"

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
    kinds: list[tuple[str, Kind]] = [("model_a", "id"), ("model_b", "id"), *((i, "id") for i in ids), ("prompt", "text")]
    problems = [p for col, kind in kinds if col in frame.columns
                for p in column_problems(frame[col].tolist(), col, source=str(path), kind=kind, layout=BATTLE_LAYOUT,
                                         rows=row_name)]
    if problems:
        raise DataError("\n".join(problems), problems)
    for col in ("model_a", "model_b"):
        blank = frame[col].isna() | (frame[col].astype(str).str.strip() == "")
        if blank.any():
            raise DataError(f"{where(int(np.argmax(blank.to_numpy())))}: {col} is empty")
    if "tstamp" in frame.columns:
        for i, value in enumerate(frame["tstamp"].tolist()):
            _time(value, where(i))
    return frame.reset_index(drop=True)


#: the columns a battle's judgement is read from (its systems, winner and time)
_JUDGED_COLUMNS = ("model_a", "model_b", "winner", "winner_model_a", "winner_model_b", "winner_tie", "tstamp",
                   "prompt")


def _time(value: Any, where: str) -> str:
    """A battle's ``tstamp`` (seconds since the epoch, or text) as ISO 8601 text; NaN (a missing time in a column of
    numbers) is refused."""
    if isinstance(value, float) and math.isnan(value):
        value = "NaN"
    return time_cell(value, where=where, what="tstamp", layout=f"{BATTLE_LAYOUT}, tstamp in seconds since the epoch")


def read_battle_judgements(path: str | Path, *, criterion: str, item: str = "question_id",
                           participant: str = "judge") -> pd.DataFrame:
    """``2afc`` judgements from a battle log (:func:`read_battle_table` of the columns they need, then
    :func:`battles_to_judgements`): a FastChat file's conversations are never held in memory."""
    battles = read_battle_table(path, columns=(item, participant), ids=(item, participant))
    return battles_to_judgements(battles, criterion=criterion, item=item, participant=participant)


_CHOICE = {"model_a": "A", "model_b": "B", "tie": "tie", "tie (bothbad)": "both-bad"}


def battles_to_judgements(battles: pd.DataFrame, *, criterion: str, item: str = "question_id",
                          participant: str = "judge") -> pd.DataFrame:
    """``2afc`` judgements (the long table of :mod:`humeval.judgements`, ``task_id`` empty) from battles.

    ``item``: the column naming the item (FastChat's ``question_id``; without it, the battle's
    row number); ``participant``: the column naming who judged (FastChat's ``judge``; without
    it, one anonymous participant per battle). ``model_a`` is the system shown first (A);
    ``winner`` becomes the choice ``A``, ``B``, ``tie`` or ``both-bad``; a battle's ``prompt`` (text; empty or
    missing: the item's own) becomes its ``prompt``, with ``prompt_source`` ``log``.
    """
    n = len(battles)
    items = battles[item].astype(str) if item in battles.columns else pd.Series([f"battle-{i + 1}" for i in range(n)])
    who = (battles[participant].astype(str) if participant in battles.columns
           else pd.Series([f"anonymous-{i + 1}" for i in range(n)]))
    prompts = (battles["prompt"].astype(object).where(battles["prompt"].map(lambda v: isinstance(v, str)), "")
               .to_numpy() if "prompt" in battles.columns else np.full(n, "", dtype=object))
    stamps = (pd.Series([_time(v, f"battle {i + 1}") for i, v in enumerate(battles["tstamp"].tolist())])
              if "tstamp" in battles.columns else pd.Series([""] * n))
    return pd.DataFrame({
        "participant_id": who.to_numpy(), "list_id": "", "task_id": "", "kind": "task", "item_id": items.to_numpy(),
        "criterion": criterion, "system": battles["model_a"].astype(str).to_numpy(),
        "system_b": battles["model_b"].astype(str).to_numpy(), "position": 0, "value": math.nan,
        "choice": battles["winner"].map(_CHOICE).to_numpy(), "seconds": math.nan, "submitted_at": stamps.to_numpy(),
        "stop_seq": pd.NA, "spans": "", "comment": "", "prompt": prompts,
        "prompt_source": np.where(prompts != "", "log", "")})
