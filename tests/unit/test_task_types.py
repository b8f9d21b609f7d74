"""Task types are one module each: the rest of humeval asks a criterion's type, never compares its name.

The scan parses every module outside ``humeval/tasks/`` and every server template, and fails on a
comparison with a task type's name (``c.type == "2afc"``, ``kind in ("magnitude", "rankme")``,
``c.type == wanted``), a table keyed by task type names, a ``case "esa":``, or a template that
selects criteria by their ``type``. ``NOT_CRITERION_TYPES`` lists the few strings that spell a
task type's name but mean something else, each with the reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

import humeval
from humeval.errors import ProtocolError
from humeval.protocol.models import CRITERION_TYPES, Protocol
from humeval.tasks import PARTIALS, TASK_TYPES, InvalidValue
from humeval.tasks.base import MISSING, TaskType

SRC = Path(humeval.__file__).parent
TYPE_VARIABLE = re.compile(r"(c|criterion_|task_)?type")
NAMES = frozenset(TASK_TYPES.all_names())
#: (module, string): a task type's spelling that names something else there
NOT_CRITERION_TYPES = {
    ("data/rankme.py", "likert"): "the RankME data set's method column (likert, plainME, rankME)",
    ("reproduce/rankme.py", "likert"): "the RankME paper's methods, as data/rankme.py",
    ("templates.py", "rankme"): "the name of the `humeval init --template rankme` example study",
    ("reproduce/__init__.py", "rankme"): "the name of the paper reproduced by `humeval reproduce rankme`",
    ("reproduce/casf.py", "mqm"): "the CASF data's human score `human.mqm` (WMT's MQM segment averages)",
}


def _names_in(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_names_in(e) for e in node.elts)) if node.elts else set()
    return set()


def _reads_a_type(node: ast.AST) -> bool:
    """``x.type``, ``x["type"]``, ``x.get("type")`` or a criterion type's usual variable (``ctype``, ``criterion_type``)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "type"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "type"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "type"
    return isinstance(node, ast.Name) and TYPE_VARIABLE.fullmatch(node.id) is not None


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) or (
        isinstance(node, (ast.Tuple, ast.List, ast.Set)) and all(_is_text(e) for e in node.elts))


def comparisons(module: str, source: str) -> list[str]:
    """Where ``source`` (the module ``module``, relative to humeval/) switches on a task type's name."""
    allowed = {name for (where, name) in NOT_CRITERION_TYPES if where == module}
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = set().union(*(_names_in(s) for s in sides)) - allowed
            # a type read compared with something that is not a literal (c.type == wanted); a literal that is no
            # task type's name is another kind of type (a Markdown token's "fence")
            typed = any(_reads_a_type(s) for s in sides) and not all(_is_text(s) for s in sides if not _reads_a_type(s))
            typed = typed and not any(isinstance(s, ast.Name) and s.id == "TASK_TYPES" for s in sides)  # a look-up
            if named or typed:
                found.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Dict):
            keys = set().union(*(_names_in(k) for k in node.keys if k is not None)) - allowed
            if keys:
                found.append(f"{module}:{node.lineno}: a table keyed by task types ({', '.join(sorted(keys))})")
        elif isinstance(node, ast.MatchValue) and _names_in(node.value) - allowed:
            found.append(f"{module}:{node.lineno}: case {ast.unparse(node.value)}")
    return found


_TEMPLATE = re.compile(r"""\.type\s*(==|!=|\bin\b|\bnot\s+in\b)|selectattr\(\s*["']type["']|\[["']type["']\]\s*(==|!=)""")


def template_comparisons(name: str, text: str) -> list[str]:
    return [f"{name}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}" for m in _TEMPLATE.finditer(text)]


def test_no_code_outside_the_task_types_compares_a_type_name() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        if not module.startswith("tasks/"):
            found += comparisons(module, path.read_text(encoding="utf-8"))
    for path in sorted((SRC / "server" / "templates").rglob("*.html")):
        found += template_comparisons(path.relative_to(SRC).as_posix(), path.read_text(encoding="utf-8"))
    assert found == []


@pytest.mark.parametrize("source", [
    'if c.type == "2afc": pass',
    'ok = criterion.type in ("magnitude", "rankme")',
    'ok = ctype != "esa"',
    'ok = criterion_type == kind',
    'ok = c["type"] == "likert"',
    'ok = c.get("type") == "slider"',
    'ok = [c for c in cs if c.type == wanted]',
    'FAMILIES = {"likert": "single", "2afc": "pair"}',
    'match t:\n    case "rankme":\n        pass',
    'ok = families[name] == "2afc"',
])
def test_the_scan_finds_each_way_of_switching_on_a_name(source: str) -> None:
    assert comparisons("x.py", source), source


@pytest.mark.parametrize("source", [
    'ok = token.type == "fence"',
    'ok = child.type in ("text", "code_inline")',
    'ok = c.task.pairwise',
    'ok = ctype in TASK_TYPES and TASK_TYPES.get(ctype).pairwise',
    'ok = r.get("event_type") == event_type',
    'ok = method == "likert"',  # allowed in data/rankme.py only
])
def test_the_scan_passes_what_is_not_a_task_type(source: str) -> None:
    module = "data/rankme.py" if "method" in source else "x.py"
    assert comparisons(module, source) == []


def test_the_scan_reads_templates() -> None:
    assert template_comparisons("t.html", '{% if c.type == "esa" %}\n{% set r = a|selectattr("type", "equalto", "x") %}')
    assert template_comparisons("t.html", '{% for c in a.criteria if c is marks_spans %}') == []


def test_every_criterion_type_is_a_registered_task_type_with_its_own_model_and_partial() -> None:
    assert CRITERION_TYPES == TASK_TYPES.names() == ("2afc", "likert", "magnitude", "rankme", "slider", "esa", "battle",
                                                     "mqm", "bws")
    for entry in TASK_TYPES.entries():
        task = entry.value
        assert isinstance(task, TaskType) and task.name == entry.name
        assert task.model.model_fields["type"].annotation.__args__ == (entry.name,)
        assert (PARTIALS / task.partial.removeprefix("tasks/")).is_file()
        assert entry.summary and task.statistics


def test_an_unknown_type_names_the_registered_ones() -> None:
    with pytest.raises(ProtocolError, match=r"criteria.type: unknown task type 'likret'. Did you mean 'likert'"):
        TASK_TYPES.get("likret")


def _protocol() -> Protocol:
    standard = {"text": "The standard."}
    return Protocol.model_validate({
        "study": {"name": "s", "seed": 1}, "data": {"files": ["d.jsonl"]},
        "criteria": [
            {"name": "pref", "type": "2afc", "question": "Which?", "tie": True},
            {"name": "fl", "type": "likert", "question": "Fluent?", "points": 7},
            {"name": "me", "type": "magnitude", "question": "How good?", "standard": standard, "modulus": 50},
            {"name": "rm", "type": "rankme", "question": "How good?", "standard": standard},
            {"name": "sl", "type": "slider", "question": "How much?", "min": -10, "max": 10},
            {"name": "er", "type": "esa", "question": "Errors?"},
            {"name": "vote", "type": "battle", "question": "Which answer is better?"},
            {"name": "mq", "type": "mqm", "question": "Errors?"},
            {"name": "bw", "type": "bws", "question": "Best and worst?", "tuple_size": 3},
        ],
    })


# what each type's hooks give, written out by hand from its module's docstring
EXPECTED = {
    "pref": {"family": "pair", "pairwise": True, "checks": ("A", "B"), "level": "nominal", "cheap": ("A", "B"),
             "good": "tie", "bad": "both-good", "rows": 1},
    "fl": {"family": "single", "pairwise": False, "checks": (1, 2, 3, 4, 5, 6, 7), "level": "ordinal",
           "cheap": (1, 7), "good": 7, "bad": 8, "rows": 1},
    "me": {"family": "single", "pairwise": False, "checks": (50.0,), "level": "ratio", "cheap": (50.0, 200.0),
           "good": 0.5, "bad": 0, "rows": 1},
    "rm": {"family": "multi", "pairwise": False, "checks": (100.0,), "level": "ratio",
           "cheap": ([100.0] * 3, [400.0] * 3), "good": [1.0, 2.0, 3.0], "bad": [1.0, 2.0], "rows": 3},
    "sl": {"family": "single", "pairwise": False, "checks": (-10.0, -5.0, 0.0, 5.0, 10.0), "level": "interval",
           "cheap": (-10.0, 10.0), "good": -10, "bad": 10.5, "rows": 1},
    "er": {"family": "single", "pairwise": False, "checks": (0.0, 25.0, 50.0, 75.0, 100.0), "level": "interval",
           "cheap": ({"score": 0.0, "spans": []}, {"score": 100.0, "spans": []}),
           "good": {"score": 40, "spans": [{"start": 0, "end": 3, "severity": "major"}]},
           "bad": {"score": 40, "spans": [{"start": 0, "end": 30, "severity": "major"}]}, "rows": 1},
    "vote": {"family": "pair", "pairwise": True, "checks": ("A", "B"), "level": "nominal", "cheap": ("A", "B"),
             "good": "both-bad", "bad": "both-good", "rows": 1},
    "mq": {"family": "single", "pairwise": False, "checks": (100.0,), "level": "interval",
           "cheap": ({"spans": []}, {"spans": []}),
           "good": {"spans": [{"start": 0, "end": 3, "severity": "major", "category": "Fluency/Grammar"}]},
           "bad": {"spans": [{"start": 0, "end": 3, "severity": "major", "category": "Fluency/Grammer"}]}, "rows": 1},
    "bw": {"family": "multi", "pairwise": False, "checks": ("A", "B"), "level": "ordinal",
           "cheap": ({"best": 0, "worst": 2}, {"best": 2, "worst": 0}), "good": {"best": 0, "worst": 2},
           "bad": {"best": 1, "worst": 1}, "rows": 3},
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_type_answers_for_its_criteria(name: str) -> None:
    c = _protocol().criterion(name)
    task, want = c.task, EXPECTED[name]
    assert (task.family, task.pairwise) == (want["family"], want["pairwise"])
    assert task.check_answers(c) == want["checks"]
    assert task.agreement_level(False) == want["level"]
    assert (task.cheap_answer(c, 0.0, 3), task.cheap_answer(c, 1.0, 3)) == want["cheap"]
    good = task.check(c, want["good"], "values.x", 3, [10, 10, 10])
    with pytest.raises(InvalidValue):
        task.check(c, want["bad"], "values.x", 3, [10, 10, 10])
    # an attention check's answer passes the check it answers
    for expected in want["checks"]:
        task.check(c, task.attention_answer(c, expected, 3), "values.x", 3, [10, 10, 10])
    base = {"participant_id": "p", "stop_seq": np.nan}
    rows = task.long_rows(c, good, ["s1", "s2", "s3"], base, 4)
    assert len(rows) == want["rows"] and all(r["criterion"] == name for r in rows)
    assert task.values_schema(c)
    assert task.heds_scale(c)
    assert task.check_request(c, want["checks"][0])


def test_form_values_are_parsed_as_the_api_takes_them() -> None:
    p = _protocol()
    form = {"pref": "tie", "fl": "6", "me": "12.5", "rm.0": "1", "rm.1": "x", "sl": "", "er.score": "70",
            "er.spans": '[{"start": 1, "end": 2, "severity": "minor"}]', "vote": "tie", "mq.spans": "[]",
            "bw.best": "1", "bw.worst": "0"}
    got = {c.name: c.task.form_value(c, form, 2) for c in p.criteria}
    assert got == {"pref": "tie", "fl": 6, "me": 12.5, "rm": [1.0, "x"], "sl": MISSING,
                   "er": {"score": 70.0, "spans": [{"start": 1, "end": 2, "severity": "minor"}]}, "vote": "tie",
                   "mq": {"spans": []}, "bw": {"best": 1, "worst": 0}}
    assert p.criterion("fl").task.form_value(p.criterion("fl"), {"fl": "²"}, 1) == "²"  # not an ASCII digit


def test_a_pairwise_row_names_both_systems_and_the_rule_s_sequence() -> None:
    c = _protocol().criterion("pref")
    (row,) = c.task.long_rows(c, "A", ["x", "y"], {"k": 1}, 7)
    assert (row["system"], row["system_b"], row["choice"], row["stop_seq"], row["k"]) == ("x", "y", "A", 7.0, 1)
    assert np.isnan(row["value"])


def test_the_type_checker_s_criterion_union_is_the_registry_s() -> None:
    """tasks/registry.py spells the union out for mypy under TYPE_CHECKING, beside the registration (models.py's
    ``Criterion`` reads it there); at run time it is built from the registry."""
    from typing import get_args

    from humeval.protocol.models import Criterion

    source = (SRC / "tasks" / "registry.py").read_text(encoding="utf-8")
    spelt = re.search(r"if TYPE_CHECKING:.*?\n\s+CriterionModel: TypeAlias = ([^\n]+)\n", source, re.DOTALL)
    assert spelt is not None
    models = tuple(entry.value.model for entry in TASK_TYPES.entries())
    assert [m.strip() for m in spelt.group(1).split("|")] == [m.__name__ for m in models]
    assert get_args(get_args(Criterion)[0]) == models
