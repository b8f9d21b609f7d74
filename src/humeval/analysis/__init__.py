"""The back half of a study: collation, exclusion, the preregistered analysis plan, post hoc analyses.

Collected judgements come from ``results/judgements.jsonl`` (written by ``humeval export``
or a platform import). See :mod:`humeval.analysis.workspace` for every file written.

Importing ``humeval.analysis`` defines names only; each is imported from its module on first
use (PEP 562), so a server process that needs one helper does not import the whole back half.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from humeval.lazy import lazy_exports

_EXPORTS = {
    "Collation": "humeval.analysis.collate",
    "collate": "humeval.analysis.collate",
    "rerun_lists": "humeval.analysis.collate",
    "write_rerun": "humeval.analysis.collate",
    "exclusion_counts": "humeval.judgements.exclusion",
    "exclusions": "humeval.judgements.exclusion",
    "valid_judgements": "humeval.judgements.exclusion",
    "analysis_signature": "humeval.analysis.plan",
    "analyze": "humeval.analysis.plan",
    "write_results": "humeval.analysis.plan",
    "posthoc": "humeval.analysis.posthoc",
    "caveats": "humeval.analysis.status",
    "workspace_caveats": "humeval.analysis.status",
    "invalid_reasons": "humeval.analysis.validity",
    "Workspace": "humeval.analysis.workspace",
}

__all__ = [
    "Collation",
    "Workspace",
    "analysis_signature",
    "analyze",
    "caveats",
    "collate",
    "exclusion_counts",
    "exclusions",
    "invalid_reasons",
    "posthoc",
    "rerun_lists",
    "valid_judgements",
    "workspace_caveats",
    "write_rerun",
    "write_results",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from humeval.analysis.collate import Collation, collate, rerun_lists, write_rerun
    from humeval.analysis.plan import analysis_signature, analyze, write_results
    from humeval.analysis.posthoc import posthoc
    from humeval.analysis.status import caveats, workspace_caveats
    from humeval.analysis.validity import invalid_reasons
    from humeval.analysis.workspace import Workspace
    from humeval.judgements.exclusion import exclusion_counts, exclusions, valid_judgements
