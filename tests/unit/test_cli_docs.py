"""Every command and every option of the CLI is documented in README.md or docs/."""

from __future__ import annotations

import typer

from humeval.cli.app import _register, app

from ..conftest import ROOT


def test_every_command_and_option_is_documented():
    _register()
    docs = (ROOT / "README.md").read_text() + "".join(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))
    command = typer.main.get_command(app)
    missing = []
    for name, sub in command.commands.items():
        if f"humeval {name}" not in docs and f"`{name}" not in docs:
            missing.append(name)
        missing += [f"{name} {opt}" for p in sub.params for opt in p.opts if opt.startswith("--") and opt not in docs]
    assert missing == []
