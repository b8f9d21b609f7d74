"""Whether each judgement row is well formed for the protocol (a data check, not an exclusion).

A row is invalid when its criterion is unknown, a rating is missing or off the
criterion's scale, or a ``2afc`` answer is not one the criterion offers. Invalid rows
never count towards completeness and never enter the analysis; they are reported with
their reason and counted. Exclusion (:mod:`humeval.judgements.exclusion`) is a separate
step that applies only the protocol's preregistered rules.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from humeval.protocol.models import Protocol

__all__ = ["invalid_reasons"]


def invalid_reasons(frame: pd.DataFrame, protocol: Protocol) -> pd.Series:
    """One string per row: ``""`` for a valid row, otherwise why it is invalid."""
    reasons = pd.Series("", index=frame.index, dtype=object)
    known = {c.name: c for c in protocol.criteria}
    unknown = ~frame["criterion"].isin(list(known))
    reasons[unknown] = "unknown criterion '" + frame.loc[unknown, "criterion"].astype(str) + "'"
    attention = frame["kind"] == "attention"
    for name, criterion in known.items():
        rows = (frame["criterion"] == name) & ~attention
        if not rows.any():
            continue
        sub = frame.loc[rows]
        if criterion.task.pairwise:
            allowed = criterion.task.choices(criterion)
            bad = ~sub["choice"].isin(allowed)
            reasons[sub.index[bad]] = (
                "choice '" + sub.loc[bad, "choice"].astype(str) + f"' not offered (valid: {', '.join(allowed)})"
            )
            continue
        value = sub["value"].to_numpy(dtype=float)
        missing = np.isnan(value)
        reasons[sub.index[missing]] = "missing value"
        outside, valid = criterion.task.off_scale(criterion, value)
        off = ~missing & outside
        reasons[sub.index[off]] = [f"value {v:g} off the scale (valid: {valid})" for v in value[off]]
    return reasons
