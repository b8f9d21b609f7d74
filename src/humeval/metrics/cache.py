"""A disk cache of metric values keyed by content hash (metric, version, output, references, input)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["MetricCache", "content_key", "default_cache_dir"]


def default_cache_dir() -> Path:
    """``$HUMEVAL_CACHE/metrics`` or ``~/.cache/humeval/metrics``."""
    base = os.environ.get("HUMEVAL_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "humeval") / "metrics"


def content_key(group: str, version: str, output: str, references: Sequence[str], source: str) -> str:
    """SHA-256 of everything a metric value depends on."""
    text = json.dumps([group, version, output, list(references), source], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class MetricCache:
    """Values of one metric group, one JSON line per computed row (append-only file)."""

    def __init__(self, directory: str | Path, group: str) -> None:
        self.path = Path(directory) / f"{group}.jsonl"
        self._values: dict[str, list[float]] = {}
        if self.path.is_file():
            with self.path.open(encoding="utf-8") as fh:
                for line in fh:
                    try:
                        row = json.loads(line)
                        self._values[row["k"]] = row["v"]
                    except (json.JSONDecodeError, KeyError, TypeError):
                        continue  # a torn last line after a crash: recompute that row

    def get(self, key: str) -> list[float] | None:
        return self._values.get(key)

    def put_many(self, items: dict[str, list[float]]) -> None:
        """Store new values (one append of all lines)."""
        if not items:
            return
        self._values.update(items)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps({"k": k, "v": v}) + "\n" for k, v in items.items()))
