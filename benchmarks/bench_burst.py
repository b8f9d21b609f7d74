"""Pool starvation: a scripted burst of new participants from one network, and a real participant entering during it.

    python benchmarks/bench_burst.py --burst 250 --lists 120

A study with ``--lists`` participant lists of one task each is served in-process (SQLite,
``httpx.ASGITransport`` with chosen peer addresses). One real participant (another address) enters and
takes a task; then ``--burst`` scripted participants each enter and ask for a task, all at once, from one
source: one IPv4 address, one IPv6 /64, the addresses of one IPv4 /24, or as many /24 networks as
entries (a botnet). When 50 of them have been answered, a second real participant enters from a network
of their own and asks for a task. Printed per configuration (``unguarded``: no bound at all, lists held
for a whole lease before the first submit, as before the guard; ``study budget only``: the study-wide
entry budget without the networks' shares, as the release before; ``default``: the defaults of
``humeval serve``) and source: the answers to the burst (200/429/503), the lists the burst holds and for
how long, whether the first real participant kept their task, and the second real participant's
outcome (the status of their entry, whether they got a task, and how long entry and task took).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, select

from humeval.files import write_jsonl, write_text
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.server.app import create_app
from humeval.server.config import ServerConfig
from humeval.store import schema as s
from humeval.store.store import Store
from humeval.study import StudyFolder
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
    "unguarded": {"new_per_address": -1, "new_per_wide_network": -1, "max_active": -1, "first_lease_seconds": 1800,
                  "new_per_minute": -1},
    "study budget only": {"new_per_address": -1, "new_per_wide_network": -1},
    "default": {},
}
#: where the burst comes from: the peer address of its k-th entry
SOURCES = {
    "one address": lambda k: "203.0.113.9",
    "one /64": lambda k: f"2001:db8:7:9:{k:x}::1",
    "one /24": lambda k: f"203.0.113.{k % 250 + 1}",
    "a /24 each": lambda k: f"10.{k // 250}.{k % 250}.1",
}
#: the second real participant enters when this many entries of the burst were answered
MIDWAY = 50


def make_study(root: Path, lists: int) -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(lists, seed=5))
    write_text(root / "humeval.yaml", PROTOCOL.format())
    study = StudyFolder.open(root)
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


async def measure(study: StudyFolder, burst: int, settings: dict[str, Any], peer_of: Callable[[int], str]) -> dict[str, Any]:
    store = Store.open(study)
    store.prepare()
    app = create_app(ServerConfig(study_dir=str(study.root), admin_token="bench-admin-token-000000", **settings), store)
    answered = 0
    midway = asyncio.Event()

    async def bot(i: int) -> tuple[int, str | None]:
        nonlocal answered
        async with client(app, peer_of(i)) as c:
            got = await participant(c, f"bot{i:04d}")
        answered += 1
        if answered == MIDWAY:
            midway.set()
        return got

    async def during() -> dict[str, Any]:
        await asyncio.wait_for(midway.wait(), timeout=600)
        async with client(app, "192.0.2.77") as c:
            started = time.perf_counter()
            status, task = await participant(c, "real-2")
            return {"entry_status": status, "got_a_task": task is not None,
                    "ms": round(1000 * (time.perf_counter() - started), 1)}

    try:
        async with client(app, "198.51.100.1") as real:
            _, mine = await participant(real, "real-1")
            started = time.perf_counter()
            *answers, second = await asyncio.gather(*(bot(i) for i in range(burst)), during())
            seconds = time.perf_counter() - started
            now = time.time()
            lt = s.lists.c
            held = store.read(lambda c: c.execute(select(lt.expires_at).where(
                lt.participant_id.like("bot%"), lt.expires_at > now)).scalars().all())
            free = store.read(lambda c: c.execute(select(func.count()).select_from(s.lists).where(
                lt.participant_id.is_(None))).scalar_one())
            r = await real.post("/api/v1/enter", json={"participant_id": "real-1"})
            kept = (await real.get("/api/v1/next", headers={"authorization": f"Bearer {r.json()['token']}"})).json()
        return {"answers": dict(Counter(str(a[0]) for a in answers)), "seconds": round(seconds, 2),
                "lists_held_by_burst": len(held), "lists_free_after": free,
                "held_for_seconds": round(max(held) - now) if held else 0,
                "real_participant_kept_task": kept["assignment_id"] == mine,
                "real_participant_during_burst": second}
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burst", type=int, default=250)
    parser.add_argument("--lists", type=int, default=120)
    args = parser.parse_args()
    out: dict[str, Any] = {"burst": args.burst, "lists": args.lists}
    for name, settings in CONFIGS.items():
        out[name] = {}
        for source, peer_of in SOURCES.items():
            with tempfile.TemporaryDirectory() as tmp:
                study = make_study(Path(tmp) / "study", args.lists)
                out[name][source] = asyncio.run(measure(study, args.burst, settings, peer_of))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
