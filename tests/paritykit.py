"""Shared by the train/serve parity tests: generated JPEG folders, a small network trained with
``Model`` on them, and its evaluation pipeline."""

from __future__ import annotations

import os

from testkit import make_jpeg

MEAN, STD = [120.0, 110.0, 100.0], [60.0, 60.0, 60.0]


def image_folder(root: str, per_class: int = 6) -> str:
    """Two classes of real JPEGs of assorted sizes (class 1 brighter)."""
    for c in range(2):
        os.makedirs(os.path.join(root, f"c{c}"), exist_ok=True)
        for i in range(per_class):
            data = make_jpeg(40 + 3 * i, 30 + 2 * i, seed=100 * c + i)
            with open(os.path.join(root, f"c{c}", f"{i}.jpg"), "wb") as f:
                f.write(data)
    return root


def eval_ops(interpolation=None):
    from minddata import vision

    resize = vision.Resize((20, 20)) if interpolation is None else vision.Resize((20, 20), interpolation)
    return [vision.Decode(), resize, vision.CenterCrop(16), vision.Normalize(MEAN, STD), vision.HWC2CHW()]


def eval_dataset(root: str, batch: int = 4):
    import minddata as md

    return md.ImageFolderDataset(root, shuffle=False).map(eval_ops(), input_columns="image").batch(batch)


def trained_model(root: str):
    """A small CNN trained for one epoch with ``Model`` on the folder's images."""
    import torch

    from minddata.trainer import Model

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                              torch.nn.Flatten(), torch.nn.Linear(4, 2))
    model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1))
    model.train(1, eval_dataset(root), dataset_sink_mode=False)
    return model


def files(root: str) -> list[bytes]:
    """The folder's images in ImageFolderDataset's order (shuffle=False)."""
    out = []
    for c in sorted(os.listdir(root)):
        for name in sorted(os.listdir(os.path.join(root, c))):
            with open(os.path.join(root, c, name), "rb") as f:
                out.append(f.read())
    return out


def set_metadata(path: str, key: str, value: str) -> None:
    """Rewrite one metadata_props entry of an ONNX file (what an edit of the file would do)."""
    import onnx

    proto = onnx.load(path)
    for p in proto.metadata_props:
        if p.key == key:
            p.value = value
    onnx.save(proto, path)


__all__ = ["MEAN", "STD", "eval_dataset", "eval_ops", "files", "image_folder", "set_metadata", "trained_model"]
