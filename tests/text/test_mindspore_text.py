"""The text ops against MindSpore 2.10 itself: every case of text_differential.CASES runs eagerly under
``mindspore.dataset.text`` (in MindSpore's own Python, found or made by tests/peers.py) and under ``minddata.text``; tokens, offsets, ids and
vectors must be equal, with the same dtypes and shapes. Differences on purpose are in
docs/mindspore_differences.md and pinned by the tests named there."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
from peers import peer_env
from text_differential import CASES, run, write_files
from textkit import jieba_dict_path, sentencepiece_model

import minddata.common.dtype as mstype
from minddata import text

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "text_differential.py")


@pytest.fixture(scope="module")
def both(mindspore_python_path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("text-differential")
    paths = write_files(str(folder))
    paths["jieba_dict"] = jieba_dict_path()
    paths["hmm"] = text.JiebaTokenizer.write_hmm_model(str(folder / "hmm_model.utf8"))
    paths["spm"] = str(folder / "m.model")
    (folder / "m.model").write_bytes(sentencepiece_model().model_proto)
    (folder / "paths.json").write_text(json.dumps(paths))
    done = subprocess.run(
        [mindspore_python_path, RUNNER, str(folder / "paths.json"), str(folder / "mindspore.json")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(folder),
        env=peer_env(),
    )
    assert done.returncode == 0, f"the MindSpore run failed:\n{done.stderr[-3000:]}"
    mindspore = json.loads((folder / "mindspore.json").read_text(encoding="utf-8"))
    return mindspore, run(text, mstype, paths)


@pytest.mark.parametrize("name", list(CASES))
def test_text_op_matches_mindspore(both, name):
    ms, mine = both[0][name], both[1][name]
    assert "error" not in ms, f"MindSpore raised on {name}: {ms['error']}"
    assert "error" not in mine, f"minddata raised on {name}: {mine['error']}"
    assert len(mine) == len(ms), f"{name}: {len(mine)} outputs (MindSpore: {len(ms)})"
    for k, (a, b) in enumerate(zip(ms, mine)):
        where = f"{name}, output {k}"
        assert b["dtype"] == a["dtype"] and b["shape"] == a["shape"], (
            f"{where}: {b['dtype']} {b['shape']} vs {a}"
        )
        if a["dtype"].startswith("float"):
            np.testing.assert_allclose(np.array(b["values"]), np.array(a["values"]), rtol=1e-6, err_msg=where)
        else:
            assert b["values"] == a["values"], where
