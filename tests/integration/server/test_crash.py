"""SIGKILL under load: 50 annotators, 4 server processes; every acknowledged judgement survives once (half the
annotators get their next task with their answer, ``next: true``)."""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.integration.server.server import ADMIN, ServerProcess, wait_until_free
from tests.integration.server.studies import pairwise_study

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

ANNOTATORS = 50
PER_ITEM = 3
ITEMS = 400


def test_sigkill_loses_and_duplicates_nothing(tmp_path: Path, db_url: str | None) -> None:
    study = pairwise_study(tmp_path / "study", items=ITEMS, per_item=PER_ITEM, per_participant=10, stopping=False)
    server = ServerProcess(study.root, db_url, workers=4 if db_url else 1).start()  # SQLite takes one process
    acked: dict[str, str] = {}
    errors: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    ids = itertools.count()

    def call(c: httpx.Client, method: str, url: str, **kw: object) -> httpx.Response:
        while not stop.is_set():
            try:
                return c.request(method, url, **kw)  # type: ignore[arg-type]
            except httpx.TransportError:
                time.sleep(0.05)  # the server is down: retry the same request
        raise TimeoutError

    def annotator(with_next: bool) -> None:
        """Half the annotators ask for each task (GET next), half get it with their answer (``next: true``)."""
        with httpx.Client(base_url=server.url, timeout=20) as c:
            try:
                while not stop.is_set():
                    pid = f"A{next(ids)}"
                    h = {"authorization": f"Bearer {call(c, 'POST', '/api/v1/enter', json={'participant_id': pid}).json()['token']}"}
                    n = 0
                    a = None
                    while not stop.is_set():
                        if a is None:
                            r = call(c, "GET", "/api/v1/next", headers=h)
                            if r.status_code == 204:
                                break
                            a = r.json()
                        n += 1
                        key = f"{pid}-{n:06d}"
                        body = {"assignment_id": a["assignment_id"], "idempotency_key": key, "values": {"quality": "A"},
                                "next": with_next}
                        res = call(c, "POST", "/api/v1/judgements", json=body, headers=h)
                        a = None
                        if res.status_code in (200, 201):
                            with lock:
                                acked[key] = res.json()["assignment_id"]
                            a = res.json().get("next")
                        else:
                            with lock:
                                errors.append(f"{res.status_code} {res.text[:200]}")
            except TimeoutError:
                return

    threads = [threading.Thread(target=annotator, args=(i % 2 == 1,)) for i in range(ANNOTATORS)]
    for t in threads:
        t.start()
    total = ITEMS * PER_ITEM

    def wait_for(count: int, seconds: float) -> None:
        """Until ``count`` judgements are acknowledged (however slow the machine), or ``seconds`` passed."""
        deadline = time.monotonic() + seconds
        while len(acked) < count and time.monotonic() < deadline:
            time.sleep(0.01)

    try:  # the server is ended whatever happens
        try:
            # kill at a quarter of the work, whatever the server's speed, so load runs on both sides
            wait_for(total // 4, 180)
            before = len(acked)
            server.kill()
            wait_until_free(server.port, 60)  # the killed server's port is free again
            server.start()
            wait_for(before + total // 4, 180)
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=30)
        with httpx.Client(base_url=server.url, timeout=30) as c:
            stored = c.get("/api/v1/admin/judgements", headers={"authorization": f"Bearer {ADMIN}"}).json()
    finally:
        server.stop()
    keys = Counter(j["idempotency_key"] for j in stored)
    assert before > 0 and len(acked) > before, "load did not run before and after the kill"
    assert not errors, errors[:5]
    assert not [k for k, n in keys.items() if n > 1], "a judgement was stored twice"
    missing = [k for k in acked if k not in keys]
    assert not missing, f"{len(missing)} acknowledged judgements lost"
    per_task = Counter(j["task_id"] for j in stored if j["revision"] == 0)
    assert max(per_task.values()) <= PER_ITEM, "a task got more judgements than its cap"
    pairs = Counter((j["participant_id"], j["task_id"]) for j in stored)
    assert max(pairs.values()) == 1
    print(f"\ncrash test [{db_url and 'postgres' or 'sqlite'}]: acknowledged {len(acked)} "
          f"({before} before the kill), stored {len(stored)}, lost 0, duplicated 0")
