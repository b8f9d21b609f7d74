"""Fixtures of the sampler tests."""

from __future__ import annotations

import pandas as pd
import pytest
from sampling_frames import make_frame


@pytest.fixture
def frame() -> pd.DataFrame:
    return make_frame()
