"""`humeval demo`: the example study run end to end through the real server by a simulated crowd."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from humeval import logbook
from humeval.errors import HumevalError
from humeval.files import read_json
from humeval.study import StudyFolder
from tests.cli import humeval

from ..conftest import DEMO_STUDY


def test_demo_decides_and_reports_what_the_files_hold(demo_run):
    root, summary, stderr, _ = demo_run
    ws = root / "results" / "rehearsal"
    results = read_json(ws / "results.json")
    stopping = results["criteria"]["preference"]["stopping"]
    [decision] = summary["decisions"]
    assert decision["outcome"] in ("A", "B") and decision["decision"] == stopping["decision"] == "reference"
    assert decision["agrees_with_live"] is True and decision["live_n"] == decision["n"]
    # the fixed design: every pair task judged judgements_per_item times (48 items x 3)
    assert decision["fixed_design"] == 48 * 3 and decision["collected"] == stopping["collected"] < 48 * 3
    assert decision["saved"] == decision["fixed_design"] - decision["collected"]
    lists = [json.loads(line) for line in (root / "lists" / "lists.jsonl").read_text().splitlines()]
    assert summary["collection"]["fixed_design"] == sum(len(pl["tasks"]) for pl in lists)
    judged = [json.loads(line) for line in (ws / "judgements.jsonl").read_text().splitlines()]
    assert summary["collection"]["judgements"] == len({(j["participant_id"], j["task_id"]) for j in judged})
    assert summary["signature"] == results["signature"] and "dry-run:rehearsal-crowd" in summary["signature"]
    # rankings with intervals, straight from results.json
    boot = results["criteria"]["naturalness"]["rankings"]["bootstrap"]["systems"]
    rows = [r for r in summary["rankings"] if r["criterion"] == "naturalness" and r["method"] == "bootstrap"]
    assert [(r["system"], r["score"], r["ci_low"], r["ci_high"]) for r in rows] == [
        (s["system"], s["estimate"], s["ci_low"], s["ci_high"]) for s in boot]
    assert [r["system"] for r in rows] == ["reference", "candidate", "baseline"]  # the crowd's systems, in order
    assert {a["criterion"] for a in summary["agreement"]} == {"preference", "naturalness", "informativeness"}
    # progress on stderr, each step named
    for step in ("init:", "sample:", "design:", "rehearse:", "demo done in"):
        assert step in stderr


def test_demo_collects_every_list_and_reruns_what_exclusion_left_short(demo_run):
    root, summary, _, _ = demo_run
    ws = root / "results" / "rehearsal"
    with sqlite3.connect(ws / "study.db") as db:
        open_lists = db.execute("SELECT COUNT(*) FROM lists WHERE completed = 0").fetchone()[0]
        open_rankme = db.execute("SELECT COUNT(*) FROM tasks t WHERE kind = 'task' AND family = 'multi' AND cap > "
                                 "(SELECT count(*) FROM assignments a WHERE a.task_id = t.task_id AND a.status = 'done')"
                                 ).fetchone()[0]
        rerun = [r[0] for r in db.execute("SELECT list_id FROM lists WHERE list_id LIKE 'R%'")]
    assert open_lists == 0 and open_rankme == 0  # the rating design, re-runs included, was collected in full
    exclusion = read_json(ws / "exclusion.json")
    assert summary["exclusion"]["participants_excluded"] == exclusion["participants_excluded"] >= 1
    # the excluded participants' tasks were re-run in the lists collate dealt, added as `humeval serve` adds them
    assert rerun and summary["collection"]["rerun_rounds"] >= 1
    assert summary["collection"]["rerun_judgements"] > 0
    collation = read_json(ws / "collation.json")
    assert collation["complete"] is True and collation["judgements_missing"] == 0
    assert summary["collation"]["tasks_decided"] == collation["tasks_decided"] == 48
    assert summary["collation"]["complete"] is True


def test_demo_report_states_the_answer_first(demo_run):
    root, summary, _, _ = demo_run
    ws = root / "results" / "rehearsal"
    md = (ws / "report.md").read_text()
    key = md.split("## Key results", 1)[1].split("\n## ", 1)[0]
    d = summary["decisions"][0]
    assert (f"decided for reference after n = {d['n']} decisive judgements; {d['collected']} judgements used where "
            f"the fixed design takes {d['fixed_design']} ({d['saved']} saved") in key
    assert "Agreement (estimate [95% interval])" in key and "Rankings (rank range; score [95% interval])" in key
    assert "SIMULATED PARTICIPANTS" in md
    assert summary["report"] == str(Path(DEMO_STUDY) / "results" / "rehearsal" / "report.html")
    for name in ("rankings", "descriptives", "agreement", "pairs"):
        assert (ws / "tables" / f"{name}.tex").is_file() and (ws / "tables" / f"{name}.csv").is_file()
    stages = [e["stage"] for e in logbook.read(StudyFolder.open(root))]
    assert stages[:3] == ["lock", "sample", "design"] and "rehearse" in stages


def test_demo_refuses_an_existing_study(demo_run):
    import humeval

    root = demo_run[0]
    with pytest.raises(HumevalError, match="a study already exists here"):
        humeval.demo(root)


def test_readme_quotes_the_demo_output(demo_run):
    """The README's numbers are the demo's (seed 1, one participant at a time: the same on every run)."""
    import re

    _, summary, _, _ = demo_run
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    d, c, x = summary["decisions"][0], summary["collection"], summary["exclusion"]
    assert re.search(rf"{d['decision']} over baseline after n = {d['n']} decisive judgements", section)
    assert (f"{d['collected']} taken; the fixed design takes {d['fixed_design']} ({d['saved']} saved, "
            f"{round(100 * d['saved'] / d['fixed_design'])}%)") in section
    assert (f"{c['judgements']} judgements from {c['participants_active']} simulated participants; "
            f"{x['participants_excluded']} excluded") in section
    assert f"{c['rerun_judgements']} judgements of a re-run" in section


def test_getting_started_and_the_report_page_quote_the_demo(demo_run):
    """The numbers the prose of docs/getting-started.md and docs/report.md takes from the demo are its output's
    (the printed blocks themselves: tests/docs/test_outputs.py)."""
    import re

    root, summary, _, _ = demo_run
    docs = Path(__file__).resolve().parents[2] / "docs"

    def words(text: str) -> str:
        return " ".join(text.split())

    d, c, x = summary["decisions"][0], summary["collection"], summary["exclusion"]
    [pref] = [a for a in summary["agreement"] if a["criterion"] == "preference" and a["estimate"] is not None]
    spelled = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six"}
    page = words((docs / "getting-started.md").read_text())
    for quote in (f"The rule needed {d['collected']}, so {d['saved']} were never asked for",
                  f"the participants it needed were {d['places']} of the {d['fixed_places']} its lists would have paid",
                  f"every pair task ({summary['collation']['tasks_decided']} items) judged 3 times, {d['fixed_design']} judgements",
                  f"{c['judgements']} judgements went through the server, fewer than the {c['fixed_design']} places",
                  f"{spelled[x['participants_excluded']]} spammers failed their attention check",
                  f"new participants did them ({c['rerun_judgements']} judgements)",
                  (f"only {pref['n']} items had their pair judged twice before the rule stopped (the {d['collected']} "
                   "judgements followed the random serving order)")):
        assert quote in page, quote
    # the report page quotes the demo report's decision line as it is written
    report = words((root / "results" / "rehearsal" / "report.md").read_text())
    quoted = re.search(r'design: "(preference \(baseline vs reference\): .*?)"\. A rule', words((docs / "report.md").read_text()))
    assert quoted and quoted.group(1) in report
    # every demo signature in the docs is the demo's
    for name in ("getting-started.md", "report.md"):
        for sig in re.findall(r"humeval\|protocol:\w+\|seed:\d+\|plan:\w+\|dry-run:rehearsal-crowd\|version:[\w.]+",
                              (docs / name).read_text()):
            assert sig == summary["signature"], name


def test_a_small_demo_reruns_lists_longer_than_the_design_s(tmp_path: Path) -> None:
    """16 items: the design's lists hold 9 tasks (8 and a check), the re-run lists up to items_per_participant (10);
    the rehearsal's guard against a server that keeps serving allows the longer re-run lists."""
    proc = humeval("demo", "small", "-n", "16", "--concurrency", "1", "--format", "json", cwd=tmp_path, process=True,
                   timeout=300, expect=0)
    assert json.loads(proc.stdout)["signature"]
    lists = [json.loads(line) for line in (tmp_path / "small" / "lists" / "lists.jsonl").read_text().splitlines()]
    rerun = tmp_path / "small" / ".humeval" / "keys" / "results-rehearsal.rerun-lists.jsonl"
    longest = max(len(json.loads(line)["tasks"]) for line in rerun.read_text().splitlines())
    assert max(len(pl["tasks"]) for pl in lists) == 9 < longest <= 10
