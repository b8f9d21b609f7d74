"""The API contract: models, the generated openapi.json, the wire constants, cookies and the server configuration."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest

from humeval.errors import HumevalError, Refused
from humeval.platforms.entry import EntryRefused, entry_model
from humeval.protocol.models import Platform
from humeval.server.config import MIN_ADMIN_TOKEN, ServerConfig
from humeval.server.contract import JudgementIn, parse
from humeval.server.errors import HttpError, InvalidValue
from humeval.server.incoming import json_media_type
from humeval.server.throttle import TrustedProxies, is_https
from humeval.server.tokens import admin_cookie, admin_cookie_valid
from humeval.store.refusal import Refusal, disk_full
from humeval.wire import IDEMPOTENCY_KEY_PATTERN, INVITE_PATTERN, PARTICIPANT_ID_PATTERN

SECRET = b"s" * 32
TOKEN = "admin-token-0123456789"


def test_entry_schema_is_exact() -> None:
    schema = entry_model(Platform(kind="prolific", entry=["platform", "invite"])).model_json_schema()
    props = schema["properties"]
    assert schema["oneOf"] == [{"required": ["PROLIFIC_PID"]}, {"required": ["invite"]}]  # exactly one route
    assert props["PROLIFIC_PID"]["pattern"] == PARTICIPANT_ID_PATTERN and props["invite"]["pattern"] == INVITE_PATTERN
    assert all(p.get("type") == "string" for name, p in props.items() if name != "consent")  # never null


def test_judgement_model_and_store_agree_on_bounds() -> None:
    body = {"assignment_id": "a1", "idempotency_key": "key-0001", "values": {"q": "A"}}
    assert parse(JudgementIn, body).seconds is None
    for bad, field in [({"values": {}}, "values"), ({"idempotency_key": "short"}, "idempotency_key"),
                       ({"seconds": float("nan")}, "seconds"), ({"seconds": True}, "seconds"),
                       ({"assignment_id": 7}, "assignment_id"), ({"extra": 1}, "extra")]:
        with pytest.raises(InvalidValue) as err:
            parse(JudgementIn, body | bad)
        assert err.value.field == field and err.value.status == 422
    assert JudgementIn.model_json_schema()["properties"]["idempotency_key"]["pattern"] == IDEMPOTENCY_KEY_PATTERN


def test_openapi_is_generated_from_the_models(tmp_path: Path) -> None:
    from humeval.protocol.load import load_protocol
    from humeval.server.openapi import openapi_spec

    (tmp_path / "humeval.yaml").write_text("""
version: 1
study: {name: s, seed: 1}
data: {files: [o.jsonl]}
systems: [a, b]
criteria:
  - {name: quality, type: 2afc, question: "Which?"}
  - {name: fluency, type: likert, question: "How?", points: 7}
platform: {kind: local, entry: [invite, open]}
""", encoding="utf-8")
    spec = openapi_spec(load_protocol(tmp_path / "humeval.yaml"))
    schemas = spec["components"]["schemas"]
    values = schemas["JudgementIn"]["properties"]["values"]
    assert values["minProperties"] == 1 and values["additionalProperties"] is False
    assert values["properties"]["quality"]["enum"] == ["A", "B"]
    assert values["properties"]["fluency"] == {"type": "integer", "minimum": 1, "maximum": 7}
    assert schemas["EnterLocal"]["oneOf"] == [{"required": ["invite"]}, {"required": ["participant_id"]}]
    assert '"default": null' not in json.dumps(spec)  # an optional field is absent, never null
    ref = spec["paths"]["/api/v1/judgements"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert ref == "#/components/schemas/JudgementIn"


def test_one_refusal_tree_outside_the_store() -> None:
    assert issubclass(HttpError, Refused) and not issubclass(HttpError, Refusal)
    assert issubclass(EntryRefused, Refused) and not issubclass(EntryRefused, Refusal)
    assert issubclass(Refusal, Refused) and issubclass(Refused, HumevalError)
    import humeval.platforms.entry as entry

    assert "humeval.store" not in Path(entry.__file__).read_text(encoding="utf-8")


@pytest.mark.parametrize(("ctype", "ok"), [
    ("application/json", True), ("application/json; charset=utf-8", True), ('APPLICATION/JSON;charset="UTF-8"', True),
    ("text/plain; charset=json", False), ("application/json; charset=latin-1", False), ("application/jsonx", False),
    ("application/json; boundary=x", False), ("", False), ("multipart/form-data; x=application/json", False),
])
def test_json_media_type(ctype: str, ok: bool) -> None:
    assert json_media_type(ctype) is ok


def test_admin_cookie_rotates_and_expires() -> None:
    first, second = admin_cookie(SECRET, TOKEN, now=1000), admin_cookie(SECRET, TOKEN, now=1000)
    assert first != second  # a new value each login
    assert admin_cookie_valid(SECRET, TOKEN, first, 3600, now=1000 + 3599)
    assert not admin_cookie_valid(SECRET, TOKEN, first, 3600, now=1000 + 3600)  # expired
    assert not admin_cookie_valid(SECRET, TOKEN + "x", first, 3600, now=1001)  # the admin token changed
    assert not admin_cookie_valid(SECRET, TOKEN, first.replace(".1000.", ".9000."), 10**6, now=9001)  # forged time
    assert not admin_cookie_valid(SECRET, TOKEN, "forged", 3600) and not admin_cookie_valid(SECRET, TOKEN, None, 3600)


def _request(scheme: str, peer: str, proto: str | None = None) -> object:
    headers = {"x-forwarded-proto": proto} if proto else {}
    return SimpleNamespace(url=SimpleNamespace(scheme=scheme), client=SimpleNamespace(host=peer), headers=headers)


def test_https_directly_or_from_a_trusted_proxy_only() -> None:
    proxies = TrustedProxies(["10.0.0.0/8"])
    assert is_https(_request("https", "203.0.113.9"), proxies)
    assert is_https(_request("http", "10.1.2.3", "https"), proxies)
    assert not is_https(_request("http", "203.0.113.9", "https"), proxies)  # a client's own header is ignored
    assert not is_https(_request("http", "10.1.2.3", "http"), proxies)
    assert not is_https(_request("http", "10.1.2.3", "https"), TrustedProxies())


def test_short_admin_tokens_are_refused_and_the_config_file_is_private(tmp_path: Path) -> None:
    with pytest.raises(HumevalError, match=f"at least {MIN_ADMIN_TOKEN} characters"):
        ServerConfig(study_dir=".", admin_token="short-token")
    config = ServerConfig(study_dir=".", admin_token=TOKEN, trusted_proxies=["10.0.0.1"])
    path = config.write(tmp_path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert ServerConfig.read(path) == config


def test_disk_full_is_recognised() -> None:
    import errno
    import sqlite3

    from sqlalchemy.exc import OperationalError

    assert disk_full(sqlite3.OperationalError("database or disk is full")) == "database or disk is full"
    assert disk_full(OSError(errno.ENOSPC, "No space left on device")) == "no space left on device"
    wrapped = OperationalError("INSERT ...", {}, sqlite3.OperationalError("database or disk is full"))
    assert disk_full(wrapped) == "database or disk is full"
    assert disk_full(sqlite3.OperationalError("database is locked")) is None
    assert disk_full(OSError(errno.EACCES, "Permission denied")) is None


def test_serve_refuses_a_short_admin_token_before_anything_else(tmp_path: Path) -> None:
    from tests.cli import humeval

    proc = humeval("serve", tmp_path, "--admin-token", "hunter2", env={"HUMEVAL_ADMIN_TOKEN": ""}, process=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "admin token: at least 16 characters are required, got 7" in " ".join(proc.stderr.split())
