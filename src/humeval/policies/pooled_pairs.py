"""Which pairs to battle next when statements pool votes across opponents (:mod:`humeval.stopping.pooled`).

A vote of (a, b) feeds the direct statement "a vs b" and, through b as the common opponent, every statement
"a vs j" (paired with a vote of (j, b)) and "b vs j" (paired with a vote of (j, a)). ``adaptive`` weighs each
pair by what it feeds among the statements the goal still needs (:func:`humeval.stopping.goals.open_pairs`), and
with ``goal`` among the question's focal ones only (:func:`focal_statements`: an earlier version weighed every
needed statement, so near ties far from the answer took most votes; docs/arena.md, "The misses"):

    value(a, b) = u_ab + 1/2 sum_j [u_aj disc(a, j; b) + u_bj disc(b, j; a)],   u_ij = 1 / max(d_ij^2, d_min^2),

where d_ij is the estimated strength gap of an open statement (0 when not needed: a statement that is nearly a
tie needs most votes, as in the oracle allocation of best-arm identification), disc(i, j; m) = q_im (1 - q_jm) +
(1 - q_im) q_jm the chance that a pair of votes through m is discordant (only those count) and 1/2 because a
virtual duel costs two votes. A share ``explore`` goes evenly to every available pair touching a system of an
open statement. ``uniform`` spreads votes evenly over every available pair (Chatbot Arena's random pairs).

The weights use only past votes (they are set before a batch is drawn), which the pooled statements' guarantee
needs. Vectorised over runs (leading axis).
Checked against: hand-computed weights of a three-system case in tests/unit/policies/test_pooled_pairs.py.
"""

from __future__ import annotations

import numpy as np

from humeval.errors import HumevalError, did_you_mean
from humeval.policies.pair_choice import DEFAULT_EXPLORE, PAIR_POLICIES

__all__ = ["MIN_GAP", "focal_statements", "pooled_pair_weights"]

#: the smallest strength gap (logit) the adaptive weights plan for: closer statements get the same weight
MIN_GAP = 0.05


def focal_statements(theta: np.ndarray, needed: np.ndarray, goal: str, top: int = 1,
                     beaten: np.ndarray | None = None) -> np.ndarray:
    """The statements the question turns on at the current estimates (symmetric [r, i, j]), among ``needed``.

    ``best``: (leader, j) for every j still in contention (never resolved below anyone: ``beaten[r, j]`` False),
    the leader the strongest of them; ``top-k``: (j, strongest outside) for j inside the estimated top k and
    (weakest inside, j) for j outside; ``ranking``: neighbours in the estimated order. These are the comparisons
    of the oracle allocations of best-arm and top-k identification (each system settled against the one across its
    boundary, the cheapest way to settle it): the other needed statements (near-ties between two systems that
    are both far from the answer, "4 vs 7" when both are out of the race) settle nothing the question asks. A run
    whose focal statements are all resolved falls back to ``needed``.
    """
    th = np.asarray(theta, dtype=float)
    need = np.asarray(needed, dtype=bool)
    r, k = th.shape
    rows = np.arange(r)
    focal = np.zeros((r, k, k), dtype=bool)
    if goal in ("best", "pair"):
        out = np.zeros((r, k), dtype=bool) if beaten is None else np.asarray(beaten, dtype=bool)
        leader = np.argmax(np.where(out, -np.inf, th), axis=-1)
        focal[rows, leader, :] = ~out
    elif goal == "top-k":
        order = np.argsort(-th, axis=-1, kind="stable")
        inside = np.zeros((r, k), dtype=bool)
        np.put_along_axis(inside, order[:, :top], True, axis=-1)
        focal[rows, :, order[:, top]] = inside
        focal[rows, order[:, top - 1], :] = ~inside
    else:
        order = np.argsort(-th, axis=-1, kind="stable")
        focal[rows[:, None], order[:, :-1], order[:, 1:]] = True
    focal = (focal | np.swapaxes(focal, -1, -2)) & ~np.eye(k, dtype=bool)
    hit = focal & need
    out_: np.ndarray = np.where(hit.any(axis=(-1, -2))[:, None, None], hit, need)
    return out_


def pooled_pair_weights(theta: np.ndarray, needed: np.ndarray, available: np.ndarray, policy: str = "adaptive",
                        explore: float = DEFAULT_EXPLORE, *, goal: str | None = None, top: int = 1,
                        beaten: np.ndarray | None = None) -> np.ndarray:
    """Symmetric weights ``w[r, a, b]`` (summing to 1 over a < b where anything is available; else all 0).

    ``theta[r, i]``: current strength estimates; ``needed[r, i, j]``: statements the goal still needs (symmetric);
    ``available[r, a, b]``: pairs that can be battled (a replay's data not exhausted; symmetric). With ``goal``
    (and ``top``, ``beaten``) the statements weighed are the question's focal ones (:func:`focal_statements`);
    without it every needed statement (the weights before the focal statements were introduced).
    """
    if policy not in PAIR_POLICIES:
        raise HumevalError(f"pair policy: unknown policy '{policy}'. {did_you_mean(policy, PAIR_POLICIES)}")
    if not 0.0 <= explore <= 1.0:
        raise HumevalError(f"explore must be in [0, 1], got {explore!r}")
    th = np.asarray(theta, dtype=float)
    k = th.shape[-1]
    upper = np.triu(np.ones((k, k), dtype=bool), 1)
    avail = np.asarray(available, dtype=bool) & upper
    if policy == "uniform":
        return _normalise(avail.astype(float))
    need = np.asarray(needed, dtype=bool) & ~np.eye(k, dtype=bool)
    gap = th[..., :, None] - th[..., None, :]
    weigh = need if goal is None else focal_statements(th.reshape(-1, k), need.reshape(-1, k, k), goal, top,
                                                       None if beaten is None else np.asarray(beaten).reshape(-1, k)
                                                       ).reshape(need.shape)
    u = np.where(weigh, 1.0 / np.maximum(gap * gap, MIN_GAP * MIN_GAP), 0.0)
    q = 1.0 / (1.0 + np.exp(-gap))  # q[r, i, m] = P(i beats m | decisive)
    # disc[r, i, j, m]: a vote of (i, m) and one of (j, m) disagree
    disc = q[..., :, None, :] * (1 - q[..., None, :, :]) + (1 - q[..., :, None, :]) * q[..., None, :, :]
    idx = np.arange(k)
    disc = np.where((idx[None, :, None] == idx[None, None, :]) | (idx[:, None, None] == idx[None, None, :]), 0.0, disc)
    via = np.einsum("...aj,...ajb->...ab", u, disc)  # what a vote of (a, b) adds to a's statements through b
    value = np.where(avail, u + 0.5 * (via + np.swapaxes(via, -1, -2)), 0.0)
    touch = np.asarray(need.any(axis=-1))
    floor = avail & (touch[..., :, None] | touch[..., None, :])
    w = (1.0 - explore) * _normalise(value) + explore * _normalise(floor.astype(float))
    return _normalise(np.where(avail, w, 0.0))


def _normalise(x: np.ndarray) -> np.ndarray:
    """Each run's weights divided by their sum, symmetric (upper triangle mirrored); all-zero runs stay zero."""
    k = x.shape[-1]
    up = np.triu(x, 1)
    total = up.sum(axis=(-1, -2), keepdims=True)
    up = np.divide(up, total, out=np.zeros_like(up, dtype=float), where=total > 0)
    return up + np.swapaxes(up, -1, -2) if k else up
