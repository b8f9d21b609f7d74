"""Agreement so far, per criterion, for the admin page: the report's coding and level, on the judgements so far."""

from __future__ import annotations

import math
from typing import Any

from humeval.protocol.models import Protocol

__all__ = ["agreement_so_far"]


def agreement_so_far(protocol: Protocol, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Krippendorff's alpha per criterion over the judgements so far (before exclusion).

    Units, codes and the level are the report's (:func:`humeval.judgements.agreement_units`,
    :func:`humeval.analysis.agreement_plan.auto_level`), so the page shows the number the
    analysis will compute on the same judgements; 100 bootstrap rounds for its interval.
    """
    try:
        import pandas as pd  # only when the admin page is asked for, never at server start
    except ModuleNotFoundError:  # a server-only install: the report's tables need pandas
        return [{"criterion": c.name, "units": 0, "level": "", "alpha": math.nan,
                 "note": "needs the 'analysis' extra (pip install 'humeval[analysis]')"} for c in protocol.criteria]

    from humeval.analysis.agreement_plan import auto_level, log_scores
    from humeval.judgements import JUDGEMENT_COLUMNS, agreement_units, unit_matrix
    from humeval.stats.agreement import krippendorff_alpha

    frame = pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS)
    plan = protocol.analysis
    out = []
    for c in protocol.criteria:
        sub = frame[(frame["criterion"] == c.name) & (frame["kind"] == "task")]
        logged = log_scores(c, plan)
        units, _ = agreement_units(sub, c, log=logged)
        pairable = units.groupby("unit")["participant_id"].nunique()
        units = units[units["unit"].isin(pairable.index[pairable >= 2])]
        level = plan.agreement_level if plan.agreement_level != "auto" else auto_level(c.type, logged)
        entry: dict[str, Any] = {"criterion": c.name, "units": int(units["unit"].nunique()), "level": level,
                                 "alpha": math.nan}
        if entry["units"] >= 2:
            try:
                entry["alpha"] = float(krippendorff_alpha(unit_matrix(units), level, n_boot=100, seed=0).estimate)
            except Exception as exc:  # noqa: BLE001 - too little data for alpha: say so on the page
                entry["note"] = str(exc)[:200]
        out.append(entry)
    return out
