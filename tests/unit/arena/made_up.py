"""Made-up arena counts for the tests: a clear order a > b > c > d, every pair met 600 times."""

from __future__ import annotations

import json
from pathlib import Path


def clear_order_counts(folder: Path) -> Path:
    """Write the counts file (wins of the better model 285-315 of 600, 100 ties, 40 both bad) and return its path."""
    x, y = [], []
    for i in range(4):
        for j in range(i + 1, 4):
            x.append([i, j])
            y.append([270 + 15 * (j - i), 190 - 15 * (j - i), 100, 40])
    path = folder / "counts.json"
    path.write_text(json.dumps({"models": ["a", "b", "c", "d"], "X": x, "Y": y}))
    return path
