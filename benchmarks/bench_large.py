"""A large study end to end: ``humeval run``, ``humeval serve`` until it listens, ``/admin``, the export.

Builds the ``rating`` template with N items x 3 systems (default 100,000: 600,000 tasks,
150,000 participant lists of 12), locks it, and times each step as a user meets it, every
command a real subprocess on loopback:

- ``run``: ``humeval run`` (sample + design) wall clock, and the size of what it wrote;
- ``serve``: process start until the port answers ``/healthz`` (seeding included), and
  whether "serving" was printed only once the port listened;
- ``admin``: ``GET /admin`` with the admin cookie, wall clock and bytes;
- ``export``: ``GET /admin/export.jsonl`` after some judgements, wall clock and bytes.

    python benchmarks/bench_large.py [--items 100000] [--keep DIR] [--db postgresql://user@host/empty_db]

Prints one line per step and a JSON summary. Bounded: each step has a timeout (300 s).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from _serve import free_port, stop

ADMIN = "bench-large-admin-token"
TIMEOUT = 300.0


def humeval(*args: str) -> list[str]:
    return [sys.executable, "-m", "humeval", *args]


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=TIMEOUT)
    return time.perf_counter() - t0


def size_mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 1e6


def get(url: str, cookie: str = "", token: str = "") -> tuple[int, bytes, float]:
    req = urllib.request.Request(url, headers={k: v for k, v in (("cookie", cookie), ("authorization", token)) if v})
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:  # noqa: S310 (loopback only)
            return r.status, r.read(), time.perf_counter() - t0
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), time.perf_counter() - t0


def post(url: str, body: dict, token: str = "") -> tuple[int, dict]:
    headers = {"content-type": "application/json", **({"authorization": f"Bearer {token}"} if token else {})}
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:  # noqa: S310 (loopback only)
        return r.status, json.loads(r.read() or b"{}")


def serve(study: Path, port: int, db: str = "") -> tuple[subprocess.Popen[bytes], float, list[tuple[float, str]], float, float]:
    """Start ``humeval serve``; return the process, seconds until /healthz answers, its stderr lines
    with their times, when the port first accepted a connection, and when it last refused one (the
    port listened somewhere between the two: this loop polls)."""
    env = dict(os.environ, HUMEVAL_ADMIN_TOKEN=ADMIN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(humeval("serve", str(study), "--port", str(port), *(("--db", db) if db else ())), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stderr is not None
        buf = b""
        while chunk := proc.stderr.read1(4096):  # type: ignore[attr-defined]
            buf += chunk
            *done, buf = buf.replace(b"\r", b"\n").split(b"\n")
            lines.extend((time.perf_counter() - t0, d.decode(errors="replace")) for d in done if d.strip())

    threading.Thread(target=read, daemon=True).start()
    listening, refused = float("nan"), 0.0
    while time.perf_counter() - t0 < TIMEOUT:
        if proc.poll() is not None:
            raise RuntimeError(f"serve exited with {proc.returncode}: {lines[-5:]}")
        if listening != listening:  # nan: not yet
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    listening = time.perf_counter() - t0
                else:
                    refused = time.perf_counter() - t0
        try:
            if get(f"http://127.0.0.1:{port}/healthz")[0] == 200:
                return proc, time.perf_counter() - t0, lines, listening, refused
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("serve did not answer in time")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--judgements", type=int, default=200, help="judgements submitted before the export")
    ap.add_argument("--keep", type=Path, default=None, help="build the study here and keep it")
    ap.add_argument("--db", default="", help="serve from this store (e.g. postgresql://user@host/db: an empty "
                    "database; default the study's SQLite file)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="humeval-large-"))
    study = args.keep or tmp / "study"
    out: dict[str, object] = {"items": args.items, "systems": 3, "template": "rating", "store": "postgresql" if args.db else "sqlite",
                              "load_average_1min": os.getloadavg()[0]}
    try:
        if study.exists():
            shutil.rmtree(study)
        subprocess.run(humeval("init", str(study), "--template", "rating", "--items", str(args.items)), check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(humeval("lock", str(study)), check=True, stdout=subprocess.DEVNULL)
        out["run_s"] = timed(humeval("run", str(study)))
        out["lists_mb"] = round(size_mb(study / "lists"), 1)
        print(f"run: {out['run_s']:.1f} s, lists/ {out['lists_mb']} MB", flush=True)

        port = free_port()
        proc, ready, lines, listening, refused = serve(study, port, args.db)
        try:
            deadline = time.perf_counter() + 5  # "serving" follows /healthz: give it a moment to be printed
            while not any("serving" in line for _, line in lines) and time.perf_counter() < deadline:
                time.sleep(0.05)
            for t, line in lines:
                print(f"  [{t:6.1f} s] {line}", flush=True)
            serving_at = next((t for t, line in lines if "serving" in line and "starting" not in line), float("nan"))
            out |= {"serve_ready_s": ready, "serve_listening_s": listening, "serve_last_refused_s": refused,
                    "serving_printed_s": serving_at,
                    "progress_lines": sum(1 for _, line in lines if "seeding" in line)}
            print(f"serve: listening after {listening:.1f} s, /healthz after {ready:.1f} s; 'serving' printed at "
                  f"{serving_at:.1f} s ({'after' if serving_at > refused else 'BEFORE'} the port listened: it refused a "
                  f"connection at {refused:.1f} s); "
                  f"{out['progress_lines']} progress line(s)", flush=True)
            base = f"http://127.0.0.1:{port}"
            submitted = 0
            for p in range(args.judgements):  # participants until --judgements judgements were acknowledged
                if submitted >= args.judgements:
                    break
                _, entered = post(f"{base}/api/v1/enter", {"participant_id": f"B{p}"})
                token = entered["token"]
                while submitted < args.judgements:
                    status, task, _ = get(f"{base}/api/v1/next", token=f"Bearer {token}")
                    if status != 200:
                        break
                    a = json.loads(task)
                    post(f"{base}/api/v1/judgements", {"assignment_id": a["assignment_id"],
                                                       "idempotency_key": f"bench-{submitted:06d}",
                                                       "values": {c["name"]: 3 for c in a["criteria"]}}, token)
                    submitted += 1
            out["judgements"] = submitted
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
            opener.open(f"{base}/admin?token={ADMIN}", timeout=TIMEOUT).read()  # sets the admin cookie
            for name, path in (("admin", "/admin"), ("export", "/admin/export.jsonl")):
                t0 = time.perf_counter()
                with opener.open(base + path, timeout=TIMEOUT) as r:
                    body = r.read()
                out[f"{name}_s"], out[f"{name}_kb"] = time.perf_counter() - t0, round(len(body) / 1e3, 1)
                print(f"{name}: {out[f'{name}_s']:.2f} s, {out[f'{name}_kb']} kB", flush=True)
        finally:
            stop(proc)
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    out["load_average_1min_end"] = os.getloadavg()[0]
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
