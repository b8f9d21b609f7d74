"""Reference-based lexical metrics of one output: BLEU, chrF (sacrebleu), ROUGE-1/2/L (rouge-score).

Each function scores one output against its references (several references: sacrebleu
uses them jointly, ROUGE takes the best reference); scores are in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

__all__ = ["bleu", "chrf", "require_extra", "rouge"]


def require_extra(module: str, metric: str) -> None:
    """Raise a clear error when ``module`` (from the ``metrics`` extra) is not installed."""
    import importlib.util

    from humeval.errors import DataError

    if importlib.util.find_spec(module) is None:
        raise DataError(
            f"metric '{metric}' needs the package '{module}', which is not installed; "
            "install the metrics extra with `pip install 'humeval[metrics]'`, or use stored auto.* columns"
        )


@lru_cache(maxsize=1)
def _bleu() -> Any:
    require_extra("sacrebleu", "bleu")
    from sacrebleu.metrics import BLEU

    return BLEU(effective_order=True)


@lru_cache(maxsize=1)
def _chrf() -> Any:
    require_extra("sacrebleu", "chrf")
    from sacrebleu.metrics import CHRF

    return CHRF()


@lru_cache(maxsize=1)
def _rouge() -> Any:
    require_extra("rouge_score", "rouge")
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


def bleu(output: str, references: Sequence[str]) -> float:
    """Sentence BLEU with effective order (sacrebleu ``BLEU(effective_order=True)``), in [0, 1]."""
    return _bleu().sentence_score(output, list(references)).score / 100.0


def chrf(output: str, references: Sequence[str]) -> float:
    """Sentence chrF (sacrebleu defaults: character 6-grams, beta 2), in [0, 1]."""
    return _chrf().sentence_score(output, list(references)).score / 100.0


def rouge(output: str, references: Sequence[str]) -> tuple[float, float, float]:
    """ROUGE-1, ROUGE-2, ROUGE-L F-measure (Porter stemming), best over the references."""
    scores = _rouge().score_multi(list(references), output)
    return scores["rouge1"].fmeasure, scores["rouge2"].fmeasure, scores["rougeL"].fmeasure
