"""One exit code per class of outcome, as README and docs/cli.md state: 0 done, 1 a user error (the study,
its data, the machine, the command line) with one message and no traceback, 70 a bug with its traceback.
``serve`` checks its port before it prints anything."""

from __future__ import annotations

import socket
from pathlib import Path

from humeval.cli.app import EXIT_BUG, EXIT_OK, EXIT_USER_ERROR
from humeval.collect import check_port
from humeval.errors import HumevalError
from humeval.protocol.models import Protocol
from humeval.templates import init_study
from tests.cli import humeval


def test_the_documented_codes():
    assert (EXIT_OK, EXIT_USER_ERROR, EXIT_BUG) == (0, 1, 70)


def test_serve_on_a_port_in_use_says_so_before_printing_anything(tmp_path: Path):
    init_study(tmp_path / "s", "pairwise", items=6)
    with socket.socket() as held:  # another server listening on the port
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        proc = humeval("serve", "s", "--port", str(port), "--unlocked", cwd=tmp_path, process=True)
    assert proc.returncode == EXIT_USER_ERROR, proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1  # one message: no serving line, no admin token, no uvicorn error
    assert f"--port {port}: port {port} on 127.0.0.1 is already in use by another process" in proc.stderr
    offered = int(proc.stderr.split("the next free port is ", 1)[1].split(":", 1)[0])
    assert offered > port
    assert not (tmp_path / "s" / "study.db").exists()  # nothing prepared or seeded
    assert not (tmp_path / "s" / ".humeval" / "logbook.jsonl").exists()


def test_check_port_offers_the_next_free_port():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        try:
            check_port("127.0.0.1", port)
        except HumevalError as exc:
            message = str(exc)
        else:
            raise AssertionError("a port in use passed the check")
    offered = int(message.split("the next free port is ", 1)[1].split(":", 1)[0])
    check_port("127.0.0.1", offered)  # free when offered (nothing else took it since)
    for p in range(port + 1, offered):  # every port in between was taken
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", p))
            except OSError:
                continue
        raise AssertionError(f"port {p} was free but {offered} was offered")


def test_a_value_not_among_the_choices_is_a_user_error(tmp_path: Path):
    proc = humeval("schema", "--format", "yaml", cwd=tmp_path)
    assert proc.returncode == EXIT_USER_ERROR and proc.stdout == ""
    assert "'yaml'" in proc.stderr and "'json', 'markdown', 'cli-markdown'" in proc.stderr
    assert "Traceback" not in proc.stderr
    unknown = humeval("valdiate", cwd=tmp_path)
    assert unknown.returncode == EXIT_USER_ERROR and "No such command 'valdiate'" in unknown.stderr


def test_a_study_error_exits_1_and_a_bare_humeval_shows_the_help(tmp_path: Path):
    proc = humeval("validate", "missing", cwd=tmp_path)
    assert proc.returncode == EXIT_USER_ERROR and "protocol file not found" in proc.stdout + proc.stderr
    bare = humeval(cwd=tmp_path)  # click calls it a usage error (exit 2); it asks for nothing wrong
    assert bare.returncode == EXIT_OK and "Usage: humeval" in bare.stdout + bare.stderr


def test_a_bug_exits_70_with_its_traceback(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(Protocol, "model_json_schema", classmethod(lambda cls: 1 / 0))
    proc = humeval("schema", cwd=tmp_path)
    assert proc.returncode == EXIT_BUG
    assert "Traceback" in proc.stderr and "ZeroDivisionError" in proc.stderr and "a bug in humeval" in proc.stderr
