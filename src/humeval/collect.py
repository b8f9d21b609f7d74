"""Collection: serve a study to participants (``humeval serve`` calls :func:`serve`).

The lock gate, the pre-collection stages, seeding the store and the logbook entry are the
pipeline's (:func:`humeval.pipeline.prepare_collection`); this module only starts the web
server processes on top of it.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import socket
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from humeval.errors import HumevalError, StoreError
from humeval.pipeline import prepare_collection
from humeval.study import StudyLike, as_study

__all__ = ["ADMIN_ENV", "ServeOptions", "check_port", "serve", "serve_with", "wait_until_serving"]

#: environment variable holding the admin secret
ADMIN_ENV = "HUMEVAL_ADMIN_TOKEN"


def _bind(host: str, port: int) -> OSError | None:
    """Bind ``(host, port)`` as uvicorn binds its socket (``SO_REUSEADDR``, IPv6 when the host has a colon) and
    release it at once: the error a server would meet there, or None when it could listen."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return exc
    return None


def check_port(host: str, port: int, *, option: str = "--port") -> None:
    """Refuse, before anything is prepared or printed, a port a server could not listen on.

    A port held by another process (another ``humeval serve``, say) is a :class:`HumevalError` naming the
    next free port after it (up to 100 further); a host that is not an address of this machine, or a port
    below 1024 without the privilege, likewise.
    """
    if not 0 < port < 65536:
        raise HumevalError(f"{option} {port}: a port is a number from 1 to 65535")
    try:
        problem = _bind(host, port)
    except (OSError, UnicodeError) as exc:  # a host name that does not resolve
        raise HumevalError(f"--host {host}: not an address of this machine ({exc}); use 127.0.0.1 (this machine "
                           "only) or 0.0.0.0 (every interface)") from None
    if problem is None:
        return
    if problem.errno == errno.EADDRINUSE:
        free = next((p for p in range(port + 1, min(port + 101, 65536)) if _bind(host, p) is None), None)
        offer = (f"the next free port is {free}: serve with {option} {free}" if free is not None
                 else f"no port from {port + 1} to {min(port + 100, 65535)} is free either: choose another {option}")
        raise HumevalError(f"{option} {port}: port {port} on {host} is already in use by another process (another "
                           f"`humeval serve`?); {offer}")
    if problem.errno == errno.EACCES:
        raise HumevalError(f"{option} {port}: listening on a port below 1024 needs administrator rights; use a port "
                           "from 1024 (8000 by default) behind a proxy (docs/deployment.md)")
    raise HumevalError(f"--host {host} {option} {port}: cannot listen there ({problem.strerror or problem}); use "
                       "127.0.0.1 (this machine only) or 0.0.0.0 (every interface)")


def wait_until_serving(host: str, port: int, processes: int = 1, timeout: float = 600.0) -> set[int]:
    """Poll ``GET /healthz`` until ``processes`` distinct server processes have answered (or ``timeout``
    seconds passed); the process ids that answered. Each poll is a new connection, accepted by one of the
    processes listening on the port, so every process is reached after a few polls once it listens."""
    local = "127.0.0.1" if host in ("", "0.0.0.0") else "::1" if host == "::" else host
    url = f"http://{'[' + local + ']' if ':' in local else local}:{port}/healthz"
    seen: set[int] = set()
    deadline = time.monotonic() + timeout
    while len(seen) < processes and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    seen.add(int(json.loads(r.read()).get("process", 0)))
                    continue
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    return seen


def _announce(host: str, port: int, processes: int, lines: list[str], say: Callable[[str], None]) -> None:
    """Say ``lines`` once every server process answers ``/healthz`` (not before: "serving" means they listen)."""
    seen = wait_until_serving(host, port, processes)
    if seen:
        for line in lines:
            say(line)
    if 0 < len(seen) < processes:
        say(f"warning: only {len(seen)} of {processes} server processes answered within 600 s")


@dataclass(frozen=True)
class ServeOptions:
    """What :func:`serve` is asked (each field as its keyword; see :func:`serve` for what each means);
    :meth:`check` refuses a value no server can take, before anything is prepared."""

    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 0
    db: str | None = None
    admin_token: str | None = None
    allow_origin: list[str] | None = None
    log_level: str = "warning"
    sqlite_sync: str = "full"
    unlocked: bool = False
    new_per_address: int = 0
    trusted_proxies: list[str] | None = None
    first_lease_seconds: int = 300
    max_active: int = 0
    recruit_every: float = 0.0
    throttle_prefixes: tuple[int, int] = (32, 64)
    new_per_minute: int = 0
    new_per_wide_network: int = 0
    wide_prefixes: tuple[int, int] = (24, 48)
    public_url: str = ""

    def check(self) -> ServeOptions:
        """These options, or a :class:`HumevalError` naming the bad one and what is valid."""
        if not 0 < self.port < 65536:
            raise HumevalError(f"--port: a TCP port is 1-65535, got {self.port}")
        if self.workers < 0:
            raise HumevalError(f"--workers: server processes are 0 (the store's default) or more, got {self.workers}")
        if self.recruit_every < 0:
            raise HumevalError(f"--prolific-sync: seconds between two recruitments are >= 0 (0: none), got {self.recruit_every}")
        return self


def serve(
    study: StudyLike,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int = 0,
    db: str | None = None,
    admin_token: str | None = None,
    allow_origin: list[str] | None = None,
    log_level: str = "warning",
    sqlite_sync: str = "full",
    unlocked: bool = False,
    new_per_address: int = 0,
    trusted_proxies: list[str] | None = None,
    first_lease_seconds: int = 300,
    max_active: int = 0,
    recruit_every: float = 0.0,
    throttle_prefixes: tuple[int, int] = (32, 64),
    new_per_minute: int = 0,
    new_per_wide_network: int = 0,
    wide_prefixes: tuple[int, int] = (24, 48),
    public_url: str = "",
    say: Callable[[str], None] = print,
) -> None:
    """Serve ``study``: participant pages, admin pages and the JSON API, until stopped.

    Refuses a locked study whose protocol or inputs changed and an unlocked study unless
    ``unlocked`` (recorded in the logbook). ``workers``: server processes (0: 1 with
    SQLite, which has one writer and so takes exactly one process: more is a
    :class:`StoreError`; 2 with PostgreSQL). ``db``: store URL or SQLite file
    (default ``study.db``). ``admin_token``: the admin secret (generated when absent and
    announced through ``say``). ``sqlite_sync``: ``full`` or ``normal`` commit durability
    (see :mod:`humeval.store.engine`). The entry guard (:mod:`humeval.server.guard`):
    ``new_per_address`` new participants per client network in a first-lease window and
    ``new_per_wide_network`` per wider network (0: a quarter and a half of the entry budget; -1: no limit),
    ``throttle_prefixes`` and ``wide_prefixes``: the (IPv4, IPv6) prefix lengths of those networks,
    ``new_per_minute`` new participants from every network together (0: sized from the study; -1: no limit),
    ``trusted_proxies`` whose ``X-Forwarded-For`` is believed, ``first_lease_seconds`` a list is held before a
    participant's first submit, and ``max_active`` unfinished participants at once (0: twice the lists; -1: no
    cap). ``public_url``: the address participants open,
    which cross-origin writes are checked against (:mod:`humeval.server.security`).
    ``recruit_every``: seconds between two runs of the platform's ``recruit`` in the background (``prolific
    sync`` for a Prolific study; a platform without it refuses; 0: none): waves of places as the stopping rule
    needs them, the stop at the decision.
    """
    options = ServeOptions(host=host, port=port, workers=workers, db=db, admin_token=admin_token, allow_origin=allow_origin,
                           log_level=log_level, sqlite_sync=sqlite_sync, unlocked=unlocked, new_per_address=new_per_address,
                           trusted_proxies=trusted_proxies, first_lease_seconds=first_lease_seconds, max_active=max_active,
                           recruit_every=recruit_every, throttle_prefixes=throttle_prefixes, new_per_minute=new_per_minute,
                           new_per_wide_network=new_per_wide_network, wide_prefixes=wide_prefixes, public_url=public_url)
    serve_with(study, options, say=say)


def serve_with(study: StudyLike, options: ServeOptions, *, say: Callable[[str], None] = print) -> None:
    """:func:`serve` with ``options``: checked, then the admin token, the port, the store, the platform's part, and
    the server until stopped (messages through ``say``)."""
    study = as_study(study)
    options = options.check()
    workers = options.workers
    import uvicorn

    from humeval.platforms.registry import platform_of
    from humeval.server.config import CONFIG_FILE_ENV, ServerConfig, check_admin_token
    from humeval.server.watchdog import Watchdog
    from humeval.store.engine import SYNC_MODES, database_url, is_sqlite

    if options.admin_token:
        check_admin_token(options.admin_token)  # before anything is prepared or served
    if options.public_url:
        from humeval.server.security import origin_of

        origin_of(options.public_url)
    check_port(options.host, options.port)  # likewise: a port held by another server would fail only after the admin token is printed
    if options.sqlite_sync not in SYNC_MODES:
        raise HumevalError(f"--sqlite-sync: expected one of {', '.join(SYNC_MODES)}, got {options.sqlite_sync!r}")
    sqlite = is_sqlite(database_url(options.db, study.db_file))
    if workers == 0:
        workers = 1 if sqlite else 2
    if sqlite and workers > 1:
        raise StoreError(
            f"--workers {workers}: a SQLite store takes one server process. SQLite has one writer, so several "
            "processes only queue for its write lock (no more judgements per second, a slower 99th percentile); "
            "serve SQLite with --workers 1 (the default), or use PostgreSQL for several processes: "
            "--db postgresql://user@host:port/db (see docs/deployment.md)"
        )
    parameters = {"host": options.host, "port": options.port, "workers": workers, "sqlite_sync": options.sqlite_sync}
    seeded = prepare_collection(study, db=options.db, unlocked=options.unlocked, parameters=parameters, progress=say)
    token = options.admin_token or secrets.token_urlsafe(24)
    crowd = platform_of(study.protocol.platform.kind)
    serving = crowd.serving(study, say)
    config = ServerConfig(str(study.root.resolve()), token, options.db, list(options.allow_origin or []), options.sqlite_sync,
                          new_per_address=options.new_per_address, new_per_wide_network=options.new_per_wide_network,
                          wide_prefix_v4=options.wide_prefixes[0], wide_prefix_v6=options.wide_prefixes[1],
                          trusted_proxies=list(options.trusted_proxies or []), first_lease_seconds=options.first_lease_seconds,
                          max_active=options.max_active, hook_secret=serving.hook_secret,
                          throttle_prefix_v4=options.throttle_prefixes[0], throttle_prefix_v6=options.throttle_prefixes[1],
                          new_per_minute=options.new_per_minute, public_url=options.public_url,
                          check_entries=serving.check_entries)
    where = f"http://{options.host}:{options.port}"
    if not options.public_url and not options.trusted_proxies and not _loopback(options.host):
        say(f"note: without --public-url, a POST from a browser is accepted from http://{options.host}:{options.port} (the address "
            "the server is reached at) only; give --public-url with the address participants open")
    if options.unlocked:
        say(f"warning: collecting for an UNLOCKED study (--unlocked, recorded in {study.relative(study.logbook_file)})")
    lines = [f"{'seeded the store; ' if seeded else ''}serving {study.root} on {where} with {workers} process(es)",
             f"participants: {where}/   API: {where}/api/v1/openapi.json",
             f"admin: {where}/admin?token={token}" if not options.admin_token else f"admin: {where}/admin?token=<your admin token>"]
    if not options.admin_token and not sqlite:  # several machines may serve this store: one admin token for all of them
        lines.append(f"the admin token was generated for this start; give every other `humeval serve` of this store the "
                     f"same one (--admin-token or ${ADMIN_ENV}): a server with another token refuses this one's admin logins")
    if options.recruit_every > 0:
        crowd.recruit_every(study, options.recruit_every, db=options.db, say=say)
    say(f"starting {workers} server process(es) on {where} ...")
    threading.Thread(target=_announce, args=(options.host, options.port, workers, lines, say), daemon=True, name="humeval-announce").start()
    # stops the server, with a reason, when the study folder disappears or the workers fail to start again and again
    watchdog = Watchdog(study.protocol_file).start()
    with tempfile.TemporaryDirectory(prefix="humeval-serve-") as private:  # mode 0700; removed on exit
        os.environ[CONFIG_FILE_ENV] = str(config.write(Path(private)))
        try:
            uvicorn.run(
                "humeval.server.app:app_from_env", factory=True, host=options.host, port=options.port, workers=workers,
                log_level=options.log_level, access_log=False, timeout_graceful_shutdown=5,
                forwarded_allow_ips=list(options.trusted_proxies) if options.trusted_proxies else None,  # None: loopback, uvicorn's default
            )
        except SystemExit as exc:  # uvicorn exits 1 or 3 when it cannot start (the port taken since check_port, say)
            if exc.code not in (0, None) and watchdog.failure is None:
                raise HumevalError(f"the server on {where} did not start (uvicorn's message above); no judgement was "
                                   "collected") from None
            if watchdog.failure is None:
                raise
        except KeyboardInterrupt:  # the watchdog's stop, re-raised by uvicorn after its graceful shutdown
            if watchdog.failure is None:
                raise
        finally:
            watchdog.close()
            os.environ.pop(CONFIG_FILE_ENV, None)
    if watchdog.failure is not None:
        raise HumevalError(f"the server on {where}: {watchdog.failure}")


def _loopback(host: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
