"""The Prolific study body and budget from a locked protocol; webhook signatures against openssl."""

from __future__ import annotations

import asyncio
import base64
import math
import shutil
import subprocess
from pathlib import Path

import httpx
import pandas as pd
import pytest
from starlette.applications import Starlette

from humeval.costs import launch_budget
from humeval.errors import ProtocolError
from humeval.judgements import JUDGEMENT_COLUMNS, write_judgements
from humeval.platforms.prolific.study import study_body
from humeval.platforms.prolific.webhooks import sign, verify_signature, webhook_routes
from tests.integration.test_prolific_acceptance import make_study


def _rewrite(root: Path, old: str, new: str) -> None:
    path = root / "humeval.yaml"
    path.write_text(path.read_text().replace(old, new))


def test_budget_from_the_declared_time(tmp_path: Path) -> None:
    study = make_study(tmp_path / "s")
    budget = launch_budget(study)
    # 9 GBP/h for 10 minutes = 1.50 GBP; 4 lists = 4 places; 6.00 GBP in rewards (+42.8 % fee)
    assert (budget.reward_per_list, budget.places, budget.minutes_per_list, budget.rewards) == (1.5, 4, 10, 6.0)
    assert budget.time_source == "protocol (pay.minutes_per_list)" and budget.hourly_pay == 9.0
    body = study_body(study, budget)
    assert (body["reward"], body["estimated_completion_time"], body["total_available_places"]) == (150, 10, 4)
    assert body["prolific_id_option"] == "url_parameters" and body["device_compatibility"] == ["desktop"]


def test_budget_from_a_pilot_and_the_hourly_minimum(tmp_path: Path) -> None:
    root = tmp_path / "s"
    make_study(root)
    # a pilot: 8 tasks timed 60, 60, 90, 90, 100, 100, 100, 120 s -> median 95 s per task
    rows = [{"participant_id": p, "list_id": "L", "task_id": f"t{i}", "kind": "task", "item_id": "i",
             "criterion": "quality", "system": "a", "system_b": "b", "position": 0, "value": None, "choice": "A",
             "seconds": s, "submitted_at": "", "stop_seq": None}
            for p, secs in (("a", (60, 60, 90, 90)), ("b", (100, 100, 100, 120))) for i, s in enumerate(secs)]
    write_judgements(root / "pilot" / "judgements.jsonl", pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS))
    _rewrite(root, "minutes_per_list: 10", "pilot: pilot/judgements.jsonl, extra_minutes: 2")
    from humeval.study import StudyFolder

    study = StudyFolder.open(root)
    tasks = max(len(pl.tasks) for pl in study.read_lists())
    budget = launch_budget(study)
    # 95 s x tasks / 60 + 2 min, rounded up to whole minutes; reward 9 GBP/h x minutes / 60, rounded up to the cent
    minutes = math.ceil(95 * tasks / 60 + 2)
    assert budget.minutes_per_list == minutes and budget.reward_per_list == math.ceil(9 * minutes / 60 * 100) / 100
    assert budget.time_source.startswith("median seconds per task (95.0 s) of the pilot")
    assert study_body(study, budget)["estimated_completion_time"] == minutes
    _rewrite(root, "hourly: 9.0", "hourly: 5.5")
    with pytest.raises(ProtocolError, match="below the minimum of 6.00 GBP/h"):
        launch_budget(StudyFolder.open(root))


def test_a_screenout_reward_makes_the_screenout_code_a_fixed_screenout_payment(tmp_path: Path) -> None:
    from humeval.study import StudyFolder

    root = tmp_path / "s"
    make_study(root)
    plain = study_body(StudyFolder.open(root), launch_budget(StudyFolder.open(root)))["completion_codes"][1]
    assert plain == {"code": "SCR33N", "code_type": "FAILED_ATTENTION_CHECK", "actor": "participant",
                     "actions": [{"action": "MANUALLY_REVIEW"}]}  # no reward declared: reviewed by hand
    _rewrite(root, "    bonus: 0.5", "    bonus: 0.5\n    screenout_reward: 0.25")
    study = StudyFolder.open(root)
    codes = study_body(study, launch_budget(study))["completion_codes"]
    # 0.25 GBP = 25 pence; slots default to one per list (4 lists)
    assert codes[1] == {"code": "SCR33N", "code_type": "FIXED_SCREENOUT", "actor": "participant",
                        "actions": [{"action": "FIXED_SCREEN_OUT_PAYMENT", "fixed_screen_out_reward": 25, "slots": 4}]}
    assert [c["code_type"] for c in codes].count("FIXED_SCREENOUT") == 1  # Prolific allows one such code
    _rewrite(root, "screenout_reward: 0.25", "screenout_reward: 0.25\n    screenout_places: 2")
    study = StudyFolder.open(root)
    assert study_body(study, launch_budget(study))["completion_codes"][1]["actions"][0]["slots"] == 2
    _rewrite(root, "screenout_reward: 0.25", "screenout_reward: 1.5")  # the whole reward per list (1.50 GBP)
    study = StudyFolder.open(root)
    with pytest.raises(ProtocolError, match=r"below the reward per list \(1.50 GBP\).*got 1.5"):
        study_body(study, launch_budget(study))
    _rewrite(root, "  screenout_code: SCR33N\n", "")
    study = StudyFolder.open(root)
    with pytest.raises(ProtocolError, match="set that code"):
        study_body(study, launch_budget(study))


def test_old_prolific_pay_fields_point_to_the_pay_section(tmp_path: Path) -> None:
    root = tmp_path / "s"
    make_study(root)
    _rewrite(root, "    bonus: 0.5", "    bonus: 0.5\n    hourly_pay: 9.0")
    from humeval.study import StudyFolder

    with pytest.raises(ProtocolError, match="platform.prolific.hourly_pay moved to pay.hourly"):
        _ = StudyFolder.open(root).protocol
    _rewrite(root, "\n    hourly_pay: 9.0", "")
    _rewrite(root, "currency: GBP", "currency: EUR")
    with pytest.raises(ProtocolError, match="Prolific pays in GBP or USD"):
        _ = StudyFolder.open(root).protocol


def test_signature_matches_openssl() -> None:
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed as the independent HMAC reference")
    secret, timestamp, body = "hook-secret-42", "1732350000", b'{"event_type":"submission.status.change"}'
    digest = subprocess.run(["openssl", "dgst", "-sha256", "-hmac", secret, "-binary"], input=timestamp.encode() + body,
                            capture_output=True, check=True).stdout
    assert sign(secret, timestamp, body) == base64.b64encode(digest).decode()
    good = sign(secret, timestamp, body)
    assert verify_signature(secret, body, timestamp, good, now=1732350010)
    assert not verify_signature(secret, body + b" ", timestamp, good, now=1732350010)  # body altered
    assert not verify_signature("other", body, timestamp, good, now=1732350010)  # wrong secret
    assert not verify_signature(secret, body, timestamp, good, now=1732350000 + 3600)  # replayed an hour later
    assert not verify_signature(secret, body, None, good)


def test_webhook_route_runs_the_sync_only_for_a_signed_request() -> None:
    import time

    calls: list[int] = []
    app = Starlette(routes=webhook_routes(lambda: calls.append(1), secret="s3cret"))
    body = b'{"event_type": "submission.status.change"}'
    ts = str(int(time.time()))

    async def send(signature: str) -> int:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hooks") as client:
            r = await client.post("/prolific/hook", content=body, headers={"X-Prolific-Request-Timestamp": ts,
                                                                            "X-Prolific-Request-Signature": signature})
            return r.status_code

    assert asyncio.run(send("nope")) == 401 and calls == []
    assert asyncio.run(send(sign("s3cret", ts, body))) == 204 and calls == [1]


def test_webhook_route_answers_json_handles_a_delivery_once_and_reports_a_failed_sync() -> None:
    import time

    from humeval.errors import PlatformError

    seen: set[str] = set()
    forgotten: list[str] = []
    outcome: list[Exception | None] = [None]

    def sync() -> None:
        if outcome[0] is not None:
            raise outcome[0]

    def first(key: str) -> bool:
        new = key not in seen
        seen.add(key)
        return new

    def forget(key: str) -> None:
        forgotten.append(key)
        seen.discard(key)

    app = Starlette(routes=webhook_routes(sync, secret="s3cret", first_delivery=first, forget_delivery=forget))
    body = b'{"event_type": "submission.status.change"}'

    async def send(ts: str, signature: str | None = None) -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://hooks") as client:
            return await client.post("/prolific/hook", content=body, headers={
                "X-Prolific-Request-Timestamp": ts, "X-Prolific-Request-Signature": signature or sign("s3cret", ts, body)})

    ts = str(int(time.time()))
    assert asyncio.run(send(ts)).status_code == 204
    replay = asyncio.run(send(ts))
    assert replay.status_code == 200 and replay.json() == {"handled": False, "reason": "this delivery was received before"}
    outcome[0] = PlatformError("Prolific answered 503")
    failed = asyncio.run(send(str(int(time.time()) - 1)))
    assert failed.status_code == 502 and failed.headers["content-type"].startswith("application/json")
    assert failed.json()["error"]["code"] == "sync_failed" and "503" in failed.json()["error"]["message"]
    assert len(forgotten) == 1  # Prolific's retry of the failed delivery is handled
    outcome[0] = RuntimeError("a bug")
    assert asyncio.run(send(str(int(time.time()) - 2))).status_code == 502  # JSON too, never an HTML 500
    for bad in ("nan", "inf", "-inf", "NaN", "1e999", "x" * 40):
        r = asyncio.run(send(bad, "sig"))
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized", bad
    assert not verify_signature("s3cret", body, "nan", sign("s3cret", "nan", body))  # a nan timestamp has no age
