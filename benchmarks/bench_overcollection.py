"""Over-collection after a live stopping decision: N concurrent annotators, in-process server, SQLite.

    PYTHONPATH=src python benchmarks/bench_overcollection.py --annotators 50 --runs 3 --min-in-flight 1,50

Each annotator enters as a new participant, works until the server has nothing for them
(204), and enters again, until the comparison is decided. Printed per run and per
``stopping.min_in_flight`` (side by side: the default 1, and e.g. 50 = one judgement in
flight per annotator): the decision's n, the watched pair judgements stored beyond n (in
flight at the decision, or accepted after it), their share of n, and how many participants
had to enter. Bounded: at most ``--max-participants`` entries per run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.integration.server.test_live_stopping import Client, make_study  # noqa: E402


async def one_run(root: Path, annotators: int, max_participants: int, min_in_flight: int) -> dict[str, float]:
    study = make_study(root, strategy="one", per_participant=5, checks=0, items=400, min_in_flight=min_in_flight)
    c = Client(study)
    entered = 0
    t0 = time.perf_counter()

    async def annotator(k: int) -> None:
        nonlocal entered
        while c.store.stopping()[0]["outcome"] == "continue" and entered < max_participants:
            entered += 1
            h = await c.enter(f"A{k}-{entered}")
            while (a := await c.next(h)) is not None:
                await asyncio.sleep(0.01)  # reading time
                await c.submit(h, a["assignment_id"], c.answer(a["assignment_id"], prefer="candidate", spam=False))

    try:
        await asyncio.gather(*(annotator(k) for k in range(annotators)))
        st = c.store.stopping()[0]
        watched = [j for j in c.store.judgements() if j["task_id"] in c.store.context.watched and j["revision"] == 0]
        extra = len(watched) - st["n"]
        return {"decision": st["outcome"], "n": st["n"], "stored": len(watched), "extra": extra,
                "percent": 100.0 * extra / max(st["n"], 1), "participants": entered,
                "seconds": round(time.perf_counter() - t0, 2)}
    finally:
        await c.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--annotators", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-participants", type=int, default=2000)
    ap.add_argument("--min-in-flight", default="1,50", help="stopping.min_in_flight values, comma-separated")
    args = ap.parse_args()
    for floor in (int(x) for x in args.min_in_flight.split(",")):
        for i in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                r = asyncio.run(one_run(Path(tmp) / f"s{i}", args.annotators, args.max_participants, floor))
            print(json.dumps({"annotators": args.annotators, "min_in_flight": floor, **r}))


if __name__ == "__main__":
    main()
