"""The mistakes a new user makes on a study from ``humeval init``: each one a user error (exit 1), one message
with no traceback, that names the file (and the line, where the mistake is in a file) and says what is valid.

Each case starts from the pairwise or the rating template (``humeval init``), makes one mistake and runs the
command a user would run next, through the command line in process (``tests/cli.py``):

1. ``yaml-indentation``: a key indented one space too far (``humeval.yaml``, validate).
2. ``yaml-unquoted-colon``: a question holding ``: `` unquoted.
3. ``yaml-tab``: a line indented with a tab.
4. ``missing-column``: the data file has no ``system`` column (``sys`` instead).
5. ``system-typo``: ``systems: [baseline, candiate]``.
6. ``latin1-jsonl``: the JSONL data file saved in Latin-1.
7. ``latin1-csv``: the data given as a CSV saved in Latin-1.
8. ``semicolon-csv``: the data given as a CSV separated by semicolons, unquoted, an output holding a semicolon.
9. ``empty-data``: an empty data file.
10. ``duplicate-row``: the same (item, system) row twice.
11. ``exclude-unlocked``: ``exclude`` on a study never locked.
12. ``analyze-unlocked``: ``analyze`` on a study never locked.
13. ``busy-port``: ``serve`` on a port another process listens on.
14. ``unknown-option``: ``validate --strict``.
15. ``unknown-command``: ``humeval valdiate``.
16. ``wrong-format``: ``analyze --format yaml``.
17. ``prolific-no-code``: ``platform: {kind: prolific}`` without ``completion_code``.
18. ``criterion-type-typo``: ``type: likret``.
19. ``likert-one-point``: ``points: 1``.
20. ``sampling-typo``: ``sampling.method: stratfied``.
21. ``stopping-without-2afc``: a ``stopping:`` block on the rating study (no 2afc criterion).
22. ``missing-data-file``: ``data.files: [data/output.jsonl]`` (no such file).
23. ``budget-before-run``: ``budget`` before ``run`` (no lists yet).
24. ``import-missing-file``: ``import`` of a file that does not exist.
25. ``import-unknown-platform``: ``import`` with the platform ``mturkk``.
26. ``report-before-analyze``: ``report`` on a locked study never analysed.
27. ``criterion-twice``: two criteria named ``fluency``.
"""

from __future__ import annotations

import csv
import json
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from humeval.templates import init_study
from tests.cli import humeval

YAML = "humeval.yaml"
DATA = "data/outputs.jsonl"


@dataclass(frozen=True)
class Mistake:
    """One mistake: the template it is made on, how it is made (returns the command's arguments after the study
    folder is created) and what the message must hold: the file, the line (when the mistake is in a file) and
    the words that say what would be valid."""

    name: str
    template: str
    make: Callable[[Path], list[str]]
    names: str  # the file (or the command-line word) the message must name
    line: int | str | None  # the line the message must name: a number, or the first line starting with this text
    valid: tuple[str, ...]  # what would be valid: each must be in the message


def _edit(study: Path, old: str, new: str, file: str = YAML) -> None:
    text = (study / file).read_text(encoding="utf-8")
    assert old in text, f"{file} lacks {old!r}: the template changed"
    (study / file).write_text(text.replace(old, new, 1), encoding="utf-8")


def _line_of(study: Path, needle: str, file: str = YAML) -> int:
    lines = (study / file).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.lstrip().startswith(needle))


def _rows(study: Path) -> list[dict]:
    return [json.loads(line) for line in (study / DATA).read_text(encoding="utf-8").splitlines()]


def _write_csv(study: Path, rows: list[dict], *, encoding: str = "utf-8", delimiter: str = ",") -> None:
    with (study / "data/outputs.csv").open("w", encoding=encoding, newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)
    (study / DATA).unlink()
    _edit(study, "files: [data/outputs.jsonl]", "files: [data/outputs.csv]")


def _accented(rows: list[dict]) -> list[dict]:
    """The rows with a French output, as real restaurant data has (``Café Rouge``)."""
    rows[3] = {**rows[3], "output": "Le Café Rouge sert une cuisine française près du centre."}
    return rows


# -- the mistakes: each returns the command to run --------------------------------------------------------------


def yaml_indentation(s: Path) -> list[str]:
    _edit(s, "\n  description:", "\n   description:")
    return ["validate", "s"]


def yaml_unquoted_colon(s: Path) -> list[str]:
    _edit(s, "question: Which description of the restaurant is better?",
          "question: Which description is better: the first or the second?")
    return ["validate", "s"]


def yaml_tab(s: Path) -> list[str]:
    _edit(s, "\n  layout: long", "\n\tlayout: long")
    return ["validate", "s"]


def missing_column(s: Path) -> list[str]:
    rows = [{("sys" if k == "system" else k): v for k, v in row.items()} for row in _rows(s)]
    (s / DATA).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return ["validate", "s"]


def system_typo(s: Path) -> list[str]:
    _edit(s, "systems: [baseline, candidate]", "systems: [baseline, candiate]")
    _edit(s, "  systems: [baseline, candidate]", "  systems: [baseline, candiate]")
    return ["validate", "s"]


def latin1_jsonl(s: Path) -> list[str]:
    rows = _accented(_rows(s))
    (s / DATA).write_bytes("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("latin-1"))
    return ["validate", "s"]


def latin1_csv(s: Path) -> list[str]:
    _write_csv(s, _accented(_rows(s)), encoding="latin-1")
    return ["validate", "s"]


def semicolon_csv(s: Path) -> list[str]:
    """Joined by semicolons without quoting (as a hand-made export does), one output holding a semicolon."""
    rows = _rows(s)
    rows[4] = {**rows[4], "output": "Cocum serves Chinese food; it is in the city centre."}
    lines = [";".join(rows[0])] + [";".join(str(v) for v in row.values()) for row in rows]
    (s / "data/outputs.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (s / DATA).unlink()
    _edit(s, "files: [data/outputs.jsonl]", "files: [data/outputs.csv]")
    return ["validate", "s"]


def empty_data(s: Path) -> list[str]:
    (s / DATA).write_text("", encoding="utf-8")
    return ["validate", "s"]


def duplicate_row(s: Path) -> list[str]:
    lines = (s / DATA).read_text(encoding="utf-8").splitlines(keepends=True)
    (s / DATA).write_text("".join(lines[:5] + [lines[2]] + lines[5:]), encoding="utf-8")
    return ["validate", "s"]


def exclude_unlocked(s: Path) -> list[str]:
    return ["exclude", "s"]


def analyze_unlocked(s: Path) -> list[str]:
    return ["analyze", "s"]


def unknown_option(s: Path) -> list[str]:
    return ["validate", "s", "--strict"]


def unknown_command(s: Path) -> list[str]:
    return ["valdiate", "s"]


def wrong_format(s: Path) -> list[str]:
    return ["analyze", "s", "--format", "yaml"]


def prolific_no_code(s: Path) -> list[str]:
    _edit(s, "platform:\n  kind: local", "platform:\n  kind: prolific")
    return ["validate", "s"]


def criterion_type_typo(s: Path) -> list[str]:
    _edit(s, "type: likert\n    question: How fluent", "type: likret\n    question: How fluent")
    return ["validate", "s"]


def likert_one_point(s: Path) -> list[str]:
    _edit(s, "points: 5", "points: 1")
    return ["validate", "s"]


def sampling_typo(s: Path) -> list[str]:
    _edit(s, "method: auto", "method: stratfied")
    return ["validate", "s"]


def stopping_without_2afc(s: Path) -> list[str]:
    _edit(s, "\nexclusion:", "\nstopping:\n  rule: anytime\n  delta: 0.05\n  systems: [baseline, candidate]\n\nexclusion:")
    return ["validate", "s"]


def missing_data_file(s: Path) -> list[str]:
    _edit(s, "files: [data/outputs.jsonl]", "files: [data/output.jsonl]")
    return ["validate", "s"]


def budget_before_run(s: Path) -> list[str]:
    humeval("lock", "s", cwd=s.parent, expect=0)
    return ["budget", "s"]


def import_missing_file(s: Path) -> list[str]:
    return ["import", "s", "files", "results/judgements.csv"]


def import_unknown_platform(s: Path) -> list[str]:
    (s / "batch.csv").write_text("HITId,WorkerId\n1,A\n", encoding="utf-8")
    return ["import", "s", "mturkk", "batch.csv"]


def report_before_analyze(s: Path) -> list[str]:
    humeval("lock", "s", cwd=s.parent, expect=0)
    return ["report", "s"]


def criterion_twice(s: Path) -> list[str]:
    _edit(s, "- name: adequacy", "- name: fluency  # was adequacy")
    return ["validate", "s"]


MISTAKES = [
    Mistake("yaml-indentation", "pairwise", yaml_indentation, YAML, 8, ("indent",)),
    Mistake("yaml-unquoted-colon", "pairwise", yaml_unquoted_colon, YAML, 21, ("quote",)),
    Mistake("yaml-tab", "pairwise", yaml_tab, YAML, 13, ("tab", "spaces")),
    Mistake("missing-column", "pairwise", missing_column, DATA, None, ("system", "sys")),
    Mistake("system-typo", "pairwise", system_typo, YAML, "systems: [baseline, candiate]", ("candiate", "candidate")),
    Mistake("latin1-jsonl", "pairwise", latin1_jsonl, DATA, 4, ("UTF-8",)),
    Mistake("latin1-csv", "pairwise", latin1_csv, "data/outputs.csv", 5, ("UTF-8",)),
    Mistake("semicolon-csv", "pairwise", semicolon_csv, "data/outputs.csv", 6, ("semicolon", "double quotes")),
    Mistake("empty-data", "pairwise", empty_data, DATA, None, ("item_id", "system", "output")),
    Mistake("duplicate-row", "pairwise", duplicate_row, DATA, 6, ("item-0001, reference", "exactly one row")),
    Mistake("exclude-unlocked", "pairwise", exclude_unlocked, YAML, None, ("humeval lock",)),
    Mistake("analyze-unlocked", "rating", analyze_unlocked, YAML, None, ("humeval lock",)),
    Mistake("busy-port", "pairwise", lambda s: [], "--port", None, ("already in use", "next free port")),
    Mistake("unknown-option", "pairwise", unknown_option, "--strict", None, ("--help",)),
    Mistake("unknown-command", "pairwise", unknown_command, "valdiate", None, ("validate",)),
    Mistake("wrong-format", "pairwise", wrong_format, "--format", None, ("table", "json", "csv")),
    Mistake("prolific-no-code", "pairwise", prolific_no_code, YAML, "kind: prolific", ("completion_code",)),
    Mistake("criterion-type-typo", "rating", criterion_type_typo, YAML, "type: likret", ("likret", "likert")),
    Mistake("likert-one-point", "rating", likert_one_point, YAML, "points: 1", ("points", "2")),
    Mistake("sampling-typo", "pairwise", sampling_typo, YAML, "method: stratfied", ("stratfied", "stratified")),
    Mistake("stopping-without-2afc", "rating", stopping_without_2afc, YAML, "stopping:", ("2afc",)),
    Mistake("missing-data-file", "pairwise", missing_data_file, YAML, "files: [data/output.jsonl]",
            ("data/output.jsonl", "Did you mean 'data/outputs.jsonl'")),
    Mistake("budget-before-run", "pairwise", budget_before_run, "lists", None, ("humeval run",)),
    Mistake("import-missing-file", "pairwise", import_missing_file, "results/judgements.csv", None, ("file",)),
    Mistake("import-unknown-platform", "pairwise", import_unknown_platform, "mturkk", None, ("mturk", "prolific")),
    Mistake("report-before-analyze", "pairwise", report_before_analyze, "results.json", None, ("humeval analyze",)),
    Mistake("criterion-twice", "rating", criterion_twice, YAML, "- name: fluency  # was adequacy", ("fluency", "unique")),
]


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_a_new_users_mistake_gets_one_clear_message(mistake: Mistake, tmp_path: Path):
    study = tmp_path / "s"
    init_study(study, mistake.template, items=6)
    if mistake.name == "busy-port":
        humeval("lock", "s", cwd=tmp_path, expect=0)
        with socket.socket() as held:  # another server listening on the port
            held.bind(("127.0.0.1", 0))
            held.listen()
            port = held.getsockname()[1]
            proc = humeval("serve", "s", "--port", str(port), cwd=tmp_path)
    else:
        proc = humeval(*mistake.make(study), cwd=tmp_path)
    said = proc.stdout + proc.stderr
    where = f"humeval {' '.join(proc.args[1:])}: exit {proc.returncode}\n{said}"
    assert proc.returncode == 1, where
    assert "Traceback" not in said, where
    assert mistake.names in said, where
    if mistake.line is not None:
        line = _line_of(study, mistake.line, mistake.names) if isinstance(mistake.line, str) else mistake.line
        assert re.search(rf"\bline {line}\b|{re.escape(mistake.names)}:{line}\b", said), where
    for word in mistake.valid:
        assert word.lower() in said.lower(), where


def test_every_mistake_is_listed_in_the_docstring():
    listed = re.findall(r"^\d+\. ``([a-z0-9-]+)``", __doc__ or "", flags=re.M)
    assert listed == [m.name for m in MISTAKES]
