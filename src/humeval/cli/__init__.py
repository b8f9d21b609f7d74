"""The ``humeval`` command line: one module per command, each a thin adapter over the API.

:func:`main` is the script's entry point: ``humeval --version`` is answered here, before
Typer or any command module is imported; everything else goes to :func:`humeval.cli.app.main`.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``humeval`` script; ``args`` defaults to ``sys.argv[1:]``."""
    argv = sys.argv[1:] if args is None else list(args)
    if argv == ["--version"]:
        from humeval._version import __version__

        print(f"humeval {__version__}")
        return
    from humeval.cli.app import main as run

    run(argv)
