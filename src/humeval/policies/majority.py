"""N-worker majority: N different workers label each request; the majority decides.

Formula: label = 1 if sum of the N votes > N/2, cost N. N must be odd (no ties).
Reference: Thorleiksdottir et al. (2022), section 3.1; Snow et al. (2008), EMNLP.
Checked against: tests/unit/policies/test_strategies.py (enumeration of all 2^N votes).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from humeval.errors import HumevalError
from humeval.policies._votes import check_votes

__all__ = ["Majority"]


class Majority:
    """``majorityN``: N distinct workers per request, majority vote (N odd)."""

    distinct_workers = True
    same_worker = False

    def __init__(self, n: int) -> None:
        if isinstance(n, bool) or int(n) != n or n < 1 or int(n) % 2 == 0:
            raise HumevalError(
                f"majority voting needs an odd number of workers (1, 3, 5, 7, ...) so that there "
                f"are no ties, got N={n!r}"
            )
        self.n = int(n)
        self.max_workers = self.n
        self.name = f"majority{self.n}"

    def workers_needed(self, votes: Sequence[int]) -> int:
        return max(0, self.n - len(check_votes(votes, who=self.name)))

    def label(self, votes: Sequence[int]) -> int:
        v = check_votes(votes, exactly=self.n, who=self.name)
        return int(2 * int(v.sum()) > self.n)

    def aggregate(self, votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        total = np.asarray(votes[: self.n], dtype=np.int16).sum(axis=0)
        labels = (2 * total > self.n).astype(np.int8)
        return labels, np.full(labels.shape, self.n, dtype=np.int8)

    def __repr__(self) -> str:
        return f"Majority({self.n})"
