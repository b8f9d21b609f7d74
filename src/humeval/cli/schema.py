"""``humeval schema``: the JSON Schema (or the Markdown field reference) of humeval.yaml."""

from __future__ import annotations

import sys
from enum import Enum

import typer

from humeval.cli._common import emit_json


class SchemaFormat(str, Enum):
    json = "json"
    markdown = "markdown"
    cli_markdown = "cli-markdown"


def schema(
    fmt: SchemaFormat = typer.Option(SchemaFormat.json, "--format", "-f", help="json (JSON Schema) | markdown (protocol field reference, docs/protocol.md) | cli-markdown (command-line reference, docs/cli.md)"),
) -> None:
    """Print the JSON Schema of the study protocol (for editor completion and validation), or a generated reference page."""
    if fmt == SchemaFormat.cli_markdown:
        from humeval.cli.reference import cli_reference

        sys.stdout.write(cli_reference())
        return
    if fmt == SchemaFormat.markdown:
        from humeval.protocol.reference import field_reference

        sys.stdout.write(field_reference())
        return
    from humeval.protocol.models import Protocol

    emit_json(Protocol.model_json_schema())
