"""The OpenAPI 3.1 description of the JSON API v1 (hand-written, served at /api/v1/openapi.json)."""

from __future__ import annotations

from typing import Any

from humeval._version import __version__

__all__ = ["openapi_spec"]

_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "field": {"type": "string"}},
        }
    },
}


def _err(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def _ok(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_ERRORS = {"400": _err("malformed request"), "401": _err("missing or invalid token"), "403": _err("forbidden (origin, consent)"),
           "404": _err("unknown resource"), "409": _err("conflict"), "413": _err("body too large"),
           "415": _err("not JSON"), "422": _err("invalid value")}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def openapi_spec() -> dict[str, Any]:
    bearer = [{"participant": []}]
    admin = [{"admin": []}]
    return {
        "openapi": "3.1.0",
        "info": {"title": "humeval collection API", "version": f"1 (humeval {__version__})",
                 "description": "The participant flow of a humeval study: enter, get the next assignment, submit judgements."},
        "components": {
            "securitySchemes": {
                "participant": {"type": "http", "scheme": "bearer", "description": "token from POST /api/v1/enter"},
                "admin": {"type": "http", "scheme": "bearer", "description": "the server's admin token"},
            },
            "schemas": {
                "Error": _ERROR,
                "Enter": {
                    "type": "object", "additionalProperties": False,
                    "properties": {
                        "participant_id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,127}$"},
                        "PROLIFIC_PID": {"type": "string"}, "STUDY_ID": {"type": "string"}, "SESSION_ID": {"type": "string"},
                        "workerId": {"type": "string"}, "assignmentId": {"type": "string"}, "hitId": {"type": "string"},
                        "invite": {"type": "string"}, "consent": {"type": "boolean"},
                    },
                },
                "Token": {"type": "object", "required": ["token"], "properties": {
                    "token": {"type": "string"}, "participant_id": {"type": "string"}, "consent_required": {"type": "boolean"}}},
                "Progress": {"type": "object", "properties": {"done": {"type": "integer"}, "total": {"type": "integer"},
                                                                 "finished": {"type": "boolean"}, "completed": {"type": "boolean"}}},
                "Assignment": {
                    "type": "object",
                    "required": ["assignment_id", "task", "criteria", "outputs"],
                    "properties": {
                        "assignment_id": {"type": "string"},
                        "task": {"type": "object", "properties": {"item_id": {"type": "string"},
                                                                  "family": {"type": "string"}, "kind": {"type": "string"}}},
                        "criteria": {"type": "array", "items": {"type": "object", "description": "a criterion of the protocol (name, type, question, ...)"}},
                        "outputs": {"type": "array", "items": {"type": "string"}, "description": "texts in display order (A, B, ...)"},
                        "formats": {"type": "array", "items": {"type": "string", "enum": ["text", "markdown", "conversation"]},
                                    "description": "the format of each output (same order): text, markdown or conversation"},
                        "input": {"type": "string"}, "references": {"type": "string"},
                        "progress": {"$ref": "#/components/schemas/Progress"}, "expires_at": {"type": "string"},
                    },
                },
                "JudgementIn": {
                    "type": "object", "required": ["assignment_id", "idempotency_key", "values"], "additionalProperties": False,
                    "properties": {
                        "assignment_id": {"type": "string", "maxLength": 64},
                        "idempotency_key": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{8,128}$"},
                        "values": {"type": "object", "description": "{criterion: value}: 2afc 'A'/'B'/'tie'/'both-good'/'both-bad'; likert integer; magnitude/slider number; rankme list of numbers; esa {score: 0-100, spans: [{start, end, severity: minor|major}]}"},
                        "seconds": {"type": "number", "minimum": 0, "maximum": 604800},
                        "comment": {"type": "string", "maxLength": 2000, "description": "optional free-text comment (only when presentation.comments is on)"},
                    },
                },
                "Judgement": {"type": "object", "properties": {
                    "judgement_id": {"type": "integer"}, "idempotency_key": {"type": "string"}, "assignment_id": {"type": "string"},
                    "values": {"type": "object"}, "revision": {"type": "integer"}, "submitted_at": {"type": "string"}}},
            },
        },
        "paths": {
            "/api/v1/enter": {"post": {
                "operationId": "enter", "summary": "Enter the study; returns a bearer token",
                "requestBody": _body({"$ref": "#/components/schemas/Enter"}),
                "responses": {"200": _ok("token", {"$ref": "#/components/schemas/Token"}), **_ERRORS}}},
            "/api/v1/consent": {"post": {
                "operationId": "consent", "summary": "Record the participant's consent", "security": bearer,
                "responses": {"200": _ok("consented", {"type": "object"}), **_ERRORS}}},
            "/api/v1/next": {"get": {
                "operationId": "next", "summary": "The current or next assignment", "security": bearer,
                "responses": {"200": _ok("an assignment", {"$ref": "#/components/schemas/Assignment"}),
                              "204": {"description": "nothing left for this participant"}, **_ERRORS}}},
            "/api/v1/judgements": {"post": {
                "operationId": "submit", "summary": "Submit a judgement (idempotent per key)", "security": bearer,
                "requestBody": _body({"$ref": "#/components/schemas/JudgementIn"}),
                "responses": {"201": _ok("stored", {"$ref": "#/components/schemas/Judgement"}),
                              "200": _ok("already stored with this key", {"$ref": "#/components/schemas/Judgement"}), **_ERRORS}}},
            "/api/v1/status": {"get": {
                "operationId": "status", "summary": "Progress and, once completed, the completion code", "security": bearer,
                "responses": {"200": _ok("status", {"type": "object"}), **_ERRORS}}},
            "/api/v1/admin/judgements": {"get": {
                "operationId": "adminJudgements", "summary": "Every stored judgement", "security": admin,
                "responses": {"200": _ok("judgements", {"type": "array", "items": {"type": "object"}}), **_ERRORS}}},
            "/api/v1/admin/status": {"get": {
                "operationId": "adminStatus", "summary": "Progress and live stopping decisions", "security": admin,
                "responses": {"200": _ok("status", {"type": "object"}), **_ERRORS}}},
            "/api/v1/admin/invites": {"post": {
                "operationId": "adminInvites", "summary": "Signed invite links", "security": admin,
                "requestBody": _body({"type": "object", "required": ["participant_ids"],
                                      "properties": {"participant_ids": {"type": "array", "items": {"type": "string"}}}}),
                "responses": {"200": _ok("invites", {"type": "object"}), **_ERRORS}}},
        },
    }
