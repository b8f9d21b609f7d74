"""`humeval validate` refuses session settings that cannot work, with the value to set."""

from __future__ import annotations

import yaml

from humeval.templates import init_study
from humeval.validate import study_warnings, validate_study


def _study(tmp_path, *, sessions: int | None = None, wave: int | None = None, strategy: str = "list"):
    path = init_study(tmp_path / "s", "pairwise", items=30)  # 30 items x 3 judgements / 10 per list: 9 lists
    text = path.read_text().replace("strategy: list ", f"strategy: {strategy} ")
    if sessions is not None:  # the template sets sessions: 2 and crowd.arrivals_per_hour
        text = text.replace("  sessions: 2 ", f"  sessions: {sessions} ", 1)
    if wave is not None:
        text = text.replace("  arrivals_per_hour: 45", f"  wave: {wave}\n  arrivals_per_hour: 45", 1)
    path.write_text(text)
    return path.parent


def test_sessions_and_wave_beyond_the_lists_are_refused_with_the_value_to_set(tmp_path):
    problems = validate_study(_study(tmp_path, sessions=12, wave=20))
    assert any("stopping.sessions: 12 sessions at once, but only 9 lists" in p and "set at most 9" in p for p in problems)
    assert any("crowd.wave: waves of 20 places, but the design has 9 lists" in p and "set at most 9" in p for p in problems)
    assert all(":" in p.split("humeval.yaml", 1)[1][:6] for p in problems)  # file:line


def test_settings_that_fit_are_valid(tmp_path):
    assert validate_study(_study(tmp_path, sessions=9)) == []


def test_sessions_with_a_pool_strategy_is_a_warning(tmp_path):
    root = _study(tmp_path, sessions=3, strategy="one")
    assert validate_study(root) == []
    assert any("stopping.sessions: has no effect with assignment.strategy 'one'" in w for w in study_warnings(root))


def _feed_study(tmp_path, *, exclusion: str, checks: int = 2, qualification: int = 2, strategy: str = "list"):
    """The pairwise template with stopping.feed: judgement, ``exclusion`` (YAML flow style) and the checks."""
    root = _study(tmp_path, strategy=strategy)
    path = root / "humeval.yaml"
    data = yaml.safe_load(path.read_text())
    data["stopping"]["feed"] = "judgement"
    data["exclusion"] = yaml.safe_load(exclusion)
    data["design"] |= {"attention_checks": checks, "qualification": qualification}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def test_feed_judgement_with_only_rules_decided_before_feeding_is_valid(tmp_path):
    root = _feed_study(tmp_path, exclusion="[{rule: attention, max_failures: 0}, "
                                           "{rule: min-time, seconds: 2, scope: judgement}]")
    assert validate_study(root) == []


def test_feed_judgement_refuses_rules_that_would_take_back_what_was_fed(tmp_path):
    root = _feed_study(tmp_path, exclusion="[{rule: attention}, {rule: same-side}, {rule: straight-lining}, "
                                           "{rule: inconsistent}, {rule: min-time, seconds: 2}]")
    problems = validate_study(root)
    for i, name in enumerate(["same-side", "straight-lining", "inconsistent", "min-time with scope participant"], 1):
        found = [p for p in problems if f"exclusion[{i}]: rule '{name}' judges a participant's whole session" in p]
        assert len(found) == 1 and "stopping.feed: session" in found[0], (name, problems)
    assert len(problems) == 4


def test_feed_judgement_needs_a_qualification_holding_every_check_and_an_attention_rule(tmp_path):
    none = validate_study(_feed_study(tmp_path / "a", exclusion="[{rule: min-time, seconds: 2, scope: judgement}]",
                                      checks=2, qualification=0))
    assert any("exclusion: stopping.feed: judgement feeds a participant once they passed the qualification" in p
               for p in none)
    assert any("design.qualification: stopping.feed: judgement needs a qualification" in p for p in none)
    later = validate_study(_feed_study(tmp_path / "b", exclusion="[{rule: attention}]", checks=3, qualification=1))
    assert len(later) == 1 and "design.attention_checks: 3 attention checks, 1 of them the qualification" in later[0]
    assert "set design.qualification: 3" in later[0]


def test_feed_judgement_is_refused_for_a_pool_strategy(tmp_path):
    problems = validate_study(_feed_study(tmp_path, exclusion="[{rule: attention}]", strategy="one"))
    assert any("stopping.feed: 'judgement' needs assignment.strategy 'list', got 'one'" in p and "pool strategy" in p
               for p in problems), problems


def test_the_store_refuses_what_validate_refuses(tmp_path):
    from humeval.protocol.feed import feed_problems
    from humeval.protocol.load import load_protocol

    root = _feed_study(tmp_path, exclusion="[{rule: attention}, {rule: same-side}]")
    protocol = load_protocol(root / "humeval.yaml")
    assert [loc for loc, _ in feed_problems(protocol)] == [("exclusion", 1)]
    assert feed_problems(protocol.model_copy(update={"stopping": protocol.stopping.model_copy(
        update={"feed": "session"})})) == []  # the default: every rule allowed
