"""Load benchmark of ``humeval serve``: virtual annotators enter, get an item, submit, move on.

Runs on loopback only, bounded in time. For each level of concurrency (default 1, 10, 50
annotators) it reports items/s (judgements acknowledged per second), page (GET next) and
submit (POST judgement) latency p50/p99, the server's peak resident memory (all
processes), and the cold start (process start until the first answered request).

    python benchmarks/bench_server.py --items 3000 --seconds 10 --workers 2 [--db postgresql://...]

The client is a minimal HTTP/1.1 keep-alive client on asyncio so that the load generator,
which shares the machine, costs as little CPU as possible.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ADMIN = "bench-admin-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Conn:
    """One keep-alive HTTP/1.1 connection (enough HTTP for this API)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: dict | None = None, token: str | None = None) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        data = json.dumps(body).encode() if body is not None else b""
        head = f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1:{self.port}\r\ncontent-length: {len(data)}\r\n"
        if body is not None:
            head += "content-type: application/json\r\n"
        if token:
            head += f"authorization: Bearer {token}\r\n"
        self.writer.write(head.encode() + b"\r\n" + data)
        assert self.reader is not None
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            k, _, v = line.decode().partition(":")
            if k.lower() == "content-length":
                length = int(v)
        payload = await self.reader.readexactly(length) if length else b""
        return status, payload


def _tree(pid: int) -> list[int]:
    pids = [pid]
    try:
        kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
        pids += [int(k) for k in kids]
    except FileNotFoundError:
        pass
    return pids


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) used so far by a process and its children."""
    total = 0
    for p in _tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (clock ticks)
        except (FileNotFoundError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int) -> int:
    """Resident memory of a process and its children (kB)."""
    total = 0
    for p in _tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total


def _loadavg() -> str:
    """The 1/5/15-minute load average (throughput on a loaded machine is noisy: report it)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


async def run_level(port: int, annotators: int, seconds: float, pid: int) -> dict[str, float]:
    page: list[float] = []
    submit: list[float] = []
    done = 0
    stop_at = time.perf_counter() + seconds
    counter = 0
    peak = 0

    async def annotator(i: int) -> None:
        nonlocal done, counter
        conn = Conn(port)
        while time.perf_counter() < stop_at:
            counter += 1
            _, body = await conn.request("POST", "/api/v1/enter", {"participant_id": f"b{annotators}-{i}-{counter}"})
            token = json.loads(body)["token"]
            n = 0
            while time.perf_counter() < stop_at:
                t0 = time.perf_counter()
                status, body = await conn.request("GET", "/api/v1/next", token=token)
                page.append(time.perf_counter() - t0)
                if status == 204:
                    break
                a = json.loads(body)
                n += 1
                values = {c["name"]: ("A" if c["type"] == "2afc" else 3) for c in a["criteria"]}
                t0 = time.perf_counter()
                status, _ = await conn.request("POST", "/api/v1/judgements", {"assignment_id": a["assignment_id"], "idempotency_key": f"key-{i}-{counter}-{n}", "values": values}, token)
                submit.append(time.perf_counter() - t0)
                if status in (200, 201):
                    done += 1

    async def sampler() -> None:
        nonlocal peak
        while time.perf_counter() < stop_at:
            peak = max(peak, rss_kb(pid))
            await asyncio.sleep(0.25)

    start, cpu0 = time.perf_counter(), cpu_seconds(pid)
    await asyncio.gather(sampler(), *(annotator(i) for i in range(annotators)))
    elapsed, cpu = time.perf_counter() - start, cpu_seconds(pid) - cpu0
    return {"annotators": annotators, "items_per_s": done / elapsed, "cpu_ms_per_item": 1000 * cpu / max(done, 1), "page_p50": pct(page, 0.5), "page_p99": pct(page, 0.99),
            "submit_p50": pct(submit, 0.5), "submit_p99": pct(submit, 0.99), "peak_rss_mb": peak / 1024, "items": done}


def start_server(study: Path, port: int, workers: int, db: str | None) -> tuple[subprocess.Popen[bytes], float]:
    cmd = [sys.executable, "-m", "humeval", "serve", str(study), "--port", str(port), "--workers", str(workers)]
    if db:
        cmd += ["--db", db]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=dict(os.environ, HUMEVAL_ADMIN_TOKEN=ADMIN), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    return proc, time.perf_counter() - t0
        except OSError:
            time.sleep(0.01)
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        if time.perf_counter() - t0 > 60:
            raise SystemExit("server did not start within 60 s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=3000)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--levels", default="1,10,50")
    ap.add_argument("--workers", type=int, default=0, help="server processes (0: serve's default; SQLite takes 1)")
    ap.add_argument("--db", default=None)
    ap.add_argument("--json", action="store_true", help="print results as JSON")
    args = ap.parse_args()

    from humeval.pipeline import run
    from humeval.protocol.lock import lock_study
    from humeval.study import Study
    from humeval.templates import init_study

    tmp = Path(tempfile.mkdtemp(prefix="humeval-bench-"))
    init_study(tmp / "study", "pairwise", items=args.items)
    study = Study.open(tmp / "study")
    list(run(study))
    lock_study(study)  # collection refuses an unlocked study
    port = free_port()
    # first start seeds the store; the cold start is measured on the second start
    proc, _ = start_server(tmp / "study", port, args.workers, args.db)
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait()
    proc, cold = start_server(tmp / "study", port, args.workers, args.db)
    load0 = _loadavg()
    try:
        results = [asyncio.run(run_level(port, int(n), args.seconds, proc.pid)) for n in args.levels.split(",")]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
    load1 = _loadavg()
    if args.json:
        print(json.dumps({"cold_start_s": cold, "workers": args.workers, "load_average": [load0, load1], "levels": results}, indent=2))
        return
    print(f"humeval serve: {args.workers} worker(s), {'PostgreSQL' if args.db else 'SQLite'}, cold start {cold:.2f} s (process start to first response)")
    print(f"load average before/after: {load0} / {load1}")
    print(f"{'annotators':>10} {'items/s':>9} {'CPU/item':>9} {'page p50':>9} {'page p99':>9} {'sub p50':>8} {'sub p99':>8} {'peak RSS':>9}")
    for r in results:
        print(f"{r['annotators']:>10} {r['items_per_s']:>9.1f} {r['cpu_ms_per_item']:>7.2f}ms {r['page_p50']:>7.1f}ms {r['page_p99']:>7.1f}ms "
              f"{r['submit_p50']:>6.1f}ms {r['submit_p99']:>6.1f}ms {r['peak_rss_mb']:>7.1f}MB")


if __name__ == "__main__":
    main()
