"""``casf-faithful``: CASF as the authors' code runs it (``EnablerRx/CASF``, ``CASF.py``, commit e6bd7b9).

The ``casf`` sampler follows the paper's text; this one reproduces the selection procedure of
the authors' published code, defects included, so that their Table 1 can be recomputed and the
two readings compared (docs/sampling.md, "casf and casf-faithful"). Step by step:

1. **Preliminary sort** (phase 0): the items are put in *ascending* order of the preliminary
   metric summed over systems by the code's exchange sort, whose swap test sits inside the
   loop over systems: for a pair (i < j) the partial sums of the two rows are compared after
   each system and the rows swap whenever the partial sum at position i exceeds the one at j,
   after which the sums go on accumulating from the swapped rows. The result is close to, but
   not, a sorted order. It is emulated exactly (:func:`stepwise_exchange_order`).
2. **Systematic picks**: ``numpy.linspace(0, N, n, endpoint=False).astype(int)`` positions of the
   ordered list (the first item of each bucket).
3. **Learner** (phase 1): ``GradientBoostingRegressor(max_depth=4, n_estimators=200,
   random_state=2)`` fit on one row *per output* (item, system) of the phase-0 items: features
   the 8 metrics of that output, target the sum over aspects of each aspect standardised over
   the selected outputs. An item's quality is its predicted outputs summed over systems.
4. **Batch sort**: a correct exchange sort, ascending, of the remaining items by that quality.
   The code swaps the *texts* of two rows with a tuple assignment on NumPy rows, which copies
   row j over row i and leaves row j as it was: from then on the text at a position can belong
   to another item (emulated: :func:`exchange_order` returns the text owner of each position).
5. **Stale predictions**: phases 2, 3, ... refit the learner but sort by the column of the
   *first* batch phase's predictions, so every batch phase after the first keeps the order of
   phase 1 (the refits change nothing).
6. **Controller**: the remaining list is cut at ``linspace(0, N_t, n_t, endpoint=False)``; in each
   bucket the item whose largest n-gram *distance* (``|bigrams(a)| + |bigrams(b)| - 2 |common|``,
   whitespace tokens, case kept) to every output selected before and to every output picked in
   this phase is *smallest* is taken, ties to the first position. A distance, minimised: the
   code prefers items close to those already selected, the opposite of the paper's "not
   redundant".
7. **Phase sizes**: every phase selects ``floor(size / phases)`` items (the code:
   ``int(N * rate_per_phase)``), so up to ``phases - 1`` items of ``size`` stay unselected.

The systems are taken in the data's order (first appearance in the long table,
``system_order = "data"``), the order in which the code reads each item's outputs: the partial
sums of step 1 and the ties and float sums of the later steps depend on it.

The seed is not used: the authors fix ``random_state=2`` and nothing else is random. The
quadratic exchange sorts and controller limit this sampler to :data:`MAX_ITEMS` items; it
exists to reproduce the paper, the ``casf`` sampler is the one that scales.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from humeval.errors import DataError
from humeval.sampling.base import PhaseScores, SamplerBase
from humeval.sampling.features import preliminary_metric, resolve_features
from humeval.sampling.table import ItemTable, SystemOrder

__all__ = [
    "MAX_ITEMS",
    "FaithfulCASFSampler",
    "exchange_order",
    "minimax_pick",
    "ngram_distance",
    "stepwise_exchange_order",
]

#: items above which the emulation (quadratic in the number of items) is refused
MAX_ITEMS = 5_000
_SORTS: weakref.WeakKeyDictionary[ItemTable, dict[str, np.ndarray]] = weakref.WeakKeyDictionary()


def stepwise_exchange_order(rows: np.ndarray) -> np.ndarray:
    """Order of the authors' preliminary exchange sort over ``rows`` ``(n, n_systems)`` (positions -> row).

    For i < j (i outer, j inner), systems k = 0, 1, ...: ``sum_i += row_at_i[k]``,
    ``sum_j += row_at_j[k]``, and the two rows swap whenever ``sum_i > sum_j``; the sums carry
    on over the swapped rows. A plain loop over pairs: swaps are so frequent (about one every
    few j) that a vectorised scan restarted after each swap is slower; quadratic, hence
    :data:`MAX_ITEMS`.
    """
    data = [[float(v) for v in row] for row in np.asarray(rows, dtype=float)]
    n = len(data)
    systems = range(len(data[0])) if n else range(0)
    order = list(range(n))
    for i in range(n - 1):
        a = data[i]
        for j in range(i + 1, n):
            b = data[j]
            left = right = 0.0
            swapped = False
            for k in systems:
                if swapped:
                    left += b[k]
                    right += a[k]
                else:
                    left += a[k]
                    right += b[k]
                if left > right:
                    swapped = not swapped
            if swapped:
                data[i], data[j] = b, a
                order[i], order[j] = order[j], order[i]
                a = b
    return np.asarray(order, dtype=np.int64)


def exchange_order(keys: np.ndarray, texts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The authors' batch exchange sort of ``keys`` (ascending): (order of rows, text owner of each position).

    For i < j: swap when ``key_i > key_j``. At position i the swaps happen at the strict running
    minima of ``keys[i+1:]`` below ``key_i``, so each i is one vectorised pass. ``texts`` (the
    text owner of each position, default the identity) follows the code's NumPy tuple swap: row
    i takes row j's text, row j keeps its own.
    """
    keys = np.array(keys, dtype=float)
    n = len(keys)
    order = np.arange(n)
    owner = np.arange(n) if texts is None else np.array(texts)
    for i in range(n - 1):
        rest = keys[i + 1 :]
        previous = np.minimum.accumulate(np.concatenate([keys[i : i + 1], rest]))[:-1]  # value at i before each j
        steps = np.flatnonzero(rest < previous)  # positions (in rest) of each swap, in order
        if len(steps) == 0:
            continue
        j = i + 1 + steps
        k_i, o_i = keys[i], order[i]
        # the value carried to position j[s] is the one at i before that swap
        carried_keys = np.concatenate([[k_i], keys[j[:-1]]])
        carried_order = np.concatenate([[o_i], order[j[:-1]]])
        keys[i], order[i] = keys[j[-1]], order[j[-1]]
        owner[i] = owner[j[-1]]
        keys[j], order[j] = carried_keys, carried_order
    return order, owner


def _tokens(text: str) -> list[str]:
    return text.split()


def _bigram_sets(outputs: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """Binary matrix of the distinct whitespace bigrams of each output, and each output's bigram count."""
    vocabulary: dict[tuple[str, str], int] = {}
    indptr, indices, counts = [0], [], []
    for text in outputs.ravel().tolist():  # small data only (MAX_ITEMS): a plain loop over outputs
        words = _tokens(str(text))
        grams = list(zip(words, words[1:], strict=False))
        counts.append(len(grams))
        ids = {vocabulary.setdefault(g, len(vocabulary)) for g in grams}
        indices.extend(sorted(ids))
        indptr.append(len(indices))
    matrix = sp.csr_matrix(
        (np.ones(len(indices), dtype=np.float64), np.asarray(indices, dtype=np.int64), np.asarray(indptr)),
        shape=(outputs.size, max(1, len(vocabulary))),
    )
    return matrix, np.asarray(counts, dtype=np.int64)


def ngram_distance(a: str, b: str) -> int:
    """The code's ``ngramSimilarity``: ``|bigrams(a)| + |bigrams(b)| - 2 |set(a) & set(b)|`` (a distance)."""
    ga = list(zip(_tokens(a), _tokens(a)[1:], strict=False))
    gb = list(zip(_tokens(b), _tokens(b)[1:], strict=False))
    return len(ga) + len(gb) - 2 * len(set(ga) & set(gb))


def _max_distance(sets: sp.csr_matrix, counts: np.ndarray, rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """For each output in ``rows``: its largest distance to the outputs ``others`` (0 when there are none)."""
    out = np.zeros(len(rows), dtype=np.int64)
    if len(others) == 0 or len(rows) == 0:
        return out
    other_sets, other_counts = sets[others], counts[others]
    step = max(1, 4_000_000 // len(others))
    for lo in range(0, len(rows), step):
        r = rows[lo : lo + step]
        common = (sets[r] @ other_sets.T).toarray()
        out[lo : lo + step] = counts[r] + (other_counts[None, :] - 2 * common).max(axis=1).astype(np.int64)
    return np.maximum(out, 0)


def minimax_pick(distance: np.ndarray, bounds: np.ndarray) -> int:
    """Position in ``[bounds[0], bounds[1])`` with the smallest ``distance``; ties to the first (the code's loop)."""
    lo, hi = int(bounds[0]), int(bounds[1])
    return lo + int(np.argmin(distance[lo:hi]))


def _outputs_of(items: np.ndarray, m: int) -> np.ndarray:
    return (items[:, None] * m + np.arange(m)[None, :]).ravel()


@dataclass(frozen=True)
class FaithfulCASFSampler(SamplerBase):
    """CASF as in the authors' code (see the module docstring for every step).

    Parameters: ``phases`` (default 5: 10 % each at a 50 % rate); ``metric`` (preliminary sort
    key, default MoverScore when stored, as in the paper); ``features`` (learner inputs per
    output, default the paper's 8 metrics); ``aspects`` (human columns of the target, in the
    order of the authors' ``hmetric_key``: the order fixes the float sums of the target, and a
    GBDT turns a difference in the last bit into different trees; default every human column,
    sorted by name).
    """

    name: str = "casf-faithful"
    needs_metrics: ClassVar[bool] = True
    #: the systems in the data's order (first appearance): the code reads each item's outputs in
    #: that order, and the preliminary sort's partial sums, its argsorts and its float sums follow it
    system_order: ClassVar[SystemOrder] = "data"
    phases: int = 5
    metric: str | None = None
    features: tuple[str, ...] = ()
    aspects: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.phases, bool) or not isinstance(self.phases, int) or self.phases < 1:
            raise DataError(f"sampling.params.phases: must be a whole number >= 1, got {self.phases!r}")
        object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "aspects", tuple(self.aspects))

    @property
    def needs_scores(self) -> bool:  # type: ignore[override]
        return self.phases > 1

    def plan(self, size: int, n_items: int) -> list[int]:
        if n_items > MAX_ITEMS:
            raise DataError(
                f"sampling: casf-faithful emulates the authors' quadratic exchange sorts and is limited to {MAX_ITEMS} "
                f"items, got {n_items}; use method 'casf' (the paper's procedure, scales to 100 000 items)"
            )
        per = size // self.phases
        if per < 1:
            raise DataError(
                f"sampling: casf-faithful selects floor(size / phases) items per phase; {size} item(s) over "
                f"{self.phases} phases leaves none; raise the rate or use params.phases <= {size}"
            )
        return [per] * self.phases

    def _preliminary(self, table: ItemTable) -> np.ndarray:
        metric = preliminary_metric(table, self.metric)
        cache = _SORTS.setdefault(table, {})
        if metric not in cache:
            cache[metric] = stepwise_exchange_order(table.metric(metric))
        return cache[metric]

    def _quality(self, table: ItemTable, first: np.ndarray, scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Phase-1 learner: per-output GBDT on the phase-0 items; an item's quality = its predictions summed over systems."""
        # imported here: importing scikit-learn has side effects that importing humeval must not have
        from sklearn.ensemble import GradientBoostingRegressor
        from sklearn.preprocessing import StandardScaler
        from threadpoolctl import threadpool_limits

        names = resolve_features(table, self.features or None)
        m = table.n_systems
        # (item, system, metric); the code's training rows run system by system, items in selection order
        x = np.stack([table.metric(f) for f in names], axis=-1)
        train = x[first].transpose(1, 0, 2).reshape(-1, len(names))
        human = scores.transpose(1, 0, 2).reshape(-1, scores.shape[2])
        # the code's arithmetic to the last bit (a GBDT's splits turn 1e-15 into different trees):
        # scikit-learn's StandardScaler per aspect, then the aspects added one after another
        target = np.zeros(len(human))
        for k in range(human.shape[1]):
            target = target + StandardScaler().fit_transform(human[:, k : k + 1]).ravel()
        model = GradientBoostingRegressor(max_depth=4, n_estimators=200, random_state=2)
        with threadpool_limits(limits=1, user_api="openmp"):
            model.fit(train, target)
            predicted = model.predict(x[rows].reshape(-1, len(names))).reshape(len(rows), m)
        total = np.zeros(len(rows))
        for k in range(m):  # summed system by system, as the code's loop does
            total = total + predicted[:, k]
        return total

    def run(self, table: ItemTable, per_phase: int, scores: np.ndarray | None, upto: int) -> list[np.ndarray]:
        """Items chosen in phases ``0..upto`` (``scores``: human scores of the phase-0 items, needed from phase 1)."""
        n, m = table.n_items, table.n_systems
        order = self._preliminary(table)
        picks = np.linspace(0, n, num=per_phase, endpoint=False, dtype=int)
        phases = [order[picks]]
        if upto == 0:
            return phases
        if scores is None or len(scores) < per_phase:
            raise DataError("casf-faithful phase 1: human scores of the phase-0 items are required")
        items = np.delete(order, picks)  # the item whose scores sit at each position
        texts = items.copy()  # the item whose texts sit there (the preliminary sort moves texts correctly)
        keys = self._quality(table, phases[0], scores[:per_phase], items)  # phase 1's predictions, kept (step 5)
        sets, counts = _bigram_sets(table.outputs)
        shown = _outputs_of(phases[0], m)  # every output selected so far, as the code's text list holds them
        for _phase in range(1, upto + 1):
            moved, text_from = exchange_order(keys)
            items, keys, texts = items[moved], keys[moved], texts[text_from]
            size = len(items)
            bounds = np.append(np.linspace(0, size, num=per_phase, endpoint=False, dtype=int), size)
            candidates = _outputs_of(texts, m)
            before = _max_distance(sets, counts, candidates, shown).reshape(size, m).max(axis=1)
            within = np.zeros(size, dtype=np.int64)
            chosen = np.empty(per_phase, dtype=np.int64)
            for e in range(per_phase):  # one step per bucket: later buckets see this phase's earlier picks
                chosen[e] = minimax_pick(np.maximum(before, within), bounds[e : e + 2])
                picked = _outputs_of(texts[chosen[e] : chosen[e] + 1], m)
                within = np.maximum(within, _max_distance(sets, counts, candidates, picked).reshape(size, m).max(axis=1))
            phases.append(items[chosen])
            shown = np.concatenate([shown, _outputs_of(texts[chosen], m)])
            items, keys, texts = np.delete(items, chosen), np.delete(keys, chosen), np.delete(texts, chosen)
        return phases

    def choose(
        self, table: ItemTable, phase: int, n: int, chosen: np.ndarray, scores: PhaseScores | None, seed: int
    ) -> np.ndarray:
        """Replays phases ``0..phase`` (deterministic) and returns the last; ``seed`` is unused (see the module)."""
        phases = self.run(table, n, scores, phase)
        if not np.array_equal(np.concatenate(phases[:-1]) if phase else chosen, chosen):
            raise RuntimeError("casf-faithful: the replayed phases differ from the items chosen before")  # a bug
        return phases[-1]
