"""How many human labels an automatic judge saves at the study's precision, predicted from a pilot.

For each judge of the analysis plan (``analysis.judges``) and each criterion it stands in
for, a pilot with human judgements of some items (humeval's exported judgements: ``--pilot``
or ``results/judgements.jsonl``) and the judge's scores of the same outputs give:

* rho, the judge-human correlation *within systems* (each system's item scores centred on
  the system's mean, then pooled: PPI estimates each system's mean), with its 95 % Fisher-z
  interval over the pilot's labelled outputs; for ``2afc`` criteria the human outcome of an
  item is the share of judgements preferring the first system, the judge's its verdict;
* the precision: the half-width of the human-only 95 % interval of a system's mean with the
  design's labelled items (``n_h`` = the items of the design), or the half-width asked for
  (``precision``), in which case ``n_h = (z sigma / precision)^2`` with sigma the pilot's
  within-system standard deviation of the human scores;
* the labels PPI++ needs for the same precision with the judge scoring all ``T`` items of the
  data: :func:`humeval.stats.ppi_labels_needed` (``n_h (1 - rho^2) / (1 - rho^2 n_h / T)``),
  at rho and at both ends of its interval (the saving's uncertainty).

The prediction assumes what the analysis assumes: labelled items drawn uniformly at random,
and the judge put on the human scale (the analysis does it); it is the large-sample
variance, which simulation matches within a few percent from about 50 labels
(``benchmarks/bench_judges.py``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from humeval.errors import DataError
from humeval.study import StudyFolder

__all__ = ["JudgeSaving", "judge_savings"]

_Z95 = 1.959963984540054


@dataclass(frozen=True)
class JudgeSaving:
    """The human labels one judge saves for one criterion (labels: labelled outputs, or items and pairs for 2afc)."""

    judge: str
    criterion: str
    pilot_labels: int
    rho: float
    rho_low: float
    rho_high: float
    items: int
    precision: float
    precision_source: str
    labels_without: float
    labels_with: float
    labels_with_low: float
    labels_with_high: float

    @property
    def saved_share(self) -> float:
        return 1 - self.labels_with / self.labels_without

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"saved_share": self.saved_share}

    def row(self) -> dict[str, Any]:
        """A table row: rho [CI], labels without and with the judge [range], the share saved."""
        return {"judge": self.judge, "criterion": self.criterion, "pilot labels": self.pilot_labels,
                "rho [95% CI]": f"{self.rho:.2f} [{self.rho_low:.2f}, {self.rho_high:.2f}]",
                "precision (±)": f"{self.precision:.3g}", "labels without judge": math.ceil(self.labels_without),
                "labels with judge": f"{math.ceil(self.labels_with)} [{math.ceil(self.labels_with_low)}, "
                                     f"{math.ceil(self.labels_with_high)}]",
                "saved": f"{self.saved_share:.0%}", "items judged": self.items}


def _centred(values: pd.Series, groups: pd.Series) -> np.ndarray:
    return (values - values.groupby(groups).transform("mean")).to_numpy(float)


def _pairs(frame: pd.DataFrame, criterion: Any, judge: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """Centred (human, judge) values of the pilot's labelled outputs, and the items the judge scored per system."""
    rows = frame[(frame["criterion"] == criterion.name) & (frame["kind"] == "task")]
    if criterion.task.pairwise:
        from humeval.judgements import winners

        won = winners(rows).to_numpy()
        out = []
        for (a, b), grp in rows.assign(won=won).groupby(["system", "system_b"]):
            human = pd.Series(np.where(grp["won"] == a, 1.0, np.where(grp["won"] == b, 0.0, 0.5)),
                              index=grp["item_id"].to_numpy()).groupby(level=0).mean()
            judged = judge.outcomes(a, b).groupby(level=0).mean()
            both = human.index.intersection(judged.index)
            out.append(pd.DataFrame({"h": human.loc[both].to_numpy(), "j": judged.loc[both].to_numpy(), "g": f"{a}|{b}"}))
        per_system = judge.frame.groupby(["system_a", "system_b"])["item_id"].nunique()
    else:
        human_means = rows.assign(v=rows["value"].astype(float)).groupby(["system", "item_id"])["v"].mean()
        out = []
        for system in human_means.index.get_level_values(0).unique():
            human = human_means.loc[system]
            judged = judge.scores(system)
            both = human.index.intersection(judged.index)
            out.append(pd.DataFrame({"h": human.loc[both].to_numpy(), "j": judged.loc[both].to_numpy(), "g": system}))
        per_system = judge.frame.groupby("system")["item_id"].nunique()
    both = pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=["h", "j", "g"])
    items = int(per_system.min()) if len(per_system) else 0
    return _centred(both["h"], both["g"]), _centred(both["j"], both["g"]), items


def judge_savings(study: StudyFolder, pilot: str | Path | None = None, *, precision: float | None = None,
                  labels: int | None = None) -> tuple[list[JudgeSaving], list[str]]:
    """The human labels each judge of ``analysis.judges`` saves, per criterion, and notes on what was not predicted.

    ``pilot``: human judgements (humeval's judgement columns; default
    ``results/judgements.jsonl``). ``precision``: the half-width of a system mean's 95 %
    interval to reach (default: what ``labels`` human-labelled items give, by default the
    design's items).
    """
    from humeval.judgements import read_judgements
    from humeval.stats import pearson, ppi_labels_needed

    protocol = study.protocol
    if not protocol.analysis.judges:
        return [], []
    if precision is not None and not precision > 0:
        raise DataError(f"budget: the precision (half-width of the interval) must be positive, got {precision}")
    path = Path(pilot) if pilot is not None else study.results_dir / "judgements.jsonl"
    if not path.is_file():
        return [], [(f"judges: no pilot with human judgements ({path}); pass --pilot FILE (humeval's exported "
                    "judgements of a pilot) to predict the labels the judges save")]
    try:
        frame = read_judgements(path)
    except DataError as exc:
        return [], [f"judges: the pilot is not a judgements table, so the labels the judges save are not predicted ({exc})"]
    judges = study.judges()
    n_design = labels
    if n_design is None:
        n_design = len({t.item_id for pl in study.read_lists() for t in pl.tasks if t.kind == "task"})
    out, notes = [], []
    for name in protocol.analysis.judges:
        judge = judges[name]
        for criterion in protocol.criteria:
            if not judge.fits(criterion):
                continue
            h, j, items = _pairs(frame, criterion, judge)
            if h.size < 4 or np.std(h) == 0 or np.std(j) == 0:
                notes.append(f"judges: {name} on {criterion.name}: {h.size} pilot labels with a judge score "
                             "(at least 4, not all equal, are needed)")
                continue
            r = pearson(h, j)  # Fisher-z interval, n - 3 (the centring per system costs a few df; pilots are larger)
            sigma = float(np.std(h, ddof=1))
            if precision is None:
                n_h, half, source = float(n_design), _Z95 * sigma / math.sqrt(n_design), f"{n_design} labelled items (design)"
            else:
                n_h, half, source = (_Z95 * sigma / precision) ** 2, precision, "asked (--precision)"
            lo2, hi2 = (0.0 if r.ci_low <= 0 <= r.ci_high else min(r.ci_low**2, r.ci_high**2)), max(r.ci_low**2, r.ci_high**2)
            need = ppi_labels_needed([r.estimate, math.sqrt(hi2), math.sqrt(lo2)], n_h, max(items, 1))
            out.append(JudgeSaving(name, criterion.name, int(h.size), r.estimate, r.ci_low, r.ci_high, items, half, source,
                                   n_h, float(need[0]), float(need[1]), float(need[2])))
            if n_h >= items:
                notes.append(f"judges: {name} on {criterion.name}: humans label every one of the {items} items the "
                             "judge scores, so the judge saves nothing; it saves labels when humans label a sample "
                             "(sampling) of the items it scores")
    return out, notes
