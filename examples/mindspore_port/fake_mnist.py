"""Write a small synthetic MNIST (the four idx files; 28x28 images of bars, one height per class) to DIR.

    python fake_mnist.py DIR [--train 2000] [--test 500]
"""

import argparse
import os
import struct

import numpy as np


def write(folder: str, prefix: str, count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, size=count).astype(np.uint8)
    images = rng.integers(0, 40, size=(count, 28, 28)).astype(np.uint8)
    for i, label in enumerate(labels):  # class k: a bright bar at row 2 + 2k, slightly jittered
        row = 2 + 2 * int(label) + int(rng.integers(0, 2))
        images[i, row : row + 2, 4:24] = 255
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{prefix}-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, count, 28, 28) + images.tobytes())
    with open(os.path.join(folder, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, count) + labels.tobytes())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--test", type=int, default=500)
    args = parser.parse_args()
    write(args.dir, "train", args.train, 0)
    write(args.dir, "t10k", args.test, 1)
