"""Every printed output block in the docs is what its command prints today.

The convention: a fenced block that shows what a command printed (or a file it wrote) is preceded by the line
``<!-- output: SOURCE -->``, where SOURCE is a key of :data:`SOURCES` below: the command as the page runs it.
In the block, lines starting with ``$ `` are the commands (a ``<<'PY'`` heredoc's script runs up to its end
marker) and are not compared. The other lines are an excerpt of the output: consecutive lines as printed, a
line ``...`` standing for lines cut (a block may start and end anywhere in the output). Wall times
(``in 4.4s``) are the one thing not compared.

Each source runs once per test session; the demo's is the run tests/integration/test_demo.py checks.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli import humeval

from ..conftest import DEMO_STUDY, ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARK = re.compile(r"^<!-- output: (?P<source>.+?) -->\n```[^\n]*\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)
WALL_TIME = re.compile(r" in \d+(\.\d+)?s\b")


def marked_blocks() -> list[tuple[str, str, str]]:
    """(page, source, block body) of every marked block of README.md and docs/."""
    return [(str(page.relative_to(ROOT)), m["source"], m["body"])
            for page in PAGES for m in MARK.finditer(page.read_text(encoding="utf-8"))]


def shown_lines(body: str) -> list[str]:
    """The lines of a block that show output (commands and heredoc scripts dropped), right-stripped."""
    lines, heredoc = [], None
    for line in body.splitlines():
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            continue
        if line.startswith("$ "):
            found = re.search(r"<<\s*'?(\w+)'?", line)
            heredoc = found.group(1) if found else None
            continue
        lines.append(line.rstrip())
    return lines


def mismatch(shown: list[str], printed: str) -> str | None:
    """None when ``shown`` is an excerpt of ``printed`` (runs of consecutive lines, in order, ``...`` between
    runs); else the first run that the output does not hold, and the output's closest line."""
    out = [WALL_TIME.sub(" in <t>s", line.rstrip()) for line in printed.splitlines()]
    runs: list[list[str]] = [[]]
    for line in shown:
        if line.strip() == "...":
            runs.append([])
        else:
            runs[-1].append(WALL_TIME.sub(" in <t>s", line))
    at = 0
    for run in (r for r in runs if r):
        found = next((i for i in range(at, len(out) - len(run) + 1) if out[i:i + len(run)] == run), None)
        if found is None:
            # the longest head of the run the output holds from somewhere, to show the first line that differs
            best, where = 0, at
            for i in range(at, len(out)):
                k = 0
                while k < len(run) and i + k < len(out) and out[i + k] == run[k]:
                    k += 1
                if k > best:
                    best, where = k, i
            if best == 0:  # not even its first line: the most similar line printed
                close = difflib.get_close_matches(run[0], out, n=1, cutoff=0.0)
                near = close[0] if close else "(nothing)"
            else:
                near = out[where + best] if where + best < len(out) else "(the end of the output)"
            return f"the docs show\n  {run[best]}\nwhere the command prints\n  {near}"
        at = found + len(run)
    return None


def cli(*args: str) -> str:
    return humeval(*args, expect=0).stdout


def _demo(run: tuple[Path, dict, str, float]) -> str:
    from humeval.cli.demo import _print

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        _print(run[1])  # the table `humeval demo` prints, from the summary its `--format json` gave
    return buf.getvalue()


def _rankings_tex(run: tuple[Path, dict, str, float]) -> str:
    return (run[0] / "results" / "rehearsal" / "tables" / "rankings.tex").read_text(encoding="utf-8")


def _thomson_budget(tmp: Path) -> str:
    """As docs/budget.md runs it: Thomson & Belz's design, its platform section replaced by the page's, and its
    pay section (pay.hourly 9.00, pay.seconds_per_task 10)."""
    import yaml

    from humeval.reproduce.thomson import write_study

    write_study(tmp / "thomson", 0)
    protocol = tmp / "thomson" / "humeval.yaml"
    raw = yaml.safe_load(protocol.read_text())
    assert "pay" not in raw
    raw["platform"] = {"kind": "prolific", "completion_code": "C1A2B3C4"}
    raw["pay"] = {"currency": "GBP", "hourly": 9.00, "seconds_per_task": 10}
    protocol.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))
    return cli("budget", str(tmp / "thomson"))


def _dynamic_budget(tmp: Path) -> str:
    """As docs/budget.md runs it: the pairwise template with 30 items on Prolific at 9.00 an hour, after a dry run."""
    with contextlib.chdir(tmp):
        cli("init", "bud", "-n", "30")
        protocol = Path("bud/humeval.yaml")
        text = protocol.read_text()
        assert "  kind: local\n" in text and "  hourly: 9.00" in text
        protocol.write_text(text.replace("  kind: local\n", "  kind: prolific\n  completion_code: C1A2B3C4\n"))
        cli("lock", "bud")
        cli("run", "bud")
        cli("dry-run", "bud")
        return cli("budget", "bud", "--pilot", "bud/results/dry-run/normal/judgements.jsonl", "--strategy", "one,max3",
                   "--delta", "0.05,0.01")


def _heredoc(body: str) -> str:
    """The Python script of the block's ``$ python - <<'PY'`` heredoc, run here."""
    script = re.search(r"^\$ python - <<'PY'\n(.*?)^PY$", body, re.MULTILINE | re.DOTALL)
    assert script, "a 'python heredoc' block holds a $ python - <<'PY' ... PY script"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(script.group(1), "<docs heredoc>", "exec"), {"__name__": "__docs__"})  # noqa: S102 (the docs' own script)
    return buf.getvalue()


#: the commands the docs show the output of: source key -> (needs, producer). needs: "demo" (the session's demo run),
#: "tmp" (a scratch folder) or "block" (the block's own text)
SOURCES: dict[str, tuple[str, Callable[..., str]]] = {
    f"humeval demo {DEMO_STUDY}": ("demo", _demo),
    f"humeval demo {DEMO_STUDY}: {DEMO_STUDY}/results/rehearsal/tables/rankings.tex": ("demo", _rankings_tex),
    "humeval reproduce thomson-design": ("none", lambda: cli("reproduce", "thomson-design")),
    "humeval budget thomson": ("tmp", _thomson_budget),
    "humeval budget bud --pilot bud/results/dry-run/normal/judgements.jsonl --strategy one,max3 --delta 0.05,0.01":
        ("tmp", _dynamic_budget),
    "python heredoc": ("block", _heredoc),
}

BLOCKS = marked_blocks()


@pytest.fixture(scope="session")
def printed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], str]:
    """What a source prints, computed once per session (the demo's run only when a block needs it)."""
    cache: dict[str, str] = {}

    def get(source: str, body: str) -> str:
        needs, produce = SOURCES[source]
        key = source if needs != "block" else f"{source}\n{body}"
        if key not in cache:
            if needs == "demo":
                cache[key] = produce(request.getfixturevalue("demo_run"))
            elif needs == "tmp":
                cache[key] = produce(tmp_path_factory.mktemp("docs-output"))
            elif needs == "block":
                cache[key] = produce(body)
            else:
                cache[key] = produce()
        return cache[key]

    return get


def test_the_pages_mark_their_output_blocks():
    """The blocks this test checks stay marked (a lost mark would silently stop the check), each with a known source."""
    pages = [page for page, _, _ in BLOCKS]
    assert pages.count("docs/getting-started.md") == 4 and pages.count("docs/budget.md") == 4
    assert pages.count("docs/report.md") == 1 and pages.count("docs/pipeline.md") == 1
    assert {source for _, source, _ in BLOCKS} == set(SOURCES)


@pytest.mark.parametrize(("page", "source", "body"), BLOCKS, ids=[f"{p}:{i}" for i, (p, _, _) in enumerate(BLOCKS)])
def test_an_output_block_is_what_its_command_prints(page: str, source: str, body: str, printed):
    problem = mismatch(shown_lines(body), printed(source, body))
    assert problem is None, f"{page}, the block after <!-- output: {source} -->: {problem}"


def test_the_comparison_sees_a_changed_number_a_cut_and_a_wall_time():
    out = "title\n  442 judgements in 4.4s\nrow 1\nrow 2\nrow 3\nsignature\n"
    assert mismatch(["title", "  442 judgements in 9.9s", "...", "signature"], out) is None
    assert mismatch(["title", "  441 judgements in 4.4s", "..."], out) is not None  # a number that differs
    assert mismatch(["row 1", "row 2"], out) is None  # an excerpt
    assert mismatch(["row 1", "row 3"], out) is not None  # a line left out without ...
    assert mismatch(["title", "...", "row 3", "row 2"], out) is not None  # out of order
    assert mismatch(["row 3", "signature", "more"], out) is not None  # a line the command does not print
    assert shown_lines("$ python - <<'PY'\nprint(1)\nPY\n1\n$ humeval x\nok  \n") == ["1", "ok"]
