"""The crowd as data: crowd files, AMT batches as a crowd, the fitted shape and the default crowd's constants."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from humeval.errors import DataError
from humeval.simulate.arrivals import DEFAULT_SHAPE, default_shape, fit_crowd, read_crowd

AMT_HEADER = ["HITId", "WorkerId", "AcceptTime", "SubmitTime", "WorkTimeInSeconds", "Answer.Selection.label"]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_jsonl_seconds_and_task_lists(tmp_path: Path) -> None:
    f = _write(tmp_path / "c.jsonl", "\n".join(json.dumps(r) for r in [
        {"arrived": 30, "seconds_per_task": [10, 20, 30]},
        {"arrived": 10, "seconds_per_task": [5, 5], "completed": 2},
        {"arrived": 70.5, "seconds_per_task": [1, 2, 3, 4], "completed": 5}]) + "\n")
    c = read_crowd(f)
    assert c.arrived.tolist() == [0.0, 20.0, 60.5]  # sorted, from the first arrival
    assert c.done(3).tolist() == [2, 3, 3]
    assert c.time_for(3).tolist() == [10.0, 60.0, 6.0]
    assert c.median_task_seconds() == 5.0  # of 5 5 10 20 30 1 2 3 4
    assert c.time_for(5).tolist() == [10.0, 60.0, 10.0 + 2.5]  # a fifth task at their mean pace
    assert c.done(5).tolist() == [2, 3, 5] and c.done(2).tolist() == [2, 2, 2]


def test_csv_iso_times_and_both_list_forms(tmp_path: Path) -> None:
    f = _write(tmp_path / "c.csv", "arrived,seconds_per_task\n"
               "2026-05-17T08:00:00Z,\"[4, 6]\"\n2026-05-17T08:01:30Z,3;3;3\n2026-05-17T08:00:10+00:00,7\n")
    c = read_crowd(f)
    assert c.arrived.tolist() == [0.0, 10.0, 90.0]
    assert c.listed.tolist() == [2, 1, 3]
    assert c.time_for(3).tolist() == [10.0, 7.0, 9.0]


def test_session_seconds_with_completed(tmp_path: Path) -> None:
    f = _write(tmp_path / "c.csv", "arrived,session_seconds,completed\n0,300,\n60,100,4\n120,600,\n")
    c = read_crowd(f)
    assert c.seconds_per_task is None and c.session_seconds.tolist() == [300.0, 100.0, 600.0]
    assert c.done(10).tolist() == [10, 4, 10]
    shape = fit_crowd(c, tasks=10)
    assert shape.quit_share == pytest.approx(1 / 3) and shape.pace_sd == pytest.approx(np.log([300, 600]).std(ddof=1))


@pytest.mark.parametrize(("text", "match"), [
    ("arrived,seconds_per_task\n0,1;x\n", r"c.csv:2: seconds_per_task 'x' is not a number of seconds"),
    ("arrived,seconds_per_task\nsoon,3\n", r"c.csv:2: arrived 'soon' is neither seconds nor an ISO-8601 time"),
    ("arrived,seconds_per_task\n0,3\n-5,3\n", r"c.csv:3: arrived '-5' is not a number of seconds >= 0"),
    ("arrived,seconds_per_task,session_seconds\n0,3,30\n", r"c.csv:2: give either seconds_per_task .* got both"),
    ("arrived,seconds_per_task,session_seconds\n0,3,\n1,,30\n", "some rows give seconds_per_task and others"),
    ("arrived,session_seconds,completed\n0,30,2.5\n", r"c.csv:2: completed '2.5' is not a whole number"),
    ("arrived,session_seconds,speed\n0,30,2\n", r"c.csv:2: unknown field\(s\) speed"),
    ("session_seconds\n30\n", r"c.csv:2: arrived is missing"),
    ("arrived,seconds_per_task\n", "has no participants"),
])
def test_bad_rows_name_file_row_field_and_value(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(DataError, match=match):
        read_crowd(_write(tmp_path / "c.csv", text))


def test_bad_jsonl_and_suffix(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"c.jsonl:2: broken JSON line"):
        read_crowd(_write(tmp_path / "c.jsonl", '{"arrived": 0, "session_seconds": 3}\n{oops\n'))
    with pytest.raises(DataError, match=r"c.jsonl:1: seconds_per_task \[\] is not a non-empty list"):
        read_crowd(_write(tmp_path / "c.jsonl", '{"arrived": 0, "seconds_per_task": []}\n'))
    with pytest.raises(DataError, match="CSV or JSONL"):
        read_crowd(_write(tmp_path / "c.txt", "x"))
    with pytest.raises(DataError, match="not found"):
        read_crowd(tmp_path / "none.csv")


def test_amt_batch_as_a_crowd(tmp_path: Path) -> None:
    """Two workers: W2 accepts first at 08:00:00; W1 at 08:00:30. Paces: the first task's WorkTimeInSeconds, then
    the gaps between SubmitTimes (rows deliberately out of order)."""
    rows = [("H1", "W1", "08:00:30", "08:00:50", 20), ("H3", "W1", "08:01:00", "08:01:40", 35),
            ("H2", "W1", "08:00:52", "08:01:05", 12), ("H1", "W2", "08:00:00", "08:00:09", 9),
            ("H2", "W2", "08:00:10", "08:00:20", 10)]
    lines = [",".join(AMT_HEADER)] + [f"{h},{w},Mon May 17 {a} PDT 2021,Mon May 17 {s} PDT 2021,{k},Sentence A"
                                      for h, w, a, s, k in rows]
    c = read_crowd(_write(tmp_path / "Batch_1_batch_results.csv", "\n".join(lines) + "\n"))
    assert c.arrived.tolist() == [0.0, 30.0]
    assert c.completed.tolist() == [2, 3]
    np.testing.assert_array_equal(c.seconds_per_task, [[9, 11, np.nan], [20, 15, 35]])  # W2, W1


def test_amt_bad_time(tmp_path: Path) -> None:
    text = ",".join(AMT_HEADER) + "\nH1,W1,yesterday,Mon May 17 08:00:09 PDT 2021,9,Sentence A\n"
    with pytest.raises(DataError, match=r"b.csv:2: AcceptTime 'yesterday' is not an AMT time"):
        read_crowd(_write(tmp_path / "b.csv", text))


def test_fit_by_hand(tmp_path: Path) -> None:
    """Four participants: three in the first 600 s (at 0, 60, 120: mean 60 s), one at 4200 s (stream: 1 per hour
    over 3600 s after the window); sessions of 2 tasks: 10+10, 20+20, 40+40; one quitter after 1 task."""
    f = _write(tmp_path / "c.jsonl", "\n".join(json.dumps(r) for r in [
        {"arrived": 0, "seconds_per_task": [10, 10]}, {"arrived": 60, "seconds_per_task": [20, 20]},
        {"arrived": 120, "seconds_per_task": [40, 40]}, {"arrived": 4200, "seconds_per_task": [5]}]) + "\n")
    s = fit_crowd(read_crowd(f), tasks=2)
    assert (s.burst_share, s.burst_seconds, s.stream_per_hour, s.burst_hours) == (0.75, 60.0, 1.0, 3.0)
    assert s.pace_sd == pytest.approx(np.log([20, 40, 80]).std(ddof=1))
    assert s.pace_ratio == pytest.approx(40 / (2 * 20))  # median session 40 s, median task 20 s (5 10 10 20 20 40 40)
    assert (s.quit_share, s.quit_done_share) == (0.25, 0.5)


def test_default_crowd_constants_refit_from_the_amt_batches() -> None:
    """DEFAULT_SHAPE is default_shape() of the three DHE AMT batches (rounded to 4 significant digits)."""
    root = Path(os.environ.get("HUMEVAL_SHARED_DATA", Path(__file__).resolve().parents[4] / "shared" / "data")) / "dhe"
    files = sorted(root.glob("Batch_*_batch_results.csv"))
    if len(files) != 3:
        pytest.skip(f"the DHE AMT batches are not at {root} (set HUMEVAL_SHARED_DATA)")
    shapes = [fit_crowd(read_crowd(f)) for f in files]
    # the measured numbers
    assert [round(s.burst_share * s.participants) for s in shapes] == [53, 49, 79]
    assert [s.participants for s in shapes] == [69, 73, 91]
    assert [round(s.pace_sd, 2) for s in shapes] == [0.81, 0.74, 0.64]
    assert [round(s.quit_share, 2) for s in shapes] == [0.41, 0.30, 0.30]
    fitted = asdict(default_shape(shapes))
    for name, value in asdict(DEFAULT_SHAPE).items():
        if isinstance(value, float):
            assert value == pytest.approx(fitted[name], rel=5e-4), name
        else:
            assert value == fitted[name], name
    assert math.isfinite(DEFAULT_SHAPE.burst_hours)


def test_a_crowd_file_nested_too_deep_is_refused_at_its_line(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(DataError, match=r"c.jsonl:2: JSON nested deeper than 200 levels"):
        read_crowd(_write(tmp_path / "c.jsonl", '{"arrived": 0, "session_seconds": 3}\n{"x": ' + deep + "}\n"))
    with pytest.raises(DataError, match=r"c.csv:2: seconds_per_task:1: JSON nested deeper than 200 levels"):
        read_crowd(_write(tmp_path / "c.csv", f"arrived,seconds_per_task\n0,{deep}\n"))
