"""Per-participant sequential outlier test of pairwise votes: an e-process against the crowd's Bradley-Terry model.

For participant u, take u's decisive votes in the order given (x_t = 1 when the output shown first, model_a, won)
and the probability p_t = sigma(theta_a - theta_b) of that outcome under the Bradley-Terry strengths fitted to every
*other* participant's decisive votes (leave-one-out, :func:`humeval.stats.davidson_fit` with ``prior`` wins each way
on every pair, so the strengths always exist). H0 for u: u's votes are draws from that model, so
E[x_t - p_t | past] = 0. For a direction g_t in [-1, 1] fixed before the vote and a bet lambda in (0, 1),

    K_n = prod_t (1 + lambda g_t (x_t - p_t))

is a nonnegative martingale under H0, and so is any mixture of them (the e-process E_n, a weighted mean over
directions and bets). Ville's inequality: P(E_n ever reaches U / alpha) <= alpha / U, so testing every one of U
participants at alpha / U and flagging u the first time E_n >= U / alpha flags an honest participant with
probability at most alpha over the whole study, however often the votes are looked at (continuous monitoring).

The directions are the bad voters of Min et al. (2025) and Chiang et al. (2024): ``side-a`` (g = +1: the first
output, whatever it is), ``side-b`` (g = -1), ``random`` (g = 2 (1/2 - p_t): a coin-flipper wins against the
favourite more often than the model says), and ``rig:<model>`` for each model m (g = +1 when m is model_a, -1 when
model_b, 0 otherwise: a voter who favours m). Weights: 1/6 each side, 1/3 random, 1/3 spread over the riggers;
bets lambda in {0.1, 0.25, 0.5, 0.75} equally. The record names the direction with the most wealth.

Assumptions: the crowd's votes follow Bradley-Terry on the decisive votes and u's are exchangeable with them; the
leave-one-out strengths are plugged in (their estimation error is ignored, which matters for a small crowd: an
honest voter's wealth then grows slowly against a wrong p). An honest participant whose taste differs from the
crowd's can be flagged: the test says "votes unlike the crowd's model", not "bad faith". The fixed-n version is
Chatbot Arena's anomalous-user test (Chiang et al. 2024, section 5.2), which e-values make valid when watched.

References: Ville (1939); Waudby-Smith & Ramdas (2024), "Estimating means of bounded random variables by betting",
JRSS B; Chiang et al. (2024), "Chatbot Arena", ICML; Min et al. (2025), "Improving your model ranking on Chatbot
Arena by vote rigging", ICML.
Checked by: a simulated crowd with planted random voters, always-A voters and riggers beside honest voters
(tests/unit/stats/test_vote_quality.py, benchmarks/bench_vote_quality.py: detection and false flags).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from humeval.errors import DataError
from humeval.stats.davidson import davidson_fit

__all__ = ["BETS", "VoteOutliers", "vote_outliers"]

#: the bets lambda mixed (equal weights)
BETS = (0.1, 0.25, 0.5, 0.75)


@dataclass(frozen=True)
class VoteOutliers:
    """The sequential outlier test of each participant (one entry per participant, in ``participants`` order).

    ``log_e`` the largest log e-value reached, ``flagged`` whether it crossed ``log(threshold)``, ``flagged_at`` the
    1-based decisive vote at which it first did (0: never), ``votes`` decisive votes tested, ``direction`` the
    alternative with the most wealth at the end; ``threshold`` = U / alpha.
    """

    participants: tuple[str, ...]
    votes: np.ndarray
    log_e: np.ndarray
    flagged: np.ndarray
    flagged_at: np.ndarray
    direction: tuple[str, ...]
    alpha: float
    threshold: float
    method: str = "e-process per participant vs leave-one-out Bradley-Terry, level alpha / participants"
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))

    def flagged_participants(self) -> list[str]:
        return [p for p, f in zip(self.participants, self.flagged, strict=True) if f]


def vote_outliers(participant: Sequence[str] | np.ndarray, model_a: Sequence[str] | np.ndarray,
                  model_b: Sequence[str] | np.ndarray, a_won: Sequence[float] | np.ndarray, *, alpha: float = 0.05,
                  prior: float = 0.1) -> VoteOutliers:
    """Test every participant's votes (module docstring). Arrays of one vote each, in the order the votes came.

    ``a_won``: 1 when model_a (the output shown first) won, 0 when model_b won, NaN for a tie or both-bad (skipped).

    Checked against: a plain loop over the votes written from the definition
    (``tests/unit/stats/test_vote_quality.py``).

    Examples:
        >>> import numpy as np
        >>> from humeval.stats.vote_quality import vote_outliers
        >>> rng = np.random.default_rng(0)
        >>> a = rng.choice(list("ABCD"), 4000); b = np.where(a == "A", "D", "A")
        >>> strength = {"A": 1.5, "B": 0.5, "C": -0.5, "D": -1.5}
        >>> p = 1 / (1 + np.exp(-(np.vectorize(strength.get)(a) - np.vectorize(strength.get)(b))))
        >>> won = (rng.random(4000) < p).astype(float)
        >>> who = np.array([f"p{i % 40}" for i in range(4000)])
        >>> won[who == "p0"] = 1.0  # p0 always picks the first output
        >>> vote_outliers(who, a, b, won).flagged_participants()
        ['p0']
    """
    if not 0 < alpha < 1:
        raise DataError(f"vote_outliers: alpha must be in (0, 1), got {alpha}")
    if prior <= 0:
        raise DataError(f"vote_outliers: prior must be > 0 (the leave-one-out strengths must exist), got {prior}")
    who = np.asarray(participant).astype(str)
    first, second = np.asarray(model_a).astype(str), np.asarray(model_b).astype(str)
    won = np.asarray(a_won, dtype=float)
    if not (who.shape == first.shape == second.shape == won.shape) or who.ndim != 1:
        raise DataError(f"vote_outliers: participant, model_a, model_b and a_won must be 1-d arrays of one length, "
                        f"got {who.shape}, {first.shape}, {second.shape}, {won.shape}")
    bad = np.isfinite(won) & (won != 0) & (won != 1)
    if bad.any():
        raise DataError(f"vote_outliers: a_won must be 1, 0 or NaN, got {won[bad][0]} at vote {int(np.argmax(bad))}")
    if (first == second).any():
        i = int(np.argmax(first == second))
        raise DataError(f"vote_outliers: vote {i} compares {first[i]!r} with itself")
    keep = np.isfinite(won)
    who, first, second, won = who[keep], first[keep], second[keep], won[keep]
    people, u = np.unique(who, return_inverse=True)
    models, codes = np.unique(np.concatenate([first, second]), return_inverse=True)
    n, n_u, k = won.size, people.size, models.size
    if n_u < 2 or k < 2:
        raise DataError(f"vote_outliers: need decisive votes of at least 2 participants on at least 2 models, got "
                        f"{n_u} participant(s) and {k} model(s)")
    a, b = codes[:n], codes[n:]
    winner, loser = np.where(won == 1, a, b), np.where(won == 1, b, a)
    mine = np.zeros((n_u, k, k))
    np.add.at(mine, (u, winner, loser), 1.0)
    others = mine.sum(axis=0)[None] - mine
    theta = davidson_fit(others, np.zeros_like(others), prior=prior).theta  # (U, K), one batched fit
    p = 1.0 / (1.0 + np.exp(-(theta[u, a] - theta[u, b])))
    resid = won - p
    # directions (n, 3 + K) and their weights
    rig = (a[:, None] == np.arange(k)).astype(float) - (b[:, None] == np.arange(k))
    g = np.column_stack([np.ones(n), -np.ones(n), 2 * (0.5 - p), rig])
    names = ["side-a", "side-b", "random", *[f"rig:{m}" for m in models]]
    w_dir = np.concatenate([[1 / 6, 1 / 6, 1 / 3], np.full(k, 1 / (3 * k))])
    bets = np.asarray(BETS)
    logs = np.log1p((g[:, :, None] * bets) * resid[:, None, None]).reshape(n, -1)  # (n, D * bets)
    log_w = np.log(np.repeat(w_dir, bets.size) / bets.size)
    order = np.argsort(u, kind="stable")  # each participant's votes in their order
    logs, uu = logs[order], u[order]
    cum = np.cumsum(logs, axis=0)
    start = np.searchsorted(uu, np.arange(n_u))
    base = np.where(start[:, None] > 0, cum[np.maximum(start - 1, 0)], 0.0)
    cum -= base[uu]
    mixed = cum + log_w
    top = mixed.max(axis=1, keepdims=True)
    log_e = (top + np.log(np.exp(mixed - top).sum(axis=1, keepdims=True)))[:, 0]  # log E_t of its participant
    threshold = n_u / alpha
    crossed = log_e >= np.log(threshold)
    max_log = np.full(n_u, -np.inf)
    np.maximum.at(max_log, uu, log_e)
    counts = np.bincount(uu, minlength=n_u)
    position = np.arange(n) - start[uu] + 1
    first_hit = np.full(n_u, np.iinfo(np.int64).max)
    np.minimum.at(first_hit, uu[crossed], position[crossed])
    flagged = first_hit < np.iinfo(np.int64).max
    end = start + counts - 1
    by_dir = cum[end].reshape(n_u, len(names), bets.size)
    wealth = by_dir.max(axis=2) + np.log(w_dir)
    direction = tuple(names[int(j)] for j in wealth.argmax(axis=1))
    return VoteOutliers(tuple(str(x) for x in people), counts, np.maximum(max_log, 0.0), flagged,
                        np.where(flagged, first_hit, 0), direction, float(alpha), float(threshold),
                        extra={"prior": prior, "bets": list(BETS), "models": [str(m) for m in models],
                               "decisive_votes": int(n), "skipped_ties": int((~keep).sum())})
