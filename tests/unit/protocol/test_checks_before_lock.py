"""Problems a protocol can have are all found by `validate`, with their lines, before lock."""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval.errors import ProtocolError
from humeval.lock import check_lock, lock_study, read_lock
from humeval.protocol.load import load_protocol
from humeval.study import StudyFolder
from humeval.templates import init_study
from humeval.validate import validate_study


@pytest.fixture
def pairwise(tmp_path: Path) -> StudyFolder:
    init_study(tmp_path / "s", "pairwise", items=8)
    return StudyFolder.open(tmp_path / "s")


def _edit(study: StudyFolder, old: str, new: str) -> None:
    text = study.protocol_file.read_text()
    assert old in text
    study.protocol_file.write_text(text.replace(old, new, 1))


def _line(study: StudyFolder, text: str, occurrence: int = 1) -> int:
    lines = [i for i, line in enumerate(study.protocol_file.read_text().splitlines(), start=1) if line.startswith(text)]
    return lines[occurrence - 1]


def test_a_duplicated_top_level_key_is_an_error_naming_both_lines(pairwise: StudyFolder):
    text = pairwise.protocol_file.read_text()
    pairwise.protocol_file.write_text(text + "analysis:\n  alpha: 0.1\n")
    first, second = _line(pairwise, "analysis:"), _line(pairwise, "analysis:", 2)
    problems = validate_study(pairwise.root)
    assert f"humeval.yaml:{second}: analysis: duplicate key (first at line {first})" in "\n".join(problems)
    with pytest.raises(ProtocolError, match="duplicate key"):
        load_protocol(pairwise.root)  # every reader of the protocol refuses it, not only validate


def test_a_duplicated_nested_key_is_an_error(pairwise: StudyFolder):
    _edit(pairwise, "  delta: 0.05\n", "  delta: 0.05\n  delta: 0.2\n")
    problems = validate_study(pairwise.root)
    assert any("stopping.delta: duplicate key (first at line" in p for p in problems), problems


def test_lastrun_without_a_horizon_cannot_be_validated_or_locked(pairwise: StudyFolder):
    _edit(pairwise, "rule: anytime", "rule: hoeffding-lastrun")
    problems = validate_study(pairwise.root)
    assert len(problems) == 1 and "stopping.max_judgements" in problems[0] and "humeval.yaml:" in problems[0]
    with pytest.raises(ProtocolError, match="cannot lock") as exc:
        lock_study(pairwise)
    assert exc.value.problems == problems and read_lock(pairwise) is None


def test_cross_references_come_with_lines_in_the_same_pass_as_schema_problems(pairwise: StudyFolder):
    _edit(pairwise, "  alpha: 0.05\n", "  alpha: 0.05\n  criteria: [qualty]\n  bootstrap: many\n")
    _edit(pairwise, "  systems: [baseline, candidate]", "  systems: [baseline, candiate]")
    problems = validate_study(pairwise.root)
    text = "\n".join(problems)
    assert "analysis.bootstrap" in text  # the schema problem
    assert f"humeval.yaml:{_line(pairwise, '  criteria: [qualty]')}: analysis.criteria[0]: unknown criterion 'qualty'. " \
           "Did you mean 'quality'?" in text
    assert "stopping.systems[1]: unknown system 'candiate'" in text


def test_more_than_two_systems_default_to_best_and_goal_pair_needs_the_pair_named(tmp_path: Path):
    init_study(tmp_path / "s", "pairwise", items=8)
    study = StudyFolder.open(tmp_path / "s")
    _edit(study, "systems: [baseline, candidate]\n", "systems: [baseline, candidate, third]\n")
    _edit(study, "  systems: [baseline, candidate]", "  systems: []")
    data = study.root / "data" / "outputs.jsonl"
    lines = data.read_text().splitlines()
    data.write_text("\n".join([*lines, *(line.replace('"baseline"', '"third"') for line in lines if '"baseline"' in line)]) + "\n")
    problems = validate_study(study.root)
    assert not any(p.startswith("humeval.yaml") and "stopping" in p for p in problems), problems  # goal best
    from humeval.protocol.comparisons import watched_comparisons

    (comp,) = watched_comparisons(StudyFolder.open(study.root).protocol, ["baseline", "candidate", "third"])
    assert comp.goal == "best" and comp.members == ("baseline", "candidate", "third")
    _edit(study, "  systems: []", "  systems: []\n  goal: pair")
    problems = validate_study(study.root)
    assert any("stopping.systems: empty, and the study has 3 systems" in p for p in problems), problems
    _edit(study, "  goal: pair", "  goal: top-k\n  top: 3\n  rule: hoeffding")
    text = "\n".join(validate_study(study.root))
    assert "stopping.top: goal top-k needs 1 <= top < 3" in text
    assert "stopping.rule: goal 'top-k' decides with pairwise mixture tests" in text


def test_values_of_the_wrong_type_are_schema_problems_not_crashes(pairwise: StudyFolder):
    _edit(pairwise, "  delta: 0.05", "  delta: lots")
    _edit(pairwise, "  systems: [baseline, candidate]", "  systems: candidate")
    _edit(pairwise, "method: auto", "method: [auto]")
    problems = validate_study(pairwise.root)
    assert any("stopping.delta: Input should be a valid number" in p for p in problems)
    assert any("stopping.systems: Input should be a valid list" in p for p in problems)
    assert any("sampling.method" in p for p in problems)



@pytest.mark.parametrize(("stopping", "rule", "at", "expected"), [
    ("  systems: []\n  goal: pair", "anytime", "  systems: []",
     "stopping.systems: empty, and the study has 3 systems (baseline, candidate, third): name the two systems goal "
     "'pair' compares, or set stopping.goal to best, top-k or ranking"),
    ("  systems: [baseline]\n  goal: best", "anytime", "  systems: [baseline]",
     "stopping.systems: goal 'best': name at least two systems (or none for all), got ['baseline']"),
    ("  systems: [baseline, candidat]\n  goal: pair", "anytime", "  systems: [baseline, candidat]",
     "stopping.systems[1]: unknown system 'candidat'. Did you mean 'candidate'? Available: baseline, candidate, third"),
    ("  systems: []\n  goal: ranking", "hoeffding", "  rule: hoeffding",
     "stopping.rule: goal 'ranking' decides with pairwise mixture tests: use rule anytime or mixture, got 'hoeffding'"),
    ("  systems: []\n  goal: top-k\n  top: 3", "anytime", "  top: 3",
     "stopping.top: goal top-k needs 1 <= top < 3 (the systems compared), got 3"),
])
def test_validate_and_the_watched_comparisons_state_the_goal_rules_once(tmp_path: Path, stopping: str, rule: str,
                                                                        at: str, expected: str):
    """validate reports a goal problem with its YAML line; building the comparisons refuses the same problem in the
    same words (both from protocol.comparisons.goal_problems)."""
    from humeval.protocol.comparisons import watched_comparisons

    init_study(tmp_path / "s", "pairwise", items=8)
    study = StudyFolder.open(tmp_path / "s")
    _edit(study, "systems: [baseline, candidate]\n", "systems: [baseline, candidate, third]\n")
    _edit(study, "  systems: [baseline, candidate]", stopping)
    _edit(study, "rule: anytime", f"rule: {rule}")
    problems = [p for p in validate_study(study.root) if ": stopping" in p]
    assert problems and problems[0].endswith(f"humeval.yaml:{_line(study, at)}: {expected}"), problems
    with pytest.raises(ProtocolError) as exc:
        watched_comparisons(StudyFolder.open(study.root).protocol, ["baseline", "candidate", "third"])
    assert str(exc.value).startswith(expected)


def test_pooling_is_validated_and_locked(tmp_path: Path):
    init_study(tmp_path / "s", "pairwise", items=8)
    study = StudyFolder.open(tmp_path / "s")
    _edit(study, "  delta: 0.05", "  delta: 0.05\n  pooling: true")
    problems = validate_study(study.root)  # two systems: nothing to pool through
    line = _line(study, "  pooling:")
    assert any(p.endswith(f"humeval.yaml:{line}: stopping.pooling: pooling needs goal best, top-k or ranking over 3 or "
                          "more systems (votes pooled through common opponents), got goal 'pair' over 2 systems")
               for p in problems), problems
    _edit(study, "systems: [baseline, candidate]\n", "systems: [baseline, candidate, third]\n")
    _edit(study, "  systems: [baseline, candidate]", "  systems: []\n  goal: best\n  epoch: 120")
    data = study.root / "data" / "outputs.jsonl"
    lines = data.read_text().splitlines()
    data.write_text("\n".join([*lines, *(x.replace('"baseline"', '"third"') for x in lines if '"baseline"' in x)]) + "\n")
    assert not any("stopping" in p for p in validate_study(study.root))
    from humeval.protocol.comparisons import watched_comparisons

    protocol = StudyFolder.open(study.root).protocol
    (comp,) = watched_comparisons(protocol, ["baseline", "candidate", "third"])
    assert comp.pooling and comp.epoch == 120 and comp.seed == protocol.study.seed
    lock_study(StudyFolder.open(study.root))
    _edit(study, "  pooling: true", "  pooling: false")
    with pytest.raises(ProtocolError, match="stopping"):  # the switch is part of the locked protocol
        check_lock(StudyFolder.open(study.root))
