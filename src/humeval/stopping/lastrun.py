"""``hoeffding-lastrun``: the authors' code semantics, only for reproducing their tables.

NOT A VALID STOPPING RULE. The released analysis code of Thorleiksdottir et al. (2022)
(``get_threshold`` / ``get_decision``) scans the whole path up to a fixed horizon H and
returns the start of the *final* run of requests with X̄_n - t_n > 1/2 and X̄_n > 1/2 that
lasts until H (a run is broken when X̄_n - t_n < 1/2), with t_n = sqrt(ln(1/delta)/(2n)).
The decision at n therefore depends on outcomes after n (it looks into the future), it is
not a stopping time, and its error is not controlled. With ``two_sided=False`` (their
simulation, Table 3) only A can be decided; with ``two_sided=True`` (their re-analysis
of the AMT data, Table 6) the upper bound is scanned the same way when no A-run exists.
A path without a final run is undecided (n = 0).

Reference: Thorleiksdottir et al. (2022), released code ``simulated-evaluation/plot_functions.py``
and ``human-evaluation/shared_functions.py`` (commit 3777eb8).
Checked against: a per-element Python transcription of that scan in
tests/unit/stopping/test_lastrun.py; Table 3 / Table 6 reproductions (humeval reproduce dhe-*).
"""

from __future__ import annotations

import numpy as np

from humeval.errors import HumevalError
from humeval.stopping._validate import check_delta, check_outcome
from humeval.stopping.decision import Decision, PathDecisions
from humeval.stopping.hoeffding import hoeffding_radius

__all__ = ["LastRunRule"]


def _final_run_start(cond: np.ndarray, reset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First index with ``cond`` after the last ``reset`` index, per row (-1: none)."""
    h = cond.shape[1]
    idx = np.arange(h)
    last_reset = np.where(reset, idx, -1).max(axis=1)
    ok = cond & (idx > last_reset[:, None])
    found = ok.any(axis=1)
    return found, ok.argmax(axis=1)


class LastRunRule:
    """The authors' look-ahead decision (not anytime-valid, not a stopping time)."""

    name = "hoeffding-lastrun"

    def __init__(self, delta: float, horizon: int | None = None, *, two_sided: bool = False) -> None:
        self.delta = check_delta(delta)
        if horizon is not None and (int(horizon) != horizon or horizon < 1):
            raise HumevalError(f"horizon must be a positive integer, got {horizon!r}")
        self.horizon = None if horizon is None else int(horizon)
        self.two_sided = bool(two_sided)
        self.reset()

    def reset(self) -> None:
        self._outcomes: list[int] = []
        self._final: Decision | None = None

    def decide_paths(self, successes: np.ndarray) -> PathDecisions:
        s = np.asarray(successes, dtype=float)
        if s.ndim == 1:
            s = s[None, :]
        h = s.shape[1]
        n = np.arange(1, h + 1)
        y = s / n
        t = hoeffding_radius(n, self.delta)
        lower, upper = y - t, y + t
        found_a, start_a = _final_run_start((lower > 0.5) & (y > 0.5), lower < 0.5)
        stop = np.where(found_a, start_a + 1, 0)
        outcome = np.where(found_a, 1, 0).astype(np.int8)
        if self.two_sided:
            found_b, start_b = _final_run_start((upper < 0.5) & (y < 0.5), upper > 0.5)
            use_b = ~found_a & found_b
            stop = np.where(use_b, start_b + 1, stop)
            outcome = np.where(use_b, -1, outcome).astype(np.int8)
        return PathDecisions(n=stop, outcome=outcome)

    def update(self, outcome: object) -> Decision:
        """Collect outcomes; a decision exists only once the horizon is reached."""
        if self.horizon is None:
            raise HumevalError(
                "hoeffding-lastrun needs the horizon (it looks at all outcomes up to it); "
                "it is not a stopping rule: use 'anytime' to decide while collecting"
            )
        if self._final is not None:
            return self._final
        self._outcomes.append(check_outcome(outcome))
        n = len(self._outcomes)
        s = int(np.sum(self._outcomes))
        est = s / n
        t = float(hoeffding_radius(n, self.delta))
        if n < self.horizon:
            return Decision("continue", n, s, est, 0.5 + t, 0.5 - t, est - t, self.name, self.delta,
                            f"look-ahead rule: decides only at the horizon ({n}/{self.horizon})")
        paths = self.decide_paths(np.cumsum(self._outcomes)[None, :])
        k, o = int(paths.n[0]), int(paths.outcome[0])
        label = {1: "A", -1: "B", 0: "continue"}[o]
        reason = (f"final run of the Hoeffding bound beyond 1/2 starts at request {k} of {n} "
                  "(authors' look-ahead semantics; not a valid stopping rule)") if o else (
                  f"no final run at the horizon {n}: undecided")
        self._final = Decision(label, k if o else n, s, est, 0.5 + t, 0.5 - t, est - t,  # type: ignore[arg-type]
                               self.name, self.delta, reason)
        return self._final

    def __repr__(self) -> str:
        return f"LastRunRule(delta={self.delta:g}, horizon={self.horizon}, two_sided={self.two_sided})"
