"""A live battle's prompt through the real app in-process: typed by the participant (checked by the arena's
PromptPool: length, blocklist, repeats; refused with the reason, or a file prompt in place of a repeat) then the two
answers to THAT prompt streamed; or, with a prompt file and no typed prompts, drawn from the file (seeded). The
prompt is stored with the battle's generations. The typed prompts are LLMFAO prompts that are no item of the study,
so the recorded endpoints answer them with the models' real recorded answers."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import httpx
import numpy as np
import pytest

from humeval.store import Store
from humeval.store.generations import doomed_tasks
from tests.integration.server.inprocess import InProcess, assert_error
from tests.integration.server.inprocess import enter as aenter
from tests.integration.server.studies import live_arena_study
from tests.integration.server.test_live_battle import events, served

pytestmark = pytest.mark.timeout(180)

RULES = "{file: spare-prompts.jsonl, typed: true, min_chars: 10, max_chars: 2000, blocklist: [forbidden words], max_repeats: 1}"


def _texts(got: list[tuple[str, dict]]) -> list[str]:
    texts = ["", ""]
    for kind, data in got:
        if kind == "piece":
            texts[data["side"]] += data["text"]
    return texts


def _recorded(study_root: Path) -> dict[tuple[str, str], str]:
    return {(r["model"], r["prompt"]): r["output"]
            for r in map(json.loads, (study_root / "recorded.jsonl").read_text().splitlines())}


def test_a_typed_prompt_is_checked_then_the_models_answer_that_prompt(tmp_path: Path, shared_data: Path) -> None:
    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=2, per_participant=3, spare=2,
                             prompt_rules=RULES)
    recorded = _recorded(study.root)
    spare = [json.loads(line) for line in (study.root / "spare-prompts.jsonl").read_text().splitlines()]
    typed = spare[0]["text"]
    items = {json.loads(line)["input"] for line in (study.root / "data" / "prompts.jsonl").read_text().splitlines()}
    assert 10 <= len(typed) <= 2000 and typed not in items  # no item's prompt: the models answer what was typed
    app = InProcess(study)

    async def body(c: httpx.AsyncClient) -> dict:
        h = await aenter(c, "T1")
        out: dict = {}
        a = (await c.get("/api/v1/next", headers=h)).json()
        assert a["prompt"] == {"url": "/api/v1/battle/prompt", "min_chars": 10, "max_chars": 2000}
        aid = a["assignment_id"]
        early = await c.get(a["stream"], headers=h)  # no prompt yet: nothing asked of the models
        assert early.status_code == 409 and "text/event-stream" not in early.headers["content-type"]
        post = {"assignment_id": aid}
        r = await c.post("/api/v1/battle/prompt", json=post | {"prompt": "hi there"}, headers=h)
        assert_error(r, 422, "prompt_too_short", "prompt")
        assert "at least 10 characters" in r.json()["error"]["message"]
        r = await c.post("/api/v1/battle/prompt", json=post | {"prompt": "x" * 2001}, headers=h)
        assert_error(r, 422, "prompt_too_long", "prompt")
        assert "at most 2,000 characters (it has 2,001)" in r.json()["error"]["message"]
        r = await c.post("/api/v1/battle/prompt", json=post | {"prompt": "Say some Forbidden   Words, please"}, headers=h)
        assert_error(r, 422, "prompt_blocked", "prompt")
        r = await c.post("/api/v1/battle/prompt", json=post | {"prompt": f"  {typed}\n"}, headers=h)
        assert r.status_code == 201, r.text
        out["first"] = r.json()
        again = await c.post("/api/v1/battle/prompt", json=post | {"prompt": "another prompt entirely"}, headers=h)
        out["again"] = again.json()  # the battle keeps its stored prompt
        out["first_texts"] = _texts(events((await c.get(a["stream"], headers=h)).text))
        vote = {"assignment_id": aid, "idempotency_key": f"k-{aid}", "values": {"vote": "B"}}
        assert (await c.post("/api/v1/judgements", json=vote, headers=h)).status_code == 201
        out["first_aid"] = aid
        # the same text again (case and punctuation aside): used once already, so a prompt of the file instead
        b = (await c.get("/api/v1/next", headers=h)).json()
        r = await c.post("/api/v1/battle/prompt", headers=h,
                         json={"assignment_id": b["assignment_id"], "prompt": typed.upper() + " !!"})
        assert r.status_code == 201, r.text
        out["second"] = r.json()
        out["second_texts"] = _texts(events((await c.get(b["stream"], headers=h)).text))
        out["second_aid"] = b["assignment_id"]
        return out

    out, generations, judged = served(app, body)
    first = out["first"]
    assert first["reason"] == "" and first["prompt"]["source"] == "typed" and first["prompt"]["text"] == typed
    assert out["again"]["prompt"] == first["prompt"]
    display = judged[out["first_aid"]]
    assert out["first_texts"] == [recorded[(m, typed)] for m in display]  # each side that model's answer to it
    second = out["second"]
    assert second["reason"] == "repeated" and second["prompt"]["source"] == "file"
    assert second["prompt"]["text"] in {s["text"] for s in spare} and "often" in second["message"]
    shown = [g for g in generations if g["assignment_id"] == out["second_aid"]]
    assert out["second_texts"] == [recorded[(g["model"], second["prompt"]["text"])]
                                   for g in sorted(shown, key=lambda g: g["side"])]
    assert all(
        g["record"]["prompt"] == typed and g["record"]["prompt_source"] == "typed"
        and g["record"]["prompt_id"] == first["prompt"]["id"]
        for g in generations if g["assignment_id"] == out["first_aid"])
    assert all(g["record"]["prompt_source"] == "file" and g["record"]["prompt_id"] == second["prompt"]["id"]
               for g in shown)


def test_the_page_asks_for_the_prompt_and_shows_a_refusal_beside_the_field(tmp_path: Path, shared_data: Path) -> None:
    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=2, per_participant=2, spare=1,
                             prompt_rules=RULES)
    app = InProcess(study)

    async def body(c: httpx.AsyncClient) -> list[httpx.Response]:
        r = await c.get("/?participant_id=W1", follow_redirects=True)
        page = await c.get("/task")
        aid = page.text.split('name="assignment_id" value="', 1)[1].split('"', 1)[0]
        refused = await c.post("/task/prompt", data={"assignment_id": aid, "prompt": "Use the forbidden words"})
        stored = await c.post("/task/prompt", data={"assignment_id": aid, "prompt": "Write a haiku about a cat."})
        battle = await c.get("/task")
        stream = battle.text.split('data-stream="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
        failed = await c.get(stream)  # no model has a recorded answer to that prompt
        return [r, page, refused, stored, battle, failed]

    (_, page, refused, stored, battle, failed), generations, _ = served(app, body)
    assert events(failed.text)[-1] == ("failed", {"reason": "no_recording", "next": "/task"})
    assert {g["record"]["prompt_source"] for g in generations} == {"typed"}
    # served again, the battle would get another prompt: its failure is not one that comes again
    store = Store.open(study, None)
    try:
        assert store.read(lambda conn: doomed_tasks(conn, ["gpt-4", "claude-v2", "llama-2-13b"])) == set()
    finally:
        store.close()
    assert page.status_code == 200 and 'id="prompt"' in page.text and 'maxlength="2000"' in page.text
    assert "Between 10 and 2000 characters." in page.text and "data-stream" not in page.text
    assert refused.status_code == 422 and 'id="prompt-error"' in refused.text and 'aria-invalid="true"' in refused.text
    assert "cannot be used in this study" in refused.text and "Use the forbidden words</textarea>" in refused.text
    assert stored.status_code == 303 and stored.headers["location"] == "/task"
    assert battle.status_code == 200 and "data-stream" in battle.text and 'id="prompt"' not in battle.text
    assert "Write a haiku about a cat." in battle.text  # the prompt shown above the two answers


def test_with_a_prompt_file_and_no_typed_prompts_each_battle_draws_one_of_the_file_seeded(
        tmp_path: Path, shared_data: Path) -> None:
    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=3, per_participant=3, spare=3,
                             prompt_rules="spare-prompts.jsonl")
    recorded = _recorded(study.root)
    spare = [json.loads(line) for line in (study.root / "spare-prompts.jsonl").read_text().splitlines()]
    app = InProcess(study)

    async def body(c: httpx.AsyncClient) -> list[tuple[str, list[str]]]:
        h = await aenter(c, "F1")
        out = []
        for _ in range(3):
            a = (await c.get("/api/v1/next", headers=h)).json()
            assert "prompt" not in a  # nothing to type
            texts = _texts(events((await c.get(a["stream"], headers=h)).text))
            vote = {"assignment_id": a["assignment_id"], "idempotency_key": f"k-{a['assignment_id']}",
                    "values": {"vote": "tie"}}
            assert (await c.post("/api/v1/judgements", json=vote, headers=h)).status_code == 201
            out.append((a["assignment_id"], texts))
        return out

    out, generations, judged = served(app, body)
    for aid, texts in out:
        # the draw, by hand: the study's seed (12), the stream named for the assignment, uniform over the file
        rng = np.random.default_rng(np.random.SeedSequence(12, spawn_key=(zlib.crc32(f"arena-prompt:{aid}".encode()),)))
        expected = spare[int(rng.integers(len(spare)))]
        assert texts == [recorded[(m, expected["text"])] for m in judged[aid]]
        records = [g["record"] for g in generations if g["assignment_id"] == aid]
        assert [(r["prompt_id"], r["prompt_source"]) for r in records] == [(expected["id"], "file")] * 2


def test_a_prompt_file_that_breaks_the_rules_stops_the_app_naming_the_prompt(tmp_path: Path, shared_data: Path) -> None:
    from humeval.errors import DataError

    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=2, per_participant=2, spare=2,
                             prompt_rules="{file: spare-prompts.jsonl, max_chars: 40}")
    spare = [json.loads(line) for line in (study.root / "spare-prompts.jsonl").read_text().splitlines()]
    long = [s["id"] for s in spare if len(s["text"].strip()) > 40]
    assert long
    with pytest.raises(DataError, match=f"{long[0]}: longer than prompts.max_chars"):
        InProcess(study)
