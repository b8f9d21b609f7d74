"""Max Three: two workers label a request; a third is added only when they disagree.

Formula: label = v1 if v1 == v2 else majority(v1, v2, v3); cost 2 if v1 == v2 else 3.
(The authors' re-analysis charged 3 whenever the first two did not both choose their
"model1", even when both chose model2; see humeval.reproduce.dhe.)
Reference: Thorleiksdottir et al. (2022), section 3.1; Sun et al. (2020), COLING
(dynamic automatic conflict resolution).
Checked against: tests/unit/policies/test_strategies.py (all 8 vote triples).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from humeval.errors import HumevalError
from humeval.policies._votes import check_votes

__all__ = ["MaxThree"]


class MaxThree:
    """``max3``: two votes, a third on disagreement.

    ``distinct_workers=False`` draws the workers with replacement (the authors' simulation).
    """

    name = "max3"
    max_workers = 3
    same_worker = False

    def __init__(self, distinct_workers: bool = True) -> None:
        self.distinct_workers = bool(distinct_workers)

    def workers_needed(self, votes: Sequence[int]) -> int:
        v = check_votes(votes, who=self.name)
        if v.size < 2:
            return 2 - v.size
        if v.size == 2 and v[0] != v[1]:
            return 1
        return 0

    def label(self, votes: Sequence[int]) -> int:
        v = check_votes(votes, who=self.name)
        if v.size == 2 and v[0] == v[1]:
            return int(v[0])
        if v.size == 3 and v[0] != v[1]:
            return int(v.sum() >= 2)
        raise HumevalError(
            f"max3: needs two agreeing votes, or three votes whose first two disagree; got {v.tolist()}"
        )

    def aggregate(self, votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v = np.asarray(votes[:3], dtype=np.int8)
        agree = v[0] == v[1]
        labels = np.where(agree, v[0], v[2]).astype(np.int8)  # on disagreement the third decides
        cost = np.where(agree, 2, 3).astype(np.int8)
        return labels, cost

    def __repr__(self) -> str:
        return f"MaxThree(distinct_workers={self.distinct_workers})"
