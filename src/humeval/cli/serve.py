"""``humeval serve``: run the collection web app (uvicorn; several processes with --workers)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import typer

from humeval.cli._common import err

ADMIN_ENV = "HUMEVAL_ADMIN_TOKEN"


def serve(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (default: loopback only)."),
    port: int = typer.Option(8000, "--port", "-p", help="Port to listen on."),
    workers: int = typer.Option(0, "--workers", "-w", min=0, max=64, show_default=False,
                                help="Server processes sharing the store (default: 1 with SQLite, which has one writer; 2 with PostgreSQL)."),
    db: str = typer.Option("", "--db", help="Store: SQLite file or postgresql://user@host:port/db (default: study.db)."),
    admin_token: str = typer.Option("", "--admin-token", envvar=ADMIN_ENV, help=f"Admin secret (or ${ADMIN_ENV}); generated and printed when absent."),
    allow_origin: list[str] = typer.Option([], "--allow-origin", help="Extra origin allowed to POST (a custom front end)."),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn log level."),
    sqlite_sync: str = typer.Option("full", "--sqlite-sync", help="SQLite commit durability: full (default: an acknowledged "
                                    "judgement survives a crash of the process, the OS or the power) or normal (survives a "
                                    "crash or SIGKILL of the server, not an OS crash or power loss; faster commits)."),
) -> None:
    """Serve the study: participant pages, admin pages and the JSON API (/api/v1, OpenAPI at /api/v1/openapi.json)."""
    import uvicorn

    from humeval.errors import HumevalError
    from humeval.server.config import ENV, ServerConfig
    from humeval.store import Store
    from humeval.store.engine import SYNC_MODES, is_sqlite
    from humeval.study import Study

    if sqlite_sync not in SYNC_MODES:
        raise HumevalError(f"--sqlite-sync: expected one of {', '.join(SYNC_MODES)}, got {sqlite_sync!r}")
    study = Study.open(directory)
    _ = study.protocol
    if not (study.lists_file).is_file():
        # the pre-collection stages (pandas): imported only when they have to run
        from humeval.pipeline import run as run_pipeline

        err.print("no participant lists yet: running the pre-collection stages (humeval run)", highlight=False)
        list(run_pipeline(study))
    store = Store.open(study, db or None)
    if workers == 0:
        workers = 1 if is_sqlite(store.url) else 2
    seeded = store.prepare()
    store.close()
    token = admin_token or secrets.token_urlsafe(24)
    config = ServerConfig(str(study.root.resolve()), token, db or None, list(allow_origin), sqlite_sync)
    os.environ[ENV] = config.to_env()
    where = f"http://{host}:{port}"
    err.print(f"{'seeded the store; ' if seeded else ''}serving {study.root} on {where} with {workers} process(es)", highlight=False)
    err.print(f"participants: {where}/   API: {where}/api/v1/openapi.json", highlight=False)
    err.print(f"admin: {where}/admin?token={token}" if not admin_token else f"admin: {where}/admin?token=<your admin token>", highlight=False, markup=False)
    uvicorn.run(
        "humeval.server.app:app_from_env", factory=True, host=host, port=port, workers=workers,
        log_level=log_level, access_log=False, timeout_graceful_shutdown=5,
    )
