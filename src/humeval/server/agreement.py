"""Agreement so far, per criterion, for the admin page (Krippendorff's alpha from humeval.stats)."""

from __future__ import annotations

import math
from typing import Any

from humeval.protocol.models import Protocol

__all__ = ["agreement_so_far"]


def agreement_so_far(protocol: Protocol, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Alpha per criterion over the judgements so far (nominal for 2afc winners, interval otherwise)."""
    import numpy as np

    from humeval.stats.agreement import krippendorff_alpha

    out = []
    for c in protocol.criteria:
        cells: dict[tuple[str, str], dict[str, float]] = {}
        codes: dict[str, int] = {}
        for r in rows:
            if r["criterion"] != c.name or r["kind"] != "task":
                continue
            if c.type == "2afc":
                pair = "+".join(sorted((r["system"], r["system_b"])))
                choice = r["choice"]
                winner = r["system"] if choice == "A" else r["system_b"] if choice == "B" else choice
                unit, value = (r["item_id"], pair), float(codes.setdefault(winner, len(codes)))
            else:
                unit, value = (r["item_id"], r["system"]), float(r["value"])
            cells.setdefault(unit, {})[r["participant_id"]] = value
        pairable = {u: v for u, v in cells.items() if len(v) >= 2}
        entry: dict[str, Any] = {"criterion": c.name, "units": len(pairable), "alpha": math.nan}
        if len(pairable) >= 2:
            people = sorted({p for v in pairable.values() for p in v})
            index = {p: i for i, p in enumerate(people)}
            data = np.full((len(people), len(pairable)), np.nan)
            for j, v in enumerate(pairable.values()):
                for p, x in v.items():
                    data[index[p], j] = x
            level = "nominal" if c.type == "2afc" else "interval"
            try:
                entry["alpha"] = float(krippendorff_alpha(data, level, n_boot=100, seed=0).estimate)
            except Exception as exc:  # noqa: BLE001 - too little data for alpha: say so on the page
                entry["note"] = str(exc)[:200]
        out.append(entry)
    return out
