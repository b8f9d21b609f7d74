"""Bootstrap resampling as weight matrices, so statistics re-aggregate instead of re-running, and the one rule
that decides whether a bootstrap interval can be reported."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = ["no_interval", "percentile_ci", "resample_weights", "signable"]

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


def signable(estimate: float, low: float, high: float, *, undefined: int = 0, total: int = 0,
             confidence_level: float = 0.95) -> str | None:
    """Why the bootstrap interval ``[low, high]`` of ``estimate`` cannot be reported, or ``None`` when it can.

    A percentile interval is only as good as the spread of the resampled statistic. It is refused (the
    caller reports "not enough data" instead of numbers) when

    * more than ``1 - confidence_level`` of the ``total`` resamples had no value (``undefined``, e.g. no
      variation, or ratings that do not exist): the interval would be the one of the resamples that
      happened to be defined, and conditioning on that can hide a whole tail (a 1-1 split of two
      battles gives Bradley-Terry [1000, 1000] from the one resample shape with finite ratings);
    * it has zero width: the central ``confidence_level`` of the resamples take one value, so the data
      have too few distinct values to show any uncertainty;
    * the estimate is not strictly inside it: the resampling distribution is so discrete that the
      estimate is itself an end (Krippendorff's alpha 0 with [-0.22, 0] from six pairable items).

    With continuous data and a few dozen units none of these happen, so the rule only ever removes
    intervals that a reader would take for more certainty than the data hold.
    """
    if total and undefined > (1.0 - confidence_level) * total:
        return (f"not enough data: {undefined} of {total} resamples have no value, so a bootstrap interval "
                "would hide a tail")
    if not (np.isfinite(low) and np.isfinite(high)):
        return "not enough data for a bootstrap interval"
    if not low < high:
        return (f"not enough data: the central {100 * confidence_level:g}% of the resamples all give {low:.4g}, "
                "so the data show no spread")
    if not (np.isfinite(estimate) and low < estimate < high):
        return (f"not enough data: the estimate {estimate:.4g} is an end of its bootstrap interval "
                f"[{low:.4g}, {high:.4g}] (too few distinct resamples)")
    return None


def percentile_ci(samples: np.ndarray, confidence_level: float,
                  estimate: float | None = None) -> tuple[float, float, int, str | None]:
    """Percentile interval of the finite ``samples``: ``(low, high, n_finite, reason)``.

    With ``estimate``, the interval passes :func:`signable` first: when it fails, ``low`` and ``high`` are
    ``nan`` and ``reason`` says why ("not enough data: ..."); otherwise ``reason`` is ``None``.
    """
    samples = np.asarray(samples, dtype=float)
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return float("nan"), float("nan"), 0, ("not enough data: no resample has a value" if estimate is not None
                                               else None)
    tail = (1.0 - confidence_level) / 2.0 * 100.0
    low, high = (float(v) for v in np.percentile(finite, [tail, 100.0 - tail]))
    reason = None
    if estimate is not None:
        reason = signable(estimate, low, high, undefined=samples.size - finite.size, total=samples.size,
                          confidence_level=confidence_level)
    if reason is not None:
        low = high = float("nan")
    return low, high, int(finite.size), reason


def no_interval(reason: str | None) -> dict[str, str]:
    """The ``extra`` entry of an estimate whose interval was refused (empty when it was not)."""
    return {} if reason is None else {"no_interval": reason}
