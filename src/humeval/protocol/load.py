"""Reading ``humeval.yaml`` into a :class:`Protocol`, with errors that point at the line."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from humeval.errors import ProtocolError, did_you_mean
from humeval.protocol.models import Protocol

__all__ = ["PROTOCOL_FILE", "format_path", "line_of", "load_protocol", "parse_protocol", "read_yaml"]

PROTOCOL_FILE = "humeval.yaml"


def format_path(loc: Sequence[Any]) -> str:
    """``("criteria", 0, "type")`` -> ``criteria[0].type``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def read_yaml(path: Path) -> tuple[Any, yaml.Node | None]:
    """Parse a YAML file; return the data and its node tree (for line numbers)."""
    if not path.is_file():
        raise ProtocolError(f"{path}: protocol file not found. Create one with `humeval init {path.parent}`.")
    text = path.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise ProtocolError(f"{where}: malformed YAML: {problem}") from None
    return data, node


def line_of(node: yaml.Node | None, loc: Sequence[Any]) -> int | None:
    """Line number (1-based) of the deepest node reached by ``loc``."""
    line = None
    for part in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == str(part)), None)
            if node is None:
                # an unknown key: point at the key itself when the mapping has it
                break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
    if node is not None:
        line = node.start_mark.line + 1
    return line


def _model_at(model: type[BaseModel], loc: Sequence[Any]) -> type[BaseModel] | None:
    """The pydantic model class that owns the last element of ``loc``."""
    current: Any = model
    for part in loc[:-1]:
        current = _unwrap(current, part)
        if current is None:
            return None
        if isinstance(part, str) and isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(part)
            if field is None:
                return None
            current = field.annotation
            continue
    current = _unwrap(current, None)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(tp: Any, part: Any) -> Any:
    """Strip Optional/list/Annotated/union wrappers; pick a union member by its tag."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (list, tuple, Sequence):
            if isinstance(part, int):
                return typing.get_args(tp)[0]
            return tp
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
            for m in models:
                tag_field = m.model_fields.get("type") or m.model_fields.get("rule")
                if tag_field is not None and part in typing.get_args(tag_field.annotation):
                    return m
            if len(members) == 1:
                tp = members[0]
            else:
                return tp
        else:
            return tp


def _tags(model: type[BaseModel]) -> set[str]:
    return {
        str(a)
        for name in ("type", "rule")
        if (f := model.model_fields.get(name)) is not None
        for a in typing.get_args(f.annotation)
    }


def _message(error: dict[str, Any]) -> tuple[tuple[Any, ...], str]:
    """Turn one pydantic error into (clean location, human message)."""
    loc = tuple(error["loc"])
    kind = error["type"]
    # drop discriminator tags pydantic inserts into the location
    clean: list[Any] = []
    owner: Any = Protocol
    for i, part in enumerate(loc):
        if isinstance(part, str) and i > 0 and isinstance(owner, type) and issubclass(owner, BaseModel) and part in _tags(owner):
            continue
        clean.append(part)
        owner = _model_at(Protocol, (*clean, "_"))
    if kind == "extra_forbidden":
        parent = _model_at(Protocol, clean)
        valid = sorted(parent.model_fields) if parent else []
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
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
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
