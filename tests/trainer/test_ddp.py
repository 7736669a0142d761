"""Data-parallel training: two CPU processes on gloo against one process on the union of their batches."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the trainer needs it")
if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
    pytest.skip("this torch build has no gloo backend for torch.distributed", allow_module_level=True)

from ddp_child import BATCH, ROWS, id_dataset, make  # noqa: E402
from trainer_nets import child_env  # noqa: E402

from minddata.trainer import LambdaCallback  # noqa: E402

CHILD = Path(__file__).resolve().parent / "ddp_child.py"


def _run_ranks(tmp_path, *extra: str) -> list[dict]:
    """Run two ranks of ddp_child.py on gloo; their JSON reports."""
    store = str(tmp_path / f"{uuid.uuid4().hex}.store")  # new for each run: torch.distributed's file store
    outs = [tmp_path / f"rank{r}.json" for r in range(2)]
    procs = [subprocess.Popen([sys.executable, str(CHILD), str(r), "2", store, str(outs[r]), *extra], env=child_env(),
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for r in range(2)]
    try:
        errors = [p.communicate(timeout=240)[1] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=30)
    assert all(p.returncode == 0 for p in procs), errors
    return [json.loads(o.read_text()) for o in outs]


def test_two_ranks_read_disjoint_covering_shards_and_average_gradients(tmp_path):
    ranks = _run_ranks(tmp_path)
    assert all(r["wrapped"] == "DistributedDataParallel" for r in ranks)
    seen = [set(r["seen"]) for r in ranks]
    assert not seen[0] & seen[1] and seen[0] | seen[1] == set(range(ROWS))
    assert all(len(r["seen"]) == ROWS // 2 for r in ranks)
    assert all(r["allreduce"] > 0 for r in ranks)
    # Both ranks hold the same weights after the first step (the averaged gradient)...
    torch.testing.assert_close(torch.tensor(ranks[0]["params"][0]), torch.tensor(ranks[1]["params"][0]))
    # ...and they are those of one process trained on the union of the two first batches.
    single = make()
    first = sorted(r["seen"][i] for r in ranks for i in range(BATCH))
    assert first == list(range(2 * BATCH))
    params = []
    single.train(1, id_dataset().take(2 * BATCH).batch(2 * BATCH), callbacks=[LambdaCallback(
        on_train_step_end=lambda c: params.extend(p.detach().flatten().tolist() for p in single.network.parameters()))])
    for got, want in zip(ranks[0]["params"], params):
        torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-5, atol=1e-6)


def test_unseeded_shuffled_source_is_sharded_disjointly_in_every_epoch(tmp_path):
    # No rank calls config.set_seed: the automatic sharding draws the shuffle from the shard seed every
    # rank shares, as a source given num_shards does, instead of refusing.
    ranks = _run_ranks(tmp_path, "shuffled")
    assert not any(r["seeded"] for r in ranks)
    for epoch in range(2):
        seen = [r["epochs"][epoch] for r in ranks]
        assert [len(s) for s in seen] == [ROWS // 2, ROWS // 2]
        assert not set(seen[0]) & set(seen[1]) and set(seen[0]) | set(seen[1]) == set(range(ROWS))
    assert ranks[0]["epochs"][0] != sorted(ranks[0]["epochs"][0])  # shuffled...
    assert ranks[0]["epochs"][0] != ranks[0]["epochs"][1]  # ...and reshuffled each epoch
