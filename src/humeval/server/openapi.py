"""``openapi.json``: the OpenAPI 3.1 description of the JSON API, generated from :mod:`humeval.server.contract`.

Served at ``GET /api/v1/openapi.json`` for the study the server runs (the entry body lists
the routes that study accepts; a judgement's ``values`` its criteria). Nothing here spells a
field, bound or pattern: the schemas are the pydantic models' own.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from humeval._version import __version__
from humeval.platforms.entry import entry_model
from humeval.protocol.models import Protocol
from humeval.server import contract as c

__all__ = ["openapi_spec"]

_REF = "#/components/schemas/{model}"
_WHY = {"400": "malformed request (not JSON, nested too deep, invalid Unicode)", "401": "missing or invalid token",
        "403": "forbidden (origin, entry route, consent)", "404": "unknown resource", "409": "conflict",
        "413": "body too large", "415": "not application/json", "422": "a field breaks the contract",
        "429": "too many new participants from one address (Retry-After)",
        "503": "the study is full or its store cannot write (Retry-After)"}


def _clean(node: Any) -> Any:
    """Pydantic's schemas without ``default: null`` (an optional field is absent, never null) and titles."""
    if isinstance(node, dict):
        return {k: _clean(v) for k, v in node.items() if not (k == "default" and v is None) and k != "title"}
    if isinstance(node, list):
        return [_clean(v) for v in node]
    return node


def _json(name: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": _REF.format(model=name)}}}}


def _errors(*codes: int) -> dict[str, Any]:
    return {str(code): _json("Error", _WHY[str(code)]) for code in codes}


def _body(name: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": {"$ref": _REF.format(model=name)}}}}


def _any(description: str, kind: str = "object") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"type": kind}}}}


def openapi_spec(protocol: Protocol) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the API for a study with ``protocol``."""
    enter = entry_model(protocol.platform)
    inputs: list[type[BaseModel]] = [enter, c.JudgementIn, c.InvitesIn]
    outputs: list[type[BaseModel]] = [c.Error, c.Token, c.Consented, c.Assignment, c.Judgement, c.Status, c.Places,
                                       c.Invites]
    _, defs = models_json_schema([(m, "validation") for m in inputs] + [(m, "serialization") for m in outputs],
                                 ref_template=_REF)
    schemas = _clean(defs["$defs"])
    schemas["JudgementIn"]["properties"]["values"] = c.values_schema(protocol)
    if not protocol.presentation.comments:  # the study takes no comment: the spec says so
        schemas["JudgementIn"]["properties"].pop("comment", None)
    participant: list[dict[str, list[str]]] = [{"participant": []}]
    admin: list[dict[str, list[str]]] = [{"admin": []}]
    common = (400, 413, 415, 422)
    return {
        "openapi": "3.1.0",
        "info": {"title": "humeval collection API", "version": f"1 (humeval {__version__})",
                 "description": "The participant flow of a humeval study: enter, get the next assignment, submit "
                                "judgements. Every error is {\"error\": {\"code\", \"message\", \"field\"?}}."},
        "components": {
            "securitySchemes": {
                "participant": {"type": "http", "scheme": "bearer", "description": "token from POST /api/v1/enter"},
                "admin": {"type": "http", "scheme": "bearer", "description": "the server's admin token"},
            },
            "schemas": schemas,
        },
        "paths": {
            "/api/v1/enter": {"post": {
                "operationId": "enter", "summary": "Enter the study through one of the routes it accepts; a bearer token",
                "requestBody": _body(enter.__name__),
                "responses": {"200": _json("Token", "the session token"), **_errors(*common, 401, 403, 429, 503)}}},
            "/api/v1/consent": {"post": {
                "operationId": "consent", "summary": "Record the participant's consent", "security": participant,
                "responses": {"200": _json("Consented", "consent recorded"), **_errors(401, 503)}}},
            "/api/v1/next": {"get": {
                "operationId": "next", "summary": "The current or next assignment", "security": participant,
                "responses": {"200": _json("Assignment", "an assignment"),
                              "204": {"description": "nothing left for this participant",
                                      "headers": {"Humeval-Reason": {
                                          "description": "for a participant who has done nothing: `wait` (the "
                                                         "stopping rule admits no new session now; places may reopen) "
                                                         "or `closed` (no session is left)",
                                          "schema": {"type": "string", "enum": ["wait", "closed"]}}}},
                              **_errors(401, 403, 503)}}},
            "/api/v1/judgements": {"post": {
                "operationId": "submit", "summary": "Submit a judgement (idempotent per key)", "security": participant,
                "requestBody": _body("JudgementIn"),
                "responses": {"201": _json("Judgement", "stored"),
                              "200": _json("Judgement", "already stored with this key"),
                              **_errors(*common, 401, 403, 404, 409, 503)}}},
            "/api/v1/status": {"get": {
                "operationId": "status", "summary": "Progress and, once completed, the completion code",
                "security": participant, "responses": {"200": _json("Status", "progress"), **_errors(401)}}},
            "/api/v1/places": {"get": {
                "operationId": "places", "summary": "Places open now (the waitlist asks this, no token)",
                "responses": {"200": _json("Places", "places open now and the study's waitlist")}}},
            "/api/v1/admin/judgements": {"get": {
                "operationId": "adminJudgements", "summary": "Every stored judgement", "security": admin,
                "responses": {"200": _any("judgements", "array"), **_errors(401)}}},
            "/api/v1/admin/status": {"get": {
                "operationId": "adminStatus", "summary": "Progress, live stopping decisions and recruitment", "security": admin,
                "responses": {"200": _any("overview, stopping states and recruitment (places used, in progress, wanted; waves; what the stop saved)"), **_errors(401)}}},
            "/api/v1/admin/invites": {"post": {
                "operationId": "adminInvites", "summary": "Signed invite links", "security": admin,
                "requestBody": _body("InvitesIn"),
                "responses": {"200": _json("Invites", "one link per participant id"), **_errors(*common, 401, 409)}}},
        },
    }
