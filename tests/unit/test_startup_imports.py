"""Small commands import what they need and no more: no pandas or SciPy for validate, lock, log or simulate.

Structural, not timed: a fresh interpreter runs the commands and reports the heavy modules it holds
(``benchmarks/bench_startup.py`` measures the times).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from humeval.templates import init_study

HEAVY = ("pandas", "scipy", "numpy", "matplotlib", "sklearn", "pyarrow", "sqlalchemy", "markdown_it", "pygments")

_RUN = """
import json, sys
from humeval.cli.app import main
for args in {commands!r}:
    sys.argv = ["humeval", *args]
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, (args, exc.code)
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def _heavy_after(*commands: list[str]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _RUN.format(commands=list(commands), heavy=HEAVY)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_validate_lock_log_of_the_rating_template_import_no_data_stack(tmp_path: Path) -> None:
    study = tmp_path / "rating"
    init_study(study, "rating")
    assert _heavy_after(["validate", str(study)], ["lock", str(study)], ["log", str(study)]) == []
    assert (study / ".humeval" / "lock.json").is_file()


def test_simulate_imports_no_scipy_without_a_plot() -> None:
    heavy = _heavy_after(["simulate", "--iterations", "3", "--n-requests", "60", "--strategy", "one",
                          "--rule", "anytime", "--format", "json"])
    assert "scipy" not in heavy and "pandas" not in heavy and "matplotlib" not in heavy
