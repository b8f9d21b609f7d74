"""Report figures touch no global matplotlib state: no backend switch, no pyplot figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import humeval
from humeval.report.figures import (
    decision_bound_figure,
    distribution_figure,
    ranking_figure,
    winrate_heatmap,
)

PNG = b"\x89PNG\r\n\x1a\n"
SRC = str(Path(humeval.__file__).resolve().parents[1])


def _python(code: str, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter (this humeval first on the path); it prints JSON."""
    path = os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        check=False,
        env=os.environ | {"PYTHONPATH": path} | env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _figures() -> dict[str, bytes]:
    path = [
        {"n": n, "estimate": 0.6, "threshold_a": min(1.0, 0.5 + 1 / n), "threshold_b": max(0.0, 0.5 - 1 / n),
         "reachable_a": 0.5 + 1 / n <= 1, "reachable_b": 0.5 - 1 / n >= 0}
        for n in range(1, 30)
    ]
    return {
        "distribution": distribution_figure({"X": {"1": 2, "2": 5}, "Y": {"1": 4, "2": 3}}, "t"),
        "ranking": ranking_figure(
            [{"system": "X", "estimate": 0.5, "ci_low": 0.4, "ci_high": 0.6}], "t", "x"
        ),
        "heatmap": winrate_heatmap({"X": {"X": None, "Y": 0.7}, "Y": {"X": 0.3, "Y": None}}, "t"),
        "bound": decision_bound_figure(
            {"path": path, "a": "X", "b": "Y", "outcome": "A", "decision": "X", "n": 29}, "t"
        ),
    }


@pytest.mark.parametrize("backend", ["svg", "pdf"])
def test_importing_humeval_keeps_the_users_matplotlib_backend(backend: str) -> None:
    out = _python(
        """
        import json, matplotlib
        before = matplotlib.get_backend()
        import humeval, humeval.stats, humeval.analysis, humeval.report, humeval.report.figures
        after_import = matplotlib.get_backend()
        from humeval.report.figures import ranking_figure
        png = ranking_figure([{"system": "X", "estimate": 1.0, "ci_low": 0.5, "ci_high": 1.5}], "t", "x")
        import sys
        print(json.dumps({"before": before, "after_import": after_import,
                          "after_figure": matplotlib.get_backend(), "png": png[:8].hex(),
                          "pyplot": "matplotlib.pyplot" in sys.modules}))
        """,
        MPLBACKEND=backend,
    )
    assert out["before"] == out["after_import"] == out["after_figure"] == backend
    assert bytes.fromhex(out["png"]) == PNG
    assert not out["pyplot"]  # figures are drawn without pyplot


def test_figures_leave_the_users_pyplot_figures_alone() -> None:
    out = _python(
        """
        import json
        import matplotlib.pyplot as plt
        mine = plt.figure()
        from humeval.report.figures import winrate_heatmap
        winrate_heatmap({"X": {"X": None, "Y": 0.7}, "Y": {"X": 0.3, "Y": None}}, "t")
        print(json.dumps({"backend": plt.get_backend(), "figures": plt.get_fignums(),
                          "current": plt.gcf() is mine}))
        """,
        MPLBACKEND="svg",
    )
    assert out == {"backend": "svg", "figures": [1], "current": True}


def test_every_figure_is_png_bytes() -> None:
    for name, png in _figures().items():
        assert isinstance(png, bytes) and png.startswith(PNG), name


def test_figures_can_be_drawn_from_several_threads() -> None:
    expected = _figures()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: _figures(), range(4)))
    assert all(r == expected for r in results)
