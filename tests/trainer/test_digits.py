"""End to end: scikit-learn's digits as PNG files → ImageFolder pipeline → small CNN, >= 95% held out."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="torch is not installed: the trainer needs it")
pytest.importorskip("sklearn", reason="scikit-learn is not installed (it bundles the digits)")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_digits_reach_95_percent_held_out(tmp_path):
    sys.path.insert(0, str(EXAMPLES))
    try:
        import digits
    finally:
        sys.path.remove(str(EXAMPLES))
    model, results = digits.train_digits(str(tmp_path), epochs=6)
    assert results["accuracy"] >= 0.95, results
    assert len(list((tmp_path / "train").rglob("*.png"))) + len(list((tmp_path / "test").rglob("*.png"))) == 1797
