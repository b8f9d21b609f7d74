"""``humeval arena replay`` from the command line: rows, JSON, the bootstrap footer and user errors."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import humeval

from .made_up import clear_order_counts


def test_replay_json_and_table(tmp_path: Path) -> None:
    data = clear_order_counts(tmp_path)
    res = humeval("arena", "replay", data, "--models", "4", "--question", "best,top-k", "--top", "2",
                  "--replays", "10", "--bootstrap", "20", "--format", "json", expect=0)
    out = json.loads(res.stdout)
    assert out["models"] == ["a", "b", "c", "d"] and out["votes"] == 3600
    rows = {(r["question"], r["policy"]): r for r in out["rows"]}
    assert set(rows) == {("best", "adaptive"), ("best", "uniform"), ("top-2", "adaptive"), ("top-2", "uniform")}
    best = rows[("best", "adaptive")]
    assert best["decided"] > 0.5 and best["answer"] == "a" and best["wrong"] == 0
    assert 0 < best["votes_median"] <= 3600 and best["wrong_upper95"] < 0.3
    assert out["bootstrap"]["rank_low"][0] == 1
    table = humeval("arena", "replay", data, "--models", "4", "--question", "best", "--replays", "5",
                    "--bootstrap", "20", expect=0)
    assert "arena replay: 4 models, 3,600 votes, delta 0.05" in table.stdout
    assert "fixed-n bootstrap of all 3,600 votes (20 rounds, valid at one look only)" in table.stdout


def test_user_errors(tmp_path: Path) -> None:
    res = humeval("arena", "replay", tmp_path / "none.json", expect=1)
    assert "no such arena votes file" in res.stderr
    res = humeval("arena", "replay", clear_order_counts(tmp_path), "--models", "4", "--policy", "adaptve", expect=1)
    assert "unknown pair policy 'adaptve'. Did you mean 'adaptive'?" in res.stderr
    res = humeval("arena", "replay", clear_order_counts(tmp_path), "--models", "9", expect=1)
    assert "--models must be an integer in 2..4" in res.stderr


def _arena_study(tmp_path: Path, shared_data: Path) -> Path:
    arena = shared_data / "arena"
    (tmp_path / "humeval.yaml").write_text(f"""arena:
  limits: {{first_token_seconds: 5, total_seconds: 20, max_chars: 3000}}
  prompts: {{typed: true, identity_words: [Kubernetes]}}
  models:
    - name: airoboros
      kind: recorded
      table: {arena / 'llmfao-results.jsonl'}
      prompts: {arena / 'llmfao-prompts.jsonl'}
      model: Airoboros L2 70B
      model_column: name
      output_column: result
      chunk_chars: 12
""", encoding="utf-8")
    return tmp_path


def test_generate_streams_a_recorded_answer_and_says_what_the_identity_filter_finds(tmp_path: Path,
                                                                                   shared_data: Path) -> None:
    study = _arena_study(tmp_path, shared_data)
    prompt = "Argue for and against the use of kubernetes in the style of a haiku."
    res = humeval("arena", "generate", study, "--model", "airoboros", "--prompt", prompt, expect=0)
    assert res.stdout.strip() == "For Kubernetes, a plea,\nIn containers it sets us free,\nYet complexity, its fee."
    assert "airoboros: 79 characters" in res.stderr and "identity filter: Kubernetes" in res.stderr
    out = json.loads(humeval("arena", "generate", study, "-m", "airoboros", "-p", prompt, "--format", "json",
                             expect=0).stdout)
    assert out["tokens_out"] == 20 and out["identity"] == ["Kubernetes"] and out["limits"]["max_chars"] == 3000
    short = humeval("arena", "generate", study, "-m", "airoboros", "-p", prompt, "--max-chars", "20", expect=1)
    assert "generation failed (too_long)" in short.stderr and "passed 20 characters" in short.stderr
    unknown = humeval("arena", "generate", study, "-m", "airobros", "-p", prompt, expect=1)
    assert "no such model in arena.models. Did you mean 'airoboros'?" in unknown.stderr
    with (study / "humeval.yaml").open("a", encoding="utf-8") as fh:
        fh.write("    - {name: absent, kind: recorded, table: " + str(shared_data / "arena" / "llmfao-results.jsonl")
                 + ", model: Alpaca (7B), model_column: name, output_column: result}\n")
    every = humeval("arena", "generate", study, "-p", prompt, "--format", "json", expect=1)
    records = json.loads(every.stdout)
    assert [(r["model"], r["error"]) for r in records] == [("airoboros", ""), ("absent", "no_recording")]
    assert "absent: generation failed (no_recording)" in every.stderr
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "humeval.yaml").write_text("study: {name: x, seed: 1}\n", encoding="utf-8")
    assert "no `arena.models` section" in humeval("arena", "generate", tmp_path / "empty", "-m", "a", "-p", "q",
                                                  expect=1).stderr
