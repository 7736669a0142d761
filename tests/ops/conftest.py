"""Fixtures of the vision op tests: a photo-like image and a drawing with hard edges."""

from __future__ import annotations

import numpy as np
import pytest
from vision_testing import make_drawing, make_photo


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    return make_photo()


@pytest.fixture(scope="module")
def drawing() -> np.ndarray:
    return make_drawing()
