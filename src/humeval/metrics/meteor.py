"""A METEOR-like score that needs no downloaded data.

METEOR (Banerjee & Lavie, 2005) aligns unigrams in stages (exact, Porter stem, WordNet
synonym), computes ``Fmean = P R / (alpha P + (1 - alpha) R)`` and multiplies it by
``1 - gamma (chunks / matches) ** beta``. WordNet is a separate download (nltk data),
so this version keeps the exact and stem stages and drops the synonym stage; otherwise
it follows METEOR 1.0 (alpha 0.9, beta 3, gamma 0.5) and takes the best reference.
NLTK's ``PorterStemmer`` is pure code and needs no data files.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

__all__ = ["meteor_like", "tokens"]

_TOKEN = re.compile(r"\w+", re.UNICODE)
ALPHA, BETA, GAMMA = 0.9, 3.0, 0.5


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return _TOKEN.findall(text.lower())


@lru_cache(maxsize=1)
def _porter() -> object:
    from humeval.metrics.lexical import require_extra

    require_extra("nltk", "meteor")
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _porter().stem(word)  # type: ignore[attr-defined]


def _align(hyp: list[str], ref: list[str]) -> list[tuple[int, int]]:
    """Greedy left-to-right alignment: exact matches first, then stem matches."""
    pairs: list[tuple[int, int]] = []
    used_h: set[int] = set()
    used_r: set[int] = set()
    for key in (lambda w: w, _stem):
        index: dict[str, list[int]] = {}
        for j, w in enumerate(ref):
            if j not in used_r:
                index.setdefault(key(w), []).append(j)
        for i, w in enumerate(hyp):
            if i in used_h:
                continue
            slots = index.get(key(w))
            if slots:
                j = slots.pop(0)
                pairs.append((i, j))
                used_h.add(i)
                used_r.add(j)
    return sorted(pairs)


def _score(hyp: list[str], ref: list[str]) -> float:
    if not hyp or not ref:
        return 0.0
    pairs = _align(hyp, ref)
    matches = len(pairs)
    if matches == 0:
        return 0.0
    precision, recall = matches / len(hyp), matches / len(ref)
    fmean = precision * recall / (ALPHA * precision + (1 - ALPHA) * recall)
    chunks = 1 + sum(1 for (i0, j0), (i1, j1) in pairwise(pairs) if i1 != i0 + 1 or j1 != j0 + 1)
    penalty = GAMMA * (chunks / matches) ** BETA
    return fmean * (1 - penalty)


def meteor_like(output: str, references: Sequence[str]) -> float:
    """METEOR 1.0 without the synonym stage (exact + stem), best over references; in [0, 1]."""
    hyp = tokens(output)
    return max((_score(hyp, tokens(r)) for r in references), default=0.0)
