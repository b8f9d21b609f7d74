"""The serving order of a watched comparison: a seeded random permutation of the selected items.

The anytime-valid rules (``anytime``, the goals over K systems) are valid when every outcome has
the population's win rate given the past, i.e. when the outcomes arrive in a random order. The
store serves what the design wrote in the order the design wrote it (lists in ``list_id``
order, a list by position, the pool by the task's place in ``lists/tasks.jsonl``), and data
files are often grouped by document, domain or source. So when the protocol's stopping rule
watches a comparison, the design stage puts the selected items in the order
:func:`serving_order` draws from ``study.seed`` (random stream ``serving-order``) before it
builds the tasks and deals them into lists: ``lists/tasks.jsonl`` (hence the pool's order) and
the lists hold the permuted order, and the logbook hashes both. The simulator draws the order of
every simulated run from the same function (:mod:`humeval.simulate.order`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from humeval.protocol.comparisons import Comparison
from humeval.rng import stream

__all__ = ["ORDER_STREAM", "order_items", "serving_order"]

#: the name of the random stream of ``study.seed`` that orders a watched study's items
ORDER_STREAM = "serving-order"


def serving_order(seed: int | np.random.Generator, n: int) -> np.ndarray:
    """A uniformly random permutation of ``range(n)``: the order in which ``n`` items are served.

    ``seed``: the study seed (the stream :data:`ORDER_STREAM` of it is used, so the order is
    independent of every other draw of the study) or a Generator (used as is).
    """
    rng = seed if isinstance(seed, np.random.Generator) else stream(seed, ORDER_STREAM)
    return rng.permutation(int(n))


def order_items(items: Sequence[str], seed: int, comparisons: Sequence[Comparison]) -> list[str]:
    """``items`` in serving order when a comparison is watched (:func:`serving_order`), else unchanged."""
    if not comparisons:
        return list(items)
    return [items[i] for i in serving_order(seed, len(items))]
