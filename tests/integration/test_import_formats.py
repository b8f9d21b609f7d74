"""Another tool's judgement file through ``humeval import``: FastChat battles join the design's tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from humeval import init_study, run
from humeval.errors import DataError, PlatformError
from humeval.judgements import read_judgements
from humeval.pipeline import import_judgements
from humeval.study import StudyFolder


def test_fastchat_battles_are_imported_as_judgements_of_the_design(tmp_path: Path) -> None:
    root = tmp_path / "s"
    init_study(root, "pairwise", items=6, seed=3)
    study = StudyFolder.open(root)
    list(run(study))
    tasks = [t for t in study.read_tasks() if t.kind == "task"]
    criterion = next(c.name for c in study.protocol.criteria if c.type == "2afc")
    battles = []
    for i, task in enumerate(tasks):
        a, b = task.systems
        battles.append({"question_id": task.item_id, "model_a": b, "model_b": a,  # either order joins the task
                        "winner": ["model_a", "model_b", "tie"][i % 3], "judge": f"arena_user_{i % 2}", "turn": 1,
                        "anony": True, "language": "English", "tstamp": 1700000000.5 + i})
    battles.append({"question_id": "not-an-item", "model_a": tasks[0].systems[0], "model_b": tasks[0].systems[1],
                    "winner": "model_a", "judge": "arena_user_9", "tstamp": 1700000000.0})
    path = tmp_path / "clean_battle_20261127.json"
    with path.open("w") as fout:
        json.dump(battles, fout, indent=2)
    result = import_judgements(study, "fastchat", path)
    assert result.summary["imported"] == len(tasks) and result.summary["skipped"] == 1
    assert "not-an-item" in result.summary["skipped_examples"][0]
    table = read_judgements(root / "results" / "judgements.jsonl")
    assert len(table) == len(tasks) and set(table["task_id"]) == {t.task_id for t in tasks}
    assert (table["criterion"] == criterion).all()
    first = table.set_index("task_id").loc[tasks[0].task_id]
    assert (first["system"], first["system_b"], first["choice"]) == (tasks[0].systems[1], tasks[0].systems[0], "A")
    # a rating study has no 2afc criterion to receive battles; a broken file names itself
    with pytest.raises(PlatformError, match=r"a fastchat file holds 2afc judgements; the protocol needs exactly one"):
        rating = tmp_path / "r"
        init_study(rating, "rating", items=4)
        rstudy = StudyFolder.open(rating)
        list(run(rstudy))
        import_judgements(rstudy, "fastchat", path)
    path.write_text('[{"model_a": "a", "model_b": "b", "winner": "tie"},')
    with pytest.raises(DataError, match=r"clean_battle_20261127.json:1: broken JSON"):
        import_judgements(study, "fastchat", path)


def test_an_mqm_file_reaches_the_esa_analysis(tmp_path: Path) -> None:
    from humeval import run_stage
    from humeval.results import Results
    from tests.integration.server.studies import esa_study

    study = esa_study(tmp_path / "esa", items=4)
    criterion = next(c.name for c in study.protocol.criteria if c.type == "esa")
    texts = study.outputs().texts
    lines = ["system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"]
    for r, rater in enumerate(("rater1", "rater2")):
        for task in (t for t in study.read_tasks() if t.kind == "task"):
            (system,) = task.systems
            words = texts[(task.item_id, system)].output.split(" ")
            if system == "baseline":  # one major error on the first word; a minor one for rater2
                target = " ".join([f"<v>{words[0]}</v>", *words[1:]])
                lines.append(f"{system}\tdoc\t1\t{task.item_id}\t{rater}\tsrc\t{target}\tAccuracy/Mistranslation\tMajor")
                if r:
                    lines.append(f"{system}\tdoc\t1\t{task.item_id}\t{rater}\tsrc\t{target}\tStyle/Awkward\tMinor")
            else:
                lines.append(f"{system}\tdoc\t1\t{task.item_id}\t{rater}\tsrc\t{' '.join(words)}\tNo-error\tNo-error")
    path = tmp_path / "mqm_study.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = import_judgements(study, "mqm", path)
    assert result.summary["skipped"] == 0
    for stage in ("collate", "exclude", "analyze"):
        run_stage(study, stage)
    res = Results.read(study.results_dir / "results.json").criteria[criterion]
    weighted = {r.system: r for r in res.errors if r.measure.startswith("weighted")}
    # baseline: one major per output, plus one minor for half the judgements: 5 + 0.5 weighted errors per output
    assert weighted["baseline"].estimate == pytest.approx(5.5) and weighted["reference"].estimate == 0.0
