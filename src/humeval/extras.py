"""Optional dependencies: which extra installs which module, and the error that says so.

The core install (``pip install humeval``, or ``humeval[server]`` for collection) has no
SciPy, scikit-learn, matplotlib or pyarrow; the stages that use them import them where they
are used. :func:`require` imports such a module or raises a :class:`HumevalError` naming the
extra; :func:`missing_extra` turns a :class:`ModuleNotFoundError` raised deeper down into
the same message (the CLI does this for every command).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from humeval.errors import HumevalError

__all__ = ["EXTRAS", "missing_extra", "require"]

#: top-level module -> (extra that installs it, its name on PyPI)
EXTRAS: dict[str, tuple[str, str]] = {
    "pandas": ("analysis", "pandas"),
    "scipy": ("analysis", "scipy"),
    "sklearn": ("analysis", "scikit-learn"),
    "threadpoolctl": ("analysis", "threadpoolctl"),
    "matplotlib": ("analysis", "matplotlib"),
    "trueskill": ("analysis", "trueskill"),
    "pyarrow": ("parquet", "pyarrow"),
    "datasets": ("hf", "datasets"),
    "starlette": ("server", "starlette"),
    "uvicorn": ("server", "uvicorn"),
    "httpx": ("server", "httpx"),
    "psycopg": ("postgres", "psycopg"),
    "sacrebleu": ("metrics", "sacrebleu"),
    "rouge_score": ("metrics", "rouge-score"),
    "nltk": ("metrics", "nltk"),
    "torch": ("local-model", "torch"),
    "transformers": ("local-model", "transformers"),
}


def _message(module: str, what: str) -> str:
    extra, package = EXTRAS[module]
    return (f"{what} needs {package}, which this installation lacks; install the '{extra}' extra: "
            f"pip install 'humeval[{extra}]'")


def require(module: str, what: str) -> ModuleType:
    """``module`` imported, or a :class:`HumevalError` saying ``what`` needs it and which extra installs it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] == module.split(".")[0]:
            raise HumevalError(_message(module.split(".")[0], what)) from None
        raise


def missing_extra(exc: ModuleNotFoundError, what: str = "this command") -> HumevalError | None:
    """The user error for a missing optional module (None when ``exc`` is about another module)."""
    top = (exc.name or "").split(".")[0]
    return HumevalError(_message(top, what)) if top in EXTRAS else None
