"""What a pipeline stage returns (a leaf module: stage modules import it, the pipeline runs them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["StageOutput"]


@dataclass(frozen=True)
class StageOutput:
    """What a stage function returns: the files it wrote and what to record about the run."""

    outputs: list[Path]
    seed: int | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
