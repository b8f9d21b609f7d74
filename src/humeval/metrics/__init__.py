"""Automatic metrics used as sampling features: BLEU, chrF, ROUGE-1/2/L, METEOR-like, length,
reference-free features and (optional) embedding similarity; computed in batch and cached."""

from humeval.metrics.cache import MetricCache, content_key, default_cache_dir
from humeval.metrics.compute import (
    METRICS,
    REFERENCE_FREE,
    REFERENCE_METRICS,
    compute_metrics,
    default_metrics,
    references_of,
)

__all__ = [
    "METRICS",
    "REFERENCE_FREE",
    "REFERENCE_METRICS",
    "MetricCache",
    "compute_metrics",
    "content_key",
    "default_cache_dir",
    "default_metrics",
    "references_of",
]
