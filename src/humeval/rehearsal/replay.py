"""A rehearsal crowd that replays recorded votes (the ``replay`` kind): each synthetic participant is one recorded
worker, and answers the battle the server serves with that worker's own vote on it, flipped to the served sides.

The votes (:func:`read_crowd_votes`) are one row per vote: ``item_id``, ``model_a``, ``model_b`` (the sides as the
worker saw them), ``winner`` (``model_a``, ``model_b``, ``tie`` or ``both-bad``) and ``judge`` (the worker).

A synthetic participant becomes one worker at the first battle it is served, and stays that worker: one of the workers
who judged that battle and is not yet played by another participant (drawn with the participant's seeded generator),
else the first worker in sorted order not yet played, else (more participants than workers) worker ``i mod W``.
When the server serves a battle (item, model on side A, model on side B: the sides the server chose),
:meth:`VoteReplay.answer` gives, in this order:

1. ``own``: the worker's recorded vote on that (item, pair), flipped to the served sides (the first one if they voted
   twice);
2. ``others``: if the worker never judged that battle, one of the other workers' votes on it, drawn uniformly with the
   participant's seeded generator;
3. ``pair``: if nobody judged that battle (LLMFAO's crowd judged each pair on a few prompts only), one of the votes on
   the same pair of models on other items, drawn the same way. A pair nobody judged is refused.

Every answer is logged (:attr:`VoteReplay.served`) with its source, so a test or the logbook can set the served votes
beside the recorded ones and count how often each source answered.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from humeval.errors import DataError, HumevalError

__all__ = ["REPLAY_SOURCES", "VoteReplay", "read_crowd_votes"]

#: where a replayed vote came from (see the module docstring)
REPLAY_SOURCES = ("own", "others", "pair")
_WINNERS = ("model_a", "model_b", "tie", "both-bad")


def read_crowd_votes(path: str | Path) -> pd.DataFrame:
    """Recorded votes as ``item_id, model_a, model_b, winner, judge``: LLMFAO's ``llmfao-crowd-comparisons.csv``
    (prompt ids turned into the slugs of ``llmfao-prompts.jsonl`` beside it, the item ids of
    :func:`humeval.data.llmfao.llmfao_outputs`), or a CSV / JSONL with those five columns."""
    file = Path(path)
    if not file.is_file():
        raise DataError(f"--crowd-votes: {file}: no such file (a CSV or JSONL of recorded votes)")
    head = pd.read_csv(file, nrows=0).columns if file.suffix.lower() == ".csv" else []
    if {"left", "right", "worker", "prompt"} <= set(head):
        from humeval.arena.llmfao import read_llmfao_battles

        battles = read_llmfao_battles(file.parent, votes=file.name)
        prompts_file = file.parent / "llmfao-prompts.jsonl"
        if not prompts_file.is_file():
            raise DataError(f"{prompts_file}: not found; LLMFAO's votes name prompts by id, their slugs are there")
        prompts = pd.read_json(prompts_file, lines=True)
        slugs = dict(zip(prompts["id"].astype(int), prompts["slug"].astype(str), strict=True))
        table = battles.assign(item_id=battles["question_id"].map(slugs))
    else:
        table = pd.read_csv(file) if file.suffix.lower() == ".csv" else pd.read_json(file, lines=True)
    missing = [c for c in ("item_id", "model_a", "model_b", "winner", "judge") if c not in table.columns]
    if missing:
        raise DataError(f"{file}: recorded votes need the columns item_id, model_a, model_b, winner, judge "
                        f"(or LLMFAO's prompt, left, right, winner, worker); missing {missing}")
    out = table[["item_id", "model_a", "model_b", "winner", "judge"]].astype(str).reset_index(drop=True)
    bad = ~out["winner"].isin(_WINNERS)
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        raise DataError(f"{file}: vote {row + 1}: winner {out['winner'].iloc[row]!r} is not one of {list(_WINNERS)}")
    return out


class VoteReplay:
    """Recorded votes replayed by synthetic participants (see the module docstring); thread-safe."""

    def __init__(self, votes: pd.DataFrame) -> None:
        if votes.empty:
            raise HumevalError("--crowd-votes: the file holds no vote")
        self.workers: tuple[str, ...] = tuple(sorted(set(votes["judge"])))
        # each vote as (judge, the winning model or tie / both-bad), by (item, pair) and by pair
        winner = np.select([votes["winner"] == "model_a", votes["winner"] == "model_b"],
                           [votes["model_a"], votes["model_b"]], votes["winner"])
        self.battles: dict[tuple[str, frozenset[str]], list[tuple[str, str]]] = {}
        self.pairs: dict[frozenset[str], list[tuple[str, str]]] = {}
        for item, a, b, judge, won in zip(votes["item_id"], votes["model_a"], votes["model_b"], votes["judge"],
                                          winner, strict=True):
            pair = frozenset((a, b))
            self.battles.setdefault((item, pair), []).append((judge, str(won)))
            self.pairs.setdefault(pair, []).append((judge, str(won)))
        self._lock = threading.Lock()
        #: participant index -> the worker it plays (bound at its first battle)
        self.bound: dict[int, str] = {}
        #: every answer given: participant index, worker, item, served sides, vote, source, the recorded winner
        self.served: list[dict[str, Any]] = []

    def worker(self, index: int, recorded: list[tuple[str, str]], rng: np.random.Generator) -> str:
        """The recorded worker that the ``index``-th synthetic participant plays (bound at its first battle, whose
        ``recorded`` votes it prefers)."""
        with self._lock:
            if index in self.bound:
                return self.bound[index]
            taken = set(self.bound.values())
            judges = sorted({judge for judge, _ in recorded} - taken)
            free = [w for w in self.workers if w not in taken]
            worker = (judges[int(rng.integers(len(judges)))] if judges else free[0] if free
                      else self.workers[index % len(self.workers)])
            self.bound[index] = worker
            return worker

    def answer(self, index: int, item_id: str, side_a: str, side_b: str, rng: np.random.Generator) -> str:
        """The vote (``A``, ``B``, ``tie``, ``both-bad``) of participant ``index`` on the battle served."""
        pair = frozenset((side_a, side_b))
        recorded = self.battles.get((item_id, pair), [])
        worker = self.worker(index, recorded, rng)
        own = [won for judge, won in recorded if judge == worker]
        others = [won for judge, won in recorded if judge != worker]
        if own:
            source, won = "own", own[0]
        elif others:
            source, won = "others", others[int(rng.integers(len(others)))]
        else:
            pooled = self.pairs.get(pair, [])
            if not pooled:
                raise HumevalError(f"--crowd-votes: no recorded vote on the pair {side_a!r} / {side_b!r} (item "
                                   f"'{item_id}'); replay a study whose models the recorded workers compared")
            source, won = "pair", pooled[int(rng.integers(len(pooled)))][1]
        vote = "A" if won == side_a else "B" if won == side_b else won
        with self._lock:
            self.served.append({"participant": index, "worker": worker, "item_id": item_id, "model_a": side_a,
                                "model_b": side_b, "vote": vote, "source": source, "winner": won})
        return vote

    def counts(self) -> dict[str, int]:
        """How many served votes came from each source (:data:`REPLAY_SOURCES`)."""
        with self._lock:
            seen = Counter(s["source"] for s in self.served)
        return {source: seen.get(source, 0) for source in REPLAY_SOURCES}
