"""Table 2 of Thomson & Belz (2025) ("(Mostly) Automatic Experiment Execution for Human
Evaluations of NLP Systems"), dummy experiments of the paper's section 4 design: Static is
exact (Kruskal-Wallis H = N - 1 = 3239.00 for N = 3,240, Krippendorff's alpha = 1.00);
Normal and Random are random draws, so we check the paper's pattern: Normal H about 1280
and alpha about 0.40 (paper: 1282.57, 0.40), Random alpha about 0 (paper: 0.01) with no
significant difference (paper: p = 0.64)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from humeval.reproduce.thomson import PAPER, paper_lists, thomson_dummy


@pytest.fixture(scope="module")
def table():
    return {row.key: row for row in thomson_dummy(fast=True).rows}


def test_static_is_exact(table):
    assert table["Static: Kruskal-Wallis H"].ours == pytest.approx(3239.00, abs=1e-9)
    assert table["Static: Krippendorff alpha (ordinal)"].ours == pytest.approx(1.00)
    assert table["Static: p-value"].ours == "< 0.001"


def test_normal_matches_the_paper_in_kind(table):
    assert 1100 < table["Normal: Kruskal-Wallis H"].ours < 1450
    assert table["Normal: p-value"].ours == "< 0.001"
    assert abs(table["Normal: Krippendorff alpha (ordinal)"].ours - PAPER["normal"]["alpha"]) < 0.06


def test_random_has_no_difference_and_no_agreement(table):
    assert abs(table["Random: Krippendorff alpha (ordinal)"].ours) < 0.05
    assert table["Random: p-value"].ours != "< 0.001" and float(table["Random: p-value"].ours) > 0.001


def test_paper_design_gives_every_output_six_judgements_from_different_lists():
    tasks, lists = paper_lists(seed=0)
    assert len(tasks) == 540 and len(lists) == 90 and all(len(pl.tasks) == 36 for pl in lists)
    seen: dict[str, set[str]] = {}
    for pl in lists:
        items = [t.item_id for t in pl.tasks]
        assert len(set(items)) == 36  # 36 distinct items: one per (combination, system)
        assert sorted({t.systems[0] for t in pl.tasks}) == ["A", "B", "C"]
        for t in pl.tasks:
            seen.setdefault(t.task_id, set()).add(pl.list_id)
    assert {len(v) for v in seen.values()} == {6}


def test_cli_prints_paper_vs_ours_as_json():
    proc = subprocess.run([sys.executable, "-m", "humeval", "reproduce", "thomson-dummy", "--fast", "--format", "json"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["rows"]
    assert {"key", "paper", "ours", "note"} <= set(rows[0])
    assert any(r["key"] == "Static: Kruskal-Wallis H" and r["paper"] == 3239.0 for r in rows)
