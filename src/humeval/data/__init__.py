"""Items, systems and outputs: readers with validation, and importers for reference data sets.

Names are imported from their module on first use (PEP 562): ``humeval.data.columns`` and
``humeval.data.judges`` do not import pandas through this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from humeval.lazy import lazy_exports

_EXPORTS = {
    "OUTPUT_COLUMNS": "humeval.data.outputs",
    "check_outputs": "humeval.data.outputs",
    "load_outputs": "humeval.data.outputs",
    "read_outputs": "humeval.data.outputs",
    "read_table": "humeval.data.readers",
    "require_columns": "humeval.data.readers",
}

__all__ = [
    "OUTPUT_COLUMNS",
    "check_outputs",
    "load_outputs",
    "read_outputs",
    "read_table",
    "require_columns",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from humeval.data.outputs import OUTPUT_COLUMNS, check_outputs, load_outputs, read_outputs
    from humeval.data.readers import read_table, require_columns
