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

__all__ = ["APART", "criteria_reference", "field_paths", "field_reference", "splice_reference"]


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


#: the sections whose models' tables live on another page (their heading says where): the criteria, one model per
#: task type, are listed in docs/task-types.md, so that a new task type changes that page and not this one
APART = {"criteria": ("`list[Criterion]` (one model per task type)", "task-types.md#the-fields-of-each-type")}


def _variant_tables(path: str, field: Any) -> list[str]:
    """The tables of one section: one for its model, or one ``#### `` heading and table per model of a union."""
    lines: list[str] = []
    models = _models_in(field.annotation)
    child = f"{path}[]." if _is_list(field.annotation) else f"{path}."
    for model in models:
        if len(models) > 1:
            variant = _discriminator(model)
            lines += [f"#### `{path}`: {model.__name__}" + (f" (`{variant}`)" if variant else ""), ""]
        rows = [_row(p, t, d, e) for p, t, d, e, _ in _walk(model, child)]
        lines += [*_TABLE, *rows, ""]
    return lines


def field_reference() -> str:
    """The Markdown reference of every protocol field.

    One ``### `section` `` heading per top-level field (its type, default and description),
    then a table with one row per nested field; a section holding a union of models has one
    ``#### `` heading per model, each with its own table. A section of :data:`APART` (``criteria``, one model per
    task type) names the page holding its tables (:func:`criteria_reference`) instead.
    """
    lines: list[str] = []
    top = {path: (tp, default, desc) for path, tp, default, desc, _ in _walk(Protocol, "") if path in Protocol.model_fields}
    for path, field in Protocol.model_fields.items():
        tp, default, desc = top[path]
        given = ", required." if default == "required" else f", default `{default}`." if default else "."
        if path in APART:
            kind, page = APART[path]
            lines += [f"### `{path}`", "", f"{desc} Type {kind}{given} A criterion's fields depend on its `type`: "
                      f"[the fields of each type]({page}).", ""]
            continue
        lines += [f"### `{path}`", "", f"{desc} Type `{tp}`{given}", ""]
        lines += _variant_tables(path, field)
    return "\n".join(lines).rstrip("\n") + "\n"


def criteria_reference() -> str:
    """The Markdown tables of the criteria's fields, one ``#### `` heading per task type's model (in the
    registry's order), for docs/task-types.md."""
    lines = _variant_tables("criteria", Protocol.model_fields["criteria"])
    return "\n".join(lines).rstrip("\n") + "\n"


START, END = "<!-- reference:start -->", "<!-- reference:end -->"
#: the markers of the criteria's tables (:func:`criteria_reference`) in docs/task-types.md
CRITERIA_START, CRITERIA_END = "<!-- reference:criteria -->", "<!-- /reference:criteria -->"


def _splice(text: str, start_mark: str, end_mark: str, reference: str) -> str | None:
    start, end = text.find(start_mark), text.find(end_mark)
    if start < 0 or end < start:
        return None
    return text[: start + len(start_mark)] + "\n" + reference + text[end:]


def splice_reference(page: Path, reference: str | None = None) -> str:
    """The text of ``page`` with the field reference between its reference markers and the criteria's tables between
    its criteria markers, whichever it has (``humeval schema -f markdown -o``); ``reference``: the field reference
    (default :func:`field_reference`)."""
    from humeval.errors import HumevalError

    text = page.read_text(encoding="utf-8") if page.is_file() else ""
    spliced = _splice(text, START, END, reference if reference is not None else field_reference())
    both = _splice(spliced if spliced is not None else text, CRITERIA_START, CRITERIA_END, criteria_reference())
    if spliced is None and both is None:
        raise HumevalError(f"{page}: no `{START}` ... `{END}` markers to put the field reference between, nor "
                           f"`{CRITERIA_START}` ... `{CRITERIA_END}` markers for the criteria's fields")
    return both if both is not None else str(spliced)
