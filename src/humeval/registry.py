"""One shape for every kind of thing humeval looks up by name.

Task types, stopping rules, labelling strategies, samplers, import formats and recruitment
platforms are each a :class:`Registry`: entries are added once, where the thing is defined,
with the one-line summary that ``--help``, the JSON Schema and the docs show. Looking up an
unknown name raises the registry's error with what exists and the nearest name.

    >>> colours = Registry[str]("colour", "style.colour")
    >>> colours.add("red", "#f00", summary="the colour of stop signs")
    '#f00'
    >>> colours.get("red")
    '#f00'
    >>> colours.names()
    ('red',)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from humeval.errors import HumevalError, did_you_mean

__all__ = ["Entry", "Registry", "splice_tables"]

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered name: the thing, a one-line summary, and other names that mean it."""

    name: str
    value: T
    summary: str
    aliases: tuple[str, ...] = field(default=())


class Registry(Generic[T]):
    """Names of one kind (``kind``, e.g. ``"stopping rule"``), set at ``where`` (e.g. ``"stopping.rule"``).

    ``error`` is the :class:`~humeval.errors.HumevalError` subclass an unknown name raises.
    """

    def __init__(self, kind: str, where: str, *, error: type[HumevalError] = HumevalError) -> None:
        self.kind = kind
        self.where = where
        self.error = error
        self._entries: dict[str, Entry[T]] = {}
        self._aliases: dict[str, str] = {}

    def add(self, name: str, value: T, *, summary: str, aliases: tuple[str, ...] = ()) -> T:
        """Register ``value`` under ``name`` (and ``aliases``); returns ``value``. A name is registered once."""
        for key in (name, *aliases):
            if key in self._entries or key in self._aliases:
                raise ValueError(f"{self.kind} {key!r} is registered twice")
        self._entries[name] = Entry(name, value, summary, tuple(aliases))
        self._aliases.update(dict.fromkeys(aliases, name))
        return value

    def register(self, name: str, *, summary: str, aliases: tuple[str, ...] = ()) -> Callable[[T], T]:
        """The decorator form of :meth:`add`."""

        def decorate(value: T) -> T:
            return self.add(name, value, summary=summary, aliases=aliases)

        return decorate

    def entry(self, name: str) -> Entry[T]:
        """The entry registered under ``name`` or one of its aliases; an unknown name raises ``self.error``."""
        key = self._aliases.get(name, name)
        if key not in self._entries:
            raise self.error(f"{self.where}: unknown {self.kind} {name!r}. {did_you_mean(name, self.all_names())}")
        return self._entries[key]

    def get(self, name: str) -> T:
        """The thing registered under ``name`` (see :meth:`entry`)."""
        return self.entry(name).value

    def canonical(self, name: str) -> str:
        """The registered name that ``name`` (a name or an alias) stands for."""
        return self.entry(name).name

    def names(self) -> tuple[str, ...]:
        """The registered names, in the order they were added (aliases not included)."""
        return tuple(self._entries)

    def all_names(self) -> tuple[str, ...]:
        """Names and aliases: every value ``where`` accepts (the JSON Schema's enum)."""
        return (*self._entries, *self._aliases)

    def entries(self) -> tuple[Entry[T], ...]:
        return tuple(self._entries.values())

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._aliases

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def help_text(self) -> str:
        """``"a, b, c"``: the list ``--help`` shows."""
        return ", ".join(self.names())

    def markdown(self, columns: Mapping[str, Callable[[Entry[T]], str]] | None = None) -> str:
        """A Markdown table of names, aliases and summaries, for the docs; ``columns``: more columns, by header,
        each read from an entry."""
        extra = dict(columns or {})
        rows = [f"| `{e.name}` | {', '.join(f'`{a}`' for a in e.aliases)} | {e.summary} |"
                + "".join(f" {cell(e)} |" for cell in extra.values()) for e in self.entries()]
        head = f"| {self.kind} | also | what it is |" + "".join(f" {h} |" for h in extra)
        return "\n".join([head, "|---|---|---|" + "---|" * len(extra), *rows])


def splice_tables(page: str, tables: Mapping[str, str], where: str = "page") -> str:
    """``page`` with the text between each ``<!-- registry:NAME -->`` and ``<!-- /registry:NAME -->`` replaced by
    ``tables[NAME]`` (a docs page's generated tables); a marker naming no table is an error."""
    out, pos = [], 0
    for match in _MARKER.finditer(page):
        name = match.group(1)
        if name not in tables:
            raise HumevalError(f"{where}: <!-- registry:{name} --> names no registry. {did_you_mean(name, tables)}")
        out += [page[pos:match.start()], f"<!-- registry:{name} -->\n{tables[name]}\n<!-- /registry:{name} -->"]
        pos = match.end()
    return "".join([*out, page[pos:]])


_MARKER = re.compile(r"<!-- registry:([\w.-]+) -->\n.*?<!-- /registry:\1 -->", re.DOTALL)
