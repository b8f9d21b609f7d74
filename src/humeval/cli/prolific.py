"""``humeval prolific create|publish|pause|start|stop|sync|status|review|bonus DIR``: a study on Prolific's API;
``humeval prolific hooks secret|subscribe|list|delete``: the workspace's webhooks.

The token is read from ``$PROLIFIC_TOKEN`` or ``--token-file`` (outside the study folder);
``$PROLIFIC_API_URL`` points the commands at another API root (a local fake for tests).
``--dry-run`` prints each HTTP request as one JSON line on stdout and sends nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from humeval.cli._common import Format, emit_rows, err

prolific = typer.Typer(name="prolific", no_args_is_help=True, add_completion=False,
                       help="Run the study on Prolific through its API: create, publish, pause, start, stop, sync, "
                            "status, review, bonus, and the workspace's hooks (see docs/prolific.md).")

DIR = typer.Argument(Path("."), help="Study folder (locked).")
DRY = typer.Option(False, "--dry-run", help="Print the HTTP requests as JSON lines instead of sending them.")
TOKEN_FILE = typer.Option(None, "--token-file", help="File holding the API token, outside the study folder "
                          "(default: $PROLIFIC_TOKEN, then $PROLIFIC_TOKEN_FILE).")
DB = typer.Option("", "--db", help="Store: SQLite file or postgresql:// URL (default: study.db).")
FMT = typer.Option(Format.table, "--format", "-f", help="Output format: table, json or csv.")
PARTICIPANT = typer.Option([], "--participant", help="Pay only these approved participants (repeatable; default: every "
                           "approved participant).")


def _client(directory: Path, dry_run: bool, token_file: Path | None) -> Any:
    from humeval.platforms.prolific.client import DryRun, ProlificClient

    return ProlificClient.from_env(directory, token_file=token_file, dry_run=DryRun() if dry_run else None)


def _open(directory: Path) -> Any:
    from humeval.study import StudyFolder

    return StudyFolder.open(directory)


def _budget(budget: Any) -> None:
    err.print("[bold]Prolific study budget[/]", highlight=False)
    for row in budget.rows():
        err.print(f"  {row['item']}: {row['value']} ({row['source']})", highlight=False, markup=False)


def _wave(places: int, lists: int, fresh: Any) -> None:
    if fresh is None:
        err.print(f"  places opened: {places} (every list: a fixed design)", highlight=False, markup=False)
        return
    err.print(f"  places opened: {places} of {lists} (first wave: the stopping rule admits {fresh.target} "
              f"session(s) before any outcome, rounded up to crowd.wave; `humeval prolific sync` opens the next "
              f"waves and stops the study at the decision)", highlight=False, markup=False)


@prolific.command("create")
def create(directory: Path = DIR, dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE) -> None:
    """Create the draft study from the locked protocol; the budget is printed before anything is sent."""
    from humeval.costs import launch_budget
    from humeval.platforms.prolific import prolific_create

    study = _open(directory)

    def wave_and_screenouts(places: int, lists: int, fresh: Any) -> None:
        _wave(places, lists, fresh)
        settings, currency = study.protocol.platform.prolific, study.protocol.pay.currency
        if settings.screenout_reward > 0 and study.protocol.platform.screenout_code:
            slots = settings.screenout_places or lists
            err.print(f"  screen-outs: up to {slots} x {settings.screenout_reward:.2f} {currency} = "
                      f"{slots * settings.screenout_reward:.2f} {currency} (FIXED_SCREENOUT, paid by Prolific without "
                      "review; Prolific's fee on top)", highlight=False, markup=False)

    with _client(directory, dry_run, token_file) as client:
        result = prolific_create(study, client=client, budget=launch_budget(study), show_budget=_budget,
                                 show_wave=wave_and_screenouts)
    if not dry_run:
        err.print(f"created Prolific study {result.study_id} (unpublished); publish it with "
                  f"`humeval prolific publish {directory}`", highlight=False, markup=False)


def _transition(action: str, directory: Path, dry_run: bool, token_file: Path | None) -> None:
    from humeval.platforms.prolific import prolific_transition

    with _client(directory, dry_run, token_file) as client:
        answer = prolific_transition(_open(directory), action, client=client)
    if not dry_run:
        err.print(f"{action}: the Prolific study is now {answer.get('status', '?')}", highlight=False, markup=False)


@prolific.command("publish")
def publish(directory: Path = DIR, dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE) -> None:
    """Publish the study: participants can take it."""
    _transition("PUBLISH", directory, dry_run, token_file)


@prolific.command("pause")
def pause(directory: Path = DIR, dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE) -> None:
    """Pause the study: no new participant can start it."""
    _transition("PAUSE", directory, dry_run, token_file)


@prolific.command("start")
def start(directory: Path = DIR, dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE) -> None:
    """Resume a paused study."""
    _transition("START", directory, dry_run, token_file)


@prolific.command("stop")
def stop(directory: Path = DIR, dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE) -> None:
    """Stop the study for good (submissions can still be reviewed)."""
    _transition("STOP", directory, dry_run, token_file)


@prolific.command("sync")
def sync(directory: Path = DIR, dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE, db: str = DB,
         every: float = typer.Option(0.0, "--every", min=0.0, help="Sync every SECONDS until the study is stopped "
                                     "(default: once)."),
         fmt: Format = FMT) -> None:
    """Open the places the stopping rule can use now (waves of crowd.wave), pause at the decision, stop when done."""
    from humeval.platforms.prolific.waves import prolific_sync, sync_every

    study = _open(directory)
    if every > 0:
        last = sync_every(study, every, client_factory=lambda: _client(directory, dry_run, token_file), db=db or None,
                          say=lambda text: err.print(text, highlight=False, markup=False))
        rows = [last.to_json()] if last is not None else []
    else:
        with _client(directory, dry_run, token_file) as client:
            rows = [prolific_sync(study, client=client, db=db or None).to_json()]
    if not dry_run:
        emit_rows(rows, fmt, title="Prolific places and the stopping rule")


@prolific.command("status")
def status(directory: Path = DIR, dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE, db: str = DB,
           fmt: Format = FMT) -> None:
    """Submissions merged with the store; returned and timed-out places are released at once."""
    from humeval.platforms.prolific import prolific_status

    with _client(directory, dry_run, token_file) as client:
        rows = prolific_status(_open(directory), client=client, db=db or None)
    if not dry_run:
        emit_rows([r.to_json() for r in rows], fmt, title="Prolific submissions and the store")


@prolific.command("review")
def review(directory: Path = DIR, dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE, db: str = DB,
           fmt: Format = FMT) -> None:
    """Approve complete submissions; reject only under a preregistered exclusion rule, with its category."""
    from humeval.platforms.prolific import prolific_review

    with _client(directory, dry_run, token_file) as client:
        decisions = prolific_review(_open(directory), client=client, db=db or None)
    if not dry_run:
        emit_rows([d.to_json() for d in decisions], fmt, title="Prolific review")


@prolific.command("bonus")
def bonus(directory: Path = DIR, dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE, db: str = DB,
          participant: list[str] = PARTICIPANT,
          fmt: Format = FMT) -> None:
    """Pay the protocol's bonus to approved participants, never twice (intent recorded before each payment)."""
    from humeval.platforms.prolific import prolific_bonus

    with _client(directory, dry_run, token_file) as client:
        result = prolific_bonus(_open(directory), client=client, db=db or None, participants=list(participant) or None)
    if dry_run:
        return
    emit_rows(result.rows, fmt, title=f"Prolific bonuses ({result.amount:.2f} each)")
    if result.unconfirmed:
        err.print(f"{len(result.unconfirmed)} payment(s) unconfirmed: they are never paid again by humeval; run "
                  "`humeval prolific bonus` later to reconcile them (docs/prolific.md)", highlight=False, markup=False)


hooks = typer.Typer(name="hooks", no_args_is_help=True, add_completion=False,
                    help="Prolific's webhooks for this workspace: the signing secret, and subscriptions of the server's "
                         "hook (subscribe confirms each one; see docs/prolific.md).")
prolific.add_typer(hooks, name="hooks")
WORKSPACE = typer.Option(..., "--workspace", help="Prolific workspace id (the app's workspace settings, or "
                         "GET /api/v1/workspaces/).")


@hooks.command("secret")
def hooks_secret(directory: Path = DIR, workspace: str = WORKSPACE,
                 replace: bool = typer.Option(False, "--replace", help="Replace the workspace's existing secret (a "
                                              "server still verifying with the old one refuses every hook)."),
                 dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE) -> None:
    """Create the workspace's signing secret and print it on stdout: the value of $PROLIFIC_HOOK_SECRET."""
    from humeval.platforms.prolific.hooks import create_secret

    with _client(directory, dry_run, token_file) as client:
        made = create_secret(client, workspace, replace=replace)
    if made is not None:
        typer.echo(made.value)
        err.print("the workspace's hook secret is printed above, once: keep it outside the study folder and start "
                  "`humeval serve` with it in $PROLIFIC_HOOK_SECRET", highlight=False, markup=False)


@hooks.command("subscribe")
def hooks_subscribe(directory: Path = DIR,
                    url: str = typer.Option(..., "--url", help="Public address of the hook: `humeval serve`'s "
                                            "https://.../prolific/hook (served when $PROLIFIC_HOOK_SECRET is set)."),
                    workspace: str = WORKSPACE,
                    event: list[str] = typer.Option([], "--event", help="Event type (repeatable; default "
                                                    "submission.status.change)."),
                    dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE, fmt: Format = FMT) -> None:
    """Subscribe the server's hook and confirm the subscription, so returned participants free their lists at once."""
    from humeval.errors import PlatformError
    from humeval.platforms.prolific.hooks import DEFAULT_EVENTS, subscribe

    if not url.startswith("https://") or not url.rstrip("/").endswith("/prolific/hook"):
        raise PlatformError(f"--url: the server's hook address, https://<host>/prolific/hook, got {url!r}")
    with _client(directory, dry_run, token_file) as client:
        made = subscribe(client, workspace, url, tuple(event) or DEFAULT_EVENTS)
    if not dry_run:
        emit_rows([s.to_json() for s in made], fmt, title="Prolific hook subscriptions (confirmed)")
        err.print("keep $PROLIFIC_HOOK_SECRET (from `humeval prolific hooks secret`) set for `humeval serve`",
                  highlight=False, markup=False)


@hooks.command("list")
def hooks_list(directory: Path = DIR, workspace: str = WORKSPACE, dry_run: bool = DRY,
               token_file: Path | None = TOKEN_FILE, fmt: Format = FMT) -> None:
    """The workspace's hook subscriptions, enabled or not (an unconfirmed one is disabled)."""
    from humeval.platforms.prolific.hooks import list_subscriptions

    with _client(directory, dry_run, token_file) as client:
        rows = list_subscriptions(client, workspace)
    if not dry_run:
        emit_rows([s.to_json() for s in rows], fmt, title="Prolific hook subscriptions")


@hooks.command("delete")
def hooks_delete(subscription: str = typer.Argument(..., help="Subscription id (from `humeval prolific hooks list`)."),
                 directory: Path = typer.Option(Path("."), "--dir", help="Study folder (where a token file may not be)."),
                 dry_run: bool = DRY, token_file: Path | None = TOKEN_FILE) -> None:
    """Delete a hook subscription: Prolific stops delivering to its address."""
    from humeval.platforms.prolific.hooks import delete_subscription

    with _client(directory, dry_run, token_file) as client:
        delete_subscription(client, subscription)
    if not dry_run:
        err.print(f"deleted hook subscription {subscription}", highlight=False, markup=False)
