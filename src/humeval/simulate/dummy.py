"""Dummy responses for rehearsing a study end to end (Thomson & Belz, section 3.7).

Three kinds, as in the paper's example experiment:

* ``random``: every response uniform over the scale;
* ``static``: each system always gets the same score (``dry_run.static``, by default
  evenly spaced inside the scale: 2, 3, 4 for three systems on a 5-point scale);
* ``normal``: normal around the static score with ``dry_run.sd`` (1.0), rounded and
  clipped to the scale.

Magnitude and RankME scores live on a log scale around the modulus (a quarter to four
times it). Dummy participants answer attention checks correctly. Pairwise choices
compare the two systems' dummy scores (a tie is offered only when the criterion has one).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from humeval.design.tasks import ParticipantList
from humeval.errors import DataError, HumevalError, did_you_mean
from humeval.protocol.models import Criterion, Protocol
from humeval.rng import as_generator
from humeval.tasks import Scale

__all__ = ["DUMMY_KINDS", "Scale", "dummy_judgements", "scale_of"]

DUMMY_KINDS = ("random", "static", "normal")


def scale_of(criterion: Criterion) -> Scale:
    """The range dummy and simulated participants draw ``criterion``'s scores on (its task type's)."""
    return criterion.task.scale(criterion)


def _rows(lists: list[ParticipantList], protocol: Protocol, rng: np.random.Generator) -> pd.DataFrame:
    """One row per (list, task, criterion, rated system), display order randomised as on the server."""
    pairwise = {c.name: c.task.pairwise for c in protocol.criteria}
    rows = []
    for pl in lists:
        participant = pl.list_id
        for task in pl.tasks:
            if task.kind == "practice":  # answered apart (:func:`_practice_rows`): it shows no system's output
                continue
            systems = list(task.systems)
            if protocol.presentation.randomise_order:
                systems = [systems[i] for i in rng.permutation(len(systems))]
            for criterion in task.criteria:
                base = {
                    "participant_id": participant,
                    "list_id": pl.list_id,
                    "task_id": task.task_id,
                    "kind": task.kind,
                    "item_id": task.item_id,
                    "criterion": criterion,
                    "expected": task.expected,
                }
                if pairwise[criterion]:
                    rows.append(base | {"system": systems[0], "system_b": systems[1], "position": 0})
                else:
                    rows.extend(base | {"system": s, "system_b": "", "position": p} for p, s in enumerate(systems))
    return pd.DataFrame(rows)


def _practice_rows(lists: list[ParticipantList], protocol: Protocol) -> pd.DataFrame:
    """The practice items (``design.practice``) of every list answered as they expect (the first answer an attention
    check could ask for when an item names none): one answer, as a participant who read the feedback gives it."""
    rows = []
    for pl in lists:
        for task in pl.tasks:
            if task.kind != "practice":
                continue
            c = protocol.criterion(task.criteria[0])
            answer = task.expected if task.expected is not None else c.task.check_answers(c)[0]
            base = {"participant_id": pl.list_id, "list_id": pl.list_id, "task_id": task.task_id, "kind": task.kind,
                    "item_id": task.item_id, "expected": task.expected}
            rows += c.task.long_rows(c, c.task.attention_answer(c, answer, len(task.systems)), list(task.systems),
                                     base, None)
    return pd.DataFrame(rows)


def _static_scores(protocol: Protocol, systems: list[str], criterion: Criterion) -> dict[str, float]:
    scale = scale_of(criterion)
    given = protocol.dry_run.static
    if given:
        missing = [s for s in systems if s not in given]
        if missing:
            raise HumevalError(f"dry_run.static: no score for system '{missing[0]}'. Give one for each of: {', '.join(systems)}")
        if scale.log:
            return {s: float(np.log(given[s])) for s in systems}
        return {s: float(given[s]) for s in systems}
    spaced = np.linspace(scale.low, scale.high, len(systems) + 2)[1:-1]
    if scale.discrete:
        spaced = np.round(spaced)
    return dict(zip(systems, spaced.tolist(), strict=True))


def _scores(kind: str, systems: np.ndarray, static: dict[str, float], scale: Scale, sd: float,
            rng: np.random.Generator) -> np.ndarray:
    n = len(systems)
    if kind == "random":
        if scale.discrete:
            return rng.integers(int(scale.low), int(scale.high) + 1, size=n).astype(float)
        return rng.uniform(scale.low, scale.high, size=n)
    centre = np.array([static[s] for s in systems], dtype=float)
    if kind == "static":
        return centre
    spread = sd * (scale.high - scale.low) / 4 if scale.log else sd
    values = np.clip(centre + rng.normal(0.0, spread, size=n), scale.low, scale.high)
    return np.round(values) if scale.discrete else values


#: seconds per task of a dummy participant when the protocol declares no time (the median of the draws)
DEFAULT_SECONDS = 12.0
#: log-sd of a dummy participant's seconds per task around that median
SECONDS_SPREAD = 0.4


def declared_seconds(protocol: Protocol, tasks_per_list: int | None = None) -> float:
    """The median seconds per task of dummy and simulated participants: the protocol's declared time
    (``pay.seconds_per_task``, else ``pay.minutes_per_list`` over ``tasks_per_list``), else 12 s. So a rehearsal of a
    study of long articles does not measure 12 s a task and price the study from it (``humeval budget``)."""
    pay = protocol.pay
    if pay.seconds_per_task is not None:
        return float(pay.seconds_per_task)
    if pay.minutes_per_list is not None and tasks_per_list:
        return float(pay.minutes_per_list) * 60 / tasks_per_list
    return DEFAULT_SECONDS


def draw_seconds(rng: np.random.Generator, median: float, size: int | None = None) -> Any:
    """Times on tasks (log-normal around ``median``, log-sd :data:`SECONDS_SPREAD`), rounded to 0.01 s."""
    return np.round(rng.lognormal(np.log(median), SECONDS_SPREAD, size=size), 2)


def dummy_judgements(lists: list[ParticipantList], protocol: Protocol, kind: str, seed: int) -> pd.DataFrame:
    """Dummy judgements of ``kind`` for every task of every participant list."""
    if kind not in DUMMY_KINDS:
        raise HumevalError(f"dry-run: unknown kind '{kind}'. {did_you_mean(kind, DUMMY_KINDS)}")
    rng = as_generator(seed)
    frame = _rows(lists, protocol, rng)
    if frame.empty:
        raise DataError("dry-run: the participant lists hold no tasks")
    systems = sorted(set(frame["system"]) | set(frame["system_b"]) - {""})
    frame["value"] = np.nan
    frame["choice"] = ""
    for criterion in protocol.criteria:
        mask = (frame["criterion"] == criterion.name).to_numpy()
        if not mask.any():
            continue
        scale = scale_of(criterion)
        static = _static_scores(protocol, systems, criterion)
        sub = frame.loc[mask]
        if criterion.task.pairwise:
            a = _scores(kind, sub["system"].to_numpy(), static, scale, protocol.dry_run.sd, rng)
            b = _scores(kind, sub["system_b"].to_numpy(), static, scale, protocol.dry_run.sd, rng)
            coin = np.where(rng.random(len(a)) < 0.5, "A", "B")
            choice = np.where(a > b, "A", np.where(a < b, "B", "tie" if "tie" in criterion.task.choices(criterion) else coin))
            attention = (sub["kind"] == "attention").to_numpy()
            choice = np.where(attention, sub["expected"].astype(str).to_numpy(), choice)
            frame.loc[mask, "choice"] = choice
        else:
            values = _scores(kind, sub["system"].to_numpy(), static, scale, protocol.dry_run.sd, rng)
            if scale.log:
                values = np.exp(values)
            attention = (sub["kind"] == "attention").to_numpy()
            judgement = sub.groupby(["participant_id", "task_id"], sort=False).ngroup().to_numpy()
            value, chosen = criterion.task.dummy_rows(criterion, values, judgement, attention,
                                                      sub["expected"].to_numpy(dtype=object))
            frame.loc[mask, "value"] = value
            if chosen is not None:
                frame.loc[mask, "choice"] = chosen
    if protocol.design.practice:
        practice = _practice_rows(lists, protocol)
        frame = pd.concat([practice[frame.columns.intersection(practice.columns)], frame], ignore_index=True)
    frame["participant_id"] = f"dummy-{kind}-" + frame["participant_id"]
    longest = max((len(pl.tasks) for pl in lists), default=0)
    frame["seconds"] = draw_seconds(rng, declared_seconds(protocol, longest), size=len(frame))
    frame["submitted_at"] = ""
    return frame.drop(columns="expected")
