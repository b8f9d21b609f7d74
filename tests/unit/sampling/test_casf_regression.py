"""CASF selects exactly what it selected before the redundancy graph and the learner were sped up.

The pinned digests were computed with the implementation at commit 8b33eca (regular-expression
tokenisation, pandas factorize, predictions on every item) on the inputs built below.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from humeval.sampling import ItemTable, get_sampler
from humeval.sampling.redundancy import bigram_matrix, similar_pairs


def synthetic(n_items: int, n_systems: int, seed: int) -> pd.DataFrame:
    """Outputs of shared function words and item-specific content words; 2 % of items repeat the previous one."""
    rng = np.random.default_rng(seed)
    rows = n_items * n_systems
    words = np.array([f"w{k}" for k in range(3000)] + ["Ünïcode", "naïve", "İstanbul", "日本", "x_y"], dtype=object)
    outputs = []
    for r in range(rows):
        item = r // n_systems
        length = int(rng.integers(4, 16))
        function = np.minimum(rng.zipf(1.5, length) - 1, 99)
        content = 100 + (item * 37 + rng.integers(0, 12, length)) % (len(words) - 100)
        picks = np.where(rng.random(length) < 0.5, function, content)
        outputs.append(" ".join(words[picks]) + (" ." if r % 3 else ", DONE!"))
    for i in range(1, n_items, 50):
        outputs[i * n_systems : (i + 1) * n_systems] = outputs[(i - 1) * n_systems : i * n_systems]
    latent = (rng.normal(size=n_items)[:, None] + np.linspace(-0.5, 0.5, n_systems)[None, :]).ravel()
    latent = latent + rng.normal(scale=0.8, size=rows)
    frame = pd.DataFrame({"item_id": np.repeat(np.arange(n_items), n_systems).astype(str),
                          "system": np.tile([f"s{j}" for j in range(n_systems)], n_items), "output": outputs})
    for k, name in enumerate(["bert_score_f", "mover_score", "rouge1_f", "rouge2_f", "rougel_f", "bart_score_avg_f",
                              "BLEU_4", "METEOR"]):
        frame[f"auto.{name}"] = latent * (0.3 + 0.05 * k) + rng.normal(size=rows)
    frame["human.a"] = latent + rng.normal(scale=0.5, size=rows)
    return frame


def digest(values: list) -> str:
    return hashlib.sha256(repr(values).encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def table() -> ItemTable:
    return ItemTable.from_long(synthetic(2600, 3, seed=7))


def test_redundancy_graph_is_unchanged(table):
    graph = similar_pairs(bigram_matrix(table.outputs), 0.5).tocoo()
    pairs = sorted(zip(graph.row.tolist(), graph.col.tolist(), np.round(graph.data, 12).tolist(), strict=True))
    assert len(pairs) == PINNED["pairs"]
    assert digest(pairs) == PINNED["graph"]


def test_selection_is_unchanged(table):
    # 5 phases of 260: the last learner trains on 1 040 items, so both learners (exact and histogram) run
    selection = get_sampler("casf").select(table, 1300, seed=3)
    assert digest([selection.item_ids, selection.phases]) == PINNED["casf"]


PINNED = {"pairs": 104, "graph": "d25ee42d688d2fdc", "casf": "e5cada5f9839b16e"}
