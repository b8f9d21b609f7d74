"""On the pairwise template after a dry run: `humeval plan` reads humeval's exported judgements,
`humeval budget` predicts a dynamic study's cost from them, `humeval prereg` is tied to the lock."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from humeval.costs import budget
from humeval.errors import ProtocolError
from humeval.hashing import sha256_file
from humeval.judgements import read_judgements, winners
from humeval.lock import lock_study
from humeval.pipeline import run, run_stage
from humeval.report.prereg import prereg
from humeval.simulate import read_pilot
from humeval.study import StudyFolder
from humeval.templates import init_study
from tests.cli import humeval


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("pw") / "s"
    init_study(root, "pairwise", items=30)
    text = (root / "humeval.yaml").read_text()
    (root / "humeval.yaml").write_text(text.replace("platform:\n  kind: local", "platform:\n  kind: prolific\n  completion_code: C1\n  reward: 1.2"))
    s = StudyFolder.open(root)
    assert s.protocol.platform.kind == "prolific"
    lock_study(s)
    list(run(s))
    run_stage(s, "dry-run")
    # the dry run's judgements are written by the same writer as `humeval export`
    shutil.copy(root / "results" / "dry-run" / "normal" / "judgements.jsonl", root / "results" / "judgements.jsonl")
    return s


def test_pilot_from_exported_judgements_matches_a_hand_count(study):
    path = study.results_dir / "judgements.jsonl"
    frame = read_judgements(path)
    pilot = read_pilot(path)
    pairs = frame[(frame["kind"] == "task") & (frame["criterion"] == "quality")]
    won = winners(pairs)
    decisive = pairs[won.isin(["baseline", "candidate"])]
    assert pilot.system_a == "baseline" and len(pilot.frame) == len(decisive)
    assert pilot.frame["choice"].sum() == (won == "baseline").sum()
    assert pilot.dropped == len(frame) - len(decisive)


def test_plan_cli_accepts_the_export(study):
    proc = humeval("plan", study.results_dir / "judgements.jsonl", "--iterations", "20", "--n-requests", "200",
                   "--format", "json", expect=0)
    data = json.loads(proc.stdout)
    assert data["fit"]["requests"] == 30 and {r["strategy"] for r in data["results"]} == {"one", "max3", "majority5"}


def test_dynamic_budget_from_the_export(study):
    b = budget(study, iterations=30, strategies=["one", "majority5"], deltas=[0.05, 0.01])
    assert b.design == "dynamic" and b.places == 9 and b.judgements == 90
    assert {(e.strategy, e.delta) for e in b.effort} == {("one", 0.05), ("one", 0.01), ("majority5", 0.05), ("majority5", 0.01)}
    per_list = b.judgements / b.places
    for e in b.effort:
        assert e.judgements_low <= e.judgements <= e.judgements_high <= b.judgements
        assert e.places == -(-e.judgements // per_list)
        assert e.total == round(e.places * b.reward_per_list * (1 + b.fee_rate), 2)
    one = {e.delta: e for e in b.effort if e.strategy == "one"}
    assert one[0.01].judgements >= one[0.05].judgements  # a smaller delta never needs fewer judgements
    assert "median seconds per task" in b.time_source


def test_prereg_refuses_without_a_lock(tmp_path):
    init_study(tmp_path / "u", "pairwise", items=10)
    with pytest.raises(ProtocolError, match="not locked"):
        prereg(tmp_path / "u")


def test_prereg_contains_the_signature_and_the_hashes(study):
    result = prereg(study)
    md = result.markdown.read_text()
    results_sig = study.results("dry-run/normal").signature
    assert result.signature.split("|")[:3] == results_sig.split("|")[:3]  # same protocol hash and seed
    assert result.signature in md
    assert sha256_file(study.lists_file) in md and sha256_file(study.protocol_file) in md
    assert "Rule `anytime` with error probability delta = 0.05" in md
    assert "Drift check (`stopping.drift_check: halves`): a decision is about the participants who took part" in md
    assert "exact test given the rule's stop (humeval.stats.drift) at alpha = 0.05" in md
    heds = json.loads(result.heds.read_text())
    ids = {a["id"] for a in heds["answers"]}
    assert {"3.1.1", "3.1.2", "3.2.1", "3.3.1", "3.3.3"} <= ids
    assert heds["signature"] == result.signature and heds["files"]["lists/lists.jsonl"] == sha256_file(study.lists_file)
    quality = {a["id"]: a for a in heds["criteria"]["quality"]["answers"]}
    assert "delta 0.05" in quality["4.3.10"]["answer"] and quality["4.3.10"]["source"].endswith("(planned)")
    proc = humeval("prereg", study.root, "--format", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["signature"] == result.signature


def test_budget_cli_takes_the_difficulty_variance_a_once_judged_pilot_cannot_give(study, tmp_path):
    """A pilot judging every item once (a rehearsal of the pairwise template in its random order, say) does not
    identify how much items differ: budget assumes equal difficulty and says so, and --difficulty-var sets it."""
    pilot = tmp_path / "pilot.csv"
    pilot.write_text("request,choice\n" + "".join(f"r{i},{'A' if i % 4 else 'B'}\n" for i in range(30)))

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return humeval("budget", study.root, "--pilot", pilot, "--strategy", "one", "--iterations", "20",
                       "--crowd-runs", "50", *extra)

    prior = run("--format", "json")
    assert prior.returncode == 0, prior.stderr
    data = json.loads(prior.stdout)
    assert data["fit"]["difficulty_var"] == 0.0 and data["fit"]["mu"] > 0
    assert any("items of equal difficulty (variance 0" in n and "--difficulty-var" in n for n in data["notes"])
    given = run("--difficulty-var", "0.3", "--format", "json")
    assert given.returncode == 0, given.stderr
    data = json.loads(given.stdout)
    assert data["fit"]["difficulty_var"] == 0.3 and data["fit"]["var_ci"] == [0.3, 0.3]
    assert any("is 0.3, as given (--difficulty-var)" in n for n in data["notes"])
    assert all(",var=0.3|" in p["signature"] for p in data["sessions"])  # the setting is in the signature
    bad = run("--difficulty-var", "-1")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "--difficulty-var: the variance of the items' difficulty is a number >= 0" in " ".join(bad.stderr.split())


def test_plan_says_which_option_gives_the_variance(tmp_path):
    pilot = tmp_path / "pilot.csv"
    pilot.write_text("request,choice\n" + "".join(f"r{i},A\n" for i in range(10)))
    result = humeval("plan", pilot, "--iterations", "5")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "--difficulty-var V in `humeval plan` and `humeval budget`" in " ".join(result.stderr.split())
