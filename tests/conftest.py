"""Shared fixtures: where the reference data sets are, and a scratch study."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """The reference data sets: ``$HUMEVAL_SHARED_DATA`` or ``../shared/data`` next to the project."""
    return Path(os.environ.get("HUMEVAL_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if not path.is_dir():
        pytest.fail(f"reference data not found at {path}; set HUMEVAL_SHARED_DATA")
    return path
