"""A study's pairwise votes as FastChat battle logs (what ``clean_battle_data`` writes) and as a DataFrame.

:func:`battle_log` turns the judgements of every pairwise criterion (any task type whose ``pairwise`` is true: 2afc
today, battles too) into one row per vote with the fields of FastChat's ``clean_battle_*.json``:

=================  ============================================================================================
``question_id``     the item
``model_a``         the system shown first (A)
``model_b``         the system shown second (B)
``winner``          ``model_a``, ``model_b``, ``tie`` (``tie``, ``both-good``) or ``tie (bothbad)`` (``both-bad``)
``judge``           the participant
``turn``            1 (one prompt, one answer each)
``anony``           true (the models were anonymous when voted on)
``tstamp``          the vote's time, seconds since 1970 (UTC), when every vote has one
``criterion``       the criterion asked (humeval's; FastChat has one)
``task_id``         the task (humeval's)
``prompt``          the prompt the models answered, when it was not the item's: typed by the participant or drawn
                    from ``arena.prompts.file`` (the judgements' ``prompt``); empty for the data's prompt, which is
                    the ``input`` of the item ``question_id`` names (the study's data, not read here: the battle log
                    is built from the judgements and the protocol alone). Only when some vote has one
=================  ============================================================================================

By default only the votes the analysis uses (task judgements, valid, not excluded); ``everything=True`` keeps
attention checks, repeats and excluded votes as they were given. :func:`write_battle_log` writes the table as
FastChat's JSON array (``.json``), JSON lines (``.jsonl``), Parquet or CSV; :func:`humeval.stats.read_battles`
and ``humeval arena replay`` read it back.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from humeval.errors import DataError
from humeval.files import frame_csv, write_text

if TYPE_CHECKING:
    import pandas as pd

    from humeval.protocol.models import Protocol
    from humeval.study import StudyFolder

__all__ = ["BATTLE_LOG_COLUMNS", "battle_log", "study_battle_log", "write_battle_log"]

#: the columns of :func:`battle_log`, in order (``tstamp`` only when every vote has a time, ``prompt`` only when some
#: vote's prompt was not the data's)
BATTLE_LOG_COLUMNS = ("question_id", "model_a", "model_b", "winner", "judge", "turn", "anony", "tstamp",
                      "criterion", "task_id", "prompt")

_WINNER = {"A": "model_a", "B": "model_b", "tie": "tie", "both-good": "tie", "both-bad": "tie (bothbad)"}


def battle_log(judgements: pd.DataFrame, protocol: Protocol, excluded: pd.DataFrame | None = None, *,
               criterion: str | None = None, everything: bool = False) -> pd.DataFrame:
    """The pairwise votes of ``judgements`` as a FastChat battle table (module docstring).

    ``criterion``: one pairwise criterion (default: every pairwise criterion); ``excluded``: the exclusion table
    (``results/excluded.jsonl``), whose votes are left out unless ``everything``.
    """
    import pandas as pd

    from humeval.analysis.validity import invalid_reasons
    from humeval.judgements.exclusion import valid_judgements

    pairwise = [c.name for c in protocol.criteria if c.task.pairwise]
    if criterion is not None:
        known = [c.name for c in protocol.criteria]
        if criterion not in known:
            raise DataError(f"battle log: unknown criterion {criterion!r}; the protocol's criteria: {known}")
        if criterion not in pairwise:
            raise DataError(f"battle log: criterion {criterion!r} is not pairwise; pairwise criteria: "
                            f"{pairwise or 'none'}")
        pairwise = [criterion]
    if not pairwise:
        raise DataError(f"battle log: the protocol {protocol.study.name!r} has no pairwise criterion (a battle "
                        "log holds votes between two outputs)")
    frame = judgements[judgements["criterion"].isin(pairwise)]
    if not everything:
        if excluded is not None and len(excluded):
            frame = valid_judgements(frame, excluded)
        reasons = invalid_reasons(frame, protocol)
        frame = frame[(frame["kind"] == "task") & (reasons.reindex(frame.index) == "")]
    winner = frame["choice"].map(_WINNER)
    if winner.isna().any():
        bad = frame["choice"][winner.isna()].iloc[0]
        raise DataError(f"battle log: choice {bad!r} has no FastChat winner; valid: {', '.join(_WINNER)}")
    out = pd.DataFrame({
        "question_id": frame["item_id"].astype(str).to_numpy(),
        "model_a": frame["system"].astype(str).to_numpy(),
        "model_b": frame["system_b"].astype(str).to_numpy(),
        "winner": winner.to_numpy(),
        "judge": frame["participant_id"].astype(str).to_numpy(),
        "turn": np.ones(len(frame), dtype=np.int64),
        "anony": np.ones(len(frame), dtype=bool),
    })
    times = pd.to_datetime(frame["submitted_at"].replace("", None), utc=True, errors="coerce", format="ISO8601")
    if len(frame) and times.notna().all():
        out["tstamp"] = (times - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy()
    out["criterion"] = frame["criterion"].astype(str).to_numpy()
    out["task_id"] = frame["task_id"].astype(str).to_numpy()
    if "prompt" in frame:
        prompts = frame["prompt"].astype(object).fillna("").astype(str)
        if (prompts != "").any():
            out["prompt"] = prompts.to_numpy()
    if "tstamp" in out:
        out = out.sort_values("tstamp", kind="stable").reset_index(drop=True)
    return out


def study_battle_log(study: StudyFolder, *, criterion: str | None = None, everything: bool = False,
                     results: str | Path | None = None) -> pd.DataFrame:
    """:func:`battle_log` of a study's collected judgements (``results/judgements.jsonl``) minus its exclusions
    (``results/excluded.jsonl``); ``results``: another results folder (a dry run's, ``results/dry-run/<kind>``)."""
    from humeval.analysis.workspace import Workspace, read_excluded, read_study_judgements, study_workspace

    ws = study_workspace(study) if results is None else Workspace(Path(results))
    excluded = None if everything else read_excluded(ws)  # the analysed votes need `humeval exclude` first
    return battle_log(read_study_judgements(ws), study.protocol, excluded, criterion=criterion,
                      everything=everything)


def write_battle_log(battles: pd.DataFrame, path: str | Path) -> Path:
    """Write a battle table by suffix: ``.json`` FastChat's JSON array (``clean_battle_*.json``), ``.jsonl`` JSON
    lines, ``.parquet`` or ``.csv``."""
    path = Path(path)
    suffix = path.suffix.lower()
    if battles.empty:
        raise DataError(f"{path}: no votes to write (no valid pairwise judgement)")
    if suffix == ".json":
        return write_text(path, battles.to_json(orient="records", indent=1, force_ascii=False) + "\n")
    if suffix == ".jsonl":
        return write_text(path, battles.to_json(orient="records", lines=True, force_ascii=False))
    if suffix == ".csv":  # a typed prompt a spreadsheet would run is neutralised (csv_cell)
        return write_text(path, frame_csv(battles))
    if suffix == ".parquet":
        from humeval.extras import require

        require("pyarrow", "parquet")
        path.parent.mkdir(parents=True, exist_ok=True)
        battles.to_parquet(path, index=False)
        return path
    raise DataError(f"{path}: unknown battle log format {suffix!r}; valid: .json (FastChat's array), .jsonl, "
                    ".parquet, .csv")
