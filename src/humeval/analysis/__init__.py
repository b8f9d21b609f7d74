"""The back half of a study: collation, exclusion, the preregistered analysis plan, post hoc analyses.

Collected judgements come from ``results/judgements.jsonl`` (written by ``humeval export``
or a platform import). See :mod:`humeval.analysis.workspace` for every file written.
"""

from humeval.analysis.collate import Collation, collate, rerun_lists, write_rerun
from humeval.analysis.exclude import exclusion_counts, exclusions, valid_judgements
from humeval.analysis.plan import analysis_signature, analyze, write_results
from humeval.analysis.posthoc import posthoc
from humeval.analysis.stages import analyze_stage, collate_stage, exclude_stage
from humeval.analysis.validity import invalid_reasons
from humeval.analysis.workspace import Workspace

__all__ = [
    "Collation",
    "Workspace",
    "analysis_signature",
    "analyze",
    "analyze_stage",
    "collate",
    "collate_stage",
    "exclude_stage",
    "exclusion_counts",
    "exclusions",
    "invalid_reasons",
    "posthoc",
    "rerun_lists",
    "valid_judgements",
    "write_rerun",
    "write_results",
]
