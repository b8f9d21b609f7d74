"""The Prolific commands: create, publish/pause/start/stop, status, review, bonus.

Each function takes a locked :class:`~humeval.study.StudyFolder` and a
:class:`~humeval.platforms.prolific.client.ProlificClient` (a dry-run client prints the
requests instead of sending them) and appends one logbook entry (``prolific-<command>``)
for a real run, with the requests sent (method, path, answer) and never the token.

A dry run sends nothing, not even a read: the submissions it reviews, releases or pays a
bonus for are derived from the store (each participant who entered from Prolific is a
submission whose id is their ``SESSION_ID``; ``AWAITING REVIEW`` once their list is done).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from humeval.errors import PlatformError, StoreError
from humeval.files import read_json, write_json
from humeval.platforms.prolific.client import ProlificClient, ProlificError, UncertainOutcome
from humeval.platforms.prolific.study import state_file, study_body
from humeval.study import StudyFolder, StudyLike, as_study

if TYPE_CHECKING:
    from humeval.costs import Budget
    from humeval.protocol.models import ExclusionRule

__all__ = [
    "TRANSITIONS",
    "BonusResult",
    "CreateResult",
    "ReviewDecision",
    "StatusRow",
    "prolific_bonus",
    "prolific_create",
    "prolific_review",
    "prolific_status",
    "prolific_transition",
    "rejection_message",
]

#: study transitions of Prolific's API (``POST /api/v1/studies/{id}/transition/``)
TRANSITIONS = ("PUBLISH", "PAUSE", "START", "STOP")
#: submission statuses whose place Prolific gives to another participant
RELEASED = ("RETURNED", "TIMED-OUT")
BULK_SIZE = 100
#: submissions approved by one bulk approval (Prolific's reference recommends at most 1,000 ids per request)
APPROVE_BATCH = 1000
_PLACEHOLDER = "<study id from prolific create>"


# --------------------------------------------------------------------------- shared pieces


def _locked(study: StudyFolder, command: str) -> None:
    from humeval.lock import require_lock

    require_lock(study, f"prolific {command}", required=True,
                 what="runs a study on Prolific from the locked protocol only")


def study_id_of(study: StudyFolder, client: ProlificClient) -> str:
    """The Prolific study id written by ``prolific create`` (a placeholder in a dry run before it)."""
    path = state_file(study)
    if path.is_file():
        return str(read_json(path)["study_id"])
    if client.dry_run is not None:
        return _PLACEHOLDER
    raise PlatformError(f"{path}: no Prolific study yet for {study.root}; run `humeval prolific create {study.root}` first")


@contextmanager
def _logged(study: StudyFolder, command: str, client: ProlificClient, **params: Any) -> Iterator[dict[str, Any]]:
    """A logbook entry for a real run (none for a dry run); yields the summary to fill in."""
    summary: dict[str, Any] = {}
    if client.dry_run is not None:
        yield summary
        return
    from humeval.logbook import record_run
    from humeval.protocol.signature import signature

    inputs = study.hashes([study.protocol_file])
    with record_run(study, f"prolific-{command}", inputs=inputs, seed=study.protocol.study.seed) as run:
        yield summary
        run.finish(study, [], summary=summary, parameters={**params, "requests": client.sent},
                   signature=signature(inputs[0]["sha256"], study.protocol.study.seed))


def _store(study: StudyFolder, db: str | None) -> Any:
    from humeval.store.migrations import migrate
    from humeval.store.store import Store

    if not db and not study.db_file.is_file():
        raise StoreError(f"{study.db_file}: no store yet; start collection with `humeval serve {study.root}` first")
    store = Store.open(study, db)
    with store.write_engine.connect() as conn, conn.begin():
        migrate(conn)
    return store


def _store_participants(store: Any) -> dict[str, dict[str, Any]]:
    """Participants of the store: platform, parameters, list, tasks done, completed."""
    from sqlalchemy import func, select

    from humeval.store import schema as s

    def read(conn: Any) -> dict[str, dict[str, Any]]:
        a, p = s.assignments.c, s.participants.c
        done = dict(conn.execute(select(a.participant_id, func.count()).where(a.status == "done")
                                 .group_by(a.participant_id)).all())
        return {r.participant_id: {"platform": r.platform, "params": json.loads(r.params or "{}"),
                                   "list_id": r.list_id or "", "done": int(done.get(r.participant_id, 0)),
                                   "completed": r.completed_at is not None}
                for r in conn.execute(select(s.participants).order_by(p.created_at))}

    return store.read(read)


def _submissions(client: ProlificClient, study_id: str, people: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The study's submissions: from Prolific, or (dry run) derived from the store."""
    listed = client.pages(f"/api/v1/studies/{study_id}/submissions/")
    if client.dry_run is None:
        return listed
    return [{"id": p["params"].get("SESSION_ID", ""), "participant_id": pid,
             "status": "AWAITING REVIEW" if p["completed"] else "ACTIVE", "derived": True}
            for pid, p in people.items() if p["platform"] == "prolific"]


# --------------------------------------------------------------------------- create / transitions


@dataclass(frozen=True)
class CreateResult:
    """``places``: the places opened (every list, or the first wave with dynamic stopping); ``lists``: all lists."""

    study_id: str
    budget: Budget
    body: dict[str, Any]
    places: int = 0
    lists: int = 0


def prolific_create(study: StudyLike, *, client: ProlificClient, budget: Budget,
                    show_budget: Callable[[Budget], None] | None = None,
                    show_wave: Callable[[int, int, Any], None] | None = None) -> CreateResult:
    """Create the draft study on Prolific from the locked protocol (once; publish it with ``publish``), paying
    ``budget`` (:func:`humeval.costs.launch_budget`: its reward per list, places and estimated minutes).

    With dynamic stopping (a watched comparison, ``list`` strategy) the study opens the first wave of
    places only (:func:`humeval.platforms.prolific.study.first_wave`); ``prolific sync`` opens the next.
    ``show_budget`` is called with the budget, and ``show_wave`` with ``(places, lists, recruitment or None)``,
    before any request is sent.
    """
    study = as_study(study)
    from humeval.platforms.prolific.study import first_wave

    _locked(study, "create")
    path = state_file(study)
    if path.is_file():
        raise PlatformError(f"{path}: this study already has a Prolific study ({read_json(path)['study_id']}); "
                            "a second one would recruit the same lists twice")
    places, fresh = first_wave(study)
    body = study_body(study, budget, places)
    if show_budget is not None:
        show_budget(budget)
    if show_wave is not None:
        show_wave(places, budget.places, fresh)
    with _logged(study, "create", client) as summary:
        made = client.post("/api/v1/studies/", body)
        if client.dry_run is not None:
            return CreateResult(_PLACEHOLDER, budget, body, places, budget.places)
        if not isinstance(made, dict) or not made.get("id"):
            raise ProlificError(f"Prolific: POST /api/v1/studies/ answered without a study id: {str(made)[:200]}")
        study_id = str(made["id"])
        waves = [] if fresh is None else [{"at": time.time(), "from": 0, "places": places, "target": fresh.target,
                                           "started": 0, "active": 0}]
        write_json(path, {"study_id": study_id, "status": made.get("status", "UNPUBLISHED"), "budget": budget.to_json(),
                          "places": places, "lists": budget.places, "waves": waves})
        summary.update({"study_id": study_id, **budget.to_json(), "first_wave": places if fresh is not None else None})
    return CreateResult(study_id, budget, body, places, budget.places)


def prolific_transition(study: StudyLike, action: str, *, client: ProlificClient) -> dict[str, Any]:
    """``PUBLISH``, ``PAUSE``, ``START`` (resume) or ``STOP`` the Prolific study; return Prolific's answer."""
    study = as_study(study)
    action = action.upper()
    if action not in TRANSITIONS:
        from humeval.errors import did_you_mean

        raise PlatformError(f"unknown study transition {action!r}. {did_you_mean(action, TRANSITIONS)}")
    _locked(study, action.lower())
    study_id = study_id_of(study, client)
    with _logged(study, action.lower(), client, study_id=study_id) as summary:
        answer = client.post(f"/api/v1/studies/{study_id}/transition/", {"action": action})
        status = (answer or {}).get("status", "") if isinstance(answer, dict) else ""
        summary.update({"study_id": study_id, "action": action, "status": status})
        if client.dry_run is None:
            path = state_file(study)
            write_json(path, {**read_json(path), "status": status} | ({"stopped": True} if action == "STOP" else {}))
    return answer or {}


# --------------------------------------------------------------------------- status


@dataclass(frozen=True)
class StatusRow:
    participant_id: str
    submission_id: str
    status: str
    entered: bool
    list_id: str
    done: int
    completed: bool
    action: str

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def prolific_status(study: StudyLike, *, client: ProlificClient, db: str | None = None) -> list[StatusRow]:
    """Submissions on Prolific merged with the store; a returned or timed-out participant's list is
    released at once (the next participant continues it)."""
    study = as_study(study)
    from humeval.store.live import release_list
    from humeval.store.sql import sql_of

    _locked(study, "status")
    study_id = study_id_of(study, client)
    store = _store(study, db)
    try:
        people = _store_participants(store)
        rows: list[StatusRow] = []
        with _logged(study, "status", client, study_id=study_id) as summary:
            for sub in _submissions(client, study_id, people):
                pid = str(sub.get("participant_id") or sub.get("participant") or "")
                p = people.get(pid)
                action = ""
                if sub.get("status") in RELEASED and p is not None and p["list_id"] and not p["completed"]:
                    if client.dry_run is None:
                        store.write(lambda conn, pid=pid, st=sub["status"]: _release(conn, pid, st, release_list, sql_of))
                    action = "list released"
                rows.append(StatusRow(pid, str(sub.get("id", "")), str(sub.get("status", "")), p is not None,
                                      p["list_id"] if p else "", p["done"] if p else 0,
                                      bool(p and p["completed"]), action))
            counts: dict[str, int] = {}
            for r in rows:
                counts[r.status] = counts.get(r.status, 0) + 1
            summary.update({"study_id": study_id, "submissions": len(rows), "statuses": counts,
                            "released": sum(r.action == "list released" for r in rows)})
    finally:
        store.close()
    return rows


def _release(conn: Any, pid: str, status: str, release_list: Any, sql_of: Any) -> None:
    db = sql_of(conn)
    release_list(db, pid)
    db.run("INSERT INTO events (at, kind, participant_id, data) VALUES (:now, 'platform_released', :pid, :data)",
           {"now": time.time(), "pid": pid, "data": json.dumps({"platform": "prolific", "status": status})})


# --------------------------------------------------------------------------- review


@dataclass(frozen=True)
class ReviewDecision:
    participant_id: str
    submission_id: str
    action: str  # approve | reject | leave
    rule: str = ""
    category: str = ""
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def rejection_message(rule: Any) -> str:
    """The message a rejected participant reads (at least 100 characters, as Prolific requires; it names the
    preregistered rule and never a task, a system or another participant)."""
    texts = {
        "attention": lambda r: f"more than {r.max_failures} of the attention checks were answered other than they asked",
        "min-time": lambda r: f"a median time per task below {r.seconds:g} seconds",
        "straight-lining": lambda r: f"the same answer to every one of at least {r.min_tasks} tasks",
        "same-side": lambda r: (f"the output shown on the same side chosen in {'every' if r.max_share >= 1 else f'at least {r.max_share:.0%} of the'} "
                                f"comparisons (at least {r.min_tasks})"),
        "inconsistent": lambda r: f"more than {r.max_failures} repeated tasks answered differently the second time",
        "vote-outlier": lambda r: ("choices in the comparisons that a statistical test found unlike those of every other "
                                   f"participant, at error level {r.alpha:g}"),
    }
    return (f"Your submission is rejected under a rule declared before data collection began and applied the same "
            f"way to every participant: {texts[rule.rule](rule)}. If you believe this is a mistake, please message "
            "us through Prolific.")


def _decisions(study: StudyFolder, store: Any, submissions: list[dict[str, Any]],
               people: dict[str, dict[str, Any]]) -> list[ReviewDecision]:
    import pandas as pd

    from humeval.judgements import JUDGEMENT_COLUMNS
    from humeval.judgements.exclusion import exclusions

    protocol = study.protocol
    settings = protocol.platform.prolific
    frame = pd.DataFrame(store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
    found = exclusions(frame, protocol, study.read_lists()) if not frame.empty else pd.DataFrame(
        columns=["scope", "participant_id", "rule", "detail"])
    people_out = found[found["scope"] == "participant"]
    by_pid: dict[str, list[tuple[str, str]]] = {}
    for r in people_out.itertuples(index=False):
        by_pid.setdefault(str(r.participant_id), []).append((str(r.rule), str(r.detail)))
    judged = set(frame["participant_id"].astype(str))
    out = []
    for sub in submissions:
        if sub.get("status") != "AWAITING REVIEW":
            continue
        pid, sid = str(sub.get("participant_id", "")), str(sub.get("id", ""))
        p = people.get(pid)
        hits = by_pid.get(pid, [])
        rejecting = [(rule, detail) for rule, detail in hits if rule in settings.reject]
        if rejecting:
            rule, detail = rejecting[0]
            out.append(ReviewDecision(pid, sid, "reject", rule, settings.rejection_category(rule), detail))
        elif p is None or pid not in judged:
            out.append(ReviewDecision(pid, sid, "leave", reason="no judgements in the store: review by hand"))
        elif not p["completed"]:
            out.append(ReviewDecision(pid, sid, "leave", reason=f"list not completed ({p['done']} tasks): review by hand"))
        else:
            note = "; ".join(f"excluded from the analysis by {rule} (not a rejection rule)" for rule, _ in hits)
            out.append(ReviewDecision(pid, sid, "approve", reason=note))
    return out


def prolific_review(study: StudyLike, *, client: ProlificClient, db: str | None = None) -> list[ReviewDecision]:
    """Approve every submission awaiting review whose list is complete; reject only a participant excluded by a
    preregistered rule listed in ``platform.prolific.reject``, with its rejection category; leave the rest.

    Approvals go in bulk (``POST /api/v1/submissions/bulk-approve/`` with ``submission_ids``, at most
    :data:`APPROVE_BATCH` per request; Prolific approves them asynchronously); each rejection is its own
    request (its message). A screened-out submission (``SCREENED OUT``, paid by Prolific) is not reviewed."""
    study = as_study(study)
    _locked(study, "review")
    study_id = study_id_of(study, client)
    rules: dict[str, ExclusionRule] = {r.rule: r for r in study.protocol.exclusion}
    store = _store(study, db)
    try:
        people = _store_participants(store)
        with _logged(study, "review", client, study_id=study_id) as summary:
            decisions = _decisions(study, store, _submissions(client, study_id, people), people)
            approve = [d.submission_id for d in decisions if d.action == "approve"]
            for i in range(0, len(approve), APPROVE_BATCH):  # one request per batch, by submission id
                client.post("/api/v1/submissions/bulk-approve/", {"submission_ids": approve[i:i + APPROVE_BATCH]})
            for d in decisions:
                if d.action == "reject":
                    client.post(f"/api/v1/submissions/{d.submission_id}/transition/",
                                {"action": "REJECT", "message": rejection_message(rules[d.rule]),
                                 "rejection_category": d.category})
            summary.update({"study_id": study_id, "approved": sum(d.action == "approve" for d in decisions),
                            "rejected": sum(d.action == "reject" for d in decisions),
                            "left": sum(d.action == "leave" for d in decisions),
                            "decisions": [d.to_json() for d in decisions]})
    finally:
        store.close()
    return decisions


# --------------------------------------------------------------------------- bonus


@dataclass
class BonusResult:
    study_id: str
    amount: float
    rows: list[dict[str, Any]] = field(default_factory=list)
    paid_now: list[str] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    unconfirmed: list[str] = field(default_factory=list)


def _paid_on(submission: dict[str, Any] | None, cents: int) -> bool:
    """Whether a submission (``GET /api/v1/submissions/{id}/``) shows a bonus of ``cents``."""
    paid = (submission or {}).get("bonus_payments") or []
    return any(math.isclose(float(x), cents, abs_tol=0.5) for x in paid)


def prolific_bonus(study: StudyLike, *, client: ProlificClient, db: str | None = None,
                   participants: list[str] | None = None) -> BonusResult:
    """Pay ``platform.prolific.bonus`` to every approved participant (or those named), never twice.

    Unsettled rows of an earlier run are reconciled first (see :mod:`humeval.platforms.prolific.ledger`).
    """
    study = as_study(study)
    from humeval.platforms.prolific import ledger

    _locked(study, "bonus")
    settings = study.protocol.platform.prolific
    if settings.bonus <= 0:
        raise PlatformError(f"{study.protocol_file}: platform.prolific.bonus is 0: declare the bonus per approved "
                            f"participant (in {study.protocol.pay.currency}) before paying one")
    cents = round(settings.bonus * 100)
    study_id = study_id_of(study, client)
    store = _store(study, db)
    result = BonusResult(study_id, cents / 100)
    dry = client.dry_run is not None
    try:
        people = _store_participants(store)
        with _logged(study, "bonus", client, study_id=study_id, amount=cents / 100) as summary:
            rows = store.read(lambda conn: ledger.read_bonuses(conn, study_id))
            # 1. reconcile what an earlier run left unsettled: never pay it again blindly
            for row in rows:
                if row.state in ("paying", "unconfirmed"):
                    sub = client.get(f"/api/v1/submissions/{row.submission_id}/")
                    if dry:
                        continue
                    if _paid_on(sub, row.amount_cents):
                        store.write(lambda conn, r=row: ledger.set_state(conn, study_id, [r.participant_id], "paid",
                                                                          detail="confirmed on the submission"))
                        result.confirmed.append(row.participant_id)
                    else:
                        store.write(lambda conn, r=row: ledger.set_state(
                            conn, study_id, [r.participant_id], "unconfirmed",
                            detail="not on the submission yet; Prolific pays asynchronously"))
            # 2. intents for approved participants not yet in the ledger
            subs = _submissions(client, study_id, people)
            if dry:
                approved = [(d.participant_id, d.submission_id) for d in _decisions(study, store, subs, people)
                            if d.action == "approve"]
            else:
                approved = [(str(s["participant_id"]), str(s["id"])) for s in subs if s.get("status") == "APPROVED"]
            if participants:
                unknown = sorted(set(participants) - {p for p, _ in approved})
                if unknown:
                    raise PlatformError(f"bonus: not approved on Prolific: {', '.join(unknown[:5])}")
                approved = [(p, s) for p, s in approved if p in set(participants)]
            known = {r.participant_id for r in rows}
            if dry:
                todo = [p for p, _ in approved if p not in known]
                _dry_pay(client, study_id, todo, cents)
                result.rows = [{"participant_id": p, "amount": cents / 100, "state": "would pay"} for p in todo]
                summary.update({"study_id": study_id})
                return result
            store.write(lambda conn: ledger.add_intents(conn, study_id, approved, cents))
            # 3. set up a bulk bonus payment for every intent (setting up pays nothing: safe to repeat)
            rows = store.read(lambda conn: ledger.read_bonuses(conn, study_id))
            intents = [r for r in rows if r.state == "intent"]
            for i in range(0, len(intents), BULK_SIZE):
                chunk = intents[i:i + BULK_SIZE]
                csv = "".join(f"{r.participant_id},{r.amount_cents / 100:.2f}\n" for r in chunk)
                made = client.post("/api/v1/submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": csv})
                bulk = str((made or {}).get("id", ""))
                if not bulk:
                    raise ProlificError(f"Prolific: bonus set-up answered without an id: {str(made)[:200]}")
                store.write(lambda conn, c=chunk, b=bulk: ledger.set_state(
                    conn, study_id, [r.participant_id for r in c], "created", bulk_id=b, only_from=("intent",)))
            # 4. pay each bulk once: `paying` is committed before the request, the answer settles it
            rows = store.read(lambda conn: ledger.read_bonuses(conn, study_id))
            bulks: dict[str, list[str]] = {}
            for r in rows:
                if r.state == "created" and r.bulk_id:
                    bulks.setdefault(r.bulk_id, []).append(r.participant_id)
            for bulk, pids in bulks.items():
                moved = store.write(lambda conn, p=pids, b=bulk: ledger.set_state(conn, study_id, p, "paying",
                                                                                  only_from=("created",)))
                if moved != len(pids):
                    raise StoreError(f"bonus: bulk {bulk} changed while paying it; run `humeval prolific bonus` again")
                try:
                    client.post(f"/api/v1/bulk-bonus-payments/{bulk}/pay/", None, safe=False)
                except UncertainOutcome as exc:
                    store.write(lambda conn, p=pids, e=str(exc): ledger.set_state(conn, study_id, p, "unconfirmed", detail=e))
                    result.unconfirmed += pids
                    continue
                except ProlificError as exc:  # a clear refusal: nothing was paid, the bulk may be paid later
                    store.write(lambda conn, p=pids, e=str(exc): ledger.set_state(conn, study_id, p, "created", detail=e))
                    raise
                store.write(lambda conn, p=pids: ledger.set_state(conn, study_id, p, "paid",
                                                                  detail="pay request accepted"))
                result.paid_now += pids
            # 5. reconcile at once what this run could not settle
            for pid in list(result.unconfirmed):
                row = next(r for r in rows if r.participant_id == pid)
                if _paid_on(client.get(f"/api/v1/submissions/{row.submission_id}/"), row.amount_cents):
                    store.write(lambda conn, p=pid: ledger.set_state(conn, study_id, [p], "paid",
                                                                     detail="confirmed on the submission"))
                    result.unconfirmed.remove(pid)
                    result.confirmed.append(pid)
            final = store.read(lambda conn: ledger.read_bonuses(conn, study_id))
            result.unconfirmed = [r.participant_id for r in final if r.state == "unconfirmed"]
            result.rows = [r.to_json() for r in final]
            summary.update({"study_id": study_id, "paid_now": len(result.paid_now), "confirmed": len(result.confirmed),
                            "unconfirmed": len(result.unconfirmed),
                            "states": {s: sum(r.state == s for r in final) for s in ledger.STATES}})
    finally:
        store.close()
    return result


def _dry_pay(client: ProlificClient, study_id: str, pids: list[str], cents: int) -> None:
    for i in range(0, len(pids), BULK_SIZE):
        csv = "".join(f"{p},{cents / 100:.2f}\n" for p in pids[i:i + BULK_SIZE])
        client.post("/api/v1/submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": csv})
        client.post("/api/v1/bulk-bonus-payments/<bulk id from the set-up>/pay/", None, safe=False)
