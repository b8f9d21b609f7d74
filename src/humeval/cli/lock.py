"""``humeval lock``: pin the protocol and inputs by hash before any response is seen."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from humeval.cli._common import out


def lock(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    show: bool = typer.Option(False, "--show", help="Print the current lock instead of locking."),
    release: bool = typer.Option(False, "--release", help="Unlock explicitly (recorded in the logbook)."),
    reason: str = typer.Option("", "--reason", help="Why the lock is released (recorded with --release)."),
) -> None:
    """Write .humeval/lock.json: SHA-256 of the protocol and every input file, the seeds, the version, the time."""
    from humeval.errors import ProtocolError
    from humeval.lock import lock_study, read_lock, release_lock
    from humeval.study import StudyFolder

    study = StudyFolder.open(directory)
    if show:
        current = read_lock(study)
        if current is None:
            raise ProtocolError(f"{study.root}: the study is not locked; lock it with `humeval lock {directory}`")
        print(json.dumps(current.data, indent=2))
        return
    if release:
        released = release_lock(study, reason)
        out.print(f"released the lock of {released.data['locked_at']} (recorded in the logbook)")
        return
    locked = lock_study(study)
    out.print(f"locked {study.lock_file}: protocol sha256 {locked.protocol_sha256[:12]}..., {len(locked.data['inputs'])} input file(s)")
