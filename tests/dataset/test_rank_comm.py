"""Dataset.send / Dataset.recv between real ranks: three processes in a torch.distributed gloo group."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch.distributed")

RANK = r"""
import json, os, sys
import numpy as np
import torch, torch.distributed as dist
import minddata as md

rank, store, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=3)
ds = md.NumpySlicesDataset({"x": np.arange(4, dtype=np.float32).reshape(2, 2) + 10 * rank,
                            "y": np.array([rank, rank + 100], np.int64)}, shuffle=False)
got = {}
if rank == 1:
    ds.send()                                                    # its first row, to rank 0
    ds.send(dst=[0, 2])                                          # its second row, to ranks 0 and 2
    ds.send([np.array([True, False]), torch.arange(3, dtype=torch.int16)], dst=0)
    ds.send(np.zeros((2, 0), np.float16), dst=0)                 # an empty array
if rank == 2:
    ds.send(dst=0)
    got["from_1"] = ds.recv(1)
if rank == 0:
    got["first"] = ds.recv(1)
    got["both"] = ds.recv([1, 2])                                # rank 1's second row, then rank 2's first
    got["given"] = ds.recv(1)
    got["empty"] = ds.recv(src=1)
    got["own"] = [ds.recv(0), ds.recv(0), ds.recv(0)]            # its own rows, into the next epoch
dist.barrier()
dist.destroy_process_group()

def plain(v):
    if isinstance(v, list):
        return [plain(x) for x in v]
    return [type(v).__name__, str(v.dtype), list(v.shape), v.tolist()]

json.dump({k: plain(v) for k, v in got.items()}, open(out, "w"))
"""


@pytest.fixture(scope="module")
def received(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranks")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    ranks = [subprocess.Popen([sys.executable, "-c", RANK, str(r), str(folder / "store"), str(folder / f"{r}.json")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for r in range(3)]
    errors = []
    for r, process in enumerate(ranks):
        try:
            _, err = process.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            for p in ranks:
                p.kill()
            pytest.fail(f"rank {r} did not finish")
        if process.returncode:
            errors.append(f"rank {r}: {err[-2000:]}")
    assert not errors, "\n".join(errors)
    return [json.loads((folder / f"{r}.json").read_text()) for r in range(3)]


def test_a_row_goes_to_one_rank_as_its_columns(received):
    assert received[0]["first"] == [["Tensor", "float32", [2], [10.0, 11.0]], ["Tensor", "int64", [], 1]]


def test_a_row_goes_to_several_ranks_and_recv_from_several_lists_them_in_order(received):
    second_of_1 = [["Tensor", "float32", [2], [12.0, 13.0]], ["Tensor", "int64", [], 101]]
    first_of_2 = [["Tensor", "float32", [2], [20.0, 21.0]], ["Tensor", "int64", [], 2]]
    assert received[0]["both"] == [second_of_1, first_of_2]
    assert received[2]["from_1"] == second_of_1


def test_given_arrays_and_torch_tensors_keep_dtype_and_shape(received):
    assert received[0]["given"] == [["Tensor", "bool", [2], [True, False]], ["Tensor", "int16", [3], [0, 1, 2]]]
    assert received[0]["empty"] == ["Tensor", "float16", [2, 0], [[], []]]  # one array: itself, not a list


def test_recv_from_this_rank_reads_its_own_rows_across_epochs(received):
    assert [row[1][3] for row in received[0]["own"]] == [0, 100, 0]


def test_send_and_recv_need_torch_distributed_initialized():
    import minddata as md
    from minddata.errors import ArgumentError

    ds = md.NumpySlicesDataset({"x": [1]}, shuffle=False)
    with pytest.raises(ArgumentError, match=r"Dataset.recv: torch.distributed is not initialized; call"):
        ds.recv(0)
    with pytest.raises(ArgumentError, match=r"Dataset.send: `dst` must be a rank .* Found: -1"):
        ds.send(dst=-1)
    with pytest.raises(ArgumentError, match=r"Dataset.send: `group` must be None .* Found: 'hccl_world_group'"):
        ds.send(dst=1, group="hccl_world_group")
