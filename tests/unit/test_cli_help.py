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
