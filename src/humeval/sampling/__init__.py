"""Subset selection: which items are evaluated.

Samplers (``SAMPLERS``): ``all``, ``random``, ``stratified``, ``systematic``, ``heuristic``,
``balanced``, ``casf`` and the CASF ablations ``8m``, ``sm``, ``ol``, and ``casf-faithful`` (CASF as
the authors' code runs it, for reproducing their paper). Each is a small frozen
dataclass with a ``choose`` step per phase; :func:`get_sampler` builds one from the
protocol's ``sampling.method`` and ``sampling.params``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from humeval.errors import ProtocolError, did_you_mean
from humeval.lazy import lazy_exports

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


class _Samplers(Mapping[str, type]):
    """Sampler name -> class; a class (and its module's imports) is loaded when it is looked up."""

    def __init__(self, classes: dict[str, str]) -> None:
        self._classes = classes

    def __getitem__(self, name: str) -> type:
        return __getattr__(self._classes[name])

    def __contains__(self, name: object) -> bool:  # a name is known without importing its class
        return name in self._classes

    def __iter__(self) -> Iterator[str]:
        return iter(self._classes)

    def __len__(self) -> int:
        return len(self._classes)

    def __repr__(self) -> str:
        return f"SAMPLERS({', '.join(self._classes)})"


#: what ``auto`` selects below rate 1 when the protocol declares no item properties: random.
#: No method beats the random distribution when it is chosen without the data set it is scored
#: on (leave one data set out over the seven shared sets; docs/sampling.md, "Which method wins where").
DEFAULT_METHOD = "random"

_CLASSES = {
    "all": "AllItems",
    "random": "RandomSampler",
    "stratified": "StratifiedSampler",
    "systematic": "SystematicSampler",
    "heuristic": "HeuristicSampler",
    "balanced": "BalancedSampler",
    "casf": "CASFSampler",
    "casf-faithful": "FaithfulCASFSampler",
    "8m": "EightMetricSampler",
    "sm": "SingleMetricSampler",
    "ol": "OnlineSampler",
}
_CLASSES["auto"] = _CLASSES[DEFAULT_METHOD]
#: sampler name -> class (``auto`` is :data:`DEFAULT_METHOD`'s class)
SAMPLERS: Mapping[str, type] = _Samplers(_CLASSES)


def resolve_method(method: str, rate: float, properties: Sequence[str] = ()) -> str:
    """``auto``: every item at rate 1 (nothing to choose); below it ``stratified`` by the declared
    item ``properties`` (``data.properties``) when there are any, else :data:`DEFAULT_METHOD`."""
    if method != "auto":
        return method
    if rate >= 1:
        return "all"
    return "stratified" if properties else DEFAULT_METHOD


#: keys of ``sampling.params`` read by the sample stage, not by the sampler
RESERVED_PARAMS = ("scores_file", "metrics")


def get_sampler(name: str, **params: Any) -> Sampler:
    """The sampler called ``name`` built with ``params`` (lists become tuples).

    ``auto`` is :data:`DEFAULT_METHOD`; the stage-level keys ``RESERVED_PARAMS`` are ignored.
    """
    params = {k: v for k, v in params.items() if k not in RESERVED_PARAMS}
    if name not in SAMPLERS:
        raise ProtocolError(f"sampling.method: unknown sampler '{name}'. {did_you_mean(name, SAMPLERS)}")
    cls = SAMPLERS[name]
    fields = getattr(cls, "__dataclass_fields__", {})
    unknown = [k for k in params if k not in fields or k == "name"]
    if unknown:
        valid = [f for f in fields if f != "name"]
        raise ProtocolError(
            f"sampling.params: sampler '{name}' has no parameter '{unknown[0]}'. {did_you_mean(unknown[0], valid)}"
        )
    clean = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
    return cls(**clean)


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
