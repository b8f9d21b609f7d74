"""Which pair of K systems to judge next: ``adaptive`` (from the evidence) or ``uniform``.

``uniform`` spreads judgements evenly over all K (K - 1) / 2 pairs, whatever has been
decided (a round-robin design). ``adaptive`` spends a share ``1 - explore`` on the pairs
that can still end the study soonest and ``explore`` (the exploration floor) evenly on every
open pair (:func:`humeval.stopping.goals.open_pairs`: unresolved and still needed, since
a goal is decided on direct resolutions only):

* ``best`` / ``pair``: the current leader (highest smoothed Borda score among the systems
  in contention, i.e. never beaten directly) against every system it has not yet beaten,
  eliminated or not (the winner must beat each one itself; leader-vs-challenger duels);
* ``top-k``: open pairs straddling the estimated boundary (one system in the estimated top
  k, one outside; LUCB-style);
* ``ranking``: open pairs adjacent in the estimated order first, then the rest (a ranking is
  announced only once every pair is resolved directly).

The choice uses only past judgements, so the guarantee of
:mod:`humeval.stopping.goals` holds unchanged (each pairwise test is valid under
optional sampling). Everything is vectorised over leading axes (simulated runs).

Reference: Even-Dar, Mannor, Mansour (2006), JMLR 7 (successive elimination); Kalyanakrishnan
et al. (2012), ICML (LUCB); Yue & Joachims (2011), ICML (beat the mean, leader vs challengers).
Checked against: hand-built evidence in tests/unit/policies/test_pair_choice.py.
"""

from __future__ import annotations

import numpy as np

from humeval.errors import HumevalError, did_you_mean

__all__ = ["DEFAULT_EXPLORE", "PAIR_POLICIES", "borda_scores", "next_pair", "pair_weights"]

PAIR_POLICIES: tuple[str, ...] = ("adaptive", "uniform")
#: share of judgements the adaptive policy spreads over every unresolved pair in contention
DEFAULT_EXPLORE = 0.1


def borda_scores(wins: np.ndarray) -> np.ndarray:
    """Mean over the other systems of the smoothed win rate (w_ij + 1/2) / (n_ij + 1)."""
    w = np.asarray(wins, dtype=float)
    n = w + np.swapaxes(w, -1, -2)
    rate = (w + 0.5) / (n + 1.0)
    k = w.shape[-1]
    rate = rate * (1 - np.eye(k))
    return rate.sum(axis=-1) / (k - 1)


def _normalise(mask: np.ndarray) -> np.ndarray:
    total = mask.sum(axis=(-1, -2), keepdims=True)
    return np.where(total > 0, mask / np.maximum(total, 1), 0.0)


def pair_weights(wins: np.ndarray, open_pairs: np.ndarray, contention: np.ndarray, goal: str,
                 policy: str = "adaptive", top: int = 1, explore: float = DEFAULT_EXPLORE) -> np.ndarray:
    """Target shares of the next judgements over pairs: ``out[..., i, j]`` for i < j (zero elsewhere).

    ``open_pairs`` are the pairs still able to bring the decision and ``contention`` the
    systems still in contention (:func:`humeval.stopping.goals.open_pairs`,
    :func:`humeval.stopping.goals.goal_status`, both from the direct relation). Each study's
    shares sum to 1 (0 for a study with nothing left to judge under ``adaptive``).
    """
    if policy not in PAIR_POLICIES:
        raise HumevalError(f"unknown pair policy '{policy}'. {did_you_mean(policy, PAIR_POLICIES)}")
    if not 0.0 <= explore <= 1.0:
        raise HumevalError(f"the exploration floor must lie in [0, 1], got {explore!r}")
    w = np.asarray(wins)
    k = w.shape[-1]
    upper = np.triu(np.ones((k, k), dtype=bool), 1)
    if policy == "uniform":
        return np.broadcast_to(_normalise(upper), w.shape).copy()
    op = np.asarray(open_pairs, dtype=bool)
    cont = np.asarray(contention, dtype=bool)
    relevant = (op | np.swapaxes(op, -1, -2)) & upper
    score = borda_scores(w)
    if goal in ("best", "pair"):
        lead = np.argmax(np.where(cont, score, -np.inf), axis=-1)
        is_lead = (np.arange(k) == lead[..., None]) & cont.any(axis=-1, keepdims=True)
        focus = (is_lead[..., :, None] | is_lead[..., None, :]) & relevant
    elif goal == "top-k":
        rank = np.argsort(np.argsort(-score, axis=-1, kind="stable"), axis=-1)
        inside = rank < top
        focus = relevant & (inside[..., :, None] != inside[..., None, :])
    elif goal == "ranking":
        rank = np.argsort(np.argsort(-score, axis=-1, kind="stable"), axis=-1)
        adjacent = np.abs(rank[..., :, None] - rank[..., None, :]) == 1
        focus = relevant & adjacent
    else:
        raise HumevalError(f"unknown goal '{goal}'")
    empty = ~focus.any(axis=(-1, -2), keepdims=True)
    focus = np.where(empty, relevant, focus)
    return (1.0 - explore) * _normalise(focus) + explore * _normalise(relevant)


def next_pair(weights: np.ndarray, counts: np.ndarray) -> tuple[int, int] | None:
    """The pair furthest behind its share (deficit round-robin); None when no pair has weight.

    ``weights`` from :func:`pair_weights` for one study (K x K, i < j); ``counts[i, j]``
    (read for i < j): judgements of the pair so far in either order, including those in
    flight. Deterministic,
    so every server process and the replay choose alike from the same state.
    """
    wt = np.asarray(weights, dtype=float)
    k = wt.shape[-1]
    upper = np.triu(np.ones((k, k), dtype=bool), 1)
    n = np.triu(np.asarray(counts, dtype=float), 1)
    allowed = upper & (wt > 0)
    if not allowed.any():
        return None
    deficit = np.where(allowed, wt * (n[allowed].sum() + 1) - n, -np.inf)
    i, j = np.unravel_index(int(np.argmax(deficit)), deficit.shape)
    return int(i), int(j)
