"""One Worker and Fixed Worker: a single vote per request.

One Worker: a different random worker labels each request (the paper's recommendation:
cheapest, fully parallel). Fixed Worker: the same worker labels every request.
Reference: Thorleiksdottir et al. (2022), section 3.1 "Labelling strategies".
Checked against: tests/unit/policies/test_strategies.py (label = vote, cost 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from humeval.policies._votes import check_votes

__all__ = ["FixedWorker", "OneWorker"]


class OneWorker:
    """``one``: one random worker per request."""

    name = "one"
    max_workers = 1
    distinct_workers = True
    same_worker = False

    def workers_needed(self, votes: Sequence[int]) -> int:
        return 0 if len(check_votes(votes)) >= 1 else 1

    def label(self, votes: Sequence[int]) -> int:
        v = check_votes(votes, exactly=1, who=self.name)
        return int(v[0])

    def aggregate(self, votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        labels = np.asarray(votes[0], dtype=np.int8)
        return labels, np.ones(labels.shape, dtype=np.int8)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class FixedWorker(OneWorker):
    """``fixed``: the same worker labels all requests of a study."""

    name = "fixed"
    same_worker = True
