"""``humeval serve``: run the collection web app (uvicorn; several processes with --workers)."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import err
from humeval.collect import ADMIN_ENV


def serve(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (default: loopback only)."),
    port: int = typer.Option(8000, "--port", "-p", help="Port to listen on (one in use is refused before anything is printed, naming the next free one)."),
    workers: int = typer.Option(0, "--workers", "-w", min=0, max=64, show_default=False,
                                help="Server processes sharing the store (default: 1 with SQLite, which has one writer and takes only 1; 2 with PostgreSQL)."),
    db: str = typer.Option("", "--db", help="Store: SQLite file or postgresql://user@host:port/db (default: study.db)."),
    admin_token: str = typer.Option("", "--admin-token", envvar=ADMIN_ENV, help=f"Admin secret (or ${ADMIN_ENV}); generated and printed when absent."),
    allow_origin: list[str] = typer.Option([], "--allow-origin", help="Extra origin allowed to POST (a custom front end)."),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn log level."),
    sqlite_sync: str = typer.Option("full", "--sqlite-sync", help="SQLite commit durability: full (default: an acknowledged "
                                    "judgement survives a crash of the process, the OS or the power) or normal (survives a "
                                    "crash or SIGKILL of the server, not an OS crash or power loss; faster commits)."),
    new_per_address: int = typer.Option(0, "--new-per-address", min=-1, help="New participants admitted per client "
                                        "network in a first-lease window; more get 429 with Retry-After (0: a quarter of "
                                        "the entry budget; -1: no limit)."),
    throttle_prefix_v4: int = typer.Option(32, "--throttle-prefix-v4", min=8, max=32, help="A client network is an "
                                           "IPv4 address's first this many bits (32: each address)."),
    throttle_prefix_v6: int = typer.Option(64, "--throttle-prefix-v6", min=16, max=128, help="... and an IPv6 address's "
                                           "first this many (64: a subscriber's line, whose 2^64 addresses cost nothing)."),
    new_per_wide_network: int = typer.Option(0, "--new-per-wide-network", min=-1, help="New participants admitted per "
                                             "wider network (--wide-prefix-v4, --wide-prefix-v6) in a first-lease window; "
                                             "more get 429 with Retry-After (0: half the entry budget; -1: no limit)."),
    wide_prefix_v4: int = typer.Option(24, "--wide-prefix-v4", min=8, max=32, help="A wider network is an IPv4 "
                                       "address's first this many bits."),
    wide_prefix_v6: int = typer.Option(48, "--wide-prefix-v6", min=16, max=128, help="... and an IPv6 address's first "
                                       "this many."),
    new_per_minute: int = typer.Option(0, "--new-per-minute", min=-1, help="New participants admitted per minute from "
                                       "every address together, counted over the first-lease window (0: a quarter of "
                                       "the places per window, or 5 x crowd.arrivals_per_hour if more; -1: no limit); "
                                       "more get 503 with Retry-After."),
    public_url: str = typer.Option("", "--public-url", help="The address participants open (https://eval.example.org): "
                                   "cross-origin POSTs are checked against it (default: the trusted proxy's Host, or "
                                   "the address the server is reached at)."),
    trusted_proxy: list[str] = typer.Option([], "--trusted-proxy", help="Address or network (CIDR) of a reverse proxy "
                                            "whose X-Forwarded-For names the client (repeatable)."),
    first_lease: int = typer.Option(300, "--first-lease", min=10, help="Seconds a list is held for a participant before "
                                    "their first submit (then assignment.lease_seconds)."),
    max_active: int = typer.Option(0, "--max-active", min=-1, help="Unfinished participants admitted at once (0: twice "
                                   "the lists or places; -1: no cap); more get 503 with Retry-After."),
    prolific_sync: float = typer.Option(0.0, "--prolific-sync", min=0.0, metavar="SECONDS", help="Prolific study: run "
                                        "`humeval prolific sync` every SECONDS in the background (waves of places as "
                                        "the stopping rule needs them; the study stopped at the decision). 0: never."),
    unlocked: bool = typer.Option(False, "--unlocked", help="Collect for a study that is not locked (recorded in the "
                                  "logbook). Without it, serve refuses an unlocked study; a locked study whose protocol "
                                  "or inputs changed is always refused."),
) -> None:
    """Serve the study: participant pages, admin pages and the JSON API (/api/v1, OpenAPI at /api/v1/openapi.json)."""
    from humeval.collect import ServeOptions, serve_with

    options = ServeOptions(host=host, port=port, workers=workers, db=db or None, admin_token=admin_token or None,
                           allow_origin=list(allow_origin), log_level=log_level, sqlite_sync=sqlite_sync,
                           unlocked=unlocked, new_per_address=new_per_address, trusted_proxies=list(trusted_proxy),
                           first_lease_seconds=first_lease, max_active=max_active, recruit_every=prolific_sync,
                           throttle_prefixes=(throttle_prefix_v4, throttle_prefix_v6), new_per_minute=new_per_minute,
                           new_per_wide_network=new_per_wide_network, wide_prefixes=(wide_prefix_v4, wide_prefix_v6),
                           public_url=public_url)
    serve_with(directory, options, say=lambda text: err.print(text, highlight=False, markup=False))
