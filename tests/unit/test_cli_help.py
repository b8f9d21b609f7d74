"""Every command's help reads well: no type placeholder beside a flag (``--help`` included)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from humeval.cli.app import COMMANDS, command


@pytest.mark.parametrize("name", [None, *COMMANDS])
def test_help_shows_no_bool_placeholder(name):
    result = CliRunner().invoke(command(), [*([name] if name else []), "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "--help" in result.output and "Show this message and exit." in result.output
    assert "<bool>" not in result.output and "BOOLEAN" not in result.output


def test_help_lists_the_commands_in_the_order_of_a_study():
    from humeval.cli.app import PANELS

    result = CliRunner().invoke(command(), ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = result.output
    first = {name: next(i for i, line in enumerate(text.splitlines()) if line.startswith(f"│ {name} "))
             for name in COMMANDS}
    assert sorted(COMMANDS, key=first.__getitem__) == COMMANDS  # not alphabetical: init before validate before serve
    assert COMMANDS.index("validate") < COMMANDS.index("serve") < COMMANDS.index("analyze") < COMMANDS.index("report")
    panels = [text.index(f"─ {panel} ") for panel in PANELS]
    assert panels == sorted(panels)
    for panel, names in PANELS.items():  # each command under its panel's title
        for name in names:
            assert text.rindex("╭─ ", 0, text.index(f"│ {name} ")) == text.index(f"╭─ {panel} ")
