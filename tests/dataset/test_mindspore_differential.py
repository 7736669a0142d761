"""The same small pipelines under MindSpore 2.10 and minddata, outputs compared.

MindSpore needs numpy<2, so it runs in its own virtual environment, which tests/peers.py finds or
makes (``MINDDATA_MINDSPORE_PYTHON`` names another). Every pipeline of ``differential_pipelines.PIPELINES`` runs in one MindSpore process
(its import costs seconds), then here under minddata, and each is a test of its own: same columns,
same ``get_dataset_size()``, same rows, same dtypes and shapes, values equal (images within one
grey level, floats to 1e-5); and the pipelines of ``RAISING`` must raise a ``RuntimeError`` under
both. Differences minddata makes on purpose are listed in docs/mindspore_differences.md (with the
tests that pin them).
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
from differential_pipelines import PIPELINES, RAISING, load, make_data, minddata_lib, run
from peers import peer_env

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "differential_pipelines.py")


@pytest.fixture(scope="module")
def both(mindspore_python_path, tmp_path_factory):
    """``(mindspore results, minddata results)`` for every pipeline, computed once."""
    folder = str(tmp_path_factory.mktemp("differential"))
    paths = make_data(folder)
    paths_file = os.path.join(folder, "paths.json")
    with open(paths_file, "w") as out:
        json.dump(paths, out)
    prefix = os.path.join(folder, "mindspore")
    done = subprocess.run([mindspore_python_path, RUNNER, paths_file, prefix], capture_output=True, text=True,
                          timeout=300, cwd=folder, env=peer_env())
    assert done.returncode == 0, f"the MindSpore run failed:\n{done.stderr[-3000:]}"
    return load(prefix), run(minddata_lib(), paths)


def _same_value(name: str, row: int, col: int, ms: np.ndarray, mine: np.ndarray) -> None:
    where = f"{name}: row {row}, column {col}"
    assert mine.dtype == ms.dtype, f"{where}: dtype {mine.dtype} (MindSpore: {ms.dtype})"
    assert mine.shape == ms.shape, f"{where}: shape {mine.shape} (MindSpore: {ms.shape})"
    if ms.dtype.kind == "f":
        np.testing.assert_allclose(mine, ms, rtol=1e-5, atol=1e-5, err_msg=where)
    elif ms.dtype == np.uint8 and ms.ndim == 3:  # decoded images: one grey level
        diff = np.abs(mine.astype(np.int16) - ms.astype(np.int16))
        assert diff.max() <= 1, f"{where}: pixels differ by up to {diff.max()} (mean {diff.mean():.3f})"
    else:
        np.testing.assert_array_equal(mine, ms, err_msg=where)


@pytest.mark.parametrize("name", list(PIPELINES))
def test_pipeline_matches_mindspore(both, name):
    ms, mine = both[0][name], both[1][name]
    assert "error" not in ms, f"MindSpore raised on {name}: {ms['error']}"
    assert "error" not in mine, f"minddata raised on {name}: {mine['error']}"
    assert mine["columns"] == ms["columns"]
    assert mine["size"] == ms["size"]
    assert len(mine["rows"]) == len(ms["rows"])
    for i, (a, b) in enumerate(zip(ms["rows"], mine["rows"])):
        assert len(b) == len(a), f"{name}: row {i} has {len(b)} values (MindSpore: {len(a)})"
        for j, (x, y) in enumerate(zip(a, b)):
            _same_value(name, i, j, x, y)


@pytest.mark.parametrize("name", list(RAISING))
def test_pipeline_is_refused_with_a_runtime_error_as_by_mindspore(both, name):
    ms, mine = both[0][name], both[1][name]
    assert ms.get("runtime_error"), f"MindSpore did not raise a RuntimeError on {name}: {ms}"
    assert mine.get("runtime_error"), f"minddata did not raise a RuntimeError on {name}: {mine}"
