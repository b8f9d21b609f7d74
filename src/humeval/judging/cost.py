"""A judge's cost before its run (``humeval budget``), and what its last run recorded."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from humeval.judging.cache import AnswerCache
from humeval.judging.client import CHARS_PER_TOKEN, estimate_tokens
from humeval.judging.ledger import spend
from humeval.judging.run import cache_file, ledger_file, plan_requests
from humeval.study import StudyFolder

__all__ = ["CHARS_PER_TOKEN", "JudgeCost", "estimate_cost"]


@dataclass(frozen=True)
class JudgeCost:
    """A judge's predicted cost before its run, and what its last run recorded (None before any)."""

    judge: str
    model: str
    requests: int
    cached: int
    tokens_in: int
    tokens_out_max: int
    currency: str
    cost_max: float
    method: str
    last_run: dict[str, Any] | None = None
    #: every request the ledger holds for the judge (all runs, killed ones included) and what it cost at most
    spent: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def estimate_cost(study: StudyFolder) -> list[JudgeCost]:
    """Predicted tokens and money of every ``llm`` judge: the requests not yet in the cache, their input tokens
    estimated as characters / :data:`CHARS_PER_TOKEN` (an approximation: the real count depends on the model's
    tokenizer and the chat template), their output tokens at most ``max_tokens`` each; and the summary of the
    judge's last successful run from the logbook, and what every request sent so far cost (the ledger,
    :func:`humeval.judging.ledger.spend`: killed runs included)."""
    from humeval import logbook

    judges = [j for j in study.protocol.data.judges if j.llm is not None]
    if not judges:
        return []
    last: dict[str, dict[str, Any]] = {}
    for entry in logbook.entries(study):
        if entry.stage == "judge" and entry.ok:
            last |= (entry.summary or {}).get("judges", {})
    out = []
    path = cache_file(study)
    cache = AnswerCache(path) if path.is_file() else None
    try:
        for judge in judges:
            llm = judge.llm
            assert llm is not None
            _, asks = plan_requests(study, judge)
            unique = list({a.key: a for a in asks}.values())
            todo = [a for a in unique if cache is None or cache.get(a.key) is None]
            tokens_in = sum(estimate_tokens(a.chars) for a in todo)
            tokens_out = llm.max_tokens * len(todo)
            cost = round(tokens_in * llm.price_input / 1e6 + tokens_out * llm.price_output / 1e6, 6)
            out.append(JudgeCost(judge.name, llm.model, len(todo), len(unique) - len(todo), tokens_in, tokens_out,
                                 llm.currency, cost, f"input tokens ~ characters / {CHARS_PER_TOKEN}; output tokens "
                                 "at most max_tokens per request", last.get(judge.name),
                                 spend(ledger_file(study), judge.name).to_json(llm.price_input, llm.price_output)))
    finally:
        if cache is not None:
            cache.close()
    return out
