"""humeval: human evaluation of text-generation systems, as code.

The public API. Importing humeval does nothing but define names: each name is imported
from its module on first use (PEP 562), so ``import humeval.store`` or ``humeval
--version`` do not pay for pandas or SciPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from humeval._version import __version__
from humeval.lazy import lazy_exports

_EXPORTS = {
    "HumevalError": "humeval.errors",
    "ProtocolError": "humeval.errors",
    "DataError": "humeval.errors",
    "StoreError": "humeval.errors",
    "PlatformError": "humeval.errors",
    "PRE_COLLECTION": "humeval.pipeline",
    "STAGES": "humeval.pipeline",
    "StageOutput": "humeval.stage",
    "prepare_collection": "humeval.pipeline",
    "serve": "humeval.collect",
    "StageResult": "humeval.pipeline",
    "run": "humeval.pipeline",
    "run_stage": "humeval.pipeline",
    "judge": "humeval.pipeline",
    "export_batch": "humeval.pipeline",
    "export_judgements": "humeval.pipeline",
    "import_judgements": "humeval.pipeline",
    "Protocol": "humeval.protocol",
    "load_protocol": "humeval.protocol",
    "parse_protocol": "humeval.protocol",
    "signature": "humeval.protocol",
    "check_lock": "humeval.lock",
    "lock_study": "humeval.lock",
    "read_lock": "humeval.lock",
    "release_lock": "humeval.lock",
    "Study": "humeval.study",
    "Results": "humeval.results",
    "init_study": "humeval.templates",
    "demo": "humeval.demo",
    "DemoResult": "humeval.demo",
    "validate_study": "humeval.validate",
    "prolific_create": "humeval.platforms.prolific",
    "prolific_transition": "humeval.platforms.prolific",
    "prolific_status": "humeval.platforms.prolific",
    "prolific_review": "humeval.platforms.prolific",
    "prolific_bonus": "humeval.platforms.prolific",
    "launch_budget": "humeval.platforms.prolific",
    "ProlificClient": "humeval.platforms.prolific",
    "Budget": "humeval.costs",
    "budget": "humeval.costs",
    "Preregistration": "humeval.report.prereg",
    "prereg": "humeval.report.prereg",
    "Pilot": "humeval.simulate.plan",
    "read_pilot": "humeval.simulate.plan",
}

__all__ = [
    "PRE_COLLECTION",
    "STAGES",
    "Budget",
    "DataError",
    "DemoResult",
    "HumevalError",
    "Pilot",
    "PlatformError",
    "Preregistration",
    "ProlificClient",
    "Protocol",
    "ProtocolError",
    "Results",
    "StageOutput",
    "StageResult",
    "StoreError",
    "Study",
    "__version__",
    "budget",
    "check_lock",
    "demo",
    "export_batch",
    "export_judgements",
    "import_judgements",
    "init_study",
    "judge",
    "launch_budget",
    "load_protocol",
    "lock_study",
    "parse_protocol",
    "prepare_collection",
    "prereg",
    "prolific_bonus",
    "prolific_create",
    "prolific_review",
    "prolific_status",
    "prolific_transition",
    "read_lock",
    "read_pilot",
    "release_lock",
    "run",
    "run_stage",
    "serve",
    "signature",
    "validate_study",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from humeval.collect import serve
    from humeval.costs import Budget, budget
    from humeval.demo import DemoResult, demo
    from humeval.errors import DataError, HumevalError, PlatformError, ProtocolError, StoreError
    from humeval.lock import check_lock, lock_study, read_lock, release_lock
    from humeval.pipeline import (
        PRE_COLLECTION,
        STAGES,
        StageResult,
        export_batch,
        export_judgements,
        import_judgements,
        prepare_collection,
        run,
        run_stage,
    )
    from humeval.platforms.prolific import (
        ProlificClient,
        launch_budget,
        prolific_bonus,
        prolific_create,
        prolific_review,
        prolific_status,
        prolific_transition,
    )
    from humeval.protocol import Protocol, load_protocol, parse_protocol, signature
    from humeval.report.prereg import Preregistration, prereg
    from humeval.results import Results
    from humeval.simulate.plan import Pilot, read_pilot
    from humeval.stage import StageOutput
    from humeval.study import Study
    from humeval.templates import init_study
    from humeval.validate import validate_study
