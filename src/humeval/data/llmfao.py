"""Importer for LLMFAO's prompts and recorded outputs (Ustalov, 2023; outputs from llmonitor.com, CC BY 4.0).

LLMFAO ships ``llmfao-prompts.jsonl`` (19 prompts: ``id``, ``text``, ``slug``, ...) and
``llmfao-results.jsonl`` (one recorded output per prompt and model: ``prompt`` (the prompt's id),
``model``, ``name`` (the model's display name), ``result`` (the text), ``duration`` in ms).
:func:`llmfao_outputs` makes them the outputs table of an arena study: an item is a prompt (its
``slug``, the prompt's text as ``input``) and a system is a model (its ``name``), the shape
every stage reads (``item_id, system, output, input``) with the recorded ``duration_ms``.
Outputs that are empty after stripping (69 of 1,133) are dropped by default: an arena never
shows an empty answer as a battle.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from humeval.errors import DataError, did_you_mean

__all__ = ["llmfao_outputs"]


def llmfao_outputs(folder: str | Path, *, models: Sequence[str] | None = None, prompts: Sequence[str] | None = None,
                   keep_empty: bool = False) -> pd.DataFrame:
    """The recorded outputs of ``folder``'s ``llmfao-results.jsonl`` as an outputs table (one row per prompt and
    model: ``item_id`` the prompt's slug, ``system`` the model's name, ``output``, ``input`` the prompt's text,
    ``duration_ms``), for the ``models`` (names) and ``prompts`` (slugs) given, else all of them."""
    root = Path(folder)
    files = {name: root / f"llmfao-{name}.jsonl" for name in ("prompts", "results")}
    for path in files.values():
        if not path.is_file():
            raise DataError(f"{path}: not found; LLMFAO's data needs llmfao-prompts.jsonl and llmfao-results.jsonl "
                            "in one folder")
    asked = pd.read_json(files["prompts"], lines=True)[["id", "text", "slug"]]
    results = pd.read_json(files["results"], lines=True)[["prompt", "name", "result", "duration"]]
    table = results.merge(asked, left_on="prompt", right_on="id", how="inner", validate="many_to_one")
    for wanted, column, what in ((models, "name", "model"), (prompts, "slug", "prompt")):
        if wanted is not None:
            known = set(table[column])
            unknown = [w for w in wanted if w not in known]
            if unknown:
                raise DataError(f"{files['results']}: unknown {what} {unknown[0]!r}. "
                                f"{did_you_mean(unknown[0], sorted(known))}")
            table = table[table[column].isin(list(wanted))]
    out = pd.DataFrame({"item_id": table["slug"].astype(str), "system": table["name"].astype(str),
                        "output": table["result"].astype(str), "input": table["text"].astype(str),
                        "duration_ms": pd.to_numeric(table["duration"], errors="coerce")})
    if not keep_empty:
        out = out[out["output"].str.strip() != ""]
    return out.sort_values(["item_id", "system"], kind="stable").reset_index(drop=True)
