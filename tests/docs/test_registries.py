"""Every registry's docs table is generated from it and current, and ``--help`` and the JSON Schema list its names."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from humeval.cli.app import app
from humeval.cli.registries import registry_tables
from humeval.protocol.models import Protocol
from humeval.registry import splice_tables
from humeval.sampling.registry import SAMPLERS
from humeval.stopping.registry import RULES

from ..conftest import ROOT

MARKER = re.compile(r"<!-- registry:([\w.-]+) -->")


def test_every_registry_table_in_the_docs_is_current_and_every_registry_has_one():
    tables = registry_tables()
    seen: set[str] = set()
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        seen.update(MARKER.findall(text))
        assert splice_tables(text, tables, where=str(page)) == text, (
            f"{page.relative_to(ROOT)}: a registry table is out of date: regenerate with "
            f"`humeval schema --format registries --output {page.relative_to(ROOT)}`")
    assert seen == set(tables)


def test_a_table_lists_every_name_of_its_registry():
    for name in RULES.names():
        assert f"| `{name}` |" in registry_tables()["stopping-rules"]


def test_help_and_json_schema_list_every_registered_name():
    runner = CliRunner()
    simulate = runner.invoke(app, ["simulate", "--help"], terminal_width=400).output
    sample = runner.invoke(app, ["sample", "--help"], terminal_width=400).output
    flat = " ".join(simulate.split()) + " ".join(sample.split())
    for name in (*RULES.names(), *SAMPLERS.names(), "majorityN", "max3"):
        assert name in flat, name
    schema = Protocol.model_json_schema()["$defs"]
    assert schema["Stopping"]["properties"]["rule"]["enum"] == list(RULES.all_names())
    assert schema["Sampling"]["properties"]["method"]["enum"] == list(SAMPLERS.all_names())
