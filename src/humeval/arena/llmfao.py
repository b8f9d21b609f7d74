"""LLMFAO's crowd votes as a battle table with the two outputs' texts (the data card: ``arena/README.md``).

``llmfao-crowd-comparisons.csv`` holds one crowd vote per row (``left``, ``right`` the model names in the order
shown, ``winner`` left / right / tie, ``worker``, ``prompt``); ``llmfao-results.jsonl`` the recorded output of each
model for each prompt. :func:`read_llmfao_battles` joins them into FastChat's battle columns (``model_a`` the left
output) with ``judge`` (the worker), ``question_id`` (the prompt) and ``text_a`` / ``text_b`` (what was shown), the
input of :func:`humeval.stats.style_control` and of the vote-quality checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from humeval.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_llmfao_battles"]


def read_llmfao_battles(folder: str | Path, *, votes: str = "llmfao-crowd-comparisons.csv") -> pd.DataFrame:
    """The votes of ``folder/votes`` (default the crowd's) with both outputs' texts from ``llmfao-results.jsonl``."""
    import pandas as pd

    root = Path(folder)
    vote_file, result_file = root / votes, root / "llmfao-results.jsonl"
    for p in (vote_file, result_file):
        if not p.is_file():
            raise DataError(f"{p}: no such LLMFAO file (expected the files of the data card arena/README.md)")
    table = pd.read_csv(vote_file, dtype={"left": str, "right": str, "winner": str})
    missing = [c for c in ("prompt", "left", "right", "winner") if c not in table.columns]
    if missing:
        raise DataError(f"{vote_file}: LLMFAO votes need the columns prompt, left, right, winner; missing {missing}")
    results = pd.read_json(result_file, lines=True)
    texts = dict(zip(zip(results["prompt"].astype(int), results["name"].astype(str), strict=True),
                     results["result"].fillna("").astype(str), strict=True))
    winner = table["winner"].map({"left": "model_a", "right": "model_b", "tie": "tie"})
    if winner.isna().any():
        row = int(winner.isna().to_numpy().nonzero()[0][0])
        raise DataError(f"{vote_file}: row {row + 2}: winner {table['winner'].iloc[row]!r} is not left, right or tie")
    prompt = table["prompt"].astype(int)
    text_a = [texts.get(key) for key in zip(prompt, table["left"], strict=True)]
    text_b = [texts.get(key) for key in zip(prompt, table["right"], strict=True)]
    lost = [i for i, (x, y) in enumerate(zip(text_a, text_b, strict=True)) if x is None or y is None]
    if lost:
        i = lost[0]
        raise DataError(f"{vote_file}: row {i + 2}: no recorded output of {table['left'].iloc[i]!r} or "
                        f"{table['right'].iloc[i]!r} for prompt {prompt.iloc[i]} in {result_file}")
    out = pd.DataFrame({"model_a": table["left"].to_numpy(), "model_b": table["right"].to_numpy(),
                        "winner": winner.to_numpy(), "question_id": prompt.to_numpy(), "text_a": text_a,
                        "text_b": text_b})
    if "worker" in table.columns:
        out["judge"] = table["worker"].astype(str).to_numpy()
    return out
