"""``bws``: best-worst scaling, N outputs of an item side by side (N = ``tuple_size``, 3-5), pick the best and the worst.

**The value** is ``{"best": i, "worst": j}``: positions in display order (0 = output A), different, both among the
outputs shown.

**The design** (:func:`balanced_tuples`): each item's tasks show tuples of ``tuple_size`` systems built so that every
system appears equally often. ``design: cyclic`` (the default) shows K tuples per item (K systems): the windows
``p[i], p[i+1], ..., p[i+N-1]`` (indices mod K) of a permutation ``p`` of the systems, so each system appears exactly N
times in each item; the permutation of each item is the one of 32 seeded candidates that keeps the pairs'
co-occurrence counts over the items so far most even (pairs at cyclic distance d share N - d windows of one item,
so no single permutation balances pairs, but the items together do). ``design: complete`` shows every N-subset of
the systems (C(K, N) tuples per item): each system appears C(K-1, N-1) times and each pair co-occurs C(K-2, N-2)
times in every item, exactly. The draws come from the stream ``bws-tuples`` of ``study.seed``; the design stage
writes the tuples into ``lists/tasks.jsonl`` and the lock hashes them like every design.

**The long rows** are one row per output shown (``position`` its place), ``value`` +1 for the best, -1 for the worst,
0 for the others, ``choice`` the output's role (``best``, ``worst``, ``neither``). Rows per output, not implied pairs,
because they keep what the participant saw: the appearances (the counting score's denominator), the positions (for
position bias), and the repeat check compares the role of each system; the implied pairs follow from them
(:func:`implied_pairs`), the other way round they do not (a pair row does not say which outputs were shown together).
The mean ``value`` of a system is its counting score. An attention check shows its instruction in every output, so
its rows' ``choice`` is the letter chosen as the best (what the check asks for: ``A`` or ``B``).

**The analysis**: the plan's rating analysis runs on the values (its means are the counting scores, with BCa
intervals resampling items); the type adds two rankings (:meth:`BWSType.rankings`):

- ``bws-counts``: counting scores (best - worst) / appearances per system, with percentile bootstrap intervals
  **resampling participants** (the judgements of one participant are not independent; a participant is drawn with
  all their judgements) and rank ranges from the resampled ranks (:func:`counting_scores`);
- ``maxdiff``: a Bradley-Terry fit (maximum likelihood, Newton's method) on the implied pairs (the best beats each
  other output shown, each other output beats the worst: 2N - 3 pairs a judgement), the multinomial-logit (MaxDiff)
  strengths as pairs approximate them, log-strengths centred on 0, with the same participant bootstrap
  (:func:`maxdiff_fit`). The MLE exists when the win graph is strongly connected (every system beat and lost to
  some chain of others); otherwise the ranking says so, and resamples without it are left out and counted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from humeval.errors import DataError, ProtocolError
from humeval.tasks.base import (
    MISSING,
    CriterionBase,
    InvalidValue,
    Scale,
    Statistic,
    TaskType,
    mark,
    show,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["BWS", "BWSType", "CountingScores", "MaxDiffFit", "SystemEstimates", "balanced_tuples",
           "bradley_terry_mle", "counting_scores", "implied_pairs", "maxdiff_fit"]

_ = mark
LETTERS = "ABCDE"
#: candidate permutations per item of the cyclic design (the one keeping pair co-occurrence most even is kept)
CANDIDATES = 32
#: the share of bootstrap resamples whose Bradley-Terry MLE may be missing (separation) before no interval is given
MAX_SEPARATED = 0.05


class BWS(CriterionBase):
    """Best-worst scaling: the best and the worst of ``tuple_size`` outputs of an item."""

    type: Literal["bws"] = Field(description="Response type: best-worst scaling, pick the best and the worst of N "
                                             "outputs of an item.")
    tuple_size: int = Field(4, ge=3, le=5, description="Outputs shown per task (N, 3-5); at most the number of systems.")
    design: Literal["cyclic", "complete"] = Field(
        "cyclic", description="How tuples are built: `cyclic`, K tuples per item (K systems), each system N times; "
                              "`complete`, every N-subset of the systems per item (pairs co-occur equally often).")


# --------------------------------------------------------------------------- the design


def balanced_tuples(n_systems: int, size: int, n_items: int, design: str, seed: int | np.random.Generator,
                    ) -> np.ndarray:
    """The tuples of every item, ``(n_items, tuples per item, size)`` system indices (see the module docstring).

    ``cyclic``: K windows of a permutation per item, each system ``size`` times an item; the permutation is the one of
    :data:`CANDIDATES` drawn that minimises the sum of squared pair co-occurrence counts so far. ``complete``: all
    C(K, size) subsets. ``seed``: an integer (its stream ``bws-tuples``) or a Generator.
    """
    import numpy as np

    from humeval.rng import stream

    if not 2 <= size <= n_systems:
        raise ProtocolError(f"bws: tuples of {size} outputs need at least {size} systems, the study has {n_systems}")
    if design == "complete" or size == n_systems:
        base = np.array(list(combinations(range(n_systems), size)), dtype=np.int64)
        return np.broadcast_to(base, (n_items, *base.shape)).copy()
    rng = seed if isinstance(seed, np.random.Generator) else stream(int(seed), "bws-tuples")
    windows = (np.arange(n_systems)[:, None] + np.arange(size)[None, :]) % n_systems  # (K, size) positions
    together = np.zeros((n_systems, n_systems), dtype=np.int64)  # positions a, b: windows holding both
    for w in windows:
        together[np.ix_(w, w)] += 1
    np.fill_diagonal(together, 0)
    perms = np.argsort(rng.random((n_items, CANDIDATES, n_systems)), axis=2)  # candidate permutations
    counts = np.zeros((n_systems, n_systems), dtype=np.int64)
    out = np.empty((n_items, n_systems, size), dtype=np.int64)
    for i in range(n_items):  # once per design: each item's choice depends on the counts so far
        inv = np.argsort(perms[i], axis=1)  # (C, K): position of each system
        added = together[inv[:, :, None], inv[:, None, :]]  # (C, K, K): co-occurrence each candidate adds
        best = int(np.argmin((added * counts).sum(axis=(1, 2))))
        counts += added[best]
        out[i] = perms[i, best][windows]
    return out


# --------------------------------------------------------------------------- the statistics


@dataclass(frozen=True)
class SystemEstimates:
    """One estimate per system (in ``systems`` order) with its percentile bootstrap interval and rank range, from
    ``n_boot`` resamples drawn from ``seed``."""

    systems: tuple[str, ...]
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    n_boot: int
    seed: int
    confidence_level: float


@dataclass(frozen=True)
class CountingScores(SystemEstimates):
    """Counting scores per system: (best - worst) / appearances (resampling ``unit``: participants with all their
    judgements)."""

    best: np.ndarray
    worst: np.ndarray
    appearances: np.ndarray
    clusters: int
    unit: str = "participants"


@dataclass(frozen=True)
class MaxDiffFit(SystemEstimates):
    """Bradley-Terry log-strengths (centred on 0) fitted on the ``pairs`` implied pairs (resampling participants;
    ``separated``: resamples without an MLE); ``undefined``: why there is no fit, ``no_interval``: why there are no
    intervals."""

    pairs: int
    separated: int
    undefined: str | None = None
    no_interval: str | None = None


def _codes(values: Any) -> tuple[np.ndarray, int]:
    import pandas as pd

    codes, uniques = pd.factorize(pd.Series(values), sort=True)
    return codes.astype("int64"), len(uniques)


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Rank 1 = best of each row (``(B, K)``): 1 + the systems strictly above (NaN rows stay NaN)."""
    import numpy as np

    above = (scores[:, None, :] > scores[:, :, None]).sum(axis=2)
    return np.where(np.isnan(scores), np.nan, 1.0 + above)


def _interval(draws: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    tail = (1 - level) / 2
    return np.nanquantile(draws, tail, axis=0), np.nanquantile(draws, 1 - tail, axis=0)


def _weights(n_clusters: int, n_boot: int, seed: int) -> np.ndarray:
    """How often each cluster is drawn in each resample, ``(n_boot, n_clusters)``."""
    from humeval.rng import as_generator

    return as_generator(seed).multinomial(n_clusters, [1.0 / n_clusters] * n_clusters, size=n_boot)


def counting_scores(system: Sequence[str], value: Any, cluster: Sequence[str], *, n_boot: int = 1000, seed: int = 0,
                    confidence_level: float = 0.95) -> CountingScores:
    """Counting scores of long rows (one per output shown: its ``system``, ``value`` +1 best / -1 worst / 0, the
    ``cluster`` resampled, a participant), with ``n_boot`` participant resamples from ``seed``."""
    import numpy as np

    names = tuple(sorted(set(map(str, system))))
    s, k = _codes(system)
    c, n_c = _codes(cluster)
    v = np.asarray(value, dtype=float)
    if n_c < 2:
        raise DataError(f"bws counting scores: {n_c} participant(s); resampling participants needs at least 2")
    score = np.zeros((n_c, k))
    seen = np.zeros((n_c, k))
    np.add.at(score, (c, s), v)
    np.add.at(seen, (c, s), 1.0)
    best = np.bincount(s, weights=v > 0, minlength=k)
    worst = np.bincount(s, weights=v < 0, minlength=k)
    shown = seen.sum(axis=0)
    w = _weights(n_c, n_boot, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = (w @ score) / (w @ seen)
    low, high = _interval(draws, confidence_level)
    r_low, r_high = _interval(_ranks(draws), confidence_level)
    return CountingScores(systems=names, estimate=(best - worst) / shown, ci_low=low, ci_high=high,
                          rank_low=np.floor(r_low), rank_high=np.ceil(r_high), n_boot=n_boot, seed=seed,
                          confidence_level=confidence_level, best=best, worst=worst, appearances=shown, clusters=n_c)


def implied_pairs(judgement: Any, system: Any, value: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The implied pairs of best-worst judgements (long rows: each row's ``judgement``, ``system`` code and
    ``value``): the best beats each other output, each other output beats the worst. Returns (judgement, winner,
    loser) arrays, 2N - 3 pairs a judgement of N outputs."""
    import numpy as np

    j, s, v = (np.asarray(a) for a in (judgement, system, value))
    n_j = int(j.max()) + 1 if j.size else 0
    best = np.full(n_j, -1, dtype=np.int64)
    worst = np.full(n_j, -1, dtype=np.int64)
    best[j[v > 0]] = s[v > 0]
    worst[j[v < 0]] = s[v < 0]
    mid = v == 0
    judged = np.flatnonzero((best >= 0) & (worst >= 0))
    jm = j[mid]
    return (np.concatenate([jm, jm, judged]), np.concatenate([best[jm], s[mid], best[judged]]),
            np.concatenate([s[mid], worst[jm], worst[judged]]))


def _connected(wins: np.ndarray) -> np.ndarray:
    """Whether each win matrix (``(..., K, K)``) is strongly connected: the Bradley-Terry MLE exists (Zermelo)."""
    import numpy as np

    k = wins.shape[-1]
    reach = (wins > 0) | np.eye(k, dtype=bool)
    for _step in range(max(1, int(np.ceil(np.log2(k))))):
        reach = np.matmul(reach.astype(np.int64), reach.astype(np.int64)) > 0
    return np.asarray(reach.all(axis=(-2, -1)))


def bradley_terry_mle(wins: np.ndarray, *, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Bradley-Terry log-strengths of win matrices ``(..., K, K)`` (``wins[i, j]``: i beat j), centred on 0, by
    Newton's method on the log-likelihood with the last strength fixed at 0 during the fit. Matrices that are not
    strongly connected (no MLE) give NaN."""
    import numpy as np

    w = np.asarray(wins, dtype=float)
    batch = w.reshape(-1, *w.shape[-2:])
    k = batch.shape[-1]
    n = batch + np.swapaxes(batch, 1, 2)
    won = batch.sum(axis=2)
    theta = np.zeros(batch.shape[:2])
    ok = _connected(batch)
    for _step in range(max_iter):
        p = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))  # p[b, i, j]: i beats j
        grad = won - (n * p).sum(axis=2)
        q = n * p * (1 - p)
        hess = q - np.eye(k) * q.sum(axis=2)[:, :, None]  # Hessian of the log-likelihood
        step = np.zeros_like(theta)
        h = np.where(ok[:, None, None], hess[:, :-1, :-1], -np.eye(k - 1))
        step[:, :-1] = -np.linalg.solve(h, np.where(ok[:, None], grad[:, :-1], 0.0)[:, :, None])[:, :, 0]
        theta = theta + np.clip(step, -5.0, 5.0)
        if np.abs(step).max() < tol:
            break
    theta = theta - theta.mean(axis=1, keepdims=True)
    theta[~ok] = np.nan
    return theta.reshape(w.shape[:-1])


def maxdiff_fit(judgement: Sequence[str], system: Sequence[str], value: Any, cluster: Sequence[str], *,
                n_boot: int = 1000, seed: int = 0, confidence_level: float = 0.95) -> MaxDiffFit:
    """Bradley-Terry on the implied pairs of long best-worst rows (one per output shown), with ``n_boot`` participant
    (``cluster``) resamples from ``seed``: a participant's pairs enter a resample as often as they are drawn."""
    import numpy as np

    names = tuple(sorted(set(map(str, system))))
    s, k = _codes(system)
    jcode, _n = _codes(judgement)
    c, n_c = _codes(cluster)
    pj, winner, loser = implied_pairs(jcode, s, np.asarray(value, dtype=float))
    cluster_of = np.zeros(int(jcode.max()) + 1 if jcode.size else 0, dtype=np.int64)
    cluster_of[jcode] = c
    per = np.zeros((n_c, k, k))
    np.add.at(per, (cluster_of[pj], winner, loser), 1.0)
    theta = bradley_terry_mle(per.sum(axis=0))
    nan = np.full(k, np.nan)
    base: dict[str, Any] = {"systems": names, "pairs": int(pj.size), "n_boot": n_boot, "seed": seed,
                            "confidence_level": confidence_level}
    if np.isnan(theta).any():
        return MaxDiffFit(estimate=nan, ci_low=nan, ci_high=nan, rank_low=nan, rank_high=nan, separated=0,
                          undefined="the implied pairs' win graph is not strongly connected (a system never lost or "
                                    "never won against the others): the Bradley-Terry MLE does not exist", **base)
    if n_c < 2:
        return MaxDiffFit(estimate=theta, ci_low=nan, ci_high=nan, rank_low=nan, rank_high=nan, separated=0,
                          no_interval=f"{n_c} participant: resampling participants needs at least 2", **base)
    w = _weights(n_c, n_boot, seed)
    draws = bradley_terry_mle(np.einsum("bc,cij->bij", w, per))
    separated = int(np.isnan(draws).any(axis=1).sum())
    if separated > MAX_SEPARATED * n_boot:
        return MaxDiffFit(estimate=theta, ci_low=nan, ci_high=nan, rank_low=nan, rank_high=nan, separated=separated,
                          no_interval=f"{separated} of {n_boot} resamples have no MLE (separation), more than "
                                      f"{MAX_SEPARATED:.0%}", **base)
    low, high = _interval(draws, confidence_level)
    r_low, r_high = _interval(_ranks(draws), confidence_level)
    return MaxDiffFit(estimate=theta, ci_low=low, ci_high=high, rank_low=np.floor(r_low), rank_high=np.ceil(r_high),
                      separated=separated, **base)


def _ranking(method: str, fit: SystemEstimates, extra: dict[str, Any],
             per_system: Callable[[int], dict[str, Any]]) -> dict[str, Any]:
    """A ranking record (:class:`humeval.results.RankingResult`'s fields) of a fit, systems best first."""
    import numpy as np

    def num(x: float) -> float | None:
        return None if np.isnan(x) else float(x)

    order = np.argsort(-np.nan_to_num(fit.estimate, nan=-np.inf), kind="stable")
    rows = [{"system": fit.systems[i], "estimate": num(fit.estimate[i]), "ci_low": num(fit.ci_low[i]),
             "ci_high": num(fit.ci_high[i]), "method": method,
             "rank_low": int(fit.rank_low[i]) if not np.isnan(fit.rank_low[i]) else r + 1,
             "rank_high": int(fit.rank_high[i]) if not np.isnan(fit.rank_high[i]) else r + 1, **per_system(int(i))}
            for r, i in enumerate(order)]
    label = "; ".join(f"{r['rank_low']}." + ("" if r["rank_low"] == r["rank_high"] else f"-{r['rank_high']}.")
                      + f" {r['system']}" for r in rows)
    return {"method": method, "label": label, "systems": rows, "n_boot": fit.n_boot,
            "extra": {"confidence_level": fit.confidence_level, "seed": fit.seed, **extra}}


# --------------------------------------------------------------------------- the task type

_ATTENTION = ("This is an attention check. Please choose output %(value)s as the best (and any other output as the "
              "worst) for the question: %(question)s")
_PROBLEM = "Choose the best and the worst output: two different outputs."
#: the type's messages in the server's other languages (:attr:`humeval.tasks.TaskType.translations`)
TRANSLATIONS = {
    "de": {
        _ATTENTION: "Dies ist eine Aufmerksamkeitsprüfung. Bitte wählen Sie bei der folgenden Frage die Ausgabe "
                    "%(value)s als die beste (und eine beliebige andere als die schlechteste): %(question)s",
        _PROBLEM: "Wählen Sie die beste und die schlechteste Ausgabe: zwei verschiedene Ausgaben.",
        "The best output": "Die beste Ausgabe",
        "The worst output": "Die schlechteste Ausgabe",
    },
    "zh": {
        _ATTENTION: "这是一道注意力检查题。请在以下问题中选择输出 %(value)s 为最好的（并任选另一个输出为最差的）：%(question)s",
        _PROBLEM: "请选择最好和最差的输出：两个不同的输出。",
        "The best output": "最好的输出",
        "The worst output": "最差的输出",
    },
    "ar": {
        _ATTENTION: "هذا اختبار انتباه. يرجى اختيار المخرج %(value)s بوصفه الأفضل (وأي مخرج آخر بوصفه الأسوأ) في السؤال "
                    "التالي: %(question)s",
        _PROBLEM: "يرجى اختيار المخرج الأفضل والمخرج الأسوأ: مخرجان مختلفان.",
        "The best output": "المخرج الأفضل",
        "The worst output": "المخرج الأسوأ",
    },
}


class BWSType(TaskType):
    name = "bws"
    model = BWS
    summary = "best-worst scaling: the best and the worst of N outputs of an item (N = tuple_size, 3-5)"
    family = "multi"
    relative = True
    shows = "N outputs of an item (tuple_size), in balanced tuples"
    translations = TRANSLATIONS
    statistics = (
        Statistic("counting scores (best - worst) / appearances with bootstrap intervals", True,
                  "each judgement names a best and a worst of the outputs shown; resampling participants"),
        Statistic("Bradley-Terry (MaxDiff) on the implied pairs", True,
                  "the best beats each other output shown, each other output beats the worst"),
        Statistic("means with bootstrap intervals, Krippendorff's alpha (ordinal)", True,
                  "the values +1 / 0 / -1 are ordered; a system's mean is its counting score"),
        Statistic("Fleiss' kappa, response distribution", True, "best, neither and worst are categories"),
        Statistic("stopping rules", False, "the sequential tests need one pairwise preference per judgement"),
        Statistic("ICC", False, "the values of one judgement are constrained (one +1, one -1), not independent "
                                "ratings"),
    )

    # -- the design
    def joint_key(self, criterion: Any) -> str:
        return f"{self.family}:bws:{criterion.tuple_size}:{criterion.design}"

    def shown_systems(self, criterion: Any, items: Sequence[str], systems: Sequence[str],
                      pairs: Sequence[tuple[str, str]], seed: int) -> list[list[tuple[str, ...]]]:
        if len(systems) < criterion.tuple_size:
            raise ProtocolError(f"criteria: '{criterion.name}' (bws) shows tuple_size {criterion.tuple_size} outputs "
                                f"a task, but the study has {len(systems)} systems ({', '.join(systems)}); set "
                                f"tuple_size from 3 to {max(3, len(systems))} or add systems")
        tuples = balanced_tuples(len(systems), criterion.tuple_size, len(items), criterion.design, seed)
        names = list(systems)
        return [[tuple(names[s] for s in t) for t in item] for item in tuples.tolist()]

    # -- the page
    def form_value(self, criterion: Any, form: Mapping[str, str], n_outputs: int) -> Any:
        texts = {part: form.get(f"{criterion.name}.{part}", "") for part in ("best", "worst")}
        if not any(texts.values()):
            return MISSING
        return {part: int(t) if t.isascii() and t.isdigit() and len(t) < 3 else (t or None)
                for part, t in texts.items()}

    def problem_input(self, criterion: Any, index: str | None, part: str | None) -> str:
        return f"{criterion.name}.worst"

    def problem_text(self, criterion: Any, field: str, gettext: Callable[[str], str]) -> str:
        return gettext(_("Choose the best and the worst output: two different outputs."))

    def attention_text(self, criterion: Mapping[str, Any], expected: Any, gettext: Callable[[str], str]) -> str:
        ask = gettext(_("This is an attention check. Please choose output %(value)s as the best (and any other output "
                        "as the worst) for the question: %(question)s"))
        return ask % {"question": criterion["question"], "value": expected or self.check_answers(criterion)[0]}

    # -- values
    def check(self, criterion: Any, value: Any, field: str, n_outputs: int, lengths: Sequence[int] | None) -> Any:
        # every problem at ``field`` itself: the page shows it beside the question (the worst group, see problem_input)
        if not isinstance(value, dict) or set(value) != {"best", "worst"}:
            raise InvalidValue(field, f"expected an object with 'best' and 'worst' (positions of outputs shown), got "
                                      f"{show(value)}")
        for part in ("best", "worst"):
            x = value[part]
            if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < n_outputs:
                raise InvalidValue(field, f"{part}: expected the position of one of the {n_outputs} outputs shown "
                                          f"(0 to {n_outputs - 1}), got {show(x)}")
        if value["best"] == value["worst"]:
            raise InvalidValue(field, f"the best and the worst are the same output ({value['best']}); choose two "
                                      "different outputs")
        return {"best": value["best"], "worst": value["worst"]}

    def values_schema(self, criterion: Any) -> dict[str, Any]:
        position = {"type": "integer", "minimum": 0, "maximum": criterion.tuple_size - 1}
        return {"type": "object", "required": ["best", "worst"], "additionalProperties": False,
                "properties": {"best": position, "worst": position},
                "description": "positions (0 = output A) of the best and the worst output shown; different"}

    def long_rows(self, criterion: Any, value: Any, display: Sequence[str], base: dict[str, Any],
                  seq: int | None) -> list[dict[str, Any]]:
        best, worst = value["best"], value["worst"]
        roles = ["best" if p == best else "worst" if p == worst else "neither" for p in range(len(display))]
        if base.get("kind") in ("attention", "practice"):  # a check shows the instruction, practice is judged by the
            # letter chosen as the best: the letter is the answer
            roles = [LETTERS[best]] * len(display)
        return [base | {"criterion": criterion.name, "system": system, "system_b": "", "position": pos,
                        "value": 1.0 if pos == best else -1.0 if pos == worst else 0.0, "choice": role}
                for pos, (system, role) in enumerate(zip(display, roles, strict=True))]

    def categories(self, criterion: Any) -> list[float] | None:
        return [-1.0, 0.0, 1.0]

    def bounds(self, criterion: Any, logged: bool) -> tuple[float, float] | None:
        return (-1.0, 1.0)

    def off_scale(self, criterion: Any, value: np.ndarray) -> tuple[np.ndarray, str]:
        import numpy as np

        return ~np.isin(value, (-1.0, 0.0, 1.0)), "-1 (worst), 0, 1 (best)"

    def agreement_level(self, logged: bool) -> str:
        return "ordinal"

    def rankings(self, criterion: Any, frame: pd.DataFrame, systems: Sequence[str], seed: int,
                 confidence_level: float, n_boot: int) -> dict[str, dict[str, Any]]:
        from humeval.rng import child_seeds

        s_counts, s_fit = child_seeds(seed, 2)
        judgement = frame["participant_id"].astype(str) + "\x1f" + frame["task_id"].astype(str)
        args = (frame["system"].astype(str).to_numpy(), frame["value"].to_numpy(dtype=float),
                frame["participant_id"].astype(str).to_numpy())
        out: dict[str, dict[str, Any]] = {}
        try:
            counts = counting_scores(*args, n_boot=n_boot, seed=s_counts, confidence_level=confidence_level)
        except DataError as exc:
            out["bws-counts"] = {"method": "bws-counts", "systems": [], "undefined": str(exc)}
        else:
            out["bws-counts"] = _ranking(
                "bws-counts", counts, {"unit": "participants", "participants": counts.clusters,
                                       "interval": "percentile bootstrap"},
                lambda i: {"n": int(counts.appearances[i]), "best": int(counts.best[i]), "worst": int(counts.worst[i])})
        fit = maxdiff_fit(judgement.to_numpy(), args[0], args[1], args[2], n_boot=n_boot, seed=s_fit,
                          confidence_level=confidence_level)
        if fit.undefined:
            out["maxdiff"] = {"method": "maxdiff", "systems": [], "undefined": fit.undefined, "battles": fit.pairs}
        else:
            record = _ranking("maxdiff", fit, {"unit": "participants", "scale": "log-strength, centred on 0",
                                               "model": "Bradley-Terry on the implied pairs",
                                               "separated_resamples": fit.separated},
                              lambda i: {"no_interval": fit.no_interval} if fit.no_interval else {})
            out["maxdiff"] = record | {"battles": fit.pairs}
        return out

    # -- answers of dummy and simulated participants
    def scale(self, criterion: Any) -> Scale:
        return Scale(0.0, 1.0, False)

    def shaped(self, criterion: Any, scores: np.ndarray) -> Any:
        import numpy as np

        best = int(np.argmax(scores))
        worst = int(np.argmin(scores))
        if worst == best:  # every output scored alike
            worst = len(scores) - 1 if best != len(scores) - 1 else 0
        return {"best": best, "worst": worst}

    def dummy_rows(self, criterion: Any, scores: np.ndarray, judgement: np.ndarray, attention: np.ndarray,
                   expected: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        import numpy as np
        import pandas as pd

        rows = pd.DataFrame({"j": judgement, "x": np.asarray(scores, dtype=float)})
        position = rows.groupby("j").cumcount().to_numpy()
        wanted = np.array([LETTERS.find(str(e)) if isinstance(e, str) else -1 for e in expected], dtype=np.int64)
        x = np.where(attention, np.where(position == wanted, 2.0, -position.astype(float)), rows["x"].to_numpy())
        rows["x"] = x
        best = rows.groupby("j")["x"].transform("idxmax").to_numpy()
        worst = rows.groupby("j")["x"].transform("idxmin").to_numpy()
        last = rows.index.to_series().groupby(rows["j"]).transform("max").to_numpy()
        first = rows.index.to_series().groupby(rows["j"]).transform("min").to_numpy()
        worst = np.where(worst == best, np.where(best == last, first, last), worst)
        index = rows.index.to_numpy()
        value = np.where(index == best, 1.0, np.where(index == worst, -1.0, 0.0))
        role = np.where(value > 0, "best", np.where(value < 0, "worst", "neither")).astype(object)
        letter = np.array(list(LETTERS), dtype=object)[position[best]]
        return value, np.where(attention, letter, role)

    def check_answers(self, criterion: Any) -> tuple[Any, ...]:
        # two answers, so that a participant who always picks the first output fails a check of a list with two
        return ("A", "B")

    def check_request(self, criterion: Any, expected: Any) -> str:
        return f"choose output {expected} as the best"

    def attention_answer(self, criterion: Any, expected: Any, shown: int) -> Any:
        best = LETTERS.index(str(expected))
        return {"best": best, "worst": shown - 1 if best != shown - 1 else 0}

    def cheap_answer(self, criterion: Any, level: float, shown: int) -> Any:
        best = round(level * (shown - 1))
        worst = shown - 1 - best
        return {"best": best, "worst": worst if worst != best else (best + 1) % shown}

    def heds_scale(self, criterion: Any) -> tuple[Any, str, str]:
        n = criterion.tuple_size
        return (n, f"the best and the worst of {n} outputs (best-worst scaling; scored +1 / 0 / -1)",
                "Multiple-choice options (one choice of the best and one of the worst output)")

