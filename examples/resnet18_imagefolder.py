"""ResNet-18 trained on an ImageFolder with minddata's Model, the step trace printed.

    python examples/resnet18_imagefolder.py [FOLDER] [--epochs 1] [--batch 32] [--size 112] [--network]

FOLDER holds one sub-folder of JPEG/PNG images per class (ImageFolder layout); without it a small
synthetic folder (3 classes of random JPEGs) is written to a temporary directory, so the example runs
anywhere. torchvision's ResNet-18 is used when torchvision is installed, else minddata.trainer.nets'
compact definition (the same architecture). Inside ``minddata.Profiler()`` the run needs no other code for its step
trace: the print shows per-step data wait, copy, forward, backward, optimizer and callbacks, joined to
the pipeline's stages, with the data-bound verdict. ``--network`` adds torch.profiler's per-operator
and per-layer times; ``--trace PATH`` writes one Chrome trace with pipeline stages and steps.
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile

import numpy as np
import torch
from PIL import Image

import minddata as md
from minddata import vision
from minddata.trainer import LossMonitor, Model, TimeMonitor
from minddata.trainer.nets import resnet18


def synthetic_folder(root: str, classes: int = 3, per_class: int = 32, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    for c in range(classes):
        os.makedirs(os.path.join(root, f"class{c}"), exist_ok=True)
        for i in range(per_class):
            pixels = rng.integers(0, 255, size=(160, 200, 3), dtype=np.uint8)
            pixels[..., c % 3] = 255 - pixels[..., c % 3] // 4  # a colour cast per class: learnable
            buf = io.BytesIO()
            Image.fromarray(pixels).save(buf, format="JPEG", quality=85)
            with open(os.path.join(root, f"class{c}", f"{i:03d}.jpg"), "wb") as f:
                f.write(buf.getvalue())
    return root


def train_pipeline(folder: str, size: int, batch: int, workers: int) -> md.Dataset:
    ds = md.ImageFolderDataset(folder, shuffle=True, num_parallel_workers=workers)
    ds = ds.map([vision.Decode(), vision.RandomResizedCrop(size), vision.RandomHorizontalFlip(),
                 vision.Normalize(mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375]), vision.HWC2CHW()],
                input_columns="image", num_parallel_workers=workers)
    return ds.batch(batch, drop_remainder=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", help="an ImageFolder (default: a synthetic one)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--size", type=int, default=112)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--network", action="store_true", help="profile the network's operators (torch.profiler)")
    parser.add_argument("--trace", help="write one Chrome trace (pipeline stages and steps) to this file")
    args = parser.parse_args()
    md.config.set_seed(0)
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder or synthetic_folder(tmp)
        classes = len([d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d))])
        net = resnet18(classes)
        model = Model(net, torch.nn.CrossEntropyLoss(),
                      torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4),
                      amp_level="O1" if torch.cuda.is_available() else "O0")
        ds = train_pipeline(folder, args.size, args.batch, args.workers)
        with md.Profiler(network=args.network) as prof:
            model.train(args.epochs, ds, callbacks=[LossMonitor(1), TimeMonitor()])
        print()
        print(prof.training_summary())  # the step trace, joined to the pipeline, with the verdict
        print()
        print(prof.summary())  # the pipeline's stages
        if args.trace:
            print(f"Chrome trace: {prof.export_chrome_trace(args.trace)}")


if __name__ == "__main__":
    main()
