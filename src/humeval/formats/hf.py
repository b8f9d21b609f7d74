"""Hugging Face data sets as outputs or judgements (the ``hf`` extra).

:func:`dataset_frame` accepts a ``datasets.Dataset`` (any object with ``to_pandas()``),
or the folder ``Dataset.save_to_disk`` wrote. A folder is read with
``datasets.load_from_disk`` when the ``datasets`` package is installed, and otherwise
straight from its Arrow files with ``pyarrow`` (the folder holds ``state.json``, whose
``_data_files`` list the ``data-XXXXX-of-NNNNN.arrow`` files, Arrow IPC streams, and
``dataset_info.json``); a ``DatasetDict`` folder (``dataset_dict.json``) needs ``split``.

:func:`dataset_outputs` gives the study's long outputs table (the columns of
:data:`humeval.data.OUTPUT_COLUMNS`, named as in the protocol's ``data`` section);
:func:`dataset_judgements` gives judgements (a data set already in humeval's judgement
columns, e.g. one a study pushed to the Hub).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from humeval.errors import DataError
from humeval.extras import require
from humeval.files import read_json

__all__ = ["dataset_frame", "dataset_judgements", "dataset_outputs"]

_FOLDER = ("a folder written by Dataset.save_to_disk (state.json, dataset_info.json and data-*.arrow files) "
           "or DatasetDict.save_to_disk (dataset_dict.json and one such folder per split)")


def _folder_frame(path: Path, split: str | None) -> pd.DataFrame:
    if (path / "dataset_dict.json").is_file():
        listing = read_json(path / "dataset_dict.json", what="DatasetDict listing", hint=f"expected {_FOLDER}")
        splits = listing.get("splits", []) if isinstance(listing, dict) else []
        if split is None or split not in splits:
            raise DataError(f"{path}: a DatasetDict folder; name one split of {', '.join(map(str, splits)) or 'none'}"
                            f"{'' if split is None else f' (got {split!r})'}")
        path = path / split
    state = path / "state.json"
    if not state.is_file():
        raise DataError(f"{path}: no state.json; expected {_FOLDER}")
    try:
        import datasets  # the hf extra, when installed: the library's own reader
    except ImportError:
        datasets = None
    if datasets is not None:
        return datasets.load_from_disk(str(path)).to_pandas()
    require("pyarrow", f"reading {path}")
    import pyarrow as pa

    try:
        files = [f["filename"] for f in read_json(state, what="state.json", hint=f"expected {_FOLDER}")["_data_files"]]
    except (KeyError, TypeError) as exc:
        raise DataError(f"{state}: no readable _data_files list ({exc}); expected {_FOLDER}") from None
    tables = []
    for name in files:
        try:
            with pa.memory_map(str(path / name)) as source:
                tables.append(pa.ipc.open_stream(source).read_all())
        except (OSError, pa.ArrowInvalid) as exc:
            raise DataError(f"{path / name}: not an Arrow stream ({exc}); expected {_FOLDER}") from None
    if not tables:
        raise DataError(f"{state}: _data_files is empty; expected {_FOLDER}")
    return pa.concat_tables(tables).to_pandas()


def dataset_frame(dataset: Any, *, split: str | None = None) -> pd.DataFrame:
    """A ``datasets.Dataset`` (or a split of a ``DatasetDict``), or a ``save_to_disk`` folder, as a DataFrame."""
    if isinstance(dataset, (str, Path)):
        path = Path(dataset)
        if not path.is_dir():
            raise DataError(f"{path}: not a folder; expected {_FOLDER}")
        frame = _folder_frame(path, split)
    elif hasattr(dataset, "to_pandas"):
        frame = dataset.to_pandas()
    elif hasattr(dataset, "keys") and split is not None and split in dataset:
        frame = dataset[split].to_pandas()
    elif hasattr(dataset, "keys"):
        raise DataError(f"a DatasetDict: name one split of {', '.join(map(str, dataset.keys()))}")
    else:
        raise DataError(f"expected a datasets.Dataset or a save_to_disk folder, got {type(dataset).__name__}")
    if frame.empty:
        raise DataError("the data set has no rows")
    return frame


def dataset_outputs(dataset: Any, *, split: str | None = None, item_id: str = "item_id", system: str = "system",
                    output: str = "output", input: str | None = "input",
                    references: str | None = "references") -> pd.DataFrame:
    """The long outputs table (``item_id``, ``system``, ``output``, ``input``, ``references``, ``format``) of a data set."""
    from humeval.data.cells import data_layout, output_cell_problems
    from humeval.data.outputs import to_long
    from humeval.data.readers import require_columns
    from humeval.protocol.models import DataSpec

    frame = dataset_frame(dataset, split=split)
    problems = require_columns(frame, [item_id, system, output], source="data set")
    if problems:
        raise DataError("\n".join(problems), problems)
    spec = DataSpec(files=["<dataset>"], item_id=item_id, system=system, output=output, input=input,
                    references=references)
    problems = output_cell_problems(frame, spec, [], source="data set", layout=data_layout(spec, [item_id, system, output]))
    if problems:
        raise DataError("\n".join(problems), problems)
    return to_long(frame, spec, [])


def dataset_judgements(dataset: Any, *, split: str | None = None) -> pd.DataFrame:
    """Judgements (the long table of :mod:`humeval.judgements`) from a data set with those columns."""
    from humeval.data.readers import require_columns
    from humeval.judgements import normalise_judgements

    frame = dataset_frame(dataset, split=split)
    problems = require_columns(frame, ["participant_id", "item_id", "criterion", "system"], source="data set")
    if problems:
        raise DataError("\n".join(problems), problems)
    return normalise_judgements(frame)
