"""How many human labels the prediction-powered stopping rule needs, beside the human-only rule.

A simulated comparison: items arrive; the human preference for A is Bernoulli(``p``); the
judge agrees with the human on an item with probability ``agreement`` (0.5: a coin, no
information); each item is sent to a human with probability ``label_probability``. The
prediction-powered rule (:func:`humeval.stopping.ppi.ppi_betting_paths`) sees every judge
verdict and the labels drawn; the human-only rule (the recommended ``anytime`` beta-mixture
rule) sees the human labels alone, one after another. Both at the same ``delta``, on the same
random labels. Reported per agreement: wrong-decision rate, undecided share, and the mean
(and median) number of human labels until the decision.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from humeval.errors import DataError
from humeval.rng import as_generator, child_seeds
from humeval.stopping.ppi import ppi_betting_paths
from humeval.stopping.registry import get_rule

__all__ = ["PPIStoppingRow", "simulate_ppi_stopping"]


@dataclass(frozen=True)
class PPIStoppingRow:
    """One setting: the rule's error and effort, beside the human-only rule's on the same labels."""

    p: float
    agreement: float
    label_probability: float
    delta: float
    runs: int
    ppi_wrong: float
    ppi_undecided: float
    ppi_labels_mean: float
    ppi_labels_median: float
    human_wrong: float
    human_undecided: float
    human_labels_mean: float
    human_labels_median: float

    def to_json(self) -> dict[str, float]:
        return asdict(self)


def _wrong(outcome: np.ndarray, p: float) -> float:
    """Share of runs that decided for the worse system (any decision when p = 1/2)."""
    if p == 0.5:
        return float((outcome != 0).mean())
    right = 1 if p > 0.5 else -1
    return float(((outcome != 0) & (outcome != right)).mean())


def simulate_ppi_stopping(p: float = 0.6, agreements: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9), *,
                          label_probability: float = 0.2, delta: float = 0.05, runs: int = 1000,
                          max_items: int = 20000, seed: int = 0) -> list[PPIStoppingRow]:
    """One row per judge-human agreement (see the module docstring); vectorised over runs."""
    if not 0 <= p <= 1 or not all(0 <= a <= 1 for a in agreements):
        raise DataError(f"simulate_ppi_stopping: p and agreements are probabilities in [0, 1], got {p}, {agreements}")
    if runs < 1 or max_items < 2:
        raise DataError(f"simulate_ppi_stopping: runs >= 1 and max_items >= 2 needed, got {runs}, {max_items}")
    rule = get_rule("anytime", delta)
    rows = []
    for agreement, a_seed in zip(agreements, child_seeds(seed, len(agreements)), strict=True):
        rng = as_generator(a_seed)
        human = (rng.random((runs, max_items)) < p).astype(float)
        judge = np.where(rng.random((runs, max_items)) < agreement, human, 1 - human)
        labelled = rng.random((runs, max_items)) < label_probability
        ppi, used = ppi_betting_paths(judge, human, labelled, label_probability, delta)
        # the human-only rule on the same labels, in arrival order (padded paths never decide early)
        order = np.argsort(~labelled, axis=1, kind="stable")
        labels = np.take_along_axis(human, order, axis=1)
        count = labelled.sum(axis=1)
        human_paths = rule.decide_paths(np.cumsum(labels, axis=1))
        valid = human_paths.decided & (human_paths.n <= count)
        h_outcome = np.where(valid, human_paths.outcome, 0)
        h_used = np.where(valid, human_paths.n, count)
        rows.append(PPIStoppingRow(
            p, agreement, label_probability, delta, runs,
            ppi_wrong=_wrong(ppi.outcome, p), ppi_undecided=float((ppi.outcome == 0).mean()),
            ppi_labels_mean=float(used.mean()), ppi_labels_median=float(np.median(used)),
            human_wrong=_wrong(h_outcome, p), human_undecided=float((h_outcome == 0).mean()),
            human_labels_mean=float(h_used.mean()), human_labels_median=float(np.median(h_used)),
        ))
    return rows
