"""Every CLI command and every protocol field has its heading (or table row) in the docs, and the
generated reference pages are current."""

from __future__ import annotations

from humeval.cli.app import command
from humeval.cli.reference import cli_reference
from humeval.protocol.models import Protocol
from humeval.protocol.reference import _models_in, field_paths

from ..conftest import ROOT
from .markdown import sections

CLI = ROOT / "docs" / "cli.md"
PROTOCOL = ROOT / "docs" / "protocol.md"


def test_cli_reference_is_current():
    assert CLI.read_text(encoding="utf-8") == cli_reference(), (
        "docs/cli.md is out of date: regenerate with `humeval schema --format cli-markdown --output docs/cli.md`"
    )


def test_every_command_has_a_heading_and_every_option_a_row():
    by_title = {s.title: s for s in sections(CLI) if s.level == 2}
    group = command()
    missing = []
    for name, sub in group.commands.items():
        sec = by_title.get(f"humeval {name}")
        if sec is None:
            missing.append(f"## humeval {name}")
            continue
        documented = {code for row in sec.rows for code in row}
        params = [p for p in sub.params if p.name != "help" and not getattr(p, "hidden", False)]
        for p in params:
            if p.param_type_name == "option":
                missing += [f"humeval {name} {o}" for o in p.opts if o not in documented]
        arguments = [p for p in params if p.param_type_name == "argument"]
        option_rows = [r for r in sec.rows if r and r[0].startswith("-")]
        if len(sec.rows) - len(option_rows) != len(arguments):
            missing.append(f"humeval {name}: {len(arguments)} argument(s), {len(sec.rows) - len(option_rows)} row(s)")
    assert missing == []


def test_every_protocol_field_has_a_heading_or_a_row():
    secs = sections(PROTOCOL)
    headings = {s.title: s for s in secs}
    # the criteria's fields, one heading per task type's model, are on the task types' page (APART)
    fields = next(s for s in sections(ROOT / "docs" / "task-types.md") if s.title == "The fields of each type")
    headings["criteria"] = fields
    missing = []
    for path, owner in field_paths():
        top = path.split(".")[0].removesuffix("[]")
        sec = headings.get(top)
        if sec is None or (sec.level != 3 and sec is not fields):
            missing.append(f"### `{top}`")
            continue
        if path == top:
            continue
        models = _models_in(Protocol.model_fields[top].annotation)
        if len(models) > 1 and owner in {m.__name__ for m in models}:
            # a variant's own field: a row under the heading naming that model
            sub = next((c for c in sec.children if c.title.startswith(f"{top}: {owner}")), None)
            if sub is None or [path] not in sub.rows:
                missing.append(f"{path} ({owner})")
        elif not any(row[:1] == [path] for row in sec.all_rows()):
            missing.append(path)
    assert missing == []


def test_heading_parser_sees_rows_and_nesting(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("## `a`\n\n| f | x |\n|---|---|\n| `a.b` | 1 |\n\n### `a`: M\n\n| f |\n|---|\n| `a[].c` |\n\n"
                    "## c\n\ntext `a.d` in prose, not a row\n")
    a, m, c = sections(page)
    assert (a.title, a.rows, m.title, m.rows) == ("a", [["a.b"]], "a: M", [["a[].c"]])
    assert a.all_rows() == [["a.b"], ["a[].c"]] and c.rows == []


def test_schema_output_writes_the_pages(tmp_path):
    from click.testing import CliRunner

    page = tmp_path / "protocol.md"
    page.write_text("# Intro\n\n<!-- reference:start -->\nSTALE\n<!-- reference:end -->\n\nafter\n")
    runner = CliRunner()
    assert runner.invoke(command(), ["schema", "-f", "markdown", "-o", str(page)]).exit_code == 0
    text = page.read_text()
    assert text.startswith("# Intro\n\n<!-- reference:start -->\n### `version`") and text.endswith("<!-- reference:end -->\n\nafter\n")
    assert "STALE" not in text and field_reference_in(text)
    cli = tmp_path / "cli.md"
    assert runner.invoke(command(), ["schema", "-f", "cli-markdown", "-o", str(cli)]).exit_code == 0
    assert cli.read_text() == cli_reference()
    bare = tmp_path / "bare.md"
    bare.write_text("# no markers\n")
    result = runner.invoke(command(), ["schema", "-f", "markdown", "-o", str(bare)])
    assert result.exit_code != 0 and bare.read_text() == "# no markers\n"


def field_reference_in(text: str) -> bool:
    from humeval.protocol.reference import field_reference

    return field_reference() in text


def test_the_readme_command_table_lists_every_command_in_the_order_of_a_study():
    from humeval.cli.app import COMMANDS

    [table] = [s for s in sections(ROOT / "README.md") if s.title == "Every command"]
    named = [code.split()[0] for row in table.rows for code in row]
    assert set(named) == set(COMMANDS)
    assert list(dict.fromkeys(named)) == COMMANDS  # as `humeval --help` lists them


def test_the_readme_and_getting_started_say_how_to_reach_the_installed_command():
    """`python3 make.py example` installs into .venv, not on the PATH: both pages say to activate it (or call it by
    its path) before the first `humeval` command they show after the set-up."""
    venv = ".venv"
    assert 'ROOT / ".venv"' in (ROOT / "make.py").read_text(encoding="utf-8")  # where make.py installs
    for page in (ROOT / "README.md", ROOT / "docs" / "getting-started.md"):
        text = page.read_text(encoding="utf-8")
        setup = text.index("python3 make.py example")
        activate = text.find(f"source {venv}/bin/activate", setup)
        assert activate != -1 and f"{venv}/bin/humeval" in text, page.name
        first_command = min(i for i in (text.find("\nhumeval ", setup), text.find("\n$ humeval ", setup)) if i != -1)
        assert activate < first_command, page.name
