"""``humeval schema``: the JSON Schema of humeval.yaml."""

from __future__ import annotations

from humeval.cli._common import emit_json


def schema() -> None:
    """Print the JSON Schema of the study protocol (for editor completion and validation)."""
    from humeval.protocol.models import Protocol

    emit_json(Protocol.model_json_schema())
