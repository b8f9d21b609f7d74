"""The bounded JSON path of ``humeval.files``: the depth scan against the depth of the parsed value, the streamed
array against ``json.loads``, encodings by byte-order mark and by NUL bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from humeval import files
from humeval.errors import DataError
from humeval.files import JsonDepth, iter_json_array, iter_jsonl, read_json, text_encoding

#: JSON values whose strings hold what the scan must see through: quotes, backslashes, brackets
_TEXT = st.text(alphabet=st.sampled_from(list('ab"\\[]{}é✓ \n')), max_size=8)
VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
                      max_leaves=30)


def _depth(value: Any) -> int:
    """The nesting depth of a parsed value (the reference: 0 for a scalar, 1 for a flat array or object)."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(value=VALUES, piece=st.integers(1, 9), ascii_only=st.booleans())
def test_the_scan_finds_the_depth_of_the_parsed_value_in_any_pieces(value: Any, piece: int, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only).encode()
    depth = _depth(value)
    for limit in {depth, max(depth - 1, 0)}:
        scan, found = JsonDepth(limit), None
        for start in range(0, len(text), piece):
            found = scan.feed(text[start:start + piece])
            if found is not None:
                break
        assert (found is None) == (depth <= limit), (text, depth, limit, found)
        if found is not None:
            assert text[found:found + 1] in (b"[", b"{")


@settings(max_examples=200, deadline=None)
@given(values=st.lists(VALUES, max_size=6), indent=st.sampled_from([None, 2]),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32-be"]))
def test_the_streamed_array_is_json_loads_in_tiny_pieces(values: list[Any], indent: int | None, encoding: str,
                                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("arr") / "a.json"
    path.write_bytes(json.dumps(values, indent=indent, ensure_ascii=False).encode(encoding))
    piece = files._PIECE
    files._PIECE = 5  # every boundary: inside strings, escapes, numbers ("1.5e" | "10") and multi-byte characters
    try:
        assert [v for _, v in iter_json_array(path)] == json.loads(path.read_bytes().decode(text_encoding(path.read_bytes()[:4])))
    finally:
        files._PIECE = piece


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2", r"a.json:1: broken JSON \(Expecting ',' delimiter at column 6\)"),
    ("[1,\n 2,]", r"a.json:2: broken JSON \(Expecting value at column 4\)"),
    ("[1] x", r"a.json:1: broken JSON \(Extra data at column 5\)"),
    ('{"a": 1}', r"a.json: the JSON is a dict, not an array"),
])
def test_a_broken_array_is_worded_as_json_loads_words_it(text: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(text)
    with pytest.raises(DataError, match=message):
        list(iter_json_array(path))


def test_an_object_of_one_array_is_unwrapped_on_request(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{"battles": [{"x": 1}, {"x": 2}]}')
    assert list(iter_json_array(path, unwrap=True)) == [(1, {"x": 1}), (2, {"x": 2})]


N = 100_000


@pytest.mark.parametrize(("reader", "name", "text", "line"), [
    (read_json, "deep.json", '{"a": ' + "[" * N + "]" * N + "}", 1),
    (lambda p: list(iter_json_array(p)), "deep.json", '[{"ok": 1},\n' + "{" * N + "\n]", 2),
    (lambda p: list(iter_jsonl(p)), "deep.jsonl", '{"ok": 1}\n{"a": ' + "[" * N + "]" * N + "}\n", 2),
], ids=["read_json", "iter_json_array", "iter_jsonl"])
def test_100000_levels_are_refused_before_parsing(reader: Any, name: str, text: str, line: int, tmp_path: Path) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(DataError, match=rf"{name}:{line}: JSON nested deeper than 200 levels"):
        reader(tmp_path / name)


def test_200_levels_are_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.jsonl"
    path.write_text('{"a": ' + "[" * 199 + "]" * 199 + "}\n")
    assert _depth(next(iter_jsonl(path))[1]) == 200


@pytest.mark.parametrize(("encoding", "codec"), [("utf-8", "utf-8"), ("utf-8-sig", "utf-8-sig"), ("utf-16", "utf-16"),
                                                 ("utf-32", "utf-32"), ("utf-16-le", "utf-16-le"),
                                                 ("utf-16-be", "utf-16-be"), ("utf-32-le", "utf-32-le"),
                                                 ("utf-32-be", "utf-32-be")])
def test_the_encoding_of_a_file_from_its_first_bytes(encoding: str, codec: str) -> None:
    assert text_encoding('{"é": 1}'.encode(encoding)[:4]) == codec
