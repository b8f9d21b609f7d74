"""JSON that is valid JSON: NaN and infinities become ``null``, numpy scalars plain numbers."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

__all__ = ["clean", "read_json", "write_json"]


def clean(obj: Any) -> Any:
    """``obj`` with NaN/inf replaced by None and numpy values turned into Python ones."""
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if hasattr(obj, "tolist") and not isinstance(obj, (str, bytes)):
        return clean(obj.tolist())
    if isinstance(obj, bool) or obj is None or isinstance(obj, (int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if hasattr(obj, "item"):
        return clean(obj.item())
    if isinstance(obj, Path):
        return str(obj)
    return obj


def write_json(path: Path, data: Any) -> Path:
    """Write ``data`` as indented JSON atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(clean(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
