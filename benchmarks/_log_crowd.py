"""A recorded crowd through the real server: ``bench_crowd.py --crowd amt|FILE``.

The crowd is a log (the DHE AMT batches, or a crowd file: :func:`humeval.simulate.arrivals.read_crowd`), read as
:func:`humeval.simulate.crowd.simulate_crowd` reads it: per run its participants are drawn with replacement
(as many as it holds), arriving at their recorded times from the first arrival, each task taking the participant's
recorded time (tasks beyond those recorded at their own mean pace), a participant who completed fewer tasks than a
list holds quitting after them (no request more: the store settles them a lease later). Time is compressed:
one simulated minute is ``scale`` real seconds, and the study's lease and waitlist are declared compressed.
A share ``pausers`` of the others pauses once, past the lease, at a random task, then comes back.

Each participant goes through ``humeval serve`` (a subprocess on 127.0.0.1) with the JSON API: enter, consent,
``GET /api/v1/next``, ``POST /api/v1/judgements`` with ``next: true``. One told ``wait`` before any task joins the
waitlist when the study has one (``stopping.waitlist_seconds``: ``GET /api/v1/places`` polled every 0.25 s for
all waiters at once, :class:`Waitlist`; an opening place offered first come, first served, then
``GET /api/v1/next``; released at the end of the wait) and is otherwise turned away
(unpaid). Every participant who began a session and did not quit checks at the end that they hold their
completion code (``GET /api/v1/status``).

Two comparisons of two systems on lists of 11 watched tasks (no attention check: the log's tasks are the
list's): ``easy`` (p = 0.875, 9 lists) and ``harder`` (p = 0.6, 20 lists); the better system wins a judgement
with probability p. Per run and comparison, two designs on the same drawn crowd: ``dynamic`` (the protocol's
``stopping`` with the W that :func:`humeval.simulate.crowd.plan_sessions` plans for this crowd, as
``humeval budget --crowd`` does) and ``fixed`` (no ``stopping``: every list open at once). The fixed design is
watched by the same rule afterwards: its outcomes fed in the order the store would settle them (a participant's
at the end of their session, a quitter's a lease after their last answer), deciding if the rule's boundary is
crossed within the collection.
"""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _serve import enter, free_port, stop

HOST = "127.0.0.1"
ADMIN = "bench-crowd-log-admin-token-0123456789"
AMT_BATCHES = ("Batch_4444974_batch_results.csv", "Batch_4447602_batch_results.csv",
               "Batch_4483006_batch_results.csv")
#: (name, p, lists): the two comparisons of issue 40
COMPARISONS = (("harder", 0.6, 20), ("easy", 0.875, 9))
WATCHED = 11
#: simulated seconds: the lease the protocol derives for these lists (2 x minutes per list, at least 600 s)
LEASE = 600.0
#: real seconds between two polls of the waitlist (:class:`Waitlist`; the server's ``poll_seconds`` at a waitlist of
#: 10-20 real seconds)
POLL = 0.25

PROTOCOL = """version: 1
study: {{name: bench-crowd-log, seed: {seed}}}
data: {{files: [data/outputs.jsonl]}}
systems: [A, B]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?", tie: false}}
presentation: {{setup: separate, randomise_order: true}}
design: {{judgements_per_item: {per_item}, items_per_participant: {watched}, counterbalancing: latin-square,
         attention_checks: 0}}
assignment: {{strategy: list, lease_seconds: {lease}}}
{stopping}platform: {{kind: local}}
pay: {{seconds_per_task: {pace}}}
"""


def crowd_files(spec: str, data: Path) -> list[Path]:
    """``amt``: the three DHE AMT batches in ``data`` (the dhe folder); else the one crowd file named."""
    if spec == "amt":
        files = [data / name for name in AMT_BATCHES]
        missing = [f.name for f in files if not f.is_file()]
        if missing:
            raise SystemExit(f"--crowd amt: {', '.join(missing)} not in {data} (set HUMEVAL_SHARED_DATA)")
        return files
    path = Path(spec)
    if not path.is_file():
        raise SystemExit(f"--crowd {spec}: no such file (amt, or a crowd file: docs/budget.md, 'The crowd')")
    return [path]


# -- the study -----------------------------------------------------------------------------------
def write_study(root: Path, *, lists: int, pace: float, scale: float, sessions: int | None,
                waitlist: float, seed: int) -> Path:
    """A two-system study of ``lists`` lists of 11 watched tasks, lease and waitlist compressed by ``scale``;
    ``sessions`` None: the fixed design (no ``stopping`` section)."""
    from humeval.files import write_jsonl

    per_item = 2 if lists % 2 == 0 else 1
    items = lists * WATCHED // per_item
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / "data" / "outputs.jsonl",
                [{"item_id": f"item-{i:03d}", "system": s, "output": f"{s} wrote text {i}", "input": f"input {i}"}
                 for i in range(items) for s in ("A", "B")])
    stopping = "" if sessions is None else (
        f"stopping: {{rule: anytime, delta: 0.05, systems: [A, B], sessions: {sessions}"
        + f", waitlist_seconds: {compress(waitlist, scale):g}}}\n")
    (root / "humeval.yaml").write_text(PROTOCOL.format(
        seed=seed, per_item=per_item, watched=WATCHED, lease=round(compress(LEASE, scale)), stopping=stopping,
        pace=round(pace, 2)), encoding="utf-8")
    for cmd in ("run", "lock"):
        out = subprocess.run([sys.executable, "-m", "humeval", cmd, str(root)], capture_output=True, text=True,
                             check=False)
        if out.returncode != 0:
            raise RuntimeError(f"humeval {cmd}: {(out.stderr or out.stdout).strip()[-400:]}")
    return root


def compress(simulated_seconds: float, scale: float) -> float:
    """Real seconds of ``simulated_seconds`` when one simulated minute is ``scale`` real seconds."""
    return simulated_seconds / 60 * scale


def plan(crowd: Any, *, lists: int, p: float, minutes: float, waitlist: float, runs: int, seed: int,
         pausers: float = 0.0) -> Any:
    """The W ``humeval budget --crowd --pausers`` plans for this crowd (:func:`humeval.simulate.crowd.plan_sessions`,
    the lease and waitlist in simulated seconds) and the simulations it tried."""
    from humeval.simulate.crowd import plan_sessions
    from humeval.stopping import get_rule

    return plan_sessions(get_rule("anytime", 0.05), lists=lists, watched=WATCHED, tasks_per_list=WATCHED,
                         minutes_per_list=minutes, arrivals_per_hour=None, p=p, crowd=crowd, lease_seconds=LEASE,
                         patience=waitlist, runs=runs, seed=seed, pausers=pausers)


def replay_prediction(crowd: Any, idx: np.ndarray, *, sessions: int, lists: int, p: float, minutes: float,
                      waitlist: float, pausers: float, runs: int, seed: int) -> tuple[float, float]:
    """The simulator's mean places and wall minutes for exactly the participants a server run drew (``idx``, in
    arrival order; ``resample=False``: only the outcomes, and the pausers' draw, are random): the prediction paired
    with that run, which leaves out the spread between drawn crowds."""
    from humeval.simulate.arrivals import Crowd
    from humeval.simulate.crowd import simulate_crowd
    from humeval.stopping import get_rule

    drawn = Crowd(arrived=crowd.arrived[idx], seconds_per_task=crowd.seconds_per_task[idx], session_seconds=None,
                  completed=crowd.completed[idx], source=crowd.source)
    r = simulate_crowd(get_rule("anytime", 0.05), lists=lists, watched=WATCHED, tasks_per_list=WATCHED,
                       minutes_per_list=minutes, sessions=sessions, p=p, crowd=drawn, lease_seconds=LEASE,
                       patience=waitlist, runs=runs, seed=seed, pausers=pausers, resample=False)
    sm = r.summary()
    return sm["places"].mean, sm["wall_hours"].mean * 60


def drawn_order(crowd: Any, rng: np.random.Generator) -> np.ndarray:
    """The participants :func:`draw_people` draws with this generator, in arrival order (its first draw)."""
    idx = rng.integers(0, crowd.participants, crowd.participants)
    return idx[np.argsort(crowd.arrived[idx], kind="stable")]


def mean_range(values: np.ndarray, k: int, rng: np.random.Generator, draws: int = 4000) -> tuple[float, float]:
    """The 5-95 % range of the mean of ``k`` runs drawn from the simulated ``values`` (what k server runs can
    average to if the model is right)."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if not v.size or k < 1:
        return math.nan, math.nan
    means = v[rng.integers(0, v.size, (draws, k))].mean(axis=1)
    return float(np.quantile(means, 0.05)), float(np.quantile(means, 0.95))


# -- the participants -----------------------------------------------------------------------------
@dataclass
class Person:
    """One participant as the client saw them (real ``time.time()`` seconds)."""

    pid: str
    arrived: float
    times: list[float]  # real seconds of each task they do
    quits: bool
    pause_at: int = -1  # before submitting this task (0-based), a pause past the lease
    done: int = 0
    turned: str = ""  # told wait / closed before any task and not placed (the waitlist ended, or none)
    waited: float = 0.0  # real seconds on the waitlist
    last: float | None = None  # their last answer
    began: float | None = None  # their first task received
    finished: float | None = None
    coded: bool | None = None  # began a session, did not quit: holds their completion code at the end
    error: str = ""


def draw_people(crowd: Any, rng: np.random.Generator, scale: float, pausers: float) -> list[Person]:
    """The crowd resampled with replacement for one run (as :func:`humeval.simulate.crowd._from_crowd`), in real
    seconds from the first arrival."""
    n = crowd.participants
    idx = rng.integers(0, n, n)
    idx = idx[np.argsort(crowd.arrived[idx], kind="stable")]
    done = crowd.done(WATCHED)
    table = crowd.seconds_per_task
    mean = np.nansum(table, axis=1) / np.maximum((~np.isnan(table)).sum(axis=1), 1)
    people = []
    for j, i in enumerate(idx):  # one per participant of a run (tens): not a hot path
        k = int(done[i])
        row = np.where(np.isnan(table[i, :WATCHED]), mean[i], table[i, :WATCHED])
        quits = k < WATCHED
        pause = int(rng.integers(1, WATCHED)) if not quits and rng.random() < pausers else -1
        people.append(Person(f"log-{j + 1:04d}", compress(float(crowd.arrived[i]), scale),
                             [compress(float(x), scale) for x in row[:k]], quits, pause))
    return people


async def _participant(http: Any, waitlist: Waitlist, person: Person, answerer: Any, rng: np.random.Generator,
                       lease: float, platform: Any) -> None:
    h, r = await enter(http, platform, person.pid)
    if r.status_code == 204 and r.headers.get("humeval-reason") == "wait":
        r = await _waitlist(http, waitlist, person, h)
    if r.status_code == 204:
        person.turned, person.finished = r.headers.get("humeval-reason", "") or "nothing", time.time()
        return
    r.raise_for_status()
    a: dict[str, Any] | None = r.json()
    due = person.began = time.time()  # each answer at its time from the session's start: latency is no task time
    for k, seconds in enumerate(person.times):
        if a is None:
            break
        due += seconds + (1.5 * lease if k == person.pause_at else 0.0)
        await asyncio.sleep(max(0.0, due - time.time()))
        body = {"assignment_id": a["assignment_id"], "idempotency_key": f"{person.pid}-{k}",
                "values": answerer.values(a, rng), "next": True}
        r = await http.post("/api/v1/judgements", json=body, headers=h)
        if r.status_code == 409:  # withdrawn at the decision, or settled while paused: what is next, if anything
            r2 = await http.get("/api/v1/next", headers=h)
            a = r2.json() if r2.status_code == 200 else None
            continue
        r.raise_for_status()
        person.done += 1
        person.last = time.time()
        a = r.json().get("next")
    person.finished = time.time()
    if not person.quits:
        got = (await http.get("/api/v1/status", headers=h)).json()
        person.coded = bool(got["progress"]["completed"] and got.get("completion"))


class Waitlist:
    """The waitlist's polls, made once for every waiter: ``GET /api/v1/places`` every :data:`POLL` real seconds
    while anyone waits, each opening place offered to the waiters in order of arrival (first come, first served).
    A page per waiter asks as often, and a process answers them all from one reading (``PLACES_FRESH``); at a
    compressed clock each waiter polling by themselves would send the server tens of times the requests a real
    crowd does (60 waiters, 2 a second each, against one every 15 s)."""

    def __init__(self, http: Any) -> None:
        self.http = http
        self.queue: list[asyncio.Future[None]] = []
        self.places: dict[str, Any] | None = None
        self.task: asyncio.Task[None] | None = None

    async def wait(self, until: float) -> bool:
        """Wait for a place until ``until`` (real time); True when one was offered."""
        offer: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.queue.append(offer)
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._poll())
        try:
            await asyncio.wait_for(offer, timeout=max(0.0, until - time.time()))
            return True
        except TimeoutError:
            return False
        finally:
            if offer in self.queue:
                self.queue.remove(offer)

    async def _poll(self) -> None:
        while self.queue:
            r = await self.http.get("/api/v1/places")
            r.raise_for_status()
            self.places = r.json()
            waiting = [f for f in self.queue if not f.done()]
            for offer in waiting[: self.places["open"]] if not self.places["finished"] else waiting:
                offer.set_result(None)
            await asyncio.sleep(POLL)


async def _waitlist(http: Any, waitlist: Waitlist, person: Person, headers: dict[str, str]) -> Any:
    """On the study's waitlist (``stopping.waitlist_seconds``; 0: none) until a place is offered (then
    ``GET /api/v1/next``: taken by someone else meanwhile, wait on), no place can open any more, or the wait ends;
    the last answer of ``GET /api/v1/next``."""
    start = time.time()
    r = await http.get("/api/v1/places")
    r.raise_for_status()
    places = r.json()
    until = start + float(places["waitlist_seconds"])
    while not places["finished"] and time.time() < until and await waitlist.wait(until):
        got = await http.get("/api/v1/next", headers=headers)
        if got.status_code != 204 or got.headers.get("humeval-reason") != "wait":
            person.waited = time.time() - start
            return got
        places = waitlist.places or places
    person.waited = time.time() - start if places["waitlist_seconds"] else 0.0
    return await http.get("/api/v1/next", headers=headers)


@dataclass
class Run:
    """One run of one design: what the client saw and what the store holds after it."""

    design: str
    run: int
    crowd: str
    sessions: int = 0  # W (0: fixed)
    status: str = "ok"
    message: str = ""
    arrivals: int = 0
    places: int = 0  # paid: began a session and did not quit
    quitters: int = 0
    pausers: int = 0
    turned_away: int = 0
    idle: int = 0  # given a task, answered none (a place taken after the decision, nothing watched left)
    waitlisted: int = 0
    uncoded: int = 0  # began, did not quit, and ended without their code
    overrun: float | None = None  # median over full sessions: the session's time / the log's (requests' latency)
    outcome: str = ""
    n: int | None = None
    decided_min: float | None = None  # simulated minutes from the first arrival to the decision
    end_min: float | None = None  # to the last list completed (fixed) or the last session's end (dynamic)
    complete: bool = False  # fixed: every list completed
    watch_decided: bool | None = None  # fixed: the rule watching it decides
    watch_min: float | None = None
    unused: int | None = None  # dynamic: paid watched judgements the decision did not use
    unused_within_bound: bool | None = None
    errors: int = 0
    notes: list[str] = field(default_factory=list)


async def run_people(port: int, store: Any, study: Any, answerer: Any, people: list[Person], *, lease: float,
                     seconds: float, seed: int) -> tuple[float, bool]:
    """Let ``people`` in at their times; the first arrival's real time and whether the time bound cut the run."""
    import httpx

    t0 = time.time()
    deadline = time.monotonic() + seconds
    running: dict[asyncio.Task[None], Person] = {}
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
    cut = False
    async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}", timeout=60, limits=limits) as http:
        waitlist = Waitlist(http)
        for j, person in enumerate(people):
            await asyncio.sleep(max(0.0, t0 + person.arrived - time.time()))
            if time.monotonic() > deadline:
                cut = True
                break
            if (await asyncio.to_thread(store.recruitment)).finished:
                break  # decided, or every list done: the platform closed the study
            person.arrived += t0
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(j,)))
            running[asyncio.create_task(_participant(http, waitlist, person, answerer, rng, lease,
                                                     study.protocol.platform))] = person
        if running:
            finished, pending = await asyncio.wait(running, timeout=max(1.0, deadline - time.monotonic()))
            for task in pending:
                task.cancel()
                cut = True
            for task in finished:
                if task.exception() is not None:
                    running[task].error = repr(task.exception())[:200]
    return t0, cut


def serve(study_dir: Path, db: str, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "humeval", "serve", str(study_dir), "--host", HOST, "--port", str(port),
             "--workers", "1", "--db", db, "--log-level", "warning", "--new-per-address", "0", "--max-active", "-1"],
            stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            env={k: v for k, v in os.environ.items() if k != "HUMEVAL_SERVER_CONFIG_FILE"} | {"HUMEVAL_ADMIN_TOKEN": ADMIN})
    return proc, port


def run_design(out: Run, study_dir: Path, people: list[Person], p: float, *, scale: float, seconds: float,
               seed: int, pg_admin: str | None = None) -> None:
    """Serve ``study_dir`` on a fresh SQLite store (or, with ``pg_admin``, a fresh PostgreSQL database of its own on
    that server, dropped afterwards), let ``people`` in, measure into ``out``; the server always stopped."""
    from humeval.collect import wait_until_serving
    from humeval.store import Store
    from humeval.study import StudyFolder

    study = StudyFolder.open(study_dir)
    pg = None
    db = str(study_dir / "store.db")
    if pg_admin is not None:
        from bench_server import Postgres

        pg = Postgres(pg_admin)
        if (why := pg.reachable()) is not None:
            out.status, out.message = "failed", f"PostgreSQL unreachable: {why}"
            return
        db = pg.create()
    proc, port = serve(study_dir, db, study_dir / "serve.log")
    store = None
    try:
        if not wait_until_serving(HOST, port, 1, timeout=120):
            out.status, out.message = "failed", " ".join((study_dir / "serve.log").read_text(errors="replace").split()[-30:])
            return
        store = Store.open(study, db)
        answerer = make_answerer(study, p)
        lease = float(study.protocol.assignment.lease_seconds)
        t0, cut = asyncio.run(run_people(port, store, study, answerer, people, lease=lease, seconds=seconds,
                                         seed=seed))
        stop(proc)
        measure(out, study, store, people, t0, scale, lease)
        if cut:
            out.notes.append("the run's time bound cut it")
    except Exception as exc:  # noqa: BLE001 (a run that failed says why; the others still run)
        out.status, out.message = "failed", f"{type(exc).__name__}: {exc}"[:400]
    finally:
        stop(proc)
        if store is not None:
            store.close()
        if pg is not None:
            pg.drop()


def make_answerer(study: Any, p: float) -> Any:
    """The rehearsal's answerer with B winning each 2afc judgement with probability ``p``."""
    from humeval.rehearsal.participants import Answerer, AnswerKey

    class LogAnswerer(Answerer):
        def _value(self, name: str, item_id: str, texts: list[str], rng: np.random.Generator, who: Any = None) -> Any:
            first = self.key.writers(item_id, texts[0])[0]
            b_wins = rng.random() < p
            return "A" if (first == "B") == b_wins else "B"

    lists = study.read_lists()
    rows = [(item_id, system, text.output) for (item_id, system), text in study.outputs().texts.items()]
    return LogAnswerer(study.protocol, AnswerKey.build(rows, lists), "normal", ["A", "B"], None,
                       study.protocol.study.seed)


def measure(out: Run, study: Any, store: Any, people: list[Person], t0: float, scale: float, lease: float) -> None:
    """Fill ``out`` from the store and the client's view."""
    from datetime import datetime

    came = [q for q in people if q.finished is not None or q.error or q.done]
    out.arrivals = len(came)
    began = [q for q in came if not q.turned and q.done > 0]  # a session began: at least one answer stored
    out.places = sum(1 for q in began if not q.quits)
    out.quitters = sum(1 for q in began if q.quits)
    out.idle = sum(1 for q in came if not q.turned and q.done == 0 and not q.error)
    out.pausers = sum(1 for q in began if q.pause_at >= 0)
    out.turned_away = sum(1 for q in came if q.turned)
    out.waitlisted = sum(1 for q in came if q.waited > 0)
    out.uncoded = sum(1 for q in began if q.coded is False)
    out.errors = sum(1 for q in came if q.error)
    if out.errors:
        out.notes.append(f"{out.errors} participant(s) failed: {next(q.error for q in came if q.error)}")
    sizes = {pl.list_id: len(pl.tasks) for pl in study.read_lists()}

    def minutes(at: float) -> float:
        return round((at - t0) / scale, 2)

    full = [(q.finished - q.began) / (sum(q.times) + (1.5 * lease if q.pause_at >= 0 else 0.0))
            for q in began if not q.quits and q.done == len(q.times) and q.finished and q.began and sum(q.times) > 0]
    out.overrun = round(float(np.median(full)), 3) if full else None
    ends = [q.finished for q in began if q.finished is not None and not q.quits]
    out.end_min = minutes(max(ends)) if ends else None
    states = store.stopping()
    if states:  # dynamic
        st = states[0]
        out.outcome, out.n = st["outcome"], int(st["n"])
        if st["decided_at"]:
            out.decided_min = minutes(datetime.fromisoformat(st["decided_at"]).timestamp())
        if out.outcome in ("A", "B"):
            import pandas as pd

            from humeval.judgements import JUDGEMENT_COLUMNS

            frame = pd.DataFrame(store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
            quitters = {q.pid for q in began if q.quits}
            paid = frame[(frame["kind"] == "task") & ~frame["participant_id"].isin(quitters)]
            bound = store.recruitment().comparisons[0].unused_bound
            out.unused = int(paid["stop_seq"].isna().sum())
            out.unused_within_bound = out.unused <= bound
        return
    import pandas as pd

    from humeval.judgements import JUDGEMENT_COLUMNS

    # complete: every place of every list answered (a quitter's list finished by the next participant counts)
    frame = pd.DataFrame(store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
    out.complete = int((frame["kind"] == "task").sum()) >= sum(sizes.values())
    if out.complete:  # the collection's end: its last judgement
        out.end_min = minutes(pd.to_datetime(frame["submitted_at"], utc=True).max().timestamp())
    out.watch_decided, at = watch_fixed(store, people, lease)
    out.watch_min = None if at is None else minutes(at)


def watch_fixed(store: Any, people: list[Person], lease: float) -> tuple[bool, float | None]:
    """Whether the anytime rule (delta 0.05), fed the fixed collection's outcomes in the order the store would
    settle them, decides within it; and when (real time of the settlement that crossed)."""
    import pandas as pd

    from humeval.judgements import JUDGEMENT_COLUMNS, winners
    from humeval.stopping import get_rule

    frame = pd.DataFrame(store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
    frame = frame[frame["kind"] == "task"]
    if frame.empty:
        return False, None
    by = {q.pid: q for q in people}
    last = pd.to_datetime(frame["submitted_at"], utc=True).map(lambda t: t.timestamp())
    settled = frame.assign(_t=last).groupby("participant_id")["_t"].transform("max")
    quit_ = frame["participant_id"].map(lambda pid: by[pid].quits if pid in by else False)
    frame = frame.assign(_settled=settled + np.where(quit_, lease, 0.0), _t=last)
    frame = frame.sort_values(["_settled", "participant_id", "_t"], kind="stable")
    won = winners(frame)
    keep = np.isin(won, ["A", "B"])
    x = (won[keep] == "B").astype(np.int64)
    rule = get_rule("anytime", 0.05)
    a = np.asarray(rule.boundary(len(x)), dtype=np.int64)
    s = np.cumsum(x)
    m = np.arange(1, len(x) + 1)
    hit = np.flatnonzero((s >= a) | (m - s >= a))
    if not hit.size:
        return False, None
    return True, float(frame["_settled"].to_numpy()[keep][hit[0]])


# -- the benchmark ----------------------------------------------------------------------------------
@dataclass
class Setting:
    """One crowd x comparison: the plan ``humeval budget --crowd`` makes for it and its runs."""

    crowd: str
    comparison: str
    p: float
    lists: int
    minutes_per_list: float
    sessions: int
    predicted_places: float
    predicted_wall_min: float
    predicted_decided: float
    runs: list[tuple[Run, Run]] = field(default_factory=list)  # (dynamic, fixed) on the same drawn crowd
    predicted_places_runs: np.ndarray | None = None  # the planned W's simulated runs (for the range of a k-run mean)
    predicted_wall_runs: np.ndarray | None = None  # (minutes)
    paired: dict[int, tuple[float, float]] = field(default_factory=dict)  # run -> the drawn crowd's (places, wall)


def run_log(args: Any, say: Any) -> list[Setting]:
    """Every crowd file x comparison: plan W, then ``args.runs`` runs of both designs (``args.jobs`` at once,
    within ``args.minutes`` real minutes: runs not started by then are left out and counted)."""
    import copy
    import shutil
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    from humeval.simulate.arrivals import read_crowd

    data = Path(os.environ.get("HUMEVAL_SHARED_DATA", "../shared/data")) / "dhe"
    files = crowd_files(args.crowd, data)
    crowds = {f.name: read_crowd(f) for f in files}
    settings: dict[tuple[str, str], Setting] = {}
    studies: dict[tuple[str, str, str], Path] = {}
    tmp = Path(tempfile.mkdtemp(prefix="bench-crowd-log-"))
    comparisons = [c for c in COMPARISONS if c[0] in args.comparisons.split(",")]
    try:
        for name, crowd in crowds.items():
            pace = crowd.median_task_seconds()
            minutes = WATCHED * pace / 60
            for label, p, lists in comparisons:
                w, tried = plan(crowd, lists=lists, p=p, minutes=minutes, waitlist=args.waitlist, runs=args.plan_runs,
                                seed=args.seed, pausers=args.pausers)
                chosen = next(r for r in tried if r.sessions == w)
                sm = chosen.summary()
                settings[name, label] = Setting(name, label, p, lists, minutes, w, sm["places"].mean,
                                                sm["wall_hours"].mean * 60, chosen.decided_share,
                                                predicted_places_runs=chosen.runs.places.astype(float),
                                                predicted_wall_runs=chosen.runs.wall * 60)
                for design, sessions in (("dynamic", w), ("fixed", None)):
                    studies[name, label, design] = write_study(
                        tmp / name[:13] / label / design, lists=lists, pace=pace, scale=args.scale, sessions=sessions,
                        waitlist=args.waitlist, seed=args.seed)
                say(f"{name[:13]} {label}: planned W = {w} (budget --crowd: {sm['places'].mean:.2f} places, "
                    f"{sm['wall_hours'].mean * 60:.1f} min)")
        deadline = time.monotonic() + args.minutes * 60
        names = list(crowds)

        def one(job: tuple[int, str]) -> None:
            r, label = job
            name = names[r % len(names)]
            setting = settings[name, label]
            if time.monotonic() > deadline:
                return
            rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(r,)))
            idx = drawn_order(crowds[name], np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(r,))))
            people = draw_people(crowds[name], rng, args.scale, args.pausers)
            setting.paired[r] = replay_prediction(crowds[name], idx, sessions=setting.sessions, lists=setting.lists,
                                                  p=setting.p, minutes=setting.minutes_per_list,
                                                  waitlist=args.waitlist, pausers=args.pausers,
                                                  runs=max(50, args.plan_runs // 4), seed=args.seed + r)
            pair = []
            for design in ("dynamic", "fixed"):
                where = tmp / "runs" / f"{label}-{r}-{design}"
                shutil.copytree(studies[name, label, design], where)
                out = Run(design, r, name, setting.sessions if design == "dynamic" else 0)
                run_design(out, where, copy.deepcopy(people), setting.p, scale=args.scale, seconds=args.run_seconds,
                           seed=args.seed + r, pg_admin=args.pg if getattr(args, "log_store", "sqlite") == "postgresql"
                           else None)
                shutil.rmtree(where, ignore_errors=True)
                pair.append(out)
            setting.runs.append((pair[0], pair[1]))
            d, f = pair
            say(f"run {r} {name[:13]} {label}: dynamic {d.status} {d.outcome or '-'} n={d.n} places {d.places} "
                f"t={d.decided_min or d.end_min}; fixed {f.status} watch {f.watch_decided} places {f.places} "
                f"end={f.end_min} complete={f.complete}")

        jobs = [(r, label) for label, _, _ in comparisons for r in range(args.runs)]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            list(pool.map(one, jobs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return list(settings.values())


def summary(settings: list[Setting]) -> dict[str, Any]:
    """Per comparison (over every crowd) and per crowd x comparison: decided shares, places, wall times."""
    out: dict[str, Any] = {"comparisons": {}, "settings": []}

    def agg(runs: list[tuple[Run, Run]]) -> dict[str, Any]:
        ok = [(d, f) for d, f in runs if d.status == "ok" and f.status == "ok"]
        if not ok:
            return {"runs": 0}
        dyn_dec = sum(d.outcome in ("A", "B") for d, _ in ok)
        fix_dec = sum(bool(f.watch_decided) for _, f in ok)
        both = sum(d.outcome in ("A", "B") and bool(f.watch_decided) for d, f in ok)
        ratios = [((d.decided_min if d.decided_min is not None else d.end_min) or 0.0) / f.end_min
                  for d, f in ok if f.complete and f.end_min]
        dec_min = [d.decided_min for d, _ in ok if d.decided_min is not None]
        return {"runs": len(ok), "dynamic_decided": dyn_dec, "fixed_watch_decided": fix_dec, "both_decided": both,
                "decided_share": dyn_dec / fix_dec if fix_dec else math.nan,
                "places": float(np.mean([d.places for d, _ in ok])),
                "fixed_places": float(np.mean([f.places for _, f in ok])),
                "wall_min": float(np.mean([d.decided_min if d.decided_min is not None else (d.end_min or 0.0)
                                           for d, _ in ok])),
                "decision_min": float(np.mean(dec_min)) if dec_min else math.nan,
                "fixed_min": float(np.mean([f.end_min for _, f in ok if f.complete and f.end_min])) if ratios else math.nan,
                "fixed_complete": sum(f.complete for _, f in ok),
                "wall_ratio": float(np.mean(ratios)) if ratios else math.nan,
                "turned_away": float(np.mean([d.turned_away for d, _ in ok])),
                "waitlisted": float(np.mean([d.waitlisted for d, _ in ok])),
                "quitters": float(np.mean([d.quitters for d, _ in ok])),
                "uncoded": sum(d.uncoded + f.uncoded for d, f in ok),
                "overrun": float(np.median([r.overrun for pair in ok for r in pair if r.overrun is not None] or [math.nan])),
                "pausers": sum(d.pausers + f.pausers for d, f in ok),
                "unused_over_bound": sum(d.unused_within_bound is False for d, _ in ok),
                "errors": sum(d.errors + f.errors for d, f in ok),
                "failed": sum(d.status != "ok" or f.status != "ok" for d, f in runs)}

    for label in dict.fromkeys(s.comparison for s in settings):
        mine = [s for s in settings if s.comparison == label]
        out["comparisons"][label] = {"p": mine[0].p, "lists": mine[0].lists, "sessions": [s.sessions for s in mine],
                                     **agg([pair for s in mine for pair in s.runs])}
    rng = np.random.default_rng(0)
    for s in settings:
        m = agg(s.runs)
        k = m.get("runs", 0)
        ok_runs = [d.run for d, f in s.runs if d.status == "ok" and f.status == "ok"]
        paired = [s.paired[r] for r in ok_runs if r in s.paired]
        pred: dict[str, Any] = {"places": s.predicted_places, "wall_min": s.predicted_wall_min,
                                "decided": s.predicted_decided}
        if k and s.predicted_places_runs is not None and s.predicted_wall_runs is not None:
            pred["places_range"] = mean_range(s.predicted_places_runs, k, rng)
            pred["wall_range"] = mean_range(s.predicted_wall_runs, k, rng)
        if paired:
            pred["paired_places"] = float(np.mean([x for x, _ in paired]))
            pred["paired_wall_min"] = float(np.mean([y for _, y in paired]))
        out["settings"].append({"crowd": s.crowd, "comparison": s.comparison, "sessions": s.sessions,
                                "minutes_per_list": round(s.minutes_per_list, 2), "predicted": pred, "measured": m})
    return out


def acceptance(result: dict[str, Any]) -> list[str]:
    """Issue 40's lines this benchmark checks, PASS/FAIL with their numbers."""
    lines = []
    for label, c in result["comparisons"].items():
        if not c.get("runs"):
            lines.append(f"n/a   {label}: no run measured")
            continue
        if label == "harder":
            ok = c["decided_share"] >= 0.9 and c["places"] <= c["lists"] and c["wall_ratio"] <= 1.25
            lines.append(f"{'PASS' if ok else 'FAIL'}  harder (p {c['p']}, {c['lists']} lists): dynamic decides in "
                         f"{c['dynamic_decided']}/{c['runs']} runs, the fixed design watched by the same rule in "
                         f"{c['fixed_watch_decided']}/{c['runs']} = {c['decided_share']:.0%} (>= 90 %); places "
                         f"{c['places']:.1f} <= {c['lists']}; wall {c['wall_ratio']:.2f}x the fixed collection (<= 1.25; over the "
                         f"{c['fixed_complete']} of {c['runs']} runs whose fixed collection completed)")
        else:
            ok = c["places"] <= 0.5 * c["lists"]
            lines.append(f"{'PASS' if ok else 'FAIL'}  easy (p {c['p']}, {c['lists']} lists): places {c['places']:.2f} "
                         f"<= 0.5 x {c['lists']} = {0.5 * c['lists']:.1f} (decided {c['dynamic_decided']}/{c['runs']}, "
                         f"the fixed design watched {c['fixed_watch_decided']}/{c['runs']})")
        lines.append(f"{'PASS' if c['uncoded'] == 0 else 'FAIL'}  {label}: participants who began, did not quit and "
                     f"ended without their code: {c['uncoded']} ({c['pausers']} paused past the lease)")
        lines.append(f"{'PASS' if c['unused_over_bound'] == 0 else 'FAIL'}  {label}: decisions with more unused "
                     f"judgements than the bound stated before launch: {c['unused_over_bound']}")
    for s in result["settings"]:
        m, pr = s["measured"], s["predicted"]
        if not m.get("runs"):
            continue
        dp = pr["places"] / m["places"] - 1 if m["places"] else math.nan
        dw = pr["wall_min"] / m["wall_min"] - 1 if m["wall_min"] else math.nan
        ok = abs(dp) <= 0.2 and abs(dw) <= 0.2
        ranges = ""
        if "places_range" in pr:
            (pl, ph), (wl, wh) = pr["places_range"], pr["wall_range"]
            inside = pl <= m["places"] <= ph and wl <= m["wall_min"] <= wh
            ranges = (f"; a mean of {m['runs']} simulated runs falls in places [{pl:.2f}, {ph:.2f}], wall [{wl:.1f}, "
                      f"{wh:.1f}] 9 times in 10: measured {'inside' if inside else 'OUTSIDE'}")
        if "paired_places" in pr:
            qp = pr["paired_places"] / m["places"] - 1 if m["places"] else math.nan
            qw = pr["paired_wall_min"] / m["wall_min"] - 1 if m["wall_min"] else math.nan
            ranges += (f"; the same drawn crowds simulated: places {pr['paired_places']:.2f} ({qp:+.0%}), wall "
                       f"{pr['paired_wall_min']:.1f} ({qw:+.0%})")
        lines.append(f"{'PASS' if ok else 'FAIL'}  {s['crowd'][:13]} {s['comparison']} budget --crowd vs the server "
                     f"(W={s['sessions']}, {m['runs']} runs): places {pr['places']:.2f} vs {m['places']:.2f} ({dp:+.0%}), "
                     f"wall {pr['wall_min']:.1f} vs {m['wall_min']:.1f} min ({dw:+.0%}) (within 20 %){ranges}")
    return lines
