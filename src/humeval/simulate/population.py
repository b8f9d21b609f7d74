"""The agent-based model: a worker pool and the difficulty of requests.

Model (Thorleiksdottir et al. 2022, section 3.1): request difficulty d ~ N(mu, var)
clipped to [-1, 1]; worker capability c ~ U(low, high) over a pool drawn once; a worker
prefers system A with probability P = (c d + 1) / 2. Extensions for planning: a share of
*spammers* answer at random (c = 0), a share of *adversarial* workers answer against
their judgement (c -> -c), and a *position bias* b shifts P towards the system shown
first: P = clip((c d + 1) / 2 + b s / 2, 0, 1), s = +1 if A is shown first, -1 otherwise
(sides are randomised per request). *Cheap clickers* do not read at all: a share always picks the
output shown first (and the first point of a scale), a share *straight-lines* (one and the same
answer to every task); :func:`make_pool` only marks them, who answers them is the caller's.
Checked against: the authors' released simulation (``_get_answer_via_two_choice``) and
the legacy RandomState(21) pool of Table 3 (tests/unit/simulate/test_population.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from humeval.errors import HumevalError

__all__ = ["WorkerPool", "draw_difficulties", "legacy_parity_inputs", "make_pool"]


@dataclass(frozen=True)
class WorkerPool:
    """Capabilities of the pool, and the effective capability each worker answers with."""

    capability: np.ndarray
    spammer: np.ndarray
    adversarial: np.ndarray
    #: cheap clickers: always the output shown first (None: nobody)
    first_clicker: np.ndarray | None = None
    #: cheap clickers: the same answer to every task (None: nobody)
    straight_liner: np.ndarray | None = None

    @property
    def effective(self) -> np.ndarray:
        """c for ordinary workers, 0 for spammers, -c for adversarial workers."""
        return np.where(self.spammer, 0.0, np.where(self.adversarial, -self.capability, self.capability))

    @property
    def size(self) -> int:
        return int(self.capability.size)


def make_pool(
    rng: np.random.Generator,
    size: int,
    low: float,
    high: float,
    spammer_share: float = 0.0,
    adversarial_share: float = 0.0,
    first_share: float = 0.0,
    straight_share: float = 0.0,
) -> WorkerPool:
    """Draw ``size`` capabilities from U(low, high); mark round(share * size) spammers / adversaries / first
    clickers / straight-liners, disjoint, from one permutation (the cheap clickers take no draw: a pool without
    them is the pool drawn before they existed)."""
    cap = rng.uniform(low, high, size)
    order = rng.permutation(size)
    counts = [int(round(share * size)) for share in (spammer_share, adversarial_share, first_share, straight_share)]
    ends = np.cumsum([0, *counts])
    if ends[-1] > size:
        raise HumevalError(f"make_pool: the shares mark {int(ends[-1])} of {size} workers; their sum must be at most 1")
    marks = np.zeros((4, size), dtype=bool)
    for k in range(4):
        marks[k, order[ends[k]:ends[k + 1]]] = True
    return WorkerPool(cap, marks[0], marks[1], marks[2] if counts[2] else None, marks[3] if counts[3] else None)


def draw_difficulties(rng: np.random.Generator, mu: float, var: float, shape: tuple[int, ...]) -> np.ndarray:
    """d = clip(mu + sqrt(var) z, -1, 1), z standard normal (float32)."""
    z = rng.standard_normal(shape, dtype=np.float32)
    return np.clip(np.float32(mu) + np.float32(np.sqrt(var)) * z, -1.0, 1.0)


@lru_cache(maxsize=16)
def legacy_parity_inputs(seed: int, mu: float, var: float, workers: int, low: float, high: float,
                         list_size: int = 30000) -> tuple[np.ndarray, np.ndarray]:
    """The pool and request list of the authors' code for one mu (Table 3 parity).

    ``RandomState(seed)``: ``uniform(low, high, workers)`` capabilities, then
    ``normal(mu, sqrt(var), list_size)`` clipped to [-1, 1]; the first n_requests of the
    list are used, in order, in every iteration.
    """
    rs = np.random.RandomState(seed)
    cap = rs.uniform(low, high, workers)
    d = np.clip(rs.normal(mu, np.sqrt(var), list_size), -1.0, 1.0)
    cap.flags.writeable = False
    d.flags.writeable = False
    return cap, d
