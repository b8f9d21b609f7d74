"""Exports of annotation tools read as judgements: Label Studio's JSON and Argilla's flat JSON.

**Label Studio** (*Export -> JSON*): a JSON array of tasks, each with ``id``, ``data`` (the
imported fields: here the item and the system, ``data.item_id`` and ``data.system``, and for
a pairwise task ``data.system_b``) and ``annotations``, each with ``completed_by`` (a user
id, or an object with ``id`` and ``email``), ``was_cancelled`` and ``result``, a list of
regions with ``from_name`` (the control: the criterion), ``to_name``, ``type`` and
``value``:

* ``rating`` (``value.rating``) and ``number`` (``value.number``): a rating;
* ``choices`` (``value.choices``): with ``data.system_b``, a pairwise answer (``A``, ``B``,
  ``tie``, ``both-good``, ``both-bad``, or a system's name); otherwise a number written as
  text (``"4"``);
* ``pairwise`` (the Pairwise tag, ``value.selected``): ``left`` is the first output (``A``),
  ``right`` the second (``B``);
* ``labels`` on text (``value.start``, ``value.end``, ``value.text``, ``value.labels``): an
  error span, the label its severity (``Minor`` or ``Major``): one ``esa`` judgement per
  annotation and control with every span;
* ``textarea``: the comment of the annotation's judgements.

Cancelled annotations and other region types (boxes, relations) are skipped and counted
(``frame.attrs["skipped"]``).

**Argilla** 2.x: ``dataset.records.to_json(path)`` writes a JSON array of *nested* records
(``id``, ``fields``, ``metadata``, ``responses: {q: [{value, user_id}, ...]}``, ``suggestions``,
``vectors``); records flattened with ``records.to_list(flatten=True)`` carry the fields and
metadata at the top level and, per question ``q``, ``q.responses`` (the answers) beside
``q.responses.users`` (who gave them). Both are read. The item, system and second system are
named values (``item_id``, ``system``, ``system_b``; top level, metadata or fields), the item
falling back to the record ``id``.
A number (rating) is a rating; a label is a pairwise answer as above; span answers (lists of
``{start, end, label}``) are error spans. Rankings and free text are skipped and counted.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from humeval.data.cells import text_cell, time_cell
from humeval.errors import DataError
from humeval.files import iter_json_array
from humeval.judgements import JUDGEMENT_COLUMNS

__all__ = ["ARGILLA_LAYOUT", "LABEL_STUDIO_LAYOUT", "read_argilla", "read_label_studio"]

LABEL_STUDIO_LAYOUT = ("a Label Studio JSON export: an array of tasks with data (item_id, system[, system_b]) and "
                       "annotations[].result[] regions with from_name, type (rating, number, choices, pairwise, labels, "
                       "textarea) "
                       "and value, and completed_by")
ARGILLA_LAYOUT = ("an Argilla 2.x export: an array of records with item_id (or id), system[, system_b] (at the top "
                  "level, in metadata or in fields) and responses {q: [{value, user_id}]} (records.to_json), or, "
                  "flattened, q.responses and q.responses.users per question q")
_PAIR = {"a": "A", "b": "B", "tie": "tie", "both-good": "both-good", "both good": "both-good",
         "both-bad": "both-bad", "both bad": "both-bad"}


def _load_array(path: Path, layout: str) -> Iterator[tuple[int, Any]]:
    """The export's elements, numbered from 1, read a piece at a time (:func:`humeval.files.iter_json_array`)."""
    return iter_json_array(path, what="export file", hint=f"expected {layout}")


def _row(participant: str, item: str, criterion: str, system: str, system_b: str = "", *, value: float = math.nan,
         choice: str = "", spans: str = "", comment: str = "", submitted_at: str = "") -> dict[str, Any]:
    return {"participant_id": participant, "list_id": "", "task_id": "", "kind": "task", "item_id": item,
            "criterion": criterion, "system": system, "system_b": system_b, "position": 0, "value": value,
            "choice": choice, "seconds": math.nan, "submitted_at": submitted_at, "stop_seq": pd.NA, "spans": spans,
            "comment": comment}


def _number(value: Any, where: str, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number):
        raise DataError(f"{where}: {what} {value!r} is not a number")
    return number


def _pair_choice(answer: Any, system: str, system_b: str, where: str) -> str:
    text = str(answer).strip()
    if text == system:
        return "A"
    if text == system_b:
        return "B"
    choice = _PAIR.get(text.lower())
    if choice is None:
        raise DataError(f"{where}: pairwise answer {answer!r} is not valid; valid: A, B, tie, both-good, both-bad, "
                        f"{system!r} or {system_b!r}")
    return choice


def _severity(label: Any, where: str) -> str:
    severity = str(label).strip().lower()
    if severity not in ("minor", "major"):
        raise DataError(f"{where}: span label {label!r} is not a severity; error spans are labelled Minor or Major")
    return severity


def _frame(rows: list[dict[str, Any]], skipped: Counter[str], path: Path, layout: str) -> pd.DataFrame:
    if not rows:
        reasons = ", ".join(f"{k}: {v}" for k, v in skipped.items()) or "none"
        raise DataError(f"{path}: no judgement could be read (skipped: {reasons}); expected {layout}")
    frame = pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS)
    frame.attrs["skipped"] = dict(skipped)
    return frame


def _who(completed_by: Any) -> Any:
    """Who completed an annotation: a user id, or an object's email (else its id)."""
    if isinstance(completed_by, dict):
        return completed_by.get("email") or completed_by.get("id")
    return completed_by


def read_label_studio(path: str | Path, *, item: str = "item_id", system: str = "system",
                      system_b: str = "system_b") -> pd.DataFrame:
    """Judgements (the long table of :mod:`humeval.judgements`, ``task_id`` empty) from a Label Studio JSON export.

    ``item``, ``system``, ``system_b``: the ``data`` fields naming the item (default: the
    task's ``id`` when absent), the system and, for pairwise tasks, the second system.
    Raises :class:`DataError` naming the file, the task and the expected layout.
    """
    path = Path(path)
    rows: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    for t, task in _load_array(path, LABEL_STUDIO_LAYOUT):
        where = f"{path}: task {t}"
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            raise DataError(f"{where}: a task must be an object with 'data'; expected {LABEL_STUDIO_LAYOUT}")
        data = task["data"]
        item_id = text_cell(data.get(item, task.get("id", "")), where=where, what=f"data.{item}", layout=LABEL_STUDIO_LAYOUT)
        if system not in data:
            raise DataError(f"{where}: data has no field {system!r} naming the system (fields: {', '.join(data)}); "
                            f"expected {LABEL_STUDIO_LAYOUT}")
        first, second = (text_cell(data.get(name), where=where, what=f"data.{name}", layout=LABEL_STUDIO_LAYOUT)
                         for name in (system, system_b))
        annotations = task.get("annotations", task.get("completions", []))
        if not isinstance(annotations, list):
            raise DataError(f"{where}: annotations must be a list, got {type(annotations).__name__}")
        for a, annotation in enumerate(annotations, start=1):
            at = f"{where}, annotation {a}"
            if not isinstance(annotation, dict) or not isinstance(annotation.get("result", []), list):
                raise DataError(f"{at}: an annotation must be an object with a result list; expected {LABEL_STUDIO_LAYOUT}")
            if annotation.get("was_cancelled"):
                skipped["cancelled annotation"] += 1
                continue
            who = text_cell(_who(annotation.get("completed_by")), where=at, what="completed_by", layout=LABEL_STUDIO_LAYOUT)
            if not who:
                raise DataError(f"{at}: completed_by is empty; every annotation needs its annotator")
            stamp = time_cell(annotation.get("created_at"), where=at, what="created_at", layout=LABEL_STUDIO_LAYOUT)
            own: list[dict[str, Any]] = []
            spans: dict[str, list[dict[str, Any]]] = {}
            comment = ""
            for r, region in enumerate(annotation.get("result", []), start=1):
                here = f"{at}, result {r}"
                if not isinstance(region, dict) or "from_name" not in region or not isinstance(region.get("value"), dict):
                    raise DataError(f"{here}: a result needs from_name, type and a value object; expected "
                                    f"{LABEL_STUDIO_LAYOUT}")
                kind, value, name = region.get("type"), region["value"], str(region["from_name"])
                if kind in ("rating", "number"):
                    own.append(_row(who, item_id, name, first, value=_number(value.get(kind), here, kind),
                                    submitted_at=stamp))
                elif kind == "choices":
                    picked = value.get("choices") or []
                    if len(picked) != 1:
                        raise DataError(f"{here}: choices {picked!r}: one choice expected")
                    if second:
                        own.append(_row(who, item_id, name, first, second,
                                        choice=_pair_choice(picked[0], first, second, here), submitted_at=stamp))
                    else:
                        own.append(_row(who, item_id, name, first, value=_number(picked[0], here, "choice"),
                                        submitted_at=stamp))
                elif kind == "pairwise":  # the Pairwise tag: value.selected is the left (first) or right object
                    side = {"left": "A", "right": "B"}.get(str(value.get("selected")))
                    if side is None or not second:
                        raise DataError(f"{here}: a pairwise result needs value.selected 'left' or 'right' and a task "
                                        f"with data.{system_b}, got {value!r}")
                    own.append(_row(who, item_id, name, first, second, choice=side, submitted_at=stamp))
                elif kind == "labels":
                    labels = value.get("labels") or []
                    if "start" not in value or "end" not in value or len(labels) != 1:
                        raise DataError(f"{here}: a text span needs start, end and one label, got {value!r}")
                    spans.setdefault(name, []).append({"start": int(value["start"]), "end": int(value["end"]),
                                                       "severity": _severity(labels[0], here)})
                elif kind == "textarea":
                    comment = " ".join(str(x) for x in value.get("text", []))
                else:
                    skipped[f"result type {kind!r}"] += 1
            own += [_row(who, item_id, name, first, spans=json.dumps(s), submitted_at=stamp) for name, s in spans.items()]
            for row in own:
                row["comment"] = comment
            rows += own
    return _frame(rows, skipped, path, LABEL_STUDIO_LAYOUT)


def _argilla_names(record: dict[str, Any]) -> dict[str, Any]:
    """The record's named values: a flat record's own keys, or a nested record's ``fields`` and ``metadata`` (the
    metadata first: the systems are usually metadata, hidden from annotators) beside its own keys."""
    nested: dict[str, Any] = {}
    for part in ("fields", "metadata"):
        if isinstance(record.get(part), dict):
            nested |= record[part]
    return {**nested, **{k: v for k, v in record.items() if not isinstance(v, dict)}}


def _argilla_responses(record: dict[str, Any], where: str) -> list[tuple[str, list[Any], list[Any]]]:
    """``(key, answers, users)`` per question: flat ``q.responses`` beside ``q.responses.users``, or nested
    ``responses: {q: [{value, user_id}, ...]}`` (``records.to_json``, which does not flatten)."""
    out = []
    nested = record.get("responses")
    if isinstance(nested, dict):
        for question, given in nested.items():
            key = f"responses.{question}"
            if not isinstance(given, list) or not all(isinstance(g, dict) and "value" in g for g in given):
                raise DataError(f"{where}: {key} must be a list of {{value, user_id}} objects, got {given!r}")
            out.append((question, [g["value"] for g in given], [g.get("user_id", "") for g in given]))
    for key in record:
        if not key.endswith(".responses"):
            continue
        answers, users = record[key] or [], record.get(f"{key}.users") or []
        if not isinstance(answers, list) or not isinstance(users, list) or len(answers) != len(users):
            raise DataError(f"{where}: {key} and {key}.users must be lists of the same length, got {answers!r} "
                            f"and {users!r}")
        out.append((key[: -len(".responses")], answers, users))
    return out


def read_argilla(path: str | Path, *, item: str = "item_id", system: str = "system",
                 system_b: str = "system_b") -> pd.DataFrame:
    """Judgements (``task_id`` empty) from an Argilla 2.x export: ``records.to_json`` (nested records) or a
    flattened one (``records.to_list(flatten=True)`` written as JSON).

    Raises :class:`DataError` naming the file, the record and the expected layout.
    """
    path = Path(path)
    rows: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    for k, record in _load_array(path, ARGILLA_LAYOUT):
        where = f"{path}: record {k}"
        if not isinstance(record, dict):
            raise DataError(f"{where}: a record must be an object; expected {ARGILLA_LAYOUT}")
        named = _argilla_names(record)
        if system not in named:
            raise DataError(f"{where}: no field {system!r} naming the system (fields: {', '.join(list(named)[:10])}); "
                            f"expected {ARGILLA_LAYOUT}")
        item_id = text_cell(named.get(item, record.get("id", "")), where=where, what=item, layout=ARGILLA_LAYOUT)
        first, second = (text_cell(named.get(name), where=where, what=name, layout=ARGILLA_LAYOUT)
                         for name in (system, system_b))
        for question, answers, users in _argilla_responses(record, where):
            for answer, user in zip(answers, users, strict=True):
                here = f"{where}, {question}"
                who = text_cell(user, where=here, what="user_id", layout=ARGILLA_LAYOUT)
                if isinstance(answer, list) and all(isinstance(s, dict) and "start" in s for s in answer):
                    spans = [{"start": int(s["start"]), "end": int(s["end"]), "severity": _severity(s.get("label"), here)}
                             for s in answer]
                    rows.append(_row(who, item_id, question, first, spans=json.dumps(spans)))
                elif isinstance(answer, (int, float)) and not isinstance(answer, bool):
                    rows.append(_row(who, item_id, question, first, value=_number(answer, here, "rating")))
                elif isinstance(answer, str) and second:
                    rows.append(_row(who, item_id, question, first, second,
                                     choice=_pair_choice(answer, first, second, here)))
                elif isinstance(answer, str):
                    try:
                        rows.append(_row(who, item_id, question, first, value=_number(answer, here, "rating")))
                    except DataError:  # free text, not a rating written as text
                        skipped["text answer"] += 1
                else:
                    skipped["ranking or other answer"] += 1
    return _frame(rows, skipped, path, ARGILLA_LAYOUT)
