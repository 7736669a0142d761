"""Small networks and datasets shared by the trainer tests (and the resume/DDP child scripts)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

import minddata as md


class TinyNet(torch.nn.Module):
    """A 2-layer MLP with dropout, so that resuming must restore torch's RNG to repeat the losses."""

    def __init__(self, features: int = 4, classes: int = 3, dropout: float = 0.2) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(features, 16), torch.nn.ReLU(), torch.nn.Dropout(dropout))
        self.head = torch.nn.Linear(16, classes)

    def forward(self, x):
        return self.head(self.body(x))


def blobs(rows: int = 96, features: int = 4, classes: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Separable clusters: label k sits around k * 3 on every feature."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, size=rows).astype(np.int32)
    x = (y[:, None] * 3.0 + rng.normal(size=(rows, features))).astype(np.float32)
    return x, y


def blob_dataset(rows: int = 96, batch: int = 8, shuffle: bool = False, augment: bool = False, seed: int = 0):
    x, y = blobs(rows, seed=seed)
    ds = md.NumpySlicesDataset({"x": x, "label": y}, shuffle=shuffle)
    if augment:  # a random op, so that resuming must also restore the pipeline's augmentations
        ds = ds.map(md.transforms.RandomApply([lambda v: v * np.float32(1.01)], prob=0.5), input_columns="x")
    return ds.batch(batch)


def make_model(seed: int = 0, lr: float = 0.1, **kwargs):
    from minddata.trainer import Model

    torch.manual_seed(seed)
    net = TinyNet()
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
    return Model(net, torch.nn.CrossEntropyLoss(), optimizer, device="cpu", **kwargs)


def child_env() -> dict[str, str]:
    """Environment for a child Python process that must import the same minddata as this one (the
    checkout under ``python -m pytest``, the installed package in CI), whatever its working folder."""
    package_parent = str(Path(md.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": package_parent + os.pathsep + os.environ.get("PYTHONPATH", "")}
