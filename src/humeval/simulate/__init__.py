"""Effort simulation of pairwise human evaluation: synthetic workers, labelling strategies, stopping rules.

(Rehearsals and dry runs, which push synthetic participants through the real pipeline, are
:mod:`humeval.rehearsal`.)

``simulate(config, strategies, rules, seed)`` returns effort with 99% bootstrap CIs per
strategy and rule; ``simulate_many`` runs a grid in parallel; ``resample_collected``
re-analyses collected judgements (the paper's Table 6); ``fit_pilot`` /
``predict_effort`` plan a study from a pilot; ``simulate_best_arm`` covers K > 2 systems;
``simulate_served_pair`` / ``simulate_served_goal`` run a rule on a finite set of items in the
design's serving order (or in file order); ``simulate_crowd`` simulates sessions and arrivals
(places, money and wall time of dynamic stopping with a crowd) with a crowd read by ``read_crowd``
(a crowd file or an AMT batch) or the default shape ``fit_crowd`` fitted to the AMT batches.

Importing ``humeval.simulate`` defines names only; each is imported from its module on first
use (PEP 562), so ``humeval simulate`` pays only for what it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from humeval.lazy import lazy_exports

_EXPORTS = {
    "BestArmResult": "humeval.simulate.best_arm",
    "simulate_best_arm": "humeval.simulate.best_arm",
    "SimulationConfig": "humeval.simulate.config",
    "OrderResult": "humeval.simulate.order",
    "simulate_served_goal": "humeval.simulate.order",
    "simulate_served_pair": "humeval.simulate.order",
    "Crowd": "humeval.simulate.arrivals",
    "CrowdShape": "humeval.simulate.arrivals",
    "fit_crowd": "humeval.simulate.arrivals",
    "read_crowd": "humeval.simulate.arrivals",
    "CrowdResult": "humeval.simulate.crowd",
    "simulate_crowd": "humeval.simulate.crowd",
    "Pilot": "humeval.simulate.plan",
    "PilotFit": "humeval.simulate.plan",
    "read_pilot": "humeval.simulate.plan",
    "fit_pilot": "humeval.simulate.plan",
    "predict_effort": "humeval.simulate.plan",
    "plot_bound": "humeval.simulate.plots",
    "plot_effort": "humeval.simulate.plots",
    "WorkerPool": "humeval.simulate.population",
    "draw_difficulties": "humeval.simulate.population",
    "legacy_parity_inputs": "humeval.simulate.population",
    "make_pool": "humeval.simulate.population",
    "ResampleResult": "humeval.simulate.resample",
    "resample_collected": "humeval.simulate.resample",
    "SimulationReport": "humeval.simulate.results",
    "StrategyResult": "humeval.simulate.results",
    "DEFAULT_RULES": "humeval.simulate.run",
    "DEFAULT_STRATEGIES": "humeval.simulate.run",
    "simulate": "humeval.simulate.run",
    "simulate_many": "humeval.simulate.run",
    "expected_difficulty": "humeval.simulate.theory",
    "kl_half": "humeval.simulate.theory",
    "one_worker_share": "humeval.simulate.theory",
    "wald_bound": "humeval.simulate.theory",
}

__all__ = [
    "DEFAULT_RULES",
    "DEFAULT_STRATEGIES",
    "BestArmResult",
    "Crowd",
    "CrowdResult",
    "CrowdShape",
    "OrderResult",
    "Pilot",
    "PilotFit",
    "ResampleResult",
    "SimulationConfig",
    "SimulationReport",
    "StrategyResult",
    "WorkerPool",
    "draw_difficulties",
    "expected_difficulty",
    "fit_crowd",
    "fit_pilot",
    "kl_half",
    "legacy_parity_inputs",
    "make_pool",
    "one_worker_share",
    "plot_bound",
    "plot_effort",
    "predict_effort",
    "read_crowd",
    "read_pilot",
    "resample_collected",
    "simulate",
    "simulate_best_arm",
    "simulate_crowd",
    "simulate_many",
    "simulate_served_goal",
    "simulate_served_pair",
    "wald_bound",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from humeval.simulate.arrivals import Crowd, CrowdShape, fit_crowd, read_crowd
    from humeval.simulate.best_arm import BestArmResult, simulate_best_arm
    from humeval.simulate.config import SimulationConfig
    from humeval.simulate.crowd import CrowdResult, simulate_crowd
    from humeval.simulate.order import OrderResult, simulate_served_goal, simulate_served_pair
    from humeval.simulate.plan import Pilot, PilotFit, fit_pilot, predict_effort, read_pilot
    from humeval.simulate.plots import plot_bound, plot_effort
    from humeval.simulate.population import (
        WorkerPool,
        draw_difficulties,
        legacy_parity_inputs,
        make_pool,
    )
    from humeval.simulate.resample import ResampleResult, resample_collected
    from humeval.simulate.results import SimulationReport, StrategyResult
    from humeval.simulate.run import DEFAULT_RULES, DEFAULT_STRATEGIES, simulate, simulate_many
    from humeval.simulate.theory import expected_difficulty, kl_half, one_worker_share, wald_bound
