"""The first-task window: what it costs slow honest participants, and how long entries that never answer hold lists.

    python benchmarks/bench_first_window.py [--lists 120] [--amt Batch_*.csv ...]

Honest participants: the time T from the first task shown to its answer. Model: lognormal with median 27 s and
log-sd 1.20, fitted to the first assignment of each of 233 workers in three Mechanical Turk batches of pairwise
judgements (the DHE batches; median 27 s, 90th percentile 126 s; the time an assignment waited in a worker's queue
counts, so the tail is on the slow side). With ``--amt`` the same shares are also counted in those batch files
(the first assignment of each worker by ``AcceptTime``).

For a first-task window W (``--first-lease``): the share whose first reservation runs out before they answer
(P(T > W): their answer is still kept if nobody took the list meanwhile; else it is refused, 409
``lease_expired``, and they are given a second first task), and the share who lose their place: two first tasks
each slower than W (P(T > W)^2, tasks taken as independent), since a participant gets two first leases
(:data:`humeval.store.assign.FIRST_LEASES`), then nothing.

Entries that never answer: the entry guard admits B new participants per window from every address together
(:func:`humeval.server.guard.auto_entry_budget`: a quarter of the places, at least 20), and each holds a list for
at most two windows, so a sustained flood holds at most min(lists, 2 B) lists, each for at most 2 W; B / W x 60 is
the entry rate per minute. A seeded simulation of such a flood (bots entering as fast as admitted and asking for
their task again the moment a lease runs out) checks the bound.
"""

from __future__ import annotations

import argparse
import csv
import math
from datetime import datetime
from pathlib import Path

import numpy as np

MEDIAN, LOG_SD = 27.0, 1.20
WINDOWS = (60, 120, 180, 300, 600)


def honest_shares(window: float, times: np.ndarray) -> tuple[float, float]:
    """(first reservation runs out, place lost: two first tasks slower than the window)."""
    lapse = float(np.mean(times > window))
    return lapse, lapse**2


def amt_first_times(paths: list[Path]) -> np.ndarray:
    """Each worker's first assignment's ``WorkTimeInSeconds`` (per batch file, first by ``AcceptTime``)."""
    out = []
    for path in paths:
        with path.open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        first: dict[str, tuple[datetime, float]] = {}
        for r in rows:
            at = datetime.strptime(" ".join(r["AcceptTime"].split()[:4] + r["AcceptTime"].split()[5:]), "%a %b %d %H:%M:%S %Y")
            if r["WorkerId"] not in first or at < first[r["WorkerId"]][0]:
                first[r["WorkerId"]] = (at, float(r["WorkTimeInSeconds"]))
        out += [t for _, t in first.values()]
    return np.array(out)


def flood(lists: int, budget: int, window: float, minutes: int = 60, step: float = 1.0) -> int:
    """The most lists bots hold at once in a sustained flood under the guard's rules (entries of the last window
    within ``budget``; two leases of ``window`` before a first answer, then nothing)."""
    entered: list[float] = []  # entry times of admitted bots
    holds: dict[int, tuple[float, int]] = {}  # bot -> (lease end, leases had)
    most, t = 0, 0.0
    while t < minutes * 60:
        for bot, (end, had) in list(holds.items()):  # a bot asks again the moment its lease ran out
            if end <= t and had < 2:
                holds[bot] = (t + window, had + 1)  # its second lease
            elif end <= t:
                del holds[bot]  # no third: its list is given back
        while sum(1 for e in entered if e > t - window) < budget and len(holds) < lists:
            entered.append(t)
            holds[len(entered)] = (t + window, 1)
        most = max(most, sum(1 for end, _ in holds.values() if end > t))
        t += step
    return most


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lists", type=int, default=120)
    parser.add_argument("--amt", type=Path, nargs="*", default=[])
    args = parser.parse_args()
    rng = np.random.default_rng(27)
    model = np.exp(rng.normal(math.log(MEDIAN), LOG_SD, 200_000))
    amt = amt_first_times(args.amt) if args.amt else None
    budget = max(20, math.ceil(args.lists / 4))
    head = "| W (s) | first lease runs out: model | place lost: model |" + (
        " runs out: AMT | place lost: AMT |" if amt is not None else "")
    print(head + " entries per min | lists held by a flood (bound 2B) |")
    print("|" + "---|" * (head.count("|") + 1))
    for w in WINDOWS:
        lapse, lost = honest_shares(w, model)
        row = f"| {w} | {lapse:.1%} | {lost:.2%} |"
        if amt is not None:
            a_lapse, a_lost = honest_shares(w, amt)
            row += f" {a_lapse:.1%} ({round(a_lapse * len(amt))}/{len(amt)}) | {a_lost:.2%} |"
        held = flood(args.lists, budget, w, minutes=max(30, 6 * w // 60))
        print(row + f" {budget * 60 / w:.1f} | {held} of {args.lists} ({min(args.lists, 2 * budget)}) |")


if __name__ == "__main__":
    main()
