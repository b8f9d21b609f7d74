"""The labelling-strategy protocol: how many workers judge a request and how votes combine.

A strategy is used one request at a time by the collection server (``workers_needed``
after each vote, then ``label``) and on arrays of votes by the simulator (``aggregate``).
A vote is 1 (the worker preferred system A) or 0 (B).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["LabellingStrategy"]


@runtime_checkable
class LabellingStrategy(Protocol):
    """How a request is labelled.

    ``max_workers``: most votes a request can need. ``distinct_workers``: the votes of a
    request come from different workers. ``same_worker``: one worker labels every request
    of a study (fixed worker).
    """

    name: str
    max_workers: int
    distinct_workers: bool
    same_worker: bool

    def workers_needed(self, votes: Sequence[int]) -> int:
        """How many more votes to collect for a request that has ``votes`` (0: done)."""
        ...

    def label(self, votes: Sequence[int]) -> int:
        """The request's final label (1: A, 0: B) from its complete votes."""
        ...

    def aggregate(self, votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised: ``votes[k, ...]`` is the k-th potential vote (k < max_workers).

        Returns the final labels and the labelling cost (votes actually used) per request.
        """
        ...
