"""Subset selection: which items are evaluated.

Samplers (the registry :data:`SAMPLERS`, :mod:`humeval.sampling.registry`): each is a small frozen
dataclass with a ``choose`` step per phase; :func:`get_sampler` builds one from the
protocol's ``sampling.method`` and ``sampling.params``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from humeval.lazy import lazy_exports
from humeval.sampling.registry import (
    DEFAULT_METHOD,
    RESERVED_PARAMS,
    SAMPLERS,
    get_sampler,
    resolve_method,
)

# name -> module holding it: imported on first use (PEP 562), so naming or validating a sampler does
# not import what running another one needs (SciPy and scikit-learn for CASF, pandas for the tables)
_EXPORTS = {
    "BalancedSampler": "humeval.sampling.balanced",
    "Sampler": "humeval.sampling.base",
    "SamplerBase": "humeval.sampling.base",
    "Selection": "humeval.sampling.base",
    "check_rate": "humeval.sampling.base",
    "run_phases": "humeval.sampling.base",
    "sample_size": "humeval.sampling.base",
    "to_selection": "humeval.sampling.base",
    "CASFSampler": "humeval.sampling.casf",
    "EightMetricSampler": "humeval.sampling.casf",
    "OnlineSampler": "humeval.sampling.casf",
    "SingleMetricSampler": "humeval.sampling.casf",
    "FaithfulCASFSampler": "humeval.sampling.faithful",
    "HeuristicSampler": "humeval.sampling.heuristic",
    "AllItems": "humeval.sampling.simple",
    "RandomSampler": "humeval.sampling.simple",
    "StratifiedSampler": "humeval.sampling.stratified",
    "SystematicSampler": "humeval.sampling.systematic",
    "ItemTable": "humeval.sampling.table",
    "as_item_table": "humeval.sampling.table",
}

__all__ = [
    "DEFAULT_METHOD",
    "RESERVED_PARAMS",
    "SAMPLERS",
    "AllItems",
    "BalancedSampler",
    "CASFSampler",
    "EightMetricSampler",
    "FaithfulCASFSampler",
    "HeuristicSampler",
    "ItemTable",
    "OnlineSampler",
    "RandomSampler",
    "Sampler",
    "SamplerBase",
    "Selection",
    "SingleMetricSampler",
    "StratifiedSampler",
    "SystematicSampler",
    "as_item_table",
    "check_rate",
    "get_sampler",
    "resolve_method",
    "run_phases",
    "sample_size",
    "to_selection",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from humeval.sampling.balanced import BalancedSampler
    from humeval.sampling.base import (
        Sampler,
        SamplerBase,
        Selection,
        check_rate,
        run_phases,
        sample_size,
        to_selection,
    )
    from humeval.sampling.casf import (
        CASFSampler,
        EightMetricSampler,
        OnlineSampler,
        SingleMetricSampler,
    )
    from humeval.sampling.faithful import FaithfulCASFSampler
    from humeval.sampling.heuristic import HeuristicSampler
    from humeval.sampling.simple import AllItems, RandomSampler
    from humeval.sampling.stratified import StratifiedSampler
    from humeval.sampling.systematic import SystematicSampler
    from humeval.sampling.table import ItemTable, as_item_table
