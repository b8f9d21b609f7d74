"""The field reference of humeval.yaml, generated from the models (``humeval schema --format markdown``)."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from humeval.protocol.models import Protocol

__all__ = ["field_paths", "field_reference", "splice_reference"]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """Pydantic models reachable from a field annotation (through list, Optional, unions)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _models_in(typing.get_args(annotation)[0])
    if origin in (list, tuple, dict, typing.Union, types.UnionType):
        return [m for a in typing.get_args(annotation) for m in _models_in(a)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return []


def _is_list(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _is_list(typing.get_args(annotation)[0])
    return origin is list


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in args)}]"
    if annotation is type(None):
        return "None"
    return annotation.__name__ if isinstance(annotation, type) else str(annotation)


def _walk(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, str, str, str, str]]:
    """(path, type, default, description, variant) for every field, depth first."""
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        if field.is_required():
            default = "required"
        elif field.default_factory is not None:
            default = repr(field.get_default(call_default_factory=True, validated_data={}))
        else:
            default = repr(field.default) if field.default is not PydanticUndefined else ""
        yield path, _type_name(field.annotation), default, field.description or "", model.__name__
        sub = _models_in(field.annotation)
        child = f"{path}[]." if _is_list(field.annotation) else f"{path}."
        for m in sub:
            yield from _walk(m, child)


def field_paths() -> list[tuple[str, str]]:
    """Every (field path, owning model) of the protocol."""
    return [(path, owner) for path, _, _, _, owner in _walk(Protocol, "")]


def _row(path: str, tp: str, default: str, desc: str) -> str:
    cells = [f"`{path}`", f"`{tp}`".replace("|", "\\|"), f"`{default}`" if default else "", desc]
    return "| " + " | ".join(c.replace("\n", " ") for c in cells) + " |"


def _discriminator(model: type[BaseModel]) -> str:
    """``type: likert`` for a variant of a union (its required single-value Literal field), else ''."""
    for name, field in model.model_fields.items():
        args = typing.get_args(field.annotation)
        if field.is_required() and typing.get_origin(field.annotation) is typing.Literal and len(args) == 1:
            return f"{name}: {args[0]}"
    return ""


_TABLE = ["| field | type | default | description |", "|---|---|---|---|"]


def field_reference() -> str:
    """The Markdown reference of every protocol field.

    One ``### `section` `` heading per top-level field (its type, default and description),
    then a table with one row per nested field; a section holding a union of models (e.g.
    ``criteria``: one model per response type) has one ``#### `` heading per model, each
    with its own table.
    """
    lines: list[str] = []
    top = {path: (tp, default, desc) for path, tp, default, desc, _ in _walk(Protocol, "") if path in Protocol.model_fields}
    for path, field in Protocol.model_fields.items():
        tp, default, desc = top[path]
        given = ", required." if default == "required" else f", default `{default}`." if default else "."
        lines += [f"### `{path}`", "", f"{desc} Type `{tp}`{given}", ""]
        models = _models_in(field.annotation)
        child = f"{path}[]." if _is_list(field.annotation) else f"{path}."
        for model in models:
            if len(models) > 1:
                variant = _discriminator(model)
                lines += [f"#### `{path}`: {model.__name__}" + (f" (`{variant}`)" if variant else ""), ""]
            rows = [_row(p, t, d, e) for p, t, d, e, _ in _walk(model, child)]
            lines += [*_TABLE, *rows, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


START, END = "<!-- reference:start -->", "<!-- reference:end -->"


def splice_reference(page: Path, reference: str) -> str:
    """The text of ``page`` with ``reference`` between its reference markers (``humeval schema -f markdown -o``)."""
    from humeval.errors import HumevalError

    text = page.read_text(encoding="utf-8") if page.is_file() else ""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise HumevalError(f"{page}: no `{START}` ... `{END}` markers to put the field reference between")
    return text[: start + len(START)] + "\n" + reference + text[end:]
