"""Reference-free features of one output: length, repetition, copying from the input."""

from __future__ import annotations

from itertools import pairwise

from humeval.metrics.meteor import tokens

__all__ = ["distinct2", "length", "length_ratio", "source_copy"]


def length(output: str) -> float:
    """Number of word tokens."""
    return float(len(tokens(output)))


def distinct2(output: str) -> float:
    """Share of distinct bigrams among the output's bigrams (1 = no repetition; 1 for < 2 tokens)."""
    words = tokens(output)
    grams = list(pairwise(words))
    return len(set(grams)) / len(grams) if grams else 1.0


def source_copy(output: str, source: str) -> float:
    """Share of output tokens that occur in the input (0 when there is no input)."""
    words = tokens(output)
    vocab = set(tokens(source))
    return sum(w in vocab for w in words) / len(words) if words and vocab else 0.0


def length_ratio(output: str, source: str) -> float:
    """Output tokens per input token (0 when there is no input)."""
    n_src = len(tokens(source))
    return len(tokens(output)) / n_src if n_src else 0.0
