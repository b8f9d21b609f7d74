"""Recruitment driven by the stopping rule, against the local fake of Prolific's API.

A pairwise study with dynamic stopping (``list`` strategy: a list is a paid session) is created with the
first wave of places only; participants take the open places on the fake (a full or closed study refuses
them) and do their list through the in-process server's JSON API with ``PROLIFIC_PID``/``STUDY_ID``/
``SESSION_ID``; ``prolific sync`` after every round opens waves while the rule needs them, pauses at the
decision while sessions are in progress and stops the study when nothing is left in progress. One who
reserved a place before the stop and arrives after it is told the study is closed (the nothing-left page).
No one who got a list is left without a completion code.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from humeval.costs import launch_budget
from humeval.files import write_jsonl
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.platforms.prolific import ProlificClient, prolific_create, prolific_transition
from humeval.platforms.prolific.study import wave_places
from humeval.platforms.prolific.waves import prolific_sync
from humeval.rehearsal.rehearse import _answer_key
from humeval.study import StudyFolder
from humeval.templates import generate_outputs
from tests.fake_prolific import TOKEN, FakeProlific
from tests.integration.server.inprocess import ADMIN, ADMIN_HEADERS, InProcess

pytestmark = [pytest.mark.timeout(300)]

WAVE = 2
YAML = f"""
version: 1
study: {{name: prolific-waves, seed: 7}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?"}}
presentation: {{setup: separate}}
design: {{judgements_per_item: 1, items_per_participant: 6, counterbalancing: latin-square}}
assignment: {{strategy: list, lease_seconds: 1800}}
stopping: {{rule: anytime, delta: 0.05, systems: [baseline, candidate], sessions: 2}}
crowd: {{wave: {WAVE}}}
platform:
  kind: prolific
  completion_code: C0MPL3TE
  prolific: {{study_url: "https://example.org/study"}}
pay: {{currency: GBP, hourly: 9.0, minutes_per_list: 5}}
"""


def make_study(root: Path) -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(120, seed=7))
    (root / "humeval.yaml").write_text(YAML, encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


class Crowd:
    """Participants arriving on Prolific (two per round), each answering one task per round: the candidate's
    output wins with probability 0.8."""

    def __init__(self, study: StudyFolder, fake: FakeProlific, study_id: str, server: InProcess) -> None:
        self.study, self.state, self.study_id, self.server = study, fake.state, study_id, server
        self.key = _answer_key(study, study.read_lists())
        self.rng = np.random.default_rng(3)
        self.active: dict[str, dict[str, Any]] = {}  # pid -> {"session", "headers", "assignment"}
        self.codes: dict[str, str] = {}  # participants who got a list -> their completion code
        self.listed: set[str] = set()  # participants given a list
        self.turned_away: dict[str, str] = {}  # pid -> the reason they were given nothing (wait / closed)
        self.refused = 0  # arrivals Prolific refused (no place open, or the study not active)
        self.n = 0

    async def arrive(self, c: httpx.AsyncClient, pid: str, session: str) -> None:
        entered = await c.post("/api/v1/enter", json={"PROLIFIC_PID": pid, "STUDY_ID": self.study_id,
                                                      "SESSION_ID": session})
        assert entered.status_code == 200, entered.text
        headers = {"Authorization": f"Bearer {entered.json()['token']}"}
        got = await c.get("/api/v1/next", headers=headers)
        if got.status_code == 204:  # nothing for them: they return the study on Prolific
            self.turned_away[pid] = (await self.server.store.next_assignment(pid)).reason  # the page's reason
            self.state.finish(session, "RETURNED")
            return
        self.listed.add(pid)
        self.active[pid] = {"session": session, "headers": headers, "assignment": got.json()}

    def choice(self, assignment: dict[str, Any]) -> str:
        texts = list(assignment["outputs"])
        item_id, check = self.key.identify(texts)
        if check:
            return str(self.key.attention[(item_id, texts[0])])
        better = "candidate" if self.rng.random() < 0.8 else "baseline"
        return "A" if better in self.key.writers(item_id, texts[0]) else "B"

    async def step(self, c: httpx.AsyncClient, pid: str) -> None:
        p = self.active[pid]
        a = p["assignment"]
        r = await c.post("/api/v1/judgements", headers=p["headers"],
                         json={"assignment_id": a["assignment_id"], "idempotency_key": uuid.uuid4().hex,
                               "values": {"quality": self.choice(a)}, "seconds": 20.0, "next": True})
        assert r.status_code == 201, r.text
        nxt = r.json().get("next")
        if nxt is not None:
            p["assignment"] = nxt
            return
        status = (await c.get("/api/v1/status", headers=p["headers"])).json()
        assert status["progress"]["completed"], status  # a session admitted is served whole
        self.codes[pid] = status["completion"]["code"]
        self.state.finish(p["session"], "AWAITING REVIEW", self.codes[pid])
        del self.active[pid]

    def round(self) -> None:
        async def body(c: httpx.AsyncClient) -> None:
            for pid in list(self.active):
                await self.step(c, pid)
            for _ in range(2):
                self.n += 1
                pid = f"P{self.n:023d}"
                session = self.state.reserve(self.study_id, pid)
                if session is None:
                    self.refused += 1
                    continue
                await self.arrive(c, pid, session)

        self.server.run(body)


def run_until_stopped(crowd: Crowd, sid: str, sync: Callable[[], str], rounds: int = 200) -> list[str]:
    """Rounds of arrivals, each followed by ``sync`` (which returns what it did), until the study is stopped."""
    actions: list[str] = []
    for _ in range(rounds):
        crowd.round()
        actions.append(sync())
        if crowd.state.studies[sid].get("stopped"):
            return actions
    pytest.fail(f"the study never stopped: {actions} (Prolific: {crowd.state.studies[sid]['status']})")


@pytest.fixture
def fake() -> Any:
    with FakeProlific() as f:
        yield f


def test_waves_follow_the_rule_and_the_study_stops_at_the_decision(tmp_path: Path, fake: FakeProlific) -> None:
    study = make_study(tmp_path / "study")
    lists = len(study.read_lists())
    state = fake.state
    shown: list[tuple[int, int, Any]] = []
    with ProlificClient(TOKEN, base_url=fake.url, timeout=5.0, sleep=lambda s: None) as client:
        created = prolific_create(study, client=client, budget=launch_budget(study), show_wave=lambda *a: shown.append(a))
        sid = created.study_id
        fresh = shown[0][2]
        first = wave_places(fresh.target, 0, WAVE, lists)
        assert state.studies[sid]["total_available_places"] == created.places == first < lists == 20
        assert first % WAVE == 0 and fresh.target <= first
        prolific_transition(study, "PUBLISH", client=client)

        server = InProcess(study)
        crowd = Crowd(study, fake, sid, server)
        try:
            actions = run_until_stopped(crowd, sid, lambda: prolific_sync(study, client=client).action)
            again = prolific_sync(study, client=client)  # a stop is final: a second sync changes nothing
            assert again.action == "" and state.studies[sid]["stopped"]
            rec = server.store.recruitment()

            # one who reserved a place before the stop and arrives after it is told the study is closed
            late = "L" * 24
            state.add_submission(sid, late, "S-late")

            async def arrive_late(c: httpx.AsyncClient) -> tuple[int, str, str]:
                entered = await c.post("/api/v1/enter", json={"PROLIFIC_PID": late, "STUDY_ID": sid,
                                                              "SESSION_ID": "S-late"})
                headers = {"Authorization": f"Bearer {entered.json()['token']}"}
                nxt = await c.get("/api/v1/next", headers=headers)
                reason = (await server.store.next_assignment(late)).reason  # what the nothing-left page is told
                page = await c.get(f"/?PROLIFIC_PID={late}&STUDY_ID={sid}&SESSION_ID=S-late", follow_redirects=True)
                return nxt.status_code, reason, str(page.url)

            code, reason, page = server.run(arrive_late)

            async def admin(c: httpx.AsyncClient) -> tuple[str, dict[str, Any]]:
                html = (await c.get(f"/admin?token={ADMIN}", follow_redirects=True)).text
                return html, (await c.get("/api/v1/admin/status", headers=ADMIN_HEADERS)).json()["recruitment"]

            html, view = server.run(admin)
            assert state.reserve(sid, "N" * 24) is None  # nobody takes a place of a stopped study
        finally:
            server.close()

    assert code == 204 and reason == "closed" and page.endswith("/nothing-left?reason=closed")
    # the rule decided; the waves were opened while it needed them, each a multiple of the wave (or every list)
    assert rec.decided and rec.finished and rec.active == 0
    assert all(a.outcome != "continue" for a in rec.comparisons)
    assert state.patches, "no wave was opened after the first"
    assert state.patches == sorted(set(state.patches))
    assert all(p % WAVE == 0 or p == lists for p in state.patches)
    opened = state.studies[sid]["total_available_places"]
    assert opened < lists  # the stop saved places
    assert "stop" in actions and actions.index("stop") == len(actions) - 1
    # nobody stranded: everyone given a list finished it and holds the completion code
    assert crowd.listed and set(crowd.codes) == crowd.listed and set(crowd.codes.values()) == {"C0MPL3TE"}
    assert not crowd.active
    subs = [s for s in state.submissions.values() if s["study_id"] == sid and s["id"] != "S-late"]
    assert {s["status"] for s in subs} <= {"AWAITING REVIEW", "RETURNED"}
    assert all(s["status"] == "RETURNED" for s in subs if s["participant_id"] in crowd.turned_away)
    # places: those used match those opened (within 20 %), and the recruitment targets that drove the waves
    used = len(crowd.listed)
    assert rec.started == used
    assert abs(opened - used) <= max(0.2 * used, WAVE - 1), (opened, used)
    saved = json.loads((study.state_dir / "prolific.json").read_text())
    assert saved["stopped"] and saved["places"] == opened
    assert [w["places"] for w in saved["waves"]] == [first, *state.patches]
    stages = [json.loads(line) for line in study.logbook_file.read_text().splitlines()]
    waves = [e for e in stages if e["stage"] == "prolific-wave"]
    assert len(waves) == len(state.patches)
    assert [e["stage"] for e in stages if e["stage"].startswith("prolific-")][-1] == "prolific-stop"
    # the admin page and its JSON: waves, sessions, the decision and what the stop saved
    assert view["final"] and view["unused"] == lists - used and view["places"] == opened
    assert view["saved"] == round(view["unused"] * created.budget.reward_per_list, 2) and view["currency"] == "GBP"
    assert view["unused_tasks"] == sum(len(pl.tasks) for pl in study.read_lists()) // lists * view["unused"]
    assert [w["places"] for w in view["waves"]] == [first, *state.patches]
    assert 'id="recruitment"' in html and 'id="waves"' in html and "recruitment finished" in html
    assert f"{view['unused']} lists never given" in html and f"{view['saved']:.2f} GBP" in html
    print(f"\nplaces: first wave {first}, waves {state.patches}, used {used}, opened {opened} of {lists}; "
          f"turned away {len(crowd.turned_away)} ({sorted(set(crowd.turned_away.values()))}), refused {crowd.refused}; "
          f"decision {[(a.comparison, a.outcome, a.n) for a in rec.comparisons]}; actions {[a for a in actions if a]}")


def test_a_fixed_design_opens_every_list(tmp_path: Path, fake: FakeProlific) -> None:
    root = tmp_path / "fixed"
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(24, seed=7))
    (root / "humeval.yaml").write_text(YAML.replace("stopping: {rule: anytime, delta: 0.05, systems: [baseline, "
                                                    "candidate], sessions: 2}\n", ""), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    with ProlificClient(TOKEN, base_url=fake.url, timeout=5.0, sleep=lambda s: None) as client:
        created = prolific_create(study, client=client, budget=launch_budget(study))
        assert created.places == created.lists == len(study.read_lists())
        server = InProcess(study)
        try:
            prolific_transition(study, "PUBLISH", client=client)
            result = prolific_sync(study, client=client)
        finally:
            server.close()
    assert result.action == "" and fake.state.patches == []
