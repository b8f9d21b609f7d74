"""Over-collection after a live stopping decision: N concurrent annotators until the rule decides.

    python benchmarks/bench_overcollection.py --annotators 50 --runs 2 --min-in-flight 1,50
    python benchmarks/bench_overcollection.py --annotators 50 --runs 1 --min-in-flight 1,50 \\
        --db postgresql://postgres@127.0.0.1:5432/test --workers 4

Without ``--db`` the app runs in-process on SQLite (``httpx.ASGITransport``); with ``--db`` a
real ``humeval serve`` with ``--workers`` processes serves the study from that store (a fresh
schema-free database is made per run: ``<db>_oc_<run>``, dropped afterwards). Each annotator
enters as a new participant, works until the server has nothing for them (204), and enters
again, until the comparison is decided; every vote prefers ``candidate``. Printed per run and
per ``stopping.min_in_flight`` (side by side: the default 1, and e.g. 50 = one judgement in
flight per annotator): the decision's n, the watched pair judgements stored beyond n (in
flight at the decision, or accepted after it), their share of n, how many participants had
to enter, and the wall time. Bounded: at most ``--max-participants`` entries per run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from _serve import free_port, stop
from sqlalchemy import select

from humeval.files import write_jsonl, write_text
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.store import schema as s
from humeval.store.store import Store
from humeval.study import StudyFolder
from humeval.templates import generate_outputs

ADMIN = "bench-admin-token-0000000000"
PROTOCOL = """version: 1
study: {{name: overcollection, seed: 11}}
data: {{files: [data/outputs.jsonl]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?", tie: true}}
design: {{judgements_per_item: 1, items_per_participant: 5, counterbalancing: none}}
assignment: {{strategy: one, lease_seconds: 600}}
stopping: {{rule: anytime, delta: 0.05, systems: [baseline, candidate], min_in_flight: {floor}}}
"""


def make_study(root: Path, floor: int) -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(400, seed=5))
    write_text(root / "humeval.yaml", PROTOCOL.format(floor=floor))
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


class Server:
    """``humeval serve`` on 127.0.0.1 (a real multi-process server), or the app in-process."""

    def __init__(self, study: StudyFolder, db: str | None, workers: int) -> None:
        self.study, self.db, self.workers, self.proc = study, db, workers, None

    def __enter__(self) -> httpx.AsyncClient:
        if self.db is None:
            from humeval.server.app import create_app
            from humeval.server.config import ServerConfig

            store = Store.open(self.study)
            store.prepare()
            app = create_app(ServerConfig(study_dir=str(self.study.root), admin_token=ADMIN), store)
            return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench")
        port = free_port()
        env = dict(os.environ, HUMEVAL_ADMIN_TOKEN=ADMIN)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "humeval", "serve", str(self.study.root), "--db", self.db, "--port", str(port),
             "--workers", str(self.workers)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    return httpx.AsyncClient(base_url=url, timeout=30, limits=httpx.Limits(max_connections=200))
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError("the server did not start in 60 s")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            stop(self.proc)


async def one_run(study: StudyFolder, db: str | None, workers: int, annotators: int, max_participants: int) -> dict[str, Any]:
    store = Store.open(study, db)  # the bench's own view of the store: display orders and the decision
    entered, keys = 0, 0

    def state() -> dict[str, Any]:
        return store.stopping()[0]

    def preferred(aid: str) -> str:
        a = s.assignments.c
        row = store.read(lambda c: c.execute(select(a.display).where(a.assignment_id == aid)).one())
        return "A" if json.loads(row.display)[0] == "candidate" else "B"

    t0 = time.perf_counter()
    with Server(study, db, workers) as http:
        async def annotator(k: int) -> None:
            nonlocal entered, keys
            while state()["outcome"] == "continue" and entered < max_participants:
                entered += 1
                r = await http.post("/api/v1/enter", json={"participant_id": f"A{k}-{entered}"})
                h = {"authorization": f"Bearer {r.json()['token']}"}
                while (r := await http.get("/api/v1/next", headers=h)).status_code == 200:
                    aid = r.json()["assignment_id"]
                    await asyncio.sleep(0.01)  # reading time
                    keys += 1
                    await http.post("/api/v1/judgements", headers=h, json={
                        "assignment_id": aid, "idempotency_key": f"k{keys:09d}", "values": {"quality": preferred(aid)}})

        try:
            await asyncio.gather(*(annotator(k) for k in range(annotators)))
        finally:
            await http.aclose()
    st = state()
    watched = [j for j in store.judgements() if j["revision"] == 0]  # every task is a watched pair task
    store.close()
    extra = len(watched) - st["n"]
    return {"decision": st["outcome"], "n": st["n"], "stored": len(watched), "extra": extra,
            "percent": round(100.0 * extra / max(st["n"], 1), 1), "participants": entered,
            "seconds": round(time.perf_counter() - t0, 2)}


def _database(base: str, name: str, create: bool) -> str:
    """A fresh PostgreSQL database ``name`` next to ``base`` (created or dropped)."""
    import psycopg

    admin = base.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if create:
            conn.execute(f'CREATE DATABASE "{name}"')
    return base.rsplit("/", 1)[0] + "/" + name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--annotators", type=int, default=50)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--max-participants", type=int, default=2000)
    ap.add_argument("--min-in-flight", default="1,50", help="stopping.min_in_flight values, comma-separated")
    ap.add_argument("--db", default=None, help="postgresql://... : serve with real processes on PostgreSQL")
    ap.add_argument("--workers", type=int, default=4, help="server processes with --db")
    args = ap.parse_args()
    for floor in (int(x) for x in args.min_in_flight.split(",")):
        for i in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                study = make_study(Path(tmp) / "study", floor)
                db = _database(args.db, f"humeval_oc_{os.getpid()}_{i}", True) if args.db else None
                try:
                    r = asyncio.run(one_run(study, db, args.workers, args.annotators, args.max_participants))
                finally:
                    if args.db:
                        _database(args.db, f"humeval_oc_{os.getpid()}_{i}", False)
            where = f"postgresql, {args.workers} workers" if args.db else "sqlite, in-process"
            print(json.dumps({"store": where, "annotators": args.annotators, "min_in_flight": floor, **r}))


if __name__ == "__main__":
    main()
