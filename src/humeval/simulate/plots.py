"""Figures: the decision bound over n (the paper's Figure 1) and effort per strategy with CIs.

Each is drawn on a figure of its own (no pyplot), so the user's matplotlib backend is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from humeval.simulate.results import StrategyResult
from humeval.simulate.theory import one_worker_share
from humeval.stopping.base import BoundaryRule
from humeval.stopping.registry import get_rule

__all__ = ["plot_bound", "plot_effort"]


def _subplots(figsize: tuple[float, float]) -> tuple[Any, Any]:
    """A figure on its own Agg canvas and its axes (no pyplot, no backend switch)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig, fig.subplots()


def plot_bound(path: str | Path, *, mu: float, delta: float, n_requests: int, seed: int,
               rules: Sequence[str] = ("hoeffding", "hoeffding-union", "anytime"),
               capability: tuple[float, float] = (0.8, 1.0), difficulty_var: float = 0.1) -> Path:
    """One One-Worker path: share for A over n with each rule's decision threshold (Fig. 1)."""
    rng = np.random.default_rng(seed)
    p = one_worker_share(sum(capability) / 2, mu, difficulty_var)
    x = (rng.random(n_requests) < p).astype(int)
    n = np.arange(1, n_requests + 1)
    share = np.cumsum(x) / n
    fig, ax = _subplots((6, 3.5))
    ax.plot(n, share, color="k", lw=1, label="share for A (One Worker)")
    ax.axhline(0.5, color="gray", lw=0.8)
    for i, name in enumerate(rules):
        rule = get_rule(name, delta)
        if not isinstance(rule, BoundaryRule):
            continue
        a = rule.boundary(n_requests) / n
        color = f"C{i}"
        ax.plot(n, np.minimum(a, 1.0), color=color, lw=1, label=f"{name}: decide A above")
        ax.plot(n, np.maximum(1 - a, 0.0), color=color, lw=1, ls=":")
        dec = rule.decide_paths(np.cumsum(x)[None, :])
        if dec.n[0]:
            ax.axvline(int(dec.n[0]), color=color, ls="--", lw=0.8)
    ax.set_ylim(0.2, 0.8)
    ax.set_xlabel("requests n")
    ax.set_ylabel("share of judgements for A")
    ax.set_title(f"decision bounds, mu={mu:g}, delta={delta:g}")
    ax.legend(fontsize=7, loc="lower right")
    out = Path(path)
    fig.tight_layout()
    fig.savefig(out)
    return out


def plot_effort(path: str | Path, results: Sequence[StrategyResult], title: str = "") -> Path:
    """Mean labelling effort per strategy (one bar group per rule) with 99% CIs."""
    strategies = list(dict.fromkeys(r.strategy for r in results))
    rules = list(dict.fromkeys(r.rule for r in results))
    width = 0.8 / max(1, len(rules))
    fig, ax = _subplots((6, 3.5))
    for j, rule in enumerate(rules):
        rows = [next((r for r in results if r.strategy == s and r.rule == rule), None) for s in strategies]
        xs = np.arange(len(strategies)) + j * width
        means = np.array([r.mean_effort if r else np.nan for r in rows])
        lo = np.array([r.mean_effort - r.ci_low if r else 0 for r in rows])
        hi = np.array([r.ci_high - r.mean_effort if r else 0 for r in rows])
        ax.bar(xs, means, width, yerr=np.vstack([lo, hi]), capsize=3, label=rule)
    ax.set_xticks(np.arange(len(strategies)) + width * (len(rules) - 1) / 2, strategies)
    ax.set_ylabel("labels until decision (99% CI)")
    ax.set_title(title or "labelling effort per strategy")
    ax.legend(fontsize=7)
    out = Path(path)
    fig.tight_layout()
    fig.savefig(out)
    return out
