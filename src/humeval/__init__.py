"""humeval: human evaluation of text-generation systems, as code.

The public API is small: :class:`Study` (``Study.open(d)``, then ``.validate()``, ``.lock()``, ``.run()``,
``.serve()``, ``.results()``, ``.budget()``, ``.rehearse()``...), the :class:`Protocol` it reads, the
:class:`Results` it writes, the errors, and the stages. Platforms live in their subpackages
(:mod:`humeval.platforms.prolific`), planning in its modules (:mod:`humeval.costs` for the budget,
:mod:`humeval.simulate` for the pilot, :mod:`humeval.report.prereg` for the preregistration).

Importing humeval does nothing but define names: each name is imported from its module on first use
(PEP 562), so ``import humeval.store`` or ``humeval --version`` do not pay for pandas or SciPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from humeval._version import __version__
from humeval.lazy import lazy_exports

_EXPORTS = {
    "Study": "humeval.api",
    "init_study": "humeval.templates",
    "validate_study": "humeval.validate",
    "Protocol": "humeval.protocol",
    "Results": "humeval.results",
    "HumevalError": "humeval.errors",
    "ProtocolError": "humeval.errors",
    "DataError": "humeval.errors",
    "StoreError": "humeval.errors",
    "PlatformError": "humeval.errors",
    "STAGES": "humeval.pipeline",
    "PRE_COLLECTION": "humeval.pipeline",
    "StageResult": "humeval.pipeline",
    "run": "humeval.pipeline",
    "run_stage": "humeval.pipeline",
    "serve": "humeval.collect",
    "demo": "humeval.demo",
}

__all__ = [
    "PRE_COLLECTION",
    "STAGES",
    "DataError",
    "HumevalError",
    "PlatformError",
    "Protocol",
    "ProtocolError",
    "Results",
    "StageResult",
    "StoreError",
    "Study",
    "__version__",
    "demo",
    "init_study",
    "run",
    "run_stage",
    "serve",
    "validate_study",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from humeval.api import Study
    from humeval.collect import serve
    from humeval.demo import demo
    from humeval.errors import DataError, HumevalError, PlatformError, ProtocolError, StoreError
    from humeval.pipeline import PRE_COLLECTION, STAGES, StageResult, run, run_stage
    from humeval.protocol import Protocol
    from humeval.results import Results
    from humeval.templates import init_study
    from humeval.validate import validate_study
