"""Cost of a participant's operations against the size of the study: a claim, a lease and a submit.

Builds the ``rating`` template with N items x 3 systems for each size (1,000 items: 1,500 lists of 12;
100,000 items: 150,000 lists), seeds a store on each database, and times, for ``--reps`` new consented
participants one after the other:

- ``claim``: their first ``next_assignment`` (a free list claimed, its first task leased);
- ``submit``: the answer to that task;
- ``lease``: their second ``next_assignment`` (the next task of the list they hold).

Each is timed in CPU ms per operation: this process's (``time.process_time``) plus, on PostgreSQL, that
of the database's backends (``/proc/<pid>/stat`` of the server processes connected to the benchmark's
database, 10 ms ticks: read over all repetitions), and in wall ms (median). It prints the plans of the
claim statements (``EXPLAIN QUERY PLAN`` / ``EXPLAIN``) for every guard, on the seeded store.

    python benchmarks/bench_claim.py [--items 1000,100000] [--stores sqlite,postgresql] [--reps 200] [--keep DIR]

``--keep DIR`` builds the studies there and reuses them (the stores are seeded afresh each run).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.store import Store
from humeval.store.assign import (
    _ANY,
    _CLAIM,
    _LEFT_LIST,
    _NEW_LIST,
    _UNWATCHED,
    _WATCHED,
    next_assignment,
)
from humeval.store.participants import consent, enter
from humeval.store.sql import _for_pg, _for_sqlite
from humeval.store.submit import submit_judgement
from humeval.study import StudyFolder
from humeval.templates import init_study

PG = "postgresql://postgres@127.0.0.1:5432/test"
GUARDS = {"any": _ANY, "watched": _WATCHED, "unwatched": _UNWATCHED}


def claim_statements() -> dict[str, str]:
    """Every statement a claim runs, by name (the claim of each guard and its two halves)."""
    out = {f"claim[{name}]": _CLAIM[g] for name, g in GUARDS.items()}
    out |= {f"left[{name}]": _LEFT_LIST.format(guard=g) for name, g in GUARDS.items()}
    out |= {f"new[{name}]": _NEW_LIST.format(guard=g) for name, g in GUARDS.items()}
    return out


def plans(store: Store) -> dict[str, list[str]]:
    """The plan of each claim statement on ``store`` (nothing is changed: EXPLAIN without ANALYZE)."""
    params = {"pid": "nobody", "exp": time.time() + 60, "now": time.time(), "free": 1}
    out: dict[str, list[str]] = {}
    with store.write_engine.connect() as conn:
        raw = conn.connection.driver_connection
        cur = raw.cursor()  # type: ignore[union-attr]
        for name, sql in claim_statements().items():
            if store.op_engine is None:
                cur.execute("EXPLAIN QUERY PLAN " + _for_sqlite(sql), params)
                out[name] = [row[3] for row in cur.fetchall()]
            else:
                cur.execute("EXPLAIN " + _for_pg(sql), params)
                out[name] = [row[0] for row in cur.fetchall()]
        conn.rollback()
    return out


def build(root: Path, items: int) -> StudyFolder:
    """The rating study with ``items`` items, built once in ``root``."""
    if not (root / "lists" / "lists.jsonl").is_file():
        shutil.rmtree(root, ignore_errors=True)
        init_study(root, "rating", items=items)
        study = StudyFolder.open(root)
        list(run(study))
        lock_study(study)
    return StudyFolder.open(root)


@contextmanager
def pg_database(name: str) -> Iterator[str]:
    import psycopg

    with psycopg.connect(PG, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield PG.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def backend_ticks(database: str | None) -> int:
    """CPU ticks (user + system) of the PostgreSQL processes serving ``database`` (0 for SQLite)."""
    if database is None:
        return 0
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            if not cmd.startswith(b"postgres: ") or f" {database} ".encode() not in cmd:
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total


def timed(store: Store, database: str | None, ops: list[Callable[[Any], Any]]) -> tuple[list[Any], dict[str, float]]:
    """Run each operation on the store's writer; CPU ms per operation (this process + the database's backends)
    and the median wall ms."""
    walls, results = [], []
    ticks, cpu = backend_ticks(database), time.process_time()
    for op in ops:
        t0 = time.perf_counter()
        results.append(store.write(op))
        walls.append(time.perf_counter() - t0)
    cpu = time.process_time() - cpu
    backend = (backend_ticks(database) - ticks) / os.sysconf("SC_CLK_TCK")
    n = len(ops)
    return results, {"cpu_ms": round(1e3 * (cpu + backend) / n, 3), "client_cpu_ms": round(1e3 * cpu / n, 3),
                     "db_cpu_ms": round(1e3 * backend / n, 3), "wall_ms_median": round(1e3 * statistics.median(walls), 3)}


def measure(study: StudyFolder, url: str | None, database: str | None, reps: int, tag: str) -> dict[str, Any]:
    store = Store.open(study, url)
    try:
        t0 = time.perf_counter()
        store.prepare()
        seeded = time.perf_counter() - t0
        ctx = store.context
        out: dict[str, Any] = {"seed_s": round(seeded, 1), "plans": plans(store)}
        pids = [f"{tag}{i:05d}" for i in range(reps)]
        for pid in pids:
            store.write(functools.partial(enter, participant_id=pid, platform="local", params={}))
            store.write(functools.partial(consent, participant_id=pid))
        first, out["claim"] = timed(store, database, [functools.partial(next_assignment, ctx=ctx, participant_id=p) for p in pids])
        _, out["submit"] = timed(store, database, [
            functools.partial(submit_judgement, ctx=ctx, participant_id=p, assignment_id=a.assignment_id,
                              idempotency_key=f"{p}-1", values={c: 3 for c in a.task.criteria})
            for p, a in zip(pids, first, strict=True)])
        _, out["lease"] = timed(store, database, [functools.partial(next_assignment, ctx=ctx, participant_id=p) for p in pids])
        return out
    finally:
        store.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", default="1000,100000")
    ap.add_argument("--stores", default="sqlite,postgresql")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--keep", type=Path, default=None)
    ap.add_argument("--plans", action="store_true", help="print the plans")
    args = ap.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="humeval-claim-"))
    results: dict[str, Any] = {"load_average_1min": os.getloadavg()[0]}
    try:
        for items in map(int, args.items.split(",")):
            study = build(base / f"rating-{items}", items)
            for store in args.stores.split(","):
                study.db_file.unlink(missing_ok=True)
                for suffix in ("-wal", "-shm"):
                    Path(str(study.db_file) + suffix).unlink(missing_ok=True)
                if store == "sqlite":
                    r = measure(study, None, None, args.reps, "S")
                else:
                    name = f"hv_claim_{items}"
                    with pg_database(name) as url:
                        r = measure(study, url, name, args.reps, "P")
                results[f"{store}:{items}"] = r
                line = ", ".join(f"{op} {r[op]['cpu_ms']:.3f} ms CPU ({r[op]['wall_ms_median']:.3f} ms wall)"
                                 for op in ("claim", "lease", "submit"))
                print(f"{store} {items:>6} items (seeded in {r['seed_s']} s): {line}", flush=True)
                if args.plans:
                    for name, plan in r["plans"].items():
                        print(f"  {name}: " + " | ".join(p.strip() for p in plan), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    results["load_average_1min_end"] = os.getloadavg()[0]
    print(json.dumps({k: ({op: v for op, v in r.items() if op != "plans"} if isinstance(r, dict) else r)
                      for k, r in results.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
