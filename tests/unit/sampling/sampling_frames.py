"""Small synthetic long tables for sampler tests (imported by the tests as a plain module)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def make_frame(n_items: int = 40, n_systems: int = 4, seed: int = 0, aspects: int = 2) -> pd.DataFrame:
    """Items with a latent quality; metrics and human scores follow it; texts share item words."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n_items, 1)) + np.linspace(-1, 1, n_systems)[None, :]
    rows = []
    for i in range(n_items):
        for j in range(n_systems):
            words = " ".join(f"item{i}word{k}" for k in rng.integers(0, 8, 6))
            rows.append({"item_id": f"i{i:03d}", "system": f"s{j}", "output": f"{words} from s{j}",
                         "topic": ["news", "sport"][i % 2]})
    frame = pd.DataFrame(rows)
    flat = quality.ravel()
    for k in range(3):
        frame[f"auto.m{k}"] = flat + rng.normal(scale=0.5 + k, size=len(flat))
    for k in range(aspects):
        frame[f"human.a{k}"] = flat + rng.normal(scale=0.7, size=len(flat))
    return frame
