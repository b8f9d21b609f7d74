"""Bootstrap resampling as weight matrices, so statistics re-aggregate instead of re-running."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = ["percentile_ci", "resample_weights"]

_MAX_CELLS = 4_000_000  # entries per weight block (32 MB of float64)


def resample_weights(rng: np.random.Generator, n: int, n_boot: int) -> Iterator[np.ndarray]:
    """Yield blocks of a ``(n_boot, n)`` matrix of bootstrap counts (each row sums to ``n``).

    Row ``b`` says how often each of the ``n`` units appears in bootstrap sample ``b``
    (``n`` indices drawn uniformly with replacement, then counted: a multinomial draw).
    Blocks keep memory bounded; the stream is deterministic for a given generator.
    """
    rows = max(1, _MAX_CELLS // max(n, 1))
    done = 0
    while done < n_boot:
        size = min(rows, n_boot - done)
        draws = rng.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]
        yield np.bincount(draws.ravel(), minlength=size * n).reshape(size, n).astype(float)
        done += size


def percentile_ci(samples: np.ndarray, confidence_level: float) -> tuple[float, float, int]:
    """Percentile interval of the finite ``samples``; returns ``(low, high, n_finite)``."""
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return float("nan"), float("nan"), 0
    tail = (1.0 - confidence_level) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high), int(finite.size)
