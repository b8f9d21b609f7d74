"""Entry routes per platform, completion and screen-out links, and MTurk refused as a platform kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval.errors import ProtocolError
from humeval.platforms.completion import completion_json, return_link
from humeval.platforms.entry import (
    EntryRefused,
    accepted_fields,
    entry_body,
    entry_model,
    resolve_entry,
)
from humeval.protocol.load import load_protocol
from humeval.protocol.models import Platform


def NO_INVITES(invite: object) -> None:  # a stand-in for the invitations a route would look up: none
    return None


def _refused(data: dict, platform: Platform, code: str, status: int) -> None:
    with pytest.raises(EntryRefused) as err:
        resolve_entry(data, platform, NO_INVITES)
    assert (err.value.code, err.value.status) == (code, status)


@pytest.mark.parametrize(("platform", "fields"), [
    (Platform(), ("participant_id",)),
    (Platform(kind="local", entry=["invite"]), ("invite",)),
    (Platform(kind="prolific"), ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")),
    (Platform(kind="connect"), ("participantId", "assignmentId", "projectId")),
    (Platform(kind="sona"), ("id",)),
    (Platform(kind="panel", id_parameter="pid"), ("pid",)),
    (Platform(kind="prolific", entry=["platform", "invite"]), ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "invite")),
])
def test_each_kind_accepts_its_own_fields(platform: Platform, fields: tuple[str, ...]) -> None:
    assert accepted_fields(platform) == fields


def test_platform_parameters_name_the_participant() -> None:
    e = resolve_entry({"participantId": "CR-1a2b", "assignmentId": "A9", "projectId": "P3"}, Platform(kind="connect"), NO_INVITES)
    assert (e.participant_id, e.platform, e.route) == ("CR-1a2b", "connect", "platform")
    assert e.params == {"participantId": "CR-1a2b", "assignmentId": "A9", "projectId": "P3"}
    assert resolve_entry({"id": "48213"}, Platform(kind="sona"), NO_INVITES).participant_id == "48213"
    assert resolve_entry({"pid": "u-7"}, Platform(kind="panel", id_parameter="pid"), NO_INVITES).platform == "panel"
    assert resolve_entry({"participant_id": "ann"}, Platform(), NO_INVITES).platform == "local"
    assert resolve_entry({"invite": "i1.YmVh.sig"}, Platform(entry=["invite"]), lambda i: "bea").participant_id == "bea"


def test_wrong_routes_and_fields_are_refused() -> None:
    _refused({"participant_id": "P1"}, Platform(kind="prolific"), "route_not_accepted", 403)
    _refused({"invite": "x"}, Platform(kind="prolific"), "route_not_accepted", 403)
    _refused({"participant_id": "P1"}, Platform(entry=["invite"]), "route_not_accepted", 403)
    _refused({"invite": "forged"}, Platform(entry=["invite"]), "invalid_invite", 401)  # not even shaped like one
    _refused({"invite": "i1.YWxpY2U.forged"}, Platform(entry=["invite"]), "invalid_invite", 401)
    _refused({"invite": None}, Platform(entry=["invite"]), "invalid_value", 422)  # null is not a string
    _refused({"participant_id": ""}, Platform(), "invalid_value", 422)
    _refused({"workerId": "W1"}, Platform(kind="prolific"), "invalid_value", 422)  # MTurk parameters: unknown
    _refused({"STUDY_ID": "s"}, Platform(kind="prolific"), "invalid_value", 422)  # no PROLIFIC_PID
    _refused({}, Platform(kind="sona"), "invalid_value", 422)
    _refused({"participant_id": "a", "invite": "b"}, Platform(entry=["invite", "open"]), "invalid_value", 422)
    _refused({"pid": "a b"}, Platform(kind="panel", id_parameter="pid"), "invalid_value", 422)


def test_rehearsal_bodies_use_the_study_route() -> None:
    assert entry_body(Platform(kind="sona"), "r1") == {"id": "r1"}
    assert entry_body(Platform(kind="prolific"), "r1")["PROLIFIC_PID"] == "r1"
    assert entry_body(Platform(), "r1") == {"participant_id": "r1"}


@pytest.mark.parametrize(("platform", "screened_out", "expected"), [
    (Platform(kind="prolific", completion_code="C0DE"), False,
     {"code": "C0DE", "url": "https://app.prolific.com/submissions/complete?cc=C0DE", "screened_out": False}),
    (Platform(kind="prolific", completion_code="C0DE", screenout_code="SCR 1"), True,
     {"code": "SCR 1", "url": "https://app.prolific.com/submissions/complete?cc=SCR%201", "screened_out": True}),
    (Platform(kind="prolific", completion_code="C0DE"), True,  # no screen-out declared: the completion link
     {"code": "C0DE", "url": "https://app.prolific.com/submissions/complete?cc=C0DE", "screened_out": False}),
    (Platform(kind="connect", completion_url="https://connect.cloudresearch.com/participant/project/X/complete",
              screenout_url="https://connect.cloudresearch.com/participant/project/X/partial"), True,
     {"code": "", "url": "https://connect.cloudresearch.com/participant/project/X/partial", "screened_out": True}),
    (Platform(kind="sona", completion_url="https://u.sona-systems.com/webstudy_credit.aspx?experiment_id=1&credit_token=t&survey_code=XXXX"),
     False, {"code": "", "url": "https://u.sona-systems.com/webstudy_credit.aspx?experiment_id=1&credit_token=t&survey_code=9001",
             "screened_out": False}),
    (Platform(kind="panel", id_parameter="pid", completion_url="https://p.example/end?who={participant_id}&s=ok",
              screenout_url="https://p.example/end?who={participant_id}&s=out"), True,
     {"code": "", "url": "https://p.example/end?who=9001&s=out", "screened_out": True}),
])
def test_completion_links(platform: Platform, screened_out: bool, expected: dict) -> None:
    assert completion_json(platform, "9001", screened_out=screened_out) == expected


def test_panel_ids_are_quoted_in_links_and_decline_has_the_return_link() -> None:
    p = Platform(kind="panel", id_parameter="pid", completion_url="https://p.example/{participant_id}",
                 return_url="https://p.example/back")
    assert completion_json(p, "a+b@c")["url"] == "https://p.example/a%2Bb%40c"
    assert return_link(p) == "https://p.example/back"


def test_platform_declarations_are_checked() -> None:
    for bad in ({"kind": "panel"}, {"kind": "local", "entry": ["platform"]}, {"kind": "sona", "id_parameter": "x"},
                {"kind": "local", "entry": ["open", "open"]}, {"kind": "files", "entry": ["open"]},
                {"kind": "prolific", "completion_url": "javascript:alert(1)"}):
        with pytest.raises(ValueError):
            Platform(**bad)
    assert Platform(kind="files").routes == ()


def test_mturk_kind_is_refused_with_the_way_forward(tmp_path: Path) -> None:
    (tmp_path / "humeval.yaml").write_text(
        "version: 1\nstudy: {name: s, seed: 1}\ndata: {files: [d.jsonl]}\n"
        "criteria:\n  - {name: q, type: 2afc, question: Q}\nplatform:\n  kind: mturk\n", encoding="utf-8")
    with pytest.raises(ProtocolError) as err:
        load_protocol(tmp_path)
    message = str(err.value)
    assert "humeval.yaml:7: platform.kind" in message and "closed on 2026-09-30" in message
    assert "`files`" in message and "humeval import DIR mturk FILE" in message and "connect" in message


def test_entry_model_lists_exactly_the_accepted_fields() -> None:
    schema = entry_model(Platform(kind="panel", id_parameter="pid", entry=["platform", "invite"])).model_json_schema()
    assert set(schema["properties"]) == {"pid", "invite", "consent"} and schema["additionalProperties"] is False
    assert set(entry_model(Platform(kind="prolific")).model_json_schema()["properties"]) == {
        "PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "consent"}
