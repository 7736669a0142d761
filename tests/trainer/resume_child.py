"""Child process of the exact-resume test: trains TinyNet on a shuffled, augmented pipeline and appends
each step's loss (as float.hex, so equality is bit for bit) to a file.

    python resume_child.py LOSSES CKPT_DIR full
    python resume_child.py LOSSES CKPT_DIR hang-at STEP   # checkpoints every 5 steps, then blocks at STEP
    python resume_child.py LOSSES CKPT_DIR resume PATH
"""

from __future__ import annotations

import os
import sys
import time

import torch

torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)

import minddata as md  # noqa: E402
from minddata.trainer import CheckpointConfig, LambdaCallback, ModelCheckpoint  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trainer_nets import blob_dataset, make_model  # noqa: E402


def main() -> None:
    losses_path, ckpt_dir, mode = sys.argv[1:4]
    md.config.set_seed(3)
    model = make_model(seed=5)
    ds = blob_dataset(rows=96, batch=8, shuffle=True, augment=True)

    def record(ctx):
        with open(losses_path, "a") as f:
            f.write(f"{ctx.original_args().cur_step_num} {float(ctx.original_args().net_outputs).hex()}\n")

    callbacks = [LambdaCallback(on_train_step_end=record)]
    resume = None
    if mode == "hang-at":
        hang = int(sys.argv[4])

        def block(ctx):
            if ctx.original_args().cur_step_num + 1 == hang:
                open(os.path.join(ckpt_dir, "ready"), "w").close()
                time.sleep(120)  # the parent SIGKILLs us here

        callbacks += [ModelCheckpoint("run", ckpt_dir, CheckpointConfig(save_checkpoint_steps=5, keep_checkpoint_max=2)),
                      LambdaCallback(on_train_step_begin=block)]
    elif mode == "resume":
        resume = sys.argv[4]
    model.train(2, ds, callbacks=callbacks, resume_from=resume)


if __name__ == "__main__":
    main()
