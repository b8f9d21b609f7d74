"""Pool starvation: a scripted burst of new participants from one address, with and without the entry guard.

    python benchmarks/bench_burst.py --burst 250 --lists 120

A study with ``--lists`` participant lists of one task each is served in-process (SQLite,
``httpx.ASGITransport``). One real participant (another address) enters and takes a task;
then ``--burst`` scripted participants from one address each enter and ask for a task, all
at once. Printed per configuration (``unguarded``: no throttle, no cap, lists held for a
whole lease before the first submit, no entry budget, as before the guard; ``default``: the defaults of
``humeval serve``): the answers (200/429/503), the lists the burst holds and for how long,
whether the real participant kept their task, and whether a second real participant (a third
address) still gets a task after the burst.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, select

from humeval.files import write_jsonl, write_text
from humeval.pipeline import run
from humeval.lock import lock_study
from humeval.server.app import create_app
from humeval.server.config import ServerConfig
from humeval.store import schema as s
from humeval.store.store import Store
from humeval.study import Study
from humeval.templates import generate_outputs

PROTOCOL = """
version: 1
study: {{name: burst, seed: 5}}
data: {{files: [data/outputs.jsonl]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?"}}
design: {{judgements_per_item: 1, items_per_participant: 1, counterbalancing: none}}
assignment: {{strategy: list, lease_seconds: 1800}}
platform: {{kind: local}}
"""
CONFIGS = {
    "unguarded": {"new_per_address": 0, "max_active": -1, "first_lease_seconds": 1800, "new_per_minute": -1},
    "default": {},
}


def make_study(root: Path, lists: int) -> Study:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(lists, seed=5))
    write_text(root / "humeval.yaml", PROTOCOL.format())
    study = Study.open(root)
    list(run(study))
    lock_study(study)
    return study


def client(app: Any, peer: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(peer, 1000)), base_url="http://bench")


async def participant(c: httpx.AsyncClient, pid: str) -> tuple[int, str | None]:
    r = await c.post("/api/v1/enter", json={"participant_id": pid})
    if r.status_code != 200:
        return r.status_code, None
    n = await c.get("/api/v1/next", headers={"authorization": f"Bearer {r.json()['token']}"})
    return 200, n.json()["assignment_id"] if n.status_code == 200 else None


async def measure(study: Study, burst: int, settings: dict[str, Any]) -> dict[str, Any]:
    store = Store.open(study)
    store.prepare()
    app = create_app(ServerConfig(study_dir=str(study.root), admin_token="bench-admin-token-000000", **settings), store)
    try:
        async with client(app, "198.51.100.1") as real, client(app, "203.0.113.9") as bots, client(app, "192.0.2.77") as late:
            _, mine = await participant(real, "real-1")
            started = time.perf_counter()
            answers = await asyncio.gather(*(participant(bots, f"bot{i:04d}") for i in range(burst)))
            seconds = time.perf_counter() - started
            now = time.time()
            lt = s.lists.c
            held = store.read(lambda c: c.execute(select(lt.expires_at).where(
                lt.participant_id.like("bot%"), lt.expires_at > now)).scalars().all())
            free = store.read(lambda c: c.execute(select(func.count()).select_from(s.lists).where(
                lt.participant_id.is_(None))).scalar_one())
            r = await real.post("/api/v1/enter", json={"participant_id": "real-1"})
            kept = (await real.get("/api/v1/next", headers={"authorization": f"Bearer {r.json()['token']}"})).json()
            _, second = await participant(late, "real-2")
        return {"answers": dict(Counter(str(a[0]) for a in answers)), "seconds": round(seconds, 2),
                "lists_held_by_burst": len(held), "lists_free_after": free,
                "held_for_seconds": round(max(held) - now) if held else 0,
                "real_participant_kept_task": kept["assignment_id"] == mine,
                "next_real_participant_got_a_task": second is not None}
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burst", type=int, default=250)
    parser.add_argument("--lists", type=int, default=120)
    args = parser.parse_args()
    out: dict[str, Any] = {"burst": args.burst, "lists": args.lists}
    for name, settings in CONFIGS.items():
        with tempfile.TemporaryDirectory() as tmp:
            study = make_study(Path(tmp) / "study", args.lists)
            out[name] = asyncio.run(measure(study, args.burst, settings))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
