"""A local fake of Prolific's API: the documented endpoints humeval uses, with injectable faults.

Endpoints (Prolific API reference): ``POST /api/v1/studies/``, ``GET``/``PATCH /api/v1/studies/{id}/``
(after publishing only ``total_available_places`` and ``internal_name`` change, and places only grow;
raising them makes a study whose places were all submitted ACTIVE again), ``POST /api/v1/studies/{id}/transition/``
(``STOP`` is final: the study awaits review and no transition or wave follows),
``GET /api/v1/studies/{id}/submissions/``, ``GET /api/v1/submissions/{id}/``,
``POST /api/v1/submissions/{id}/transition/``, ``POST /api/v1/submissions/bonus-payments/``,
``POST /api/v1/bulk-bonus-payments/{id}/pay/`` (not idempotent: every call pays),
``POST /api/v1/submissions/bulk-approve/`` (``submission_ids``, or ``study_id`` with ``participant_ids``;
at most ``BULK_APPROVE_MAX`` ids) and the hooks. Every request needs ``Authorization: Token <TOKEN>``
(401 otherwise); an unknown id answers 404.

Hooks, as Prolific's reference describes them: ``POST /api/v1/hooks/secrets/`` creates (or replaces)
the workspace's one signing secret; ``POST /api/v1/hooks/subscriptions/`` needs that secret to exist,
an ``https://`` target and a known event type, and answers the subscription **disabled**
(``is_enabled: false``) with its confirmation secret in the ``X-Hook-Secret`` header;
``POST /api/v1/hooks/subscriptions/{id}/`` with ``{"secret": <that header>}`` enables it (another
secret: 400); ``GET`` lists them (``workspace_id``, ``is_enabled``), ``DELETE`` removes one.
``fake.state.deliver(event_type, payload)`` posts a signed event (``X-Prolific-Request-Signature``:
base64 HMAC-SHA256 of timestamp + body under the workspace secret) to every **enabled** subscription
of that event type, and to no other.

Places: ``fake.state.reserve(study_id, pid)`` is a participant taking a place from Prolific's study list:
refused (None) unless the study is ACTIVE and a place is free (submissions RETURNED, TIMED-OUT or REJECTED
give their place back); when every place is taken and none is ACTIVE any more the study goes to
AWAITING REVIEW, as Prolific does.

Faults: ``fake.fail(method, path_regex, kind)`` makes the next matching request answer
``429`` (with ``Retry-After: <state.retry_after>``, ``0`` by default), ``500``, ``401``, or ``timeout``: the request is carried
out, then the answer is held longer than the client waits (the worst case for a payment).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.threaded import ThreadedServer

TOKEN = "fake-prolific-token-9f8e7d"
#: submission statuses whose place Prolific gives to another participant
FREED = ("RETURNED", "TIMED-OUT", "REJECTED")
HOLD_SECONDS = 15.0
#: the event types the fake knows (GET /api/v1/hooks/event-types/ lists Prolific's)
EVENT_TYPES = ("submission.status.change", "study.status.change")
#: the most ids one bulk approval takes (Prolific recommends at most 1,000)
BULK_APPROVE_MAX = 1000


@dataclass
class FakeState:
    studies: dict[str, dict[str, Any]] = field(default_factory=dict)
    submissions: dict[str, dict[str, Any]] = field(default_factory=dict)
    bulks: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: participant id -> cents paid, one entry per payment actually made
    payments: list[tuple[str, int]] = field(default_factory=list)
    log: list[tuple[str, str, int]] = field(default_factory=list)
    retry_after: str = "0"
    #: every total_available_places sent by PATCH
    patches: list[int] = field(default_factory=list)
    faults: list[tuple[str, re.Pattern[str], str]] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)
    #: workspace id -> its one hook secret {"id", "value", "workspace_id"}
    secrets: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: subscription id -> {"id", "event_type", "target_url", "workspace_id", "is_enabled", "confirmation"}
    subscriptions: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: every delivery attempted: (subscription id, target url, status code)
    deliveries: list[tuple[str, str, int]] = field(default_factory=list)
    #: every bulk approval: the submission ids it approved
    bulk_approvals: list[list[str]] = field(default_factory=list)

    def deliver(self, event_type: str, payload: dict[str, Any], *,
                rewrite: Callable[[str], str] = lambda url: url) -> list[int]:
        """Post a signed event to every enabled subscription of ``event_type`` (``rewrite``: the target URL as
        reached from here, e.g. the public https address mapped to a local server); the status codes."""
        codes = []
        for sub in list(self.subscriptions.values()):
            if sub["event_type"] != event_type or not sub["is_enabled"]:
                continue
            body = json.dumps({"event_type": event_type, **payload}).encode()
            ts = str(int(time.time()))
            key = self.secrets[sub["workspace_id"]]["value"].encode()
            signature = base64.b64encode(hmac.new(key, ts.encode() + body, hashlib.sha256).digest()).decode()
            r = httpx.post(rewrite(sub["target_url"]), content=body, timeout=30,
                           headers={"X-Prolific-Request-Timestamp": ts, "X-Prolific-Request-Signature": signature,
                                    "Content-Type": "application/json"})
            self.deliveries.append((sub["id"], sub["target_url"], r.status_code))
            codes.append(r.status_code)
        return codes

    def fail(self, method: str, path: str, kind: str) -> None:
        self.faults.append((method, re.compile(path), kind))

    def add_submission(self, study_id: str, participant_id: str, session_id: str, status: str = "ACTIVE") -> None:
        self.submissions[session_id] = {"id": session_id, "participant_id": participant_id, "study_id": study_id,
                                        "status": status, "started_at": "2026-11-23T10:00:00Z", "completed_at": None,
                                        "study_code": None, "bonus_payments": []}

    def taken(self, study_id: str) -> int:
        """Places taken: submissions that hold one (not returned, timed out or rejected)."""
        return sum(s["study_id"] == study_id and s["status"] not in FREED for s in self.submissions.values())

    def reserve(self, study_id: str, participant_id: str) -> str | None:
        """A participant takes a place; the submission (session) id, or None when the study is not ACTIVE or full."""
        with self.lock:
            study = self.studies[study_id]
            if study["status"] != "ACTIVE" or self.taken(study_id) >= study["total_available_places"]:
                return None
            session = f"S{len(self.submissions):05d}{secrets.token_hex(4)}"
            self.add_submission(study_id, participant_id, session)
            return session

    def finish(self, session_id: str, status: str, code: str | None = None) -> None:
        """A participant submits (``AWAITING REVIEW`` with their code) or returns (``RETURNED``)."""
        with self.lock:
            sub = self.submissions[session_id]
            sub.update(status=status, study_code=code)
            study = self.studies[sub["study_id"]]
            subs = [s for s in self.submissions.values() if s["study_id"] == study["id"]]
            if (study["status"] == "ACTIVE" and self.taken(study["id"]) >= study["total_available_places"]
                    and not any(s["status"] == "ACTIVE" for s in subs)):
                study["status"] = "AWAITING REVIEW"  # every place submitted: Prolific closes the study


def make_app(state: FakeState) -> Starlette:
    def _fault(request: Request) -> str | None:
        with state.lock:
            for i, (method, pattern, kind) in enumerate(state.faults):
                if method == request.method and pattern.search(request.url.path):
                    del state.faults[i]
                    return kind
        return None

    def endpoint(fn: Any) -> Any:
        async def wrapped(request: Request) -> Response:
            kind = _fault(request)
            if request.headers.get("authorization") != f"Token {TOKEN}" or kind == "401":
                response: Response = JSONResponse({"error": {"detail": "Invalid token.", "error_code": 140100}}, 401)
            elif kind == "429":
                response = JSONResponse({"error": {"detail": "Request was throttled."}}, 429, headers={"Retry-After": state.retry_after})
            elif kind == "500":
                response = JSONResponse({"error": {"detail": "Internal error"}}, 500)
            else:
                body = await request.json() if request.method in ("POST", "PATCH") and await request.body() else None
                response = fn(request, body)
                if kind == "timeout":
                    state.log.append((request.method, request.url.path, response.status_code))
                    await asyncio.sleep(HOLD_SECONDS)  # carried out; the answer comes after the client gave up
                    return response
            state.log.append((request.method, request.url.path, response.status_code))
            return response
        return wrapped

    def not_found(what: str) -> JSONResponse:
        return JSONResponse({"error": {"detail": f"{what} not found"}}, 404)

    def create_study(request: Request, body: Any) -> Response:
        missing = [k for k in ("name", "description", "external_study_url", "completion_codes", "total_available_places",
                               "estimated_completion_time", "reward") if k not in body]
        if missing:
            return JSONResponse({"error": {"detail": f"missing {missing}"}}, 400)
        screenouts = [a for c in body["completion_codes"] for a in c.get("actions", [])
                      if a.get("action") == "FIXED_SCREEN_OUT_PAYMENT"]
        if len(screenouts) > 1:  # a custom screening action is limited to a single code
            return JSONResponse({"error": {"detail": "one FIXED_SCREEN_OUT_PAYMENT code at most"}}, 400)
        for a in screenouts:
            cents, slots = a.get("fixed_screen_out_reward"), a.get("slots")
            if not (isinstance(cents, int) and 0 < cents < body["reward"] and isinstance(slots, int) and slots > 0):
                return JSONResponse({"error": {"detail": "fixed_screen_out_reward below the reward and slots > 0"}}, 400)
        sid = secrets.token_hex(12)
        state.studies[sid] = {**body, "id": sid, "status": "UNPUBLISHED"}
        return JSONResponse(state.studies[sid], 201)

    def transition_study(request: Request, body: Any) -> Response:
        study = state.studies.get(request.path_params["id"])
        if study is None:
            return not_found("study")
        nxt = {"PUBLISH": "ACTIVE", "PAUSE": "PAUSED", "START": "ACTIVE", "STOP": "AWAITING REVIEW"}.get(body.get("action"))
        if nxt is None:
            return JSONResponse({"error": {"detail": "bad action"}}, 400)
        if study.get("stopped"):
            return JSONResponse({"error": {"detail": "the study was stopped; a stop is final"}}, 400)
        study["status"] = nxt
        study["stopped"] = body.get("action") == "STOP"
        return JSONResponse(study)

    def get_study(request: Request, body: Any) -> Response:
        study = state.studies.get(request.path_params["id"])
        if study is None:
            return not_found("study")
        return JSONResponse({**study, "places_taken": state.taken(study["id"])})

    def update_study(request: Request, body: Any) -> Response:
        study = state.studies.get(request.path_params["id"])
        if study is None:
            return not_found("study")
        if study["status"] != "UNPUBLISHED":
            fixed = sorted(set(body) - {"total_available_places", "internal_name"})
            if fixed:
                return JSONResponse({"error": {"detail": f"cannot change {fixed} after publishing"}}, 400)
        places = body.get("total_available_places", study["total_available_places"])
        if not isinstance(places, int) or places < study["total_available_places"]:
            return JSONResponse({"error": {"detail": f"places can only be increased (now "
                                                     f"{study['total_available_places']}), got {places!r}"}}, 400)
        if study.get("stopped") and places != study["total_available_places"]:
            return JSONResponse({"error": {"detail": "the study was stopped"}}, 400)
        with state.lock:
            study.update(body)
            if study["status"] == "AWAITING REVIEW" and state.taken(study["id"]) < places:
                study["status"] = "ACTIVE"  # more places: Prolific makes the study active again
        state.patches.append(places)
        return JSONResponse({**study, "places_taken": state.taken(study["id"])})

    def list_submissions(request: Request, body: Any) -> Response:
        sid = request.path_params["id"]
        if sid not in state.studies:
            return not_found("study")
        subs = [s for s in state.submissions.values() if s["study_id"] == sid]
        page = int(request.query_params.get("page", "1"))
        size = 2  # small pages: the client must follow _links.next
        chunk = subs[(page - 1) * size: page * size]
        nxt = f"{request.url.scheme}://{request.url.netloc}{request.url.path}?page={page + 1}" if page * size < len(subs) else None
        return JSONResponse({"results": [{k: v for k, v in s.items() if k != "bonus_payments"} for s in chunk],
                             "_links": {"next": {"href": nxt}}})

    def get_submission(request: Request, body: Any) -> Response:
        sub = state.submissions.get(request.path_params["id"])
        if sub is None:
            return not_found("submission")
        # "Retrieve a submission" names the participant `participant` (the list names it `participant_id`)
        return JSONResponse({"participant": sub["participant_id"], "entered_code": sub["study_code"],
                             **{k: v for k, v in sub.items() if k not in ("participant_id", "study_code")}})

    def transition_submission(request: Request, body: Any) -> Response:
        sub = state.submissions.get(request.path_params["id"])
        if sub is None:
            return not_found("submission")
        action = body.get("action")
        if action == "REJECT" and (len(body.get("message", "")) < 100 or not body.get("rejection_category")):
            return JSONResponse({"error": {"detail": "message of 100+ chars and rejection_category required"}}, 400)
        if action not in ("APPROVE", "REJECT"):
            return JSONResponse({"error": {"detail": "bad action"}}, 400)
        if sub["status"] == "AWAITING REVIEW":
            sub["status"] = "APPROVED" if action == "APPROVE" else "REJECTED"
            sub["review"] = body
        return JSONResponse(sub)

    def setup_bonus(request: Request, body: Any) -> Response:
        rows = [line.split(",") for line in body.get("csv_bonuses", "").strip().splitlines()]
        study = [s for s in state.submissions.values() if s["study_id"] == body.get("study_id")]
        pids = {s["participant_id"]: s for s in study}
        bad = [r[0] for r in rows if r[0] not in pids]
        if bad or not rows:
            return JSONResponse({"error": {"detail": f"invalid ids: {bad}"}}, 400)
        bid = secrets.token_hex(12)
        state.bulks[bid] = {"rows": [(r[0], round(float(r[1]) * 100)) for r in rows], "study": body["study_id"]}
        total = sum(c for _, c in state.bulks[bid]["rows"])
        return JSONResponse({"id": bid, "study": body["study_id"], "amount": total, "fees": 0, "total_amount": total}, 201)

    def pay_bonus(request: Request, body: Any) -> Response:
        bulk = state.bulks.get(request.path_params["id"])
        if bulk is None:
            return not_found("bulk bonus payment")
        for pid, cents in bulk["rows"]:  # every call pays again: the real endpoint is not idempotent
            state.payments.append((pid, cents))
            for s in state.submissions.values():
                if s["participant_id"] == pid and s["study_id"] == bulk["study"]:
                    s["bonus_payments"].append(cents)
        return Response(status_code=202)

    def bulk_approve(request: Request, body: Any) -> Response:
        body = body or {}
        if "submission_ids" in body:
            ids = body["submission_ids"]
            if not isinstance(ids, list) or "participant_ids" in body or "study_id" in body:
                return JSONResponse({"error": {"detail": "submission_ids alone, or study_id with participant_ids"}}, 400)
            subs = [state.submissions.get(str(i)) for i in ids]
        else:
            pids, study = body.get("participant_ids"), body.get("study_id")
            if not isinstance(pids, list) or study not in state.studies:
                return JSONResponse({"error": {"detail": "study_id and participant_ids required"}}, 400)
            subs = [next((s for s in state.submissions.values() if s["study_id"] == study and s["participant_id"] == p),
                         None) for p in pids]
        if not subs or len(subs) > BULK_APPROVE_MAX or any(s is None for s in subs):
            return JSONResponse({"error": {"detail": f"1 to {BULK_APPROVE_MAX} known submissions"}}, 400)
        for sub in subs:
            if sub["status"] == "AWAITING REVIEW":
                sub["status"] = "APPROVED"
                sub["review"] = {"action": "APPROVE", "bulk": True}
        state.bulk_approvals.append([s["id"] for s in subs])
        return JSONResponse("The request to bulk approve has been made successfully.")

    def hook_error(detail: str, status: int = 400) -> JSONResponse:
        return JSONResponse({"error": {"detail": detail}}, status)

    def create_secret(request: Request, body: Any) -> Response:
        ws = (body or {}).get("workspace_id")
        if not isinstance(ws, str) or not ws:
            return hook_error("workspace_id required")
        state.secrets[ws] = {"id": secrets.token_hex(12), "value": secrets.token_urlsafe(32), "workspace_id": ws}
        return JSONResponse(state.secrets[ws], 201)

    def list_secrets(request: Request, body: Any) -> Response:
        ws = request.query_params.get("workspace_id", "")
        return JSONResponse({"results": [{"id": s["id"], "workspace_id": s["workspace_id"]}
                                         for s in state.secrets.values() if s["workspace_id"] == ws]})

    def public(sub: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in sub.items() if k != "confirmation"}

    def subscribe(request: Request, body: Any) -> Response:
        body = body or {}
        ws, event, target = body.get("workspace_id"), body.get("event_type"), body.get("target_url")
        if ws not in state.secrets:
            return hook_error("create a secret for the workspace before subscribing")
        if event not in EVENT_TYPES:
            return hook_error(f"unknown event type {event!r}")
        if not isinstance(target, str) or not target.startswith("https://"):
            return hook_error("target_url must use https://")
        sid = secrets.token_hex(12)
        state.subscriptions[sid] = {"id": sid, "event_type": event, "target_url": target, "workspace_id": ws,
                                    "is_enabled": False, "confirmation": secrets.token_urlsafe(24)}
        return JSONResponse(public(state.subscriptions[sid]), 201,
                            headers={"X-Hook-Secret": state.subscriptions[sid]["confirmation"]})

    def confirm(request: Request, body: Any) -> Response:
        sub = state.subscriptions.get(request.path_params["id"])
        if sub is None:
            return not_found("subscription")
        given = (body or {}).get("secret")
        if not isinstance(given, str) or not hmac.compare_digest(given, sub["confirmation"]):
            return hook_error("the secret does not match this subscription")
        sub["is_enabled"] = True
        return JSONResponse(public(sub))

    def list_subscriptions(request: Request, body: Any) -> Response:
        ws = request.query_params.get("workspace_id", "")
        enabled = request.query_params.get("is_enabled")
        rows = [public(s) for s in state.subscriptions.values() if s["workspace_id"] == ws
                and (enabled is None or str(s["is_enabled"]).lower() == enabled.lower())]
        return JSONResponse({"results": rows, "_links": {"next": {"href": None}}})

    def delete_subscription(request: Request, body: Any) -> Response:
        if state.subscriptions.pop(request.path_params["id"], None) is None:
            return not_found("subscription")
        return Response(status_code=204)

    return Starlette(routes=[
        Route("/api/v1/studies/", endpoint(create_study), methods=["POST"]),
        Route("/api/v1/studies/{id}/", endpoint(get_study), methods=["GET"]),
        Route("/api/v1/studies/{id}/", endpoint(update_study), methods=["PATCH"]),
        Route("/api/v1/studies/{id}/transition/", endpoint(transition_study), methods=["POST"]),
        Route("/api/v1/studies/{id}/submissions/", endpoint(list_submissions), methods=["GET"]),
        Route("/api/v1/submissions/bonus-payments/", endpoint(setup_bonus), methods=["POST"]),
        Route("/api/v1/submissions/{id}/", endpoint(get_submission), methods=["GET"]),
        Route("/api/v1/submissions/{id}/transition/", endpoint(transition_submission), methods=["POST"]),
        Route("/api/v1/bulk-bonus-payments/{id}/pay/", endpoint(pay_bonus), methods=["POST"]),
        Route("/api/v1/submissions/bulk-approve/", endpoint(bulk_approve), methods=["POST"]),
        Route("/api/v1/hooks/secrets/", endpoint(create_secret), methods=["POST"]),
        Route("/api/v1/hooks/secrets/", endpoint(list_secrets), methods=["GET"]),
        Route("/api/v1/hooks/subscriptions/", endpoint(subscribe), methods=["POST"]),
        Route("/api/v1/hooks/subscriptions/", endpoint(list_subscriptions), methods=["GET"]),
        Route("/api/v1/hooks/subscriptions/{id}/", endpoint(confirm), methods=["POST"]),
        Route("/api/v1/hooks/subscriptions/{id}/", endpoint(delete_subscription), methods=["DELETE"]),
    ])


class FakeProlific(ThreadedServer):
    """The fake API served by uvicorn in a thread on 127.0.0.1 (real sockets, so timeouts are real)."""

    def __init__(self) -> None:
        self.state = FakeState()
        super().__init__(make_app(self.state))
