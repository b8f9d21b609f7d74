"""Locking a study: fingerprints of the protocol and its inputs, taken before any response is seen."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from humeval._version import __version__
from humeval.errors import DataError, ProtocolError
from humeval.files import read_json, write_json
from humeval.hashing import sha256_file, sha256_json
from humeval.study import StudyFolder, StudyLike, as_study

__all__ = ["Lock", "check_lock", "fingerprint", "lock_study", "read_lock", "release_lock", "require_lock"]


@dataclass(frozen=True)
class Lock:
    """The content of ``.humeval/lock.json``."""

    data: dict[str, Any]

    @property
    def protocol_sha256(self) -> str:
        return self.data["protocol"]["sha256"]


def fingerprint(study: StudyFolder) -> dict[str, Any]:
    """Hashes of everything a lock pins: the protocol file, each section of it, each input file."""
    protocol = study.protocol  # parses: a broken protocol cannot be locked
    missing = [p for p in study.input_files() if not p.is_file()]
    if missing:
        raise ProtocolError(f"cannot lock: input file {missing[0]} not found (data.files, data.judges or a judge's llm.prompt_file)")
    sections = {name: sha256_json(value) for name, value in protocol.model_dump(mode="json").items()}
    return {
        "protocol": {"path": study.relative(study.protocol_file), "sha256": sha256_file(study.protocol_file)},
        "sections": sections,
        "inputs": [{"path": study.relative(p), "sha256": sha256_file(p)} for p in study.input_files()],
        "seeds": {"study": protocol.study.seed, "sampling": protocol.sampling.seed or protocol.study.seed},
    }


def read_lock(study: StudyLike) -> Lock | None:
    """The study's lock, or None when it is not locked."""
    study = as_study(study)
    if not study.lock_file.is_file():
        return None
    try:
        return Lock(read_json(study.lock_file))
    except DataError as exc:
        raise ProtocolError(f"{exc}: corrupt lock file; restore it from version control") from None


def lock_study(study: StudyLike) -> Lock:
    """Write ``.humeval/lock.json`` after every ``validate`` check passed; refuses when the study is
    already locked or any check fails (the :class:`ProtocolError` lists every problem)."""
    study = as_study(study)
    from humeval import logbook
    from humeval.validate import validate_study

    if read_lock(study) is not None:
        raise ProtocolError(
            f"{study.lock_file}: the study is already locked. Show it with `humeval lock --show`; "
            "unlock explicitly with `humeval lock --release`."
        )
    problems = validate_study(study.root)
    if problems:
        raise ProtocolError(
            f"cannot lock {study.root}: {len(problems)} problem(s) (as `humeval validate` reports them):\n  "
            + "\n  ".join(problems),
            problems,
        )
    data = fingerprint(study) | {
        "locked_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "humeval_version": __version__,
    }
    write_json(study.lock_file, data)
    logbook.append(study, {"stage": "lock", "outcome": "ok", "protocol_sha256": data["protocol"]["sha256"]})
    return Lock(data)


def release_lock(study: StudyLike, reason: str = "") -> Lock:
    """Remove the lock (recorded in the logbook with the released hashes)."""
    study = as_study(study)
    from humeval import logbook

    lock = read_lock(study)
    if lock is None:
        raise ProtocolError(f"{study.root}: the study is not locked; nothing to release")
    study.lock_file.unlink()
    logbook.append(study, {"stage": "unlock", "outcome": "ok", "reason": reason, "released": lock.data})
    return lock


def check_lock(study: StudyLike) -> Lock | None:
    """Raise :class:`ProtocolError` when a locked study's protocol or inputs changed.

    The message names the file, the locked hash and the current hash (and for the
    protocol, which sections changed). Returns the lock, or None for an unlocked study.
    """
    study = as_study(study)
    lock = read_lock(study)
    if lock is None:
        return None
    changes = []
    proto = lock.data["protocol"]
    if not study.protocol_file.is_file():
        changes.append(f"{proto['path']}: missing (locked sha256 {proto['sha256']})")
    else:
        now = sha256_file(study.protocol_file)
        if now != proto["sha256"]:
            changed = _changed_sections(study, lock)
            what = f" (changed: {', '.join(changed)})" if changed else ""
            changes.append(f"{proto['path']}{what}: locked sha256 {proto['sha256']}, now {now}")
    for entry in lock.data["inputs"]:
        path = study.root / entry["path"]
        if not path.is_file():
            changes.append(f"{entry['path']}: missing (locked sha256 {entry['sha256']})")
            continue
        now = sha256_file(path)
        if now != entry["sha256"]:
            changes.append(f"{entry['path']}: locked sha256 {entry['sha256']}, now {now}")
    if changes:
        raise ProtocolError(
            "the study changed after it was locked:\n  "
            + "\n  ".join(changes)
            + "\nRestore the locked files, or unlock explicitly with `humeval lock --release` (recorded in the logbook).",
            changes,
        )
    return lock


def _changed_sections(study: StudyFolder, lock: Lock) -> list[str]:
    try:
        current = study.protocol.model_dump(mode="json")
    except ProtocolError:
        return ["does not parse"]
    old = lock.data.get("sections", {})
    keys = sorted(set(old) | set(current))
    return [k for k in keys if old.get(k) != (sha256_json(current[k]) if k in current else None)]


def require_lock(study: StudyFolder, command: str, *, required: bool = False, what: str = "",
                 unlocked: bool = False) -> Lock | None:
    """The one lock check of every stage and collection entry point.

    Refuses (:class:`ProtocolError`) a locked study whose protocol or inputs changed,
    naming the file, the changed sections and both hashes. With ``required``, refuses an
    unlocked study too unless ``unlocked`` (an explicit override the caller logs).
    Returns the lock (None for an unlocked study).
    """
    lock = check_lock(study)
    if lock is None and required and not unlocked:
        raise ProtocolError(
            f"{study.protocol_file}: `humeval {command}` {what or 'needs a locked study'}, but the study is not "
            f"locked. Lock it first with `humeval lock {study.root}` (before any response is seen)"
        )
    return lock
