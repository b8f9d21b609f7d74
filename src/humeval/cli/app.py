"""The Typer application: one command per module, imported only when that command runs.

``humeval --version`` answers before Typer is imported; ``humeval CMD`` imports the module of
``CMD`` alone (:class:`LazyGroup`), so a small job does not pay for every command's imports.
:func:`command` registers every command at once (help, docs, the CLI reference).
"""

from __future__ import annotations

import importlib
import keyword
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
import typer
import typer.core

from humeval._version import __version__

if TYPE_CHECKING:  # Typer >= 0.26 runs on a copy of click of its own: its groups, commands and contexts are these
    from typer._click import Command, Context

__all__ = ["COMMANDS", "EXIT_BUG", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USER_ERROR", "PANELS", "LazyGroup", "app", "main"]


class LazyGroup(typer.core.TyperGroup):
    """The root group: a command's module is imported the first time the command is looked up."""

    def list_commands(self, ctx: Context) -> list[str]:
        """In the order of a study (:data:`PANELS`), not alphabetically."""
        return [*COMMANDS, *sorted(set(self.commands) - set(COMMANDS))]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(_load(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: Context, args: list[str]) -> tuple[str | None, Command | None, list[str]]:
        """As click's, with the commands that exist (and the closest one) named for an unknown command."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            from humeval.errors import did_you_mean

            ctx.fail(f"No such command '{name}'. {did_you_mean(name, self.list_commands(ctx))}")
        return super().resolve_command(ctx, args)


app = typer.Typer(
    cls=LazyGroup,
    name="humeval",
    help="Human evaluation of text-generation systems, as code: protocol, sampling, collection, stopping, analysis, report.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich",
)

# the commands in the order of a study, grouped as `humeval --help` shows them; each command name is the module in
# humeval.cli holding a function of the same name (dashes become underscores)
PANELS: dict[str, list[str]] = {
    "Start": ["demo", "init", "schema"],
    "Prepare a study": ["validate", "lock", "run", "sample", "metrics", "design"],
    "Rehearse and plan": ["dry-run", "rehearse", "simulate", "arena", "plan", "budget", "prereg"],
    "Collect": ["serve", "prolific", "pilot", "export", "import", "judge", "local-model"],
    "Analyse and report": ["collate", "exclude", "analyze", "posthoc", "report"],
    "Look back": ["log", "reproduce"],
}
COMMANDS = [name for names in PANELS.values() for name in names]
PANEL_OF = {name: panel for panel, names in PANELS.items() for name in names}


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


def _target(name: str) -> typer.Typer | Callable[..., Any]:
    attr = _module_name(name.replace("-", "_"))
    return getattr(importlib.import_module(f"humeval.cli.{attr}"), attr)


def _register() -> None:
    if app.registered_commands or app.registered_groups:  # already registered (main() and tests may both call this)
        return
    for name in COMMANDS:
        target = _target(name)
        if isinstance(target, typer.Typer):  # a command with subcommands (``humeval prolific create``)
            app.add_typer(target, name=name, rich_help_panel=PANEL_OF[name])
        else:
            app.command(name, rich_help_panel=PANEL_OF[name])(target)  # type: ignore[arg-type]


def _flags_without_metavar(cmd: Command) -> None:
    """``--force`` and ``--help`` take no value: no ``<bool>`` beside them in help."""
    help_option = cmd.get_help_option(cmd.context_class(cmd))  # created once and cached by click
    for param in (*cmd.params, *([help_option] if help_option is not None else [])):
        if getattr(param, "is_flag", False):
            param.metavar = ""


def _load(name: str) -> Command:
    """The click command of one CLI command, built from its module alone (as :func:`command` builds it)."""
    target = _target(name)
    single = typer.Typer(rich_markup_mode="rich", add_completion=False, pretty_exceptions_enable=False)
    if isinstance(target, typer.Typer):
        single.add_typer(target, name=name, rich_help_panel=PANEL_OF[name])
        cmd = typer.main.get_command(single).commands[name]  # type: ignore[attr-defined]
    else:
        single.command(name, rich_help_panel=PANEL_OF[name])(target)  # type: ignore[arg-type]
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


#: exit codes of ``humeval``, one per class of outcome (README, docs/cli.md)
EXIT_OK = 0  # done (``--help`` and a bare ``humeval``, which prints the help, included)
EXIT_USER_ERROR = 1  # a user error: the study, its data, the machine (a port in use) or the command line; one message
EXIT_BUG = 70  # an unexpected exception: a bug in humeval, printed with its traceback (EX_SOFTWARE of sysexits.h)
EXIT_INTERRUPTED = 130  # stopped with Ctrl-C (128 + SIGINT)


def _click_exceptions(name: str) -> tuple[type[BaseException], ...]:
    """The classes called ``name`` in click and in the copy of click Typer may ship (Typer >= 0.26)."""
    found = [getattr(click.exceptions, name)]
    for module in ("typer._click.exceptions", "typer.exceptions"):
        try:
            cls = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if cls is not None and cls not in found:
            found.append(cls)
    return tuple(found)


_CLICK_ERRORS = _click_exceptions("ClickException")  # a command line that does not parse (click's exit 2)
_ABORTS = _click_exceptions("Abort")


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``humeval`` script: a user error exits 1 with one message and no traceback.

    ``args``: the command line without the program name (default ``sys.argv[1:]``); the tests
    run commands in-process through here, so they see the same exit codes as the script.

    A user error is a :class:`~humeval.errors.HumevalError`, a module of an extra that is not
    installed (SciPy for ``analyze`` in a server-only install, say: the message names the extra)
    or a command line that does not parse (an unknown option, a value not among the choices:
    the usage line and the valid values). Anything else is a bug: its traceback, exit 70.
    """
    from humeval.errors import HumevalError
    from humeval.extras import missing_extra

    argv = sys.argv[1:] if args is None else list(args)
    try:
        try:
            code = command(lazy=True).main(args=argv, prog_name="humeval", standalone_mode=False)
        except ModuleNotFoundError as exc:
            name = next((a for a in argv if not a.startswith("-")), "this command")
            raise (missing_extra(exc, f"humeval {name}") or exc) from None
    except HumevalError as exc:
        from rich.markup import escape

        from humeval.cli._common import err
        from humeval.secrets import redact

        err.print(f"[bold red]error:[/] {escape(redact(str(exc)))}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_USER_ERROR)
    except _CLICK_ERRORS as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare ``humeval``: the help was printed
            sys.exit(EXIT_OK)
        try:
            from typer import rich_utils
        except ImportError:  # Typer without Rich
            exc.show()  # type: ignore[attr-defined]
        else:
            rich_utils.rich_format_error(exc)  # type: ignore[arg-type]  # the usage line, and what was wrong with it
        sys.exit(EXIT_USER_ERROR)
    except _ABORTS:
        sys.exit(EXIT_INTERRUPTED)
    except Exception:  # noqa: BLE001 (a bug: the traceback is the report)
        import traceback

        from humeval.secrets import redact

        print(redact(traceback.format_exc()), end="", file=sys.stderr)
        print(f"humeval {__version__}: an unexpected error (a bug in humeval, not in your study); "
              "please report it with the traceback above", file=sys.stderr)
        sys.exit(EXIT_BUG)
    sys.exit(code if isinstance(code, int) else EXIT_OK)
