"""The JSON API's contract: every request and response body once, as pydantic models.

The handlers of :mod:`humeval.server.api` validate request bodies with these models
(:func:`parse`), and :mod:`humeval.server.openapi` publishes them as ``openapi.json``; the
bounds and patterns come from :mod:`humeval.wire`. Two bodies depend on the study and are
built from its protocol: the entry body (the routes it accepts,
:func:`humeval.platforms.entry.entry_model`) and the ``values`` of a judgement (its
criteria, :func:`values_schema`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from humeval.protocol.models import Protocol
from humeval.server.errors import InvalidValue
from humeval.wire import (
    ASSIGNMENT_ID_MAX,
    IDEMPOTENCY_KEY_PATTERN,
    MAX_COMMENT,
    MAX_INVITES,
    MAX_SECONDS,
    PARTICIPANT_ID_PATTERN,
)

__all__ = [
    "Assignment",
    "Consented",
    "Error",
    "ErrorDetail",
    "Invite",
    "Invites",
    "InvitesIn",
    "Judgement",
    "JudgementIn",
    "Progress",
    "Status",
    "Task",
    "Token",
    "parse",
    "values_schema",
]

M = TypeVar("M", bound=BaseModel)
_IN = ConfigDict(extra="forbid", strict=True)

ParticipantId = Annotated[str, Field(pattern=PARTICIPANT_ID_PATTERN, description="a participant id")]


# -- requests ----------------------------------------------------------------------------------
class JudgementIn(BaseModel):
    """``POST /api/v1/judgements``: one judgement of an assignment (idempotent per key)."""

    model_config = _IN
    assignment_id: str = Field(min_length=1, max_length=ASSIGNMENT_ID_MAX, description="from GET /api/v1/next")
    idempotency_key: str = Field(pattern=IDEMPOTENCY_KEY_PATTERN,
                                 description="chosen by the client, new per answer (a UUID works); a retry repeats it")
    values: dict[str, Any] = Field(min_length=1, description="{criterion: value} for every criterion of the assignment")
    seconds: float | None = Field(None, ge=0, le=MAX_SECONDS, allow_inf_nan=False,
                                  description="time spent on the assignment (default: measured by the server)")
    comment: str = Field("", max_length=MAX_COMMENT,
                         description="optional free-text comment (only when presentation.comments is on)")
    next: bool = Field(False, description="also give the participant their next assignment, in the answer's `next` "
                       "(one request per task instead of a submit and a GET /api/v1/next)")


class InvitesIn(BaseModel):
    """``POST /api/v1/admin/invites``: the participant ids to invite."""

    model_config = _IN
    participant_ids: list[ParticipantId] = Field(min_length=1, max_length=MAX_INVITES)


# -- responses ---------------------------------------------------------------------------------
class ErrorDetail(BaseModel):
    code: str = Field(description="machine-readable reason, e.g. invalid_value, unknown_assignment")
    message: str = Field(description="what was wrong, where, and what would be valid")
    field: str | None = Field(None, description="the request field at fault (only when one is)")


class Error(BaseModel):
    """The one error shape of every 4xx and 5xx answer."""

    error: ErrorDetail


class Token(BaseModel):
    token: str = Field(description="the bearer token of the participant's session")
    participant_id: str
    consent_required: bool = Field(description="POST /api/v1/consent before GET /api/v1/next")


class Consented(BaseModel):
    consented: Literal[True]


class Progress(BaseModel):
    done: int = Field(ge=0)
    total: int = Field(ge=0)
    finished: bool
    completed: bool
    reason: Literal["wait", "closed"] | None = Field(
        None, description="why a participant who has done nothing has no task: `wait` (the stopping rule admits no "
                          "new session now; places may reopen) or `closed` (no session is left)")


class Task(BaseModel):
    """What kind of screen an assignment needs; nothing that tells a check or a repeat from a task."""

    family: str = Field(description="single (one output) or pair (two outputs side by side)")


class PracticeNumber(BaseModel):
    number: int = Field(ge=1)
    of: int = Field(ge=1)


class Assignment(BaseModel):
    """``GET /api/v1/next``: the participant's current assignment (outputs in display order, no system names)."""

    assignment_id: str
    task: Task
    criteria: list[dict[str, Any]] = Field(description="the protocol's criteria for this assignment (name, type, question, ...)")
    outputs: list[str] = Field(description="texts in display order; 2afc answers name them A, B")
    formats: list[Literal["text", "markdown", "conversation"]] = Field(
        description="the format of each output (same order): text, markdown or conversation")
    input: str
    references: str
    progress: Progress
    expires_at: str = Field(description="ISO 8601 time the lease ends (it is renewed by a submit)")
    practice: PracticeNumber | None = Field(None, description="only for a practice item (`design.practice`): its "
                                            "number and how many there are; answering it gives `feedback`")


class PracticeFeedback(BaseModel):
    correct: bool | None = Field(description="whether the answer is the one the practice item names; null when it "
                                 "names none (the explanation only)")
    expected: Any = Field(description="the answer the item names (a pair's A or B, a scale's point, ...), or null")
    explanation: str = Field(description="the researcher's explanation, to show the participant")


class Judgement(BaseModel):
    judgement_id: int
    idempotency_key: str
    assignment_id: str
    values: dict[str, Any]
    revision: int = Field(ge=0, description="0 for the first answer, then 1, 2, ... for edits")
    submitted_at: str
    attempts_left: int | None = Field(None, ge=1, description="only after an answer to a qualification check that "
                                      "is not the one it asks for, when `design.qualification_attempts` leaves "
                                      "another attempt: how many; answer the same assignment again (a new "
                                      "idempotency key) before anything else, or the attempts are given up")
    feedback: PracticeFeedback | None = Field(None, description="only after an answer to a practice item "
                                              "(`design.practice`, an assignment with `practice`): what to show "
                                              "the participant before the next task")
    next: Assignment | None = Field(None, description="only when the request asked for it (`next: true`): the "
                                    "participant's next assignment, as GET /api/v1/next gives it; null when there is "
                                    "none (nothing left, or none now: GET /api/v1/status and GET /api/v1/next tell)")


class Completion(BaseModel):
    code: str
    url: str
    screened_out: bool


class Places(BaseModel):
    """``GET /api/v1/places``: whether a participant on the waitlist can start now (no token needed)."""

    open: int = Field(ge=0, description="places a participant can take now (0 while the stopping rule admits no "
                                        "session; lists of other tasks count)")
    finished: bool = Field(description="no place can open any more: stop waiting")
    waitlist_seconds: float = Field(ge=0, description="how long the study asks a participant to wait for a place "
                                                      "(`stopping.waitlist_seconds`; 0: no waitlist)")
    poll_seconds: float = Field(gt=0, description="how often to ask again while waiting")


class Status(BaseModel):
    participant_id: str
    progress: Progress
    completion: Completion | None = Field(None, description="once the participant completed their work")


class Invite(BaseModel):
    participant_id: str
    url: str


class Invites(BaseModel):
    invites: list[Invite]


# -- validation ----------------------------------------------------------------------------------
def parse(model: type[M], data: dict[str, Any]) -> M:
    """``data`` as ``model``; the first problem as 422 ``invalid_value`` naming its field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".") or "body"
        message = "unknown field" if first["type"] == "extra_forbidden" else first["msg"][:200]
        if first["type"] == "extra_forbidden":
            message += f"; expected {', '.join(model.model_fields)}"
        raise InvalidValue("invalid_value", f"{field[:120]}: {message}", field=field[:120]) from None


def values_schema(protocol: Protocol) -> dict[str, Any]:
    """The JSON Schema of a judgement's ``values`` for the study's criteria (each assignment asks some of them)."""
    props: dict[str, Any] = {}
    for c in protocol.criteria:
        props[c.name] = c.task.values_schema(c)
    return {"type": "object", "minProperties": 1, "additionalProperties": False, "properties": props,
            "description": "{criterion: value}: 2afc A/B (or an enabled tie, both-good, both-bad), likert an integer, "
                           "slider and magnitude a number, rankme one number per output, esa {score, spans}"}
