"""The samplers by name (:data:`SAMPLERS`) and the one function that builds a sampler from the protocol's
``sampling.method`` and ``sampling.params``.

A sampler's class (and its module's imports: SciPy and scikit-learn for CASF, pandas for the
tables) is loaded when it is built, so naming or validating a sampler imports nothing heavy.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from humeval.errors import ProtocolError, did_you_mean
from humeval.registry import Registry

if TYPE_CHECKING:
    from humeval.sampling.base import Sampler

__all__ = ["DEFAULT_METHOD", "RESERVED_PARAMS", "SAMPLERS", "SamplerKind", "get_sampler", "resolve_method"]


@dataclass(frozen=True)
class SamplerKind:
    """A registered sampler: its class, by module and name, and the parameters the docs list."""

    module: str
    cls: str
    #: the ``sampling.params`` it reads, as the docs show them
    parameters: str = "—"

    def load(self) -> type:
        """The sampler class (imports its module)."""
        return getattr(importlib.import_module(f"humeval.sampling.{self.module}"), self.cls)


#: what ``auto`` selects below rate 1 when the protocol declares no item properties: random.
#: No method beats the random distribution when it is chosen without the data set it is scored
#: on (leave one data set out over the seven shared sets; docs/sampling.md, "Which method wins where").
DEFAULT_METHOD = "random"

_CASF = "as `casf`"
#: sampler name -> kind (``auto`` builds :data:`DEFAULT_METHOD`'s class; the stage resolves it first)
SAMPLERS: Registry[SamplerKind] = Registry("sampler", "sampling.method", error=ProtocolError)
SAMPLERS.add("all", SamplerKind("simple", "AllItems"), summary="every item, data order")
SAMPLERS.add("random", SamplerKind("simple", "RandomSampler"), summary="simple random sampling without replacement")
SAMPLERS.add("stratified", SamplerKind(
    "stratified", "StratifiedSampler",
    "`by` (item property columns, `length`, `quality` = preliminary metric summed over systems, or a metric column; "
    "default `[quality]`), `allocation` `proportional` / `equal` / `neyman` (size × spread of the metric's system "
    "contrasts), `bins` (5)"),
    summary="random inside strata; numeric keys cut into equal-frequency bins")
SAMPLERS.add("systematic", SamplerKind(
    "systematic", "SystematicSampler",
    "`key` (none = data order, `length`, `quality`, a property or metric column), `start` `random` / `middle` / `first`"),
    summary="sort by a key (descending), every (N/n)-th item")
SAMPLERS.add("heuristic", SamplerKind("heuristic", "HeuristicSampler",
                                      "`extreme_share` (0.1), `extreme_quantile` (0.1 at each end)"),
             summary="the length heuristic of NLG practice: a few items of extreme mean output length, mostly "
                     "typical ones, drawn at random")
SAMPLERS.add("balanced", SamplerKind("balanced", "BalancedSampler",
                                     "`candidates` (1000), `features` (metric columns), `combine` `all` / `mean`"),
             summary="best of `candidates` random subsets by how well the subset's mean **system contrasts** of the "
                     "metrics (z-scored metric minus the item's mean over systems) match the full set's "
                     "(rerandomisation, Morgan & Rubin 2012; balanced sampling, Deville & Tillé 2004)")
SAMPLERS.add("casf", SamplerKind(
    "casf", "CASFSampler",
    "`phases` (5), `metric`, `features`, `aspects`, `controller`, `redundancy_threshold` (0.5), `start` (`first`), "
    "`preliminary` (`metric` / `mean`), `n_estimators`, `learning_rate`, `max_depth`"),
    summary="Constrained Active Sampling (Ruan et al., AAAI 2024), below")
SAMPLERS.add("8m", SamplerKind("casf", "EightMetricSampler", _CASF),
             summary="CASF ablation: preliminary phase only, sorted by the mean of the z-scored metrics")
SAMPLERS.add("sm", SamplerKind("casf", "SingleMetricSampler", _CASF),
             summary="CASF ablation: preliminary phase only, on one metric")
SAMPLERS.add("ol", SamplerKind("casf", "OnlineSampler", _CASF),
             summary="CASF ablation: CASF without the constrained controller")
SAMPLERS.add("casf-faithful", SamplerKind(
    "faithful", "FaithfulCASFSampler", "`phases` (5), `metric`, `features`, `aspects` (in the order of the authors' "
    "`hmetric_key`)"),
    summary="CASF as the authors' code runs it (`EnablerRx/CASF` e6bd7b9, defects included), to reproduce their "
            "paper; up to 5 000 items")
SAMPLERS.add("auto", SamplerKind("simple", "RandomSampler", "as that method (`by` defaults to the properties)"), summary=(
    "the protocol's default: every item at rate 1; below it `stratified` by `data.properties` when the protocol "
    "declares item properties, else `random` (`humeval.sampling.DEFAULT_METHOD`; see \"Which method wins where\")"))


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

    ``auto`` is :data:`DEFAULT_METHOD`; the stage-level keys ``RESERVED_PARAMS`` are ignored. An
    unknown name or parameter is an error naming the valid ones.
    """
    params = {k: v for k, v in params.items() if k not in RESERVED_PARAMS}
    cls = SAMPLERS.get(name).load()
    fields = getattr(cls, "__dataclass_fields__", {})
    unknown = [k for k in params if k not in fields or k == "name"]
    if unknown:
        valid = [f for f in fields if f != "name"]
        raise ProtocolError(
            f"sampling.params: sampler '{name}' has no parameter '{unknown[0]}'. {did_you_mean(unknown[0], valid)}"
        )
    clean = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
    return cls(**clean)  # type: ignore[no-any-return]
