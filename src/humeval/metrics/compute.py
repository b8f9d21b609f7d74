"""Computing automatic metrics for every output of a long table, cached, with a progress bar."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from humeval.errors import DataError, did_you_mean
from humeval.metrics import embedding, lexical, meteor, reference_free
from humeval.metrics.cache import MetricCache, content_key, default_cache_dir

__all__ = ["METRICS", "REFERENCE_FREE", "REFERENCE_METRICS", "Group", "compute_metrics", "default_metrics", "references_of"]


@dataclass(frozen=True)
class Group:
    """Metrics computed together: names of the columns and a row function (or a batch function)."""

    name: str
    columns: tuple[str, ...]
    version: str
    row: Callable[[str, list[str], str], tuple[float, ...]] | None = None
    batch: Callable[[list[str], list[list[str]], list[str]], np.ndarray] | None = None


def _embed_batch(outputs: list[str], refs: list[list[str]], sources: list[str]) -> np.ndarray:
    targets = [r if r else ([s] if s else []) for r, s in zip(refs, sources, strict=True)]
    return embedding.cosine_to_best(outputs, targets)[:, None]


_GROUPS = (
    Group("bleu", ("bleu",), "sacrebleu-bleu-eff", row=lambda o, r, s: (lexical.bleu(o, r),)),
    Group("chrf", ("chrf",), "sacrebleu-chrf", row=lambda o, r, s: (lexical.chrf(o, r),)),
    Group("rouge", ("rouge1", "rouge2", "rougeL"), "rouge-score-stem", row=lambda o, r, s: lexical.rouge(o, r)),
    Group("meteor", ("meteor",), "meteor-like-1", row=lambda o, r, s: (meteor.meteor_like(o, r),)),
    Group("length", ("length",), "1", row=lambda o, r, s: (reference_free.length(o),)),
    Group("distinct2", ("distinct2",), "1", row=lambda o, r, s: (reference_free.distinct2(o),)),
    Group("src_copy", ("src_copy",), "1", row=lambda o, r, s: (reference_free.source_copy(o, s),)),
    Group("len_ratio", ("len_ratio",), "1", row=lambda o, r, s: (reference_free.length_ratio(o, s),)),
    Group("embed", ("embed",), "all-MiniLM-L6-v2", batch=_embed_batch),
)
_BY_COLUMN = {c: g for g in _GROUPS for c in g.columns}
#: every metric name (the column is ``auto.<name>``)
METRICS = tuple(_BY_COLUMN)
REFERENCE_METRICS = ("bleu", "chrf", "rouge1", "rouge2", "rougeL", "meteor", "length")
REFERENCE_FREE = ("length", "distinct2", "src_copy", "len_ratio")
_NEEDS_REFS = {"bleu", "chrf", "rouge1", "rouge2", "rougeL", "meteor"}


def references_of(value: object) -> list[str]:
    """References of a cell: a list stays a list; a string is split on newlines; empty -> []."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return [str(v) for v in value if str(v).strip()]
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    return [line for line in str(value).split("\n") if line.strip()]


def default_metrics(frame: pd.DataFrame, references: str = "references") -> tuple[str, ...]:
    """Reference-based metrics when every row has a reference, else the reference-free ones."""
    if references in frame.columns and frame[references].map(references_of).map(bool).all():
        return REFERENCE_METRICS
    return REFERENCE_FREE


def compute_metrics(
    frame: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    *,
    output: str = "output",
    references: str = "references",
    source: str | None = None,
    cache_dir: str | Path | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """A copy of ``frame`` with one ``auto.<metric>`` column per metric.

    ``metrics`` defaults to :func:`default_metrics`. Values are cached under ``cache_dir``
    (default :func:`~humeval.metrics.cache.default_cache_dir`) by a SHA-256 of the metric
    version and the row's output, references and input; only new rows are computed.
    Reference-based metrics refuse rows without references.
    """
    names = tuple(metrics) if metrics else default_metrics(frame, references)
    for name in names:
        if name not in _BY_COLUMN:
            raise DataError(f"metrics: unknown metric '{name}'. {did_you_mean(name, METRICS)}")
    if output not in frame.columns:
        raise DataError(f"metrics: missing column '{output}'. {did_you_mean(output, [str(c) for c in frame.columns])}")
    if source is None:
        source = next((c for c in ("input", "source") if c in frame.columns), None)
    outs = frame[output].fillna("").astype(str).tolist()
    refs = frame[references].map(references_of).tolist() if references in frame.columns else [[] for _ in outs]
    srcs = frame[source].fillna("").astype(str).tolist() if source else ["" for _ in outs]
    if _NEEDS_REFS & set(names):
        missing = [i for i, r in enumerate(refs) if not r]
        if missing:
            wanted = sorted(_NEEDS_REFS & set(names))
            raise DataError(
                f"metrics: {', '.join(wanted)} need references, but {len(missing)} of {len(refs)} row(s) have none "
                f"(first: row {missing[0]}); use the reference-free metrics {', '.join(REFERENCE_FREE)}"
            )
    groups = list(dict.fromkeys(_BY_COLUMN[n] for n in names))
    result = frame.copy()
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("metrics {task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True, disable=not progress) as bar:
        for group in groups:
            values = _compute_group(group, outs, refs, srcs, directory, bar)
            for k, col in enumerate(group.columns):
                if col in names:
                    result[f"auto.{col}"] = values[:, k]
    return result


def _compute_group(
    group: Group, outs: list[str], refs: list[list[str]], srcs: list[str], directory: Path, bar: object
) -> np.ndarray:
    cache = MetricCache(directory, group.name)
    keys = [content_key(group.name, group.version, o, r, s) for o, r, s in zip(outs, refs, srcs, strict=True)]
    values = np.full((len(outs), len(group.columns)), np.nan)
    todo = []
    for i, key in enumerate(keys):
        hit = cache.get(key)
        if hit is not None and len(hit) == len(group.columns):
            values[i] = hit
        else:
            todo.append(i)
    task = bar.add_task(group.name, total=len(todo))  # type: ignore[attr-defined]
    new: dict[str, list[float]] = {}
    if group.batch is not None and todo:
        block = group.batch([outs[i] for i in todo], [refs[i] for i in todo], [srcs[i] for i in todo])
        values[todo] = block
        new = {keys[i]: [float(v) for v in block[k]] for k, i in enumerate(todo)}
        bar.update(task, advance=len(todo))  # type: ignore[attr-defined]
    elif group.row is not None:
        for i in todo:
            row = [float(v) for v in group.row(outs[i], refs[i], srcs[i])]
            values[i] = row
            new[keys[i]] = row
            bar.update(task, advance=1)  # type: ignore[attr-defined]
    cache.put_many(new)
    return values
