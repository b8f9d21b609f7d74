"""The one place where seeds become random generators."""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["Seed", "as_generator", "child_seeds", "stream"]

Seed = int | np.random.Generator | None


def as_generator(seed: Seed) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` for an int seed (or pass a Generator through).

    ``None`` is refused: every random result in humeval must be reproducible, so the
    caller states the seed (the protocol's ``study.seed`` by default).
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        raise ValueError("a seed is required: pass an int (recorded in the logbook) or a Generator")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.default_rng(int(seed))


def stream(seed: int, name: str) -> np.random.Generator:
    """The Generator of the named random stream ``name`` of ``seed``: independent of the seed's other streams
    (``SeedSequence(seed, spawn_key=(crc32(name),))``), so adding a stream changes no other draw."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(zlib.crc32(name.encode()),)))


def child_seeds(seed: int, n: int) -> list[int]:
    """Derive ``n`` independent integer seeds from one (for parallel or per-stage work)."""
    ss = np.random.SeedSequence(int(seed))
    return [int(s.generate_state(1)[0]) for s in ss.spawn(n)]
