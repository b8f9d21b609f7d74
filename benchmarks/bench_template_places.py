"""The pairwise template (`humeval init`, 24 items, dynamic stopping at W = 2): the places `humeval budget`
predicts against the mean places of rehearsals through the real server (issue 40: within 20 %).

    python benchmarks/bench_template_places.py [--kind crowd] [--runs 5] [--pilot-seed 100]

A first rehearsal (seed ``--pilot-seed``) is the pilot the budget is fitted to; the budget's places for the
protocol's W are read once, then ``--runs`` rehearsals (seeds 1..runs) collect until the rule decides. Each
rehearsal also prints its own prediction (fitted to the rehearsal before it, as `humeval rehearse` prints it).
Kinds: ``static`` (every participant prefers the better system: the rule decides after 3 places), ``normal``
and ``crowd`` (simulated participants with position bias and cheap clickers: close to the fixed design's 9).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.rehearsal import rehearse
from humeval.rehearsal.rehearse import predicted_places
from humeval.study import StudyFolder
from humeval.templates import init_study


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", default="crowd", choices=("static", "normal", "crowd"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pilot-seed", type=int, default=100)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        init_study(Path(tmp) / "s", "pairwise")
        study = StudyFolder.open(Path(tmp) / "s")
        list(run(study))
        lock_study(study)
        pilot = rehearse(study, kind=args.kind, seed=args.pilot_seed, timeout=600)
        budget = predicted_places(study)
        assert budget is not None, "the budget found no pilot"
        print(f"pilot (seed {args.pilot_seed}): {pilot.places} places; budget predicts {budget:.1f}")
        places, own = [], []
        for seed in range(1, args.runs + 1):
            t0 = time.perf_counter()
            r = rehearse(study, kind=args.kind, seed=seed, timeout=600)
            assert r.places is not None
            places.append(r.places)
            own.append(r.places_predicted)
            print(f"seed {seed}: {r.places} places ({r.places_predicted} predicted from the rehearsal before), "
                  f"{time.perf_counter() - t0:.0f} s")
        mean = float(np.mean(places))
        print(f"{args.kind}: mean places {mean:.2f} over {args.runs} rehearsals (sd {np.std(places, ddof=1):.2f}); "
              f"budget {budget:.1f}: {100 * (budget / mean - 1):+.0f} %")
        known = [p for p in own if p is not None]
        if known:
            print(f"mean of the rehearsals' own predictions {np.mean(known):.2f}: "
                  f"{100 * (np.mean(known) / mean - 1):+.0f} %")


if __name__ == "__main__":
    main()
