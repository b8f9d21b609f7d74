"""humeval: human evaluation of text-generation systems, as code.

The public API. Importing humeval does nothing but define names; heavy modules
(statistics, server, metrics) are imported from their own subpackages.
"""

from humeval._version import __version__
from humeval.errors import DataError, HumevalError, PlatformError, ProtocolError, StoreError
from humeval.pipeline import PRE_COLLECTION, STAGES, StageOutput, StageResult, run, run_stage
from humeval.protocol import Protocol, load_protocol, parse_protocol, signature
from humeval.protocol.lock import check_lock, lock_study, read_lock, release_lock
from humeval.study import Study
from humeval.templates import init_study
from humeval.validate import validate_study

__all__ = [
    "PRE_COLLECTION",
    "STAGES",
    "DataError",
    "HumevalError",
    "PlatformError",
    "Protocol",
    "ProtocolError",
    "StageOutput",
    "StageResult",
    "Study",
    "StoreError",
    "__version__",
    "check_lock",
    "init_study",
    "load_protocol",
    "lock_study",
    "parse_protocol",
    "read_lock",
    "release_lock",
    "run",
    "run_stage",
    "signature",
    "validate_study",
]
