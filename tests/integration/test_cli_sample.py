"""``humeval sample``: standalone mode, study mode with phases and imported scores, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from humeval.data.casf import load_casf
from humeval.files import write_jsonl
from tests.cli import humeval

METHODS = ["random", "stratified", "systematic", "heuristic", "balanced", "casf", "8m", "sm", "ol", "auto"]


@pytest.fixture(scope="module")
def newsroom(shared_data: Path) -> Path:
    return shared_data / "casf" / "newsroom.jsonl"


def _json(args: list[str]) -> dict:
    result = humeval(*args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("method", METHODS)
def test_standalone_selects_exact_size_reproducibly(newsroom, method):
    args = ["sample", "--data", str(newsroom), "--method", method, "--rate", "0.5", "--seed", "7", "--simulate-scores",
            "--format", "json"]
    first, again = _json(args), _json(args)
    assert first == again
    assert len(first["selected"]) == 30 == len(set(first["selected"]))
    assert len(first["phases"]) == 30
    ids = set(pd.read_json(newsroom, lines=True, dtype={"sample_id": str})["sample_id"])
    assert set(first["selected"]) <= ids
    if method == "casf":
        assert sorted(set(first["phases"])) == [0, 1, 2, 3, 4]


def test_standalone_without_scores_stops_after_the_preliminary_phase(newsroom):
    result = humeval("sample", "--data", str(newsroom), "--method", "casf", "--rate", "0.5", "-f", "json")
    assert result.returncode == 0
    assert json.loads(result.stdout)["phases"] == [0] * 6


def test_user_errors_exit_1_and_name_the_value(newsroom, tmp_path):
    bad_rate = humeval("sample", "--data", str(newsroom), "--method", "random", "--rate", "1.5")
    assert bad_rate.returncode == 1 and "got 1.5" in bad_rate.stderr and "Traceback" not in bad_rate.stderr
    bad_metric = humeval("sample", "--data", str(newsroom), "--method", "sm", "--param", "metric=mover_scor")
    assert bad_metric.returncode == 1 and "unknown metric column 'mover_scor'" in bad_metric.stderr
    assert "Did you mean 'auto.mover_score'" in bad_metric.stderr
    many_phases = humeval("sample", "--data", str(newsroom), "--method", "casf", "--rate", "0.05", "--param", "phases=5")
    assert many_phases.returncode == 1 and "3 selected item(s) cannot be split into 5 phases" in many_phases.stderr
    frame = load_casf("newsroom", newsroom.parent.parent)
    frame.loc[frame.index[:3], "human.fluency"] = None
    holes = tmp_path / "holes.jsonl"
    write_jsonl(holes, frame.to_dict(orient="records"))
    missing = humeval("sample", "--data", str(holes), "--method", "casf", "--simulate-scores")
    assert missing.returncode == 1 and "aspect 'human.fluency' is missing for" in missing.stderr


def _study(root: Path, shared_data: Path, method: str = "casf", params: str = "{phases: 3}") -> pd.DataFrame:
    frame = load_casf("newsroom", shared_data)
    (root / "data").mkdir(parents=True)
    write_jsonl(root / "data" / "outputs.jsonl", frame.to_dict(orient="records"))
    (root / "humeval.yaml").write_text(
        f"""version: 1
study: {{name: casf-phases, seed: 5}}
data: {{files: [data/outputs.jsonl]}}
criteria:
  - {{name: coherence, type: likert, question: "How coherent is the summary?", points: 5}}
sampling: {{method: {method}, rate: 0.5, params: {params}}}
""",
        encoding="utf-8",
    )
    return frame


def _items(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "items.jsonl").read_text().splitlines()]


def test_study_phases_advance_with_imported_scores(tmp_path, shared_data):
    root = tmp_path / "study"
    frame = _study(root, shared_data)
    result = humeval("sample", str(root))
    assert result.returncode == 0, result.stderr
    items = _items(root)
    assert [i["phase"] for i in items] == [0] * 10
    for done in (2, 3):
        chosen = {i["item_id"] for i in items}
        scores = frame[frame.item_id.isin(chosen)][["item_id", "system", "human.coherence", "human.fluency"]]
        write_jsonl(root / "human_scores.jsonl", scores.to_dict(orient="records"))
        assert humeval("sample", str(root)).returncode == 0
        items = _items(root)
        assert sorted({i["phase"] for i in items}) == list(range(done))
    assert len(items) == 30 == len({i["item_id"] for i in items})
    log = [json.loads(line) for line in (root / ".humeval" / "logbook.jsonl").read_text().splitlines()]
    runs = [e for e in log if e["stage"] == "sample" and e["outcome"] == "ok"]
    assert [e["summary"]["phases_done"] for e in runs] == [1, 2, 3]
    assert runs[-1]["parameters"]["scores"]["path"] == "human_scores.jsonl"
    # unchanged scores: the stage is skipped (nothing logged)
    assert humeval("sample", str(root)).returncode == 0
    assert len((root / ".humeval" / "logbook.jsonl").read_text().splitlines()) == len(log)
    # the same two aspects replayed from the data give the same selection
    replay = tmp_path / "replay"
    _study(replay, shared_data)
    frame[["item_id", "system", "human.coherence", "human.fluency"]].pipe(
        lambda f: write_jsonl(replay / "human_scores.jsonl", f.to_dict(orient="records"))
    )
    assert humeval("sample", str(replay)).returncode == 0
    assert [i["item_id"] for i in _items(replay)] == [i["item_id"] for i in items]


def test_study_simulated_scores_run_every_phase_and_log(tmp_path, shared_data):
    root = tmp_path / "sim"
    _study(root, shared_data)
    assert humeval("sample", str(root), "--simulate-scores").returncode == 0
    assert sorted({i["phase"] for i in _items(root)}) == [0, 1, 2]
    log = [json.loads(line) for line in (root / ".humeval" / "logbook.jsonl").read_text().splitlines()]
    assert log[-1]["parameters"]["simulate_scores"] is True and log[-1]["summary"]["phases_done"] == 3


def test_run_still_writes_items(tmp_path, shared_data):
    root = tmp_path / "run"
    _study(root, shared_data, method="balanced", params="{candidates: 50}")
    result = humeval("run", str(root))
    assert result.returncode == 0, result.stderr
    assert len(_items(root)) == 30


def test_metrics_command_writes_reference_free_features(tmp_path):
    data = tmp_path / "outputs.jsonl"
    write_jsonl(data, [
        {"item_id": "a", "system": "x", "output": "the cat sat on the mat", "input": "a cat on a mat"},
        {"item_id": "a", "system": "y", "output": "cat cat cat cat", "input": "a cat on a mat"},
    ])
    out = tmp_path / "scored.jsonl"
    result = humeval("metrics", str(data), "--out", str(out), "--cache", str(tmp_path / "cache"),
                                 "--format", "json")
    assert result.returncode == 0, result.stderr
    summary = {r["metric"]: r for r in json.loads(result.stdout)}
    assert set(summary) == {"auto.length", "auto.distinct2", "auto.src_copy", "auto.len_ratio"}
    scored = pd.read_json(out, lines=True, precise_float=True)
    assert scored["auto.length"].tolist() == [6, 4] and scored["auto.distinct2"].tolist() == [1.0, 1 / 3]


@pytest.fixture(scope="module")
def faithful_reference(newsroom):
    """casf-faithful through the API on the data's system order (as `humeval reproduce casf`), and on sorted names."""
    from humeval.sampling import ItemTable, get_sampler
    from humeval.sampling.base import run_phases, sample_size

    frame = load_casf(str(newsroom))
    order = list(dict.fromkeys(frame["system"]))
    assert order != sorted(order)  # the data's systems are not in alphabetical order
    by_name = ItemTable.from_long(frame)
    sampler = get_sampler("casf-faithful", metric="auto.mover_score")

    def select(table: ItemTable) -> list[str]:
        aspects = sorted(table.human)
        rows, _ = run_phases(sampler, table, sample_size(table.n_items, 0.5), 0, lambda r: table.scores(aspects, r))
        return [str(i) for i in table.item_ids[rows]]

    data_order, sorted_order = select(by_name.with_system_order(order)), select(by_name)
    assert data_order != sorted_order  # the order matters here, so the tests below can tell them apart
    return data_order


def test_casf_faithful_keeps_the_datas_system_order_standalone(newsroom, faithful_reference):
    out = _json(["sample", "--data", str(newsroom), "--method", "casf-faithful", "--param", "metric=auto.mover_score",
                 "--rate", "0.5", "--simulate-scores", "--format", "json"])
    assert out["selected"] == faithful_reference


def test_casf_faithful_keeps_the_datas_system_order_in_the_stage(tmp_path, shared_data, faithful_reference):
    root = tmp_path / "faithful"
    _study(root, shared_data, method="casf-faithful", params="{metric: auto.mover_score}")
    result = humeval("sample", str(root), "--simulate-scores")
    assert result.returncode == 0, result.stderr
    assert [i["item_id"] for i in _items(root)] == faithful_reference
