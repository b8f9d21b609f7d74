"""The walk-through of docs/getting-started.md ("A first real study, step by step") runs as written.

The page marks its block with ``<!-- walkthrough -->``. Every line of the block is a step, in order: a
``humeval ...`` command (run through :func:`tests.cli.humeval`, exit 0 required), ``mkdir -p DIR``, or
``cat > FILE <<'END'`` with the lines up to ``END`` (the file written as shown). Comments and blank lines are
not steps; any other line fails the test, so the page cannot show a command the test does not run.

Three commands need people and are replaced, each named in :data:`REPLACED` (the page says so beside them):
taking part yourself (``serve --db my-study/pilot.db``) becomes a simulated crowd rehearsed into that same
store; the collection (``serve --prolific-sync``) becomes a simulated crowd rehearsed into ``crowd.db``, and
``export`` then takes that store as the study's data (``--as-study``, the logged step). The judge talks to
the fake OpenAI server of tests/fake_openai.py (the block's ``base_url`` is replaced by its address, and the
key must be sent); every connection away from this machine is refused, so ``prolific create --dry-run`` is
shown to need no network. The data file, long articles (400-700 words) with two summaries each, is
generated after ``init``, as the page asks the reader to put theirs.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tests.cli import humeval
from tests.fake_openai import KEY, FakeOpenAI

from ..conftest import ROOT

PAGE = ROOT / "docs" / "getting-started.md"
BLOCK = re.compile(r"^<!-- walkthrough -->\n```bash\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)
HEREDOC = re.compile(r"^cat > (?P<path>\S+) <<'(?P<end>\w+)'$")
BASE_URL = "https://api.openai.com/v1"
ITEMS = 20

#: the page's commands that need people -> what the test runs instead
REPLACED = {
    "humeval serve my-study --db my-study/pilot.db": ["rehearse", "my-study", "--kind", "crowd", "--db", "my-study/pilot.db"],
    "humeval serve my-study --prolific-sync 30": ["rehearse", "my-study", "--kind", "crowd", "--db", "crowd.db"],
    "humeval export my-study": ["export", "my-study", "--db", "crowd.db", "--as-study"],
}


def steps(body: str) -> list[tuple[str, Any]]:
    """The block's steps in order: ("humeval", the command as the page writes it), ("mkdir", dir) or
    ("write", (path, text))."""
    out: list[tuple[str, Any]] = []
    lines = iter(body.splitlines())
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        found = HEREDOC.match(line)
        if found:
            text = []
            for more in lines:
                if more == found["end"]:
                    break
                text.append(more)
            else:
                raise AssertionError(f"{PAGE.name}: heredoc {line!r} has no {found['end']} line")
            out.append(("write", (found["path"], "\n".join(text) + "\n")))
            continue
        command = line.split("  #")[0].strip()  # a comment beside the command
        if command.startswith("humeval "):
            out.append(("humeval", command))
        elif command.startswith("mkdir -p "):
            out.append(("mkdir", command.removeprefix("mkdir -p ")))
        else:
            raise AssertionError(f"{PAGE.name}: walk-through line the test does not run: {raw!r}")
    return out


def write_articles(path: Path, seed: int = 7) -> None:
    """ITEMS long articles (400-700 words) and a summary of each by two systems (60 and 45 words)."""
    rng = np.random.default_rng(seed)
    words = np.array("the council said report water city year people police court government company new "
                     "school health plan market local minister study river bridge election".split())
    with path.open("w", encoding="utf-8") as f:
        for i in range(1, ITEMS + 1):
            article = " ".join(rng.choice(words, int(rng.integers(400, 701))))
            for system, n in (("lead-3", 60), ("bart", 45)):
                row = {"item_id": f"article-{i:02d}", "system": system, "input": article,
                       "output": " ".join(rng.choice(words, n))}
                f.write(json.dumps(row) + "\n")


@pytest.fixture
def local_only(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Refuse every connection to an address other than this machine's; the refused addresses are kept."""
    refused: list[Any] = []
    connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else "local"
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1", "localhost"):
            refused.append(address)
            raise ConnectionRefusedError(f"test: no network ({address})")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return refused


def test_the_walkthrough_runs_as_written(tmp_path: Path, local_only: list[Any]) -> None:
    page = PAGE.read_text(encoding="utf-8")
    blocks = BLOCK.findall(page)
    assert len(blocks) == 1, f"{PAGE.name}: expected one <!-- walkthrough --> bash block, found {len(blocks)}"
    plan = steps(blocks[0])
    commands = [c for kind, c in plan if kind == "humeval"]
    for shown in REPLACED:
        assert shown in commands, f"{PAGE.name}: the walk-through no longer has {shown!r}; update REPLACED"
    study = tmp_path / "my-study"
    outputs: dict[str, str] = {}
    with FakeOpenAI() as fake:
        fake.state.key = KEY
        env = {"OPENAI_API_KEY": KEY, "PROLIFIC_TOKEN": None, "PROLIFIC_TOKEN_FILE": None, "COLUMNS": "250"}
        for kind, what in plan:
            if kind == "mkdir":
                (tmp_path / what).mkdir(parents=True, exist_ok=True)
            elif kind == "write":
                path, text = what
                (tmp_path / path).write_text(text.replace(BASE_URL, fake.url), encoding="utf-8")
            else:
                argv = REPLACED.get(what) or shlex.split(what)[1:]
                if argv[0] == "report":  # the pilot never wrote the study's report
                    assert not (study / "results" / "report.html").exists()
                result = humeval(*argv, cwd=tmp_path, env=env, expect=0)
                outputs.setdefault(what, result.stdout)
                if argv[0] == "init":
                    write_articles(study / "data" / "articles.jsonl")
        requests = fake.state.requests
        keys = set(fake.state.seen_keys)
    assert not local_only, f"a step reached the network: {local_only}"

    # the protocol the page shows is the one the study ran, with the fields the walk-through is about
    protocol = yaml.safe_load((study / "humeval.yaml").read_text())
    assert protocol["presentation"]["input_heading"] == "Article"
    assert protocol["pay"]["seconds_per_task"] == 45 and protocol["platform"]["completion_code"]

    # the judge: every pair of the 20 articles asked in both orders, with the key from the environment
    assert requests == 2 * ITEMS and keys == {f"Bearer {KEY}"}
    verdicts = (study / "judges" / "gpt.jsonl").read_text().splitlines()
    assert len(verdicts) == ITEMS

    # budget: minutes per list from the declared 45 s (not the rehearsal's pace), ceil(tasks x 45 / 60)
    lists = [json.loads(x) for x in (study / "lists" / "lists.jsonl").read_text().splitlines()]
    tasks = max(len(x["tasks"]) for x in lists)
    minutes = math.ceil(tasks * 45 / 60)
    reward = math.ceil(9.00 * minutes / 60 * 100) / 100
    assert (tasks, minutes, reward) == (9, 7, 1.05)  # the numbers the page's prose gives
    budget = outputs["humeval budget my-study"]
    # the source names the declared 45 s, and the rehearsal's measured pace when that is the higher (it follows
    # the declared pace, with noise: either may win)
    row = re.search(rf"^minutes per list\s+{minutes}\s+(?P<source>.*)$", budget, re.M)
    assert row and re.search(r"pay\.seconds_per_task \(?45 s", row["source"]), budget
    assert re.search(rf"^reward per list\s+{reward:.2f} GBP", budget, re.M), budget

    # prolific create --dry-run: the same price in the request, the completion code, nothing sent
    dry = outputs["humeval prolific create my-study --dry-run"]
    request = json.loads(next(line for line in dry.splitlines() if line.startswith("{")))
    assert request["json"]["reward"] == round(reward * 100)
    assert request["json"]["estimated_completion_time"] == minutes
    assert [c["code"] for c in request["json"]["completion_codes"]] == ["C0MPL3TE"]

    # the pilot: its own folder, titled and bannered as a pilot
    pilot = (study / "results" / "pilot" / "report.html").read_text(encoding="utf-8")
    assert "PILOT" in pilot and "(pilot)" in pilot
    assert (study / "results" / "pilot" / "judgements.jsonl").read_text().strip()
    # the study's own report, from the collection taken in with --as-study, is not a pilot's
    report = (study / "results" / "report.html").read_text(encoding="utf-8")
    assert "(pilot)" not in report
    assert (study / "results" / "results.json").is_file() and (study / "results" / "heds.json").is_file()
    entries = [json.loads(x) for x in (study / ".humeval" / "logbook.jsonl").read_text().splitlines()]
    stages = [e.get("stage") for e in entries]
    assert "pilot" in stages and "judge" in stages and "export" in stages
