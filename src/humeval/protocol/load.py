"""Reading ``humeval.yaml`` into a :class:`Protocol`, with errors that point at the line."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ValidationError

from humeval.errors import ProtocolError, did_you_mean

if TYPE_CHECKING:  # the models are built when a protocol is parsed, not when a path is named
    from pydantic_core import ErrorDetails

    from humeval.protocol.models import Protocol

__all__ = ["PROTOCOL_FILE", "duplicate_keys", "format_path", "line_of", "load_protocol", "parse_protocol", "read_yaml"]

PROTOCOL_FILE = "humeval.yaml"


def format_path(loc: Sequence[Any]) -> str:
    """``("criteria", 0, "type")`` -> ``criteria[0].type``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def read_yaml(path: Path, *, strict: bool = True) -> tuple[Any, yaml.Node | None]:
    """Parse a YAML file; return the data and its node tree (for line numbers).

    A key given twice in one mapping is an error (:func:`duplicate_keys`); ``strict=False``
    leaves that check to the caller (``validate`` reports it with every other problem).
    """
    if not path.is_file():
        raise ProtocolError(f"{path}: protocol file not found. Create one with `humeval init {path.parent}`.")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ProtocolError(f"{path}:{line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); save the protocol "
                            "file as UTF-8 (an editor's 'Save with encoding', or `iconv -f latin1 -t utf-8`)") from None
    try:
        node, data = _parse(text, _FAST_LOADER)
    except yaml.YAMLError:
        try:  # the pure-Python parser words the error as it always has (same line, column and problem)
            node, data = _parse(text, yaml.SafeLoader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
            problem = getattr(exc, "problem", None) or str(exc)
            hint = yaml_hint(problem, getattr(exc, "context", None) or "", text, mark)
            raise ProtocolError(f"{where}: malformed YAML: {problem}" + (f". Hint: {hint}" if hint else "")) from None
    duplicates = duplicate_keys(node, str(path)) if strict else []
    if duplicates:
        raise ProtocolError(f"{len(duplicates)} problem(s) in {path}:\n  " + "\n  ".join(duplicates), duplicates)
    return data, node


def yaml_hint(problem: str, context: str, text: str, mark: Any) -> str:
    """The likely cause of a YAML syntax error, from PyYAML's problem and context and the line it points at
    ("" when none of the common causes fits): an unquoted colon, indentation, a tab, an unclosed quote, an
    unclosed or unquoted flow list, a value starting with a reserved character."""
    lines = text.splitlines()
    line = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
    if "\\t" in problem or "\t" in problem:  # PyYAML writes the tab escaped: found character '\\t'
        return "a tab in the indentation; YAML indents with spaces only"
    if "mapping values are not allowed" in problem:
        value = line.split(": ", 1)[1] if ": " in line else ""
        if ": " in value or value.rstrip().endswith(":"):
            return (f"a value holding ': ' must be quoted, e.g. {line.split(': ', 1)[0].strip()}: "
                    f"\"{value.strip()}\"")
        return ("this line is indented further than the key above it; keys of one section take the same "
                "indentation (spaces, not tabs)")
    if "expected <block end>" in problem or "expected ':'" in problem or "expected key" in problem:
        return ("the indentation of this line matches no section above it: indent the keys of one section alike, "
                "and list items ('- ') and their keys under the key they belong to")
    if "quoted scalar" in context:
        return "a quoted value is not closed: add the closing quote (or quote the value with the other quote mark)"
    if "flow sequence" in context or "flow mapping" in context:
        return ("in a [a, b] list, close the bracket and quote any value that holds a comma, a colon or a bracket, "
                "e.g. [\"a, b\", c]")
    if "cannot start any token" in problem:
        return "a value starting with @, ` or % must be quoted"
    return ""


#: libyaml's parser when PyYAML was built with it (ten times faster), else the pure-Python one
_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse(text: str, loader: Any) -> tuple[yaml.Node | None, Any]:
    """The node tree (with line numbers) and the data of one YAML document."""
    return yaml.compose(text, Loader=loader), yaml.load(text, Loader=loader)


def duplicate_keys(node: yaml.Node | None, source: str, loc: tuple[Any, ...] = ()) -> list[str]:
    """Every key given twice in one mapping, at any depth, with both lines (YAML would keep the last)."""
    problems: list[str] = []
    if isinstance(node, yaml.MappingNode):
        first: dict[str, int] = {}
        for key, value in node.value:
            name, line = str(key.value), key.start_mark.line + 1
            if name in first:
                problems.append(f"{source}:{line}: {format_path((*loc, name))}: duplicate key "
                                f"(first at line {first[name]}); YAML would silently keep only the last")
            else:
                first[name] = line
            problems += duplicate_keys(value, source, (*loc, name))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            problems += duplicate_keys(item, source, (*loc, i))
    return problems


def line_of(node: yaml.Node | None, loc: Sequence[Any]) -> int | None:
    """Line number (1-based) of the deepest node reached by ``loc``; a key whose value is a block (a mapping or a
    list on the lines below it) is at the key's line, where the user wrote it."""
    line = None
    key: yaml.Node | None = None
    for part in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        key = None
        if isinstance(node, yaml.MappingNode):
            key, node = next(((k, v) for k, v in node.value if k.value == str(part)), (None, None))
            if node is None:
                # an unknown key: point at the key itself when the mapping has it
                break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
    if node is not None:
        line = node.start_mark.line + 1
        block = isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style
        if key is not None and block:
            line = key.start_mark.line + 1
    return line


def _strip(tp: Any) -> Any:
    """Remove Annotated and Optional wrappers."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) != 1:
                return tp
            tp = members[0]
        else:
            return tp


def _tagged_member(tp: Any, part: Any) -> type[BaseModel] | None:
    """The member of a discriminated union whose tag (``type``/``rule``) is ``part``."""
    if typing.get_origin(tp) not in (typing.Union, types.UnionType):
        return None
    for m in typing.get_args(tp):
        if isinstance(m, type) and issubclass(m, BaseModel):
            for name in ("type", "rule"):
                f = m.model_fields.get(name)
                if f is not None and part in typing.get_args(f.annotation):
                    return m
    return None


def _resolve(loc: Sequence[Any]) -> tuple[list[Any], Any]:
    """Walk ``loc`` from :class:`Protocol`: the location without union tags, and the type reached."""
    from humeval.protocol.models import Protocol

    current: Any = Protocol
    clean: list[Any] = []
    for part in loc:
        tp = _strip(current)
        member = _tagged_member(tp, part)
        if member is not None:
            current = member
            continue
        clean.append(part)
        if typing.get_origin(tp) is list and isinstance(part, int):
            current = typing.get_args(tp)[0]
        elif isinstance(tp, type) and issubclass(tp, BaseModel) and part in tp.model_fields:
            current = tp.model_fields[part].annotation
        else:
            current = None
    return clean, _strip(current)


def _message(error: ErrorDetails) -> tuple[tuple[Any, ...], str]:
    """Turn one pydantic error into (clean location, human message)."""
    kind = error["type"]
    clean, _ = _resolve(error["loc"])
    if kind == "extra_forbidden":
        _, parent = _resolve(error["loc"][:-1])
        valid = sorted(parent.model_fields) if isinstance(parent, type) and issubclass(parent, BaseModel) else []
        return tuple(clean), f"unknown key '{clean[-1]}'. {did_you_mean(clean[-1], valid)}"
    if kind == "missing":
        return tuple(clean), "required key is missing"
    if kind == "union_tag_invalid":
        ctx = error.get("ctx", {})
        tags = [t.strip(" '") for t in str(ctx.get("expected_tags", "")).split(",")]
        field = ctx.get("discriminator", "'type'").strip("'")
        return (*clean, field), f"unknown {field} '{ctx.get('tag')}'. {did_you_mean(ctx.get('tag'), tags)}"
    if kind == "union_tag_not_found":
        field = str(error.get("ctx", {}).get("discriminator", "'type'")).strip("'")
        return (*clean, field), "required key is missing"
    msg = error["msg"]
    msg = msg.removeprefix("Value error, ")
    bad = error.get("input")
    if not isinstance(bad, (dict, list)):
        msg = f"{msg} (got {bad!r})"
    return tuple(clean), msg


def parse_protocol(data: Any, *, source: str = PROTOCOL_FILE, node: yaml.Node | None = None) -> Protocol:
    """Validate a parsed YAML document; raise :class:`ProtocolError` listing every problem."""
    if data is None:
        raise ProtocolError(f"{source}: the protocol file is empty. Start from `humeval init`.")
    if not isinstance(data, dict):
        raise ProtocolError(f"{source}: the protocol must be a mapping of sections, got {type(data).__name__}")
    from humeval.protocol.models import Protocol

    try:
        return Protocol.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc, msg = _message(err)
            line = line_of(node, loc)
            where = f"{source}:{line}" if line else source
            problems.append(f"{where}: {format_path(loc)}: {msg}")
        summary = f"{len(problems)} problem(s) in {source}:\n  " + "\n  ".join(problems)
        raise ProtocolError(summary, problems) from None


def load_protocol(path: str | Path) -> Protocol:
    """Load a study protocol from a file or a study folder."""
    path = Path(path)
    if path.is_dir():
        path = path / PROTOCOL_FILE
    data, node = read_yaml(path)
    return parse_protocol(data, source=str(path), node=node)
