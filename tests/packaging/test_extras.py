"""Each extra installs what its commands need: humeval installed into empty virtual environments.

For every install below, one fresh environment (no site packages, no pip of its own) gets
humeval's wheel with that extra, then runs the ``humeval`` script's ``--help`` for every command
the install serves and imports the modules of its extras. ``server`` also sends a Prolific request
to a closed port: it must fail as a Prolific error ("cannot connect"), not for want of an HTTP library.

The installs: the core alone, ``server``, ``server,analysis`` (collection and analysis, the
usual install) and each other extra alone except ``embed`` and ``local-model``, which pull in PyTorch (gigabytes
of wheels; each one's module is imported where it is used and names the extra when absent).

The installer is uv (``uv pip install --python``; the ``dev`` extra brings it, else pip installs it
into a scratch environment first), whose cache links the same files into every environment: the
nine installs take about 70 s on a loaded 2-core machine, where pip needed 150-220 s for each of
``analysis`` and ``dev`` alone. ``HUMEVAL_EXTRAS_TIMING=1`` prints the seconds each install took.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.packaging, pytest.mark.timeout(600)]

#: the commands every install serves (the core: protocol, sampling, design, the store's files)
CORE_COMMANDS = ("init", "schema", "validate", "lock", "log", "run", "sample", "design", "budget", "plan", "prereg",
                 "export", "import", "reproduce", "prolific", "prolific create", "prolific review",
                 "prolific hooks", "prolific hooks subscribe", "prolific hooks secret")
#: install (extras, comma-separated; "" for the core) -> (commands it adds, modules it must import)
INSTALLS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "": ((), ("humeval", "humeval.protocol", "humeval.store.store", "humeval.platforms.entry")),
    "server": (("serve", "rehearse"), ("humeval.server.app", "humeval.platforms.prolific.webhooks", "httpx",
                                       "starlette", "uvicorn", "babel")),
    "server,analysis": (("serve", "rehearse", "dry-run", "demo", "simulate", "collate", "exclude", "analyze",
                         "posthoc", "report", "judge"),
                        ("humeval.server.app", "humeval.judgements.exclusion", "humeval.report", "humeval.stats",
                         "humeval.judging.client", "pandas", "scipy", "sklearn", "matplotlib", "httpx")),
    "analysis": (("dry-run", "simulate", "collate", "exclude", "analyze", "posthoc", "report"),
                 ("humeval.judgements.exclusion", "humeval.report", "humeval.stats", "pandas", "scipy", "sklearn")),
    "parquet": ((), ("pyarrow", "pandas")),
    "postgres": ((), ("psycopg",)),
    "metrics": (("metrics",), ("humeval.metrics", "sacrebleu", "rouge_score", "nltk")),
    "dask": ((), ("dask", "distributed")),
    "dev": ((), ("pytest", "hypothesis", "httpx", "playwright", "schemathesis", "mkdocs", "mypy")),
}

#: a Prolific request to a closed port: a ProlificError ("cannot connect"), never a missing module
PROLIFIC_PROBE = """
from humeval.platforms.prolific.client import ProlificClient, ProlificError
client = ProlificClient("t", base_url="http://127.0.0.1:9", retries=0, timeout=2)
try:
    client.get("/api/v1/studies/")
except ProlificError as exc:
    assert "cannot connect" in str(exc), exc
    print("prolific-probe-ok")
"""


#: the environment of every command: nothing of the running interpreter's (its PYTHONPATH would show pip an
#: installed humeval and the commands another humeval than the one installed)
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def _wheel(folder: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(folder), str(ROOT)],
                   check=True, capture_output=True, text=True, timeout=300, env=CLEAN_ENV)
    return next(folder.glob("humeval-*.whl"))


def uv_binary(tools: Path) -> str:
    """uv on the PATH, or the ``uv`` package of this interpreter (the ``dev`` extra), else uv installed by pip
    into a fresh environment at ``tools``."""
    found = shutil.which("uv")
    if found is not None:
        return found
    try:
        import uv  # type: ignore[import-not-found]

        return str(uv.find_uv_bin())
    except (ImportError, FileNotFoundError):
        pass
    venv.EnvBuilder(with_pip=False, clear=True).create(tools)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(tools / "bin" / "python"), "install", "--quiet",
                    "--disable-pip-version-check", "uv"], check=True, capture_output=True, timeout=300, env=CLEAN_ENV)
    return str(tools / "bin" / "uv")


def _install(uv: str, wheel: Path, extras: str, where: Path) -> tuple[Path, float]:
    """A fresh environment at ``where`` with humeval[extras] installed; its python and the seconds it took."""
    started = time.monotonic()
    venv.EnvBuilder(with_pip=False, clear=True).create(where)
    python = where / "bin" / "python"
    target = f"{wheel}[{extras}]" if extras else str(wheel)
    # humeval's wheel is rebuilt with the same name at every run: its metadata never comes from uv's cache
    done = subprocess.run([uv, "pip", "install", "--quiet", "--refresh-package", "humeval", "--python", str(python),
                           target], capture_output=True, text=True, timeout=600, env=CLEAN_ENV, check=False)
    assert done.returncode == 0, f"uv pip install humeval[{extras}]: {done.stderr[-2000:]}"
    return python, time.monotonic() - started


#: imports the modules given in $HUMEVAL_PROBE_MODULES, then runs ``--help`` of each command given as an
#: argument (Click's runner over the CLI's group), in one process; prints what failed
CHECKER = """
import importlib, os, sys, traceback
from click.testing import CliRunner
for name in filter(None, os.environ["HUMEVAL_PROBE_MODULES"].split(",")):
    try:
        importlib.import_module(name)
    except Exception:
        print(f"import {name}: " + traceback.format_exc(limit=2)[-600:])
from humeval.cli.app import command
group = command(lazy=True)
for line in sys.argv[1:]:
    result = CliRunner().invoke(group, [*line.split(), "--help"], prog_name="humeval")
    if result.exit_code != 0 or "Usage" not in result.output:
        print(f"humeval {line} --help: exit {result.exit_code}: {result.output[-300:]} {result.exception!r}")
"""


def _check(python: Path, extras: str) -> list[str]:
    """What fails in the environment: commands whose --help does not answer, modules that do not import."""
    commands, modules = INSTALLS[extras]
    failed = []
    script = subprocess.run([str(python.parent / "humeval"), "--help"], capture_output=True, text=True,
                            env=CLEAN_ENV, timeout=120, check=False)  # the entry point itself
    if script.returncode != 0 or "Usage" not in script.stdout:
        failed.append(f"humeval --help (humeval[{extras}]): exit {script.returncode}: {script.stderr[-400:]}")
    code = CHECKER + (PROLIFIC_PROBE if "server" in extras.split(",") else "")
    done = subprocess.run([str(python), "-c", code, *CORE_COMMANDS, *commands], capture_output=True, text=True,
                          env={**CLEAN_ENV, "HUMEVAL_PROBE_MODULES": ",".join(modules)}, timeout=300, check=False)
    report = done.stdout.replace("prolific-probe-ok", "").strip()
    if done.returncode != 0 or report or ("server" in extras.split(",") and "prolific-probe-ok" not in done.stdout):
        failed.append(f"humeval[{extras}]: {report[-1500:]} {done.stderr[-800:]}")
    return failed


def test_each_extra_installs_what_its_commands_need(tmp_path: Path) -> None:
    if shutil.which("git") is None and not (ROOT / "pyproject.toml").is_file():
        pytest.fail("the project's pyproject.toml is needed to build the wheel")
    wheel = _wheel(tmp_path / "dist")
    uv = uv_binary(tmp_path / "tools")

    def one(extras: str) -> tuple[str, float, list[str]]:
        python, seconds = _install(uv, wheel, extras, tmp_path / f"env-{extras.replace(',', '+') or 'core'}")
        return extras, seconds, _check(python, extras)

    with ThreadPoolExecutor(max_workers=2) as pool:  # downloads and unpacking overlap; two cores
        results = list(pool.map(one, INSTALLS))
    if os.environ.get("HUMEVAL_EXTRAS_TIMING"):
        for extras, seconds, _ in results:
            print(f"humeval[{extras}]: {seconds:.1f} s", file=sys.stderr)
    failures = [f for _, _, fs in results for f in fs]
    assert not failures, "\n".join(failures)
