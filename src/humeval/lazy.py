"""Packages that load their submodules only when a name is used (PEP 562).

A package's ``__init__`` maps each public name to the module defining it and takes its
``__getattr__`` and ``__dir__`` from :func:`lazy_exports`: ``import humeval.stats`` then costs
nothing until ``humeval.stats.icc`` is looked up, so a command imports only what it uses
(``tests/unit/test_startup_imports.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: dict[str, str], namespace: dict[str, Any],
                 names: list[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: a name of ``exports`` is imported from its module on first
    use and kept in ``namespace`` (the package's globals); ``names`` is its ``__all__``."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
