"""Opaque row keys: what a participant-facing file carries instead of a task id.

Task ids name the systems (``item|sysA+sysB|criterion``), so a file handed to participants
(an MTurk batch, a re-run batch, a spreadsheet) carries a random key per row instead. The
key file (``.humeval/keys/<results folder>.jsonl``, never handed out) maps each key to its
task id, the display order of the systems and the batch it was written for; a platform
import maps the answers back through it. Keys are only ever appended, so results of an
old batch stay importable after a new batch (or a re-run batch) is written.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from humeval.errors import PlatformError
from humeval.files import read_jsonl, write_jsonl

__all__ = ["RowKey", "append_keys", "key_file", "new_key", "read_keys", "rerun_lists_file", "study_key_file"]


@dataclass(frozen=True)
class RowKey:
    """One row of a participant-facing file: its key, task, systems in display order, and batch."""

    key: str
    task_id: str
    order: tuple[str, ...]
    batch: str


def key_file(state_dir: Path, results_root: Path, study_root: Path) -> Path:
    """The key file of a results folder: ``results`` -> ``.humeval/keys/results.jsonl``."""
    try:
        name = results_root.resolve().relative_to(study_root.resolve()).as_posix().replace("/", "-")
    except ValueError:
        name = results_root.name
    return state_dir / "keys" / f"{name or 'results'}.jsonl"


def study_key_file(study: Any) -> Path:
    """The key file of a study's own results folder (``.humeval/keys/results.jsonl``)."""
    return key_file(study.state_dir, study.results_dir, study.root)


def rerun_lists_file(key_path: Path) -> Path:
    """The re-run lists ``collate`` deals for the server, next to the key file (never handed out)."""
    return key_path.with_name(key_path.stem + ".rerun-lists.jsonl")


def new_key() -> str:
    """A fresh opaque key (64 random bits, hex): it reveals nothing about the task."""
    return secrets.token_hex(8)


def append_keys(path: Path, keys: list[RowKey]) -> Path:
    """Add ``keys`` to the key file (one atomic rewrite: existing keys are kept as they were)."""
    old = read_jsonl(path) if path.is_file() else []
    new = [{"key": k.key, "task_id": k.task_id, "order": list(k.order), "batch": k.batch} for k in keys]
    return write_jsonl(path, [*old, *new])


def read_keys(path: Path) -> dict[str, RowKey]:
    """Every key written for this results folder (refuses when the key file is missing)."""
    if not path.is_file():
        raise PlatformError(
            f"{path}: no key file. It is written next to the study's lock by `humeval export --format mturk-batch` "
            "and by `humeval collate` (re-run batches); it maps the opaque row keys of a batch back to tasks"
        )
    rows = read_jsonl(path)
    return {r["key"]: RowKey(r["key"], r["task_id"], tuple(r["order"]), r.get("batch", "")) for r in rows}
