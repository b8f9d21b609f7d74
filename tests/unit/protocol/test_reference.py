"""Every protocol field is documented, and docs/protocol.md shows the current field table."""

from __future__ import annotations

from humeval.protocol.models import Protocol
from humeval.protocol.reference import _walk, field_paths, field_reference

from ...conftest import ROOT


def test_every_field_has_a_description():
    undocumented = [path for path, _, _, desc, _ in _walk(Protocol, "") if not desc.strip()]
    assert undocumented == []


def test_docs_list_every_field():
    docs = (ROOT / "docs" / "protocol.md").read_text()
    missing = [path for path, _ in field_paths() if f"`{path}`" not in docs]
    assert missing == []


def test_docs_table_is_current():
    docs = (ROOT / "docs" / "protocol.md").read_text()
    start = docs.index("<!-- reference:start -->") + len("<!-- reference:start -->\n")
    end = docs.index("<!-- reference:end -->")
    assert docs[start:end] == field_reference(), "regenerate with `humeval schema --format markdown --output docs/protocol.md`"


def test_reference_covers_criterion_variants():
    paths = {p for p, _ in field_paths()}
    assert {"criteria[].points", "criteria[].modulus", "criteria[].tie", "exclusion[].seconds"} <= paths
