"""The notebook session of docs/api.md runs as a doctest, in a fresh folder, and prints what the page shows."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

from ..conftest import ROOT

PAGE = ROOT / "docs" / "api.md"
SESSION = re.compile(r"^```pycon\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)


def session(page: Path) -> str:
    """The page's ``pycon`` blocks, in order, as one doctest text."""
    return "\n".join(m["body"] for m in SESSION.finditer(page.read_text(encoding="utf-8")))


def run_session(text: str, name: str) -> doctest.TestResults:
    test = doctest.DocTestParser().get_doctest(text, {}, name, str(PAGE), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    return runner.summarize(verbose=False)


def test_the_session_runs_as_written(tmp_path, monkeypatch):
    pytest.importorskip("uvicorn")  # the rehearsal starts the collection server
    text = session(PAGE)
    for step in ("Study.init(", ".lock()", ".run(", ".rehearse(", ".results(", ".tables()"):  # open, lock, run, ...
        assert step in text, f"docs/api.md: the session no longer shows {step}"
    monkeypatch.chdir(tmp_path)
    result = run_session(text, "docs/api.md")
    assert result.attempted >= 15
    assert result.failed == 0, "docs/api.md: the session's output differs (see the doctest report above)"


def test_a_wrong_output_fails(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_session(">>> 1 + 1\n3\n", "wrong").failed == 1
