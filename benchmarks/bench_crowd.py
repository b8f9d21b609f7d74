"""The crowd benchmark: dynamic stopping with a crowd paid per session, through the real server.

Simulated participants arrive as a Poisson process (``--rate`` participants per simulated minute)
and take part through ``humeval serve`` (a subprocess on 127.0.0.1) with the JSON API: enter,
``GET /api/v1/next``, ``POST /api/v1/judgements`` with ``next: true``, one task every ``--pace``
simulated seconds. Arrivals follow Prolific's places: an arrival happens only while a place is
open (``Store.recruitment()``, read by this process: places open = target - started - arrivals
still entering); an arrival while none is open is not a participant (the platform shows no
place). A participant told ``wait`` or ``closed`` before any task (header ``Humeval-Reason`` of
the 204) is *turned away*: with arrivals that follow the open places it happens only when outcomes fed
between the place opening and the participant asking brought the rule closer to its boundary (counted; the
participant is told before starting and not paid).

Time: one simulated minute is ``--scale`` real seconds (default 0.2: a task of 30 s takes 0.1 s).
Every wall time printed is in simulated minutes, from the first arrival: real seconds / scale.
Request latency counts as task time (a few simulated seconds per task on a loaded machine).

Scenarios (``--scenarios``), each run in three designs side by side:

* ``demo``: ``humeval init --template demo --items 48`` (its pairwise comparison watched,
  RankME criteria not); ``pairwise``: the pairwise template with 30 items;
  ``best``: ``goal: best`` over 5 systems of differing quality, every pair of every item in
  the design (uniform pairs), ``list`` strategy; ``sorted``: two systems tied overall, A better
  on the first half of the data file (one study; the serving order decides whether the file
  order leaks into the decision).
* designs: ``dynamic`` (the protocol's settings), ``planned`` (``stopping.sessions`` as ``humeval budget``
  plans it for this crowd: the smallest W whose simulated wall time is within 1.25x the fixed design's, at the
  scenario's effect; :func:`humeval.simulate.crowd.plan_sessions`), ``fixed`` (the ``stopping`` section
  removed: every list), ``unbounded`` (``stopping.sessions`` = every watched list).

Stores (``--stores``): SQLite with 1 process, PostgreSQL with 2 processes (a database of its own
on ``--pg``, dropped afterwards; skipped with a line saying why when unreachable).

Answers: attention checks right; a 2afc choice from each system's strength (Bradley-Terry,
P(first wins) = 1 / (1 + exp(s_second - s_first))); other criteria as the rehearsal's ``normal``
dummies (:class:`humeval.rehearsal.participants.Answerer`).

Per scenario x store x design: places paid (participants given a list), turned away, sessions
cut (served less than their list: at the decision, and before it), admitted with nothing to do,
judgements of the watched comparison paid / used to the decision (its n) / unused / paid after
the decision time, money (places x the budget's reward per list x (1 + fee rate)), wall time to
the decision and to the end, and whether the replay of the exported judgements
(:func:`humeval.analysis.decisions.replay_decisions` after exclusion) equals the live decision. When the cell's time
bound cuts sessions in progress, their stored judgements were never fed to a rule fed per session: the replay then
counts more than live, and the table's ``replay`` reads ``fed`` when the replay of exactly what the live rule was fed
(``stop_seq``) equals it, with a note saying how many sessions and judgements were cut (:func:`compare_replay`).
Then issue 30's acceptance lines, PASS/FAIL with their numbers. A cell that measured nothing
(server refused, no participant, no decision where one is needed) says so.

A recorded crowd instead (``--crowd amt|FILE``, :mod:`_log_crowd`): the DHE AMT batches (or a crowd file) replayed
through the server, their arrivals, paces and quitters, with pausers (``--pausers``) and the waitlist
(``--waitlist``), the easy and the harder comparison, dynamic stopping with the W ``budget --crowd`` plans beside
the fixed design watched by the same rule, ``--runs`` runs, ``--jobs`` at once, within ``--minutes``.

    python benchmarks/bench_crowd.py                          # 4 scenarios x SQLite:1, PostgreSQL:2
    python benchmarks/bench_crowd.py --quick                  # pairwise on SQLite only, faster clock
    python benchmarks/bench_crowd.py --scenarios demo --stores sqlite --rate 6 --json
    python benchmarks/bench_crowd.py --crowd amt --runs 6 --jobs 3 --pausers 0 --scale 2   # 744 s
    python benchmarks/bench_crowd.py --crowd amt --runs 12 --jobs 3 --pausers 0.2 --scale 2 --minutes 30 --seed 8
                                                             # 1254 s: docs/budget.md, "With pausers, per batch"
    python benchmarks/bench_crowd.py --crowd amt --runs 3 --jobs 3 --scale 2 --minutes 8 --seed 9 --log-store postgresql

Loopback only (127.0.0.1); bounded in time (``--cell-seconds`` real seconds per cell) and in
requests (``--arrivals`` per cell, each at most one list of tasks).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _serve import enter, free_port, stop

HOST = "127.0.0.1"
ADMIN = "bench-crowd-admin-token-0123456789"
PG_DEFAULT = "postgresql://postgres@127.0.0.1:5432/test"
SCENARIOS = ("demo", "pairwise", "best", "sorted")
DESIGNS = ("dynamic", "planned", "fixed", "unbounded")
STORES = {"sqlite": 1, "postgresql": 2}
QUICK = {"scenarios": "pairwise", "stores": "sqlite", "scale": 0.15, "arrivals": 40}

#: Bradley-Terry strengths of the simulated systems per scenario
STRENGTH: dict[str, dict[str, float]] = {
    "demo": {"baseline": 0.0, "candidate": 0.5, "reference": 0.85},
    "pairwise": {"baseline": 0.0, "candidate": 0.85},
    "best": {"s1": -0.5, "s2": 0.0, "s3": 2.0, "s4": -1.0, "s5": 0.3},
    "sorted": {"A": 0.0, "B": 0.0},
}
#: sorted data: A's edge on the first half of the file (B's on the second)
SORTED_EDGE, SORTED_ITEMS, BEST_ITEMS = 1.2, 60, 40
#: what a place costs (Prolific-like): pay per hour and the platform fee as a share of the rewards
PAY_HOURLY, PAY_FEE = 9.0, 0.3333

BEST_PROTOCOL = """version: 1
study: {name: bench-best, seed: 3}
data: {files: [data/outputs.jsonl]}
systems: [s1, s2, s3, s4, s5]
criteria:
  - {name: quality, type: 2afc, question: "Which is better?", tie: false}
presentation: {setup: separate, randomise_order: true}
design: {judgements_per_item: 2, items_per_participant: 10, counterbalancing: latin-square, attention_checks: 1}
assignment: {strategy: list}
stopping: {rule: anytime, delta: 0.05, goal: best, pair_choice: uniform}
exclusion:
  - {rule: attention, max_failures: 0}
platform: {kind: local}
"""
SORTED_PROTOCOL = """version: 1
study: {name: bench-sorted, seed: 5}
data: {files: [data/outputs.jsonl]}
systems: [A, B]
criteria:
  - {name: quality, type: 2afc, question: "Which is better?", tie: false}
presentation: {setup: separate, randomise_order: true}
design: {judgements_per_item: 3, items_per_participant: 10, counterbalancing: latin-square, attention_checks: 1}
assignment: {strategy: list}
stopping: {rule: anytime, delta: 0.05, systems: [A, B]}
exclusion:
  - {rule: attention, max_failures: 0}
platform: {kind: local}
"""


# -- the studies ---------------------------------------------------------------------------------
def _humeval(*args: str, cwd: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "humeval", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"humeval {' '.join(args)}: {(out.stderr or out.stdout).strip()[-400:]}")


def _set_design(text: str, design: str, pace: float, scenario: str = "", sessions: int | None = None) -> str:
    """The protocol of a design: ``fixed`` without its stopping section, ``unbounded`` and ``planned`` with
    ``stopping.sessions`` set to ``sessions`` (every watched list; the planned W).

    The demo's ``fixed`` design keeps its stopping section with ``delta: 1e-12`` and every list admitted at once:
    without it the design would compare every pair of its three systems (a different study, 3x the pair tasks);
    with it every list is served and the rule cannot decide within the design's 144 outcomes. Every design
    declares ``pay.seconds_per_task`` (the simulated pace), ``pay.hourly`` and ``pay.fee_rate`` so that the
    budget prices a list."""
    import yaml

    data = yaml.safe_load(text)
    if design == "fixed" and scenario == "demo":
        data["stopping"] = dict(data["stopping"], delta=1e-12, **({"sessions": sessions} if sessions else {}))
    elif design == "fixed":
        data.pop("stopping", None)
    elif design in ("unbounded", "planned") and sessions:
        data["stopping"] = dict(data["stopping"], sessions=sessions)
    data["pay"] = dict(data.get("pay") or {}, seconds_per_task=pace, hourly=PAY_HOURLY, fee_rate=PAY_FEE)
    return yaml.safe_dump(data, sort_keys=False)


def _watched_pair_p(scenario: str) -> float | None:
    """P(the watched comparison's first system wins) from the scenario's strengths; None for a goal over K."""
    if scenario == "best":
        return None
    first, second = {"demo": ("baseline", "reference"), "pairwise": ("baseline", "candidate"),
                     "sorted": ("A", "B")}[scenario]
    return 1 / (1 + math.exp(STRENGTH[scenario][second] - STRENGTH[scenario][first]))


def planned_sessions(study: Any, scenario: str, pace: float, rate: float) -> int | None:
    """The W ``humeval budget`` recommends (:func:`humeval.simulate.crowd.plan_sessions`) for the scenario's
    effect, this pace and this arrival rate; None for a goal over K systems (not simulated with sessions)."""
    from humeval.protocol.comparisons import watched_comparisons
    from humeval.simulate.crowd import plan_sessions

    p = _watched_pair_p(scenario)
    if p is None:
        return None
    lists = [pl for pl in study.read_lists() if pl.watched]
    comp = watched_comparisons(study.protocol, study.protocol.systems)[0]
    minutes = max(len(pl.tasks) for pl in lists) * pace / 60
    watched = [sum(t.kind == "task" for t in pl.tasks) for pl in lists]
    w, _ = plan_sessions(comp.build_rule(), lists=len(lists), watched=watched, minutes_per_list=minutes,
                         arrivals_per_hour=rate * 60, p=max(p, 1 - p), runs=1000, seed=1)
    return w


def build_study(root: Path, scenario: str, design: str, pace: float, rate: float) -> Path:
    """Write, design and lock the study of ``scenario`` x ``design`` in ``root``; its folder."""
    from humeval.files import write_jsonl

    root.parent.mkdir(parents=True, exist_ok=True)
    if scenario in ("demo", "pairwise"):
        template, items = ("demo", 48) if scenario == "demo" else ("pairwise", 30)
        _humeval("init", str(root), "--template", template, "--items", str(items), cwd=root.parent)
    else:
        systems = list(STRENGTH[scenario])
        n = BEST_ITEMS if scenario == "best" else SORTED_ITEMS
        rows = [{"item_id": f"item-{i:03d}", "system": sy, "output": f"{sy} wrote text {i} for the item",
                 "input": f"input {i}"} for i in range(n) for sy in systems]
        write_jsonl(root / "data" / "outputs.jsonl", rows)
        (root / "humeval.yaml").write_text(BEST_PROTOCOL if scenario == "best" else SORTED_PROTOCOL, encoding="utf-8")
    path = root / "humeval.yaml"
    original = path.read_text(encoding="utf-8")
    path.write_text(_set_design(original, design, pace, scenario), encoding="utf-8")
    _humeval("run", str(root), cwd=root.parent)
    if design in ("unbounded", "planned") or (design == "fixed" and scenario == "demo"):
        from humeval.study import StudyFolder

        study = StudyFolder.open(root)
        every = sum(1 for pl in study.read_lists() if pl.watched)
        sessions = planned_sessions(study, scenario, pace, rate) if design == "planned" else every
        if sessions is not None:
            path.write_text(_set_design(original, design, pace, scenario, sessions), encoding="utf-8")
    _humeval("lock", str(root), cwd=root.parent)
    return root


def strength(scenario: str, item_id: str, system: str) -> float:
    """A system's strength on an item: ``sorted`` gives A the edge on the first half of the file, B on the second."""
    s = STRENGTH[scenario][system]
    if scenario == "sorted":
        first = int(item_id.rsplit("-", 1)[-1]) < SORTED_ITEMS // 2
        s += SORTED_EDGE / 2 * ((1 if system == "A" else -1) * (1 if first else -1))
    return s


def make_answerer(study: Any, scenario: str) -> Any:
    """The rehearsal's answerer with 2afc choices from the scenario's strengths (Bradley-Terry)."""
    from humeval.rehearsal.participants import Answerer, AnswerKey

    class CrowdAnswerer(Answerer):
        def _value(self, name: str, item_id: str, texts: list[str], rng: np.random.Generator, who: Any = None) -> Any:
            if self.criteria[name].type != "2afc":
                return super()._value(name, item_id, texts, rng, who)
            first, second = (self.key.writers(item_id, t)[0] for t in texts[:2])
            gap = strength(scenario, item_id, second) - strength(scenario, item_id, first)
            return "A" if rng.random() < 1 / (1 + math.exp(gap)) else "B"

    lists = study.read_lists()
    rows = [(item_id, system, text.output) for (item_id, system), text in study.outputs().texts.items()]
    systems = sorted({s for pl in lists for t in pl.tasks for s in t.systems})
    return CrowdAnswerer(study.protocol, AnswerKey.build(rows, lists), "normal", systems, None, study.protocol.study.seed)


# -- the crowd -----------------------------------------------------------------------------------
@dataclass
class Person:
    """One simulated participant as the client saw them (real times, ``time.time()``)."""

    pid: str
    arrived: float
    done: int = 0
    turned: str = ""  # wait | closed | nothing (a 204 before any task)
    finished: float | None = None
    error: str = ""


@dataclass
class Crowd:
    """How arrivals went in one cell."""

    people: list[Person] = field(default_factory=list)
    closed_arrivals: int = 0  # Poisson arrivals while no place was open (no participant)
    exhausted: bool = False  # the crowd (``--crowd``) ran out before recruitment finished
    timed_out: bool = False
    t0: float = 0.0
    t_end: float = 0.0


async def _participant(http: Any, person: Person, answerer: Any, rng: np.random.Generator, task_real: float,
                       platform: Any, transit: list[int]) -> None:
    try:
        h, r = await enter(http, platform, person.pid)
    finally:
        transit[0] -= 1
    if r.status_code == 204:
        person.turned, person.finished = r.headers.get("humeval-reason", "") or "nothing", time.time()
        return
    r.raise_for_status()
    a: dict[str, Any] | None = r.json()
    key = 0
    while a is not None:
        await asyncio.sleep(task_real * float(rng.uniform(0.8, 1.2)))
        key += 1
        body = {"assignment_id": a["assignment_id"], "idempotency_key": f"{person.pid}-{key}",
                "values": answerer.values(a, rng), "seconds": 30.0, "next": True}
        r = await http.post("/api/v1/judgements", json=body, headers=h)
        if r.status_code == 409:  # a lease withdrawn at the decision: not stored, ask for the next
            r2 = await http.get("/api/v1/next", headers=h)
            a = r2.json() if r2.status_code == 200 else None
            continue
        r.raise_for_status()
        person.done += 1
        a = r.json().get("next")
    person.finished = time.time()


async def run_crowd(port: int, store: Any, study: Any, answerer: Any, *, rate: float, pace: float, scale: float,
                    crowd: int, seconds: float, seed: int, follow_places: bool = True) -> Crowd:
    """Poisson arrivals at ``rate`` per simulated minute, each entering only while a place is open."""
    import httpx

    rng = np.random.default_rng(seed)
    out = Crowd(t0=time.time())
    deadline = time.monotonic() + seconds
    task_real = pace / 60 * scale
    transit = [0]
    running: list[asyncio.Task[None]] = []
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
    async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}", timeout=60, limits=limits) as http:
        arrival = time.monotonic()
        while len(out.people) < crowd:
            arrival += float(rng.exponential(1 / rate)) * scale
            await asyncio.sleep(max(0.0, arrival - time.monotonic()))
            if time.monotonic() > deadline:
                out.timed_out = True
                break
            rec = await asyncio.to_thread(store.recruitment)
            if rec.finished and transit[0] == 0:
                break
            if follow_places and rec.target - rec.started - transit[0] <= 0:
                out.closed_arrivals += 1
                continue
            person = Person(f"crowd-{len(out.people) + 1:04d}", time.time())
            out.people.append(person)
            transit[0] += 1
            prng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(len(out.people),)))
            running.append(asyncio.create_task(
                _participant(http, person, answerer, prng, task_real, study.protocol.platform, transit)))
        else:
            out.exhausted = not (await asyncio.to_thread(store.recruitment)).finished
        left = max(1.0, deadline - time.monotonic())
        finished, pending = await asyncio.wait(running, timeout=left) if running else (set(), set())
        for t in pending:
            t.cancel()
            out.timed_out = True
        for t, p in zip(running, out.people, strict=True):
            if t in finished and t.exception() is not None:
                p.error = repr(t.exception())[:200]
    out.t_end = max([p.finished for p in out.people if p.finished is not None], default=time.time())
    return out


# -- one cell --------------------------------------------------------------------------------------
@dataclass
class Cell:
    scenario: str
    store: str
    design: str
    status: str = "ok"  # ok | measured nothing | skipped | failed
    message: str = ""
    places: int = 0
    #: places of lists holding the watched comparison's tasks (sessions the rule admits)
    watched_places: int = 0
    turned_away: int = 0
    nothing_to_do: int = 0  # given a list, served no task
    cut_at_decision: int = 0
    cut_before_decision: int = 0
    outcome: str = ""
    paid: int = 0  # judgements of the watched comparison
    used: int | None = None  # the decision's n
    unused: int | None = None
    after_decision: int | None = None
    money: float = 0.0
    currency: str = ""
    minutes_to_decision: float | None = None
    minutes_to_end: float = 0.0
    replay_equals_live: bool | None = None
    #: the replay of what the live rule was fed gives the live decision (:func:`compare_replay`)
    replay_reproduces_live: bool | None = None
    replay: str = ""
    closed_arrivals: int = 0
    errors: int = 0
    notes: list[str] = field(default_factory=list)


def _epoch(iso: str | None) -> float | None:
    return None if not iso else datetime.fromisoformat(iso).timestamp()


def measure(cell: Cell, study: Any, store: Any, crowd: Crowd, scale: float) -> None:
    """Fill ``cell`` from the store after the collection (and the client's view of the crowd)."""
    import pandas as pd

    from humeval.analysis.decisions import replay_decisions
    from humeval.costs import budget
    from humeval.judgements import JUDGEMENT_COLUMNS, excluded_mask
    from humeval.judgements.exclusion import exclusions
    from humeval.protocol.comparisons import watched_comparisons

    protocol = study.protocol
    lists = study.read_lists()
    tasks = study.read_tasks()
    sizes = {pl.list_id: len(pl.tasks) for pl in lists}
    rows = store.participants()
    given = [r for r in rows if r["list_id"]]
    cell.places = len(given)
    watched_lists = {pl.list_id for pl in lists if pl.watched}
    # without a stopping section (a fixed design) no list is marked: the scenarios' lists are all the comparison's
    cell.watched_places = sum(1 for r in given if r["list_id"] in watched_lists) if watched_lists else cell.places
    cell.turned_away = sum(1 for p in crowd.people if p.turned)
    # given a list, served nothing, and sent away without a code (one whose first task the decision withdrew ends
    # with the code: their session had begun)
    cell.nothing_to_do = sum(1 for r in given if r["done"] == 0 and not r["completed"])
    cell.closed_arrivals = crowd.closed_arrivals
    cell.errors = sum(1 for p in crowd.people if p.error)
    if cell.errors:
        cell.notes.append(f"{cell.errors} participant(s) failed: {next(p.error for p in crowd.people if p.error)}")
    if crowd.exhausted:
        cell.notes.append(f"the crowd ran out ({len(crowd.people)} arrivals) before recruitment finished")
    if crowd.timed_out:
        cell.notes.append("the cell's time bound ended the collection")
    b = budget(study, predict=False)
    cell.money, cell.currency = round(cell.places * b.reward_per_list * (1 + b.fee_rate), 2), b.currency
    cell.minutes_to_end = round((crowd.t_end - crowd.t0) / scale, 1)
    frame = pd.DataFrame(store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
    systems = protocol.systems or sorted({s for t in tasks for s in t.systems})
    comps = watched_comparisons(protocol.model_copy(update={"stopping": _stopping_of(cell, study)}), list(systems)) \
        if protocol.stopping is None else watched_comparisons(protocol, list(systems))
    states = {st["comparison"]: st for st in store.stopping()}
    decided_at = None
    for comp in comps[:1]:  # every scenario watches one comparison
        mine = frame[(frame["criterion"] == comp.criterion) & (frame["kind"] == "task")]
        mine = mine[[comp.involves(a, b_) for a, b_ in zip(mine["system"], mine["system_b"], strict=True)]]
        cell.paid = len(mine)
        st = next(iter(states.values()), None)
        if st is None:
            continue
        cell.outcome = st["outcome"]
        if st["outcome"] == "continue":
            continue
        decided_at = _epoch(st["decided_at"])
        cell.used = int(st["n"])
        cell.unused = cell.paid - cell.used
        when = pd.to_datetime(mine["submitted_at"], utc=True).map(lambda t: t.timestamp())
        cell.after_decision = int((when > (decided_at or math.inf)).sum())
        cell.minutes_to_decision = round(((decided_at or crowd.t0) - crowd.t0) / scale, 1)
    for p in crowd.people:
        row = next((r for r in given if r["participant_id"] == p.pid), None)
        if row is None or p.turned or row["done"] >= sizes.get(row["list_id"], 0) or p.finished is None:
            continue
        if decided_at is not None and p.finished >= decided_at:
            cell.cut_at_decision += 1
        else:
            cell.cut_before_decision += 1
    if protocol.stopping is not None and len(frame):
        excluded = exclusions(frame, protocol, lists)
        keep = ~excluded_mask(frame, excluded)
        valid = frame[keep]
        live = [(st["outcome"], int(st["n"])) for st in sorted(states.values(), key=lambda s: s["comparison"])]
        again = [(r["outcome"], int(r["n"])) for r in replay_decisions(valid, protocol, systems, tasks)]
        watched = frame["kind"].eq("task") & pd.Series(
            [any(c.criterion == crit and c.involves(a, b_) for c in comps)
             for crit, a, b_ in zip(frame["criterion"], frame["system"], frame["system_b"], strict=True)],
            index=frame.index, dtype=bool)
        ended = {r["participant_id"] for r in given if r["completed"]}
        gap = replay_gap(frame, keep, watched, ended)
        fed = frame[(np.asarray(keep, dtype=bool) & ~gap.unfed_kept) | gap.fed_dropped]  # what the live rule was fed
        again_fed = [(r["outcome"], int(r["n"])) for r in replay_decisions(fed, protocol, systems, tasks)] \
            if gap.any() else again
        cell.replay_equals_live = sorted(live) == sorted(again)
        cell.replay_reproduces_live, cell.replay = compare_replay(live, again, again_fed, gap,
                                                                  timed_out=crowd.timed_out,
                                                                  feed=protocol.stopping.feed)
        if not cell.replay_equals_live:
            cell.notes.append(f"replay: {cell.replay}")
    if not crowd.people or not cell.places:
        cell.status, cell.message = "measured nothing", "no participant was given a list"


@dataclass(frozen=True)
class ReplayGap:
    """Where the export's valid judgements and what the live rule was fed part (boolean masks over the export)."""

    #: watched judgements the replay keeps that the live rule was never fed (``stop_seq`` empty)
    unfed_kept: Any
    #: of those, the ones of sessions that had not ended when the collection stopped (cut in progress)
    unfed_in_progress: Any
    #: watched judgements the live rule was fed that the replay's exclusion removes
    fed_dropped: Any
    #: sessions in progress holding unfed watched judgements
    sessions_in_progress: int

    def any(self) -> bool:
        return bool(self.unfed_kept.any() or self.fed_dropped.any())


def replay_gap(frame: Any, keep: Any, watched: Any, ended: set[str]) -> ReplayGap:
    """Compare the export ``frame`` (``keep``: the rows the replay's exclusion keeps; ``watched``: rows of the watched
    comparison) with what the live rule was fed (rows with a ``stop_seq``); ``ended``: participants whose session
    ended (they had their completion code)."""
    fed = frame["stop_seq"].notna().to_numpy(dtype=bool)
    keep, watched = np.asarray(keep, dtype=bool), np.asarray(watched, dtype=bool)
    unfed_kept = watched & keep & ~fed
    in_progress = unfed_kept & ~frame["participant_id"].isin(ended).to_numpy(dtype=bool)
    return ReplayGap(unfed_kept, in_progress, watched & fed & ~keep,
                     int(frame.loc[in_progress, "participant_id"].nunique()))


def compare_replay(live: list[tuple[str, int]], again: list[tuple[str, int]], again_fed: list[tuple[str, int]],
                   gap: ReplayGap, *, timed_out: bool, feed: str = "session") -> tuple[bool, str]:
    """Whether the replay reproduces the live rule, and the words saying what happened.

    ``again``: the replay of the export after exclusion; ``again_fed``: the replay of exactly the judgements the live
    rule was fed. When the cell's time bound ends the collection, sessions in progress have stored judgements that a
    rule fed per session (``stopping.feed: session``) never saw: the export's replay then counts more than live and
    may differ from it, which is not a fault of the rule. The replay reproduces the live rule when the replay of what
    it was fed equals it; ``False`` (and the words) otherwise.
    """
    words = f"live {live} replay {again}"
    if sorted(again) == sorted(live):
        return True, words
    why = []
    n_cut, n_other = int(gap.unfed_in_progress.sum()), int(gap.unfed_kept.sum() - gap.unfed_in_progress.sum())
    if n_cut:
        cause = "the cell's time bound cut" if timed_out else "the collection ended with"
        why.append(f"{cause} {gap.sessions_in_progress} session(s) in progress, whose {n_cut} stored judgement(s) of "
                   "the comparison the live rule was never fed"
                   + (" (stopping.feed: session feeds a session when it ends)" if feed == "session" else ""))
    if n_other:
        why.append(f"{n_other} stored judgement(s) of ended sessions the live rule was never fed")
    if int(gap.fed_dropped.sum()):
        why.append(f"{int(gap.fed_dropped.sum())} judgement(s) the live rule was fed are excluded in the replay")
    if not why:
        return False, f"{words}: REPLAY != LIVE on the same judgements"
    said = "; ".join(why)
    if sorted(again_fed) == sorted(live):
        return True, (f"{words}: the export is not what the live rule was fed: {said}; the replay of the judgements "
                      f"it was fed gives {again_fed}, as live")
    return False, f"{words}: REPLAY != LIVE: {said}, and the replay of the judgements it was fed gives {again_fed}"


def _stopping_of(cell: Cell, study: Any) -> Any:
    """The fixed design has no stopping section: the dynamic design's watches the same comparison."""
    from humeval.protocol.models import Stopping

    proto = study.protocol
    if cell.scenario == "best":
        return Stopping(rule="anytime", delta=0.05, goal="best")
    two = [c.name for c in proto.criteria if c.type == "2afc"]
    systems = {"demo": ["baseline", "reference"], "pairwise": ["baseline", "candidate"], "sorted": ["A", "B"]}
    return Stopping(rule="anytime", delta=0.05, systems=systems[cell.scenario]) if two else None


def run_cell(cell: Cell, study_dir: Path, root: Path, args: argparse.Namespace, pg_admin: str, say: Any) -> None:
    """Serve the study (built by :func:`build_study`) on a fresh store in ``root`` (or a fresh PostgreSQL database),
    let the crowd in, measure; the server is always stopped."""
    from humeval.store import Store
    from humeval.study import StudyFolder

    processes = STORES[cell.store]
    pg = None
    if cell.store == "postgresql":
        from bench_server import Postgres

        pg = Postgres(pg_admin)
        if (why := pg.reachable()) is not None:
            cell.status, cell.message = "skipped", f"PostgreSQL unreachable: {why}"
            return
        db = pg.create()
    else:
        db = str(root / "store.db")
    study = StudyFolder.open(study_dir)
    port = free_port()
    log = root / f"serve-{cell.store}.log"
    store = None
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "humeval", "serve", str(study_dir), "--host", HOST, "--port", str(port),
             "--workers", str(processes), "--db", db, "--log-level", "warning", "--new-per-address", "-1",
             "--max-active", "-1"],
            stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            env={k: v for k, v in os.environ.items() if k != "HUMEVAL_SERVER_CONFIG_FILE"} | {"HUMEVAL_ADMIN_TOKEN": ADMIN})
    try:
        from humeval.collect import wait_until_serving

        answered = wait_until_serving(HOST, port, processes, timeout=120)
        if len(answered) < processes:
            tail = " ".join(log.read_text(errors="replace").split()[-40:])
            cell.status, cell.message = "failed", f"{len(answered)} of {processes} processes answered: {tail}"
            return
        store = Store.open(study, db)
        answerer = make_answerer(study, cell.scenario)
        crowd = asyncio.run(run_crowd(port, store, study, answerer, rate=args.rate, pace=args.pace, scale=args.scale,
                                      crowd=args.arrivals, seconds=args.cell_seconds, seed=args.seed))
        stop(proc)
        measure(cell, study, store, crowd, args.scale)
    except Exception as exc:  # noqa: BLE001 (a cell that failed says why; the others still run)
        cell.status, cell.message = "failed", f"{type(exc).__name__}: {exc}"[:400]
    finally:
        stop(proc)
        if store is not None:
            store.close()
        if pg is not None:
            pg.drop()
    say(f"{cell.scenario}/{cell.store}/{cell.design}: {cell.status}"
        + (f" ({cell.message})" if cell.message else "")
        + (f": {cell.places} places, decision {cell.outcome or '-'} at n={cell.used}" if cell.status == "ok" else ""))


# -- acceptance ------------------------------------------------------------------------------------
def acceptance(cells: list[Cell]) -> list[tuple[str, str, str]]:
    """Issue 30's acceptance lines per scenario x store: (where, verdict, the line with its numbers)."""
    out: list[tuple[str, str, str]] = []
    by = {(c.scenario, c.store, c.design): c for c in cells}
    for (scenario, store, design), dyn in by.items():
        if design not in ("dynamic", "planned"):
            continue
        where = f"{scenario}/{store}" + ("" if design == "dynamic" else "/planned")
        fixed = by.get((scenario, store, "fixed"))
        if dyn.status != "ok" or fixed is None or fixed.status != "ok":
            out.append((where, "n/a", f"measured nothing: dynamic {dyn.status}, fixed {fixed.status if fixed else 'absent'}"))
            continue
        if dyn.used is None:
            out.append((where, "n/a" if scenario == "sorted" else "FAIL",
                        (f"no decision (outcome {dyn.outcome or 'none'}) after {dyn.paid} judgements: the lines that "
                         "need one measured nothing")))
        else:
            bound = 1.25 * dyn.used / max(fixed.paid, 1) * fixed.watched_places + 1
            out.append((where, _v(dyn.watched_places <= bound), (
                f"places of the comparison {dyn.watched_places} <= 1.25 x ({dyn.used} used / {fixed.paid} fixed "
                f"judgements) x {fixed.watched_places} fixed places + 1 = {bound:.1f} (all places {dyn.places} of "
                f"{fixed.places})")))
            out.append((where, _v(dyn.after_decision is not None and dyn.after_decision <= 0.1 * dyn.used),
                        f"paid after the decision {dyn.after_decision} <= 10% of n = {0.1 * dyn.used:.1f}"))
            limit = 1.25 * fixed.minutes_to_end
            out.append((where, _v(dyn.minutes_to_decision is not None and dyn.minutes_to_decision <= limit),
                        (f"wall time to decision {dyn.minutes_to_decision} min <= 1.25 x fixed {fixed.minutes_to_end} "
                         f"min = {limit:.1f}")))
        out.append((where, _v(dyn.cut_before_decision == 0), f"sessions cut before the decision: {dyn.cut_before_decision}"))
        out.append((where, _v(dyn.nothing_to_do == 0), f"admitted with nothing to do: {dyn.nothing_to_do}"))
        out.append((where, "info", f"turned away (told before starting, unpaid: a place seen open was gone when they "
                                   f"asked): {dyn.turned_away}"))
        out.append((where, _v(dyn.replay_reproduces_live is True),
                    f"replay {'equals' if dyn.replay_equals_live else 'of what was fed equals'} live: {dyn.replay}"))
    return out


def _v(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# -- output ----------------------------------------------------------------------------------------
def table(cells: list[Cell]) -> list[str]:
    head = (f"{'scenario':<9} {'store':<11} {'design':<10} {'places':>6} {'turned':>6} {'cut@dec':>7} {'cut<dec':>7} "
            f"{'idle':>4} {'paid':>5} {'used':>5} {'unused':>6} {'after':>5} {'money':>9} {'t_dec':>6} {'t_end':>6} "
            f"{'replay':>6}  decision")
    lines = [head, "-" * len(head)]
    for c in cells:
        if c.status != "ok":
            lines.append(f"{c.scenario:<9} {c.store:<11} {c.design:<10} {c.status}: {c.message}")
            continue

        def f(x: Any) -> str:
            return "-" if x is None else str(x)

        lines.append(
            f"{c.scenario:<9} {c.store:<11} {c.design:<10} {c.places:>6} {c.turned_away:>6} {c.cut_at_decision:>7} "
            f"{c.cut_before_decision:>7} {c.nothing_to_do:>4} {c.paid:>5} {f(c.used):>5} {f(c.unused):>6} "
            f"{f(c.after_decision):>5} {c.money:>5.2f} {c.currency:<3} {f(c.minutes_to_decision):>6} "
            f"{c.minutes_to_end:>6} {f(_replay_cell(c) if c.replay else None):>6}  {c.outcome or '-'}"
            + "".join(f"\n    note: {n}" for n in c.notes))
    return lines


def _replay_cell(c: Cell) -> str:
    """``True`` (the replay equals live), ``fed`` (equal on what the live rule was fed: see the note) or ``False``."""
    return "True" if c.replay_equals_live else "fed" if c.replay_reproduces_live else "False"


def guarantees(runs: int, seed: int) -> list[tuple[str, str, str]]:
    """Issue 30's guarantees where their assumption is broken on purpose, simulated ``runs`` times each:
    sorted data (tied overall, A better on the first half of the file) in the design's serving order (and in file
    order, to show what the order fixes), and a preference cycle A > B > C > A (0.7 each) with a dominated D."""
    import numpy as np

    from humeval.simulate.multi import simulate_goal
    from humeval.simulate.order import (
        clopper_pearson_upper,
        simulate_served_goal,
        simulate_served_pair,
    )

    delta, items, half = 0.05, 60, 30
    pair = np.r_[np.full(half, 0.8), np.full(items - half, 0.2)]
    goal = np.full((items, 4, 4), 0.5)  # system 0 tied with each other overall; the others 1 > 2 > 3 at 0.9
    for a in range(1, 4):
        goal[:, a, a + 1:], goal[:, a + 1:, a] = 0.9, 0.1
    goal[:half, 0, 1:], goal[:half, 1:, 0] = 0.8, 0.2
    goal[half:, 0, 1:], goal[half:, 1:, 0] = 0.2, 0.8
    out = []
    for order in ("serving", "file"):
        results = [("sorted pair (anytime)", simulate_served_pair(pair, 3, delta=delta, iterations=runs, seed=seed,
                                                                  order=order))]
        results += [(f"sorted {g}, K = 4", simulate_served_goal(goal, g, 3, delta=delta, iterations=runs, seed=seed,
                                                                order=order)) for g in ("best", "ranking")]
        for name, r in results:
            ok = r.wrong_share <= delta
            verdict = ("PASS" if ok else "FAIL") if order == "serving" else "info"
            out.append((f"{name}, {order} order", verdict, r.describe()))
    cycle = np.full((4, 4), 0.5)
    for i, j in [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)]:
        cycle[i, j], cycle[j, i] = 0.7, 0.3
    for g in ("best", "ranking"):
        r = simulate_goal(4, "cycle", g, "adaptive", delta=delta, iterations=runs, max_judgements=50_000, seed=seed,
                          preferences=cycle)
        wrong = round(r.wrong_share * runs)
        out.append((f"cycle A>B>C>A + D, {g}", "PASS" if r.wrong_share <= delta else "FAIL",
                    f"wrong in {wrong} of {runs} runs (one-sided 95% Clopper-Pearson upper bound "
                    f"{clopper_pearson_upper(wrong, runs):.3f}); decided {r.decided_share:.3f}"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--stores", default="sqlite,postgresql")
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--rate", type=float, default=0.75,
                    help="arrivals per simulated minute while a place is open (default 0.75: the templates' "
                         "crowd.arrivals_per_hour of 45)")
    ap.add_argument("--pace", type=float, default=20.0,
                    help="simulated seconds per task (default 20: the pairwise template's pay.seconds_per_task)")
    ap.add_argument("--scale", type=float, default=None,
                    help="real seconds per simulated minute (default 0.2; with --crowd 1.0, so that the lease of 600 "
                         "simulated seconds is the protocol's least, 10 real seconds)")
    ap.add_argument("--arrivals", type=int, default=100, help="most Poisson arrivals per cell (default 100)")
    log = ap.add_argument_group("a recorded crowd (--crowd): the log's arrivals, paces and quitters through the server")
    log.add_argument("--crowd", default=None, metavar="amt|FILE",
                     help="amt: the three DHE AMT batches (HUMEVAL_SHARED_DATA/dhe), or a crowd file; replaces the "
                          "Poisson scenarios by the easy and harder comparisons, dynamic beside fixed")
    log.add_argument("--runs", type=int, default=6, help="runs per comparison, over the crowd files in turn (default 6)")
    log.add_argument("--jobs", type=int, default=2, help="runs served at once, each its own server (default 2)")
    log.add_argument("--minutes", type=float, default=20.0,
                     help="real minutes the runs may take; runs not started by then are left out (default 20)")
    log.add_argument("--run-seconds", type=float, default=240.0, help="real seconds per run at most (default 240)")
    log.add_argument("--pausers", type=float, default=0.2,
                     help="share of the participants who do not quit that pause once past the lease (default 0.2)")
    log.add_argument("--waitlist", type=float, default=600.0,
                     help="simulated seconds an arrival told 'wait' stays on the waitlist (stopping.waitlist_seconds, "
                          "default 600 as the protocol's; 0: none, turned away)")
    log.add_argument("--plan-runs", type=int, default=1000, help="simulated runs per W when planning (default 1000)")
    log.add_argument("--comparisons", default="harder,easy", help="harder,easy (default both)")
    log.add_argument("--log-store", default="sqlite", choices=["sqlite", "postgresql"],
                     help="the store of every run: SQLite (default) or a fresh PostgreSQL database per run on --pg, "
                          "dropped afterwards (one server process either way)")
    ap.add_argument("--cell-seconds", type=float, default=60.0, help="real seconds per cell at most (default 60)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--pg", default=PG_DEFAULT, help=f"PostgreSQL server for the PostgreSQL cells (default {PG_DEFAULT})")
    ap.add_argument("--quick", action="store_true", help="pairwise on SQLite only, a faster clock, 40 arrivals")
    ap.add_argument("--json", action="store_true", help="print the cells and the acceptance lines as JSON")
    ap.add_argument("--keep", type=Path, default=None, help="build the studies and stores here and keep them")
    ap.add_argument("--guarantee-runs", type=int, default=400,
                    help="simulated runs of each guarantee under a broken assumption (default 400; 0: skip)")
    args = ap.parse_args(argv)
    if args.crowd is not None:
        return log_main(args)
    if args.scale is None:
        args.scale = 0.2
    if args.quick:
        for k, v in QUICK.items():
            setattr(args, k, v)
    scenarios = [s for s in args.scenarios.split(",") if s]
    stores = [s for s in args.stores.split(",") if s]
    designs = [d for d in args.designs.split(",") if d]
    for name, got, valid in (("scenario", scenarios, SCENARIOS), ("store", stores, STORES), ("design", designs, DESIGNS)):
        bad = [g for g in got if g not in valid]
        if bad:
            ap.error(f"unknown {name} {bad}; valid: {', '.join(valid)}")

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    say(f"clock: 1 simulated minute = {args.scale} real s; pace {args.pace} s/task; arrivals {args.rate}/min, "
        f"at most {args.arrivals} per cell")
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="bench-crowd-"))
    cells: list[Cell] = []
    started = time.monotonic()
    try:
        for scenario in scenarios:
            for design in designs:
                study_dir = tmp / f"{scenario}-{design}" / "study"
                try:
                    build_study(study_dir, scenario, design, args.pace, args.rate)
                except Exception as exc:  # noqa: BLE001 (the study could not be built: every cell of it says why)
                    for store in stores:
                        cells.append(Cell(scenario, store, design, status="failed", message=f"building the study: {exc}"[:300]))
                    continue
                for store in stores:
                    cell = Cell(scenario, store, design)
                    root = study_dir.parent / store
                    root.mkdir(parents=True, exist_ok=True)
                    run_cell(cell, study_dir, root, args, args.pg, say)
                    cells.append(cell)
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    verdicts = acceptance(cells)
    if args.guarantee_runs > 0:
        say(f"guarantees: {args.guarantee_runs} simulated runs each")
        verdicts += guarantees(args.guarantee_runs, args.seed)
    if args.json:
        print(json.dumps({"clock": {"scale": args.scale, "pace": args.pace, "rate": args.rate, "arrivals": args.arrivals},
                          "cells": [asdict(c) for c in cells],
                          "acceptance": [{"where": w, "verdict": v, "line": t} for w, v, t in verdicts],
                          "seconds": round(time.monotonic() - started, 1)}, indent=2))
        return 0
    print(f"crowd benchmark: 1 simulated minute = {args.scale} real s, {args.pace} s per task, {args.rate} arrivals per "
          f"simulated minute (Poisson, only while places are open), at most {args.arrivals} per cell; times in simulated "
          "minutes from the first arrival; money = places x reward per list x (1 + fee)")
    print("columns: turned = told wait/closed before any task; cut@dec / cut<dec = sessions served less than their list "
          "at / before the decision; idle = given a list, served nothing; paid/used/unused/after = judgements of the "
          "watched comparison (used = the decision's n; after = submitted after the decision time)")
    for line in table(cells):
        print(line)
    print("\nacceptance (issue 30):")
    for where, verdict, text in verdicts:
        print(f"  {verdict:<4} {where:<32} {text}")
    print(f"\n({time.monotonic() - started:.0f} s)")
    return 0


def log_main(args: argparse.Namespace) -> int:
    """``--crowd amt|FILE``: the recorded crowd through the real server (:mod:`_log_crowd`)."""
    import _log_crowd

    if args.scale is None:
        args.scale = 1.0
    if _log_crowd.compress(_log_crowd.LEASE, args.scale) < 10:
        raise SystemExit(f"--scale {args.scale}: the lease of {_log_crowd.LEASE:g} simulated s would be "
                         f"{_log_crowd.compress(_log_crowd.LEASE, args.scale):g} real s, below the protocol's least "
                         "(10 s); use --scale 1 or more")
    started = time.monotonic()

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    settings = _log_crowd.run_log(args, say)
    result = _log_crowd.summary(settings)
    result["acceptance"] = _log_crowd.acceptance(result)
    result["seconds"] = round(time.monotonic() - started, 1)
    result["settings_used"] = {"crowd": args.crowd, "store": args.log_store, "scale": args.scale, "runs": args.runs,
                               "pausers": args.pausers,
                               "waitlist": args.waitlist, "lease": _log_crowd.LEASE, "seed": args.seed}
    if args.json:
        print(json.dumps(result, indent=1, default=str))
        return 0
    store = "SQLite" if args.log_store == "sqlite" else "PostgreSQL"
    print(f"recorded crowd {args.crowd} through the real server ({store}): 1 simulated minute = {args.scale} real s, "
          f"lease {_log_crowd.LEASE:g} s, waitlist {args.waitlist:g} s, pausers {args.pausers:.0%}; "
          "times in simulated minutes")
    print(f"{'comparison':<10} {'runs':>4} {'dyn dec':>7} {'fix dec':>7} {'share':>6} {'places':>6} {'fixed':>5} "
          f"{'wall':>6} {'fixed':>6} {'ratio':>5} {'turned':>6} {'waited':>6} {'quit':>5}")
    for label, c in result["comparisons"].items():
        if not c.get("runs"):
            print(f"{label:<10} no run measured")
            continue
        print(f"{label:<10} {c['runs']:>4} {c['dynamic_decided']:>7} {c['fixed_watch_decided']:>7} "
              f"{c['decided_share']:>6.0%} {c['places']:>6.2f} {c['fixed_places']:>5.1f} {c['wall_min']:>6.1f} "
              f"{c['fixed_min']:>6.1f} {c['wall_ratio']:>5.2f} {c['turned_away']:>6.1f} {c['waitlisted']:>6.1f} "
              f"{c['quitters']:>5.1f}")
    print("overrun (a full session's time over the log's, median: the requests' latency at this clock): "
          + ", ".join(f"{label} {c['overrun']:.2f}" for label, c in result["comparisons"].items() if c.get("runs")))
    print("\nper crowd: budget --crowd's prediction for the planned W beside the server's runs")
    for s in result["settings"]:
        m = s["measured"]
        if m.get("runs"):
            print(f"  {s['crowd'][:13]} {s['comparison']:<7} W={s['sessions']} predicted {s['predicted']['places']:.2f} "
                  f"places {s['predicted']['wall_min']:.1f} min decided {s['predicted']['decided']:.0%}; measured "
                  f"{m['places']:.2f} places {m['wall_min']:.1f} min decided {m['dynamic_decided']}/{m['runs']} "
                  f"(fixed watched {m['fixed_watch_decided']}/{m['runs']}, fixed complete {m['fixed_complete']}; "
                  f"wall {m['wall_ratio']:.2f}x the completed fixed collections)")
    print("\nacceptance (issue 40):")
    for line in result["acceptance"]:
        print("  " + line)
    print(f"\n({result['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
