"""One process of the elastic-resume trainer test:
``python elastic_child.py RANK WORLD STORE OUT.json CKPT save|resume`` (STORE: a new file for torch.distributed's file store).

Trains TinyNet on the shuffled id rows of ddp_child (batches of 4) for one epoch, under
torch.distributed on gloo when WORLD > 1, and writes the row ids it trained on. ``save`` checkpoints
after the second step on every rank and stops; ``resume`` continues that checkpoint (written on
any number of ranks).
"""

from __future__ import annotations

import json
import os
import sys

import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ddp_child import BATCH, id_dataset, make  # noqa: E402

import minddata as md  # noqa: E402
from minddata.trainer import LambdaCallback  # noqa: E402


def main() -> None:
    rank, world, store, out, ckpt, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
    md.config.set_seed(3)
    if world > 1:
        # A file store, not TCP: no rank hosts it, so the first rank to exit cannot abort another.
        dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world)
    try:
        model = make()
        seen: list[int] = []
        model.network.register_forward_pre_hook(lambda m, args: seen.extend(int(v) for v in args[0][:, 0]))

        def step_end(ctx):
            if mode == "save" and ctx.original_args().cur_step_num == 2:
                model.save_checkpoint(ckpt)
                ctx.request_stop()

        model.train(1, id_dataset(True).batch(BATCH), callbacks=[LambdaCallback(on_train_step_end=step_end)],
                    resume_from=ckpt if mode == "resume" else None)
        with open(out, "w") as f:
            json.dump({"seen": seen}, f)
        if world > 1:
            dist.barrier()
    finally:
        if world > 1:
            dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # Done and reported: leave without the interpreter's teardown, where gloo's threads, still being
    # joined, were seen to abort the process ("terminate called without an active exception").
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
