"""``prolific sync`` crashed at each of its steps (raise places, pause, start, stop) recovers.

The study of ``test_prolific_waves`` runs against the fake Prolific, with one crash injected: before the step's
request is sent, after it was sent (Prolific carried it out, the answer is lost), or after its result was kept but
before the intent was marked done. The next syncs reconcile the pending step with Prolific's study
(:mod:`humeval.platforms.prolific.intents`): the study recovers and stops at the decision, the places opened stay
within one wave of the places used, nobody who got a list is left without a code, and no step is left pending.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from humeval.costs import launch_budget
from humeval.platforms.prolific import ProlificClient, intents, prolific_create, prolific_transition
from humeval.platforms.prolific.waves import prolific_sync
from tests.fake_prolific import TOKEN, FakeProlific
from tests.integration.server.inprocess import InProcess
from tests.integration.test_prolific_waves import WAVE, Crowd, make_study, run_until_stopped

pytestmark = [pytest.mark.timeout(300)]


class Crash(BaseException):
    """The process dies here (a BaseException, as a kill is: no ``except Exception`` catches it)."""


def _arm(client: ProlificClient, study: Any, step: str, point: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the first ``step`` crash at ``point``; returns the list the crash is noted in when it fires."""
    fired: list[str] = []

    def is_step(method: str, body: Any) -> bool:
        if fired or not isinstance(body, dict):
            return False
        if step == "wave":
            return method == "PATCH" and "total_available_places" in body
        return method == "POST" and body.get("action") == step.upper()

    def wrap(method: str, real: Any) -> Any:
        def send(path: str, body: Any = None, **kw: Any) -> Any:
            if not is_step(method, body):
                return real(path, body, **kw)
            if point == "before":
                fired.append(point)
                raise Crash(f"killed before {step} was sent")
            answer = real(path, body, **kw)
            if point == "after":
                fired.append(point)
                raise Crash(f"killed after {step} was sent")
            return answer
        return send

    client.patch = wrap("PATCH", client.patch)  # type: ignore[method-assign]
    client.post = wrap("POST", client.post)  # type: ignore[method-assign]
    if point == "kept":
        real_finish = intents.finish

        def finish(st: Any, intent: str, outcome: str) -> None:
            if not fired and outcome == "sent" and (intents.pending(st) or {}).get("step") == step:
                fired.append(point)
                raise Crash(f"killed after {step} was kept, before its intent was marked done")
            real_finish(st, intent, outcome)

        monkeypatch.setattr(intents, "finish", finish)
    return fired


@pytest.mark.parametrize("point", ["before", "after", "kept"])
@pytest.mark.parametrize("step", ["wave", "pause", "start", "stop"])
def test_a_sync_killed_at_any_step_recovers_and_stops_at_the_decision(tmp_path: Path, step: str, point: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    study = make_study(tmp_path / "study")
    with FakeProlific() as fake, ProlificClient(TOKEN, base_url=fake.url, timeout=5.0, sleep=lambda s: None) as client:
        state = fake.state
        sid = prolific_create(study, client=client, budget=launch_budget(study)).study_id
        prolific_transition(study, "PUBLISH", client=client)
        fired = _arm(client, study, step, point, monkeypatch)
        server = InProcess(study)
        crowd = Crowd(study, fake, sid, server)

        def sync() -> str:
            try:
                return prolific_sync(study, client=client).action
            except Crash:
                return f"crash:{step}:{point}"

        try:
            actions = run_until_stopped(crowd, sid, sync)
            again = prolific_sync(study, client=client)  # keeps a stop carried out before a crash; sends nothing
            assert again.action == ""
            rec = server.store.recruitment()
        finally:
            server.close()
    assert fired == [point], f"the {step} step never ran: {actions}"
    assert rec.decided and rec.finished and rec.active == 0
    used, opened = len(crowd.listed), state.studies[sid]["total_available_places"]
    assert rec.started == used and used <= opened <= used + WAVE, (used, opened, actions)
    assert crowd.listed and set(crowd.codes) == crowd.listed and not crowd.active
    assert intents.pending(study) is None
    saved = json.loads((study.state_dir / "prolific.json").read_text())
    assert saved["stopped"] and saved["places"] == opened
    assert [w["places"] for w in saved["waves"]][1:] == state.patches, (saved["waves"], state.patches)
