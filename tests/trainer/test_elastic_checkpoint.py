"""A checkpoint of a data-parallel run holds every rank's data position, and ``resume_from`` on another
number of ranks trains on exactly the samples of the epoch the saving ranks had not consumed."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the trainer needs it")
if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
    pytest.skip("this torch build has no gloo backend for torch.distributed", allow_module_level=True)

from ddp_child import BATCH, ROWS, id_dataset  # noqa: E402
from trainer_nets import child_env  # noqa: E402

import minddata as md  # noqa: E402

CHILD = Path(__file__).resolve().parent / "elastic_child.py"


def _run(tmp_path, world: int, mode: str, ckpt: Path) -> list[list[int]]:
    """The row ids each of ``world`` processes trained on."""
    store = str(tmp_path / f"{mode}{world}.store")
    outs = [tmp_path / f"{mode}{world}-rank{r}.json" for r in range(world)]
    procs = [subprocess.Popen([sys.executable, str(CHILD), str(r), str(world), store, str(outs[r]), str(ckpt), mode],
                              env=child_env(), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
             for r in range(world)]
    try:
        errors = [p.communicate(timeout=240)[1] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=30)
    assert all(p.returncode == 0 for p in procs), errors
    return [json.loads(o.read_text())["seen"] for o in outs]


def test_a_two_rank_checkpoint_resumes_on_three_ranks_and_on_one(tmp_path):
    ckpt = tmp_path / "two.ckpt"
    saved = _run(tmp_path, 2, "save", ckpt)
    before = [i for seen in saved for i in seen]
    assert len(before) == 16 and len(set(before)) == 16
    checkpoint = torch.load(ckpt, weights_only=True)
    states = checkpoint["data_state"]
    assert isinstance(states, list) and [s["elastic"]["shard_id"] for s in states] == [0, 1]

    left = set(range(ROWS)) - set(before)
    three = [i for seen in _run(tmp_path, 3, "resume", ckpt) for i in seen]
    assert set(three) == left
    assert len(three) - len(left) == 3 * math.ceil(len(left) / 3) - len(left)  # padding to equal shares

    two = _run(tmp_path, 2, "resume", ckpt)  # the same world size: each rank continues its own share
    for saved_rank, resumed_rank in zip(saved, two):
        assert not set(saved_rank) & set(resumed_rank) and len(saved_rank) + len(resumed_rank) == ROWS // 2
    assert sorted(i for a in two for i in a) == sorted(left)

    (one,) = _run(tmp_path, 1, "resume", ckpt)
    md.config.set_seed(3)  # the children's seed: the uninterrupted single-process order
    full = [int(i) for b in id_dataset(True).batch(BATCH).create_tuple_iterator(num_epochs=1, output_numpy=True)
            for i in b[0][:, 0]]
    assert one == [i for i in full if i in left], "one process reads the rest in the single-rank order"
