"""Re-analysis of collected pairwise judgements by resampling workers (the paper's Table 6).

Each request (pair) has R collected answers. One iteration visits the requests in a fixed
order and, per request, draws the answers a strategy needs *without replacement* from the
R collected ones (One Worker: 1; N-majority: N; Max-3: 3, of which the third counts only
on disagreement), then lets a stopping rule decide on the sequence of final labels. The
effort is the number of labels up to the decision. Per strategy and rule: mean effort
over the iterations that decided (the paper's convention) with a 99% percentile
bootstrap CI, the mean over all iterations (undecided ones count all labels), and the
number decided. ``max3_cost="authors"`` reproduces the authors' cost (3 labels whenever
the first two answers are not both for the orientation model, i.e. also when both chose
the other model); the default ``"correct"`` charges 3 only on disagreement.
Reference: Thorleiksdottir et al. (2022), section 5.5 and Table 6.
Checked against: a per-request loop on a small matrix (tests/unit/simulate/test_resample.py).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from humeval.errors import HumevalError
from humeval.policies.max_three import MaxThree
from humeval.policies.registry import get_strategy
from humeval.simulate._bootstrap import bootstrap_mean_ci
from humeval.stopping.registry import get_rule

__all__ = ["ResampleResult", "resample_collected"]


@dataclass(frozen=True)
class ResampleResult:
    """Effort of one strategy under one rule on collected data."""

    strategy: str
    rule: str
    delta: float
    iterations: int
    decided: int
    decided_for_a: int
    mean_effort: float
    ci_low: float
    ci_high: float
    mean_effort_all: float
    mean_requests: float
    max3_cost: str
    method: str = "decided iterations; percentile bootstrap 99%, 2000 resamples"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def resample_collected(
    votes: np.ndarray,
    strategies: Sequence[str],
    rules: Sequence[str],
    delta: float,
    iterations: int = 100,
    seed: int = 21,
    *,
    max3_cost: Literal["correct", "authors"] = "correct",
    two_sided_lastrun: bool = True,
    order: Literal["file", "serving"] = "file",
) -> list[ResampleResult]:
    """Resample ``votes`` (requests x answers, 1 = the orientation model A) per strategy and rule.

    ``order``: ``file`` visits the requests in the matrix's order in every iteration (the paper's
    re-analysis); ``serving`` visits them in the order a humeval study serves a watched comparison,
    a fresh :func:`humeval.design.order.serving_order` per iteration (``child_seeds(seed, iterations)``).
    """
    v = np.asarray(votes, dtype=np.int8)
    if v.ndim != 2 or not np.isin(v, (0, 1)).all():
        raise HumevalError("votes must be a (requests, answers) matrix of 0/1")
    if max3_cost not in ("correct", "authors"):
        raise HumevalError(f"max3_cost must be 'correct' or 'authors', got {max3_cost!r}")
    if isinstance(iterations, bool) or int(iterations) != iterations or iterations < 1:
        raise HumevalError(f"iterations must be a positive integer, got {iterations!r}")
    p, r = v.shape
    if order == "serving":
        from humeval.simulate.order import served_items

        visits: np.ndarray = v[served_items(p, int(iterations), seed)]  # (iterations, requests, answers)
    elif order == "file":
        visits = np.broadcast_to(v, (int(iterations), p, r))
    else:
        raise HumevalError(f"order must be 'file' or 'serving', got {order!r}")
    out: list[ResampleResult] = []
    for name in strategies:
        st = get_strategy(name)
        if st.same_worker:
            raise HumevalError("fixed worker cannot be resampled from crowd data (no worker labelled every request)")
        k = st.max_workers
        if k > r:
            raise HumevalError(f"{st.name} needs {k} answers per request; the data has {r}")
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(3, zlib.crc32(st.name.encode()))))
        picks = np.argsort(rng.random((iterations, p, r)), axis=2)[..., :k]  # distinct answers
        drawn = np.take_along_axis(visits, picks, axis=2)
        stacked = np.moveaxis(drawn, 2, 0)  # (k, iterations, requests)
        labels, cost = st.aggregate(stacked)
        if isinstance(st, MaxThree) and max3_cost == "authors":
            cost = np.where((stacked[0] == 1) & (stacked[1] == 1), 2, 3).astype(np.int8)
        s = np.cumsum(labels, axis=1, dtype=np.int32)
        c = np.cumsum(cost, axis=1, dtype=np.int32)
        rows = np.arange(iterations)
        for rule_name in rules:
            rule = get_rule(rule_name, delta, horizon=p, two_sided=two_sided_lastrun)
            dec = rule.decide_paths(s)
            stop = np.where(dec.n > 0, dec.n, p)
            effort = c[rows, stop - 1].astype(float)
            ok = dec.outcome != 0
            brng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(4, zlib.crc32(f"{st.name}|{rule_name}".encode()))))
            lo, hi = bootstrap_mean_ci(effort[ok], brng)
            out.append(ResampleResult(
                strategy=st.name, rule=rule_name, delta=float(delta), iterations=int(iterations),
                decided=int(ok.sum()), decided_for_a=int((dec.outcome == 1).sum()),
                mean_effort=float(effort[ok].mean()) if ok.any() else float("nan"), ci_low=lo, ci_high=hi,
                mean_effort_all=float(effort.mean()), mean_requests=float(stop.mean()), max3_cost=max3_cost,
            ))
    return out
