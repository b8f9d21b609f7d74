"""Items, systems and outputs: readers with validation, and importers for reference data sets."""

from humeval.data.outputs import OUTPUT_COLUMNS, check_outputs, load_outputs, read_outputs
from humeval.data.readers import read_table, require_columns

__all__ = [
    "OUTPUT_COLUMNS",
    "check_outputs",
    "load_outputs",
    "read_outputs",
    "read_table",
    "require_columns",
]
