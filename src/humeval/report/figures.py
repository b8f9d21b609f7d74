"""Report figures (matplotlib): each function returns PNG bytes.

* :func:`distribution_figure`: stacked bars of the response distribution per system
  (Thomson & Belz, Figures 2-4);
* :func:`ranking_figure`: each system's score with its confidence interval, best first;
* :func:`winrate_heatmap`: share of comparisons the row system wins against the column
  system (ties as half wins);
* :func:`decision_bound_figure`: the win rate of A over n with the win rates at which the
  stopping rule decides A or B (dotted where no decision is possible yet).

Figures are :class:`matplotlib.figure.Figure` objects drawn on their own
:class:`~matplotlib.backends.backend_agg.FigureCanvasAgg`, never through pyplot: importing
or using this module leaves the user's matplotlib backend and pyplot's figure registry alone,
and figures can be drawn from several threads.
"""

from __future__ import annotations

import io
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from humeval.report.fonts import use_fonts

__all__ = ["decision_bound_figure", "distribution_figure", "ranking_figure", "winrate_heatmap"]


def _figure(figsize: tuple[float, float]) -> Figure:
    """A figure on its own Agg canvas (no pyplot, no backend switch)."""
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def _png(fig: Figure) -> bytes:
    use_fonts(fig)  # CJK, Arabic, ... system names: a font that has their glyphs
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def distribution_figure(distribution: dict[str, dict[str, int]], title: str) -> bytes:
    """Stacked bars: for each system, the count of each response level."""
    systems = list(distribution)
    levels = list(next(iter(distribution.values())).keys()) if systems else []
    fig = _figure((6, 0.6 * len(systems) + 1.6))
    ax = fig.subplots()
    left = np.zeros(len(systems))
    colours = matplotlib.colormaps["RdYlGn"](np.linspace(0.1, 0.9, max(len(levels), 1)))
    for level, colour in zip(levels, colours, strict=False):
        counts = np.array([distribution[s][level] for s in systems], dtype=float)
        ax.barh(systems, counts, left=left, color=colour, label=level, edgecolor="white")
        left += counts
    ax.set_xlabel("judgements")
    ax.set_title(title)
    ax.invert_yaxis()
    ax.legend(title="response", ncol=min(len(levels), 7), loc="upper center", bbox_to_anchor=(0.5, -0.25), fontsize=8)
    return _png(fig)


def ranking_figure(systems: list[dict[str, Any]], title: str, xlabel: str) -> bytes:
    """Point estimate and CI per system, best at the top."""
    names = [s["system"] for s in systems]
    est = np.array([np.nan if s.get("estimate") is None else s["estimate"] for s in systems], dtype=float)
    lo = np.array([np.nan if s.get("ci_low") is None else s["ci_low"] for s in systems], dtype=float)
    hi = np.array([np.nan if s.get("ci_high") is None else s["ci_high"] for s in systems], dtype=float)
    fig = _figure((6, 0.5 * len(names) + 1.2))
    ax = fig.subplots()
    y = np.arange(len(names))
    # a bootstrap percentile interval need not contain the point estimate (e.g. TrueSkill's mu): clip at 0
    err = np.clip(np.vstack([np.where(np.isnan(lo), 0, est - lo), np.where(np.isnan(hi), 0, hi - est)]), 0, None)
    ax.errorbar(est, y, xerr=err, fmt="o", color="black", ecolor="grey", capsize=4)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def board_figure(rows: list[dict[str, Any]], title: str) -> bytes:
    """A pairwise criterion's leaderboard: each system's Davidson score with its interval, best at the top, the
    anytime-valid rank set written beside its name."""
    labels = [f"{r['system']}  (ranks {r['rank_low']}-{r['rank_high']})" if r["rank_low"] != r["rank_high"]
              else f"{r['system']}  (rank {r['rank_low']})" for r in rows]
    return ranking_figure([{"estimate": r.get("score"), "ci_low": r.get("ci_low"), "ci_high": r.get("ci_high"),
                            "system": label} for r, label in zip(rows, labels, strict=True)],
                          title, "Davidson score (log-strength, centred)")


def winrate_heatmap(matrix: dict[str, dict[str, float | None]], title: str) -> bytes:
    """Row system's win share against the column system (ties half), NaN where not compared."""
    names = list(matrix)
    values = np.array([[np.nan if matrix[r][c] is None else matrix[r][c] for c in names] for r in names], dtype=float)
    fig = _figure((1.0 * len(names) + 2.5, 0.8 * len(names) + 1.8))
    ax = fig.subplots()
    image = ax.imshow(values, vmin=0, vmax=1, cmap="RdBu")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            if not np.isnan(values[i, j]):
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=9)
    fig.colorbar(image, ax=ax, label="win rate of row over column")
    ax.set_title(title)
    return _png(fig)


def decision_bound_figure(stopping: dict[str, Any], title: str) -> bytes:
    """Win rate of A after each decisive judgement, with the win rates at which the rule decides A / B.

    ``stopping`` is a replayed decision (:func:`humeval.analysis.decisions.replay_decisions`):
    its bounds are on the win-rate scale, clipped to [0, 1]; where the unclipped bound lies
    outside [0, 1] (no decision possible yet at that n) the line is dotted.
    """
    path = stopping["path"]
    n = np.array([p["n"] for p in path], dtype=float)
    fig = _figure((6.5, 3.5))
    ax = fig.subplots()
    ax.plot(n, [p["estimate"] for p in path], color="black", label=f"win rate of {stopping['a']}")
    for side, colour, label in (("a", "tab:green", stopping["a"]), ("b", "tab:red", stopping["b"])):
        bound = np.array([np.nan if p[f"threshold_{side}"] is None else p[f"threshold_{side}"] for p in path])
        reachable = np.array([p[f"reachable_{side}"] for p in path], dtype=bool)
        ax.plot(n, np.where(reachable, bound, np.nan), color=colour, ls="--", label=f"decide {label}")
        ax.plot(n, np.where(reachable, np.nan, bound), color=colour, ls=":", lw=0.8)
    if stopping["outcome"] in ("A", "B"):
        ax.axvline(stopping["n"], color="grey", lw=0.8)
        ax.plot([stopping["n"]], [path[-1]["estimate"]], "o", color="black")
        ax.annotate(f"{stopping['decision']} at n = {stopping['n']}", (stopping["n"], path[-1]["estimate"]),
                    textcoords="offset points", xytext=(-6, 8), ha="right", fontsize=8)
    ax.axhline(0.5, color="lightgrey", lw=0.6)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(0, max(n.max(), 1) + 0.5)
    ax.set_xlabel("decisive judgements n")
    ax.set_ylabel(f"win rate of {stopping['a']}")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="best")
    return _png(fig)


def goal_timeline_figure(stopping: dict[str, Any], title: str) -> bytes:
    """Decisions over time for a goal over K systems: systems in contention after each judgement.

    ``stopping`` is a replayed goal decision (:func:`humeval.analysis.decisions.replay_decisions`);
    each elimination (or system settled in / out / ranked) is a step, labelled with the
    system, and the decision a vertical line.
    """
    k = len(stopping["systems"])
    left = [e for e in stopping.get("timeline", []) if e["kind"] in ("eliminated", "in", "out", "ranked")]
    n_end = max(int(stopping["n"]), 1)
    xs, ys, count = [0], [k], k
    for e in left:
        xs += [e["n"], e["n"]]
        ys += [count, count - 1]
        count -= 1
    xs.append(n_end)
    ys.append(count)
    fig = _figure((6.5, 3.5))
    ax = fig.subplots()
    ax.plot(xs, ys, color="black", drawstyle="default")
    for e in left:
        ax.annotate(f"{e['system']} {e['kind']}", (e["n"], ys[xs.index(e["n"]) + 1]), textcoords="offset points",
                    xytext=(4, 4), fontsize=7)
    if stopping["outcome"] == "decided":
        ax.axvline(stopping["n"], color="grey", lw=0.8)
        ax.annotate(f"{stopping['goal']}: {', '.join(stopping['decision'])} at n = {stopping['n']}",
                    (stopping["n"], k), textcoords="offset points", xytext=(-6, -12), ha="right", fontsize=8)
    ax.set_ylim(0, k + 0.5)
    ax.set_xlim(0, n_end * 1.02)
    ax.set_xlabel("judgements fed to the rule")
    ax.set_ylabel("systems in contention")
    ax.set_title(title)
    return _png(fig)
