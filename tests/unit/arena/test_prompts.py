"""An arena's prompts, by hand cases: length limits, the blocklist, repeats served from the file or refused, and the
identity filter (with what it catches on LLMFAO's real outputs)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from humeval.arena.prompts import IdentityFilter, Prompt, PromptPool, identity_words, prompt_key, read_prompts
from humeval.errors import DataError
from humeval.protocol.arena import IDENTITY_WORDS, ArenaPrompts


def _rules(**fields: object) -> ArenaPrompts:
    return ArenaPrompts.model_validate({"typed": True, **fields})


def test_the_key_ignores_case_accents_of_width_punctuation_and_white_space() -> None:
    assert prompt_key("Hello!") == prompt_key("  hello ") == prompt_key("HELLO .") == "hello"
    assert prompt_key("Ｈｅｌｌｏ,\tworld") == "hello world"  # full-width letters fold under NFKC
    assert prompt_key("Straße") == prompt_key("STRASSE") == "strasse"  # case folding, not lower()
    assert prompt_key("hello world") != prompt_key("helloworld")


def test_length_limits_and_the_blocklist() -> None:
    pool = PromptPool(_rules(min_chars=5, max_chars=40, blocklist=["forbidden", "secret plan"],
                             blocklist_regex=[r"\b\d{3}-\d{2}-\d{4}\b"]))
    assert pool.offer("   hi  ").reason == "too_short"  # 2 characters once stripped
    assert pool.offer("x" * 41).reason == "too_long" and "at most 40" in pool.offer("x" * 41).message
    assert pool.offer("Is this FORBIDDEN?").reason == "blocked"
    assert pool.offer("the secret   plan").reason == "blocked"  # a phrase, white space tolerated
    assert pool.offer("forbiddenness is fine").accepted  # whole words only
    assert pool.offer("my SSN is 123-45-6789").reason == "blocked"
    decision = pool.offer("  Write a haiku.  ")
    assert decision.accepted and decision.prompt == Prompt(decision.prompt.id, "Write a haiku.", "typed")
    assert decision.prompt.id.startswith("typed-") and decision.prompt.key == "write a haiku"
    assert PromptPool(ArenaPrompts(file="p.txt")).offer("anything").reason == "not_allowed"


def test_a_repeated_prompt_is_served_from_the_file_after_max_repeats(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_text("Explain recursion.\n\nName three rivers.\n", encoding="utf-8")
    pool = PromptPool.from_rules(_rules(file="p.txt", max_repeats=2), tmp_path)
    rng = np.random.default_rng(0)
    first, second, third = (pool.offer(t, rng) for t in ("hi", "Hi!", "HI"))
    assert first.accepted and second.accepted and not third.accepted
    assert third.replaced and third.reason == "repeated" and third.prompt in pool.prompts
    assert third.prompt.source == "file" and pool.seen["hi"] == 2  # the replacement is not counted as "hi"
    assert pool.offer("hello", rng).accepted  # another text is counted on its own


def test_a_repeated_prompt_is_refused_without_a_file_or_with_repeats_refuse(tmp_path: Path) -> None:
    pool = PromptPool(_rules(max_repeats=1))
    assert pool.offer("hi").accepted
    refused = pool.offer("hi", np.random.default_rng(0))
    assert refused.prompt is None and refused.reason == "repeated" and "write another" in refused.message
    (tmp_path / "p.txt").write_text("Prompt A\nPrompt B\n", encoding="utf-8")
    strict = PromptPool.from_rules(_rules(file="p.txt", max_repeats=1, repeats="refuse"), tmp_path, seen={"hi": 1})
    assert strict.offer("Hi", np.random.default_rng(0)).prompt is None  # the counts seeded from stored battles


def test_draws_are_uniform_and_seeded(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_text("\n".join(json.dumps({"id": f"q{i}", "text": f"Prompt {i}"}) for i in range(4)),
                                      encoding="utf-8")
    pool = PromptPool.from_rules(ArenaPrompts(file="p.jsonl"), tmp_path)
    draws = [pool.draw(np.random.default_rng(5)).id for _ in range(3)]
    assert len(set(draws)) == 1  # the same seed, the same prompt
    rng = np.random.default_rng(1)
    counts = np.bincount([int(pool.draw(rng).id[1:]) for _ in range(4000)], minlength=4)
    assert (abs(counts - 1000) < 4 * np.sqrt(4000 * 0.25 * 0.75)).all(), counts  # within 4 binomial sd of 1,000


def test_prompt_files_in_every_format_and_their_errors(tmp_path: Path, shared_data: Path) -> None:
    llmfao = read_prompts(shared_data / "arena" / "llmfao-prompts.jsonl")
    assert len(llmfao) == 19 and llmfao[0].id == "8" and llmfao[0].text.startswith("Argue for and against")
    (tmp_path / "p.csv").write_text("prompt\nfirst\n\"multi\nline\"\n", encoding="utf-8")
    assert [(p.id, p.text) for p in read_prompts(tmp_path / "p.csv")] == [("1", "first"), ("2", "multi\nline")]
    (tmp_path / "bad.jsonl").write_text('{"id": 1, "title": "x"}\n', encoding="utf-8")
    with pytest.raises(DataError, match="row 1 has no `text`"):
        read_prompts(tmp_path / "bad.jsonl")
    (tmp_path / "twice.jsonl").write_text('{"id": 1, "text": "a"}\n{"id": 1, "text": "b"}\n', encoding="utf-8")
    with pytest.raises(DataError, match="id\\(s\\) 1 given more than once"):
        read_prompts(tmp_path / "twice.jsonl")
    (tmp_path / "p.txt").write_text("fine\nforbidden words\n", encoding="utf-8")
    with pytest.raises(DataError, match="1 prompt\\(s\\) break the prompt rules: 2 \\(row 2\\): contains a word"):
        PromptPool.from_rules(ArenaPrompts(file="p.txt", blocklist=["forbidden"]), tmp_path)


def test_the_prompt_rules_are_checked() -> None:
    assert ArenaPrompts.model_validate("prompts.jsonl") == ArenaPrompts(file="prompts.jsonl")  # the short form
    with pytest.raises(ValueError, match=r"blocklist_regex\[0\]: '\(unclosed' is not a regular expression"):
        ArenaPrompts(typed=True, blocklist_regex=["(unclosed"])
    with pytest.raises(ValueError, match="min_chars \\(9\\) must be at most max_chars \\(3\\)"):
        ArenaPrompts(typed=True, min_chars=9, max_chars=3)


# --- the identity filter ------------------------------------------------------------------------------------------


def _spec(name: str, model: str = "", maker: str = "", aliases: tuple[str, ...] = ()) -> SimpleNamespace:
    return SimpleNamespace(name=name, model=model, maker=maker, aliases=list(aliases))


def test_the_identity_filter_catches_names_and_makers_as_whole_words() -> None:
    models = [_spec("gpt-4o-mini", "gpt-4o-mini", "OpenAI", ("ChatGPT",)), _spec("claude-haiku", maker="Anthropic"),
              _spec("x")]
    words = identity_words(models, ["Meta", "Meta AI", "PaLM", "Llama"])
    assert words == ["Meta", "Meta AI", "PaLM", "Llama", "gpt-4o-mini", "OpenAI", "ChatGPT", "claude-haiku",
                     "Anthropic"]  # "x" is too short to be a word of the filter
    f = IdentityFilter(words)
    assert f.find("As an AI developed by OpenAI, I ...") == ["OpenAI"]
    assert f.find("I am ChatGPT (GPT 4o mini).") == ["ChatGPT", "gpt-4o-mini"]
    assert f.find("I'm gpt 4o mini, built on gpt4o-mini") == ["gpt-4o-mini"]  # separators optional
    assert f.find("Meta AI trained me; Meta is my maker") == ["Meta AI", "Meta"]
    assert f.find("a metaphor about napalm and llamas") == []  # no substrings, no plurals
    assert f.find("I am a Llama-based model by ANTHROPIC") == ["Llama", "Anthropic"]
    assert f.battle(["Paris is the capital.", "It is Paris."], "Which model are you, Claude-Haiku?") == ["claude-haiku"]
    assert f.battle(["Paris."], "Are you claude-haiku?", in_prompt=False) == []
    assert f.battle(["Paris.", "Lyon."], "Capital of France?") == []


def test_the_protocol_words_cover_the_brief_s_list() -> None:
    assert {"ChatGPT", "OpenAI", "Claude", "Anthropic", "Llama", "Meta", "Gemini", "Google"} <= set(IDENTITY_WORDS)
    assert ArenaPrompts(typed=True).identity_words == list(IDENTITY_WORDS)


def test_what_the_filter_catches_in_llmfao_s_outputs(shared_data: Path) -> None:
    """LLMFAO's 1,133 outputs with the default words and its 70 models' names and makers (``org``): 20 caught, none
    of them naming the model that wrote it or the maker of one (a phone brand, palm leaves, a command line, and the
    maker "Together" as a word); a substring test of the same words catches 25."""
    rows = [json.loads(line) for line in (shared_data / "arena" / "llmfao-results.jsonl").read_text("utf-8").splitlines()]
    makers = {r["name"]: r["org"] for r in rows}
    words = identity_words([_spec(n, maker=o) for n, o in makers.items()], IDENTITY_WORDS)
    f = IdentityFilter(words)
    caught = {r["id"]: f.find(r["result"] or "") for r in rows}
    caught = {k: v for k, v in caught.items() if v}
    assert len(rows) == 1133 and len(words) == 130
    assert len(caught) == 20
    assert sorted({w for ws in caught.values() for w in ws}) == ["Google", "PaLM", "Together", "command"]
    lowered = [w.lower() for w in words]
    assert sum(any(w in (r["result"] or "").lower() for w in lowered) for r in rows) == 25


def test_the_refusals_are_msgids_of_the_servers_catalogue_with_their_numbers_in_the_languages_way() -> None:
    from humeval.arena.prompts import MESSAGES
    from humeval.server.i18n import translations

    pool = PromptPool(_rules(min_chars=5, max_chars=1000, blocklist=["forbidden"]))
    long = pool.offer("x" * 1234)
    assert long.message == "Please shorten the prompt to at most 1,000 characters (it has 1,234)."
    german = translations("de").gettext
    assert long.text(german, "de") == "Bitte kürzen Sie den Prompt auf höchstens 1.000 Zeichen (er hat 1.234)."
    assert pool.offer("hey").text(translations("zh").gettext, "zh") == "请输入至少 5 个字符的提示。"
    assert pool.offer("forbidden").text(translations("ar").gettext, "ar") == (
        "لا يمكن استخدام هذا الطلب في هذه الدراسة؛ يُرجى كتابة طلب آخر.")
    assert pool.offer("fine prompt").text(german, "de") == ""  # used as typed: nothing to say
    for language in ("de", "zh", "ar"):  # every refusal has its translation, and keeps its placeholders
        gettext = translations(language).gettext
        for msgid in MESSAGES.values():
            assert gettext(msgid) != msgid
            assert sorted(re.findall(r"%\((\w+)\)s", gettext(msgid))) == sorted(re.findall(r"%\((\w+)\)s", msgid))


def test_a_pool_that_is_not_strict_lists_the_prompts_that_break_the_rules_with_their_rows() -> None:
    from humeval.arena.prompts import describe_problems

    prompts = [Prompt("a", "fine prompt", "file"), Prompt("b", "x", "file"), Prompt("c", "a forbidden one", "file")]
    rules = ArenaPrompts(min_chars=3, blocklist=["forbidden"])
    with pytest.raises(DataError, match=r"2 prompt\(s\) break"):
        PromptPool(rules, prompts)
    bad = PromptPool(rules, prompts, strict=False).problems()
    assert [(n, p.id, why) for n, p, why in bad] == [(2, "b", "too_short"), (3, "c", "blocked")]
    assert describe_problems(bad).startswith("b (row 2, 1 characters): shorter than prompts.min_chars; c (row 3): ")
