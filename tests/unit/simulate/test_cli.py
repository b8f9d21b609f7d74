"""The simulate and plan commands: JSON shape, errors without traceback, plots."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import humeval as _run


def test_simulate_json_and_plot(tmp_path: Path) -> None:
    png = tmp_path / "effort.png"
    p = _run("simulate", "--mu", "0.3", "--n-requests", "800", "--iterations", "60", "--strategy", "one,max3",
             "--rule", "hoeffding,anytime", "--seed", "3", "--format", "json", "--plot", str(png))
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert len(data["results"]) == 4 and "signature" in data
    assert {r["strategy"] for r in data["results"]} == {"one", "max3"}
    assert png.stat().st_size > 1000 and (tmp_path / "effort_bound.png").stat().st_size > 1000


def test_simulate_user_errors() -> None:
    for args, text in [(("--delta", "-0.5"), "-0.5"), (("--strategy", "majority4"), "N=4"),
                       (("--capability", "0.5", "1.5"), "1.5"), (("--rule", "hoefding"), "Did you mean")]:
        p = _run("simulate", "--iterations", "5", *args)
        assert p.returncode == 1 and text in p.stderr and "Traceback" not in p.stderr


def test_plan_on_amt_batch(shared_data: Path) -> None:
    p = _run("plan", str(shared_data / "dhe" / "Batch_4483006_batch_results.csv"), "--iterations", "30",
             "--strategy", "one", "--delta", "0.01", "--format", "json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert 0.1 < data["fit"]["mu"] < 0.4 and data["results"][0]["strategy"] == "one"


def test_plan_sessions_with_a_crowd_file(tmp_path: Path) -> None:
    """`humeval plan --crowd`: wall time predicted from the crowd file without --arrivals-per-hour; a waitlist
    without arrivals is a user error."""
    pilot = tmp_path / "pilot.csv"
    pilot.write_text("request,choice\n" + "".join(f"{i},{'A' if i % 5 else 'B'}\n" for i in range(60)))
    crowd = tmp_path / "crowd.csv"
    crowd.write_text("arrived,session_seconds\n" + "".join(f"{30 * i},{240 + 10 * i}\n" for i in range(30)))
    args = ("plan", pilot, "--iterations", "10", "--strategy", "one", "--delta", "0.05", "--lists", "9",
            "--watched", "10", "--minutes-per-list", "4", "--difficulty-var", "0")
    data = json.loads(_run(*args, "--crowd", crowd, "--format", "json", expect=0).stdout)
    rows = data["sessions"]
    assert [r["W"] for r in rows] == ["1", "2 (chosen)", "3"]
    assert all(r["wall hours"] != "-" and r["wall / fixed"] != "-" for r in rows)
    plain = json.loads(_run(*args, "--format", "json", expect=0).stdout)["sessions"]
    assert all(r["wall hours"] == "-" for r in plain)
    bad = _run(*args, "--patience", "60", expect=1)
    assert "a waitlist needs arrivals" in bad.stderr and "Traceback" not in bad.stderr
