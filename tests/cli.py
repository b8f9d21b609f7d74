"""Running ``humeval`` from a test: the one way the tests call the command line.

:func:`humeval` runs a command in this process by default, through :func:`humeval.cli.main`, the
script's entry point, so the exit codes (0, 1, 70, 130) and the messages are the script's own; only
the cost of starting Python (0.5 to 1 s a call) is saved. ``process=True`` starts ``python -m humeval``
instead, for what only a process shows: start-up imports, signals, servers, workers, the
environment a process inherits.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner

__all__ = ["humeval"]

#: seconds a separate process may take (the slowest command a test runs, ``demo``, takes ~1 min on a busy machine)
TIMEOUT = 300


def humeval(*args: str | Path, cwd: str | Path | None = None, env: Mapping[str, str | None] | None = None,
            expect: int | None = None, process: bool = False,
            timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run ``humeval ARGS``: its exit code, stdout and stderr (as text).

    ``cwd``: the working folder; ``env``: variables set on top of the current environment (a
    variable set to ``None`` is removed); ``expect``: the exit code the test requires (checked
    here, with the output in the message); ``process``: run ``python -m humeval`` as its own
    process (``timeout`` then applies).
    """
    argv = [str(a) for a in args]
    if process:
        environ = {k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None}
        proc = _in_own_group([sys.executable, "-m", "humeval", *argv], cwd, environ, timeout)
    else:
        proc = _in_process(argv, cwd, env)
    if expect is not None:
        assert proc.returncode == expect, (f"humeval {' '.join(argv)}: exit {proc.returncode}, expected {expect}\n"
                                           f"stderr: {proc.stderr[-4000:]}\nstdout: {proc.stdout[-2000:]}")
    return proc


def _in_own_group(cmd: list[str], cwd: str | Path | None, env: dict[str, str],
                  timeout: float) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` in a process group of its own; on a timeout the whole group is killed (a server's workers too),
    then :class:`subprocess.TimeoutExpired` is raised as by :func:`subprocess.run`."""
    from tests.processes import end_group

    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:
        end_group(proc, grace=0)
        proc.communicate()
        raise
    end_group(proc, grace=0)  # whatever the command left in its group (a server's workers)
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def _in_process(argv: list[str], cwd: str | Path | None,
                env: Mapping[str, str | None] | None) -> subprocess.CompletedProcess[str]:
    from humeval.cli import main

    runner = CliRunner()
    with runner.isolation(env=env) as (out, err, _), contextlib.chdir(cwd or os.getcwd()):
        code = 0
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return subprocess.CompletedProcess(["humeval", *argv], code, stdout, stderr)
