"""Places opened in waves as the stopping rule needs them; the Prolific study stopped at the decision.

With dynamic stopping and the ``list`` strategy a participant list is a paid session, and the
store admits sessions of a watched comparison only while the rule can use them
(:meth:`humeval.store.store.Store.recruitment`). This module turns that into Prolific places:

=====================  ====================================================================
when                   what is sent
=====================  ====================================================================
``prolific create``    ``total_available_places`` = the first wave: the recruitment target of
                       a fresh store (the sessions the rule admits before any outcome),
                       rounded up to ``crowd.wave``; a fixed design opens every list
``prolific sync``      ``PATCH /api/v1/studies/{id}/`` with ``total_available_places`` raised
                       to the target (places used + sessions wanted, less the places Prolific
                       gave back after a return or a time-out), rounded up to a multiple of
                       ``crowd.wave``, by at least one wave, never above the lists
                       the rule admits no session now (it waits for the sessions in progress,
                       or it decided): ``PAUSE``, so that nobody takes a place only to be told
                       to wait; those in progress finish and get their code
                       the rule admits sessions again after such a pause: ``START``
                       nothing wanted, nothing in progress, nothing can reopen: ``STOP``
=====================  ====================================================================

Prolific only lets places grow (the number sent is the new total, not an increment) and a stop
is final, so a wave is sent only upward and ``STOP`` only when ``Recruitment.finished``. Every
change appends a logbook entry (``prolific-wave``, ``-pause``, ``-start``, ``-stop``) and is
kept in ``.humeval/prolific.json`` (``places``, ``waves``, ``status``), so a sync run again, or
after a restart, sends nothing twice; a sync that changes nothing writes nothing. Each step is
recorded before it is sent and reconciled with Prolific's study on the next sync, so a crash at
any point recovers (:mod:`humeval.platforms.prolific.intents`). Sources:
docs/prolific.md, "What follows Prolific's documentation".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from humeval.errors import PlatformError
from humeval.files import read_json, write_json
from humeval.platforms.prolific import intents
from humeval.platforms.prolific.study import dynamic, state_file, wave_places
from humeval.study import StudyFolder, StudyLike, as_study

if TYPE_CHECKING:
    from humeval.platforms.prolific.client import ProlificClient
    from humeval.store.live import Recruitment

__all__ = ["SyncResult", "prolific_sync", "released_places", "sync_every"]

#: study statuses a transition (PAUSE, STOP) is sent from; Prolific itself moves a study whose places are all
#: submitted to AWAITING REVIEW (raising places makes it ACTIVE again), and a stopped study goes there too
_OPEN = ("ACTIVE", "PAUSED", "")


def released_places(store: Any) -> int:
    """Participants whose list was released after they returned or timed out on a platform: Prolific gave
    their place to someone else, and the list is wanted again, so the recruitment target counts them twice."""
    from sqlalchemy import text

    sql = text("SELECT count(DISTINCT participant_id) FROM events WHERE kind = 'platform_released'")
    return int(store.read(lambda conn: conn.execute(sql).scalar()) or 0)


@dataclass(frozen=True)
class SyncResult:
    """One sync: ``places`` open on Prolific after it, ``target`` the places the store asks for, ``action``
    what was sent (``""``, ``wave``, ``pause``, ``start``, ``stop``), ``recruitment`` the store's view."""

    study_id: str
    opened: int
    places: int
    target: int
    lists: int
    action: str
    status: str
    recruitment: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("study_id", "opened", "places", "target", "lists", "action", "status")} | {
            k: self.recruitment.get(k) for k in ("started", "active", "wanted", "decided", "finished")}


def prolific_sync(study: StudyLike, *, client: ProlificClient, db: str | None = None) -> SyncResult:
    """Open the places the stopping rule can use now (a wave), pause at the decision while sessions are in
    progress, and stop the Prolific study when nothing is wanted or in progress (see the module docstring)."""
    study = as_study(study)
    from humeval.platforms.prolific.actions import _locked, _logged, _store, study_id_of

    _locked(study, "sync")
    study_id = study_id_of(study, client)
    path = state_file(study)
    state = read_json(path) if path.is_file() else {}
    store = _store(study, db)
    try:
        rec = store.recruitment()
        released = released_places(store)
    finally:
        store.close()
    lists = len(study.read_lists())
    remote = client.get(f"/api/v1/studies/{study_id}/")
    remote = remote if isinstance(remote, dict) else {}
    opened = int(remote.get("total_available_places") or state.get("places") or 0)
    status = str(remote.get("status") or state.get("status") or "")
    target = max(rec.target - released, 0)
    places = opened if not dynamic(rec) else wave_places(target, opened, study.protocol.crowd.wave, lists)
    if client.dry_run is None:
        state = _reconcile(study, client, study_id, remote, state, rec)
    action = ""
    if state.get("stopped"):  # a stop is final: never a wave after it (raising places would reopen the study)
        return SyncResult(study_id, opened, opened, target, lists, "", status, rec.to_json())
    if places > opened:
        action = "wave"
        intent = _intend(study, client, "wave", study_id, {"from": opened, "places": places, "target": target})
        with _logged(study, "wave", client, study_id=study_id) as summary:
            answer = client.patch(f"/api/v1/studies/{study_id}/", {"total_available_places": places})
            status = str((answer or {}).get("status", status)) if isinstance(answer, dict) else status
            summary.update({"study_id": study_id, "from": opened, "places": places, "target": target,
                            "released": released, **_counts(rec)})
        if client.dry_run is None:
            state = _keep_wave(study, state, intent, opened, places, target, status, rec)
        if status == "PAUSED" and state.get("paused_by") == "sync":  # the places are for now: resume
            status = _transition(study, client, study_id, "START", rec, state)
    elif rec.finished and status != "UNPUBLISHED":
        action = "stop"  # from AWAITING REVIEW (every place submitted) nothing is sent: Prolific closed it already
        status = _transition(study, client, study_id, "STOP", rec, state, send=status in _OPEN)
    elif dynamic(rec) and rec.wanted == 0 and status == "ACTIVE":
        action = "pause"  # the rule admits no session now: whoever took a free place would only be told to wait
        status = _transition(study, client, study_id, "PAUSE", rec, state)
    elif dynamic(rec) and rec.wanted > 0 and status == "PAUSED" and state.get("paused_by") == "sync":
        action = "start"  # the rule admits sessions again (never a pause made by hand)
        status = _transition(study, client, study_id, "START", rec, state)
    elif client.dry_run is None and opened and state.get("places") != opened:
        write_json(path, {**state, "places": opened, "status": status})  # adopt Prolific's count (set by hand)
    return SyncResult(study_id, opened, places, target, lists, action, status, rec.to_json())


def _counts(rec: Recruitment) -> dict[str, Any]:
    return {"started": rec.started, "active": rec.active, "wanted": rec.wanted, "decided": rec.decided,
            "finished": rec.finished}


def _intend(study: StudyFolder, client: ProlificClient, step: str, study_id: str, details: dict[str, Any] | None = None) -> str:
    """Record a step before it is sent (nothing for a dry run, which sends nothing)."""
    return "" if client.dry_run is not None else intents.record(study, step, study_id, **(details or {}))


def _keep_wave(study: StudyFolder, state: dict[str, Any], intent: str, opened: int, places: int, target: int, status: str,
               rec: Recruitment) -> dict[str, Any]:
    """Keep a wave sent (``.humeval/prolific.json``), then mark its intent done."""
    waves = [*state.get("waves", []), {"at": time.time(), "from": opened, "places": places, "target": target,
                                        "started": rec.started, "active": rec.active}]
    state = {**state, "places": places, "waves": waves, "status": status, "last_step": intent}
    write_json(state_file(study), state)
    intents.finish(study, intent, "sent")
    return state


def _keep_transition(study: StudyFolder, state: dict[str, Any], intent: str, action: str, status: str) -> dict[str, Any]:
    """Keep a transition sent, then mark its intent done (a transition not sent has no intent)."""
    state = {**state, "status": status, "stopped": action == "STOP", "paused_by": "sync" if action == "PAUSE" else "",
             "last_step": intent or state.get("last_step", "")}
    write_json(state_file(study), state)
    if intent:
        intents.finish(study, intent, "sent")
    return state


def _transition(study: StudyFolder, client: ProlificClient, study_id: str, action: str, rec: Recruitment,
                state: dict[str, Any], *, send: bool = True) -> str:
    from humeval.platforms.prolific.actions import _logged

    intent = _intend(study, client, action.lower(), study_id) if send else ""
    with _logged(study, action.lower(), client, study_id=study_id, by="stopping rule") as summary:
        status = str(state.get("status", ""))
        if send:
            answer = client.post(f"/api/v1/studies/{study_id}/transition/", {"action": action})
            status = str((answer or {}).get("status", "")) if isinstance(answer, dict) else ""
        summary.update({"study_id": study_id, "action": action, "status": status, "by": "stopping rule",
                        "places": state.get("places"), **_counts(rec),
                        "decisions": {a.comparison: a.outcome for a in rec.comparisons}})
    if client.dry_run is None:
        _keep_transition(study, state, intent, action, status)
    return status


def _reconcile(study: StudyFolder, client: ProlificClient, study_id: str, remote: dict[str, Any], state: dict[str, Any],
               rec: Recruitment) -> dict[str, Any]:
    """The step a crash left pending (recorded, maybe sent, not kept), reconciled with Prolific's study ``remote``
    (:mod:`humeval.platforms.prolific.intents`); returns the state with it kept when Prolific shows it."""
    from humeval.platforms.prolific.actions import _logged

    intent = intents.pending(study)
    if intent is None:
        return state
    if state.get("last_step") == intent["intent"]:  # kept; only its done line was lost
        intents.finish(study, intent["intent"], "sent")
        return state
    if intent["study_id"] != study_id or not intents.applied(intent, remote):
        intents.finish(study, intent["intent"], "absent")  # never carried out: the sync decides again
        return state
    step, status = intent["step"], str(remote.get("status") or "")
    with _logged(study, step, client, study_id=study_id, recovered=True) as summary:
        asked: dict[str, Any] = {k: intent[k] for k in ("from", "places", "target") if k in intent}
        summary.update({"study_id": study_id, "recovered": True, "status": status, **_counts(rec), **asked})
    if step == "wave":
        return _keep_wave(study, state, intent["intent"], int(intent["from"]), int(intent["places"]),
                          int(intent["target"]), status, rec)
    return _keep_transition(study, state, intent["intent"], step.upper(), status)


def _stopped(study: StudyFolder) -> bool:
    path = state_file(study)
    return path.is_file() and bool(read_json(path).get("stopped"))


def sync_every(study: StudyFolder, seconds: float, *, client_factory: Callable[[], ProlificClient], db: str | None = None,
               stop: threading.Event | None = None, say: Callable[[str], None] = print) -> SyncResult | None:
    """Run :func:`prolific_sync` every ``seconds`` until the Prolific study is stopped (or ``stop`` is set).

    An error of one sync (Prolific unreachable, a refused request) is said and the next sync tries again;
    the last result is returned.
    """
    if seconds <= 0:
        raise PlatformError(f"--every: seconds between syncs, more than 0; got {seconds}")
    stop = stop or threading.Event()
    last: SyncResult | None = None
    while not stop.is_set():
        try:
            with client_factory() as client:
                last = prolific_sync(study, client=client, db=db)
            if last.action:
                say(f"prolific sync: {last.action}: {last.places} places (target {last.target}, "
                    f"{last.recruitment.get('started')} used, {last.recruitment.get('active')} in progress); "
                    f"study {last.status}")
            if last.action == "stop" or (client_factory is not None and _stopped(study)):
                break
        except Exception as exc:  # noqa: BLE001 (a background loop says what failed and tries again)
            say(f"prolific sync failed ({type(exc).__name__}): {exc}; trying again in {seconds:g} s")
        stop.wait(seconds)
    return last
