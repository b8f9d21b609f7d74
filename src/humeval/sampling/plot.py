"""A figure of an evaluation: the random distribution per (data set, aspect) and each method's mean."""

from __future__ import annotations

from pathlib import Path

from humeval.sampling.evaluate import Evaluation

__all__ = ["plot_evaluation"]


def plot_evaluation(evaluation: Evaluation, path: str | Path) -> Path:
    """Write a PNG/PDF/SVG (by suffix): one panel per rate, one row per (data set, aspect).

    Random: thin line 5-95 %, thick line 25-75 %, tick at the median; methods: markers.
    Drawn on a figure of its own (no pyplot), so the user's matplotlib backend is left alone.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rates = sorted({r.rate for r in evaluation.rows})
    keys = list(dict.fromkeys((r.dataset, r.aspect) for r in evaluation.rows))
    methods = list(dict.fromkeys(r.method for r in evaluation.rows if r.method != "random"))
    markers = "osD^v<>PX*h"
    fig = Figure(figsize=(4.5 * len(rates) + 1.5, 0.32 * len(keys) + 1.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(rates), squeeze=False)
    for ax, rate in zip(axes[0], rates, strict=True):
        for y, key in enumerate(keys):
            for row in evaluation.rows:
                if (row.dataset, row.aspect) != key or row.rate != rate:
                    continue
                if row.method == "random":
                    q = row.quantiles
                    ax.plot([q["q05"], q["q95"]], [y, y], color="0.6", lw=1)
                    ax.plot([q["q25"], q["q75"]], [y, y], color="0.3", lw=4)
                    ax.plot([q["q50"]], [y], "|", color="k", ms=10)
                else:
                    i = methods.index(row.method)
                    ax.plot([row.tau_b], [y + (i - len(methods) / 2) * 0.06], markers[i % len(markers)],
                            color=f"C{i % 10}", ms=4, label=row.method)
        ax.set_yticks(range(len(keys)), [f"{d} / {a}" for d, a in keys], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("Kendall tau-b (subset vs full ranking)")
        ax.set_title(f"rate {rate:g}")
        ax.grid(axis="x", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    fig.legend(unique.values(), unique.keys(), loc="upper right", fontsize=7)
    fig.tight_layout(rect=(0, 0, 0.9, 1))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    return path
