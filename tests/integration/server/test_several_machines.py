"""Several machines: separate ``humeval serve`` processes on one PostgreSQL database behind a load balancer.

Each server is its own process tree on its own port (a "machine"); the test's client is the
load balancer: it sends every participant's requests round-robin over the servers (so one
participant's consecutive requests reach different machines) and names the participant's
address in ``X-Forwarded-For``, which the servers believe because the balancer is their
``--trusted-proxy``. Checked: participants complete their lists; the admin cookie one server
sets opens the admin page of another; the live stopping decision is recorded once; the
export of every server holds every acknowledged judgement; the per-address throttle is per
machine (documented: N machines admit N times the limit).

The second variant puts two servers in two network namespaces (as root, with ``ip netns``),
each joined to the host by a veth pair: the servers reach each other's database only across
the veth links (PostgreSQL, which listens on the host's loopback, through a TCP relay on the
host's end of each link).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from humeval.files import write_jsonl
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.store.migrations import MIGRATIONS
from humeval.study import StudyFolder
from humeval.templates import generate_outputs
from tests.integration.server.conftest import PG, pg_scratch
from tests.integration.server.server import ADMIN, ServerProcess, free_port

pytestmark = [pytest.mark.timeout(240), pytest.mark.postgres]

PER_LIST = 4
PROTOCOL = f"""
version: 1
study: {{name: machines, seed: 13}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?", tie: true}}
presentation: {{setup: separate}}
design: {{judgements_per_item: 1, items_per_participant: {PER_LIST}, counterbalancing: none}}
assignment: {{strategy: list, lease_seconds: 600}}
stopping: {{rule: anytime, delta: 0.05, systems: [baseline, candidate], min_in_flight: 40}}
platform: {{kind: local, completion_code: DONE-M}}
"""
CONCURRENT = 5
ITEMS = 120
#: new participants per client address per window (counted in the store, by every server together)
PER_ADDRESS = 2


def machines_study(root: Path, items: int = ITEMS) -> StudyFolder:
    """Two systems, lists of 4, a live stopping rule that decides after 17 outcomes all for one system."""
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(items, seed=13))
    (root / "humeval.yaml").write_text(PROTOCOL, encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database (dropped afterwards): the servers' shared store."""
    with pg_scratch("DATABASE", "hv_machines_") as name:
        yield PG.rsplit("/", 1)[0] + f"/{name}"


class Balancer:
    """A round-robin load balancer in front of ``servers`` that forwards each participant's address."""

    def __init__(self, servers: list[ServerProcess]) -> None:
        self.urls = [s.url for s in servers]
        self.local = threading.local()
        self.every: list[httpx.Client] = []
        self.lock = threading.Lock()

    def client(self, url: str) -> httpx.Client:
        clients = self.local.__dict__.setdefault("clients", {})
        if url not in clients:
            clients[url] = httpx.Client(base_url=url, timeout=30)
            with self.lock:
                self.every.append(clients[url])
        return clients[url]

    def request(self, machine: int, method: str, path: str, address: str, **kw: Any) -> httpx.Response:
        headers = {"x-forwarded-for": address, **kw.pop("headers", {})}
        return self.client(self.urls[machine % len(self.urls)]).request(method, path, headers=headers, **kw)

    def close(self) -> None:
        for c in self.every:
            c.close()


def collect(balancer: Balancer, machines: int) -> dict[str, Any]:
    """Participants enter and work until the study has nothing left for a new one; what each did."""
    people: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()
    ids = itertools.count()
    stop = threading.Event()

    def participant(i: int) -> None:
        pid, address = f"M{i}", f"198.51.100.{i + 1}"
        me: dict[str, Any] = {"machines": set(), "acked": [], "withdrawn": 0}
        turn = itertools.count(i)  # request j of participant i goes to machine (i + j) mod N

        def call(method: str, path: str, **kw: Any) -> httpx.Response:
            machine = next(turn) % machines
            me["machines"].add(machine)
            return balancer.request(machine, method, path, address, **kw)

        r = call("POST", "/api/v1/enter", json={"participant_id": pid})
        assert r.status_code == 200, r.text
        auth = {"authorization": f"Bearer {r.json()['token']}"}
        while True:
            r = call("GET", "/api/v1/next", headers=auth)
            if r.status_code == 204:
                break
            assert r.status_code == 200, r.text
            a = r.json()
            choice = "A" if a["outputs"][0].startswith("In the") else "B"  # always the candidate
            body = {"assignment_id": a["assignment_id"], "idempotency_key": f"key-{pid}-{len(me['acked']):04d}",
                    "values": {"quality": choice}}
            r = call("POST", "/api/v1/judgements", json=body, headers=auth)
            if r.status_code == 409 and r.json()["error"]["code"] == "lease_withdrawn":
                me["withdrawn"] += 1
                continue
            assert r.status_code == 201, r.text
            me["acked"].append(r.json()["assignment_id"])
        me["status"] = call("GET", "/api/v1/status", headers=auth).json()["progress"]
        with lock:
            people[pid] = me
        if not me["acked"]:
            stop.set()  # a new participant was given nothing: the study decided

    def worker() -> None:
        while not stop.is_set():
            i = next(ids)
            if i >= 60:
                return
            participant(i)

    errors: list[BaseException] = []

    def guarded() -> None:
        try:
            worker()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=guarded) for _ in range(CONCURRENT)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    if errors:
        raise errors[0]
    return people


def admin_cookie(balancer: Balancer, machine: int) -> str:
    r = balancer.request(machine, "GET", f"/admin?token={ADMIN}", "198.51.100.250", follow_redirects=False)
    assert r.status_code == 303, r.text
    return r.cookies["humeval_admin"]


def _cookie(value: str) -> dict[str, str]:
    return {"cookie": f"humeval_admin={value}"}


def check_machines(study: StudyFolder, db: str, servers: list[ServerProcess]) -> None:
    n = len(servers)
    balancer = Balancer(servers)
    try:
        people = collect(balancer, n)

        # participants alternated between machines and completed their lists
        acked = {aid for p in people.values() for aid in p["acked"]}
        assert sum(len(p["acked"]) for p in people.values()) == len(acked)  # nothing acknowledged twice
        for pid, p in people.items():
            if p["acked"]:
                assert p["machines"] == set(range(n)), (pid, p["machines"])
            # finished: they did work, or the decision withdrew their first task (a session begun ends with the code)
            begun = bool(p["acked"]) or p["withdrawn"] > 0
            assert p["status"]["done"] == len(p["acked"]) and p["status"]["finished"] == begun, (pid, p)
        whole = [pid for pid, p in people.items() if len(p["acked"]) == PER_LIST]
        assert len(whole) >= 5, people  # the 17 outcomes that decide come from whole lists (settled at their end)

        # the admin cookie set by one machine opens the admin pages of every machine; a forged one does not
        for origin in range(n):
            cookie = admin_cookie(balancer, origin)
            for other in range(n):
                page = balancer.request(other, "GET", "/admin", "198.51.100.250", headers=_cookie(cookie))
                assert page.status_code == 200, (origin, other, page.text[:300])
            forged = cookie[:-2] + ("AA" if not cookie.endswith("AA") else "BB")
            page = balancer.request((origin + 1) % n, "GET", "/admin", "198.51.100.250", headers=_cookie(forged))
            assert page.status_code == 401

        # the live decision: recorded once, the same on every machine, logged once
        admin = {"authorization": f"Bearer {ADMIN}"}
        states = [balancer.request(m, "GET", "/api/v1/admin/status", "198.51.100.250", headers=admin).json()["stopping"]
                  for m in range(n)]
        assert all(s == states[0] for s in states), states
        (state,) = states[0]
        assert state["outcome"] == "B" and state["n"] == 17, state
        rows = _sql(db, "SELECT n FROM outcomes WHERE comparison = 'quality' ORDER BY n")
        assert [r[0] for r in rows] == list(range(1, 18))
        assert _sql(db, "SELECT count(*) FROM events WHERE kind = 'decision'") == [(1,)]
        logged = [e for e in _logbook(study) if e.get("stage") == "stopping"]
        assert len(logged) == 1 and logged[0]["n"] == 17, logged

        # the export of every machine holds every acknowledged judgement, and nothing else
        per_participant = {pid: len(p["acked"]) for pid, p in people.items() if p["acked"]}
        for m in range(n):
            dump = balancer.request(m, "GET", "/api/v1/admin/judgements", "198.51.100.250", headers=admin).json()
            assert {j["assignment_id"] for j in dump} == acked, m
            export = balancer.request(m, "GET", "/admin/export.jsonl", "198.51.100.250",
                                      headers=_cookie(admin_cookie(balancer, m)))
            assert export.status_code == 200
            rows = [json.loads(line) for line in export.text.splitlines() if line.strip()]
            counted: dict[str, int] = {}
            for row in rows:
                counted[row["participant_id"]] = counted.get(row["participant_id"], 0) + 1
            assert counted == per_participant, m

        # a network's count is kept in the store: the machines together admit PER_ADDRESS new participants from one
        # address, whichever machine each entry reaches
        shared = "203.0.113.9"
        for k in range(PER_ADDRESS):
            r = balancer.request(k % n, "POST", "/api/v1/enter", shared, json={"participant_id": f"T-{k}"})
            assert r.status_code == 200, r.text
        for m in range(n):
            r = balancer.request(m, "POST", "/api/v1/enter", shared, json={"participant_id": f"T{m}-over"})
            assert r.status_code == 429 and r.json()["error"]["code"] == "too_many_new_participants", r.text
    finally:
        balancer.close()


def _sql(db: str, query: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(db) as conn:
        return [tuple(r) for r in conn.execute(query).fetchall()]


def _logbook(study: StudyFolder) -> list[dict[str, Any]]:
    from humeval import logbook

    return list(logbook.read(study))


def serve_args(proxy: str) -> list[str]:
    # (the participants come from addresses of one /24, 198.51.100.0/24: its wider network is not bounded here)
    return ["--trusted-proxy", proxy, "--new-per-address", str(PER_ADDRESS), "--new-per-wide-network", "-1"]


def test_three_servers_on_one_database(tmp_path: Path, pg_url: str) -> None:
    study = machines_study(tmp_path / "study", items=ITEMS)
    servers = [ServerProcess(study.root, pg_url, args=serve_args("127.0.0.1")) for _ in range(3)]
    failed: list[BaseException] = []

    def start(server: ServerProcess) -> None:
        try:
            server.start()
        except BaseException as exc:  # noqa: BLE001 - reported below
            failed.append(exc)

    starting = [threading.Thread(target=start, args=(s,)) for s in servers]  # all at once on an empty database
    try:
        for t in starting:
            t.start()
        for t in starting:
            t.join()
        assert not failed, failed
        # migrated and seeded once (an advisory lock serialises the starts)
        assert _sql(pg_url, "SELECT count(*) FROM tasks") == [(ITEMS,)]
        assert _sql(pg_url, "SELECT count(*) FROM lists") == [(ITEMS // PER_LIST,)]
        versions = _sql(pg_url, "SELECT version FROM schema_version ORDER BY version")
        assert versions == [(v,) for v in range(1, len(MIGRATIONS) + 1)]
        check_machines(study, pg_url, servers)
    finally:
        for s in servers:
            s.stop()


# -- two network namespaces ----------------------------------------------------------------------------
def _can_make_namespaces() -> str | None:
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    name = f"hvprobe{os.getpid() % 100000}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if made.returncode != 0:
        return f"`ip netns add` failed: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@contextlib.contextmanager
def namespaces(count: int) -> Iterator[list[tuple[str, str, str]]]:
    """``count`` network namespaces, each joined to the host by a veth pair: (name, host end address, inside address)."""
    tag = uuid.uuid4().hex[:6]
    made: list[tuple[str, str, str]] = []
    try:
        for k in range(count):
            name, host_if, ns_if = f"hv{tag}{k}", f"hv{tag}h{k}", f"hv{tag}n{k}"
            host_ip, ns_ip = f"10.213.{k}.1", f"10.213.{k}.2"
            _ip("netns", "add", name)
            made.append((name, host_ip, ns_ip))
            _ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
            _ip("link", "set", ns_if, "netns", name)
            _ip("addr", "add", f"{host_ip}/30", "dev", host_if)
            _ip("link", "set", host_if, "up")
            _ip("-n", name, "addr", "add", f"{ns_ip}/30", "dev", ns_if)
            _ip("-n", name, "link", "set", ns_if, "up")
            _ip("-n", name, "link", "set", "lo", "up")
        yield made
    finally:
        for name, _, _ in made:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)  # removes its veth pair too


class Relay:
    """A TCP relay on the host ends of the veth links to PostgreSQL on the host's loopback."""

    def __init__(self, addresses: list[str], target: tuple[str, int]) -> None:
        self.addresses, self.target, self.port = addresses, target, free_port()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.servers: list[asyncio.Server] = []
        self.open: set[asyncio.StreamWriter] = set()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open.add(writer)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self.open.add(up_writer)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _start(self) -> None:
        self.servers = [await asyncio.start_server(self._handle, a, self.port) for a in self.addresses]

    async def _stop(self) -> None:
        for server in self.servers:
            server.close()
        for writer in self.open:
            writer.close()
        for server in self.servers:
            await server.wait_closed()
        await asyncio.sleep(0.05)  # let the pipes see their closed ends

    def __enter__(self) -> Relay:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


def test_two_servers_in_two_network_namespaces(tmp_path: Path, pg_url: str) -> None:
    why = _can_make_namespaces()
    if why is not None:
        pytest.skip(f"no network namespaces on this machine: {why}")
    study = machines_study(tmp_path / "study")
    name = pg_url.rsplit("/", 1)[1]
    with namespaces(2) as spaces, Relay([host for _, host, _ in spaces], ("127.0.0.1", 5432)) as relay:
        servers = []
        try:
            for ns, host_ip, ns_ip in spaces:
                db = f"postgresql://postgres@{host_ip}:{relay.port}/{name}"  # the database across the veth link
                servers.append(ServerProcess(study.root, db, host=ns_ip, args=serve_args(host_ip),
                                             wrapper=["ip", "netns", "exec", ns]).start())
            check_machines(study, pg_url, servers)
        finally:
            for s in servers:
                s.stop()
