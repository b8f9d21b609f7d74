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
        vote = {"assignment_id": b["assignment_id"], "idempotency_key": f"k-{b['assignment_id']}", "values": {"vote": "A"}}
        assert (await c.post("/api/v1/judgements", json=vote, headers=h)).status_code == 201
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
    # the export and the battle log carry the prompt each vote was on, exactly as stored (the data's: empty)
    from humeval.arena import study_battle_log
    from humeval.judgements import read_judgements
    from humeval.stages.export import export_stage

    export_stage(study)
    exported = read_judgements(study.results_dir / "judgements.jsonl")
    task = {g["assignment_id"]: g["task_id"] for g in generations}
    on = {aid: exported[exported["task_id"] == task[aid]] for aid in (out["first_aid"], out["second_aid"])}
    assert len(exported) == 2 and all(len(rows) == 1 for rows in on.values())
    assert on[out["first_aid"]][["prompt", "prompt_source"]].values.tolist() == [[typed, "typed"]]
    assert on[out["second_aid"]][["prompt", "prompt_source"]].values.tolist() == [[second["prompt"]["text"], "file"]]
    log = study_battle_log(study, everything=True).set_index("task_id")
    assert log.loc[task[out["first_aid"]], "prompt"] == typed
    assert log.loc[task[out["second_aid"]], "prompt"] == second["prompt"]["text"]


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


def test_a_prompt_file_that_breaks_the_rules_is_refused_by_validate_and_lock_naming_the_prompts(
        tmp_path: Path, shared_data: Path) -> None:
    from humeval.errors import ProtocolError
    from humeval.lock import lock_study
    from humeval.validate import validate_study

    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=2, per_participant=2, spare=3,
                             prompt_rules="{file: spare-prompts.jsonl, max_chars: 300}", lock=False)
    spare = [json.loads(line) for line in (study.root / "spare-prompts.jsonl").read_text().splitlines()]
    long = [(n, s["id"], len(s["text"].strip())) for n, s in enumerate(spare, 1) if len(s["text"].strip()) > 300]
    assert 0 < len(long) < len(spare)  # some prompts break the rule, some do not
    line = next(n for n, text in enumerate((study.root / "humeval.yaml").read_text().splitlines(), 1)
                if "spare-prompts.jsonl" in text)
    problems = validate_study(study.root)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{study.root / 'humeval.yaml'}:{line}: arena.prompts.file: {len(long)} prompt(s) "
                                  "of spare-prompts.jsonl break the prompt rules")
    for n, pid, size in long:
        assert f"{pid} (row {n}, {size} characters): longer than prompts.max_chars" in problems[0]
    assert not any(f"{s['id']} (row" in problems[0] for s in spare if len(s["text"].strip()) <= 300)
    with pytest.raises(ProtocolError, match=r"(?s)cannot lock .*break the prompt rules"):
        lock_study(study)
    assert not study.lock_file.exists()
    # the server still refuses such a file when it starts (a study locked before, or served unlocked)
    from humeval.errors import DataError

    with pytest.raises(DataError, match=f"{long[0][1]} \\(row {long[0][0]}, {long[0][2]} characters\\): longer"):
        InProcess(study)


#: the refusals of a typed prompt as a participant reads them (the catalogues of server/locale, by hand)
TRANSLATED = {
    "de": ("Bitte schreiben Sie einen Prompt mit mindestens 10 Zeichen.",
           "Bitte kürzen Sie den Prompt auf höchstens 2.000 Zeichen (er hat 2.001).",
           "Dieser Prompt kann in dieser Studie nicht verwendet werden; bitte schreiben Sie einen anderen."),
    "zh": ("请输入至少 10 个字符的提示。", "请将提示缩短到最多 2,000 个字符（当前为 2,001 个）。",
           "此提示不能在本研究中使用，请另写一个。"),
    "ar": ("يُرجى كتابة طلب لا يقل عن 10 حرفًا.",
           "يُرجى تقصير الطلب إلى 2,000 حرفًا على الأكثر (يحتوي على 2,001).",
           "لا يمكن استخدام هذا الطلب في هذه الدراسة؛ يُرجى كتابة طلب آخر."),
}


@pytest.mark.parametrize("language", sorted(TRANSLATED))
def test_a_refused_typed_prompt_is_told_in_the_studys_language(tmp_path: Path, shared_data: Path,
                                                               language: str) -> None:
    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=2, per_participant=2, spare=1,
                             prompt_rules=RULES, language=language)
    short, long, blocked = TRANSLATED[language]
    app = InProcess(study)

    async def body(c: httpx.AsyncClient) -> tuple[list[str], httpx.Response]:
        h = await aenter(c, "G1")
        aid = (await c.get("/api/v1/next", headers=h)).json()["assignment_id"]
        messages = []
        for text in ("hi there", "x" * 2001, "Say some Forbidden   Words, please"):
            r = await c.post("/api/v1/battle/prompt", json={"assignment_id": aid, "prompt": text}, headers=h)
            assert r.status_code == 422
            messages.append(r.json()["error"]["message"])
        await c.get("/?participant_id=G2", follow_redirects=True)
        page = await c.get("/task")
        other = page.text.split('name="assignment_id" value="', 1)[1].split('"', 1)[0]
        return messages, await c.post("/task/prompt", data={"assignment_id": other, "prompt": "forbidden words!"})

    (messages, page), _, _ = served(app, body)
    assert messages == [short, long, blocked]
    assert page.status_code == 422 and blocked in page.text and f'lang="{language}"' in page.text


def test_the_repeats_of_a_typed_prompt_are_counted_once_for_every_app_on_the_store(
        tmp_path: Path, shared_data: Path, db_url: str | None) -> None:
    """Two apps (two server processes' worth: each its own pool) on one database: with max_repeats 1, a text used
    through one is replaced by a file prompt through the other; offered through both at once, one is used."""
    import asyncio

    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=4, per_participant=2, spare=2,
                             prompt_rules=RULES)
    typed = json.loads((study.root / "spare-prompts.jsonl").read_text().splitlines()[0])["text"]
    one, two = InProcess(study, db_url), InProcess(study, db_url)

    async def offer(app: InProcess, c: httpx.AsyncClient, who: str, text: str) -> dict:
        h = await aenter(c, who)
        nxt = await c.get("/api/v1/next", headers=h)
        assert nxt.status_code == 200, (who, nxt.status_code, nxt.text)
        aid = nxt.json()["assignment_id"]
        r = await c.post("/api/v1/battle/prompt", json={"assignment_id": aid, "prompt": text}, headers=h)
        assert r.status_code == 201, r.text
        return dict(r.json())

    async def body() -> list[dict]:
        async with one.client() as c1, two.client() as c2:
            first = await offer(one, c1, "P1", typed)
            second = await offer(two, c2, "P2", typed.lower())
            both = await asyncio.gather(offer(one, c1, "P3", "Write a limerick about a tired cat."),
                                        offer(two, c2, "P4", "write a limerick about a tired cat"))
            return [first, second, *both]

    from humeval.arena.prompts import prompt_key

    try:
        first, second, *both = asyncio.run(body())
        uses = [two.store.prompt_uses(prompt_key(t)) for t in (typed, "Write a limerick about a tired cat.")]
    finally:
        one.close()
        two.close()
    assert first["reason"] == "" and first["prompt"]["source"] == "typed"
    assert second["reason"] == "repeated" and second["prompt"]["source"] == "file"
    assert sorted(b["reason"] for b in both) == ["", "repeated"]
    assert uses == [1, 1]  # the replaced offers took no use
