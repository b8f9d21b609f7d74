"""`humeval judge` against a fake OpenAI-compatible server: position swap, faults, resume, logbook, lock, report."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from humeval import init_study, logbook, run, run_stage, validate_study
from humeval.costs import budget
from humeval.errors import ProtocolError
from humeval.judgements import winners, write_judgements
from humeval.judging import JudgeError
from humeval.lock import lock_study
from humeval.pipeline import judge
from humeval.simulate.dummy import dummy_judgements
from humeval.stats import ppi_win_rate
from humeval.study import StudyFolder
from tests.cli import humeval
from tests.fake_openai import KEY, FakeOpenAI

PROMPT = ("{question}\nFacts: {input}\n<A>{output_a}</A>\n<B>{output_b}</B>\n"
          'Answer [[A]] or [[B]], or [[C]] for a tie. (Say {"verdict": ...} nowhere.)\n')


@pytest.fixture
def fake() -> Any:
    with FakeOpenAI() as server:
        yield server


def _study(root: Path, url: str, *, items: int = 12, **llm: Any) -> StudyFolder:
    init_study(root, "pairwise", items=items)
    path = root / "humeval.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["sampling"] = {"method": "random", "rate": 0.5}
    settings = {"base_url": url, "model": "fake-judge", "prompt_file": "prompts/pairwise.txt", "api_key_env": "FAKE_JUDGE_KEY",
                "price_input": 0.5, "price_output": 2.0, "backoff": 0.01, "concurrency": 4} | llm
    doc["data"]["judges"] = [{"name": "llm", "file": "judges/llm.jsonl", "kind": "verdicts", "llm": settings}]
    doc["analysis"]["judges"] = ["llm"]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    (root / "prompts").mkdir()
    (root / "prompts" / "pairwise.txt").write_text(PROMPT)
    return StudyFolder.open(root)


def _shown(body: dict[str, Any]) -> tuple[str, str]:
    found = re.search(r"<A>(.*?)</A>.*?<B>(.*?)</B>", body["messages"][-1]["content"], re.DOTALL)
    assert found is not None
    return found.group(1), found.group(2)


def _entries(study: StudyFolder) -> list[dict[str, Any]]:
    return [e for e in logbook.read(study) if e.get("stage") == "judge"]


def test_pairwise_judge_runs_as_a_locked_logged_stage(fake: FakeOpenAI, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_JUDGE_KEY", KEY)
    study = _study(tmp_path / "s", fake.url, items=12)
    assert validate_study(study.root) == []
    lock = lock_study(study)
    locked = {i["path"] for i in lock.data["inputs"]}
    assert "prompts/pairwise.txt" in locked and "judges/llm.jsonl" not in locked  # the prompt is pinned, the file made

    list(run(study))
    predicted = budget(study.root, predict=False).judge_runs[0]
    assert (predicted["requests"], predicted["cached"], predicted["last_run"]) == (24, 0, None)
    result = judge(study)
    # every pair asked twice, the second time with the outputs swapped
    assert fake.state.requests == 24
    outputs = study.outputs()
    shown = [_shown(b) for b in fake.state.bodies]
    for item in {str(i) for i in outputs.frame["item_id"]}:
        base, cand = outputs.text(item, "baseline").output, outputs.text(item, "candidate").output
        assert sorted(s for s in shown if set(s) == {base, cand}) == sorted([(base, cand), (cand, base)])
    assert set(fake.state.seen_keys) == {f"Bearer {KEY}"}
    # the verdicts: the fake prefers the longer output (A when equal), so a pair of equal lengths disagrees
    rows = [json.loads(x) for x in (study.root / "judges" / "llm.jsonl").read_text().splitlines()]
    prompt_hash = hashlib.sha256(PROMPT.encode()).hexdigest()
    disagreed = 0
    for row in rows:
        a, b = (outputs.text(row["item_id"], s).output for s in (row["system_a"], row["system_b"]))
        first = row["system_a"] if len(a) >= len(b) else row["system_b"]
        second = row["system_b"] if len(b) >= len(a) else row["system_a"]
        disagreed += first != second
        assert row["winner"] == (first if first == second else "tie")
        assert row["prompt_sha256"] == prompt_hash and len(row["request_sha256"].split()) == 2
    assert len(rows) == 12
    # the logbook: model, endpoint, prompt hash, requests, tokens and cost (the fake's usage: characters / 4)
    entry = _entries(study)[-1]
    summary = entry["summary"]["judges"]["llm"]
    tokens_in = sum(math.ceil(sum(len(m["content"]) for m in b["messages"]) / 4) for b in fake.state.bodies)
    assert (summary["model"], summary["endpoint"], summary["prompt_sha256"]) == ("fake-judge", fake.url, prompt_hash)
    assert (summary["requests"], summary["tokens_in"], summary["tokens_out"]) == (24, tokens_in, 24 * 2)
    # the budget's estimate (characters / 4) is the fake's count; output tokens are bounded by max_tokens (16)
    assert (predicted["tokens_in"], predicted["tokens_out_max"]) == (tokens_in, 24 * 16)
    assert predicted["cost_max"] == pytest.approx(tokens_in * 0.5 / 1e6 + 24 * 16 * 2.0 / 1e6)
    assert summary["cost"] == pytest.approx(tokens_in * 0.5 / 1e6 + 48 * 2.0 / 1e6)
    assert (summary["swaps_compared"], summary["swaps_disagreed"]) == (12, disagreed)
    assert summary["position_consistency"] == pytest.approx(1 - disagreed / 12)
    assert KEY not in study.logbook_file.read_text()  # the key is never logged
    assert result.summary["judges"]["llm"]["rows"] == 12

    # a re-run costs nothing: the stage is unchanged; forced, every answer comes from the cache
    assert judge(study).skipped and fake.state.requests == 24
    again = judge(study, force=True).summary["judges"]["llm"]
    assert (again["requests"], again["from_cache"], again["cost"], fake.state.requests) == (0, 24, 0.0, 24)
    assert again["cost_all"] == summary["cost"]

    # simulated humans who prefer the longer output 9 times in 10, then collate, exclude, analyze and report
    lists = study.read_lists()
    humans = dummy_judgements(lists, study.protocol, "normal", 5)
    rng = np.random.default_rng(5)
    for i in humans.index[humans["kind"] == "task"]:
        shown = [len(outputs.text(humans.at[i, "item_id"], humans.at[i, s]).output) for s in ("system", "system_b")]
        longer = "A" if shown[0] >= shown[1] else "B"
        humans.at[i, "choice"] = longer if rng.random() < 0.9 else {"A": "B", "B": "A"}[longer]
    write_judgements(study.results_dir / "judgements.jsonl", humans)
    for stage in ("collate", "exclude", "analyze", "report"):
        run_stage(study, stage)
    record = study.results("main").to_json()["criteria"]["quality"]["judges"]["llm"]
    estimate, calibration = record["estimates"][0], record["calibration"][0]
    # recomputed from the judge's file and the human judgements (every participant kept: no attention failure)
    tasks = humans[humans["kind"] == "task"]
    won = winners(tasks)
    human = pd.Series(np.where(won == "baseline", 1.0, np.where(won == "candidate", 0.0, 0.5)),
                      index=tasks["item_id"].to_numpy()).groupby(level=0).mean()
    verdicts = pd.DataFrame(rows).set_index("item_id")
    machine = pd.Series(np.where(verdicts["winner"] == "baseline", 1.0,
                                 np.where(verdicts["winner"] == "tie", 0.5, 0.0)), index=verdicts.index)
    expected = ppi_win_rate(human.to_numpy(), machine.loc[human.index].to_numpy(),
                            machine.drop(human.index).to_numpy(), confidence_level=0.95)
    assert (estimate["n_labelled"], estimate["n_unlabelled"]) == (6, 6)
    assert estimate["estimate"] == pytest.approx(expected.estimate, abs=1e-12)
    assert (estimate["ci_low"], estimate["ci_high"]) == (pytest.approx(expected.ci_low), pytest.approx(expected.ci_high))
    both = np.sign(human - 0.5) == np.sign(machine.loc[human.index] - 0.5)
    assert calibration["agreement_share"] == pytest.approx(float(both.mean()))
    report = (study.results_dir / "report.md").read_text()
    assert "Automatic judges: llm" in report and "Judge calibration: llm" in report
    assert "## LLM judges" in report and prompt_hash[:12] in report
    assert f"{1 - disagreed / 12:.3f} ({disagreed} of 12 disagreed, tie)" in report

    # a changed prompt in the locked study is refused, by the judge and by every stage
    (study.root / "prompts" / "pairwise.txt").write_text(PROMPT + "Be brief.\n")
    with pytest.raises(ProtocolError, match="prompts/pairwise.txt"):
        judge(study, force=True)
    with pytest.raises(ProtocolError, match="prompts/pairwise.txt"):
        run_stage(study, "analyze", force=True)
    (study.root / "prompts" / "pairwise.txt").write_text(PROMPT)
    doc = yaml.safe_load(study.protocol_file.read_text())
    doc["data"]["judges"][0]["llm"]["temperature"] = 0.7
    study.protocol_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(ProtocolError, match=r"humeval.yaml \(changed: data\)"):
        judge(StudyFolder.open(study.root), force=True)
    assert fake.state.requests == 24


def test_faults_are_retried_and_refusals_counted(fake: FakeOpenAI, tmp_path: Path) -> None:
    # a client timeout that a loaded machine's answers still meet, and a held answer well beyond it
    study = _study(tmp_path / "s", fake.url, items=6, api_key_env="", timeout=3.0, retries=3)
    fake.state.hold = 15.0
    fake.state.retry_after = "0.25"
    for kind in ("429", "500", "timeout", "malformed", "refusal"):
        fake.state.fail(kind)
    summary = judge(study).summary["judges"]["llm"]
    client = summary["client"]
    assert (client["rate_limited"], client["server_errors"], client["timeouts"], client["malformed"]) == (1, 1, 1, 1)
    assert client["waited_seconds"] >= 0.25  # the 429's Retry-After, not the 0.01 s backoff
    assert summary["requests"] == 12 + 4  # four faults sent again; the refusal is an answer
    assert (summary["refusals"], summary["unparseable"], summary["incomplete"], summary["rows"]) == (1, 0, 1, 5)
    answers = [json.loads(x) for x in (study.root / "judges" / "llm.answers.jsonl").read_text().splitlines()]
    assert [a["status"] for a in answers].count("refusal") == 1
    assert fake.state.seen_keys[0] == ""  # no key configured: no Authorization header


def test_unparseable_answers_are_counted_and_drop_leaves_disagreements_out(fake: FakeOpenAI, tmp_path: Path) -> None:
    study = _study(tmp_path / "s", fake.url, items=6, api_key_env="", swap="drop", concurrency=1)
    answers = iter(["[[A]]", "A", "I think A is better", "**B**", "[[A]] or maybe [[B]]", "[[C]]"] + ["[[A]]"] * 6)
    fake.state.answer = lambda body: next(answers)
    summary = judge(study).summary["judges"]["llm"]
    # in request order: pair 1 A/A (disagree: each names the output shown first), pair 2 unparseable + B,
    # pair 3 two verdicts in one answer + tie, pairs 4-6 A/A
    assert (summary["unparseable"], summary["incomplete"]) == (2, 2)
    assert (summary["swaps_compared"], summary["swaps_disagreed"], summary["rows"]) == (4, 4, 0)
    assert summary["first_shown_chosen"] == 1.0


def test_an_interrupted_run_resumes_without_asking_again(fake: FakeOpenAI, tmp_path: Path) -> None:
    study = _study(tmp_path / "s", fake.url, items=10, api_key_env="", retries=1)
    fake.state.answers_left = 7
    with pytest.raises(JudgeError, match="13 of 20 request"):
        judge(study)
    assert _entries(study)[-1]["outcome"] == "error" and sum(fake.state.answered.values()) == 7
    sent = fake.state.requests
    fake.state.answers_left = None
    summary = judge(study).summary["judges"]["llm"]
    assert (summary["from_cache"], summary["answered_now"], summary["requests"]) == (7, 13, 13)
    assert fake.state.requests - sent == 13
    assert max(fake.state.answered.values()) == 1  # no answered request was asked twice
    assert summary["tokens_in_all"] > summary["tokens_in"] > 0


def test_concurrency_is_bounded(fake: FakeOpenAI, tmp_path: Path) -> None:
    study = _study(tmp_path / "s", fake.url, items=6, api_key_env="", concurrency=3)
    fake.state.delay = 0.05
    assert judge(study).summary["judges"]["llm"]["answered_now"] == 12
    assert fake.state.max_in_flight == 3


def test_a_429_burst_is_absorbed(fake: FakeOpenAI, tmp_path: Path) -> None:
    study = _study(tmp_path / "s", fake.url, items=8, api_key_env="", concurrency=8, retries=4)
    fake.state.retry_after = "0.2"
    fake.state.fail("429", times=12)
    summary = judge(study).summary["judges"]["llm"]
    assert summary["client"]["rate_limited"] == 12 and summary["answered_now"] == 16 and summary["rows"] == 8
    assert summary["client"]["waited_seconds"] == pytest.approx(12 * 0.2)


def test_a_refused_key_stops_the_run(fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study = _study(tmp_path / "s", fake.url, items=4)
    monkeypatch.delenv("FAKE_JUDGE_KEY", raising=False)
    with pytest.raises(JudgeError, match=r"\$FAKE_JUDGE_KEY is not set"):
        judge(study)
    assert fake.state.requests == 0


def test_a_scores_judge_asks_each_output_once(fake: FakeOpenAI, tmp_path: Path) -> None:
    root = tmp_path / "s"
    init_study(root, "rating", items=5)
    doc = yaml.safe_load((root / "humeval.yaml").read_text())
    llm = {"base_url": fake.url, "model": "fake-judge", "prompt": "Rate the {criterion}: <O>{output}</O>",
           "score_min": 1, "score_max": 10, "backoff": 0.01}
    doc["data"]["judges"] = [{"name": "words", "file": "judges/words.csv", "kind": "scores", "criteria": ["fluency"],
                              "llm": llm}]
    doc["pay"] = {"currency": "GBP", "hourly": 9.0, "seconds_per_task": 20}
    (root / "humeval.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    study = StudyFolder.open(root)
    summary = judge(study).summary["judges"]["words"]
    outputs = study.outputs()
    words = {(str(i), str(s)): len(o.split()) for i, s, o in outputs.frame[["item_id", "system", "output"]].itertuples(index=False)}
    assert fake.state.requests == len(words) and "swaps_compared" not in summary
    assert all("Rate the fluency: <O>" in b["messages"][-1]["content"] for b in fake.state.bodies)
    scored = pd.read_csv(root / "judges" / "words.csv")
    assert {(str(r.item_id), r.system): r.score for r in scored.itertuples()} == {k: v for k, v in words.items() if v <= 10}
    assert summary["unparseable"] == sum(v > 10 for v in words.values()) == summary["incomplete"] > 0
    assert validate_study(root) == []  # the file written is one the analysis reads
    # the command: a thin layer over the same stage (unchanged inputs: skipped, nothing sent)
    result = humeval("judge", root, "--force", "--format", "json", expect=0)
    shown = json.loads(result.stdout)["judges"]["words"]
    assert (shown["requests"], shown["from_cache"], shown["rows"]) == (0, len(words), len(scored))
    assert json.loads(result.stdout)["skipped"] is False
    assert fake.state.requests == len(words)
    # unchanged and not forced: skipped, and the table says the figures are the last run's, not requests sent now
    result = humeval("judge", root, env={"COLUMNS": "250"}, expect=0)
    assert "unchanged since the last run, nothing asked now: the last run's figures" in result.stdout
    assert json.loads(humeval("judge", root, "--format", "json", expect=0).stdout)["skipped"] is True
    assert fake.state.requests == len(words)
    list(run(study))
    result = humeval("budget", root, env={"COLUMNS": "250"}, expect=0)
    assert "LLM judges: predicted before the run" in result.stdout and "fake-judge" in result.stdout


def test_a_judge_runs_from_inside_an_event_loop(fake: FakeOpenAI, tmp_path: Path) -> None:
    study = _study(tmp_path / "s", fake.url, items=2, api_key_env="")

    async def notebook() -> Any:
        return judge(study)  # a notebook cell: an event loop is already running

    assert asyncio.run(notebook()).summary["judges"]["llm"]["answered_now"] == 4


def test_a_wrong_key_stops_the_run_at_once(fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study = _study(tmp_path / "s", fake.url, items=10, concurrency=2)
    fake.state.key = KEY
    monkeypatch.setenv("FAKE_JUDGE_KEY", "sk-wrong")
    with pytest.raises(JudgeError, match="401, the API key was refused"):
        judge(study)
    assert fake.state.requests <= 2  # the requests in flight, not the other 18
    assert "sk-wrong" not in study.logbook_file.read_text()
