"""Judgements as one long table, shared by the store, platforms, dry runs and the analysis.

One row per participant, task, criterion and (for ratings) system:

=================  ==========================================================================
``participant_id``  who judged
``list_id``         the participant list the task came from (empty for dynamic assignment)
``task_id``         the task (see :mod:`humeval.design.tasks`)
``kind``            ``task``, ``attention`` or ``repeat``
``item_id``         the item
``criterion``       the criterion asked
``system``          rated system; for ``2afc`` the system shown first (A)
``system_b``        ``2afc`` only: the system shown second (B)
``position``        display position of ``system`` (0-based; randomised order is recorded)
``value``           numeric rating (NaN for ``2afc``)
``choice``          ``2afc`` answer: ``A``, ``B``, ``tie``, ``both-good``, ``both-bad`` (empty otherwise)
``seconds``         time spent on the task
``submitted_at``    ISO 8601 time the judgement was stored
``stop_seq``        ``2afc`` judgements the live stopping rule consumed: 1-based place in the
                    comparison's outcome sequence (NaN otherwise; see docs/stopping.md)
``wave_seq``        ``2afc`` judgements a confirmation wave counted (``stopping.drift_check: wave``):
                    1-based place in the wave, never fed to the rule (NaN otherwise)
``revision``        the answers to the task after the first (the latest is kept): 0 for most; a qualification
                    check answered again (``design.qualification_attempts``) has 1 (0 for imported files)
``spans``           ``esa`` only: the error spans as JSON, ``[{"start", "end", "severity"}, ...]``
                    (character offsets into the output's source text, as the data gives it; ``value`` is
                    the 0-100 score)
``comment``         the participant's optional free text on the task (``presentation.comments``);
                    never used by any statistic
``prompt``          ``battle`` (and battles imported from a log): the prompt the models answered when it
                    was not the item's (typed by the participant, or drawn from ``arena.prompts.file``);
                    empty for the data's prompt (the item's ``input``) and for every other task type
``prompt_source``   where ``prompt`` came from, as the store recorded it: ``typed`` or ``file``; ``log``
                    for a battle log's prompt read by ``humeval import`` (empty with ``prompt``)
=================  ==========================================================================
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from humeval.errors import DataError
from humeval.extras import require
from humeval.files import frame_csv

if TYPE_CHECKING:  # pandas is imported by the functions that use it: JUDGEMENT_COLUMNS needs none (the server's export)
    import pandas as pd

    from humeval.protocol.models import Criterion, Protocol

__all__ = ["JUDGEMENT_COLUMNS", "agreement_units", "excluded_mask", "long_rows", "normalise_judgements", "pair_units", "read_judgements", "unit_matrix", "winners", "write_judgements"]

JUDGEMENT_COLUMNS = [
    "participant_id",
    "list_id",
    "task_id",
    "kind",
    "item_id",
    "criterion",
    "system",
    "system_b",
    "position",
    "value",
    "choice",
    "seconds",
    "submitted_at",
    "stop_seq",
    "wave_seq",
    "revision",
    "spans",
    "comment",
    "prompt",
    "prompt_source",
]


def long_rows(protocol: Protocol, judgements: list[dict[str, Any]], seqs: dict[tuple[str, str], int] | None = None,
              waves: dict[tuple[str, str], int] | None = None,
              prompts: dict[str, tuple[str, str]] | None = None) -> list[dict[str, Any]]:
    """Judgements as the store keeps them (:func:`humeval.store.reads.all_judgements`) as rows of the long table,
    in the order given; ``seqs``: the ``stop_seq`` of (criterion, assignment id); ``waves``: their ``wave_seq``;
    ``prompts``: the (``prompt``, ``prompt_source``) of an assignment whose battle prompt was not the data's."""
    seqs = seqs or {}
    waves = waves or {}
    prompts = prompts or {}
    rows: list[dict[str, Any]] = []
    for j in judgements:
        display = j["display"]
        base = {
            "participant_id": j["participant_id"], "list_id": j["list_id"], "task_id": j["task_id"], "kind": j["kind"],
            "item_id": j["item_id"], "seconds": j["seconds"], "submitted_at": j["submitted_at"], "stop_seq": math.nan,
            "wave_seq": math.nan, "revision": int(j.get("revision") or 0),
            "comment": j.get("comment", ""),
        }
        base["prompt"], base["prompt_source"] = prompts.get(j["assignment_id"], ("", ""))
        for name, value in j["values"].items():
            c = protocol.criterion(name)
            made = c.task.long_rows(c, value, display, base, seqs.get((name, j["assignment_id"])))
            if (wave := waves.get((name, j["assignment_id"]))) is not None:
                for row in made:
                    row["wave_seq"] = float(wave)
            rows.extend(made)
    return rows


def write_judgements(path: str | Path, frame: pd.DataFrame) -> Path:
    """Write judgements as JSONL (or CSV/Parquet by suffix), columns in canonical order."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = frame.reindex(columns=JUDGEMENT_COLUMNS)
    tmp = path.with_name(path.name + ".tmp")
    if path.suffix == ".csv":
        tmp.write_text(frame_csv(frame), encoding="utf-8", newline="")
    elif path.suffix == ".parquet":
        require("pyarrow", f"writing {path}")
        frame.to_parquet(tmp, index=False)
    else:
        frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
    tmp.replace(path)
    return path


def read_judgements(path: str | Path) -> pd.DataFrame:
    """Read a judgements file written by :func:`write_judgements` (or any file with its columns)."""
    from humeval.data.readers import read_table, require_columns

    frame = read_table(path)
    problems = require_columns(frame, ["participant_id", "task_id", "item_id", "criterion", "system"], source=str(path))
    if problems:
        raise DataError("\n".join(problems), problems)
    return normalise_judgements(frame)


def normalise_judgements(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` in the canonical columns and types (absent columns empty, ``kind`` ``task`` by default)."""
    import pandas as pd

    frame = frame.reindex(columns=JUDGEMENT_COLUMNS)
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce")
    frame["seconds"] = pd.to_numeric(frame["seconds"], errors="coerce")
    frame["stop_seq"] = pd.to_numeric(frame["stop_seq"], errors="coerce").astype("Int64")
    frame["wave_seq"] = pd.to_numeric(frame["wave_seq"], errors="coerce").astype("Int64")
    frame["revision"] = pd.to_numeric(frame["revision"], errors="coerce").fillna(0).astype("int64")
    for col in ("participant_id", "list_id", "task_id", "kind", "item_id", "criterion", "system", "system_b", "choice",
                "spans", "comment", "prompt", "prompt_source"):  # a column the file lacks is all-NaN float: as text first, then empty
        frame[col] = frame[col].astype(object).fillna("").astype(str)
    frame.loc[frame["kind"] == "", "kind"] = "task"
    return frame


def winners(frame: pd.DataFrame) -> pd.Series:
    """:meth:`humeval.protocol.models.TwoAFC.winner` for every ``2afc`` row of ``frame`` (vectorised)."""
    choice = frame["choice"]
    return choice.where(~choice.isin(["A", "B"]), frame["system"].where(choice == "A", frame["system_b"]))


def pair_units(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[float]]:
    """The unit x rater coding of ``2afc`` judgements for agreement, used by the report and the admin page.

    A unit is an item and an unordered pair of systems (``item|a|b``, names sorted); the
    code is the index of the chosen system among the sorted systems of ``frame``, and
    every tie option (``tie``, ``both-good``, ``both-bad``) is one further category (no
    preference). Returns the long units (``participant_id``, ``unit``, ``code``) and the
    categories.
    """
    import pandas as pd

    first, second = frame["system"].astype(str), frame["system_b"].astype(str)
    low = first.where(first <= second, second)
    high = second.where(first <= second, first)
    systems = sorted(set(first) | set(second))
    codes = {s: float(i) for i, s in enumerate(systems)}
    won = winners(frame)
    units = pd.DataFrame({
        "participant_id": frame["participant_id"].to_numpy(),
        "unit": (frame["item_id"].astype(str) + "|" + low + "|" + high).to_numpy(),
        "code": won.map(codes).fillna(float(len(codes))).to_numpy(dtype=float),
    }, index=frame.index)
    return units, [*codes.values(), float(len(codes))]


def agreement_units(frame: pd.DataFrame, criterion: Criterion, *, log: bool = False,
                    ) -> tuple[pd.DataFrame, list[float] | None]:
    """The long unit x rater coding of one criterion's judgements (``participant_id``, ``unit``, ``code``).

    A pairwise criterion (``2afc``): :func:`pair_units`. Ratings: a unit is an output (``item|system``), the
    code the value (its logarithm with ``log``, as magnitude estimates are analysed). Returns the units and
    the categories (``2afc`` choices; the points of a categorical scale, :meth:`~humeval.tasks.TaskType.categories`;
    None for continuous responses). The report's agreement and the admin page's both use it.
    """
    import pandas as pd

    if criterion.task.pairwise:
        return pair_units(frame)
    value = frame["value"].astype(float)
    units = pd.DataFrame({"participant_id": frame["participant_id"].to_numpy(),
                          "unit": (frame["item_id"].astype(str) + "|" + frame["system"].astype(str)).to_numpy(),
                          "code": (np.log(value) if log else value).to_numpy(dtype=float)}, index=frame.index)
    return units, criterion.task.categories(criterion)


def unit_matrix(units: pd.DataFrame) -> np.ndarray:
    """Raters x units (NaN where a rater did not judge a unit; a rater's repeated codes averaged)."""
    return units.groupby(["participant_id", "unit"])["code"].mean().unstack("unit").to_numpy(dtype=float)


def excluded_mask(frame: pd.DataFrame, excluded: pd.DataFrame) -> pd.Series:
    """True for each row of ``frame`` that an exclusion (``results/excluded.jsonl``) removes.

    Participant scope removes every row of the participant; judgement scope the rows of
    its (participant_id, task_id, criterion, system). The one mask: collation, the analysis
    and the stopping replay all use it.
    """
    import pandas as pd

    mask = frame["participant_id"].isin(set(excluded.loc[excluded["scope"] == "participant", "participant_id"]))
    single = excluded[excluded["scope"] == "judgement"]
    if not single.empty:
        key = ["participant_id", "task_id", "criterion", "system"]
        rows = pd.MultiIndex.from_frame(frame[key].astype(str))
        mask |= pd.Series(rows.isin(pd.MultiIndex.from_frame(single[key].astype(str))), index=frame.index)
    return mask
