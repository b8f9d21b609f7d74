"""`humeval budget` plans sessions: places, money and wall time of dynamic stopping beside the fixed design."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from humeval.costs import budget
from humeval.lock import lock_study
from humeval.pipeline import run_stage
from humeval.study import StudyFolder
from humeval.templates import init_study


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("sess") / "s"
    path = init_study(root, "pairwise", items=30)
    text = re.sub(r"\npay:.*?\n\n", "\n", path.read_text(), flags=re.S)  # the template's own pay: replaced below
    text = text.replace("platform:\n  kind: local",
                        "platform:\n  kind: prolific\n  completion_code: C1\n  reward: 1.2\npay:\n  seconds_per_task: 20")
    path.write_text(text)
    s = StudyFolder.open(root)
    lock_study(s)
    run_stage(s, "sample")
    run_stage(s, "design")
    rng = np.random.default_rng(0)  # a pilot: 60 requests, 3 judgements each, A preferred 80 % of the time
    pd.DataFrame({"request": np.repeat(np.arange(60), 3), "choice": (rng.random(180) < 0.8).astype(int)}).to_csv(
        root / "pilot.csv", index=False)
    return s


def test_sessions_planned_beside_the_fixed_design(study):
    b = budget(study, pilot=study.root / "pilot.csv", strategies=["one"], iterations=20, crowd_runs=400)
    designs = [(p.design, p.sessions, p.protocol) for p in b.sessions]
    assert designs == [("fixed", 0, False), ("dynamic", 1, False), ("dynamic", 2, True), ("dynamic", 3, False)]
    fixed, w1, w2, w3 = b.sessions
    cost = b.reward_per_list * (1 + b.fee_rate)
    assert fixed.places[0] == b.places == 9 and fixed.total[0] == pytest.approx(9 * cost, abs=0.01)
    assert w2.total[0] == pytest.approx(w2.places[0] * cost, abs=0.02)
    for p in (w1, w2, w3):
        assert p.places[1] <= p.places[0] <= p.places[2] and p.places[0] < 9
        assert p.wall_hours is not None and p.wall_ratio is not None
    assert w1.unused[0] <= w2.unused[0] < w3.unused[0]  # the trade-off the table shows
    assert w3.wall_hours[0] <= w1.wall_hours[0]
    assert "arrivals:45/h" in w2.signature and "W:2" in w2.signature
    rows = b.session_rows()
    assert rows[2]["design"] == "dynamic W=2 (protocol)" and b.to_json()["sessions"][2]["sessions"] == 2


def test_without_arrivals_wall_time_is_not_predicted(study):
    text = study.protocol_file.read_text()
    study.protocol_file.write_text(text.replace("  arrivals_per_hour: 45", "  wave: 1"))
    try:
        b = budget(StudyFolder.open(study.root), pilot=study.root / "pilot.csv", strategies=["one"], iterations=20,
                   crowd_runs=200)
    finally:
        study.protocol_file.write_text(text)
    assert all(p.wall_hours is None for p in b.sessions)
    assert any("wall time is not predicted: set crowd.arrivals_per_hour" in n for n in b.notes)


def test_feed_judgement_is_simulated_as_such(study):
    """stopping.feed: judgement reaches the simulation: the outcomes fed as submitted decide sooner than the same
    protocol fed per session, on the same seeded crowd (and admit the next session sooner: the places differ), and
    the notes say what was simulated."""
    text = study.protocol_file.read_text()
    changed = text.replace("  sessions: 2 ", "  feed: judgement\n  sessions: 2 ").replace(
        "  attention_checks: 1\n", "  attention_checks: 1\n  qualification: 1\n")
    assert changed.count("feed: judgement") == 1 and "qualification: 1" in changed
    study.protocol_file.write_text(changed)
    try:
        b = budget(StudyFolder.open(study.root), pilot=study.root / "pilot.csv", strategies=["one"], iterations=20,
                   crowd_runs=200)
    finally:
        study.protocol_file.write_text(text)
    plain = budget(study, pilot=study.root / "pilot.csv", strategies=["one"], iterations=20, crowd_runs=200)
    assert not any("simulated as stopping.feed: session" in n for n in b.notes)
    assert any("sessions: simulated with stopping.feed: judgement: after the 1 qualification check(s)" in n
               for n in b.notes)
    assert not any("stopping.feed: judgement" in n for n in plain.notes)
    fed, per_session = b.sessions[2], plain.sessions[2]  # the protocol's W = 2
    assert fed.protocol and per_session.protocol
    assert "|feed:judgement|qualification:1|" in fed.signature and "feed:" not in per_session.signature
    assert fed.wall_hours is not None and per_session.wall_hours is not None
    assert fed.wall_hours[0] < per_session.wall_hours[0]
    assert fed.places != per_session.places  # places open mid-session: sooner, and (p < 1) not always fewer


def test_a_confirmation_wave_is_costed_in_the_notes(study):
    import math

    from humeval.costs import watched_per_list

    text = study.protocol_file.read_text()
    changed = text.replace("  sessions: 2 ", "  drift_check: wave\n  wave: {outcomes: 30, opens_after_seconds: 5400}\n"
                                             "  sessions: 2 ")
    study.protocol_file.write_text(changed)
    try:
        s = StudyFolder.open(study.root)
        b = budget(s, pilot=study.root / "pilot.csv", strategies=["one"], iterations=20, crowd_runs=200)
        per_list = [k for k in watched_per_list(s, s.read_lists())[1] if k > 0]
    finally:
        study.protocol_file.write_text(text)
    places = math.ceil(30 / (sum(per_list) / len(per_list)))
    note = next(n for n in b.notes if "confirmation wave" in n)
    cost = b.reward_per_list * (1 + b.fee_rate)
    assert f"adds up to {places} places after a decision, {round(places * cost, 2):.2f} at most" in note
    assert "1.50 hours after the launch" in note
    assert not any("confirmation wave" in n for n in budget(study, pilot=study.root / "pilot.csv", strategies=["one"],
                                                            iterations=20, crowd_runs=200).notes)


def test_budget_with_a_crowd_file_through_the_cli(study, tmp_path):
    """`humeval budget --crowd FILE`: the sessions are simulated with that crowd (named in the notes and the
    signature), wall time is predicted without crowd.arrivals_per_hour, and a crowd that all arrives at once with a
    waitlist fills more places than without."""
    from tests.cli import humeval

    rows = [{"arrived": 0, "seconds_per_task": [20] * 40} for _ in range(12)] + \
           [{"arrived": 120 * k, "seconds_per_task": [20] * 40} for k in range(1, 9)]
    crowd = tmp_path / "crowd.jsonl"
    crowd.write_text("".join(f'{{"arrived": {r["arrived"]}, "seconds_per_task": {r["seconds_per_task"]}}}\n'
                             for r in rows))
    args = ("budget", study.root, "--pilot", study.root / "pilot.csv", "--strategy", "one", "--iterations", "20",
            "--crowd-runs", "200", "--crowd", crowd)
    proc = humeval(*args, "--format", "json", expect=0)
    import json

    data = json.loads(proc.stdout)
    plans = data["sessions"]
    assert all(p["wall_hours"] is not None for p in plans)
    assert all("crowd:crowd.jsonl" in p["signature"] for p in plans)
    assert any("crowd: crowd.jsonl: 20 participants" in n for n in data["notes"])
    # 16 of 20 in the first 10 minutes (0 s and 120..480 s); 40 tasks each, more than a list: none quits
    assert any("80% in the first 10 min" in n and "0% completed fewer" in n for n in data["notes"])
    waiting = json.loads(humeval(*args, "--patience", "3600", "--format", "json", expect=0).stdout)["sessions"]
    assert waiting[1]["places"][0] >= plans[1]["places"][0]
    table = humeval(*args, expect=0).stdout
    assert "5-95%" in table
    bad = humeval("budget", study.root, "--pilot", study.root / "pilot.csv", "--crowd", tmp_path / "none.csv", expect=1)
    assert "crowd file not found" in bad.stdout + bad.stderr


def test_pausers_cost_places_and_the_notes_say_how_many(study):
    """--pausers: a share of the participants pause past the lease (settled, paid, their list given on): the same
    crowd and seed pay more places with them, and the notes give the quitters and pauses per collection."""
    from humeval.errors import DataError

    kw = dict(pilot=study.root / "pilot.csv", strategies=["one"], iterations=20, crowd_runs=400)
    none, some = budget(study, **kw), budget(study, pausers=0.5, **kw)
    assert some.sessions[2].places[0] > none.sessions[2].places[0]
    assert "pausers:0.5" in some.sessions[2].signature and "pausers" not in none.sessions[2].signature
    note = next(n for n in some.notes if "pauses past the lease" in n)
    pauses = float(re.search(r"and ([0-9.]+) pauses past the lease", note).group(1))
    assert pauses > 0 and "0.5 of those who do not quit (--pausers)" in note
    with pytest.raises(DataError, match="--pausers"):
        budget(study, pausers=1.5, **kw)
