"""Importing humeval, and drawing its figures, changes no global state of the user's process.

Checked in a fresh interpreter each: the matplotlib backend and rcParams, environment
variables, warning filters, the root logger, and the global random states of ``random``
and ``numpy.random``. numpy, scipy, pandas and matplotlib are imported first: what their
own imports do (scipy adds warning filters) is not humeval's doing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import humeval

SRC = str(Path(humeval.__file__).resolve().parents[1])

SNAPSHOT = """
import json, logging, os, random, sys, warnings
import numpy as np, scipy.stats, pandas, matplotlib

def snapshot():
    root = logging.getLogger()
    return {
        "backend": matplotlib.get_backend(),
        "rcParams": repr(sorted((k, repr(v)) for k, v in matplotlib.rcParams.items())),
        "environ": dict(os.environ),
        "warnings": repr(warnings.filters),
        "root logger": repr((root.level, root.handlers, logging.root.manager.disable)),
        "random": repr(random.getstate()),
        "numpy.random": repr(np.random.get_state()),
        "numpy errors": np.geterr(),
        "pyplot imported": "matplotlib.pyplot" in sys.modules,
    }

def report(before, after):
    changed = {k: [before[k], after[k]] for k in before if before[k] != after[k]}
    if "environ" in changed:  # only the variables that changed
        old, new = changed["environ"]
        keys = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        changed["environ"] = [{k: old.get(k) for k in keys}, {k: new.get(k) for k in keys}]
    print(json.dumps(changed))
"""


def _changes(code: str, backend: str = "svg") -> dict[str, list[object]]:
    """Run SNAPSHOT + ``code`` in a fresh interpreter; returns what changed (``{name: [before, after]}``)."""
    path = os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, "-c", SNAPSHOT + textwrap.dedent(code)],
        check=False,
        env=os.environ | {"PYTHONPATH": path, "MPLBACKEND": backend},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_every_humeval_package_changes_no_global_state() -> None:
    changed = _changes(
        """
        import importlib, pkgutil
        before = snapshot()
        import humeval
        names = [m.name for m in pkgutil.iter_modules(humeval.__path__, "humeval.")]
        # the CLI is an application, not a library import (rich draws from random on import)
        for name in names:
            if name not in ("humeval.__main__", "humeval.cli"):
                importlib.import_module(name)
        report(before, snapshot())
        """
    )
    assert changed == {}


def test_plots_of_sampling_and_simulate_keep_the_backend(tmp_path: Path) -> None:
    changed = _changes(
        f"""
        from pathlib import Path
        from humeval.sampling.evaluate import EvalRow, Evaluation
        from humeval.sampling.plot import plot_evaluation
        from humeval.simulate.plots import plot_bound, plot_effort
        out = Path({str(tmp_path)!r})
        q = {{"q05": 0.1, "q25": 0.2, "q50": 0.3, "q75": 0.4, "q95": 0.5}}
        rows = [EvalRow("d", "a", "random", 0.5, 0.3, 0.2, 0.1, 10, q),
                EvalRow("d", "a", "casf", 0.5, 0.4, 0.3, 0.1, 10)]
        before = snapshot()
        plot_evaluation(Evaluation(rows, [], {{}}), out / "evaluation.png")
        plot_evaluation(Evaluation(rows, [], {{}}), out / "evaluation.pdf")
        plot_bound(out / "bound.png", mu=0.1, delta=0.05, n_requests=100, seed=1)
        report(before, snapshot())
        """
    )
    assert changed == {}
    for name in ("evaluation.png", "bound.png"):
        assert (tmp_path / name).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert (tmp_path / "evaluation.pdf").read_bytes().startswith(b"%PDF")
