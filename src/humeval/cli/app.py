"""The Typer application: registers one command per module and turns user errors into exit 1."""

from __future__ import annotations

import importlib
import keyword
import sys

import typer

from humeval._version import __version__

__all__ = ["app", "main"]

app = typer.Typer(
    name="humeval",
    help="Human evaluation of text-generation systems, as code: protocol, sampling, collection, stopping, analysis, report.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich",
)

# command name -> module in humeval.cli holding a function of the same name (dashes become underscores)
COMMANDS = [
    "demo",
    "init",
    "schema",
    "validate",
    "lock",
    "log",
    "run",
    "sample",
    "design",
    "dry-run",
    "rehearse",
    "reproduce",
    "simulate",
    "plan",
    "budget",
    "prereg",
    "metrics",
    "collate",
    "exclude",
    "analyze",
    "posthoc",
    "report",
    "serve",
    "export",
    "import",
    "prolific",
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"humeval {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """humeval: reliable, reproducible human evaluation of NLG systems."""


def _module_name(attr: str) -> str:
    """``import`` is a keyword: its module and function are ``import_``."""
    return f"{attr}_" if keyword.iskeyword(attr) else attr


def _register() -> None:
    if app.registered_commands or app.registered_groups:  # already registered (main() and tests may both call this)
        return
    for name in COMMANDS:
        attr = name.replace("-", "_")
        module = importlib.import_module(f"humeval.cli.{_module_name(attr)}")
        target = getattr(module, _module_name(attr))
        if isinstance(target, typer.Typer):  # a command with subcommands (``humeval prolific create``)
            app.add_typer(target, name=name)
        else:
            app.command(name)(target)


def command() -> typer.core.TyperGroup:
    """The click command of the CLI: every command registered; flags show no type placeholder in help."""
    import click

    _register()
    group = typer.main.get_command(app)
    for cmd in (group, *group.commands.values()):  # type: ignore[attr-defined]
        help_option = cmd.get_help_option(click.Context(cmd))  # created once and cached by click
        for param in (*cmd.params, *([help_option] if help_option is not None else [])):
            if getattr(param, "is_flag", False):
                param.metavar = ""  # `--force` and `--help` take no value: no `<bool>` beside them
    return group  # type: ignore[return-value]


def main() -> None:
    """Entry point of the ``humeval`` script: user errors exit 1 without a traceback."""
    from humeval.errors import HumevalError

    try:
        command()(prog_name="humeval")
    except HumevalError as exc:
        from rich.markup import escape

        from humeval.cli._common import err

        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(1)
