"""Exclusion: apply exactly the protocol's preregistered rules, record who and why, delete nothing.

Rules (``exclusion`` in ``humeval.yaml``):

* ``straight-lining``: a participant gave one and the same response to every task of a
  criterion (at least ``min_tasks`` tasks); for ``2afc`` the response is the position
  chosen (always ``A``), for ratings the value. Excludes the participant.
* ``attention``: more than ``max_failures`` attention checks answered other than the
  expected answer (from the participant lists). Excludes the participant.
* ``min-time``: ``scope: judgement`` excludes every judgement of a task done in less than
  ``seconds``; ``scope: participant`` excludes a participant whose median time per task is
  below it. Rows without a time are not judged by this rule (counted as ``untimed``).
* ``inconsistent``: a repeated task answered differently from its original (ratings
  differing by more than ``max_difference``; ``2afc`` choosing a different *system*, since
  the display order may differ) more than ``max_failures`` times. Excludes the participant.

The result is a table with one row per (excluded unit, rule): ``scope`` (``participant``
or ``judgement``), ``participant_id``, ``task_id``/``criterion``/``system`` for judgement
scope, ``rule`` and ``detail``. :func:`valid_judgements` applies it to the judgements
without changing them on disk.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from humeval.design.tasks import ParticipantList
from humeval.judgements import excluded_mask, winners
from humeval.protocol.models import (
    AttentionExclusion,
    InconsistentExclusion,
    MinTimeExclusion,
    Protocol,
    StraightLiningExclusion,
)

__all__ = ["EXCLUDED_COLUMNS", "exclusion_counts", "exclusions", "expected_answers", "valid_judgements"]

EXCLUDED_COLUMNS = ["scope", "participant_id", "task_id", "criterion", "system", "rule", "detail"]


def expected_answers(lists: list[ParticipantList]) -> dict[str, Any]:
    """``task_id -> expected answer`` of every attention check in the participant lists."""
    return {t.task_id: t.expected for pl in lists for t in pl.tasks if t.kind == "attention"}


def _participant_row(pid: str, rule: str, detail: str) -> dict[str, str]:
    return {"scope": "participant", "participant_id": pid, "task_id": "", "criterion": "", "system": "",
            "rule": rule, "detail": detail}


def _response(frame: pd.DataFrame) -> pd.Series:
    """The response of each row as a string: the value for ratings, the choice for ``2afc``."""
    value = frame["value"].map(lambda v: "" if pd.isna(v) else f"{float(v):.10g}")
    return value.where(frame["choice"] == "", frame["choice"])


def _straight_lining(frame: pd.DataFrame, rule: StraightLiningExclusion) -> list[dict[str, str]]:
    tasks = frame[frame["kind"] != "attention"].assign(response=_response)
    out = []
    for (pid, criterion), sub in tasks.groupby(["participant_id", "criterion"], sort=True):
        n_tasks = sub["task_id"].nunique()
        if n_tasks >= rule.min_tasks and sub["response"].nunique() == 1:
            out.append(_participant_row(str(pid), rule.rule,
                                        f"{criterion}: same response '{sub['response'].iloc[0]}' for all {n_tasks} tasks"))
    return out


def _failed(row_value: float, row_choice: str, expected: Any) -> bool:
    if expected is None:
        return False
    if row_choice:
        return row_choice != str(expected)
    try:
        return bool(np.isnan(row_value) or not np.isclose(row_value, float(expected)))
    except (TypeError, ValueError):
        return True


def _attention(frame: pd.DataFrame, rule: AttentionExclusion, expected: dict[str, Any]) -> list[dict[str, str]]:
    checks = frame[frame["kind"] == "attention"]
    out = []
    for pid, sub in checks.groupby("participant_id", sort=True):
        failed = sorted({t for t, v, c in zip(sub["task_id"], sub["value"], sub["choice"], strict=True)
                         if _failed(v, c, expected.get(t))})
        if len(failed) > rule.max_failures:
            out.append(_participant_row(str(pid), rule.rule,
                                        f"failed {len(failed)} of {sub['task_id'].nunique()} attention checks "
                                        f"(tolerated: {rule.max_failures}): {', '.join(failed[:3])}"))
    return out


def _min_time(frame: pd.DataFrame, rule: MinTimeExclusion) -> list[dict[str, str]]:
    timed = frame[frame["seconds"].notna()]
    out = []
    if rule.scope == "judgement":
        fast = timed[timed["seconds"] < rule.seconds]
        for r in fast.itertuples(index=False):
            out.append({"scope": "judgement", "participant_id": r.participant_id, "task_id": r.task_id,
                        "criterion": r.criterion, "system": r.system, "rule": rule.rule,
                        "detail": f"{r.seconds:g} s < {rule.seconds:g} s"})
        return out
    per_task = timed.groupby(["participant_id", "task_id"])["seconds"].first()
    medians = per_task.groupby(level=0).median()
    for pid, med in medians[medians < rule.seconds].items():
        out.append(_participant_row(str(pid), rule.rule, f"median {med:g} s per task < {rule.seconds:g} s"))
    return out


def _keyed(sub: pd.DataFrame, original: pd.Series) -> pd.DataFrame:
    """Rows keyed by (participant, original task, criterion, shown systems in any order)."""
    pair = [a if not b else "+".join(sorted((a, b))) for a, b in zip(sub["system"], sub["system_b"], strict=True)]
    return sub.assign(original=original.to_numpy(), system_key=pair, answer=winners(sub).to_numpy())


def _inconsistent(frame: pd.DataFrame, rule: InconsistentExclusion, repeat_of: dict[str, str]) -> list[dict[str, str]]:
    repeats = frame[frame["kind"] == "repeat"]
    if repeats.empty:
        return []
    originals = frame[frame["kind"] == "task"]
    rep = _keyed(repeats, repeats["task_id"].map(lambda t: repeat_of.get(t, t.removesuffix("|repeat"))))
    orig = _keyed(originals, originals["task_id"])
    key = ["participant_id", "original", "criterion", "system_key"]
    merged = rep.merge(orig, on=key, suffixes=("_r", "_o"))
    is_choice = (merged["choice_r"] != "").to_numpy()
    differs = np.where(is_choice, (merged["answer_r"] != merged["answer_o"]).to_numpy(),
                       ((merged["value_r"] - merged["value_o"]).abs() > rule.max_difference).to_numpy())
    merged = merged.assign(differs=differs)
    out = []
    for pid, sub in merged.groupby("participant_id", sort=True):
        bad = sorted(set(sub.loc[sub["differs"], "original"]))
        if len(bad) > rule.max_failures:
            out.append(_participant_row(str(pid), rule.rule,
                                        f"{len(bad)} inconsistent repeated task(s) (tolerated: {rule.max_failures}): "
                                        f"{', '.join(bad[:3])}"))
    return out


def exclusions(frame: pd.DataFrame, protocol: Protocol, lists: list[ParticipantList] | None = None) -> pd.DataFrame:
    """Apply the protocol's exclusion rules to judgements ``frame``; one row per (excluded unit, rule).

    ``lists`` (the participant lists) supply the expected answers of attention checks and
    the originals of repeated tasks; without them attention checks cannot be scored, and
    that is an error when the protocol has an ``attention`` rule.
    """
    from humeval.errors import DataError

    lists = lists or []
    rows: list[dict[str, str]] = []
    repeat_of = {t.task_id: t.repeat_of for pl in lists for t in pl.tasks if t.repeat_of}
    for rule in protocol.exclusion:
        if isinstance(rule, StraightLiningExclusion):
            rows += _straight_lining(frame, rule)
        elif isinstance(rule, AttentionExclusion):
            expected = expected_answers(lists)
            if not expected and (frame["kind"] == "attention").any():
                raise DataError("exclusion: attention rule: the participant lists hold no attention checks with "
                                "expected answers; cannot score the attention-check judgements")
            rows += _attention(frame, rule, expected)
        elif isinstance(rule, MinTimeExclusion):
            rows += _min_time(frame, rule)
        elif isinstance(rule, InconsistentExclusion):
            rows += _inconsistent(frame, rule, repeat_of)
    return pd.DataFrame(rows, columns=EXCLUDED_COLUMNS)


def valid_judgements(frame: pd.DataFrame, excluded: pd.DataFrame) -> pd.DataFrame:
    """The judgements not excluded (a filtered copy; ``frame`` is unchanged)."""
    return frame.loc[~excluded_mask(frame, excluded)].copy()


def exclusion_counts(frame: pd.DataFrame, excluded: pd.DataFrame, protocol: Protocol) -> dict[str, Any]:
    """Counts per rule and overall: participants and judgements excluded, judgements kept."""
    per_rule = []
    for rule in protocol.exclusion:
        sub = excluded[excluded["rule"] == rule.rule]
        rows = int(excluded_mask(frame, sub).sum()) if not sub.empty else 0
        per_rule.append({"rule": rule.rule, "parameters": rule.model_dump(exclude={"rule"}),
                         "participants": int(sub.loc[sub["scope"] == "participant", "participant_id"].nunique()),
                         "judgements": rows})
    mask = excluded_mask(frame, excluded)
    untimed = int(frame["seconds"].isna().sum()) if any(isinstance(r, MinTimeExclusion) for r in protocol.exclusion) else 0
    return {
        "rules": per_rule,
        "participants_total": int(frame["participant_id"].nunique()),
        "participants_excluded": int(excluded.loc[excluded["scope"] == "participant", "participant_id"].nunique()),
        "judgements_total": len(frame),
        "judgements_excluded": int(mask.sum()),
        "judgements_kept": int((~mask).sum()),
        "untimed": untimed,
    }
