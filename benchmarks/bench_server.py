"""The collection benchmark: ``humeval serve`` on each store and process count, side by side, in one run.

Virtual annotators enter, get their first task (``GET /api/v1/next``) and answer each task with
``next: true``, which brings the next one back with the answer (``--flow next``, the default: one
request per task; ``--flow page`` asks for every task with ``GET /api/v1/next`` first), until
their list is done, then enter again as a new participant. ``--flow html`` drives the participant
pages as a browser does instead: ``POST /start``, then ``GET /task`` and its form posted back
(``POST /task``, answered by a 303 to ``/task``), task after task. Several flows (``--flow
next,html``) are measured one after the other, each configuration on a fresh store per flow, and
printed side by side. A configuration is measured once
every one of its server processes answers ``/healthz``. Every configuration is measured at
every level of concurrency:

* configurations (``--configs``): SQLite with 1 and 2 processes, PostgreSQL with 1, 2 and 4
  processes. ``serve`` refuses ``--workers 2`` on SQLite (one writer): that cell says
  "refused" with serve's own message. PostgreSQL configurations create a database of their
  own on ``--pg`` (dropped afterwards) and are skipped, with a line saying why, when
  PostgreSQL cannot be reached.
* levels (``--levels``): 1, 10, 50 and 200 annotators, ``--seconds`` each.

Each configuration serves a fresh store seeded from one study built for the benchmark:
pairwise, two systems, 3 judgements per item, lists of 10, no stopping rule, and ``--items``
items (90,000 judgements with the default 30,000), so the study can neither finish nor stop
during the run. A cell that acknowledged no judgement, or in which the study ran out of
lists, is marked "measured nothing" with a warning; it is never reported as 0 items/s.

Per cell: judgements acknowledged per second; page (GET next, or GET /task) and submit (POST judgement,
or POST /task) latency p50/p99; CPU per acknowledged judgement in humeval (user + system time of every
server process, children included, from /proc) and in PostgreSQL (the client backends
connected to the configuration's database, found in ``pg_stat_activity``, from
/proc/<pid>/stat); the whole machine's busy CPUs during the cell (from /proc/stat: a configuration whose
processes and PostgreSQL together keep every CPU busy is bound by the machine, not by its own code,
and the load generator is one of them); peak resident memory of the server processes; the load average.

    python benchmarks/bench_server.py                       # every configuration, 1/10/50/200 annotators
    python benchmarks/bench_server.py --quick               # SQLite 1 and 2, PostgreSQL 2; 1 and 10; 2 s
    python benchmarks/bench_server.py --configs postgresql:2 --levels 50 --seconds 20 --json

Loopback only (127.0.0.1), bounded in time (``--seconds`` per cell) and in requests
(``--max-judgements`` per cell). The client is a minimal HTTP/1.1 keep-alive client on
asyncio, in this one process, so that the load generator, which shares the machine, costs
as little CPU as possible (its own CPU per judgement is in the JSON output).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import numpy as np
from _serve import cpu_ticks, free_port, machine_ticks, process_tree, rss_mb, stop, task_form

from humeval.collect import wait_until_serving

ADMIN = "bench-admin-token-0123456789"
HOST = "127.0.0.1"
PG_DEFAULT = "postgresql://postgres@127.0.0.1:5432/test"
DEFAULT_CONFIGS = "sqlite:1,sqlite:2,postgresql:1,postgresql:2,postgresql:4"
QUICK = {"configs": "sqlite:1,sqlite:2,postgresql:2", "levels": "1,10", "seconds": 2.0, "items": 3000}
PER_ITEM, PER_LIST = 3, 10
FLOWS = ("next", "page", "html")
CLK_TCK = os.sysconf("SC_CLK_TCK")

PROTOCOL = f"""version: 1
study: {{name: bench-server, seed: 7}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which description is better?", tie: true}}
presentation: {{setup: separate, randomise_order: true}}
design: {{judgements_per_item: {PER_ITEM}, items_per_participant: {PER_LIST}, counterbalancing: latin-square}}
assignment: {{strategy: list}}
platform: {{kind: local, completion_code: BENCH-DONE}}
"""


# -- the client ----------------------------------------------------------------------------------
class Conn:
    """One keep-alive HTTP/1.1 connection (enough HTTP for this API)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.headers: dict[str, str] = {}

    async def request(self, method: str, path: str, body: dict | None = None, token: str | None = None, *,
                      form: dict[str, str] | None = None, cookie: str | None = None) -> tuple[int, bytes]:
        """The status and body; the response's headers (lower-cased names) in :attr:`headers`."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(HOST, self.port)
        data = json.dumps(body).encode() if body is not None else urlencode(form).encode() if form is not None else b""
        head = f"{method} {path} HTTP/1.1\r\nhost: {HOST}:{self.port}\r\ncontent-length: {len(data)}\r\n"
        if body is not None:
            head += "content-type: application/json\r\n"
        if form is not None:
            head += "content-type: application/x-www-form-urlencoded\r\n"
        if token:
            head += f"authorization: Bearer {token}\r\n"
        if cookie:
            head += f"cookie: {cookie}\r\n"
        self.writer.write(head.encode() + b"\r\n" + data)
        assert self.reader is not None
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("the server closed the connection")
        status = int(status_line.split()[1])
        self.headers = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            k, _, v = line.decode().partition(":")
            self.headers[k.strip().lower()] = v.strip()
        length = int(self.headers.get("content-length", 0))
        payload = await self.reader.readexactly(length) if length else b""
        return status, payload

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


# -- what the machine says: /proc -------------------------------------------------------------------
def loadavg() -> float | None:
    """The 1-minute load average (throughput on a loaded machine is noisy: it is reported with every cell)."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


# -- PostgreSQL ----------------------------------------------------------------------------------
class Postgres:
    """A database of the benchmark's own on the server ``admin_url`` names, and the CPU of its backends."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.name = ""

    def reachable(self) -> str | None:
        """None when the server answers, else why not."""
        try:
            import psycopg
        except ImportError:
            return "psycopg is not installed (pip install 'humeval[postgres]')"
        try:
            psycopg.connect(self.admin_url, connect_timeout=3).close()
        except psycopg.Error as exc:
            return f"cannot connect to {self.admin_url}: {str(exc).strip().splitlines()[0]}"
        return None

    def create(self) -> str:
        """Create a fresh database; its URL."""
        import psycopg
        from sqlalchemy.engine import make_url

        self.name = f"humeval_bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.name}"')
        return make_url(self.admin_url).set(database=self.name).render_as_string(hide_password=False)

    def drop(self) -> None:
        if not self.name:
            return
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        self.name = ""

    def backends(self) -> list[int]:
        """Process ids of the client backends connected to the benchmark's database."""
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s AND backend_type = 'client backend'",
                                (self.name,)).fetchall()
        return [int(r[0]) for r in rows]


# -- one cell ------------------------------------------------------------------------------------
@dataclass
class Cell:
    annotators: int
    seconds: float = 0.0
    judgements: int = 0
    items_per_s: float | None = None
    page_p50_ms: float | None = None
    page_p99_ms: float | None = None
    submit_p50_ms: float | None = None
    submit_p99_ms: float | None = None
    humeval_cpu_ms_per_item: float | None = None
    postgres_cpu_ms_per_item: float | None = None
    postgres_backends: int | None = None
    client_cpu_ms_per_item: float | None = None
    #: the whole machine's busy CPU during the cell, in CPUs (of os.cpu_count()), and the share of it stolen
    machine_busy_cpus: float | None = None
    machine_stolen_cpus: float | None = None
    peak_rss_mb: float = 0.0
    load_before: float | None = None
    load_after: float | None = None
    #: new participants told "nothing left" (204 on their first page)
    turned_away: int = 0
    #: lists of the study not yet claimed when the cell ended
    lists_left: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    measured: bool = True
    warnings: list[str] = field(default_factory=list)


@dataclass
class Config:
    store: str
    processes: int
    #: the flow measured (``--flow``), named in the label when several are
    flow: str = "next"
    named_flow: bool = False
    status: str = "ran"  # ran | refused | skipped | failed
    message: str = ""
    start_s: float | None = None
    cells: list[Cell] = field(default_factory=list)

    @property
    def label(self) -> str:
        label = f"{'SQLite' if self.store == 'sqlite' else 'PostgreSQL'}, {self.processes} process{'es' if self.processes > 1 else ''}"
        return f"{label}, {self.flow} flow" if self.named_flow else label


class Work:
    """The lists of the study's store: how many there are and how many participants have claimed."""

    def __init__(self, lists: int) -> None:
        self.lists = lists
        self.claimed = 0

    @property
    def left(self) -> int:
        return self.lists - self.claimed


def _told(n: int) -> str:
    return f"{n} new participant{' was' if n == 1 else 's were'} told"


def _pct(xs: list[float], q: float) -> float | None:
    return float(np.percentile(np.asarray(xs), q) * 1000) if xs else None


async def run_cell(port: int, server_pid: int, annotators: int, seconds: float, max_judgements: int, work: Work,
                   pg: Postgres | None, tag: str, flow: str = "next") -> Cell:
    cell = Cell(annotators)
    page: list[float] = []
    submit: list[float] = []
    done = 0
    entered = 0
    stop_at = time.perf_counter() + seconds
    tree = process_tree(server_pid)

    def going() -> bool:
        return time.perf_counter() < stop_at and done < max_judgements

    def error(what: str) -> None:
        cell.errors[what] = cell.errors.get(what, 0) + 1

    async def participant(i: int) -> None:
        """The participant pages as a browser meets them: enter (``POST /start``), then ``GET /task`` and the
        form posted back (``POST /task``, a 303 to ``/task``), task after task, until the list is done."""
        nonlocal done, entered
        conn = Conn(port)
        try:
            while going():
                entered += 1
                status, _ = await conn.request("POST", "/start", form={"participant_id": f"{tag}-{annotators}-{i}-{entered}"})
                if status != 303 or "set-cookie" not in conn.headers:
                    error(f"start {status}")
                    await asyncio.sleep(0.05)
                    continue
                cookie, location, n = conn.headers["set-cookie"].split(";")[0], conn.headers["location"], 0
                if location != "/task":  # consent or instructions: read once, then the tasks
                    await conn.request("GET", location, cookie=cookie)
                while going():
                    t0 = time.perf_counter()
                    status, body = await conn.request("GET", "/task", cookie=cookie)
                    page.append(time.perf_counter() - t0)
                    if status == 303:  # done, or nothing left
                        if n == 0:
                            cell.turned_away += 1
                            await asyncio.sleep(0.05)
                        break
                    form = task_form(body.decode()) if status == 200 else None
                    if form is None:
                        error(f"task page {status}")
                        break
                    if n == 0:
                        work.claimed += 1
                    n += 1
                    t0 = time.perf_counter()
                    status, _ = await conn.request("POST", "/task", form=form, cookie=cookie)
                    submit.append(time.perf_counter() - t0)
                    if status != 303:
                        error(f"submit {status}")
                        continue
                    done += 1
        except (ConnectionError, asyncio.IncompleteReadError, OSError) as exc:
            error(type(exc).__name__)
        finally:
            conn.close()

    async def annotator(i: int) -> None:
        nonlocal done, entered
        conn = Conn(port)
        try:
            while going():
                entered += 1
                pid = f"{tag}-{annotators}-{i}-{entered}"
                status, body = await conn.request("POST", "/api/v1/enter", {"participant_id": pid})
                if status != 200:
                    error(f"enter {status}")
                    await asyncio.sleep(0.05)
                    continue
                token = json.loads(body)["token"]
                n = 0
                a: dict[str, Any] | None = None
                while going():
                    if a is None:  # the first task, and every task of the page flow
                        t0 = time.perf_counter()
                        status, body = await conn.request("GET", "/api/v1/next", token=token)
                        page.append(time.perf_counter() - t0)
                        if status == 204:
                            if n == 0:  # a new participant given nothing
                                cell.turned_away += 1
                                await asyncio.sleep(0.05)
                            break
                        if status != 200:
                            error(f"next {status}")
                            break
                        a = json.loads(body)
                    if n == 0:
                        work.claimed += 1
                    n += 1
                    values = {c["name"]: "A" for c in a["criteria"]}
                    answer = {"assignment_id": a["assignment_id"], "idempotency_key": f"{pid}-{n}", "values": values}
                    if flow == "next":
                        answer["next"] = True
                    t0 = time.perf_counter()
                    status, body = await conn.request("POST", "/api/v1/judgements", answer, token)
                    submit.append(time.perf_counter() - t0)
                    if status not in (200, 201):
                        error(f"submit {status}")
                        a = None  # ask for the task again
                        continue
                    done += 1
                    a = None
                    if flow == "next":
                        a = json.loads(body)["next"]
                        if a is None:  # the list is done
                            break
        except (ConnectionError, asyncio.IncompleteReadError, OSError) as exc:
            error(type(exc).__name__)
        finally:
            conn.close()

    peak = 0.0

    async def sampler() -> None:
        nonlocal peak, tree
        rounds = 0
        while going():
            if rounds % 4 == 0:
                tree = process_tree(server_pid)
            peak = max(peak, rss_mb(tree))
            rounds += 1
            await asyncio.sleep(0.25)

    cell.load_before = loadavg()
    backends0 = pg.backends() if pg else []
    pg0 = cpu_ticks(backends0, children=False)
    pg_ticks = 0
    hv0 = sum(cpu_ticks(tree, children=True).values())
    client0 = os.times()
    machine0 = machine_ticks()
    start = time.perf_counter()
    await asyncio.gather(sampler(), *((participant if flow == "html" else annotator)(i) for i in range(annotators)))
    elapsed = time.perf_counter() - start
    machine1 = machine_ticks()
    client1 = os.times()
    hv1 = sum(cpu_ticks(process_tree(server_pid), children=True).values())
    backends1 = pg.backends() if pg else []
    pg1 = cpu_ticks(sorted(set(backends0) | set(backends1)), children=False)
    cell.load_after = loadavg()

    cell.seconds, cell.judgements, cell.lists_left = elapsed, done, work.left
    cell.peak_rss_mb = round(max(peak, rss_mb(process_tree(server_pid))), 1)
    cell.page_p50_ms, cell.page_p99_ms = _pct(page, 50), _pct(page, 99)
    cell.submit_p50_ms, cell.submit_p99_ms = _pct(submit, 50), _pct(submit, 99)
    if pg is not None:
        unreadable = [p for p in backends1 if p not in pg1]
        if backends1 and len(unreadable) == len(backends1):
            cell.warnings.append(f"cannot read /proc/<pid>/stat of PostgreSQL's backends ({unreadable[:4]}): "
                                 "is PostgreSQL on another machine or in another PID namespace? Its CPU is not counted")
        else:
            cell.postgres_backends = len(pg1)
            pg_ticks = sum(pg1.values()) - sum(pg0.get(p, 0) for p in pg1)
    if done == 0:
        cell.measured = False
        cell.warnings.append("MEASURED NOTHING: no judgement was acknowledged in this cell")
    elif cell.turned_away and work.left <= annotators:
        cell.measured = False
        cell.warnings.append(f"MEASURED NOTHING: the study ran out of work ({_told(cell.turned_away)} nothing is left; "
                             f"{work.left} of {work.lists} lists unclaimed): use more --items")
    elif cell.turned_away:
        cell.warnings.append(f"{_told(cell.turned_away)} nothing is left while {work.left} of {work.lists} lists were "
                             "unclaimed: the store gave up on free lists")
    if cell.errors:
        cell.warnings.append("errors: " + ", ".join(f"{k} x{v}" for k, v in sorted(cell.errors.items())))
    if cell.measured:
        cell.items_per_s = done / elapsed
        cell.humeval_cpu_ms_per_item = 1000 * (hv1 - hv0) / CLK_TCK / done
        cell.client_cpu_ms_per_item = 1000 * ((client1.user + client1.system) - (client0.user + client0.system)) / done
        cell.machine_busy_cpus, cell.machine_stolen_cpus = ((b - a) / CLK_TCK / elapsed for a, b in zip(machine0, machine1, strict=True))
        if pg is not None and cell.postgres_backends is not None:
            cell.postgres_cpu_ms_per_item = 1000 * pg_ticks / CLK_TCK / done
    return cell


# -- one configuration ---------------------------------------------------------------------------------
def _healthy(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nhost: bench\r\n\r\n")
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def serve_command(study: Path, port: int, processes: int, db: str) -> list[str]:
    return [sys.executable, "-m", "humeval", "serve", str(study), "--host", HOST, "--port", str(port),
            "--workers", str(processes), "--db", db]


def run_config(config: Config, study: Path, levels: list[int], seconds: float, max_judgements: int,
               lists: int, pg_admin: str, tmp: Path, say: Any) -> None:
    pg: Postgres | None = None
    if config.store == "postgresql":
        pg = Postgres(pg_admin)
        if (why := pg.reachable()) is not None:
            config.status, config.message = "skipped", f"PostgreSQL unreachable: {why}"
            return
        db = pg.create()
    else:
        db = str(tmp / f"store-{config.processes}-{config.flow}-{uuid.uuid4().hex[:6]}.db")
    port = free_port()
    log = tmp / f"serve-{config.store}-{config.processes}-{config.flow}.log"
    t0 = time.perf_counter()
    with log.open("wb") as out:
        proc = subprocess.Popen(serve_command(study, port, config.processes, db), stdout=out, stderr=subprocess.STDOUT,
                                env=dict(os.environ, HUMEVAL_ADMIN_TOKEN=ADMIN), start_new_session=True)
    try:
        while not _healthy(port):
            if proc.poll() is not None:
                text = log.read_text(errors="replace").strip()
                lines = [ln for ln in text.splitlines() if ln.strip()]
                message = " ".join(ln.strip() for ln in lines[-6:]) or f"exit {proc.returncode}"
                message = message.removeprefix("error: ")
                refused = proc.returncode == 1 and "workers" in message
                config.status, config.message = ("refused" if refused else "failed"), message
                return
            if time.perf_counter() - t0 > 300:
                config.status, config.message = "failed", "the server did not answer /healthz within 300 s"
                return
            time.sleep(0.05)
        answered = wait_until_serving(HOST, port, config.processes, timeout=120)  # every process, not the first
        config.start_s = time.perf_counter() - t0
        if len(answered) < config.processes:
            config.status, config.message = "failed", f"{len(answered)} of {config.processes} processes answered within 120 s"
            return
        say(f"{config.label}: serving after {config.start_s:.1f} s (seeding included)")
        work = Work(lists)
        tag = f"{config.store[0]}{config.processes}{config.flow[0]}"
        for n in levels:
            cell = asyncio.run(run_cell(port, proc.pid, n, seconds, max_judgements, work, pg, tag, config.flow))
            config.cells.append(cell)
            say(f"  {n:>4} annotators: " + (f"{cell.items_per_s:.0f} items/s" if cell.measured else "measured nothing")
                + "".join(f"\n  WARNING: {w}" for w in cell.warnings))
    finally:
        stop(proc)
        if pg is not None:
            pg.drop()


# -- the study -------------------------------------------------------------------------------------------
def build_study(root: Path, items: int) -> int:
    """Write, design and lock the benchmark's study; the number of participant lists."""
    from humeval.files import write_jsonl
    from humeval.pipeline import run

    try:
        from humeval.lock import lock_study
    except ImportError:  # a release before the module moved (bench_against.py runs this script with it)
        from humeval.protocol.lock import lock_study  # type: ignore[no-redef]
    from humeval.study import StudyFolder
    from humeval.templates import generate_outputs

    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(items, seed=7))
    (root / "humeval.yaml").write_text(PROTOCOL, encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)  # collection refuses an unlocked study
    with (root / "lists" / "lists.jsonl").open("rb") as f:
        return sum(1 for line in f if line.strip())


# -- output -------------------------------------------------------------------------------------------------
COLUMNS = ["configuration", "annotators", "items/s", "page p50 / p99", "submit p50 / p99", "humeval CPU/item",
           "PostgreSQL CPU/item", "machine busy", "peak RSS", "load (1-min)"]


def _ms(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return (head + "." if dot else head).replace("|", "/")


def _busy(cell: Cell) -> str:
    """The machine's busy CPUs of ``cell``, of its CPUs (and those stolen by the hypervisor, when any)."""
    if cell.machine_busy_cpus is None:
        return "n/a"
    stolen = f", {cell.machine_stolen_cpus:.2f} stolen" if (cell.machine_stolen_cpus or 0) >= 0.05 else ""
    return f"{cell.machine_busy_cpus:.2f} of {os.cpu_count()}{stolen}"


def table(configs: list[Config]) -> list[str]:
    """The results as a Markdown table, then a numbered note for each cell with a warning."""
    rows = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    notes: list[str] = []
    for c in configs:
        if c.status != "ran":
            rows.append(f"| {c.label} | {c.status}: {_first_sentence(c.message)} |" + " |" * (len(COLUMNS) - 2))
            continue
        for cell in c.cells:
            mark = ""
            if cell.warnings:
                notes.append(f"- ({len(notes) + 1}) {c.label}, {cell.annotators} annotators: " + "; ".join(cell.warnings))
                mark = f" ({len(notes)})"
            load = (f"{cell.load_before:.1f} -> {cell.load_after:.1f}"
                    if cell.load_before is not None and cell.load_after is not None else "n/a")
            if not cell.measured:
                rows.append(f"| {c.label} | {cell.annotators} | **measured nothing**{mark} |"
                            + " |" * (len(COLUMNS) - 4) + f" {load} |")
                continue
            pg_cpu = "-" if c.store == "sqlite" else (
                "n/a" if cell.postgres_cpu_ms_per_item is None else f"{cell.postgres_cpu_ms_per_item:.2f} ms")
            rows.append(
                f"| {c.label} | {cell.annotators} | {cell.items_per_s:.0f}{mark} | "
                f"{_ms(cell.page_p50_ms)} / {_ms(cell.page_p99_ms)} ms | {_ms(cell.submit_p50_ms)} / {_ms(cell.submit_p99_ms)} ms | "
                f"{cell.humeval_cpu_ms_per_item:.2f} ms | {pg_cpu} | {_busy(cell)} | {cell.peak_rss_mb:.0f} MB | {load} |")
    return rows + ([""] + notes if notes else [])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default=None, help=f"store:processes, comma-separated (default {DEFAULT_CONFIGS})")
    ap.add_argument("--levels", default=None, help="annotators per cell, comma-separated (default 1,10,50,200)")
    ap.add_argument("--seconds", type=float, default=None, help="seconds per cell (default 10)")
    ap.add_argument("--items", type=int, default=None, help="items of the study (3 judgements each; default 30000)")
    ap.add_argument("--max-judgements", type=int, default=100_000, help="stop a cell after this many judgements")
    ap.add_argument("--pg", default=PG_DEFAULT, help=f"PostgreSQL server (a database to connect to for CREATE "
                    f"DATABASE; default {PG_DEFAULT})")
    ap.add_argument("--flow", default="next", help="comma-separated, of: next (default): each submit asks for the next "
                    "task too (POST /api/v1/judgements with next: true); page: GET /api/v1/next, then the submit; "
                    "html: the participant pages (GET /task, the form posted to POST /task, its 303)")
    ap.add_argument("--quick", action="store_true", help=f"a short run: {QUICK}")
    ap.add_argument("--json", action="store_true", help="print the results as JSON (progress goes to stderr)")
    args = ap.parse_args(argv)
    defaults = {"configs": DEFAULT_CONFIGS, "levels": "1,10,50,200", "seconds": 10.0, "items": 30_000}
    for key, value in (QUICK if args.quick else defaults).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    flows = [f.strip() for f in args.flow.split(",")]
    if bad := [f for f in flows if f not in FLOWS]:
        ap.error(f"--flow: expected some of {', '.join(FLOWS)}, got {', '.join(map(repr, bad))}")
    configs = []
    for flow in flows:
        for spec in args.configs.split(","):
            store, _, n = spec.strip().partition(":")
            if store not in ("sqlite", "postgresql") or not n.isdigit() or int(n) < 1:
                ap.error(f"--configs: expected sqlite:N or postgresql:N (N >= 1), got {spec!r}")
            configs.append(Config(store, int(n), flow, named_flow=len(flows) > 1))
    levels = [int(x) for x in args.levels.split(",")]
    command = " ".join(["python benchmarks/bench_server.py", shlex.join(argv if argv is not None else sys.argv[1:])]).strip()

    def say(text: str) -> None:
        print(text, file=sys.stderr if args.json else sys.stdout, flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="humeval-bench-"))
    try:
        t0 = time.perf_counter()
        lists = build_study(tmp / "study", args.items)
        say(f"study: {args.items} items x {PER_ITEM} judgements in {lists} lists of {PER_LIST}, built in "
            f"{time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPUs, load average {loadavg()}")
        for config in configs:
            run_config(config, tmp / "study", levels, args.seconds, args.max_judgements, lists, args.pg, tmp, say)
            if config.status != "ran":
                say(f"{config.label}: {config.status}: {config.message}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the study and the SQLite stores
    nothing = [(c.label, cell.annotators) for c in configs for cell in c.cells if not cell.measured]
    if args.json:
        print(json.dumps({"command": command, "cpus": os.cpu_count(), "items": args.items, "lists": lists,
                          "seconds": args.seconds, "levels": levels, "columns": COLUMNS,
                          "configs": [{**asdict(c), "label": c.label} for c in configs]}, indent=2))
    say("")  # the table (on stderr with --json)
    say(f"`{command}`; {os.cpu_count()} CPUs; {args.items} items, {args.seconds:g} s per cell")
    say("")
    for row in table(configs):
        say(row)
    for label, n in nothing:
        print(f"WARNING: {label}, {n} annotators: MEASURED NOTHING (see above)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
