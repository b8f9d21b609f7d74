"""Exclusion: apply exactly the protocol's preregistered rules, record who and why, delete nothing.

Rules (``exclusion`` in ``humeval.yaml``):

* ``straight-lining``: a participant gave one and the same response to every task of a
  criterion (at least ``min_tasks`` tasks); for ``2afc`` the response is the position
  chosen (always ``A``, always ``B`` or always ``tie``: the judgements record the side, and
  the sides are randomised, so an always-first clicker is caught whichever systems were
  shown), for ratings the value (always the same point). Excludes the participant.
* ``same-side``: over all ``2afc`` criteria, a participant's answers ``A``/``B`` (ties and the
  other options left out) chose one side, the output shown first or second, in a share of at
  least ``max_share`` (1.0: every time), given at least ``min_tasks`` such tasks. Unlike
  ``straight-lining`` it has a tolerance and pools the criteria (``max_share: 0.9`` also
  excludes a participant who clicked A 9 times in 10), and an occasional tie does not save a
  side clicker. Excludes the participant.
* ``attention``: more than ``max_failures`` attention checks answered other than the
  expected answer (from the participant lists). Excludes the participant.
* ``min-time``: ``scope: judgement`` excludes every judgement of a task done in less than
  ``seconds``; ``scope: participant`` excludes a participant whose median time per task is
  below it. Rows without a time are not judged by this rule (counted as ``untimed``).
* ``inconsistent``: a repeated task answered differently from its original (ratings
  differing by more than ``max_difference``; ``2afc`` choosing a different *system*, since
  the display order may differ) more than ``max_failures`` times. Excludes the participant.
* ``vote-outlier``: per pairwise criterion, the sequential test of :func:`humeval.stats.vote_outliers` on each
  participant's decisive votes (in the order stored) against the Bradley-Terry strengths of every other
  participant, at ``alpha`` split over the participants. Excludes the participant. It needs the crowd: on one
  participant's judgements alone (the server's live screening) it tests nothing.
* ``vote-cap``: a participant's pairwise task judgements of a criterion after the first ``max_votes`` (in the
  order stored) are excluded (judgement scope).

The result is a table with one row per (excluded unit, rule): ``scope`` (``participant``
or ``judgement``), ``participant_id``, ``task_id``/``criterion``/``system`` for judgement
scope, ``rule`` and ``detail``. :func:`valid_judgements` applies it to the judgements
without changing them on disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from humeval.design.tasks import ParticipantList, Task, is_qualification
from humeval.errors import DataError
from humeval.protocol.models import (
    AttentionExclusion,
    InconsistentExclusion,
    MinTimeExclusion,
    Protocol,
    SameSideExclusion,
    StraightLiningExclusion,
    VoteCapExclusion,
    VoteOutlierExclusion,
)

if TYPE_CHECKING:  # the rules themselves need no pandas (the server applies them live on a light install)
    import pandas as pd

__all__ = ["EXCLUDED_COLUMNS", "attention_check_counts", "exclusion_counts", "exclusion_rows", "exclusions", "expected_answers",
           "fails_check", "valid_judgements"]

EXCLUDED_COLUMNS = ["scope", "participant_id", "task_id", "criterion", "system", "rule", "detail"]

#: the judgement columns the rules read
_COLUMNS = ("participant_id", "task_id", "kind", "criterion", "system", "system_b", "value", "choice", "seconds")


def expected_answers(lists: list[ParticipantList]) -> dict[str, Any]:
    """``task_id -> expected answer`` of every attention check in the participant lists."""
    return {t.task_id: t.expected for pl in lists for t in pl.tasks if t.kind == "attention"}


def _participant_row(pid: str, rule: str, detail: str) -> dict[str, str]:
    return {"scope": "participant", "participant_id": pid, "task_id": "", "criterion": "", "system": "",
            "rule": rule, "detail": detail}


class _Columns:
    """The judgement columns as NumPy arrays: text as ``str`` (missing -> ""), numbers as float (missing -> NaN)."""

    def __init__(self, table: Mapping[str, Any]) -> None:
        missing = [c for c in _COLUMNS if c not in table]
        if missing:
            raise DataError(f"exclusion: the judgements lack the column(s) {', '.join(missing)}; "
                            f"expected the long judgements table ({', '.join(_COLUMNS)}, ...)")
        judged = np.asarray(table["kind"], dtype=object) != "practice"  # design.practice: judged by no rule
        for name in ("value", "seconds"):
            setattr(self, name, np.asarray(table[name], dtype=float)[judged])
        for name in ("participant_id", "task_id", "kind", "criterion", "system", "system_b", "choice"):
            raw = np.asarray(table[name], dtype=object)[judged]
            setattr(self, name, np.array(["" if v is None or v != v else str(v) for v in raw], dtype=str)
                    if raw.size else np.array([], dtype=str))

    participant_id: np.ndarray
    task_id: np.ndarray
    kind: np.ndarray
    criterion: np.ndarray
    system: np.ndarray
    system_b: np.ndarray
    choice: np.ndarray
    value: np.ndarray
    seconds: np.ndarray

    def response(self) -> np.ndarray:
        """The response of each row as text: the value (``%.10g``) for ratings, the choice for ``2afc``."""
        value = np.array(["" if np.isnan(v) else f"{v:.10g}" for v in self.value], dtype=str)
        return np.where(self.choice == "", value, self.choice)

    def answer(self) -> np.ndarray:
        """:func:`humeval.judgements.winners` on these columns: the system chosen, or the tie option."""
        return np.where(self.choice == "A", self.system, np.where(self.choice == "B", self.system_b, self.choice))


def _groups(*keys: np.ndarray) -> tuple[np.ndarray, list[tuple[str, ...]]]:
    """Group code of each row (groups sorted by their keys) and the groups' keys."""
    if not keys[0].size:
        return np.array([], dtype=int), []
    codes, names = [], []
    for k in keys:
        u, inv = np.unique(k, return_inverse=True)
        codes.append(inv)
        names.append(u)
    flat = np.ravel_multi_index(codes, [len(u) for u in names])
    uniq, group = np.unique(flat, return_inverse=True)
    index = np.unravel_index(uniq, [len(u) for u in names])
    return group, [tuple(str(names[d][index[d][g]]) for d in range(len(keys))) for g in range(uniq.size)]


def _distinct(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Number of distinct ``values`` per group."""
    if not group.size:
        return np.zeros(n_groups, dtype=int)
    _, code = np.unique(values, return_inverse=True)
    pairs = np.unique(group.astype(np.int64) * (code.max() + 1) + code)
    return np.bincount(pairs // (code.max() + 1), minlength=n_groups)


def _first_rows(group: np.ndarray, n_groups: int) -> np.ndarray:
    """Index of the first row of each group."""
    first = np.full(n_groups, group.size)
    np.minimum.at(first, group, np.arange(group.size))
    return first


def _straight_lining(c: _Columns, rule: StraightLiningExclusion) -> list[dict[str, str]]:
    rows = c.kind != "attention"
    pid, crit, task, response = c.participant_id[rows], c.criterion[rows], c.task_id[rows], c.response()[rows]
    group, keys = _groups(pid, crit)
    n_tasks, n_responses = _distinct(group, task, len(keys)), _distinct(group, response, len(keys))
    first = _first_rows(group, len(keys))
    return [_participant_row(p, rule.rule, f"{k}: same response '{response[first[g]]}' for all {n_tasks[g]} tasks")
            for g, (p, k) in enumerate(keys) if n_tasks[g] >= rule.min_tasks and n_responses[g] == 1]


def _same_side(c: _Columns, rule: SameSideExclusion) -> list[dict[str, str]]:
    rows = (c.kind != "attention") & np.isin(c.choice, ("A", "B"))
    pid, task, first = c.participant_id[rows], c.task_id[rows], c.choice[rows] == "A"
    group, keys = _groups(pid)
    n_tasks = _distinct(group, task, len(keys))
    n = np.bincount(group, minlength=len(keys))
    a = np.bincount(group, weights=first, minlength=len(keys)).astype(int)
    most = np.maximum(a, n - a)
    share = most / np.maximum(n, 1)
    hit = (n_tasks >= rule.min_tasks) & (share >= rule.max_share - 1e-12)
    return [_participant_row(p, rule.rule, f"chose the output shown {'first (A)' if a[g] >= n[g] - a[g] else 'second (B)'} "
                                           f"in {most[g]} of {n[g]} pairwise answers ({share[g]:.0%}; "
                                           f"excluded from {rule.max_share:.0%}) over {n_tasks[g]} tasks")
            for g, (p,) in enumerate(keys) if hit[g]]


def fails_check(row_value: float, row_choice: str, expected: Any) -> bool:
    """Whether a long-table row (its ``value`` and ``choice``) is not the answer ``expected`` (None: nothing is
    expected, it never fails): the attention rule's judge of a row, and the practice feedback's."""
    if expected is None:
        return False
    if row_choice:
        return row_choice != str(expected)
    try:
        return bool(np.isnan(row_value) or not np.isclose(row_value, float(expected)))
    except (TypeError, ValueError):
        return True


def _attention(c: _Columns, rule: AttentionExclusion, expected: dict[str, Any]) -> list[dict[str, str]]:
    checks = np.flatnonzero(c.kind == "attention")
    failed: dict[str, set[str]] = {}
    seen: dict[str, set[str]] = {}
    for i in checks:  # attention checks only: a few per participant
        pid, task = str(c.participant_id[i]), str(c.task_id[i])
        seen.setdefault(pid, set()).add(task)
        if fails_check(c.value[i], str(c.choice[i]), expected.get(task)):
            failed.setdefault(pid, set()).add(task)
    out = []
    for pid in sorted(seen):
        bad = sorted(failed.get(pid, ()))
        if len(bad) > rule.max_failures:
            out.append(_participant_row(pid, rule.rule, f"failed {len(bad)} of {len(seen[pid])} attention checks "
                                                        f"(tolerated: {rule.max_failures}): {', '.join(bad[:3])}"))
    return out


def _min_time(c: _Columns, rule: MinTimeExclusion) -> list[dict[str, str]]:
    timed = np.flatnonzero(~np.isnan(c.seconds))
    if rule.scope == "judgement":
        return [{"scope": "judgement", "participant_id": str(c.participant_id[i]), "task_id": str(c.task_id[i]),
                 "criterion": str(c.criterion[i]), "system": str(c.system[i]), "rule": rule.rule,
                 "detail": f"{c.seconds[i]:g} s < {rule.seconds:g} s"}
                for i in timed[c.seconds[timed] < rule.seconds]]
    group, keys = _groups(c.participant_id[timed], c.task_id[timed])
    first = _first_rows(group, len(keys))  # each task's time: its first timed row
    per_task = c.seconds[timed][first] if keys else np.array([])
    people = np.array([k[0] for k in keys], dtype=str)
    out = []
    for pid in np.unique(people):
        med = float(np.median(per_task[people == pid]))
        if med < rule.seconds:
            out.append(_participant_row(str(pid), rule.rule, f"median {med:g} s per task < {rule.seconds:g} s"))
    return out


def _inconsistent(c: _Columns, rule: InconsistentExclusion, repeat_of: dict[str, str]) -> list[dict[str, str]]:
    repeats = np.flatnonzero(c.kind == "repeat")
    if not repeats.size:
        return []
    answer = c.answer()

    def key(i: int, original: str) -> tuple[str, str, str, str]:
        a, b = str(c.system[i]), str(c.system_b[i])
        return str(c.participant_id[i]), original, str(c.criterion[i]), a if not b else "+".join(sorted((a, b)))

    originals: dict[tuple[str, str, str, str], list[int]] = {}
    for i in np.flatnonzero(c.kind == "task").tolist():
        originals.setdefault(key(i, str(c.task_id[i])), []).append(i)
    bad: dict[str, set[str]] = {}
    for r in repeats:  # repeated tasks only: a few per participant
        task = str(c.task_id[r])
        k = key(int(r), repeat_of.get(task, task.removesuffix("|repeat")))
        for o in originals.get(k, ()):
            differs = (answer[r] != answer[o]) if c.choice[r] else bool(abs(c.value[r] - c.value[o]) > rule.max_difference)
            if differs:
                bad.setdefault(k[0], set()).add(k[1])
    out = []
    for pid in sorted(bad):
        found = sorted(bad[pid])
        if len(found) > rule.max_failures:
            out.append(_participant_row(pid, rule.rule, f"{len(found)} inconsistent repeated task(s) "
                                                        f"(tolerated: {rule.max_failures}): {', '.join(found[:3])}"))
    return out


def _pairwise_rows(c: _Columns) -> np.ndarray:
    """The task rows of pairwise criteria (two systems shown)."""
    return np.flatnonzero((c.kind == "task") & (c.system_b != "") & (c.choice != ""))


def _vote_outlier(c: _Columns, rule: VoteOutlierExclusion) -> list[dict[str, str]]:
    from humeval.stats.vote_quality import vote_outliers

    rows = _pairwise_rows(c)
    out = []
    for crit in np.unique(c.criterion[rows]):
        mine = rows[c.criterion[rows] == crit]
        won = np.where(c.choice[mine] == "A", 1.0, np.where(c.choice[mine] == "B", 0.0, np.nan))
        decisive = np.isfinite(won)
        if len(np.unique(c.participant_id[mine][decisive])) < 2 or len(
                np.unique(np.concatenate([c.system[mine][decisive], c.system_b[mine][decisive]]))) < 2:
            continue  # no crowd to compare with (one participant: the server's live screening)
        test = vote_outliers(c.participant_id[mine], c.system[mine], c.system_b[mine], won, alpha=rule.alpha)
        for i in np.flatnonzero(test.flagged):
            out.append(_participant_row(
                test.participants[i], rule.rule,
                f"{crit}: votes unlike the other participants' Bradley-Terry model (e-value {np.exp(min(test.log_e[i], 700)):.3g} "
                f">= {test.threshold:g} = {len(test.participants)} participants / alpha {rule.alpha:g}, at decisive vote "
                f"{test.flagged_at[i]} of {test.votes[i]}; strongest alternative: {test.direction[i]})"))
    return out


def _vote_cap(c: _Columns, rule: VoteCapExclusion) -> list[dict[str, str]]:
    rows = _pairwise_rows(c)
    group, keys = _groups(c.participant_id[rows], c.criterion[rows])
    if not keys:
        return []
    order = np.argsort(group, kind="stable")
    rank = np.empty(rows.size, dtype=int)
    start = np.searchsorted(group[order], np.arange(len(keys)))
    rank[order] = np.arange(rows.size) - start[group[order]] + 1
    total = np.bincount(group, minlength=len(keys))
    return [{"scope": "judgement", "participant_id": str(c.participant_id[i]), "task_id": str(c.task_id[i]),
             "criterion": str(c.criterion[i]), "system": str(c.system[i]), "rule": rule.rule,
             "detail": f"vote {rank[j]} of {total[group[j]]} on {c.criterion[i]}; the protocol counts "
                       f"{rule.max_votes} per participant"}
            for j, i in enumerate(rows) if rank[j] > rule.max_votes]


def exclusion_rows(table: Mapping[str, Any], protocol: Protocol,
                   lists: list[ParticipantList] | None = None) -> list[dict[str, str]]:
    """Apply the protocol's exclusion rules to the judgements ``table``; one record per (excluded unit, rule).

    ``table``: the long judgements table, as a DataFrame or as a mapping of column -> values
    (no pandas needed: the server applies the same rules live). ``lists`` (the participant
    lists) supply the expected answers of attention checks and the originals of repeated
    tasks; without them attention checks cannot be scored, and that is an error when the
    protocol has an ``attention`` rule.
    """
    if not protocol.exclusion:
        return []
    c = _Columns(table)
    lists = lists or []
    rows: list[dict[str, str]] = []
    repeat_of = {t.task_id: t.repeat_of for pl in lists for t in pl.tasks if t.repeat_of}
    for rule in protocol.exclusion:
        if isinstance(rule, StraightLiningExclusion):
            rows += _straight_lining(c, rule)
        elif isinstance(rule, SameSideExclusion):
            rows += _same_side(c, rule)
        elif isinstance(rule, AttentionExclusion):
            expected = expected_answers(lists)
            if not expected and (c.kind == "attention").any():
                raise DataError("exclusion: attention rule: the participant lists hold no attention checks with "
                                "expected answers; cannot score the attention-check judgements")
            rows += _attention(c, rule, expected)
        elif isinstance(rule, MinTimeExclusion):
            rows += _min_time(c, rule)
        elif isinstance(rule, InconsistentExclusion):
            rows += _inconsistent(c, rule, repeat_of)
        elif isinstance(rule, VoteOutlierExclusion):
            rows += _vote_outlier(c, rule)
        elif isinstance(rule, VoteCapExclusion):
            rows += _vote_cap(c, rule)
    return rows



def participant_exclusions(protocol: Protocol, tasks: Mapping[str, Task], judgements: list[dict[str, Any]],
                           ) -> tuple[bool, set[tuple[str, str]], str]:
    """The rules on one participant's judgements as the store keeps them (the server settles participants and
    screens them at the end with it): (participant excluded, excluded (task, criterion), why). ``tasks``: the
    study's tasks by id (the attention checks and repeats done give the expected answers and originals)."""
    if not protocol.exclusion or not judgements:
        return False, set(), ""
    from humeval.judgements import JUDGEMENT_COLUMNS, long_rows

    rows = long_rows(protocol, judgements)
    table = {c: [r.get(c) for r in rows] for c in JUDGEMENT_COLUMNS}
    checks = [tasks[t] for t in sorted({j["task_id"] for j in judgements}) if tasks[t].kind != "task"]
    found = exclusion_rows(table, protocol, [ParticipantList("store", 0, checks)])
    keys = {(r["task_id"], r["criterion"]) for r in found if r["scope"] == "judgement"}
    reason = "; ".join(f"{r['rule']}: {r['detail']}" for r in found)
    return any(r["scope"] == "participant" for r in found), keys, reason


def exclusions(frame: pd.DataFrame, protocol: Protocol, lists: list[ParticipantList] | None = None) -> pd.DataFrame:
    """:func:`exclusion_rows` as a table (columns :data:`EXCLUDED_COLUMNS`)."""
    import pandas as pd

    return pd.DataFrame(exclusion_rows(frame, protocol, lists), columns=EXCLUDED_COLUMNS)


def valid_judgements(frame: pd.DataFrame, excluded: pd.DataFrame) -> pd.DataFrame:
    """The judgements not excluded (a filtered copy; ``frame`` is unchanged)."""
    from humeval.judgements import excluded_mask

    return frame.loc[~excluded_mask(frame, excluded)].copy()


def exclusion_counts(frame: pd.DataFrame, excluded: pd.DataFrame, protocol: Protocol,
                     lists: list[ParticipantList] | None = None) -> dict[str, Any]:
    """Counts per rule and overall: participants and judgements excluded, judgements kept.

    Per rule also ``only``: the participants that rule excluded and no other (what the detector adds). With
    ``lists`` (the attention checks' expected answers), ``attention_checks``: per criterion and expected answer
    (the side ``A``/``B`` of a pair, a scale's point), the check judgements answered and how many of them failed,
    over every participant (those excluded by other rules included).
    """
    from humeval.judgements import excluded_mask

    people = excluded.loc[excluded["scope"] == "participant", ["participant_id", "rule"]].drop_duplicates()
    rules_of = people.groupby("participant_id")["rule"].nunique()
    alone = set(rules_of.index[rules_of == 1])
    per_rule = []
    for rule in protocol.exclusion:
        sub = excluded[excluded["rule"] == rule.rule]
        rows = int(excluded_mask(frame, sub).sum()) if not sub.empty else 0
        ids = set(sub.loc[sub["scope"] == "participant", "participant_id"])
        per_rule.append({"rule": rule.rule, "parameters": rule.model_dump(exclude={"rule"}),
                         "participants": len(ids), "only": len(ids & alone), "judgements": rows})
    mask = excluded_mask(frame, excluded)
    untimed = int(frame["seconds"].isna().sum()) if any(isinstance(r, MinTimeExclusion) for r in protocol.exclusion) else 0
    out: dict[str, Any] = {
        "rules": per_rule,
        "participants_total": int(frame["participant_id"].nunique()),
        "participants_excluded": int(excluded.loc[excluded["scope"] == "participant", "participant_id"].nunique()),
        "judgements_total": len(frame),
        "judgements_excluded": int(mask.sum()),
        "judgements_kept": int((~mask).sum()),
        "untimed": untimed,
    }
    attention = next((r for r in protocol.exclusion if isinstance(r, AttentionExclusion)), None)
    if lists is not None and attention is not None:
        out["attention_checks"] = attention_check_counts(frame, expected_answers(lists))
        if protocol.design.qualification:
            checks = {t.task_id for pl in lists for t in pl.tasks if is_qualification(t, protocol.design)}
            out["qualification"] = qualification_counts(frame, expected_answers(lists), checks, attention.max_failures)
    return out


def qualification_counts(frame: pd.DataFrame, expected: dict[str, Any], checks: set[str], max_failures: int,
                         ) -> dict[str, int]:
    """The participants who answered the qualification (``checks``: its tasks, the first ``design.qualification``
    attention checks of every list, :func:`humeval.design.tasks.is_qualification`), and of them those who ``passed``
    (at most ``max_failures`` of its checks failed, as the ``attention`` rule judges them), passed with a second
    attempt at a check (``passed_retried``: the export's ``revision`` above 0, ``design.qualification_attempts``),
    and ``failed``; ``retried``: those who answered a check again, passed or not."""
    import pandas as pd

    rows = frame[frame["task_id"].isin(checks)]
    per_check = pd.DataFrame({
        "participant_id": rows["participant_id"].to_numpy(), "task_id": rows["task_id"].to_numpy(),
        "failed": [fails_check(v, str(ch), expected.get(str(t))) for v, ch, t in
                   zip(rows["value"], rows["choice"], rows["task_id"], strict=True)],  # a few per participant
        "retried": (rows["revision"] > 0).to_numpy(),
    }).groupby(["participant_id", "task_id"]).any()
    per = per_check.groupby(level="participant_id").agg(failed=("failed", "sum"), retried=("retried", "any"))
    passed = per["failed"] <= max_failures
    return {"participants": len(per), "passed": int(passed.sum()), "passed_retried": int((passed & per["retried"]).sum()),
            "failed": int((~passed).sum()), "retried": int(per["retried"].sum())}


def attention_check_counts(frame: Mapping[str, Any], expected: dict[str, Any]) -> list[dict[str, Any]]:
    """Per (criterion, expected answer): attention-check judgements ``answered`` and ``failed`` (as the
    ``attention`` rule scores them), in the order of the criteria and of the answers."""
    c = _Columns(frame)
    checks = np.flatnonzero(c.kind == "attention")
    if not checks.size:
        return []
    asked = np.array([str(expected.get(str(t), "")) for t in c.task_id[checks]], dtype=str)
    failed = np.array([fails_check(c.value[i], str(c.choice[i]), expected.get(str(c.task_id[i]))) for i in checks])
    group, keys = _groups(c.criterion[checks], asked)
    answered = np.bincount(group, minlength=len(keys))
    missed = np.bincount(group, weights=failed, minlength=len(keys)).astype(int)

    def order(k: tuple[str, ...]) -> tuple[str, float, str]:
        try:
            return k[0], float(k[1]), ""
        except ValueError:
            return k[0], 0.0, k[1]

    ranked = sorted(range(len(keys)), key=lambda g: order(keys[g]))
    return [{"criterion": keys[g][0], "expected": keys[g][1], "answered": int(answered[g]), "failed": int(missed[g])}
            for g in ranked]
