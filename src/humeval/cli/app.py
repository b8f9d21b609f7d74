"""The Typer application: one command per module, imported only when that command runs.

``humeval --version`` answers before Typer is imported; ``humeval CMD`` imports the module of
``CMD`` alone (:class:`LazyGroup`), so a small job does not pay for every command's imports.
:func:`command` registers every command at once (help, docs, the CLI reference).
"""

from __future__ import annotations

import importlib
import keyword
import sys

import click
import typer
import typer.core

from humeval._version import __version__

__all__ = ["LazyGroup", "app", "main"]


class LazyGroup(typer.core.TyperGroup):
    """The root group: a command's module is imported the first time the command is looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(_load(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)


app = typer.Typer(
    cls=LazyGroup,
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
    "judge",
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


def _target(name: str) -> object:
    attr = _module_name(name.replace("-", "_"))
    return getattr(importlib.import_module(f"humeval.cli.{attr}"), attr)


def _register() -> None:
    if app.registered_commands or app.registered_groups:  # already registered (main() and tests may both call this)
        return
    for name in COMMANDS:
        target = _target(name)
        if isinstance(target, typer.Typer):  # a command with subcommands (``humeval prolific create``)
            app.add_typer(target, name=name)
        else:
            app.command(name)(target)  # type: ignore[arg-type]


def _flags_without_metavar(cmd: click.Command) -> None:
    """``--force`` and ``--help`` take no value: no ``<bool>`` beside them in help."""
    help_option = cmd.get_help_option(click.Context(cmd))  # created once and cached by click
    for param in (*cmd.params, *([help_option] if help_option is not None else [])):
        if getattr(param, "is_flag", False):
            param.metavar = ""


def _load(name: str) -> click.Command:
    """The click command of one CLI command, built from its module alone (as :func:`command` builds it)."""
    target = _target(name)
    single = typer.Typer(rich_markup_mode="rich", add_completion=False, pretty_exceptions_enable=False)
    if isinstance(target, typer.Typer):
        single.add_typer(target, name=name)
        cmd = typer.main.get_command(single).commands[name]  # type: ignore[attr-defined]
    else:
        single.command(name)(target)  # type: ignore[arg-type]
        cmd = typer.main.get_command(single)
    cmd.name = name
    _flags_without_metavar(cmd)
    for sub in getattr(cmd, "commands", {}).values():  # ``humeval prolific create``
        _flags_without_metavar(sub)
    return cmd


def command(*, lazy: bool = False) -> typer.core.TyperGroup:
    """The click command of the CLI; flags show no type placeholder in help.

    ``lazy``: register nothing up front (each command's module is imported when it is
    looked up, as ``humeval CMD`` does); otherwise every command is registered now.
    """
    if not lazy:
        _register()
    group = typer.main.get_command(app)
    for cmd in (group, *group.commands.values()):  # type: ignore[attr-defined]
        _flags_without_metavar(cmd)
        for sub in getattr(cmd, "commands", {}).values():  # ``humeval prolific create``
            _flags_without_metavar(sub)
    return group  # type: ignore[return-value]


def main() -> None:
    """Entry point of the ``humeval`` script: user errors exit 1 without a traceback.

    A module of an extra that is not installed (SciPy for ``analyze`` in a server-only
    install, say) is a user error too: the message names the extra to install.
    """
    from humeval.errors import HumevalError
    from humeval.extras import missing_extra

    try:
        try:
            command(lazy=True)(prog_name="humeval")
        except ModuleNotFoundError as exc:
            name = next((a for a in sys.argv[1:] if not a.startswith("-")), "this command")
            raise (missing_extra(exc, f"humeval {name}") or exc) from None
    except HumevalError as exc:
        from rich.markup import escape

        from humeval.cli._common import err

        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(1)
