"""Every protocol field is documented, docs/protocol.md shows the current field table and docs/task-types.md the
current fields of each task type."""

from __future__ import annotations

from humeval.protocol.models import Protocol
from humeval.protocol.reference import (
    CRITERIA_END,
    CRITERIA_START,
    _walk,
    criteria_reference,
    field_paths,
    field_reference,
)

from ...conftest import ROOT


def test_every_field_has_a_description():
    undocumented = [path for path, _, _, desc, _ in _walk(Protocol, "") if not desc.strip()]
    assert undocumented == []


def test_docs_list_every_field():
    docs = (ROOT / "docs" / "protocol.md").read_text() + (ROOT / "docs" / "task-types.md").read_text()
    missing = [path for path, _ in field_paths() if f"`{path}`" not in docs]
    assert missing == []


def test_docs_table_is_current():
    docs = (ROOT / "docs" / "protocol.md").read_text()
    start = docs.index("<!-- reference:start -->") + len("<!-- reference:start -->\n")
    end = docs.index("<!-- reference:end -->")
    assert docs[start:end] == field_reference(), "regenerate with `humeval schema --format markdown --output docs/protocol.md`"
    types = (ROOT / "docs" / "task-types.md").read_text()
    start = types.index(CRITERIA_START) + len(CRITERIA_START) + 1
    assert types[start:types.index(CRITERIA_END)] == criteria_reference(), (
        "regenerate with `humeval schema --format markdown --output docs/task-types.md`")


def test_the_protocol_page_names_no_task_type():
    """A new task type changes docs/task-types.md only: the protocol page's reference holds no criterion model's
    table, and no type's name is written in it."""
    from humeval.tasks.registry import TASK_TYPES

    reference = field_reference()
    assert "#### `criteria`" not in reference and "task-types.md#the-fields-of-each-type" in reference
    assert all(f"type: {name}`" not in reference for name in TASK_TYPES.names())
    assert all(f"#### `criteria`: {TASK_TYPES.get(n).model.__name__} (`type: {n}`)" in criteria_reference()
               for n in TASK_TYPES.names())


def test_reference_covers_criterion_variants():
    paths = {p for p, _ in field_paths()}
    assert {"criteria[].points", "criteria[].modulus", "criteria[].tie", "exclusion[].seconds"} <= paths
