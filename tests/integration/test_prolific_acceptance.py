"""A study on Prolific end to end against the local fake API, through the CLI and a real `humeval serve`.

create -> publish -> the workspace's hook secret and a confirmed hook subscription -> participants arrive
(one in Chromium with PROLIFIC_PID/STUDY_ID/SESSION_ID, the rest over HTTP; each checked against an active
submission, and a known PROLIFIC_PID with another SESSION_ID refused) -> Prolific's signed hook releases the
returned place at once -> status -> review (approve in one bulk request; reject the one who failed the
attention check, with its category) -> bonus paid exactly once although the first pay call times out -> stop.
Then the same with --dry-run: nothing reaches the fake, every request is printed.
"""

from __future__ import annotations

import json
import math
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from humeval.files import write_jsonl
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.rehearsal.participants import Answerer
from humeval.rehearsal.rehearse import _answer_key
from humeval.study import StudyFolder
from humeval.templates import generate_outputs
from tests.cli import humeval
from tests.fake_prolific import TOKEN, FakeProlific
from tests.integration.server.server import ServerProcess

pytestmark = [pytest.mark.timeout(300)]

STUDY_URL = "https://example.org/study"
YAML = f"""
version: 1
study: {{name: prolific-acceptance, description: "Which output is better?", seed: 11}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?"}}
presentation: {{setup: separate, consent: I agree that my answers are stored.}}
design: {{judgements_per_item: 1, items_per_participant: 3, counterbalancing: latin-square, attention_checks: 1}}
exclusion:
  - {{rule: attention, max_failures: 0}}
platform:
  kind: prolific
  completion_code: C0MPL3TE
  screenout_code: SCR33N
  prolific:
    study_url: {STUDY_URL}
    bonus: 0.5
    exclude_groups: [group-wave-1]
pay: {{currency: GBP, hourly: 9.0, minutes_per_list: 10}}
"""


def make_study(root: Path) -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(12, seed=11))
    (root / "humeval.yaml").write_text(YAML, encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


WORKSPACE = "63519c1d5b139662f8cde482"
PUBLIC_HOOK = "https://eval.example.org/prolific/hook"


def cli(study: StudyFolder, fake: FakeProlific, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    env = {"PROLIFIC_TOKEN": TOKEN, "PROLIFIC_API_URL": fake.url, "PROLIFIC_TIMEOUT": "5"}
    return humeval("prolific", *args, study.root, env=env, expect=expect)


def http_participant(url: str, study: StudyFolder, pid: str, session: str, study_id: str, *, fail_attention: bool = False,
                     stop_after: int | None = None) -> str | None:
    """A participant over the JSON API; returns the completion code shown at the end (None if they left)."""
    answerer = Answerer(study.protocol, _answer_key(study, study.read_lists()), "random", ["baseline", "candidate"])
    rng = np.random.default_rng(1)
    with httpx.Client(base_url=url, timeout=10) as c:
        entered = c.post("/api/v1/enter", json={"PROLIFIC_PID": pid, "STUDY_ID": study_id, "SESSION_ID": session,
                                                "consent": True})
        headers = {"Authorization": f"Bearer {entered.json()['token']}"}
        for n in range(50):
            if stop_after is not None and n >= stop_after:
                return None
            got = c.get("/api/v1/next", headers=headers)
            if got.status_code == 204:
                break
            a = got.json()
            values = answerer.values(a, rng)
            if fail_attention and answerer.key.identify(a["outputs"])[1]:  # the server does not say it is a check
                values = {k: "B" if v == "A" else "A" for k, v in values.items()}
            r = c.post("/api/v1/judgements", headers=headers,
                       json={"assignment_id": a["assignment_id"], "idempotency_key": uuid.uuid4().hex, "values": values,
                             "seconds": 6.0})
            assert r.status_code == 201, r.text
        return c.get("/api/v1/status", headers=headers).json()["completion"]["code"]


def browser_participant(url: str, study: StudyFolder) -> str:
    """A participant in Chromium who entered from Prolific's study link; returns the code on the done page."""
    from playwright.sync_api import sync_playwright

    from tests.browser.test_participant import ARGS, CHROMIUM

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(url)
            assert "/consent" in page.url
            page.check("#agree")
            page.click("#continue")
            page.wait_for_load_state()
            if "/instructions" in page.url:
                page.click("#begin")
            for _ in range(20):
                if "/task" not in page.url:
                    break
                texts = page.locator(".output[data-position]").all_inner_texts()
                item = page.locator("fieldset.criterion").first
                # a check's card shows its instruction in the study's language (not the stored English text)
                choice = 1 if texts and "Please choose the second output (B)" in texts[0] else 0
                item.locator("input[type=radio]").nth(choice).check()
                page.click("#submit")
                page.wait_for_load_state()
            assert "/done" in page.url
            code = page.locator("#completion-code").inner_text()
            assert page.locator("#completion-link").get_attribute("href").endswith(f"cc={code}")
            return code
        finally:
            browser.close()


@pytest.fixture
def fake() -> Iterator[FakeProlific]:
    with FakeProlific() as f:
        yield f


def _collect(study: StudyFolder, fake: FakeProlific, study_id: str, server: ServerProcess, *, browser: bool) -> dict[str, Any]:
    """Four participants: P0 (browser or HTTP) and P2 complete, P1 fails the attention check, P3 returns."""
    state = fake.state
    people = {"P0aaaaaaaaaaaaaaaaaaaaa0": "S0", "P1aaaaaaaaaaaaaaaaaaaaa1": "S1", "P2aaaaaaaaaaaaaaaaaaaaa2": "S2",
              "P3aaaaaaaaaaaaaaaaaaaaa3": "S3"}
    for pid, session in people.items():
        state.add_submission(study_id, pid, session)  # Prolific starts a submission when a participant opens the link
    p0, p1, p2, p3 = people
    if browser:
        link = state.studies[study_id]["external_study_url"].replace(STUDY_URL, server.url + "/")
        link = link.replace("{{%PROLIFIC_PID%}}", p0).replace("{{%STUDY_ID%}}", study_id).replace("{{%SESSION_ID%}}", "S0")
        codes = {p0: browser_participant(link, study)}
    else:
        codes = {p0: http_participant(server.url, study, p0, "S0", study_id)}
    codes[p1] = http_participant(server.url, study, p1, "S1", study_id, fail_attention=True)
    codes[p2] = http_participant(server.url, study, p2, "S2", study_id)
    assert http_participant(server.url, study, p3, "S3", study_id, stop_after=1) is None
    for pid in (p0, p1, p2):  # each pastes the code on Prolific: awaiting review
        sub = state.submissions[people[pid]]
        sub.update(status="AWAITING REVIEW", study_code=codes[pid])
    state.submissions["S3"]["status"] = "RETURNED"
    # the one who failed the attention check is shown the screen-out code (platform.screenout_code)
    assert codes == {p0: "C0MPL3TE", p1: "SCR33N", p2: "C0MPL3TE"}
    return people


def _list_holder(study: StudyFolder, pid: str) -> list[Any]:
    import sqlite3

    with sqlite3.connect(study.db_file) as db:
        return db.execute("SELECT list_id, participant_id, completed FROM lists WHERE list_id = "
                          "(SELECT list_id FROM participants WHERE participant_id = ?)", (pid,)).fetchall()


@pytest.mark.browser
def test_prolific_end_to_end(tmp_path: Path, fake: FakeProlific, monkeypatch: pytest.MonkeyPatch) -> None:
    study = make_study(tmp_path / "study")
    state = fake.state
    created = cli(study, fake, "create")
    assert "reward per list: 1.50 GBP" in created.stderr  # 9 GBP/h x 10 min = 1.50 GBP (hand-computed)
    study_id = json.loads((study.state_dir / "prolific.json").read_text())["study_id"]
    body = state.studies[study_id]
    assert body["reward"] == math.ceil(9.0 * 10 / 60 * 100) == 150
    assert body["total_available_places"] == len(study.read_lists()) == 4
    assert body["estimated_completion_time"] == 10
    assert body["external_study_url"] == (f"{STUDY_URL}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
                                          "&SESSION_ID={{%SESSION_ID%}}")
    assert [(c["code"], c["code_type"]) for c in body["completion_codes"]] == [("C0MPL3TE", "COMPLETED"),
                                                                               ("SCR33N", "FAILED_ATTENTION_CHECK")]
    assert {"filter_id": "participant_group_blocklist", "selected_values": ["group-wave-1"]} in body["filters"]
    cli(study, fake, "create", expect=1)  # never a second Prolific study for the same lists
    cli(study, fake, "publish")
    assert body["status"] == "ACTIVE"

    # the workspace's signing secret, then the server's hook subscribed and confirmed (enabled)
    secret = cli(study, fake, "hooks", "secret", "--workspace", WORKSPACE).stdout.strip()
    assert secret == state.secrets[WORKSPACE]["value"]
    cli(study, fake, "hooks", "subscribe", "--url", PUBLIC_HOOK, "--workspace", WORKSPACE)
    assert [(s["target_url"], s["is_enabled"]) for s in state.subscriptions.values()] == [(PUBLIC_HOOK, True)]

    # the server of a Prolific study: its hook secret and the API token (entries are checked against submissions)
    monkeypatch.setenv("PROLIFIC_HOOK_SECRET", secret)
    monkeypatch.setenv("PROLIFIC_TOKEN", TOKEN)
    monkeypatch.setenv("PROLIFIC_API_URL", fake.url)
    server = ServerProcess(study.root, None).start()
    try:
        people = _collect(study, fake, study_id, server, browser=True)
        p0, p1, p2, p3 = people
        with httpx.Client(base_url=server.url, timeout=30) as c:
            # whoever knows a PROLIFIC_PID is not that participant: another SESSION_ID is refused
            other = c.post("/api/v1/enter", json={"PROLIFIC_PID": p0, "STUDY_ID": study_id, "SESSION_ID": "S9"})
            assert other.status_code == 403 and other.json()["error"]["code"] == "entry_session_mismatch"
            same = c.post("/api/v1/enter", json={"PROLIFIC_PID": p0, "STUDY_ID": study_id, "SESSION_ID": "S0"})
            assert same.status_code == 200  # the same session comes back
            stranger = c.post("/api/v1/enter", json={"PROLIFIC_PID": "P9aaaaaaaaaaaaaaaaaaaaa9", "STUDY_ID": study_id,
                                                     "SESSION_ID": "S0"})
            assert stranger.status_code == 403 and stranger.json()["error"]["code"] == "no_platform_submission"
        assert _list_holder(study, p3)[0][1] == p3  # returned on Prolific; the store does not know yet
        # Prolific tells the server at once: a signed delivery to the confirmed subscription
        delivered = state.deliver("submission.status.change", {"resource_id": "S3", "status": "RETURNED"},
                                  rewrite=lambda url: url.replace("https://eval.example.org", server.url))
        assert delivered == [204]
        assert _list_holder(study, p3)[0][1] is None  # the returned place's list is free for the next participant
    finally:
        server.stop()

    status = json.loads(cli(study, fake, "status", "--format", "json").stdout)
    by_pid = {r["participant_id"]: r for r in status}
    assert by_pid[p3]["status"] == "RETURNED"
    assert by_pid[p0]["completed"] and by_pid[p0]["entered"] and by_pid[p0]["action"] == ""

    decisions = {d["participant_id"]: d for d in json.loads(cli(study, fake, "review", "--format", "json").stdout)}
    assert decisions[p0]["action"] == decisions[p2]["action"] == "approve"
    assert decisions[p1]["action"] == "reject" and decisions[p1]["rule"] == "attention"
    assert state.submissions["S0"]["status"] == state.submissions["S2"]["status"] == "APPROVED"
    assert state.bulk_approvals == [["S0", "S2"]]  # both in one request
    assert not [p for m, p, _ in state.log if p in ("/api/v1/submissions/S0/transition/",
                                                    "/api/v1/submissions/S2/transition/")]
    rejected = state.submissions["S1"]
    assert rejected["status"] == "REJECTED" and rejected["review"]["rejection_category"] == "FAILED_CHECK"
    assert len(rejected["review"]["message"]) >= 100 and "attention" in rejected["review"]["message"]
    assert "baseline" not in rejected["review"]["message"] and "candidate" not in rejected["review"]["message"]

    state.fail("POST", r"/bulk-bonus-payments/.*/pay/$", "timeout")  # carried out, the answer never arrives in time
    paid = json.loads(cli(study, fake, "bonus", "--format", "json").stdout)
    assert sorted(state.payments) == [(p0, 50), (p2, 50)]  # each approved participant paid exactly once
    assert {r["participant_id"]: r["state"] for r in paid} == {p0: "paid", p2: "paid"}
    assert all(r["detail"] == "confirmed on the submission" for r in paid)  # settled by asking, not by paying again
    pays = [e for e in state.log if e[1].endswith("/pay/")]
    assert len(pays) == 1  # the pay request was sent once, never again after the timeout
    cli(study, fake, "bonus")  # a second run finds everything settled
    assert sorted(state.payments) == [(p0, 50), (p2, 50)]
    assert len([e for e in state.log if e[1].endswith("/pay/")]) == 1

    cli(study, fake, "stop")
    assert body["status"] == "AWAITING REVIEW"
    logbook = study.logbook_file.read_text()
    assert TOKEN not in logbook
    stages = [json.loads(line)["stage"] for line in logbook.splitlines()]
    for stage in ("prolific-create", "prolific-publish", "prolific-status", "prolific-review", "prolific-bonus",
                  "prolific-stop"):
        assert stage in stages


def test_prolific_dry_run_sends_nothing(tmp_path: Path, fake: FakeProlific) -> None:
    study = make_study(tmp_path / "study")
    state = fake.state
    lines = [json.loads(x) for x in cli(study, fake, "create", "--dry-run").stdout.splitlines()]
    assert [(x["method"], x["url"]) for x in lines] == [("POST", f"{fake.url}/api/v1/studies/")]
    assert lines[0]["json"]["reward"] == 150 and lines[0]["headers"] == {"Authorization": "Token ***"}
    assert not (study.state_dir / "prolific.json").exists()
    sid = "<study id from prolific create>"
    publish = json.loads(cli(study, fake, "publish", "--dry-run").stdout)
    assert publish["url"].endswith(f"/api/v1/studies/{sid}/transition/") and publish["json"] == {"action": "PUBLISH"}

    server = ServerProcess(study.root, None).start()
    try:
        people = _collect(study, fake, "dry-study", server, browser=False)
    finally:
        server.stop()
    p0, _, p2, _ = people
    assert state.log == []  # nothing reached the fake Prolific

    status = [json.loads(x) for x in cli(study, fake, "status", "--dry-run").stdout.splitlines()]
    assert [(x["method"], x["url"]) for x in status] == [("GET", f"{fake.url}/api/v1/studies/{sid}/submissions/")]
    review = [json.loads(x) for x in cli(study, fake, "review", "--dry-run").stdout.splitlines()]
    assert review[1]["url"].endswith("/api/v1/submissions/bulk-approve/")
    assert sorted(review[1]["json"]["submission_ids"]) == ["S0", "S2"]  # one bulk approval
    transitions = {x["url"].split("/submissions/")[1].split("/")[0]: x["json"] for x in review[2:]}
    assert list(transitions) == ["S1"]  # S3 is not completed: not reviewed
    assert transitions["S1"]["action"] == "REJECT" and transitions["S1"]["rejection_category"] == "FAILED_CHECK"
    bonus = [json.loads(x) for x in cli(study, fake, "bonus", "--dry-run").stdout.splitlines()]
    setup = next(x for x in bonus if x["url"].endswith("/submissions/bonus-payments/"))
    assert sorted(setup["json"]["csv_bonuses"].splitlines()) == sorted([f"{p0},0.50", f"{p2},0.50"])
    assert any(x["url"].endswith("/pay/") for x in bonus)
    stop = json.loads(cli(study, fake, "stop", "--dry-run").stdout)
    assert stop["json"] == {"action": "STOP"}
    assert state.log == [] and state.payments == []
    assert "prolific-" not in study.logbook_file.read_text()  # a dry run changes nothing, logs nothing


def test_an_unconfirmed_payment_is_never_paid_again(tmp_path: Path, fake: FakeProlific,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The pay call answers 500 and pays nothing: the bonus stays unconfirmed, no run sends the pay call again.
    (Approvals in batches of one here: one bulk approval per batch.)"""
    from humeval.costs import launch_budget
    from humeval.platforms.prolific import (
        ProlificClient,
        actions,
        prolific_bonus,
        prolific_create,
        prolific_review,
    )

    monkeypatch.setattr(actions, "APPROVE_BATCH", 1)

    study = make_study(tmp_path / "study")
    state = fake.state
    with ProlificClient(TOKEN, base_url=fake.url, timeout=5.0, sleep=lambda s: None) as client:
        study_id = prolific_create(study, client=client, budget=launch_budget(study)).study_id
        server = ServerProcess(study.root, None).start()
        try:
            people = _collect(study, fake, study_id, server, browser=False)
        finally:
            server.stop()
        prolific_review(study, client=client)
        assert sorted(state.bulk_approvals) == [["S0"], ["S2"]]  # two batches of one
        state.fail("POST", r"/pay/$", "500")
        first = prolific_bonus(study, client=client)
        p0, _, p2, _ = people
        assert sorted(first.unconfirmed) == sorted([p0, p2]) and state.payments == []
        second = prolific_bonus(study, client=client)
        assert sorted(second.unconfirmed) == sorted(first.unconfirmed) and state.payments == []
        assert len([e for e in state.log if e[1].endswith("/pay/")]) == 1
        assert {r["state"] for r in second.rows} == {"unconfirmed"}
