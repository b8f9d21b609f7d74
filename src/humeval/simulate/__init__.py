"""Effort simulation of pairwise human evaluation: synthetic workers, labelling strategies, stopping rules.

(Rehearsals and dry runs, which push synthetic participants through the real pipeline, are
:mod:`humeval.rehearsal`.)

``simulate(config, strategies, rules, seed)`` returns effort with 99% bootstrap CIs per
strategy and rule; ``simulate_many`` runs a grid in parallel; ``resample_collected``
re-analyses collected judgements (the paper's Table 6); ``fit_pilot`` /
``predict_effort`` plan a study from a pilot; ``simulate_best_arm`` covers K > 2 systems.
"""

from humeval.simulate.best_arm import BestArmResult, simulate_best_arm
from humeval.simulate.config import SimulationConfig
from humeval.simulate.plan import PilotFit, fit_pilot, predict_effort
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

__all__ = [
    "DEFAULT_RULES",
    "DEFAULT_STRATEGIES",
    "BestArmResult",
    "PilotFit",
    "ResampleResult",
    "SimulationConfig",
    "SimulationReport",
    "StrategyResult",
    "WorkerPool",
    "draw_difficulties",
    "expected_difficulty",
    "fit_pilot",
    "kl_half",
    "legacy_parity_inputs",
    "make_pool",
    "one_worker_share",
    "plot_bound",
    "plot_effort",
    "predict_effort",
    "resample_collected",
    "simulate",
    "simulate_best_arm",
    "simulate_many",
    "wald_bound",
]
