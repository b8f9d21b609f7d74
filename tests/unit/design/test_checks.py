"""Attention checks: expected answers balanced over the study and within lists, seeded, and asked for by the text."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from humeval.design import CheckAnswers, attention_task, build_lists, build_tasks, check_answers
from humeval.design.lists import design_lists
from humeval.protocol import parse_protocol
from humeval.protocol.load import load_protocol
from humeval.server.i18n import LANGUAGES, _attention
from humeval.templates import init_study

BASE = {
    "study": {"name": "s", "seed": 1},
    "data": {"files": ["d.jsonl"]},
    "criteria": [
        {"name": "fluency", "type": "likert", "question": "Fluent?", "points": 5},
        {"name": "adequacy", "type": "slider", "question": "Adequate?", "min": 0, "max": 10},
        {"name": "pref", "type": "2afc", "question": "Which?"},
        {"name": "errors", "type": "esa", "question": "Errors?"},
    ],
}


def _checks(lists):
    return [t for pl in lists for t in pl.tasks if t.kind == "attention"]


def _pairwise_lists(tmp_path: Path, seed: int = 1, items: int = 60):
    protocol = load_protocol(init_study(tmp_path / f"s{seed}", "pairwise", items=items, seed=seed))
    return design_lists(protocol, [f"item-{i + 1:04d}" for i in range(items)], ["baseline", "candidate"])[3]


def test_pairwise_template_sides_balanced_over_the_study(tmp_path: Path) -> None:
    for seed in (1, 2, 3):
        checks = _checks(_pairwise_lists(tmp_path, seed))
        share = Counter(t.expected for t in checks)["A"] / len(checks)
        assert len(checks) == 18 and 0.4 <= share <= 0.6, (seed, share)  # 60 items x 3 / 10 per list = 18 lists
        assert {t.expected for t in checks} == {"A", "B"}


def test_sides_and_points_even_within_each_list() -> None:
    p = parse_protocol(BASE | {"design": {"judgements_per_item": 2, "items_per_participant": 8, "attention_checks": 8}})
    tasks = build_tasks(p, [f"i{i}" for i in range(12)], ["a", "b"])
    lists = build_lists(tasks, p, seed=5)
    overall: dict[str, Counter] = {}
    for pl in lists:
        per: dict[str, Counter] = {}
        for t in (t for t in pl.tasks if t.kind == "attention"):
            per.setdefault(t.criteria[0], Counter())[t.expected] += 1
            overall.setdefault(t.criteria[0], Counter())[t.expected] += 1
        for name, counts in per.items():
            n, k = len(check_answers(p.criterion(name))), sum(counts.values())
            # every answer floor(k / n) or ceil(k / n) times in the list (absent ones count 0)
            got = [counts.get(v, 0) for v in check_answers(p.criterion(name))]
            assert max(got) - min(got) <= 1 and sum(got) == k, (pl.list_id, name, counts, n)
    for name, counts in overall.items():
        got = [counts.get(v, 0) for v in check_answers(p.criterion(name))]
        assert max(got) - min(got) <= 1, (name, counts)  # over the study: counts differ by at most one
    assert set(overall["fluency"]) == {1, 2, 3, 4, 5}
    assert set(overall["adequacy"]) == {0.0, 2.5, 5.0, 7.5, 10.0}
    assert set(overall["errors"]) == {0.0, 25.0, 50.0, 75.0, 100.0}
    assert set(overall["pref"]) == {"A", "B"}


def test_two_checks_of_a_criterion_never_ask_the_same_answer() -> None:
    """A list with two 2afc checks asks once for A, once for B: an always-first clicker fails one in every list."""
    answers = CheckAnswers(3)
    pref = parse_protocol(BASE).criterion("pref")
    draws = [answers.draw(pref, 2) for _ in range(50)]
    assert all(sorted(d) == ["A", "B"] for d in draws)
    assert 0.3 < np.mean([d[0] == "A" for d in draws]) < 0.7  # in a random order


def test_texts_ask_for_the_expected_answer() -> None:
    p = parse_protocol(BASE | {"design": {"judgements_per_item": 1, "items_per_participant": 8, "attention_checks": 8}})
    lists = build_lists(build_tasks(p, [f"i{i}" for i in range(8)], ["a", "b"]), p, seed=2)
    for t in _checks(lists):
        c = p.criterion(t.criteria[0])
        if c.type == "2afc":
            assert ("FIRST output (A)" in t.text) == (t.expected == "A")
            assert ("SECOND output (B)" in t.text) == (t.expected == "B")
        elif c.type == "slider":
            assert f"set the slider to {t.expected:g} " in t.text
        else:
            assert f"give the score {t.expected:g} " in t.text
        # the participant's page, in every shipped language, names the same answer
        criterion = c.model_dump(mode="json")
        for lang in LANGUAGES:
            shown = _attention(criterion, lang, t.expected)
            if c.type == "2afc":
                assert re.findall(r"[(（]([AB])[)）]", shown) == [t.expected], (lang, shown)
            else:
                assert f"{t.expected:g}" in shown and "%(" not in shown, (lang, shown)


def test_magnitude_checks_keep_the_modulus() -> None:
    p = parse_protocol(BASE | {"criteria": [{"name": "me", "type": "magnitude", "question": "?", "modulus": 100,
                                            "standard": {"text": "std"}}]})
    assert check_answers(p.criterion("me")) == (100.0,)
    task = attention_task(build_tasks(p, ["i"], ["a"])[0], p.criterion("me"), 0, 100.0)
    assert "(100)" in task.text and task.expected == 100.0


def test_expected_answers_reproducible_with_the_seed(tmp_path: Path) -> None:
    first = [(t.task_id, t.expected, t.text) for t in _checks(_pairwise_lists(tmp_path / "a", 7))]
    again = [(t.task_id, t.expected, t.text) for t in _checks(_pairwise_lists(tmp_path / "b", 7))]
    other = [(t.task_id, t.expected, t.text) for t in _checks(_pairwise_lists(tmp_path / "c", 8))]
    assert first == again and first != other


def test_the_lists_are_those_drawn_without_the_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The answers come from their own stream: every list's tasks and check positions are those of checks that all
    ask for the first answer (as before the answers were drawn)."""
    p = parse_protocol(BASE | {"design": {"judgements_per_item": 2, "items_per_participant": 6,
                                          "attention_checks": 3, "repeated_items": 1, "counterbalancing": "random"}})
    tasks = build_tasks(p, [f"i{i}" for i in range(6)], ["a", "b"])
    drawn = [[t.task_id for t in pl.tasks] for pl in build_lists(tasks, p, seed=4)]
    monkeypatch.setattr(CheckAnswers, "draw", lambda self, criterion, k: [check_answers(criterion)[0]] * k)
    fixed = build_lists(tasks, p, seed=4)
    assert drawn == [[t.task_id for t in pl.tasks] for pl in fixed]
    assert {t.expected for t in _checks(fixed) if t.criteria == ("pref",)} == {"A"}


def test_qualification_places_the_first_checks_first_and_keeps_the_rest_reproducible() -> None:
    """design.qualification = k: every list opens with k attention checks (the qualification), the other checks and
    the tasks are where the seed puts them; qualification 0 gives the lists drawn before it existed."""
    design = {"judgements_per_item": 2, "items_per_participant": 8, "attention_checks": 3, "repeated_items": 1}
    plain = parse_protocol(BASE | {"design": design})
    tasks = build_tasks(plain, [f"i{i}" for i in range(12)], ["a", "b"])
    before = build_lists(tasks, plain, seed=5)
    zero = build_lists(tasks, parse_protocol(BASE | {"design": design | {"qualification": 0}}), seed=5)
    assert [[t.task_id for t in pl.tasks] for pl in zero] == [[t.task_id for t in pl.tasks] for pl in before]
    p = parse_protocol(BASE | {"design": design | {"qualification": 2}})
    lists = build_lists(tasks, p, seed=5)
    again = build_lists(tasks, p, seed=5)
    assert [[t.task_id for t in pl.tasks] for pl in lists] == [[t.task_id for t in pl.tasks] for pl in again]
    for pl, old in zip(lists, before, strict=True):
        kinds = [t.kind for t in pl.tasks]
        assert kinds[:2] == ["attention", "attention"] and kinds.count("attention") == 3, (pl.list_id, kinds)
        # the qualification is the list's first two checks, in their order; the same checks and answers as before
        assert [t.task_id for t in pl.tasks[:2]] == sorted(t.task_id for t in pl.tasks if t.kind == "attention")[:2]
        assert sorted((t.task_id, t.expected) for t in pl.tasks) == sorted((t.task_id, t.expected) for t in old.tasks)
        # the real tasks and the repeat keep their order
        assert [t.task_id for t in pl.tasks if t.kind != "attention"] == [
            t.task_id for t in old.tasks if t.kind != "attention"]


def test_qualification_beyond_the_checks_is_refused() -> None:
    from humeval.errors import ProtocolError

    with pytest.raises(ProtocolError, match=r"qualification \(3\).*at most attention_checks \(2\)"):
        parse_protocol(BASE | {"design": {"attention_checks": 2, "qualification": 3}})


def _check_answers_of(protocol, items: list[str]) -> Counter:
    lists = design_lists(protocol, items, list(protocol.systems))[3]
    return Counter((t.criteria[0], t.expected) for pl in lists for t in pl.tasks if t.kind == "attention")


def test_every_template_and_the_walkthrough_study_ask_both_sides(tmp_path: Path) -> None:
    """Issue 40's acceptance: the pairwise checks' expected sides are 40-60 % A on every template as `humeval init`
    writes it and on the study docs/getting-started.md builds (its humeval.yaml as the page shows it), and a Likert
    check asks every point. Measured: pairwise and demo 4 of 9 A (44 %), the walk-through 12 of 24 (50 %), its
    coherence checks 9 at each of the 5 points."""
    import yaml

    from humeval.templates import TEMPLATES
    from tests.docs.test_walkthrough import BLOCK, PAGE, steps

    def sides(counts: Counter) -> list[float]:
        pair = {c for c, e in counts if e in ("A", "B")}
        return [counts[(c, "A")] / (counts[(c, "A")] + counts[(c, "B")]) for c in pair]

    shares = {}
    for name in TEMPLATES:
        protocol = load_protocol(init_study(tmp_path / name, name))  # the default 24 items
        counts = _check_answers_of(protocol, [f"item-{i + 1:04d}" for i in range(24)])
        shares[name] = sides(counts)
    assert shares["pairwise"] == shares["demo"] == [4 / 9]
    body = BLOCK.search(PAGE.read_text(encoding="utf-8"))
    assert body is not None
    (text,) = [t for kind, v in steps(body.group("body")) if kind == "write" and v[0].endswith("humeval.yaml")
               for t in [v[1]]]
    walkthrough = parse_protocol(yaml.safe_load(text))
    counts = _check_answers_of(walkthrough, [f"a{i:03d}" for i in range(60)])
    shares["walkthrough"] = sides(counts)
    assert shares["walkthrough"] == [0.5]
    assert all(0.4 <= s <= 0.6 for per in shares.values() for s in per), shares
    likert = sorted(e for c, e in counts if c == "coherence")
    assert likert == [1, 2, 3, 4, 5] and len({counts[("coherence", e)] for e in likert}) == 1
