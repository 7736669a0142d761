"""One rank of the DDP test: ``python ddp_child.py RANK WORLD PORT OUT.json [shuffled]``.

Trains TinyNet (no dropout) on rows whose first feature is the row's id, for one epoch, under
torch.distributed on gloo; writes the row ids this rank trained on, the parameters after the first
step, and the step trace's all-reduce time. With ``shuffled``, the source shuffles and no process
calls ``config.set_seed`` (as ranks of a job that never set one); it trains two epochs and writes the
row ids of each epoch apart.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from trainer_nets import TinyNet  # noqa: E402

import minddata as md  # noqa: E402
from minddata.trainer import LambdaCallback, Model  # noqa: E402

ROWS, BATCH = 32, 4


def id_dataset(shuffle: bool = False):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(ROWS, 4)).astype(np.float32)
    x[:, 0] = np.arange(ROWS)
    y = (np.arange(ROWS) % 3).astype(np.int32)
    return md.NumpySlicesDataset({"x": x, "label": y}, shuffle=shuffle)


def make(seed: int = 0) -> Model:
    torch.manual_seed(seed)
    net = TinyNet(dropout=0.0)
    return Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=1.0), device="cpu")


def main() -> None:
    rank, world, store, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    shuffled = sys.argv[5:] == ["shuffled"]
    # A file store, not TCP: no rank hosts the store, so the first rank to exit cannot abort another
    # still tearing down its process group ("terminate called without an active exception").
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world)
    try:
        model = make()
        seen: list[int] = []
        epochs: list[list[int]] = []
        model.network.register_forward_pre_hook(lambda m, args: seen.extend(int(v) for v in args[0][:, 0]))
        after_first: list[list[float]] = []

        def snapshot(ctx):
            if ctx.original_args().cur_step_num == 1:
                after_first.extend(p.detach().flatten().tolist() for p in model.network.parameters())

        def epoch_end(ctx):
            epochs.append(seen[sum(map(len, epochs)):])

        wrapped: list[str] = []
        callbacks = [LambdaCallback(on_train_begin=lambda ctx: wrapped.append(type(ctx.original_args().train_network).__name__),
                                    on_train_step_end=snapshot, on_train_epoch_end=epoch_end)]
        with md.Profiler() as prof:
            model.train(2 if shuffled else 1, id_dataset(shuffled).batch(BATCH), callbacks=callbacks)
        allreduce = sum(step["allreduce"] for step in prof.train_steps())
        with open(out, "w") as f:
            json.dump({"seen": seen, "epochs": epochs, "params": after_first, "allreduce": allreduce,
                       "seeded": md.config.seed_is_set(), "wrapped": wrapped[0]}, f)
        dist.barrier()  # both ranks have written their reports before either tears down
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # Done and reported: leave without the interpreter's teardown, where gloo's threads, still being
    # joined, were seen to abort the process ("terminate called without an active exception").
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
