"""`humeval validate` refuses session settings that cannot work, with the value to set."""

from __future__ import annotations

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
