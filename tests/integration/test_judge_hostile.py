"""`humeval judge` against a hostile OpenAI-compatible endpoint: it trickles, sends 1 GiB, echoes the key, reports
negative or huge usage, asks to wait `nan` seconds; and a run killed with SIGKILL. The judge ends within its deadline,
its memory stays bounded, the key reaches no file and no output, the cost is never negative and says when it is
estimated, and the ledger's spend counts every request sent."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from humeval import init_study, logbook, run
from humeval.cli.budget import judge_cost_rows
from humeval.costs import budget
from humeval.judging import JudgeError
from humeval.judging.client import MAX_ANSWER_BYTES
from humeval.pipeline import judge
from humeval.study import StudyFolder
from tests.cli import humeval
from tests.fake_openai import ABSENT, KEY, FakeOpenAI

pytestmark = pytest.mark.timeout(300)

PROMPT = "{question}\n<A>{output_a}</A>\n<B>{output_b}</B>\nAnswer [[A]] or [[B]].\n"
SRC = str(Path(__file__).resolve().parents[2] / "src")
ROOT = str(Path(__file__).resolve().parents[2])


@pytest.fixture
def fake() -> Any:
    with FakeOpenAI() as server:
        yield server


def _study(root: Path, url: str, *, items: int = 2, **llm: Any) -> StudyFolder:
    init_study(root, "pairwise", items=items)
    path = root / "humeval.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["sampling"] = {"method": "random", "rate": 1.0}
    settings = {"base_url": url, "model": "fake-judge", "prompt": PROMPT, "api_key_env": "FAKE_JUDGE_KEY",
                "price_input": 0.5, "price_output": 2.0, "backoff": 0.01, "concurrency": 2} | llm
    doc["systems"] = ["baseline", "candidate"]
    doc["data"]["judges"] = [{"name": "llm", "file": "judges/llm.jsonl", "kind": "verdicts", "llm": settings}]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    study = StudyFolder.open(root)
    list(run(study))
    return study


def _judge_entries(study: StudyFolder) -> list[dict[str, Any]]:
    return [e for e in logbook.read(study) if e.get("stage") == "judge"]


def _child(study: StudyFolder, *argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`humeval ARGV` in a process of its own that writes its peak memory (kB) to <study>/../peak.json.

    The peak is the process's own VmHWM (/proc/self/status): getrusage's ru_maxrss keeps, across exec, the
    resident size of the test process that started it."""
    code = ("import json, re, sys\nfrom humeval.cli import main\ntry:\n    main(sys.argv[2:])\n"
            "except SystemExit as exc:\n    code = exc.code\nelse:\n    code = 0\n"
            "peak = int(re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1))\n"
            "open(sys.argv[1], 'w').write(json.dumps({'code': code, 'peak_kb': peak}))\nsys.exit(code)\n")
    environ = os.environ | {"PYTHONPATH": os.pathsep.join([SRC, ROOT]), "COLUMNS": "250"} | (env or {})
    return subprocess.Popen([sys.executable, "-c", code, str(study.root.parent / "peak.json"), *argv],
                            env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_trickling_endpoint_is_cut_at_the_request_and_the_run_deadline(fake: FakeOpenAI, tmp_path: Path) -> None:
    # one byte every 0.5 s for a minute: each read arrives in time, so only a total deadline ends an attempt
    fake.state.trickle_every = 0.5
    fake.state.fail("trickle", times=100)
    study = _study(tmp_path / "a", fake.url, items=2, api_key_env="", timeout=1.5, retries=0, concurrency=4)
    started = time.monotonic()
    with pytest.raises(JudgeError, match=r"no whole answer within 1.5 s"):
        judge(study)
    per_request = time.monotonic() - started
    assert per_request < 1.5 + 5.0  # the four requests (concurrency 4) cut at 1.5 s, not kept for a minute

    study = _study(tmp_path / "b", fake.url, items=4, api_key_env="", timeout=3, retries=3, run_timeout=4)
    started = time.monotonic()
    with pytest.raises(JudgeError, match=r"longer than its run_timeout \(4 s"):
        judge(study)
    whole_run = time.monotonic() - started
    assert 4 <= whole_run < 4 + 5.0  # 8 requests x 4 attempts x 3 s would be 48 s; the run ends at 4 s
    entry = _judge_entries(study)[-1]
    assert entry["outcome"] == "error" and "run_timeout" in entry["error"]
    spend = entry["summary"]["judges"]["llm"]["spend"]  # a failed run logs what it sent, not only the error
    assert spend["requests_sent"] == fake.state.received - 4 and spend["answered"] == 0  # 4: the first study's
    assert spend["unknown"] == spend["requests_sent"] and spend["cost_max"] > 0
    print(f"\ntrickle: per-request deadline 1.5 s -> ended at {per_request:.2f} s; run_timeout 4 s -> {whole_run:.2f} s")


def test_a_1_gib_answer_is_cut_and_memory_stays_bounded(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.state.fail("huge", times=8)  # 4 requests, each sent twice (retries 1): eight answers of 1 GiB each
    study = _study(tmp_path / "s", fake.url, items=2, api_key_env="", retries=1, timeout=60)
    child = _child(study, "judge", str(study.root))
    _, err = child.communicate(timeout=240)
    peak = json.loads((tmp_path / "peak.json").read_text())
    assert child.returncode == 1 and peak["code"] == 1, err
    assert f"an answer longer than {MAX_ANSWER_BYTES:,} bytes" in err and "Traceback" not in err
    peak_mb = peak["peak_kb"] / 1024
    assert peak_mb < 300, f"peak memory {peak_mb:.0f} MB"
    entry = _judge_entries(study)[-1]
    client = entry["summary"]["judges"]["llm"]["client"]
    assert client["oversized"] == 8 and client["requests"] == 8 == fake.state.received
    print(f"\n1 GiB x 8 answers: peak RSS of `humeval judge` {peak_mb:.0f} MB")


def test_an_echoed_key_reaches_no_file_and_no_output(fake: FakeOpenAI, tmp_path: Path) -> None:
    study = _study(tmp_path / "s", fake.url, items=3)
    env = {"FAKE_JUDGE_KEY": KEY}
    # an endpoint that repeats the key in its answers, then in a 400, then (a wrong key) in a 401
    fake.state.echo_key = True
    done = humeval("judge", study.root, env=env, process=True)
    assert done.returncode == 0, done.stderr
    cache = study.state_dir / "judge-cache.sqlite"
    for suffix in ("", "-wal", "-shm"):  # asked again, not answered from the cache
        Path(f"{cache}{suffix}").unlink(missing_ok=True)
    fake.state.fail("echo400", times=6)
    refused = humeval("judge", study.root, "--force", env=env, process=True)
    assert refused.returncode == 1 and "unknown parameter in a request with Authorization: Bearer ***" in refused.stderr
    fake.state.key = "sk-the-right-one-4567"
    wrong = humeval("judge", study.root, "--force", env=env, process=True)
    assert wrong.returncode == 1 and "401, the API key was refused" in wrong.stderr
    assert "Authorization: Bearer ***" in wrong.stderr
    # an entry an older version wrote with the key in it: `humeval log` masks it when it reads it
    with study.logbook_file.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"stage": "judge", "outcome": "error", "error": f"401: echoed Authorization: Bearer {KEY}"})
                 + "\n")
    shown = [humeval("log", study.root, "--format", fmt, process=True, expect=0) for fmt in ("table", "json")]
    outputs = [done, refused, wrong, *shown]
    assert all(KEY not in p.stdout and KEY not in p.stderr for p in outputs)
    assert "Bearer ***" in shown[1].stdout
    written = [p for p in study.root.rglob("*") if p.is_file() and p.name != "logbook.jsonl"]
    assert {p.name for p in written} >= {"judge-cache.sqlite", "judge-ledger.jsonl", "llm.answers.jsonl"}
    holding = [str(p) for p in written if KEY.encode() in p.read_bytes()]
    assert holding == []
    lines = study.logbook_file.read_text().splitlines()
    assert all(KEY not in line for line in lines[:-1])  # every line humeval wrote; the last is the planted one
    answers = (study.root / "judges" / "llm.answers.jsonl").read_text()
    assert "(asked with Bearer ***)" in answers  # the answer kept, the key masked


@pytest.mark.parametrize(("usage", "why"), [
    ({"prompt_tokens": -4_000_000_000, "completion_tokens": 5}, "prompt_tokens -4000000000 is outside"),
    ({"prompt_tokens": 10**15, "completion_tokens": 10**15}, "completion_tokens 1000000000000000 is outside"),
    ({"prompt_tokens": "12", "completion_tokens": 2.5}, "prompt_tokens '12' is not an integer"),
    ({"prompt_tokens": True, "completion_tokens": None}, "completion_tokens missing"),
    (ABSENT, "no usage in the answer"),
])
def test_invalid_or_missing_usage_is_estimated_and_flagged(fake: FakeOpenAI, tmp_path: Path, usage: Any,
                                                           why: str) -> None:
    fake.state.usage = usage
    study = _study(tmp_path / "s", fake.url, items=3, api_key_env="")
    summary = judge(study).summary["judges"]["llm"]
    # the estimate, recomputed from the requests the fake received and its answers: characters / 4, rounded up
    tokens_in = sum(math.ceil(sum(len(m["content"]) for m in b["messages"]) / 4) for b in fake.state.bodies)
    answers = [json.loads(x) for x in (study.root / "judges" / "llm.answers.jsonl").read_text().splitlines()]
    tokens_out = sum(math.ceil(len(a["content"]) / 4) for a in answers)
    if isinstance(usage, dict) and usage.get("completion_tokens") == 5:  # the valid count is kept
        tokens_out = 5 * len(answers)
    assert (summary["tokens_in"], summary["tokens_out"]) == (tokens_in, tokens_out)
    assert summary["cost"] == pytest.approx(tokens_in * 0.5 / 1e6 + tokens_out * 2.0 / 1e6) and summary["cost"] >= 0
    assert summary["usage_estimated"] == len(answers) == 6 and summary["cost_estimated"] is True
    assert all(why in a["usage_estimated"] for a in answers)
    assert summary["spend"]["usage_estimated"] == 6 and summary["spend"]["cost"] == summary["cost"]
    table = humeval("judge", study.root, "--force", "--format", "json", expect=0)
    assert json.loads(table.stdout)["judges"]["llm"]["cost_all_estimated"] is True
    row = judge_cost_rows(budget(study.root, predict=False).judge_runs)[0]  # the cost summary flags it too
    assert row["its answers: cost"].endswith("(estimated)") and row["sent so far"] == 6


def test_retry_after_nan_waits_the_backoff(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.state.retry_after = "nan"
    fake.state.fail("429", times=2)
    study = _study(tmp_path / "s", fake.url, items=2, api_key_env="", concurrency=1, backoff=0.2)
    client = judge(study).summary["judges"]["llm"]["client"]
    assert client["rate_limited"] == 2
    # two requests' first attempts: each waits backoff 0.2 x jitter in [0.5, 1] (nan used to mean no wait at all)
    assert 0.2 <= client["waited_seconds"] <= 0.4 and math.isfinite(client["waited_seconds"])


def test_a_run_killed_with_sigkill_is_counted_by_the_next(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.state.delay = 0.4
    study = _study(tmp_path / "s", fake.url, items=8, api_key_env="", concurrency=4)
    child = _child(study, "judge", str(study.root))
    deadline = time.monotonic() + 60
    while fake.state.requests < 6 and time.monotonic() < deadline:  # some answered, four in flight
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    time.sleep(fake.state.delay + 0.2)  # the requests in flight reach the fake's count
    killed_received = fake.state.received
    assert _judge_entries(study) == []  # a killed run writes no logbook entry: the ledger is what it leaves
    fake.state.delay = 0.0
    summary = judge(study).summary["judges"]["llm"]
    spend = summary["spend"]
    # every request the endpoint received, in the killed run and in this one, is in the logbook's spend
    # (the ledger's line is written before the request leaves: a kill between the two counts one more than arrived)
    assert fake.state.received <= spend["requests_sent"] <= fake.state.received + 4 and spend["runs"] == 2
    assert spend["answered"] + spend["unknown"] == spend["requests_sent"] and spend["unknown"] >= 1
    assert summary["from_cache"] + summary["answered_now"] == 16
    assert spend["cost_max"] >= spend["cost"] >= summary["cost"] > 0
    assert budget(study.root, predict=False).judge_runs[0]["spent"] == spend  # the budget knows it too
    print(f"\nSIGKILL: the endpoint received {fake.state.received} requests ({killed_received} before the kill); "
          f"the re-run's spend counts {spend['requests_sent']} ({spend['answered']} answered, {spend['unknown']} "
          "unknown)")
