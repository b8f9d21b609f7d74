"""The crowd: who arrives when, how fast they work, and how many tasks they complete.

A :class:`Crowd` is a recorded crowd, one participant per entry: ``arrived`` (seconds from the first
arrival), their seconds per task (or only a session's length) and the tasks they ``completed``. It
is read from

* a crowd file (:func:`read_crowd`): CSV or JSONL, one row per participant, ``arrived`` in seconds
  or as an ISO-8601 time, and either ``seconds_per_task`` (a list: a JSON list, or in CSV also
  ``;``-separated numbers) or ``session_seconds``; ``completed`` (tasks) optional, by default every
  task listed (``seconds_per_task``) or the whole session (``session_seconds``);
* an AMT batch-results CSV (detected by its header; :func:`read_amt_crowd`): one participant per
  ``WorkerId``, arriving at their first ``AcceptTime``, paced by the gaps between their
  ``SubmitTime`` s (the first task's time is its ``WorkTimeInSeconds``), ``completed`` = the tasks
  they did.

:func:`fit_crowd` summarises a crowd's *shape* (:class:`CrowdShape`) for a session of ``tasks``
tasks:

* **burst**: the share of participants who arrive in the first ``burst_window`` seconds (600: the
  launch burst) and their mean arrival time (``burst_seconds``, the burst's time scale); the
  **stream**: the others' rate (``stream_per_hour``: participants after the window / (span -
  window)); ``burst_hours``: the burst's size in hours of the stream (burst participants /
  stream rate), the part of the shape that carries over to another study's rate;
* **pace**: ``pace_sd``, the log-sd of a session of ``tasks`` tasks (the sum of the first
  ``tasks`` task times, over participants who did that many), and ``pace_ratio``, the median
  session over ``tasks`` x the median seconds per task (how much longer a real session is than
  the median pace says: pauses between tasks, slow tasks);
* **quitters**: ``quit_share``, the share of participants who completed fewer than ``tasks``, and
  ``quit_done_share``, the mean share of the ``tasks`` that those completed.

:data:`DEFAULT_SHAPE` is :func:`default_shape` of the three AMT batches of the Dynamic Human
Evaluation study (../shared/data/dhe, data card there), ``tasks`` = 11; its constants are re-fitted
from the data by tests/unit/simulate/test_arrivals.py when the data is present.
Checked against: hand-computed crowds (tests/unit/simulate/test_arrivals.py) and the issue's
measured numbers of the AMT batches (53/69, 49/73, 79/91 in the first 10 minutes; 11-task log-sd
0.64-0.81; 30-41 % with fewer than 11 tasks).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from humeval.errors import DataError
from humeval.files import check_json_depth, iter_jsonl

__all__ = ["DEFAULT_SHAPE", "Crowd", "CrowdShape", "default_shape", "fit_crowd", "read_amt_crowd", "read_crowd"]

#: the launch burst: arrivals in the first 10 minutes (the issue's measure)
BURST_WINDOW = 600.0
#: the session length of the AMT fits (the issue's 11-task session)
FIT_TASKS = 11
_AMT_COLUMNS = ("WorkerId", "AcceptTime", "SubmitTime", "WorkTimeInSeconds")


@dataclass(frozen=True)
class Crowd:
    """A recorded crowd (see the module docstring).

    ``arrived``: (N,) seconds from the first arrival, ascending, the first 0; ``seconds_per_task``:
    (N, m) seconds of each participant's tasks in order, NaN after their last, or None when only
    ``session_seconds`` (N,) is known; ``completed``: (N,) tasks completed, -1 where not given (every
    task listed, or the whole session); ``source``: the file read.
    """

    arrived: np.ndarray
    seconds_per_task: np.ndarray | None
    session_seconds: np.ndarray | None
    completed: np.ndarray
    source: str

    def __post_init__(self) -> None:
        if (self.seconds_per_task is None) == (self.session_seconds is None):
            raise ValueError("a crowd has either seconds_per_task or session_seconds")

    @property
    def participants(self) -> int:
        return int(self.arrived.size)

    @property
    def span_seconds(self) -> float:
        return float(self.arrived[-1]) if self.arrived.size else 0.0

    @property
    def listed(self) -> np.ndarray:
        """(N,) tasks with a recorded time (per-task form), else -1."""
        if self.seconds_per_task is None:
            return np.full(self.participants, -1)
        return (~np.isnan(self.seconds_per_task)).sum(axis=1)

    def done(self, tasks: int) -> np.ndarray:
        """(N,) tasks each participant completes of a session of ``tasks`` tasks."""
        given = np.where(self.completed >= 0, self.completed, np.where(self.listed >= 0, self.listed, tasks))
        return np.minimum(given, tasks)

    def median_task_seconds(self) -> float:
        """The median of every recorded task time (per-task form), else NaN."""
        if self.seconds_per_task is None:
            return float("nan")
        return float(np.nanmedian(self.seconds_per_task))

    def time_for(self, tasks: int) -> np.ndarray:
        """(N,) seconds each participant spends on the first ``tasks`` tasks of a session (or until they quit:
        at most their completed tasks). Per-task form: the sum of their recorded times, tasks beyond the
        recorded ones at their own mean pace; session form: ``session_seconds`` as recorded."""
        if self.seconds_per_task is None:
            return np.asarray(self.session_seconds, dtype=float)
        k = self.done(tasks)
        s = self.seconds_per_task
        cols = np.arange(s.shape[1])[None, :]
        recorded = np.where(cols < k[:, None], np.nan_to_num(s, nan=0.0), 0.0).sum(axis=1)
        listed = self.listed
        n_rec = np.minimum(k, listed)
        mean_pace = np.nansum(s, axis=1) / np.maximum(listed, 1)
        return recorded + (k - n_rec) * mean_pace


@dataclass(frozen=True)
class CrowdShape:
    """A crowd's shape for sessions of ``tasks`` tasks (the fields: see the module docstring)."""

    participants: int
    tasks: int
    burst_share: float
    burst_seconds: float
    stream_per_hour: float
    burst_hours: float
    pace_sd: float
    pace_ratio: float
    quit_share: float
    quit_done_share: float
    span_hours: float
    source: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """One line: what a budget table prints about the crowd."""
        return (f"{self.source}: {self.participants} participants over {self.span_hours:.2f} h, "
                f"{self.burst_share:.0%} in the first {BURST_WINDOW / 60:g} min (time scale {self.burst_seconds:.0f} s), "
                f"{self.tasks}-task session log-sd {self.pace_sd:.2f}, {self.pace_ratio:.2f}x the median pace, "
                f"{self.quit_share:.0%} completed fewer than {self.tasks} tasks")


def fit_crowd(crowd: Crowd, *, tasks: int = FIT_TASKS, burst_window: float = BURST_WINDOW) -> CrowdShape:
    """The shape of ``crowd`` for sessions of ``tasks`` tasks (formulas in the module docstring)."""
    if tasks < 1:
        raise ValueError(f"tasks must be at least 1, got {tasks!r}")
    a = crowd.arrived
    n = crowd.participants
    in_burst = a < burst_window
    nb = int(in_burst.sum())
    span = crowd.span_seconds
    after = n - nb
    stream = after / ((span - burst_window) / 3600) if after and span > burst_window else float("nan")
    done = crowd.done(tasks)
    full = done >= tasks
    session = crowd.time_for(tasks)[full]
    session = session[session > 0]
    sd = float(np.log(session).std(ddof=1)) if session.size > 1 else float("nan")
    median_task = crowd.median_task_seconds()
    ratio = float(np.median(session) / (tasks * median_task)) if session.size and median_task > 0 else 1.0
    return CrowdShape(participants=n, tasks=int(tasks), burst_share=nb / n, burst_seconds=float(a[in_burst].mean()),
                      stream_per_hour=float(stream), burst_hours=nb / stream if stream > 0 else float("nan"),
                      pace_sd=sd, pace_ratio=ratio, quit_share=float(np.mean(~full)),
                      quit_done_share=float(np.mean(done[~full] / tasks)) if (~full).any() else 0.0,
                      span_hours=span / 3600,
                      source=crowd.source)


def default_shape(shapes: Sequence[CrowdShape]) -> CrowdShape:
    """The default crowd from fitted crowds: geometric means of the time scales and ratios (``burst_seconds``,
    ``burst_hours``, ``pace_ratio``, ``stream_per_hour``), arithmetic means of the shares and of ``pace_sd``."""
    def geo(name: str) -> float:
        return float(np.exp(np.mean([math.log(getattr(s, name)) for s in shapes])))

    def mean(name: str) -> float:
        return float(np.mean([getattr(s, name) for s in shapes]))

    return CrowdShape(participants=sum(s.participants for s in shapes), tasks=shapes[0].tasks,
                      burst_share=mean("burst_share"), burst_seconds=geo("burst_seconds"),
                      stream_per_hour=geo("stream_per_hour"), burst_hours=geo("burst_hours"), pace_sd=mean("pace_sd"),
                      pace_ratio=geo("pace_ratio"), quit_share=mean("quit_share"),
                      quit_done_share=mean("quit_done_share"), span_hours=mean("span_hours"),
                      source=f"default crowd (fitted to {len(shapes)} AMT batches)")


#: :func:`default_shape` of :func:`fit_crowd` of the three DHE AMT batches (re-fitted by the tests; rounded to 4 digits)
DEFAULT_SHAPE = CrowdShape(participants=233, tasks=11, burst_share=0.7692, burst_seconds=188.5, stream_per_hour=50.60,
                           burst_hours=1.166, pace_sd=0.7325, pace_ratio=2.449, quit_share=0.3346, quit_done_share=0.3377,
                           span_hours=0.6238, source="default crowd (fitted to 3 AMT batches)")


# --- readers ---------------------------------------------------------------------------------------------------


def read_crowd(path: str | Path) -> Crowd:
    """A crowd file (CSV or JSONL, one row per participant) or an AMT batch-results CSV (see the module docstring)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: crowd file not found")
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return _crowd_from_rows(p, list(iter_jsonl(p, what="crowd file")))
    if suffix != ".csv":
        raise DataError(f"{p}: a crowd file is CSV or JSONL (.csv, .jsonl), got '{p.suffix}'")
    try:
        frame = pd.read_csv(p, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"{p}: not a readable CSV file ({exc})") from None
    if set(_AMT_COLUMNS) <= set(frame.columns):
        return _amt_crowd(p, frame)
    rows = [(i + 2, {k: v for k, v in rec.items() if v != ""}) for i, rec in enumerate(frame.to_dict("records"))]
    return _crowd_from_rows(p, rows)


def read_amt_crowd(path: str | Path) -> Crowd:
    """An AMT batch-results CSV as a crowd (see the module docstring)."""
    from humeval.data.dhe import read_amt_csv

    p = Path(path)
    return _amt_crowd(p, read_amt_csv(p, _AMT_COLUMNS))


def _amt_time(p: Path, values: pd.Series, column: str) -> pd.Series:
    """AMT's times (``Mon May 17 08:49:33 PDT 2021``) as datetimes; the zone name is dropped (one batch, one zone)."""
    parsed = pd.to_datetime(values.str.replace(r" [A-Z]{2,5} (?=\d{4}$)", " ", regex=True),
                            format="%a %b %d %H:%M:%S %Y", errors="coerce")
    bad = parsed.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"{p}:{i + 2}: {column} {values.iloc[i]!r} is not an AMT time "
                        "(like 'Mon May 17 08:49:33 PDT 2021')")
    return parsed


def _amt_crowd(p: Path, frame: pd.DataFrame) -> Crowd:
    missing = [c for c in _AMT_COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"{p}: AMT batch CSV is missing column(s) {', '.join(missing)}; a crowd needs "
                        f"{', '.join(_AMT_COLUMNS)}")
    if frame.empty:
        raise DataError(f"{p}: AMT batch CSV has no rows")
    work = pd.to_numeric(frame["WorkTimeInSeconds"], errors="coerce")
    bad = work.isna() | (work < 0)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"{p}:{i + 2}: WorkTimeInSeconds {frame['WorkTimeInSeconds'].iloc[i]!r} is not a number "
                        "of seconds >= 0")
    f = pd.DataFrame({"worker": frame["WorkerId"].to_numpy(),
                      "accept": _amt_time(p, frame["AcceptTime"], "AcceptTime"),
                      "submit": _amt_time(p, frame["SubmitTime"], "SubmitTime"), "work": work.to_numpy(dtype=float)})
    f = f.sort_values(["worker", "submit", "accept"], kind="stable")
    g = f.groupby("worker", sort=False)
    gap = g["submit"].diff().dt.total_seconds()
    f["seconds"] = gap.where(gap.notna(), f["work"]).to_numpy()
    f["k"] = g.cumcount().to_numpy()
    first = g["accept"].min()
    order = first.sort_values(kind="stable").index
    t0 = first.min()
    arrived = (first[order] - t0).dt.total_seconds().to_numpy()
    pos = pd.Series(np.arange(len(order)), index=order)
    counts = g.size()[order].to_numpy()
    table = np.full((len(order), int(counts.max())), np.nan)
    table[pos[f["worker"]].to_numpy(), f["k"].to_numpy()] = f["seconds"].to_numpy()
    return Crowd(arrived=arrived.astype(float), seconds_per_task=table, session_seconds=None,
                 completed=counts.astype(np.int64), source=p.name)


def _crowd_from_rows(p: Path, rows: list[tuple[int, dict[str, Any]]]) -> Crowd:
    """A crowd from a crowd file's rows (line number, record)."""
    if not rows:
        raise DataError(f"{p}: the crowd file has no participants (a row per participant: 'arrived' and "
                        "'seconds_per_task' or 'session_seconds')")
    known = {"arrived", "seconds_per_task", "session_seconds", "completed", "participant"}
    for line, rec in rows:
        extra = sorted(set(rec) - known)
        if extra:
            raise DataError(f"{p}:{line}: unknown field(s) {', '.join(extra)}; a crowd row has "
                            f"{', '.join(sorted(known))}")
        if "arrived" not in rec:
            raise DataError(f"{p}:{line}: arrived is missing (seconds from the launch, or an ISO-8601 time)")
    forms = {("seconds_per_task" in rec, "session_seconds" in rec) for _, rec in rows}
    for line, rec in rows:
        has = ("seconds_per_task" in rec, "session_seconds" in rec)
        if has in ((True, True), (False, False)):
            raise DataError(f"{p}:{line}: give either seconds_per_task (a list of seconds) or session_seconds "
                            f"(one number), got {'both' if has[0] else 'neither'}")
    if len(forms) > 1:
        raise DataError(f"{p}: some rows give seconds_per_task and others session_seconds; a crowd file uses one "
                        "of the two for every participant")
    arrived = _arrivals(p, rows)
    completed = np.array([_count(p, line, rec.get("completed")) for line, rec in rows], dtype=np.int64)
    if "session_seconds" in rows[0][1]:
        session = np.array([_seconds(p, line, "session_seconds", rec["session_seconds"]) for line, rec in rows])
        order = np.argsort(arrived, kind="stable")
        return Crowd(arrived=arrived[order] - arrived.min(), seconds_per_task=None, session_seconds=session[order],
                     completed=completed[order], source=p.name)
    lists = [_task_list(p, line, rec["seconds_per_task"]) for line, rec in rows]
    width = max(len(x) for x in lists)
    table = np.full((len(lists), width), np.nan)
    for i, x in enumerate(lists):  # one row per participant of a user's file (not a hot path)
        table[i, : len(x)] = x
    order = np.argsort(arrived, kind="stable")
    return Crowd(arrived=arrived[order] - arrived.min(), seconds_per_task=table[order], session_seconds=None,
                 completed=completed[order], source=p.name)


def _arrivals(p: Path, rows: list[tuple[int, dict[str, Any]]]) -> np.ndarray:
    """``arrived`` of every row in seconds: numbers (seconds) or ISO-8601 times, one kind per file."""
    raw = pd.Series([rec["arrived"] for _, rec in rows], dtype=object)
    numbers = pd.to_numeric(raw, errors="coerce")
    if numbers.notna().all():
        bad = ~np.isfinite(numbers.to_numpy(dtype=float)) | (numbers.to_numpy(dtype=float) < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(f"{p}:{rows[i][0]}: arrived {raw[i]!r} is not a number of seconds >= 0")
        return numbers.to_numpy(dtype=float)
    times = pd.to_datetime(raw.astype(str), format="ISO8601", errors="coerce", utc=True)
    bad = times.isna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"{p}:{rows[i][0]}: arrived {raw[i]!r} is neither seconds nor an ISO-8601 time "
                        "(like 2026-05-17T08:49:33Z); one file uses one of the two")
    return (times - times.min()).dt.total_seconds().to_numpy(dtype=float)


def _seconds(p: Path, line: int, name: str, value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = float("nan")
    if not (math.isfinite(x) and x >= 0) or isinstance(value, bool):
        raise DataError(f"{p}:{line}: {name} {value!r} is not a number of seconds >= 0")
    return x


def _count(p: Path, line: int, value: Any) -> int:
    if value is None:
        return -1
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = float("nan")
    if isinstance(value, bool) or not (math.isfinite(x) and x >= 0 and x == int(x)):
        raise DataError(f"{p}:{line}: completed {value!r} is not a whole number of tasks >= 0")
    return int(x)


def _task_list(p: Path, line: int, value: Any) -> list[float]:
    """``seconds_per_task``: a list (JSONL), or in CSV a JSON list or ``;``-separated numbers."""
    items = value
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            check_json_depth(text, where=f"{p}:{line}: seconds_per_task")
            try:
                items = json.loads(text)
            except json.JSONDecodeError:
                raise DataError(f"{p}:{line}: seconds_per_task {value!r} is not a JSON list of seconds") from None
        else:
            items = [x for x in text.split(";") if x.strip()]
    if not isinstance(items, list) or not items:
        raise DataError(f"{p}:{line}: seconds_per_task {value!r} is not a non-empty list of seconds (a JSON list, "
                        "or in CSV numbers separated by ';')")
    return [_seconds(p, line, "seconds_per_task", x) for x in items]
