"""Fixtures shared by the engine's stage tests."""

from __future__ import annotations

import pytest

from minddata.engine.runtime import Runtime


@pytest.fixture
def rt():
    """A runtime of its own, closed after the test, which must leave none of its threads running."""
    runtime = Runtime(seed=0, error_mode="raise")
    yield runtime
    runtime.close()
    assert not runtime.alive_threads()
