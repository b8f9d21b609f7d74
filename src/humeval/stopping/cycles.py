"""Preference cycles among K systems: directed 3-cycles in the observed win shares.

A cycle i > j > l > i (each system preferred to the next in more than half of the judgements
of their pair) means the judgements look intransitive: no order of the systems agrees with
every pair, so a goal over K systems may never be reached (:mod:`humeval.stopping.goals`
announces only what the pairs' own tests resolved, so it stays undecided rather than wrong).
Each cycle says how strong it is: ``resolved`` when all three pairs were resolved directly
by their anytime-valid tests (then, with probability >= 1 - delta, the population itself is
intransitive), ``partly resolved`` when some were, ``observed`` when none were (the shares
may be noise). A K-system tournament without a 3-cycle has no cycle at all, so 3-cycles are
enough to tell an intransitive tournament from an order.

Checked against: hand-built win matrices in tests/unit/stopping/test_goals_intransitive.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["PreferenceCycle", "cycle_note", "preference_cycles"]


@dataclass(frozen=True)
class PreferenceCycle:
    """i > j > l > i: ``systems`` (i, j, l), ``shares`` the win shares of i over j, j over l, l over i.

    ``resolved``: which of the three pairs their tests resolved directly (in that direction).
    """

    systems: tuple[int, int, int]
    shares: tuple[float, float, float]
    resolved: tuple[bool, bool, bool]

    @property
    def strength(self) -> str:
        """``resolved`` (all three pairs), ``partly resolved`` or ``observed`` (none)."""
        return "resolved" if all(self.resolved) else "partly resolved" if any(self.resolved) else "observed"


def preference_cycles(wins: np.ndarray, resolved: np.ndarray | None = None) -> list[PreferenceCycle]:
    """Every directed 3-cycle among pairs whose observed win shares are each above 1/2.

    ``wins[i, j]``: judgements preferring i to j; ``resolved[i, j]``: the pair's test resolved
    i above j (optional). Each cycle is listed once, starting from its lowest index; the most
    strongly supported first (more pairs resolved, then the larger smallest share).
    """
    w = np.asarray(wins, dtype=float)
    k = w.shape[-1]
    n = w + w.T
    share = np.divide(w, n, out=np.full_like(w, 0.5), where=n > 0)
    beats = share > 0.5
    r = np.zeros((k, k), dtype=bool) if resolved is None else np.asarray(resolved, dtype=bool)
    idx = np.arange(k)
    cyc = beats[:, :, None] & beats[None, :, :] & beats.T[:, None, :]  # [i, j, l]: i > j, j > l, l > i
    cyc &= (idx[:, None, None] < idx[None, :, None]) & (idx[:, None, None] < idx[None, None, :])
    out = [PreferenceCycle((int(i), int(j), int(m)), (float(share[i, j]), float(share[j, m]), float(share[m, i])),
                           (bool(r[i, j]), bool(r[j, m]), bool(r[m, i])))
           for i, j, m in zip(*np.nonzero(cyc), strict=True)]
    return sorted(out, key=lambda c: (-sum(c.resolved), -min(c.shares), c.systems))


def cycle_note(cycles: Sequence[PreferenceCycle], names: Sequence[str], shown: int = 3) -> str:
    """One sentence for the report: the strongest cycles, their shares and how strongly they hold ('' when none)."""
    if not cycles:
        return ""
    parts = []
    for c in cycles[:shown]:
        order = ">".join(names[i] for i in (*c.systems, c.systems[0]))
        parts.append(f"{order} (win shares {', '.join(f'{s:.2f}' for s in c.shares)}; {c.strength})")
    more = f" and {len(cycles) - shown} more" if len(cycles) > shown else ""
    return (f"Judgements look intransitive: {'; '.join(parts)}{more}; the goal announces only what direct "
            f"tests resolved")
