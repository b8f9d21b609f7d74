"""Which pairwise comparisons a stopping rule watches, and for how long: one resolver for every stage.

The live store (seeding, feeding the rule, closing tasks), the analysis replay, collation
and the report all ask :func:`watched_comparisons`; none of them reads ``stopping.systems``
itself. A comparison is one ``2afc`` criterion between two systems; ``system_a`` is the
system whose win counts as outcome 1 (``A``) for the rule.

``stopping.systems`` names the two systems; when it is empty and the study has exactly two
systems, those two are compared (in the order given). More than two systems with an empty
list (best-of-K) is refused: live best-of-K identification does not exist yet, and
``humeval validate`` reports it before lock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from humeval.errors import ProtocolError
from humeval.protocol.models import Protocol

__all__ = ["Comparison", "watched_comparisons"]


@dataclass(frozen=True)
class Comparison:
    """One watched comparison: a ``2afc`` criterion between ``system_a`` and ``system_b``.

    ``horizon`` is the largest number of aggregated outcomes collected without a decision
    (``stopping.max_judgements``; None: no horizon). ``in_flight_share`` and
    ``min_in_flight`` bound the judgements in flight (:meth:`in_flight_bound`).
    """

    criterion: str
    system_a: str
    system_b: str
    rule: str
    delta: float
    horizon: int | None = None
    in_flight_share: float = 0.05
    min_in_flight: int = 1
    tuned_for: int | None = None

    def build_rule(self) -> Any:
        """A fresh rule object for this comparison (the live store and the analysis replay build it here)."""
        from humeval.stopping import get_rule  # scipy: only when a rule is built

        return get_rule(self.rule, self.delta, horizon=self.horizon, tuned_for=self.tuned_for)

    def in_flight_bound(self, n: int) -> int:
        """Judgements allowed in flight after ``n`` fed outcomes: ``max(min_in_flight, ceil(in_flight_share * n))``."""
        return max(self.min_in_flight, math.ceil(self.in_flight_share * n))

    @property
    def systems(self) -> tuple[str, str]:
        return (self.system_a, self.system_b)

    def involves(self, first: str, second: str) -> bool:
        """Whether a judgement between ``first`` and ``second`` (either order) belongs to this comparison."""
        return {first, second} == {self.system_a, self.system_b}


def watched_comparisons(protocol: Protocol, systems: Sequence[str]) -> list[Comparison]:
    """The comparisons the protocol's stopping rule watches, one per ``2afc`` criterion.

    ``systems`` are the study's systems (the protocol's ``systems``, else those in the
    data). Empty when the protocol has no stopping rule. Raises :class:`ProtocolError`
    for a pair that cannot be resolved (``validate`` reports the same problem with its line).
    """
    stop = protocol.stopping
    if stop is None:
        return []
    pair = list(stop.systems) or list(systems)
    if len(pair) != 2:
        raise ProtocolError(
            f"stopping.systems: the stopping rule compares two systems; the list is "
            f"{'empty' if not stop.systems else stop.systems} and the study has {len(systems)} system(s) "
            f"({', '.join(systems)}). Name the two systems to compare (live best-of-K identification is not available)"
        )
    unknown = [s for s in pair if systems and s not in systems]
    if unknown:
        raise ProtocolError(f"stopping.systems: unknown system '{unknown[0]}'. Available: {', '.join(systems)}")
    return [
        Comparison(c.name, pair[0], pair[1], stop.rule, stop.delta, stop.max_judgements, stop.in_flight_share,
                   stop.min_in_flight, stop.tuned_for)
        for c in protocol.criteria
        if c.type == "2afc"
    ]
