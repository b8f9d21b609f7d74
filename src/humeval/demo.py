"""``humeval demo``: the whole system on one example study, in well under two minutes.

One call runs, with the very functions of the CLI commands:

1. ``init`` with the ``demo`` template: three systems, a pairwise (``2afc``) criterion whose
   comparison of two of them is watched by the anytime-valid stopping rule, and RankME on two
   criteria (naturalness, informativeness) over all three, with one attention check per list
   and an attention exclusion rule;
2. ``validate``, ``lock``, ``run`` (the default sampler selects the items, then the design);
3. ``rehearse`` with the ``crowd`` kind: ``humeval serve`` on 127.0.0.1 over SQLite and a
   simulated crowd (:class:`~humeval.rehearsal.Population`: capability, position bias, spammers
   who answer attention checks at random) through the JSON API until the stopping rule has
   decided and every participant list is done; the tasks the excluded participants leave short
   are re-run (new lists with attention checks, new participants) until collation is complete;
   then export, collate, exclude, analyze and report (``results/rehearsal/``).

Its :class:`DemoResult` holds the results (:class:`~humeval.results.Results`) and says what
the CLI prints: the decision, the judgements it took against the fixed design, agreement,
rankings with intervals and where the report is. Everything comes from the study's own files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from humeval.errors import HumevalError
from humeval.rehearsal.participants import Population
from humeval.rehearsal.rehearse import RehearsalResult
from humeval.results import Results, Stopping

__all__ = ["DEMO_ITEMS", "RERUN_ROUNDS", "DemoResult", "demo"]

#: items of the demo's data set: 48 x 3 judgements of the watched pair is the fixed design
DEMO_ITEMS = 48
#: the demo's crowd: the rehearsal's, without its cheap clickers (the demo's pair lists hold 3-4 tasks, too few for
#: the same-side rule at a low false-positive rate; the README and docs/getting-started.md quote its numbers)
DEMO_CROWD = Population(first_share=0.0, straight_share=0.0)
#: re-runs of the tasks left short by excluded participants, at most (collected until collation is complete)
RERUN_ROUNDS = 3


@dataclass(frozen=True)
class DemoResult:
    """What the demo did: the study, the rehearsal through the server, and the results read back."""

    directory: Path
    rehearsal: RehearsalResult
    results: Results
    #: seconds for the whole demo (init to report)
    seconds: float

    @property
    def report(self) -> Path | None:
        return self.rehearsal.report

    @property
    def decisions(self) -> list[Stopping]:
        """The stopping rule's decision per watched comparison (replayed on the valid judgements)."""
        return [res.stopping for res in self.results.criteria.values() if res.stopping]

    @property
    def collation(self) -> dict[str, Any]:
        """``collation.json`` of the rehearsal: is every task complete after exclusion, and what is short."""
        from humeval.files import read_json

        return read_json(self.rehearsal.workspace / "collation.json")

    @property
    def exclusion(self) -> dict[str, Any]:
        """``exclusion.json`` of the rehearsal: participants and judgements excluded per rule."""
        from humeval.files import read_json

        return read_json(self.rehearsal.workspace / "exclusion.json")

    def summary(self) -> dict[str, Any]:
        """What the demo reports, as plain data (``humeval demo --format json``): decisions with the
        judgements used against the fixed design, collection counts, exclusion, collation, agreement and
        rankings with their intervals, the report and the signature."""
        r, res = self.rehearsal, self.results
        agreement = [{"criterion": name, "measure": a.measure, "method": a.method, "estimate": a.estimate,
                      "ci_low": a.ci_low, "ci_high": a.ci_high, "no_interval": a.no_interval, "n": a.n,
                      "verdict": a.verdict, "note": a.undefined}
                     for name, c in res.criteria.items() for a in c.agreement]
        rankings = [{"criterion": name, "method": method, "rank": f"{s.rank_low}-{s.rank_high}",
                     "system": s.system, "score": s.estimate, "ci_low": s.ci_low, "ci_high": s.ci_high,
                     "no_interval": s.no_interval, "n": s.n}
                    for name, c in res.criteria.items() for method, rk in c.rankings.items() if not rk.undefined
                    for s in rk.systems]
        decisions = [{k: getattr(d, k) for k in ("criterion", "a", "b", "rule", "delta", "anytime_valid", "outcome",
                                            "decision", "n", "collected", "fixed_design", "saved", "places",
                                            "fixed_places", "live_n",
                                            "agrees_with_live")} for d in self.decisions]
        collation, exclusion = self.collation, self.exclusion
        return {
            "study": str(self.directory),
            "decisions": decisions,
            "collection": {"participants": r.participants, "participants_active": r.participants_active,
                           "judgements": r.judgements, "fixed_design": r.judgements_required,
                           "rerun_rounds": r.summary.get("rerun_rounds", 0),
                           "rerun_judgements": r.summary.get("rerun_judgements", 0),
                           "seconds": round(r.seconds, 2)},
            "exclusion": {"participants_excluded": exclusion["participants_excluded"],
                          "participants_total": exclusion["participants_total"],
                          "judgements_excluded": exclusion["judgements_excluded"],
                          "judgements_total": exclusion["judgements_total"]},
            "collation": {k: collation.get(k) for k in ("complete", "tasks", "tasks_complete", "tasks_decided",
                                                        "tasks_incomplete", "judgements_missing")},
            "agreement": agreement,
            "rankings": rankings,
            "confidence_level": 1 - res.alpha,
            "report": str(self.report) if self.report else None,
            "signature": res.signature,
            "seconds": round(self.seconds, 1),
        }


def demo(
    directory: str | Path = "example-study",
    *,
    items: int = DEMO_ITEMS,
    seed: int = 1,
    population: Population | None = None,
    concurrency: int = 1,
    timeout: float = 600.0,
    progress: bool = False,
    step: Callable[[str], None] | None = None,
) -> DemoResult:
    """Create the example study in ``directory`` (which must hold no study), run it end to end, return what it did.

    ``items``: items of the generated data set; ``seed``: of the data, the study and the crowd;
    ``population``: the simulated crowd (default :class:`Population`); ``concurrency``:
    participants at work at once (1, the default, makes every run give the same numbers: which
    judgement reaches the stopping rule first then depends on the seed alone); ``timeout``:
    seconds allowed for the collection;
    ``progress``: a progress bar of the collection on stderr; ``step``: called with a line
    before each step (the CLI prints it on stderr).
    """
    import time

    from humeval.lock import lock_study
    from humeval.pipeline import run
    from humeval.rehearsal.rehearse import rehearse
    from humeval.study import StudyFolder
    from humeval.templates import init_study
    from humeval.validate import validate_study

    say = step or (lambda _line: None)
    started = time.monotonic()
    root = Path(directory)
    say(f"init: the demo study in {root} ({items} items, 3 systems)")
    init_study(root, "demo", items=items, seed=seed)
    problems = validate_study(root)
    if problems:  # the template is checked by the tests; this guards against a broken installation
        raise HumevalError("demo: the generated study does not validate:\n  " + "\n  ".join(problems))
    say("validate: no problems; lock: protocol and data pinned by hash")
    study = StudyFolder.open(root)
    lock_study(study)
    for result in run(study):
        say(f"{result.stage}: " + ", ".join(f"{k}={v}" for k, v in result.summary.items()
                                             if not isinstance(v, dict | list)))
    say("rehearse: `humeval serve` on 127.0.0.1 (SQLite), a simulated crowd through the JSON API, "
        "then export, collate, exclude, analyze, report")
    rehearsal = rehearse(study, kind="crowd", population=population or DEMO_CROWD, seed=seed,
                         concurrency=concurrency, timeout=timeout, progress=progress, rerun_rounds=RERUN_ROUNDS)
    if rehearsal.results is None:
        raise HumevalError(f"demo: the analysis refused the collected judgements: {rehearsal.analysis_error}")
    return DemoResult(root, rehearsal, Results.read(rehearsal.results), time.monotonic() - started)
