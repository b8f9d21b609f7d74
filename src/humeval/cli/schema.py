"""``humeval schema``: the JSON Schema of humeval.yaml, or a generated reference page."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path

import typer


class SchemaFormat(str, Enum):
    json = "json"
    markdown = "markdown"
    cli_markdown = "cli-markdown"
    registries = "registries"


def schema(
    fmt: SchemaFormat = typer.Option(
        SchemaFormat.json, "--format", "-f",
        help="json (JSON Schema) | markdown (protocol field reference, docs/protocol.md, and the criteria's fields "
                  "by task type, docs/task-types.md) | "
             "cli-markdown (command-line reference, docs/cli.md) | "
             "registries (the table of every registry: task types, stopping rules, strategies, samplers, import "
             "sources, platforms, arena models)"),
    output: Path = typer.Option(
        None, "--output", "-o",
        help="Write to this file instead of stdout; with markdown, replace the reference between the "
             "<!-- reference:start --> and <!-- reference:end --> markers of an existing page (docs/protocol.md) and the "
             "criteria's fields between <!-- reference:criteria --> markers (docs/task-types.md); "
             "with registries, replace the tables between the <!-- registry:NAME --> markers of an existing page."),
) -> None:
    """Print the JSON Schema of the study protocol (for editor completion and validation), or a generated reference page."""
    if fmt == SchemaFormat.registries:
        from humeval.cli.registries import registry_tables
        from humeval.registry import splice_tables

        tables = registry_tables()
        if output is None:
            text = "\n\n".join(f"<!-- registry:{name} -->\n{table}\n<!-- /registry:{name} -->" for name, table in tables.items()) + "\n"
        else:
            text = splice_tables(output.read_text(encoding="utf-8"), tables, where=str(output))
    elif fmt == SchemaFormat.cli_markdown:
        from humeval.cli.reference import cli_reference

        text = cli_reference()
    elif fmt == SchemaFormat.markdown:
        from humeval.protocol.reference import criteria_reference, field_reference, splice_reference

        text = field_reference() + "\n" + criteria_reference() if output is None else splice_reference(output)
    else:
        from humeval.protocol.models import Protocol

        text = json.dumps(Protocol.model_json_schema(), indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    from humeval.files import write_text

    write_text(output, text)
