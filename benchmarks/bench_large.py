"""A large study end to end: ``humeval run``, ``humeval serve`` until it listens, ``/admin``, the export.

Builds the ``rating`` template with N items x 3 systems (default 100,000: 600,000 tasks,
150,000 participant lists of 12), locks it, and times each step as a user meets it, every
command a real subprocess on loopback:

- ``run``: ``humeval run`` (sample + design) wall clock, and the size of what it wrote;
- ``serve``: process start until the port answers ``/healthz`` (seeding included), and
  whether "serving" was printed only once the port listened;
- ``api``: ``--judgements`` judgements through the JSON API (``POST /api/v1/enter``, ``GET /api/v1/next``, the
  answer posted), participant after participant: the server's CPU per judgement (user + system time of its
  processes, from /proc), the claim (a new participant's first ``GET /api/v1/next``, which claims a list) and
  the lease (every later one) p50/p99, the submit p50/p99;
- ``pages``: as many judgements through the participant pages, as a browser does (``POST /start``, ``GET /task``,
  the form posted to ``POST /task``, its 303 followed to ``GET /task``): CPU per judgement, the first task page
  (the claim), the later pages and the form's post, p50/p99;
- ``rss``: the server's resident memory after both flows (each process, and their sum);
- ``admin``: ``GET /admin`` with the admin cookie, wall clock and bytes;
- ``export``: ``GET /admin/export.jsonl`` after the judgements, wall clock and bytes.

    python benchmarks/bench_large.py [--items 100000] [--keep DIR | --study DIR] [--db postgresql://user@host/empty_db]

Latencies are the client's, on loopback (one request at a time: the claim and the lease include a request's
round trip through the server); compare sizes on the same machine.

Prints one line per step and a JSON summary. Bounded: each step has a timeout (300 s).
"""

from __future__ import annotations

import argparse
import http.client
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
from urllib.parse import urlencode

from _serve import cpu_ticks, free_port, process_tree, rss_mb, stop, task_form

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
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            return r.status, r.read(), time.perf_counter() - t0
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), time.perf_counter() - t0


class Client:
    """One keep-alive HTTP connection to the server, one request at a time."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def request(self, method: str, path: str, *, json_body: dict | None = None, form: dict | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, str], float]:
        """status, body, headers (lower-cased names), seconds."""
        body, head = None, dict(headers or {})
        if json_body is not None:
            body, head["content-type"] = json.dumps(json_body).encode(), "application/json"
        elif form is not None:
            body, head["content-type"] = urlencode(form).encode(), "application/x-www-form-urlencoded"
        t0 = time.perf_counter()
        self.conn.request(method, path, body=body, headers=head)
        r = self.conn.getresponse()
        data = r.read()
        return r.status, data, {k.lower(): v for k, v in r.getheaders()}, time.perf_counter() - t0

    def close(self) -> None:
        self.conn.close()


def _ms(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return round(1000 * xs[min(len(xs) - 1, int(q / 100 * len(xs)))], 2)


def api_flow(port: int, judgements: int, tag: str) -> dict[str, list[float]]:
    """``judgements`` judgements through the JSON API; the latencies of each kind of request."""
    c, times = Client(port), {"claim": [], "lease": [], "submit": []}
    submitted, p = 0, 0
    try:
        while submitted < judgements:
            p += 1
            _, body, _, _ = c.request("POST", "/api/v1/enter", json_body={"participant_id": f"{tag}{p}"})
            auth = {"authorization": f"Bearer {json.loads(body)['token']}"}
            first = True
            while submitted < judgements:
                status, body, _, dt = c.request("GET", "/api/v1/next", headers=auth)
                if status != 200:
                    break
                times["claim" if first else "lease"].append(dt)
                first = False
                a = json.loads(body)
                answer = {"assignment_id": a["assignment_id"], "idempotency_key": f"{tag}-{submitted:06d}",
                          "values": {x["name"]: 3 for x in a["criteria"]}}
                status, _, _, dt = c.request("POST", "/api/v1/judgements", json_body=answer, headers=auth)
                if status not in (200, 201):
                    raise RuntimeError(f"a judgement was refused: {status}")
                times["submit"].append(dt)
                submitted += 1
    finally:
        c.close()
    return times


def page_flow(port: int, judgements: int, tag: str) -> dict[str, list[float]]:
    """``judgements`` judgements through the participant pages, as a browser follows them."""
    c, times = Client(port), {"claim": [], "page": [], "submit": []}
    submitted, p = 0, 0
    try:
        while submitted < judgements:
            p += 1
            status, _, head, _ = c.request("POST", "/start", form={"participant_id": f"{tag}{p}"})
            if status != 303:
                raise RuntimeError(f"POST /start answered {status}")
            cookie = {"cookie": head["set-cookie"].split(";")[0]}
            if head["location"] != "/task":  # consent or instructions: read, then the tasks
                c.request("GET", head["location"], headers=cookie)
            first = True
            while submitted < judgements:
                status, body, head, dt = c.request("GET", "/task", headers=cookie)
                if status != 200:
                    break  # 303: done or nothing left
                times["claim" if first else "page"].append(dt)
                first = False
                form = task_form(body.decode())
                if form is None:
                    raise RuntimeError("GET /task showed no task form")
                status, _, head, dt = c.request("POST", "/task", form=form, headers=cookie)
                if status != 303 or head.get("location") != "/task":
                    raise RuntimeError(f"POST /task answered {status} {head.get('location')}")
                times["submit"].append(dt)
                submitted += 1
    finally:
        c.close()
    return times


def measured(proc: subprocess.Popen[bytes], flow: object, port: int, judgements: int, tag: str) -> dict[str, object]:
    """Run ``flow``; the server's CPU per judgement and the latencies' p50 and p99 (ms)."""
    tree = process_tree(proc.pid)
    cpu0 = sum(cpu_ticks(tree, children=True).values())
    times = flow(port, judgements, tag)  # type: ignore[operator]
    cpu1 = sum(cpu_ticks(process_tree(proc.pid), children=True).values())
    out: dict[str, object] = {"cpu_ms_per_judgement": round(1000 * (cpu1 - cpu0) / os.sysconf("SC_CLK_TCK") / judgements, 3)}
    for name, xs in times.items():
        out[f"{name}_p50_ms"], out[f"{name}_p99_ms"] = _ms(xs, 50), _ms(xs, 99)
    return out


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
    ap.add_argument("--judgements", type=int, default=600, help="judgements submitted through each flow (the API, "
                    "the pages) before the export")
    ap.add_argument("--keep", type=Path, default=None, help="build the study here and keep it")
    ap.add_argument("--study", type=Path, default=None, help="serve this study, already built with --keep (its "
                    "SQLite store is removed first: every run seeds a fresh one); --items is ignored")
    ap.add_argument("--db", default="", help="serve from this store (e.g. postgresql://user@host/db: an empty "
                    "database; default the study's SQLite file)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="humeval-large-"))
    study = args.study or args.keep or tmp / "study"
    out: dict[str, object] = {"items": args.items if args.study is None else None, "systems": 3, "template": "rating", "store": "postgresql" if args.db else "sqlite",
                              "load_average_1min": os.getloadavg()[0]}
    try:
        if args.study is not None:
            for old in study.glob("study.db*"):
                old.unlink()
            out["tasks"] = sum(1 for _ in (study / "lists" / "tasks.jsonl").open("rb"))
        else:
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
            for name, flow in (("api", api_flow), ("pages", page_flow)):
                out[name] = measured(proc, flow, port, args.judgements, f"B{name[0]}")
                print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in out[name].items()), flush=True)  # type: ignore[union-attr]
            out["judgements"] = 2 * args.judgements
            tree = process_tree(proc.pid)
            out["rss_mb"] = {"each": [round(rss_mb([p]), 1) for p in tree], "total": round(rss_mb(tree), 1)}
            print(f"rss: {out['rss_mb']}", flush=True)
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
