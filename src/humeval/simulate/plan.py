"""Planning from a pilot: fit the difficulty distribution, predict effort per strategy and delta.

Estimator (method of moments on x = 2 * choice - 1, choice = 1 when A was preferred).
Under the model P(choice = 1) = (c d + 1) / 2 with capability c independent of the
request difficulty d:

    m1 = E[x]                 = c̄ E[d]        (mean over all judgements)
    m2 = E[x_w x_w'] (w != w') = c̄^2 E[d^2]   (pairs of different workers on the same request)

so mu = m1 / c̄ and var = m2 / c̄^2 - mu^2. Capability and difficulty enter only through
their product, so their scale is not identified from pairwise data: the capability range
is an input (default U(0.8, 1.0) as in the paper), and the fitted difficulty is relative
to it. m2 needs requests with >= 2 judgements; with one judgement per request only mu is
fitted and var must be given. Clipping of d to [-1, 1] is ignored in the fit. CIs: 95%
percentile bootstrap over requests. Effort predictions are simulations (fresh requests
per iteration) at the point estimate.
Checked against: recovery of mu and var from simulated pilots (tests/unit/simulate/test_plan.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from humeval.errors import DataError
from humeval.simulate.config import SimulationConfig
from humeval.simulate.results import StrategyResult
from humeval.simulate.run import simulate

__all__ = ["Pilot", "PilotFit", "fit_pilot", "pilot_from_judgements", "predict_effort", "read_pilot"]


@dataclass(frozen=True)
class PilotFit:
    """Fitted difficulty distribution (relative to the assumed capability range)."""

    mu: float
    mu_ci: tuple[float, float]
    difficulty_var: float
    var_ci: tuple[float, float]
    capability: tuple[float, float]
    share_for_a: float
    requests: int
    judgements: int
    method: str = "moments: mu = m1 / c̄, var = m2 / c̄^2 - mu^2; 95% bootstrap over requests"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Pilot:
    """Pilot judgements as ``request, choice`` (choice 1 when ``system_a`` was preferred).

    ``seconds``: seconds per task of the pilot's judgements (empty when the source has none);
    ``source``: what was read (``humeval judgements``, ``AMT batch``, ``CSV``); ``dropped``:
    judgements left out (ties and other non-A/B answers, attention checks, repeats); ``sessions``:
    per participant, their tasks' seconds summed and the tasks timed (rows; empty without times).
    """

    frame: pd.DataFrame
    system_a: str
    source: str
    seconds: np.ndarray = field(default_factory=lambda: np.empty(0))
    dropped: int = 0
    sessions: np.ndarray = field(default_factory=lambda: np.empty((0, 2)))


def pilot_from_judgements(frame: pd.DataFrame, *, system_a: str = "", criterion: str = "") -> Pilot:
    """A pilot from humeval's judgements table (``results/judgements.jsonl`` as ``humeval export`` writes it).

    The ``2afc`` task judgements of ``criterion`` (default: the only pairwise criterion)
    between ``system_a`` (default: the first system of the pair, sorted) and the other
    system become one row per judgement: request = item and pair, choice = 1 when the
    winner (:func:`humeval.judgements.winners`) is ``system_a``. Ties, ``both-good`` and
    ``both-bad`` carry no preference and are dropped (counted).
    """
    from humeval.judgements import winners

    pairs = frame[(frame["kind"] == "task") & (frame["system_b"] != "") & (frame["choice"] != "")]
    if pairs.empty:
        raise DataError("pilot: no pairwise (2afc) task judgements in the judgements file")
    names = sorted(pairs["criterion"].unique())
    if criterion:
        if criterion not in names:
            raise DataError(f"pilot: no 2afc judgements of criterion '{criterion}'. Available: {', '.join(names)}")
    elif len(names) > 1:
        raise DataError(f"pilot: judgements of several 2afc criteria ({', '.join(names)}); name one with --criterion")
    else:
        criterion = names[0]
    pairs = pairs[pairs["criterion"] == criterion]
    low = pairs[["system", "system_b"]].min(axis=1)
    high = pairs[["system", "system_b"]].max(axis=1)
    systems = sorted(set(low) | set(high))
    a = system_a or str(low.iloc[0])
    if a not in systems:
        raise DataError(f"pilot: system {a!r} is not in the judgements. Available: {', '.join(systems)}")
    mine = (low == a) | (high == a)
    won = winners(pairs)
    decided = mine & won.isin(pd.concat([pairs["system"], pairs["system_b"]]).unique())
    kept = pairs[decided]
    out = pd.DataFrame({
        "request": (kept["item_id"] + "|" + low[decided] + "|" + high[decided]).to_numpy(),
        "choice": (won[decided] == a).astype(int).to_numpy(),
    })
    if out.empty:
        raise DataError(f"pilot: no 2afc judgement of '{criterion}' with a preference involving {a!r}")
    tasks = frame[frame["kind"] == "task"]
    timed = pd.to_numeric(tasks["seconds"], errors="coerce")
    per = pd.DataFrame({"p": tasks["participant_id"].to_numpy(), "s": timed.to_numpy()}).groupby("p")["s"]
    sessions = per.agg(["sum", "count"]).to_numpy(dtype=float).reshape(-1, 2)
    return Pilot(out, a, "humeval judgements", timed.dropna().to_numpy(dtype=float), int(len(frame) - len(out)),
                 sessions)


def read_pilot(path: str | Path, *, system_a: str = "", criterion: str = "", request: str = "request",
               choice: str = "choice") -> Pilot:
    """Read a pilot: humeval's exported judgements (JSONL, CSV or Parquet with the judgements columns),
    an AMT batch CSV, or a CSV with ``request`` and ``choice`` (A/B or 1/0) columns."""
    from humeval.data.readers import read_table

    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: pilot file not found")
    head = read_table(p)
    if "Answer.Selection.label" in head.columns:
        from humeval.data.dhe import read_amt_batch

        batch = read_amt_batch(p)
        a = system_a or batch.first_model1
        if a not in batch.models:
            raise DataError(f"--system-a {a!r} is not in {p.name}. Available: {', '.join(batch.models)}")
        frame = pd.DataFrame({"request": batch.frame["pair"], "choice": (batch.frame["chosen"] == a).astype(int)})
        return Pilot(frame, a, "AMT batch")
    if {"participant_id", "task_id", "system_b", "choice"} <= set(head.columns):
        from humeval.judgements import read_judgements

        return pilot_from_judgements(read_judgements(p), system_a=system_a, criterion=criterion)
    for col in (request, choice):
        if col not in head.columns:
            raise DataError(f"{p}: pilot data has no column {col!r} and is not humeval's judgements file "
                            f"(columns: {', '.join(map(str, head.columns))})")
    return Pilot(head.rename(columns={request: "request", choice: "choice"})[["request", "choice"]], system_a or "A", "CSV")


def _moments(s: np.ndarray, r: np.ndarray, c_mean: float) -> tuple[np.ndarray, np.ndarray]:
    """mu and var from per-request sums s (of x) and counts r; works on (..., requests) arrays."""
    m1 = s.sum(axis=-1) / r.sum(axis=-1)
    pairs = r * (r - 1)
    m2 = (s**2 - r).sum(axis=-1) / np.maximum(pairs.sum(axis=-1), 1)
    mu = m1 / c_mean
    var = np.maximum(m2 / c_mean**2 - mu**2, 0.0)
    return mu, var


def fit_pilot(frame: pd.DataFrame, *, request: str = "request", choice: str = "choice",
              capability: tuple[float, float] = (0.8, 1.0), difficulty_var: float | None = None,
              seed: int = 21, resamples: int = 2000) -> PilotFit:
    """Fit mu and var of the difficulty distribution from pilot judgements (long frame)."""
    for col in (request, choice):
        if col not in frame.columns:
            raise DataError(f"pilot data has no column {col!r}; columns: {', '.join(map(str, frame.columns))}")
    ch = frame[choice]
    if ch.dtype == object or str(ch.dtype).startswith("str"):
        mapped = ch.map({"A": 1, "B": 0, "a": 1, "b": 0, "1": 1, "0": 0})
    else:
        mapped = ch
    if mapped.isna().any() or not mapped.isin([0, 1]).all():
        bad = ch[mapped.isna() | ~mapped.isin([0, 1])].iloc[0]
        raise DataError(f"pilot column {choice!r} must hold A/B or 1/0, got {bad!r}")
    lo, hi = capability
    c_mean = (lo + hi) / 2
    if c_mean <= 0:
        raise DataError(f"capability range {capability!r} has mean 0: difficulty cannot be fitted")
    x = 2 * mapped.to_numpy(dtype=float) - 1
    g = pd.DataFrame({"r": frame[request].to_numpy(), "x": x}).groupby("r")["x"]
    s = g.sum().to_numpy()
    r = g.size().to_numpy().astype(float)
    multi = (r >= 2).any()
    if difficulty_var is None and not multi:
        raise DataError("every request has one judgement: the variance of the items' difficulty is not identified; "
                        "give it (--difficulty-var V in `humeval plan` and `humeval budget`; 0: items of equal "
                        "difficulty), or pilot some items more than once")
    mu, var = _moments(s, r, c_mean)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, s.size, (resamples, s.size))
    mus, vars_ = _moments(s[idx], r[idx], c_mean)
    if difficulty_var is not None:
        var = np.asarray(float(difficulty_var))
        vars_ = np.full_like(vars_, var)
    q = (0.025, 0.975)
    return PilotFit(
        mu=float(mu), mu_ci=tuple(float(v) for v in np.quantile(mus, q)),  # type: ignore[arg-type]
        difficulty_var=float(var), var_ci=tuple(float(v) for v in np.quantile(vars_, q)),  # type: ignore[arg-type]
        capability=(float(lo), float(hi)), share_for_a=float((x.mean() + 1) / 2),
        requests=int(s.size), judgements=int(x.size),
    )


def predict_effort(fit: PilotFit, strategies: Sequence[str], deltas: Sequence[float], *, rule: str = "anytime",
                   n_requests: int = 5000, iterations: int = 200, workers: int = 100, seed: int = 21,
                   processes: int = 1) -> list[StrategyResult]:
    """Simulated effort per strategy and delta at the fitted difficulty distribution."""
    base = SimulationConfig(mu=float(np.clip(fit.mu, -1, 1)), difficulty_var=fit.difficulty_var,
                            capability=fit.capability, workers=workers, n_requests=n_requests,
                            iterations=iterations, delta=float(deltas[0]))
    out: list[StrategyResult] = []
    for d in deltas:
        out += simulate(replace(base, delta=float(d)), strategies, (rule,), seed, processes).results
    return out
