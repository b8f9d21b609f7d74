"""The live stopping plot: the share of outcomes favouring A and the rule's bounds over n, as SVG."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["bound_svg"]

W, H, PAD = 640, 240, 32


def bound_svg(curve: list[dict[str, Any]]) -> str:
    """An inline SVG (no script, no external file): estimate, threshold for A, threshold for B."""
    if not curve:
        return ""
    n_max = max(p["n"] for p in curve)

    def xy(n: float, v: float) -> str:
        v = min(1.0, max(0.0, v)) if math.isfinite(v) else 0.5
        x = PAD + (W - 2 * PAD) * (n / max(n_max, 1))
        y = H - PAD - (H - 2 * PAD) * v
        return f"{x:.1f},{y:.1f}"

    def line(key: str, cls: str) -> str:
        pts = " ".join(xy(p["n"], p[key]) for p in curve if p[key] is not None)
        return f'<polyline class="{cls}" fill="none" points="{pts}"/>'

    mid = xy(0, 0.5).split(",")[1]
    return (
        f'<svg class="plot" viewBox="0 0 {W} {H}" role="img" aria-label="share for A and bounds over n">'
        f'<line class="axis" x1="{PAD}" y1="{mid}" x2="{W - PAD}" y2="{mid}"/>'
        f'{line("threshold_a", "bound-a")}{line("threshold_b", "bound-b")}{line("estimate", "estimate")}'
        f'<text x="{PAD}" y="{H - 8}">n = 1</text><text x="{W - PAD - 60}" y="{H - 8}">n = {n_max}</text>'
        f'<text x="4" y="{PAD}">1.0</text><text x="4" y="{H - PAD}">0.0</text></svg>'
    )
