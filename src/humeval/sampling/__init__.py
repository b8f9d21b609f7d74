"""Subset selection: which items are evaluated."""

from __future__ import annotations

from typing import Any

from humeval.errors import ProtocolError, did_you_mean
from humeval.sampling.base import Sampler, Selection, sample_size
from humeval.sampling.simple import AllItems, RandomSampler

__all__ = ["SAMPLERS", "AllItems", "RandomSampler", "Sampler", "Selection", "get_sampler", "sample_size"]

SAMPLERS: dict[str, type] = {"all": AllItems, "random": RandomSampler}


def get_sampler(name: str, **params: Any) -> Sampler:
    """The sampler called ``name`` built with ``params``."""
    if name not in SAMPLERS:
        raise ProtocolError(f"sampling.method: unknown sampler '{name}'. {did_you_mean(name, SAMPLERS)}")
    try:
        return SAMPLERS[name](**params)
    except TypeError as exc:
        raise ProtocolError(f"sampling.params: invalid parameters for sampler '{name}': {exc}") from None
