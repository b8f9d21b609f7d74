"""``humeval reproduce ppi-stopping``: the prediction-powered stopping rule against the human-only one, simulated
(:func:`humeval.simulate.ppi_stopping.simulate_ppi_stopping`)."""

from __future__ import annotations

from humeval.reproduce import Reproduction, Row
from humeval.simulate.ppi_stopping import simulate_ppi_stopping

__all__ = ["ppi_stopping_reproduction"]


def ppi_stopping_reproduction(iterations: int | None = None, seed: int = 0, fast: bool = False) -> Reproduction:
    """``humeval reproduce ppi-stopping``: the null (p = 0.5) and p = 0.6, agreements 0.5-0.9.

    ``iterations``: simulated comparisons per setting (default 1 000; ``fast``: 300 with at
    most 6 000 items per comparison).
    """
    runs = iterations or (300 if fast else 1000)
    max_items = 6000 if fast else 20000
    rows: list[Row] = []
    results = []
    for p in (0.5, 0.6):
        for r in simulate_ppi_stopping(p, runs=runs, max_items=max_items, seed=seed):
            results.append(r.to_json())
            key = f"p {p:g} | judge agreement {r.agreement:g}"
            if p == 0.5:
                rows.append(Row(f"{key} | wrong decisions, prediction-powered (<= delta {r.delta:g})", None,
                                round(r.ppi_wrong, 3), f"human-only rule: {r.human_wrong:.3f}"))
            else:
                saved = 1 - r.ppi_labels_mean / r.human_labels_mean
                rows.append(Row(f"{key} | human labels until the decision, prediction-powered", None,
                                round(r.ppi_labels_mean, 1),
                                f"human-only rule: {r.human_labels_mean:.1f} ({saved:+.0%} labels saved); "
                                f"wrong {r.ppi_wrong:.3f} vs {r.human_wrong:.3f}"))
    settings = {"runs": runs, "max_items": max_items, "seed": seed, "label_probability": 0.2, "delta": 0.05,
                "results": results}
    return Reproduction("ppi-stopping", rows, settings)
