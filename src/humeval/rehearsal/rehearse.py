"""A rehearsal: synthetic participants do the study through the real server and store.

Where a dry run (:mod:`humeval.stages.dry_run`) writes dummy judgements straight into a
table, a rehearsal runs the collection for real:

1. ``humeval serve`` starts in a subprocess on 127.0.0.1 (a free port, a generated admin
   token) over a store of its own: ``results/rehearsal/study.db`` (recreated each time), or
   an empty database given with ``db``; the study's own ``study.db`` is never used.
2. Synthetic participants (``concurrency`` at a time) enter, give consent when the
   protocol asks for it, and ``GET /api/v1/next`` / ``POST /api/v1/judgements`` until the
   server answers 204. With participant lists (``list`` strategy) they arrive as a crowd
   platform's places open: a participant enters only while the store's recruitment
   (:meth:`humeval.store.Store.recruitment`) has a place open (``target > started``, less
   those entering), and waits for one otherwise, so that dynamic stopping's sessions are
   not met by a crowd that is told ``wait``; the result reports the places used, the
   participants turned away (given nothing before any task) and the sessions cut at the
   decision. Values are dummy responses of ``kind`` (as in the dry run), the
   hidden score looked up from the output *text* through an :class:`AnswerKey` the
   researcher side builds from the study's data; attention checks are answered correctly.
   The ``crowd`` kind answers as a simulated crowd instead (:class:`Population`: capability,
   position bias, spammers who answer checks at random).
3. The server is stopped (always: also on an error, a timeout or Ctrl-C), the store's
   judgements are exported to ``results/rehearsal/judgements.jsonl`` with the store
   read of ``humeval export``, and collate -> exclude -> analyze -> report run on them
   with the functions the real stages use, in ``results/rehearsal/``.
4. One ``rehearse`` entry is appended to the logbook (also for a failed rehearsal).

Nothing outside ``results/rehearsal/`` is written except that logbook line, so a rehearsal
never touches the real study's results or store.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from humeval.analysis.workspace import Workspace
from humeval.collect import ADMIN_ENV
from humeval.design.tasks import ParticipantList
from humeval.errors import HumevalError, did_you_mean
from humeval.files import write_jsonl
from humeval.pipeline import back_half, record_run, require_lock
from humeval.platforms.entry import entry_body
from humeval.protocol.models import Platform
from humeval.rehearsal.participants import (
    REHEARSAL_KINDS,
    Answerer,
    AnswerKey,
    ApiClient,
    Population,
    RehearsalError,
    draw_seconds,
    prompts_to_type,
)
from humeval.rehearsal.replay import VoteReplay, read_crowd_votes
from humeval.simulate.dummy import declared_seconds
from humeval.stages.export import write_store_judgements
from humeval.store.engine import redact_url
from humeval.study import StudyFolder, StudyLike, as_study

__all__ = ["HOST", "RehearsalError", "RehearsalOptions", "RehearsalResult", "predicted_places", "rehearsal_workspace",
           "rehearse", "rehearse_with"]

HOST = "127.0.0.1"
#: a ``replay`` rehearsal's served votes, one per line with its source (in ``results/rehearsal/``)
REPLAYED_VOTES = "replayed-votes.jsonl"

_REQUEST_TIMEOUT = 30.0
#: seconds a synthetic participant waits before the next one enters when work is held back by the in-flight bound
_HELD_BACK_PAUSE = 0.02
#: seconds between two looks at the open places while none is open
_PLACE_POLL = 0.05
_START_TIMEOUT = 60.0


@dataclass(frozen=True)
class RehearsalResult:
    """What a rehearsal did and where it wrote."""

    kind: str
    seed: int
    #: synthetic participants that entered / that submitted at least one judgement
    participants: int
    participants_active: int
    #: judgements acknowledged by the server (201), and stored as the admin API reports them
    judgements: int
    #: what the participant lists require (sum of list sizes; None for the labelling strategies)
    judgements_required: int | None
    #: rows of the exported long table (one per criterion and rated system)
    rows: int
    #: collection time (first enter to last judgement) and judgements per second over it
    seconds: float
    items_per_second: float
    #: whole rehearsal (server start, collection, export, back half)
    elapsed: float
    workspace: Path
    store: str
    complete: bool
    participants_excluded: int
    report: Path | None
    results: Path | None
    signature: str | None
    analysis_error: str | None = None
    #: outputs whose text another system of the same item also wrote (scored as their mean)
    ambiguous_outputs: int = 0
    #: participant lists of the re-run rounds (``rerun_rounds``): the tasks collation found short
    rerun_lists: int = 0
    summary: dict[str, Any] = field(default_factory=dict)
    #: places used: participants given a list (``list`` strategy; None for the labelling strategies)
    places: int | None = None
    #: the places ``humeval budget`` predicts for this design (None until it predicts them; see :func:`predicted_places`)
    places_predicted: float | None = None
    #: participants given nothing before any task (told ``wait`` or ``closed``): 0 when they follow the open places
    turned_away: int = 0
    #: sessions served less than their list (cut when the stopping rule decided)
    sessions_cut: int = 0


def predicted_places(study: StudyFolder) -> float | None:
    """The places ``humeval budget`` predicts for the study as designed, to set beside the places a rehearsal used.

    A fixed design uses every list. With dynamic stopping, the mean places of the protocol's own
    setting in the budget's session plan (:attr:`humeval.costs.Budget.sessions`), fitted to the
    pilot the budget finds (``pay.pilot``, the exported judgements, or an earlier rehearsal's);
    None when there is none yet, or for a pool strategy.
    """
    if study.protocol.assignment.strategy != "list":
        return None
    if study.protocol.stopping is None:
        return float(len(study.read_lists()))
    from humeval.costs import budget

    try:
        plan = budget(study, strategies=["one"], crowd_runs=500).sessions
    except HumevalError:
        return None
    mine = [p for p in plan if p.protocol]
    return round(mine[0].places[0], 1) if mine else None


def rehearsal_workspace(study: StudyFolder, kind: str) -> Workspace:
    """``results/rehearsal/``: its results are marked ``dry_run: rehearsal-<kind>`` (also in the signature)."""
    return Workspace(study.results_dir / "rehearsal", dry_run=f"rehearsal-{kind}")


# --------------------------------------------------------------------------- the server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


class _Server:
    """``humeval serve`` in its own process group on 127.0.0.1; :meth:`stop` ends the whole group."""

    def __init__(self, study: StudyFolder, db: str, workers: int, log: Path, *, unlocked: bool = False) -> None:
        self.study, self.db, self.workers, self.log = study, db, workers, log
        self.unlocked = unlocked  # rehearsing an unlocked study: serve with the explicit, logged override
        self.admin_token = secrets.token_urlsafe(24)
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, deadline: float) -> None:
        for _attempt in range(3):  # the free port can be taken between probing and binding
            self.port = _free_port()
            cmd = [sys.executable, "-m", "humeval", "serve", str(self.study.root), "--host", HOST,
                   "--port", str(self.port), "--workers", str(self.workers), "--db", self.db,
                   "--log-level", "warning", "--new-per-address", "-1", "--max-active", "-1",
                   *(["--unlocked"] if self.unlocked else [])]
            env = {k: v for k, v in os.environ.items() if k != "HUMEVAL_SERVER_CONFIG_FILE"} | {ADMIN_ENV: self.admin_token}
            with self.log.open("ab") as fh:
                self.proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env,
                                             stdin=subprocess.DEVNULL, start_new_session=True)
            if self._wait_healthy(min(deadline, time.monotonic() + _START_TIMEOUT)):
                return
            tail = self._log_tail()
            self.stop()
            if "address already in use" not in tail.lower():
                raise RehearsalError(f"rehearsal: `humeval serve` did not answer on {HOST}:{self.port} in time "
                                     f"(log {self.log}):\n{tail}")
        raise RehearsalError(f"rehearsal: no free port on {HOST} after 3 attempts (log {self.log})")

    def _wait_healthy(self, until: float) -> bool:
        assert self.proc is not None
        while time.monotonic() < until:
            if self.proc.poll() is not None:
                return False
            with contextlib.suppress(OSError, RehearsalError):
                client = ApiClient(HOST, self.port, 2.0)
                try:
                    status, _ = client.request("GET", "/healthz", expect=(200, 503))
                finally:
                    client.close()
                if status == 200:
                    return True
            time.sleep(0.05)
        return False

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def describe(self) -> dict[str, Any]:
        """Where it listened and its process id (recorded in the logbook)."""
        return {"url": f"http://{HOST}:{self.port}", "pid": self.proc.pid if self.proc is not None else None,
                "workers": self.workers or "default"}

    def stop(self) -> None:
        """SIGTERM to the process group (graceful: pending commits finish), SIGKILL after 10 s; returns once no
        process of the group is left (multiprocessing's resource tracker ignores SIGTERM and outlives the leader
        by a moment)."""
        proc = self.proc
        if proc is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            if _group_gone(proc, time.monotonic() + 10):
                return


def _group_gone(proc: subprocess.Popen[bytes], until: float) -> bool:
    """Whether, by ``until``, the group's leader has exited (and been reaped) and no other process of its group is left."""
    while time.monotonic() < until:
        if proc.poll() is not None:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return True
        time.sleep(0.02)
    return False


# --------------------------------------------------------------------------- the participants


@dataclass
class _Tally:
    """Counts shared by the participant threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    entered: int = 0
    active: int = 0
    judgements: int = 0
    withdrawn: int = 0
    #: second attempts at failed qualification checks (stored as revisions, not counted in ``judgements``)
    retried: int = 0
    #: live battles whose generation failed (never voted on: the next battle follows)
    failed_battles: int = 0
    #: prompts typed and stored (a live battle with ``arena.prompts.typed``)
    typed: int = 0
    turned: int = 0
    cut: int = 0
    first: float | None = None
    last: float | None = None

    def add(self, **counts: int) -> None:
        with self.lock:
            now = time.monotonic()
            self.first = now if self.first is None else self.first
            self.last = now
            for k, v in counts.items():
                setattr(self, k, getattr(self, k) + v)


class _Places:
    """Arrivals that follow a crowd platform's open places (``list`` strategy): the store's recruitment, read by the
    rehearsal. A participant arrives only while ``target - started`` exceeds those still entering (they have no list
    yet); otherwise they wait for a place. :meth:`arrive` says False once recruitment has finished."""

    def __init__(self, study: StudyFolder, db: str) -> None:
        from humeval.store import Store

        self.store = Store.open(study, db)
        self.lock = threading.Lock()
        self.entering = 0

    def arrive(self, stop: threading.Event, deadline: float) -> bool:
        while not stop.is_set() and time.monotonic() < deadline:
            with self.lock:
                rec = self.store.recruitment()
                if rec.finished and self.entering == 0:
                    return False
                if rec.target - rec.started > self.entering:
                    self.entering += 1
                    return True
            time.sleep(_PLACE_POLL)
        return False

    def entered(self) -> None:
        """The arrival has been given a list, or nothing: no longer counted as entering."""
        with self.lock:
            self.entering -= 1

    def started(self) -> int:
        return self.store.recruitment().started

    def close(self) -> None:
        self.store.close()


def _code(answer: Any) -> str:
    """The error code of an API error answer (empty for anything else)."""
    return str(answer.get("error", {}).get("code", "")) if isinstance(answer, dict) else ""


class _Crowd:
    """Synthetic participants doing the study, ``concurrency`` at a time."""

    def __init__(self, port: int, answerer: Answerer, kind: str, seed: int, participants: int | None,
                 max_tasks: int, advance: Any, admin_token: str = "", tally: _Tally | None = None,
                 first: int = 0, platform: Platform | None = None, places: _Places | None = None,
                 prompts: list[str] | None = None) -> None:
        self.port, self.answerer, self.kind, self.seed = port, answerer, kind, seed
        #: the prompts a participant types in a live battle with typed prompts (:func:`prompts_to_type`)
        self.prompts = prompts or []
        self.places = places  # arrivals follow the open places (list strategy)
        self.deadline = float("inf")
        self.platform = platform or Platform()
        self.admin_token = admin_token
        self.limit, self.max_tasks, self.advance = participants, max_tasks, advance
        #: the median seconds a task that the participants report: the protocol's declared time (not 12 s always)
        self.seconds = declared_seconds(answerer.protocol, max_tasks)
        self.stop = threading.Event()
        self.tally = tally if tally is not None else _Tally()  # shared by the rounds of a rehearsal
        self._index = itertools.count(first)  # participant numbers go on across rounds
        self._index_lock = threading.Lock()

    def _claim(self) -> int | None:
        with self._index_lock:
            i = next(self._index)
        return None if self.limit is not None and i >= self.limit else i

    @property
    def next_index(self) -> int:
        """The number the next participant would get (the first of a following round)."""
        with self._index_lock:
            i = next(self._index)
            self._index = itertools.count(i)
        return i

    def worker(self) -> None:
        """Participants one after another: up to the limit, or (without one) until a new one gets nothing
        and nothing is held back for later (:meth:`_held_back`)."""
        client = ApiClient(HOST, self.port, _REQUEST_TIMEOUT)
        try:
            while not self.stop.is_set():
                index = self._claim()
                if index is None:
                    return
                if self.places is not None and not self.places.arrive(self.stop, self.deadline):
                    return
                done = self._participant(client, index)
                if self.places is None and self.limit is None and done == 0:
                    if not self._held_back(client):
                        return
                    time.sleep(_HELD_BACK_PAUSE)
        finally:
            client.close()

    def _held_back(self, client: ApiClient) -> bool:
        """Whether work of an undecided watched comparison remains: a new participant got nothing only because
        the store bounds the judgements in flight (docs/stopping.md), so more participants are still needed."""
        if not self.admin_token:
            return False
        _, body = client.request("GET", "/api/v1/admin/status", token=self.admin_token)
        criteria = body["overview"]["criteria"]
        return any(st["outcome"] == "continue"
                   and criteria.get(st["comparison"], {}).get("wanted", 0) > criteria.get(st["comparison"], {}).get("done", 0)
                   for st in body["stopping"])

    def _entry(self, client: ApiClient, pid: str) -> dict[str, str]:
        """The entry body through the study's own route: its platform's parameters, an open id, or an invite."""
        platform = self.platform
        if "platform" in platform.routes or "open" in platform.routes:
            return entry_body(platform, pid)
        _, made = client.request("POST", "/api/v1/admin/invites", {"participant_ids": [pid]}, token=self.admin_token)
        return {"invite": made["invites"][0]["url"].split("invite=", 1)[1]}

    def _participant(self, client: ApiClient, index: int) -> int:
        pid = f"rehearsal-{self.kind}-{index + 1:05d}"
        rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(index,)))
        who = self.answerer.participant(index)  # a simulated participant (crowd kind), else None
        entering = self.places is not None
        try:
            _, entered = client.request("POST", "/api/v1/enter", self._entry(client, pid))
            token = entered["token"]
            if entered.get("consent_required"):
                client.request("POST", "/api/v1/consent", {}, token=token)
            self.tally.add(entered=1)
            done, total = 0, 0
            while not self.stop.is_set():
                status, assignment = client.request("GET", "/api/v1/next", token=token, expect=(200, 204))
                if entering:
                    entering = False
                    self.places.entered()  # type: ignore[union-attr]
                if status == 204:
                    if done == 0:
                        self.tally.add(turned=1)  # told wait or closed (client.last_reason) before any task
                    elif done < total:
                        self.tally.add(cut=1)  # the rule decided during the session: the rest was closed
                    break
                total = int(assignment.get("progress", {}).get("total", 0))
                done = self._task(client, pid, token, assignment, rng, who, done)
        finally:
            if entering:
                self.places.entered()  # type: ignore[union-attr]
        return done

    def _task(self, client: ApiClient, pid: str, token: str, assignment: dict[str, Any], rng: np.random.Generator,
              who: Any, done: int) -> int:
        """Answer one assignment; the tasks done after it."""
        if done >= self.max_tasks:
            raise RehearsalError(f"rehearsal: participant {pid} was served more than {self.max_tasks} tasks "
                                 "(the study's largest list, re-run lists included); the server keeps serving work")
        if "prompt" in assignment:
            self._type_prompt(client, token, assignment, rng)
        if "stream" in assignment:  # a live battle: its answers are streamed (generated) before the vote
            _, events = client.request("GET", assignment["stream"], token=token)
            shown, whole = _streamed(str(events), len(assignment["outputs"]))
            if not whole:
                self.tally.add(failed_battles=1)  # withdrawn by the server, never counted: the next battle follows
                return done
            if self.answerer.key.knows(shown):  # the recorded models' answers: who wrote each is known
                assignment = {**assignment, "outputs": shown}
        body = {"assignment_id": assignment["assignment_id"], "idempotency_key": secrets.token_hex(16),
                "values": self.answerer.values(assignment, rng, who), "seconds": draw_seconds(rng, self.seconds)}
        status, answer = client.request("POST", "/api/v1/judgements", body, token=token, expect=(201, 200, 409))
        if status == 409 and _code(answer) == "lease_withdrawn":
            self.tally.add(withdrawn=1)  # the rule decided meanwhile: not stored, the next task follows
            return done
        if status != 201:
            raise RehearsalError(f"rehearsal: a new judgement of {pid} was answered {status}, not 201 (stored)")
        while answer.get("attempts_left"):  # a failed qualification check: answered again, as the participant would
            body = {**body, "idempotency_key": secrets.token_hex(16), "values": self.answerer.values(assignment, rng, who)}
            status, answer = client.request("POST", "/api/v1/judgements", body, token=token, expect=(201,))
            self.tally.add(retried=1)
        done += 1
        self.tally.add(judgements=1, active=int(done == 1))
        self.advance()
        return done

    def _type_prompt(self, client: ApiClient, token: str, assignment: dict[str, Any], rng: np.random.Generator) -> None:
        """A live battle whose prompt the participant types: one of :attr:`prompts` posted (another when it is
        refused, up to 5 times)."""
        if not self.prompts:
            raise RehearsalError("rehearsal: the server asks for a typed prompt, and the study has none to type "
                                 "(arena.prompts.typed is not set in the protocol the rehearsal read)")
        for _ in range(5):
            body = {"assignment_id": assignment["assignment_id"],
                    "prompt": self.prompts[int(rng.integers(len(self.prompts)))]}
            status, answer = client.request("POST", assignment["prompt"]["url"], body, token=token, expect=(201, 422))
            if status == 201:
                self.tally.add(typed=1)
                return
        raise RehearsalError(f"rehearsal: the server refused 5 typed prompts in a row ({_code(answer)}); "
                             "arena.prompts.max_repeats may be too low for the prompts the participants can type")

    def run(self, concurrency: int, deadline: float) -> None:
        self.deadline = deadline
        pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="rehearsal")
        futures: list[Future[None]] = [pool.submit(self.worker) for _ in range(concurrency)]
        try:
            done, pending = wait(futures, timeout=max(0.0, deadline - time.monotonic()), return_when=FIRST_EXCEPTION)
            for f in done:
                if f.exception() is not None:
                    raise f.exception()  # type: ignore[misc]
            if pending:
                raise RehearsalError(
                    f"rehearsal: timed out after {self.tally.judgements} judgements from {self.tally.entered} "
                    "participants; give a longer timeout"
                )
        finally:
            self.stop.set()
            pool.shutdown(wait=False, cancel_futures=True)


# --------------------------------------------------------------------------- the rehearsal


def _store_arg(study: StudyFolder, ws: Workspace, db: str | None) -> str:
    """The ``--db`` of the rehearsal server: never the study's own store."""
    from humeval.store.engine import database_url, is_sqlite

    if not db:
        return str(ws.root / "study.db")
    url = database_url(db, study.db_file)
    if is_sqlite(url) and Path(url.split("///", 1)[-1]).resolve() == study.db_file.resolve():
        raise RehearsalError(f"--db: {db} is the study's own store ({study.db_file}); a rehearsal needs a store "
                             "of its own. Leave --db out (results/rehearsal/study.db) or give an empty database")
    return db


def _prepare_store(study: StudyFolder, db: str) -> None:
    """Migrate and seed the rehearsal store; refuse one that already holds participants."""
    from humeval.store import Store

    store = Store.open(study, db)
    try:
        store.prepare()
        held = len(store.participants())
    finally:
        store.close()
    if held:
        raise RehearsalError(f"--db: {redact_url(db)} already holds {held} participant(s); a rehearsal needs an "
                             "empty store (a new database or PostgreSQL schema)")


def _add_rerun(study: StudyFolder, ws: Workspace, db: str, tasks: list[Any], lists: list[ParticipantList],
               ) -> tuple[bool, int, int, int]:
    """Collate the exported judgements as ``humeval collate`` does; when short, add the re-run lists it dealt to
    the store (as ``humeval serve`` does). Returns (complete, lists added, their tasks, the longest list's tasks):
    a re-run list holds up to ``items_per_participant`` tasks, more than a design's list may hold."""
    from humeval.analysis.workspace import read_study_judgements
    from humeval.judgements.exclusion import exclusions
    from humeval.platforms.keys import rerun_lists_file
    from humeval.stages.collate import collate_workspace, platform_outputs, workspace_key_file
    from humeval.store import Store

    key = workspace_key_file(study, ws)
    outputs = platform_outputs(study)
    judgements = read_study_judgements(ws)
    excluded = exclusions(judgements, study.protocol, lists)
    collation, _ = collate_workspace(ws, study.protocol, tasks, judgements, excluded, outputs, key_path=key)
    if collation.complete:
        return True, 0, 0, 0
    path = rerun_lists_file(key)
    store = Store.open(study, db)
    try:
        rerun = store.rerun_lists(path)  # without the battles whose failure would come again, as added
        added = store.add_rerun(path)
    finally:
        store.close()
    if not added:
        rerun = []
    return False, added, sum(len(r.tasks) for r in rerun), max((len(r.tasks) for r in rerun), default=0)


def _streamed(events: str, sides: int) -> tuple[list[str], bool]:
    """The answers a battle's stream showed, side by side (its ``piece`` events, in order), and whether it ended
    with ``done`` (both shown in full; else the server withdrew the battle)."""
    texts, head = [""] * sides, ""
    for block in events.strip().split("\n\n"):
        head, _, data = block.partition("\ndata: ")
        if head == "event: piece":
            piece = json.loads(data)
            texts[int(piece["side"])] += str(piece["text"])
    return texts, head == "event: done"


def _answer_key(study: StudyFolder, lists: list[ParticipantList]) -> AnswerKey:
    """Which system wrote each text of an item: the data's outputs; in a live arena (``arena.models``, whose data
    holds prompts only) the answers its ``recorded`` models give to each item's prompt, as they will be streamed."""
    texts = study.outputs().texts
    rows = [(item_id, system, text.output) for (item_id, system), text in texts.items()]
    arena = study.protocol.arena
    if arena is not None and arena.models:
        from humeval.arena.models import normalise_prompt, read_recorded

        prompts = {item_id: normalise_prompt(text.input) for (item_id, _), text in texts.items() if text.input}
        for m in arena.models:
            if m.kind == "recorded":
                answers = read_recorded(m, study.root)
                rows += [(item_id, m.name, answers[p]) for item_id, p in prompts.items() if p in answers]
    return AnswerKey.build(rows, lists)


@contextlib.contextmanager
def _progress_bar(enabled: bool, total: int | None, label: str) -> Iterator[Any]:
    if not enabled:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn("judgements"),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task("judgements", total=total)
        yield lambda: bar.advance(task)


@dataclass(frozen=True)
class RehearsalOptions:
    """What :func:`rehearse` is asked (each field as its keyword); :meth:`check` refuses a bad value and fills in
    the defaults that depend on the protocol (the seed, the crowd's population)."""

    participants: int | None = None
    kind: str = "static"
    seed: int | None = None
    db: str | None = None
    workers: int = 0
    concurrency: int = 8
    timeout: float = 600.0
    progress: bool = False
    population: Population | None = None
    rerun_rounds: int = 0
    #: the recorded votes a ``replay`` rehearsal replays (:func:`humeval.rehearsal.replay.read_crowd_votes`)
    crowd_votes: str | Path | None = None

    @property
    def the_seed(self) -> int:
        """The seed once :meth:`check` filled it in (the study's when none was given)."""
        if self.seed is None:
            raise RehearsalError("rehearse: the options' seed is read before RehearsalOptions.check filled it in")
        return self.seed

    def check(self, protocol: Any) -> RehearsalOptions:
        """These options checked against ``protocol``, with ``seed`` and ``population`` filled in."""
        kind, population = self.kind, self.population
        if kind not in REHEARSAL_KINDS:
            raise RehearsalError(f"rehearse: unknown kind '{kind}'. {did_you_mean(kind, REHEARSAL_KINDS)}")
        if (kind == "replay") != (self.crowd_votes is not None):
            raise RehearsalError("rehearse: the 'replay' kind replays the recorded votes of --crowd-votes FILE; give "
                                 f"both or neither (kind '{kind}', crowd votes {self.crowd_votes!r})")
        if population is not None and kind != "crowd":
            raise RehearsalError(f"rehearse: a population describes the 'crowd' kind, not '{kind}'")
        if self.participants is not None and self.participants < 1:
            raise RehearsalError(f"rehearse: participants must be at least 1, got {self.participants}")
        if not 1 <= self.concurrency <= 256:
            raise RehearsalError(f"rehearse: concurrency must be 1 to 256, got {self.concurrency}")
        if self.timeout <= 0:
            raise RehearsalError(f"rehearse: timeout must be positive, got {self.timeout}")
        if not 0 <= self.rerun_rounds <= 10:
            raise RehearsalError(f"rehearse: rerun_rounds must be 0 to 10, got {self.rerun_rounds}")
        if self.rerun_rounds and protocol.assignment.strategy != "list":
            raise RehearsalError("rehearse: re-run rounds need participant lists (assignment.strategy: list); "
                                 f"'{protocol.assignment.strategy}' assigns tasks until its labels are complete")
        seed = protocol.study.seed if self.seed is None else self.seed
        if isinstance(seed, bool) or seed < 0:
            raise RehearsalError(f"rehearse: seed must be a non-negative integer, got {seed!r}")
        if kind == "crowd" and population is None:
            population = Population()
        return replace(self, seed=seed, population=population)

    def parameters(self, ws: Workspace) -> dict[str, Any]:
        """The rehearsal's parameters as the logbook records them (the store without its secrets)."""
        out: dict[str, Any] = {"kind": self.kind, "participants": self.participants, "concurrency": self.concurrency,
               "workers": self.workers, "store": redact_url(str(ws.root / "study.db") if not self.db else self.db),
               "timeout": self.timeout, "rerun_rounds": self.rerun_rounds}
        if self.population is not None:
            out["population"] = self.population.to_json()
        if self.crowd_votes is not None:
            out["crowd_votes"] = str(self.crowd_votes)
        return out


@dataclass
class _Collected:
    """What the collection rounds of a rehearsal gathered (:func:`_collect`)."""

    tally: _Tally
    #: what the participant lists require (None for the labelling strategies)
    required: int | None
    #: the index of the next synthetic participant (they are numbered across rounds)
    next_index: int = 0
    rows: int = 0
    #: judgements of the first round, re-run lists added, the last round run
    first_round: int = 0
    rerun: int = 0
    rounds_run: int = 0
    #: places: participants given a list (``list`` strategy)
    places: int | None = None


def rehearse(
    study: StudyLike,
    *,
    participants: int | None = None,
    kind: str = "static",
    seed: int | None = None,
    db: str | None = None,
    workers: int = 0,
    concurrency: int = 8,
    timeout: float = 600.0,
    progress: bool = False,
    population: Population | None = None,
    rerun_rounds: int = 0,
    crowd_votes: str | Path | None = None,
) -> RehearsalResult:
    """Rehearse ``study`` with synthetic participants through the real server and store.

    ``participants``: how many synthetic participants enter (default: as many as the
    study needs: new ones keep coming until one is given no work). ``kind``: ``random``,
    ``static`` or ``normal`` dummy values (see :mod:`humeval.simulate.dummy`), or ``crowd``:
    a simulated crowd described by ``population`` (default :class:`Population`). ``seed``:
    of the values (default ``study.seed``). ``db``: an *empty* store for the rehearsal
    (default ``results/rehearsal/study.db``, recreated). ``workers``: server processes
    (``humeval serve --workers``; 0: its default). ``concurrency``: participants at work at
    once. ``timeout``: seconds for the whole collection (server start included).
    ``rerun_rounds``: after the collection, up to this many re-runs of what collation finds
    short (the tasks of excluded participants): collation deals the short tasks into re-run
    lists as ``humeval collate`` does, they are added to the store as ``humeval serve`` adds
    them (:meth:`humeval.store.Store.add_rerun`), and the server is started again for new
    participants; it stops once collation is complete. ``crowd_votes``: with ``kind="replay"``, a file of recorded
    votes that the participants replay worker by worker (:mod:`humeval.rehearsal.replay`); each vote served is
    written to ``results/rehearsal/replayed-votes.jsonl`` with its source.
    """
    options = RehearsalOptions(participants=participants, kind=kind, seed=seed, db=db, workers=workers,
                               concurrency=concurrency, timeout=timeout, progress=progress, population=population,
                               rerun_rounds=rerun_rounds, crowd_votes=crowd_votes)
    return rehearse_with(study, options)


def rehearse_with(study: StudyLike, options: RehearsalOptions) -> RehearsalResult:
    """:func:`rehearse` with ``options``: checked, then the lock gate, a fresh store, the collection rounds, the
    back half, one logbook entry."""
    study = as_study(study)
    options = options.check(study.protocol)
    lock = require_lock(study, "rehearse")
    _require_server()
    predicted = predicted_places(study)  # before this rehearsal replaces an earlier one's judgements
    ws = rehearsal_workspace(study, options.kind)
    store = _store_arg(study, ws, options.db)
    lists = study.read_lists()
    inputs = study.hashes([study.protocol_file, study.lists_file, study.tasks_file, *study.data_files()])
    started = time.monotonic()
    servers: list[_Server] = []
    with record_run(study, "rehearse", inputs=inputs, seed=options.seed, parameters=options.parameters(ws)) as run:
        try:
            tasks = study.read_tasks()
            systems = sorted({s for pl in lists for t in pl.tasks for s in t.systems})
            replay = VoteReplay(read_crowd_votes(options.crowd_votes)) if options.crowd_votes is not None else None
            answerer = Answerer(study.protocol, _answer_key(study, lists), options.kind, systems, options.population,
                                options.the_seed, replay)
            _fresh_store(study, ws, store, options.db)
            got = _collect(study, options, ws, store, tasks, lists, answerer, unlocked=lock is None,
                           deadline=started + options.timeout, servers=servers)
            if replay is not None:
                write_jsonl(ws.root / REPLAYED_VOTES, replay.served)
            summary, paths = back_half(ws, study, tasks, lists)
        finally:
            if servers:
                servers[-1].stop()
                run.entry["server"] = servers[-1].describe()
        elapsed = time.monotonic() - started
        summary |= _summary(got, answerer, predicted, elapsed)
        if answerer.replay is not None:
            summary["replayed"] = answerer.replay.counts()
        run.finish(study, [ws.judgements, *paths], summary=summary, signature=summary.get("signature"))
    return _result(options, got, summary, ws, store, answerer, elapsed)


def _require_server() -> None:
    """Refuse a rehearsal when the collection server's packages are not installed."""
    for module in ("uvicorn", "starlette"):
        if importlib.util.find_spec(module) is None:
            raise RehearsalError(f"rehearse: needs the collection server ({module} is missing); "
                                 "install it with `pip install 'humeval[server]'`")


def _fresh_store(study: StudyFolder, ws: Workspace, store: str, db: str | None) -> None:
    """An empty ``results/rehearsal/`` and a prepared store: a given ``db`` is refused before anything is removed
    when it is not empty; the default store inside the folder is recreated with it."""
    if db:
        _prepare_store(study, store)
    if ws.root.exists():
        shutil.rmtree(ws.root)
    ws.root.mkdir(parents=True)
    if not db:
        _prepare_store(study, store)


def _collect(study: StudyFolder, options: RehearsalOptions, ws: Workspace, store: str, tasks: list[Any],
             lists: list[ParticipantList], answerer: Answerer, *, unlocked: bool, deadline: float,
             servers: list[_Server]) -> _Collected:
    """The first collection, then up to ``rerun_rounds`` re-runs of what the collation found short (as
    `humeval collate` and `serve` do); the store's judgements exported after each round."""
    protocol = study.protocol
    required = sum(len(pl.tasks) for pl in lists) if protocol.assignment.strategy == "list" else None
    max_tasks = max((len(pl.tasks) for pl in lists), default=0) if required is not None else \
        max(protocol.design.items_per_participant, 1)
    got = _Collected(_Tally(), required)
    for round_no in range(options.rerun_rounds + 1):
        total = required
        if round_no:
            complete, added, total, longest = _add_rerun(study, ws, store, tasks, lists)
            if complete or not added:
                break
            got.rerun += added
            max_tasks = max(max_tasks, longest)
        server = _Server(study, store, options.workers, ws.root / "server.log", unlocked=unlocked)
        servers.append(server)
        _collect_round(server, study, options, store, answerer, got, round_no, total, max_tasks, deadline)
        got.rows = write_store_judgements(study, ws.judgements, store)
        got.rounds_run = round_no
        if not round_no:
            got.first_round = got.tally.judgements
    return got


def _collect_round(server: _Server, study: StudyFolder, options: RehearsalOptions, store: str, answerer: Answerer,
                   got: _Collected, round_no: int, total: int | None, max_tasks: int, deadline: float) -> None:
    """One round: the server started, the crowd at work until it is given nothing more, the server stopped and
    its store checked against the judgements it acknowledged."""
    server.start(deadline)
    label = f"rehearsal ({options.kind})" if not round_no else f"re-run {round_no} ({options.kind})"
    places = _Places(study, store) if got.required is not None else None
    try:
        with _progress_bar(options.progress, total, label) as advance:
            crowd = _Crowd(server.port, answerer, options.kind, options.the_seed,
                           options.participants if not round_no else None, max_tasks, advance, server.admin_token,
                           got.tally, got.next_index, study.protocol.platform, places, prompts_to_type(study))
            crowd.run(options.concurrency, deadline)
        if places is not None:
            got.places = places.started()  # the store counts every round's places
    finally:
        if places is not None:
            places.close()
    got.next_index = crowd.next_index
    admin = ApiClient(HOST, server.port, _REQUEST_TIMEOUT)
    try:
        _, stored = admin.request("GET", "/api/v1/admin/judgements", token=server.admin_token)
    finally:
        admin.close()
    server.stop()
    if len(stored) != got.tally.judgements + got.tally.retried:
        raise RehearsalError(f"rehearsal: the server acknowledged {got.tally.judgements} judgements and "
                             f"{got.tally.retried} second attempts, but its store holds {len(stored)}")


def _summary(got: _Collected, answerer: Answerer, predicted: float | None, elapsed: float) -> dict[str, Any]:
    """What the logbook entry's summary adds to the back half's: the collection's counts and times."""
    tally = got.tally
    collection = (tally.last - tally.first) if tally.first is not None and tally.last is not None else 0.0
    return {"participants": tally.entered, "participants_active": tally.active,
            "judgements": tally.judgements, "judgements_required": got.required, "rows": got.rows,
            "withdrawn": tally.withdrawn, "retried": tally.retried, "failed_battles": tally.failed_battles,
            "typed_prompts": tally.typed,
            "seconds": round(collection, 3),
            "items_per_second": round(tally.judgements / collection, 1) if collection > 0 else 0.0,
            "elapsed": round(elapsed, 3), "ambiguous_outputs": answerer.key.ambiguous,
            "rerun_lists": got.rerun, "rerun_rounds": got.rounds_run,
            "rerun_judgements": tally.judgements - got.first_round,
            "places": got.places, "places_predicted": predicted, "turned_away": tally.turned,
            "sessions_cut": tally.cut}


def _result(options: RehearsalOptions, got: _Collected, summary: dict[str, Any], ws: Workspace, store: str,
            answerer: Answerer, elapsed: float) -> RehearsalResult:
    tally = got.tally
    analyzed = "signature" in summary
    collection = (tally.last - tally.first) if tally.first is not None and tally.last is not None else 0.0
    return RehearsalResult(
        kind=options.kind, seed=options.the_seed, participants=tally.entered, participants_active=tally.active,
        judgements=tally.judgements, judgements_required=got.required, rows=got.rows, seconds=collection,
        items_per_second=summary["items_per_second"], elapsed=elapsed, workspace=ws.root,
        store=redact_url(store), complete=summary["complete"], participants_excluded=summary["participants_excluded"],
        report=ws.report_html if analyzed else None, results=ws.results if analyzed else None,
        signature=summary.get("signature"), analysis_error=summary.get("analysis_error"),
        ambiguous_outputs=answerer.key.ambiguous, rerun_lists=got.rerun, summary=summary,
        places=got.places, places_predicted=summary["places_predicted"], turned_away=tally.turned,
        sessions_cut=tally.cut,
    )
