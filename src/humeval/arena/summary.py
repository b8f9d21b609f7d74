"""What a replay says, row by row: votes until the announcement against the data, wrong answers with their bound.

:func:`arena_replay` is the API behind ``humeval arena replay``: it reads the counts, keeps the top models, optionally
makes the preferences intransitive on purpose (:func:`make_intransitive`), replays each question under each pair
policy and returns :class:`ReplayRow` records; :func:`bootstrap_ranks` gives the fixed-n answer of the same votes
(a percentile bootstrap of Davidson's fit, Chatbot Arena's method, valid at one look only) to print beside it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from humeval.arena.counts import ArenaCounts, read_arena_votes
from humeval.arena.replay import QUESTIONS, ReplayResult, replay_counts
from humeval.errors import HumevalError, did_you_mean
from humeval.policies.pair_choice import PAIR_POLICIES
from humeval.rng import Seed, as_generator
from humeval.stats.davidson import davidson_fit

__all__ = ["BootstrapRanks", "ReplayRow", "arena_replay", "bootstrap_ranks", "make_intransitive", "summarise",
           "wrong_upper_bound"]


def wrong_upper_bound(wrong: int, runs: int, level: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound on the wrong-answer rate from ``wrong`` of ``runs``."""
    from scipy.stats import beta

    return 1.0 if wrong >= runs else float(beta.ppf(level, wrong + 1, runs - wrong))


@dataclass(frozen=True)
class ReplayRow:
    """One question under one policy: ``votes_median`` / ``votes_mean`` over decided replays (None: none decided);
    ``votes_mean_all`` counts an undecided replay at the votes it used; ``wrong_upper95``: Clopper-Pearson bound."""

    question: str
    policy: str
    models: int
    replays: int
    data_votes: int
    decided: float
    direct_only_decided: float
    votes_median: int | None
    votes_mean: int | None
    votes_mean_all: int
    share_of_data: float | None
    wrong: int
    wrong_upper95: float
    wrong_vs_pair_majority: int
    misfit: float
    rank_width: float
    answer: str

    def to_json(self) -> dict:
        return asdict(self)


def summarise(result: ReplayResult) -> ReplayRow:
    d = result.decided
    votes = result.decided_at[d]
    named = Counter(", ".join(result.models[i] for i in a) for a in result.answers if a is not None)
    answer = named.most_common(1)[0][0] if named else ""
    if result.goal == "ranking" and answer:
        answer = answer.split(", ")[0] + ", ..."
    question = f"top-{result.top}" if result.goal == "top-k" else result.question
    n = result.replays
    return ReplayRow(question, result.policy, len(result.models), n, result.data_votes, float(d.mean()),
                     float((result.direct_decided_at >= 0).mean()),
                     int(round(float(np.median(votes)))) if d.any() else None,
                     int(round(float(votes.mean()))) if d.any() else None,
                     int(round(float(np.where(d, result.decided_at, result.votes_used).mean()))),
                     round(float(np.median(votes) / result.data_votes), 4) if d.any() else None,
                     int(result.wrong.sum()), round(wrong_upper_bound(int(result.wrong.sum()), n), 4),
                     int(result.wrong_direct.sum()), float((result.misfit_at >= 0).mean()),
                     round(float(result.rank_width.mean()), 2), answer)


def make_intransitive(counts: ArenaCounts) -> ArenaCounts:
    """The same votes with the wins of the first and third model (by the fit) swapped: 1 > 2 > 3 > 1 on purpose."""
    if len(counts.models) < 3:
        raise HumevalError("arena replay: --intransitive needs at least three models")
    order = [int(x) for x in counts.fit().order()]
    a, c = sorted((order[0], order[2]))
    rows = counts.counts.copy()
    hit = (counts.pairs[:, 0] == a) & (counts.pairs[:, 1] == c)
    if not hit.any():
        raise HumevalError(f"arena replay: --intransitive swaps the votes of {counts.models[a]} and "
                           f"{counts.models[c]}, which never met")
    rows[hit] = rows[hit][:, [1, 0, 2, 3]]
    return ArenaCounts(counts.models, counts.pairs, rows)


@dataclass(frozen=True)
class BootstrapRanks:
    """Percentile-bootstrap rank sets of the fit to every vote (fixed n): ``rank_low`` / ``rank_high`` per model in
    ``models`` order, and the share of bootstrap fits with the same best model and the same top set."""

    models: tuple[str, ...]
    rank_low: tuple[int, ...]
    rank_high: tuple[int, ...]
    best_share: float
    top_share: float
    n_boot: int


def bootstrap_ranks(counts: ArenaCounts, *, top: int = 10, n_boot: int = 200, level: float = 0.95,
                    seed: Seed = 0) -> BootstrapRanks:
    """Resample each pair's votes (multinomial at its counts), refit, and read rank sets from non-overlapping
    intervals as Chatbot Arena does: rank_low = 1 + #models whose lower bound exceeds this one's upper bound."""
    rng = as_generator(seed)
    n = counts.counts.sum(axis=1)
    p = counts.counts / np.maximum(n, 1)[:, None]
    boots = rng.multinomial(n, p, size=(n_boot, len(n)))
    fits = davidson_fit(*counts.matrices(boots), max_iter=50)
    full = counts.fit()
    lo = np.quantile(fits.theta, (1 - level) / 2, axis=0)
    hi = np.quantile(fits.theta, (1 + level) / 2, axis=0)
    k = len(counts.models)
    rank_low = 1 + (lo[None, :] > hi[:, None]).sum(axis=1)
    rank_high = k - (hi[None, :] < lo[:, None]).sum(axis=1)
    order = full.order()
    t = min(top, k - 1)
    best_share = float((fits.order()[:, 0] == order[0]).mean())
    top_share = float((np.sort(fits.order()[:, :t], axis=1) == np.sort(order[:t])).all(axis=1).mean())
    return BootstrapRanks(counts.models, tuple(int(x) for x in rank_low), tuple(int(x) for x in rank_high),
                          best_share, top_share, n_boot)


def _names(text: str | Sequence[str], valid: Sequence[str], what: str) -> list[str]:
    items = [s.strip() for s in text.split(",")] if isinstance(text, str) else list(text)
    items = [s for s in items if s]
    for s in items:
        if s not in valid:
            raise HumevalError(f"arena replay: unknown {what} '{s}'. {did_you_mean(s, valid)}")
    if not items:
        raise HumevalError(f"arena replay: name at least one {what} ({', '.join(valid)})")
    return items


def arena_replay(data: str | Path | ArenaCounts, *, models: int = 20, questions: str | Sequence[str] = QUESTIONS,
                 policies: str | Sequence[str] = PAIR_POLICIES, top: int = 10, replays: int = 200,
                 delta: float = 0.05, seed: int = 0, intransitive: bool = False, first_batch: int = 1000,
                 growth: float = 0.1, progress: Callable[[str, int, int], None] | None = None,
                 focal: bool = True) -> tuple[ArenaCounts, list[ReplayResult]]:
    """Replay the votes in ``data`` (a file :func:`~humeval.arena.counts.read_arena_votes` reads, or
    :class:`ArenaCounts`) for each question and policy.

    ``models``: keep the top ``models`` by Davidson's fit to every vote; ``top``: k of the top-k question (at most
    ``models`` - 1); ``intransitive``: swap the first and third model's wins first. Each (question, policy) replay
    uses its own seed stream, so adding one changes no other. ``progress(label, votes, data_votes)`` after each
    batch. ``focal``: the adaptive weights weigh the question's focal statements (False: every needed one).
    """
    counts = data if isinstance(data, ArenaCounts) else read_arena_votes(data)
    counts = counts.top(models)
    if intransitive:
        counts = make_intransitive(counts)
    qs = _names(questions, QUESTIONS, "question")
    ps = _names(policies, PAIR_POLICIES, "pair policy")
    k = min(int(top), len(counts.models) - 1)
    out = []
    for q in qs:
        for pol in ps:
            label = f"{q if q != 'top-k' else f'top-{k}'} / {pol}"
            rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(QUESTIONS.index(q),
                                                                                     PAIR_POLICIES.index(pol))))
            cb = None if progress is None else (lambda v, t, label=label: progress(label, v, t))
            out.append(replay_counts(counts, q, policy=pol, top=k, replays=replays, delta=delta, seed=rng,
                                     first_batch=first_batch, growth=growth, progress=cb, focal=focal))
    return counts, out
