"""Table 2 of Thomson & Belz (2025) ("(Mostly) Automatic Experiment Execution for Human
Evaluations of NLP Systems"), dummy experiments of the paper's section 4 design: Static is
exact (Kruskal-Wallis H = N - 1 = 3239.00 for N = 3,240, Krippendorff's alpha = 1.00);
Normal and Random are random draws, so we check the paper's pattern: Normal H about 1280
and alpha about 0.40 (paper: 1282.57, 0.40), Random alpha about 0 (paper: 0.01) with no
significant difference (paper: p = 0.64)."""

from __future__ import annotations

import json

import pytest

from humeval.reproduce.thomson import PAPER, thomson_design, thomson_dummy, write_study
from tests.cli import humeval


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


def test_design_matches_section_4_1():
    # paper, section 4.1: 12 combinations x 15 items x 3 systems, 36 items per participant,
    # six judgements per output: "3,240 total judgments, obtained from 90 distinct participants"
    rows = {r.key: r for r in thomson_design().rows}
    assert rows["participant lists"].ours == 90 and rows["assignments (judgements)"].ours == 3240
    assert rows["lists with one item per combination and system"].ours == 90
    assert all(r.match for r in rows.values()), [r for r in rows.values() if not r.match]


def _lists(root, seed):
    study = write_study(root, seed)
    return study, [pl.to_json() for pl in study.read_lists()]


def test_same_seed_same_lists_and_every_list_balanced(tmp_path):
    study, first = _lists(tmp_path / "a", 0)
    _, again = _lists(tmp_path / "b", 0)
    _, other = _lists(tmp_path / "c", 1)
    assert first == again and first != other
    frame = study.outputs().frame.drop_duplicates("item_id").set_index("item_id")
    combos = {i: (frame.at[i, "category"], int(frame.at[i, "size"])) for i in frame.index}
    assert len(first) == 90 and sum(len(pl["tasks"]) for pl in first) == 3240
    expected = {(cat, size, s) for cat in ("Airport", "Building", "City") for size in (1, 2, 3, 4) for s in "ABC"}
    seen: dict[str, set[str]] = {}
    for pl in first:
        cells = [(*combos[t["item_id"]], t["systems"][0]) for t in pl["tasks"]]
        assert len(cells) == 36 and set(cells) == expected  # one item per combination and system
        assert len({t["item_id"] for t in pl["tasks"]}) == 36
        for t in pl["tasks"]:
            seen.setdefault(t["task_id"], set()).add(pl["list_id"])
    assert len(seen) == 540 and {len(v) for v in seen.values()} == {6}


def test_cli_prints_the_design_beside_the_paper():
    proc = humeval("reproduce", "thomson-design", "--format", "json", expect=0)
    rows = {r["key"]: r for r in json.loads(proc.stdout)["rows"]}
    assert rows["participant lists"] == {"key": "participant lists", "paper": 90, "ours": 90, "match": True, "note": ""}
    assert rows["assignments (judgements)"]["ours"] == 3240


def test_cli_prints_paper_vs_ours_as_json():
    proc = humeval("reproduce", "thomson-dummy", "--fast", "--format", "json", expect=0)
    rows = json.loads(proc.stdout)["rows"]
    assert {"key", "paper", "ours", "note"} <= set(rows[0])
    assert any(r["key"] == "Static: Kruskal-Wallis H" and r["paper"] == 3239.0 for r in rows)
