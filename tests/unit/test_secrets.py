"""One redaction for every writer: known secrets and secret-shaped text, in messages, the logbook and the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval import logbook
from humeval.errors import HumevalError
from humeval.files import read_secret
from humeval.judging.client import JudgeError
from humeval.secrets import MASK, forget_all, redact, remember
from humeval.study import StudyFolder
from humeval.templates import init_study
from tests.cli import humeval


@pytest.fixture(autouse=True)
def _forget() -> object:
    forget_all()
    yield
    forget_all()


@pytest.mark.parametrize(("text", "shown"), [
    ("Authorization: Bearer sk-abc-0123456789", "Authorization: Bearer ***"),
    ("Token 8f9a0b1c2d3e4f", "Token ***"),
    ("basic dXNlcjpwYXNzd29yZDEyMw==", "basic ***"),
    ("key sk-proj-AbCdEf123456 refused", "key sk-*** refused"),
    ('{"api_key": "abcd1234", "n": 1}', '{"api_key": "***", "n": 1}'),
    ("?access_token=zzzz9999&x=1", "?access_token=***&x=1"),
    ("postgresql://user:hunter2@db.example/test", "postgresql://user:***@db.example/test"),
])
def test_secret_shapes_are_masked(text: str, shown: str) -> None:
    assert redact(text) == shown


@pytest.mark.parametrize("text", ["the Prolific API token was refused", "Bearer tokens are sent in a header",
                                  "http://127.0.0.1:8000/v1", "tokens_in 1200, tokens_out 24", "risk-averse sk-1",
                                  "a secret: it is", "data.judges[llm].llm.api_key_env"])
def test_prose_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_a_known_secret_is_masked_wherever_it_is(tmp_path: Path) -> None:
    key_file = tmp_path / "key.txt"
    key_file.write_text("plain-local-key-77\n")
    study_root = tmp_path / "study"
    study_root.mkdir()
    assert read_secret(key_file, study_root, "judge key") == "plain-local-key-77"  # read: now known
    nested = {"error": ["echo plain-local-key-77!"], "plain-local-key-77": ("x", 3)}
    assert redact(nested) == {"error": [f"echo {MASK}!"], MASK: ("x", 3)}
    assert remember("abc1234") == "abc1234" and redact("abc1234") == "abc1234"  # 7 characters: not taken as a secret
    assert str(JudgeError("401: you sent plain-local-key-77")) == f"401: you sent {MASK}"


def test_the_logbook_masks_when_it_writes_and_when_it_reads(tmp_path: Path) -> None:
    init_study(tmp_path / "s", "pairwise", items=4)
    study = StudyFolder.open(tmp_path / "s")
    remember("sk-known-but-shapeless")
    logbook.append(study, {"stage": "judge", "error": "401 with sk-known-but-shapeless and Bearer abc123def456"})
    text = study.logbook_file.read_text()
    assert "sk-known-but-shapeless" not in text and "abc123def456" not in text
    with study.logbook_file.open("a") as fh:  # a line an older version wrote
        fh.write('{"stage": "judge", "outcome": "error", "error": "echoed Authorization: Bearer leaked-0123456"}\n')
    assert logbook.read(study)[-1]["error"] == "echoed Authorization: Bearer ***"
    shown = humeval("log", study.root, "--format", "json", expect=0)
    assert "leaked-0123456" not in shown.stdout and "Bearer ***" in shown.stdout


def test_the_command_line_masks_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import humeval.cli.log as log_command

    def failing(*args: object, **kwargs: object) -> None:
        raise HumevalError("the endpoint said: Authorization: Bearer sk-echoed-9876543210")

    monkeypatch.setattr(log_command, "emit_rows", failing)
    init_study(tmp_path / "s", "pairwise", items=4)
    done = humeval("log", tmp_path / "s", expect=1)
    assert "sk-echoed-9876543210" not in done.stderr and "Bearer ***" in done.stderr
