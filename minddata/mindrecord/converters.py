"""MindSpore's dataset → MindRecord converters (``ImageNetToMR``, ``MnistToMR``), writing the same
schema, index fields and page sizes as ``mindspore.mindrecord`` does.

Difference from MindSpore: images are taken in sorted order (MindSpore takes ``os.listdir`` order,
which varies by file system), so a conversion is reproducible.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from minddata.errors import ArgumentError, DataFormatError
from minddata.record.mindrecord_format import MindRecordWriter

__all__ = ["ImageNetToMR", "MnistToMR"]

_BATCH = 256


def _partitions(where: str, partition_number: Any) -> int:
    if isinstance(partition_number, bool) or not isinstance(partition_number, int) or not 1 <= partition_number <= 1000:
        raise ArgumentError(f"{where}: `partition_number` must be an int in [1, 1000]. Found: {partition_number!r}")
    return partition_number


def _write(writer: MindRecordWriter, schema: dict, desc: str, index: list[str], rows: Iterable[dict]) -> None:
    writer.set_header_size(1 << 24)
    writer.set_page_size(1 << 26)
    writer.add_schema(schema, desc)
    writer.add_index(index)
    batch: list[dict] = []
    try:
        for row in rows:
            batch.append(row)
            if len(batch) == _BATCH:  # MindSpore's batches: each is split across the shards
                writer.write_raw_data(batch)
                batch = []
        if batch:
            writer.write_raw_data(batch)
        writer.commit()
    except BaseException:
        writer.abort()
        raise


class ImageNetToMR:
    """ImageNet-style folders → MindRecord (MindSpore's ``mindspore.mindrecord.ImageNetToMR``).

    Args:
        map_file: lines ``<folder> <label>`` (``n01440764 0``).
        image_dir: the folder holding those class folders of ``.JPEG``/``.jpg`` images.
        destination: the MindRecord file to write.
        partition_number: shard files to write.

    Rows: ``file_name`` (the image's path), ``label`` (int32), ``image`` (the file's bytes); index
    fields ``label`` and ``file_name``.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> from minddata.mindrecord import ImageNetToMR
        >>> root = tempfile.mkdtemp()
        >>> os.makedirs(os.path.join(root, "n01"))
        >>> with open(os.path.join(root, "n01", "a.jpg"), "wb") as f:
        ...     _ = f.write(b"jpeg bytes")
        >>> with open(os.path.join(root, "labels.txt"), "w") as f:
        ...     _ = f.write("n01 0\\n")
        >>> ImageNetToMR(os.path.join(root, "labels.txt"), root, os.path.join(root, "in.mindrecord")).transform()
        >>> md.MindDataset(os.path.join(root, "in.mindrecord")).get_dataset_size()
        1
    """

    def __init__(self, map_file: str, image_dir: str, destination: str, partition_number: int = 1):
        where = "ImageNetToMR"
        if not os.path.isfile(map_file):
            raise ArgumentError(f"{where}: map_file {map_file} does not exist; pass a file of '<folder> <label>' lines.")
        if not os.path.isdir(image_dir):
            raise ArgumentError(f"{where}: image_dir {image_dir} is not a folder of class folders.")
        self.map_file = map_file
        self.image_dir = image_dir
        self.destination = destination
        self.partition_number = _partitions(where, partition_number)
        self.writer = MindRecordWriter(destination, self.partition_number)

    def _rows(self) -> Iterator[dict]:
        folders: list[tuple[int, str]] = []
        with open(self.map_file, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                parts = line.split()
                if not parts:
                    continue
                if len(parts) != 2 or not parts[1].lstrip("-").isdigit():
                    raise DataFormatError(
                        f"ImageNetToMR: {self.map_file}, line {number}: expected '<folder> <label>' (like "
                        "'n01440764 0').",
                        path=self.map_file,
                    )
                folder = os.path.join(self.image_dir, parts[0])
                if os.path.isdir(folder):
                    folders.append((int(parts[1]), folder))
        if not folders:
            raise DataFormatError(
                f"ImageNetToMR: none of the folders named in {self.map_file} exists in {self.image_dir}.",
                path=self.map_file,
            )
        for label, folder in folders:
            for item in sorted(os.listdir(folder)):
                if not item.endswith(("JPEG", "jpg")):
                    continue
                path = os.path.join(folder, item)
                with open(path, "rb") as f:
                    data = f.read()
                if data:
                    yield {"file_name": path, "label": label, "image": data}

    def run(self) -> int:
        """Write the files; returns 0 (MindSpore's SUCCESS)."""
        schema = {"label": {"type": "int32"}, "image": {"type": "bytes"}, "file_name": {"type": "string"}}
        _write(self.writer, schema, "imagenet_schema", ["label", "file_name"], self._rows())
        return 0

    def transform(self) -> None:
        """Write the files (MindSpore's entry point)."""
        self.run()


class MnistToMR:
    """MNIST's gzipped IDX files → ``<destination>_train.mindrecord`` and ``<destination>_test.mindrecord``
    (MindSpore's ``mindspore.mindrecord.MnistToMR``).

    Args:
        source: the folder with ``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``,
            ``t10k-images-idx3-ubyte.gz`` and ``t10k-labels-idx1-ubyte.gz``.
        destination: the prefix of the two MindRecord files.
        partition_number: shard files to write for each.

    Rows: ``label`` (int64) and ``data`` (the 28x28 image as JPEG bytes, as MindSpore encodes it);
    index field ``label``.
    """

    _FILES = {
        "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
        "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
    }

    def __init__(self, source: str, destination: str, partition_number: int = 1):
        where = "MnistToMR"
        missing = [n for pair in self._FILES.values() for n in pair if not os.path.isfile(os.path.join(source, n))]
        if missing:
            raise ArgumentError(f"{where}: {source} lacks {missing}; pass the folder of MNIST's four .gz files.")
        self.source = source
        self.destination = destination
        self.partition_number = _partitions(where, partition_number)
        self.writer_train = MindRecordWriter(f"{destination}_train.mindrecord", self.partition_number)
        self.writer_test = MindRecordWriter(f"{destination}_test.mindrecord", self.partition_number)

    def _read(self, name: str, header: int) -> np.ndarray:
        path = os.path.join(self.source, name)
        try:
            with gzip.open(path, "rb") as f:
                data = f.read()
        except (OSError, EOFError) as error:
            raise DataFormatError(f"MnistToMR: can't read {path}: {error}", path=path) from None
        if len(data) < header:
            raise DataFormatError(f"MnistToMR: {path} is truncated ({len(data)} bytes).", path=path)
        return np.frombuffer(data, np.uint8, offset=header)

    def _rows(self, part: str) -> Iterator[dict]:
        import cv2

        images_name, labels_name = self._FILES[part]
        images = self._read(images_name, 16)
        labels = self._read(labels_name, 8)
        if images.size != labels.size * 28 * 28:
            raise DataFormatError(
                f"MnistToMR: {images_name} holds {images.size // 784} images but {labels_name} {labels.size} labels.",
                path=os.path.join(self.source, images_name),
            )
        for image, label in zip(images.reshape(-1, 28, 28, 1), labels.tolist()):
            ok, encoded = cv2.imencode(".jpeg", image)
            yield {"label": int(label), "data": encoded.tobytes()}

    def run(self) -> int:
        """Write both files; returns 0 (MindSpore's SUCCESS)."""
        schema = {"label": {"type": "int64"}, "data": {"type": "bytes"}}
        _write(self.writer_train, schema, "mnist_schema", ["label"], self._rows("train"))
        _write(self.writer_test, schema, "mnist_schema", ["label"], self._rows("test"))
        return 0

    def transform(self) -> None:
        """Write both files (MindSpore's entry point)."""
        self.run()
