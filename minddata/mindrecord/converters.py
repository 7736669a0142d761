"""MindSpore's dataset → MindRecord converters (``ImageNetToMR``, ``MnistToMR``, ``Cifar10ToMR``,
``Cifar100ToMR``, ``CsvToMR``, ``TFRecordToMR``), writing the same
schema, index fields and page sizes as ``mindspore.mindrecord`` does.

Difference from MindSpore: images are taken in sorted order (MindSpore takes ``os.listdir`` order,
which varies by file system), so a conversion is reproducible.
"""

from __future__ import annotations

import csv
import gzip
import os
import pickle
import re
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from minddata.errors import ArgumentError, DataFormatError
from minddata.record.mindrecord_format import MindRecordWriter

__all__ = ["Cifar10ToMR", "Cifar100ToMR", "CsvToMR", "FixedLenFeature", "ImageNetToMR", "MnistToMR", "TFRecordToMR"]

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


class _CifarUnpickler(pickle.Unpickler):
    """CIFAR's Python-version batches are pickles: only NumPy's array reconstruction is allowed, as
    in MindSpore's reader, so a crafted file cannot run code."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in (("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
                              ("numpy", "ndarray"), ("numpy", "dtype")):
            return getattr(np, name) if module == "numpy" else np.core.multiarray._reconstruct
        raise pickle.UnpicklingError(f"global '{module}.{name}' is forbidden")


def _cifar_batch(where: str, path: str) -> dict:
    try:
        with open(path, "rb") as f:
            batch = _CifarUnpickler(f, encoding="bytes").load()
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, UnicodeDecodeError) as error:
        raise DataFormatError(f"{where}: {path} is not a CIFAR Python-version batch: {error}", path=path) from None
    if not isinstance(batch, dict) or b"data" not in batch:
        raise DataFormatError(f"{where}: {path} is not a CIFAR Python-version batch (no b'data').", path=path)
    return batch


def _cifar_images(batch: dict) -> np.ndarray:
    return np.asarray(batch[b"data"], np.uint8).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)


def _jpeg(rgb: np.ndarray) -> bytes:
    import cv2

    ok, encoded = cv2.imencode(".jpeg", np.ascontiguousarray(rgb[..., ::-1]))  # as MindSpore: BGR for OpenCV
    return encoded.tobytes()


def _write_one(destination: str, schema: dict, desc: str, fields: Any, rows: list[dict]) -> None:
    if fields is not None and not isinstance(fields, list):
        raise ArgumentError(f"{desc}: `fields` must be None or a list of index fields. Found: {fields!r}")
    writer = MindRecordWriter(destination, 1)
    try:
        writer.add_schema(schema, desc)
        if fields:
            writer.add_index(fields)
        writer.write_raw_data(rows)
        writer.commit()
    except BaseException:
        writer.abort()
        raise


class Cifar10ToMR:
    """CIFAR-10's Python-version batches (``data_batch_1`` ... ``data_batch_5``, ``test_batch``) →
    ``destination`` (train) and ``destination + "_test"`` (MindSpore's ``Cifar10ToMR``).

    Rows: ``id`` (int64, the row number), ``label`` (int64) and ``data`` (the 32x32 image as JPEG
    bytes, encoded by OpenCV as MindSpore does); ``transform(fields)`` makes ``fields`` index fields.
    The batches are read in name order (MindSpore: ``os.listdir`` order), and unpickled allowing only
    NumPy arrays.
    """

    def __init__(self, source: str, destination: str):
        where = "Cifar10ToMR"
        names = sorted(os.listdir(source)) if os.path.isdir(source) else []
        self.train_files = [os.path.join(source, n) for n in names if n.startswith("data_batch_")]
        self.test_files = [os.path.join(source, n) for n in names if n.startswith("test_batch")]
        if not self.train_files or not self.test_files:
            raise ArgumentError(f"{where}: {source} must hold CIFAR-10's data_batch_* and test_batch files.")
        self.source, self.destination = source, destination

    def _rows(self, files: list[str]) -> list[dict]:
        rows: list[dict] = []
        for path in files:
            batch = _cifar_batch("Cifar10ToMR", path)
            for image, label in zip(_cifar_images(batch), batch[b"labels"]):
                rows.append({"id": len(rows), "data": _jpeg(image), "label": int(label)})
        return rows

    def run(self, fields: list[str] | None = None) -> int:
        """Write both files; returns 0 (MindSpore's SUCCESS)."""
        schema = {"id": {"type": "int64"}, "label": {"type": "int64"}, "data": {"type": "bytes"}}
        _write_one(self.destination, schema, "img_train", fields, self._rows(self.train_files))
        _write_one(self.destination + "_test", schema, "img_test", fields, self._rows(self.test_files))
        return 0

    def transform(self, fields: list[str] | None = None) -> None:
        """Write both files (MindSpore's entry point)."""
        self.run(fields)


class Cifar100ToMR:
    """CIFAR-100's Python-version files ``train`` and ``test`` → ``destination`` and
    ``destination + "_test"`` (MindSpore's ``Cifar100ToMR``).

    Rows: ``id`` (int64), ``fine_label`` and ``coarse_label`` (int64) and ``data`` (JPEG bytes, as
    MindSpore encodes them); ``transform(fields)`` makes ``fields`` index fields.
    """

    def __init__(self, source: str, destination: str):
        where = "Cifar100ToMR"
        missing = [n for n in ("train", "test") if not os.path.isfile(os.path.join(source, n))]
        if missing:
            raise ArgumentError(f"{where}: {source} lacks {missing}; pass the folder of CIFAR-100's train and test files.")
        self.source, self.destination = source, destination

    def _rows(self, name: str) -> list[dict]:
        batch = _cifar_batch("Cifar100ToMR", os.path.join(self.source, name))
        return [{"id": i, "data": _jpeg(image), "fine_label": int(fine), "coarse_label": int(coarse)}
                for i, (image, fine, coarse) in enumerate(zip(_cifar_images(batch), batch[b"fine_labels"],
                                                                batch[b"coarse_labels"]))]

    def run(self, fields: list[str] | None = None) -> int:
        """Write both files; returns 0 (MindSpore's SUCCESS)."""
        schema = {"id": {"type": "int64"}, "fine_label": {"type": "int64"}, "coarse_label": {"type": "int64"},
                  "data": {"type": "bytes"}}
        _write_one(self.destination, schema, "img_train", fields, self._rows("train"))
        _write_one(self.destination + "_test", schema, "img_test", fields, self._rows("test"))
        return 0

    def transform(self, fields: list[str] | None = None) -> None:
        """Write both files (MindSpore's entry point)."""
        self.run(fields)


_INT_TEXT = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z|[+-]?(?:nan|inf)\Z", re.I)
_BOOL_TEXT = {"True": 1, "TRUE": 1, "true": 1, "False": 0, "FALSE": 0, "false": 0}


class CsvToMR:
    """A CSV file with a header row → MindRecord (MindSpore's ``CsvToMR``), without pandas.

    Column types are inferred as pandas' ``read_csv`` (which MindSpore uses) does for plain files:
    ``int64`` when every field is an integer, ``float64`` when every field is a number or empty
    (empty → NaN), booleans (``True``/``False``) as ``int32`` 0/1, else ``string``. Every column in
    ``columns_list`` (default: all) is written and made an index field, as MindSpore does.
    """

    def __init__(self, source: str, destination: str, columns_list: list[str] | None = None,
                 partition_number: int = 1):
        where = "CsvToMR"
        if not isinstance(source, str) or not isinstance(destination, str):
            raise ArgumentError(f"{where}: `source` and `destination` must be str.")
        if columns_list is not None and (not isinstance(columns_list, list)
                                         or not all(isinstance(c, str) for c in columns_list)):
            raise ArgumentError(f"{where}: `columns_list` must be a list of str. Found: {columns_list!r}")
        self.source, self.destination, self.columns_list = source, destination, columns_list
        self.partition_number = _partitions(where, partition_number)
        self.writer = MindRecordWriter(destination, self.partition_number)

    def _read(self) -> tuple[list[str], list[list[str]]]:
        try:
            with open(self.source, newline="", encoding="utf-8") as f:
                lines = [r for r in csv.reader(f)]
        except (OSError, csv.Error, UnicodeDecodeError) as error:
            raise DataFormatError(f"CsvToMR: can't read {self.source}: {error}", path=self.source) from None
        if not lines:
            raise DataFormatError(f"CsvToMR: {self.source} is empty.", path=self.source)
        header, rows = lines[0], [r for r in lines[1:] if r]
        for number, row in enumerate(rows, start=2):
            if len(row) != len(header):
                raise DataFormatError(f"CsvToMR: {self.source}, row {number}: {len(row)} fields but {len(header)} "
                                      "columns.", path=self.source)
        return header, rows

    def run(self) -> int:
        """Write the files; returns 0 (MindSpore's SUCCESS)."""
        header, rows = self._read()
        columns = self.columns_list or header
        for name in columns:
            if name not in header:
                raise ArgumentError(f"CsvToMR: `columns_list` names {name!r}, which {self.source} does not have.")
            if name.isdigit():
                raise ArgumentError(f"CsvToMR: column name {name!r} starts with a number, which MindRecord refuses.")
        schema, converters = {}, {}
        for name in columns:
            texts = [r[header.index(name)] for r in rows]
            if texts and all(_INT_TEXT.match(t) for t in texts):
                schema[name], converters[name] = {"type": "int64"}, int
            elif texts and all(t in _BOOL_TEXT for t in texts):
                schema[name], converters[name] = {"type": "int32"}, _BOOL_TEXT.__getitem__
            elif texts and all(t == "" or _FLOAT_TEXT.match(t) for t in texts):
                schema[name], converters[name] = {"type": "float64"}, lambda t: float(t) if t else float("nan")
            else:
                schema[name], converters[name] = {"type": "string"}, str
        positions = [header.index(n) for n in columns]
        records = ({n: converters[n](r[k]) for n, k in zip(columns, positions)} for r in rows)
        _write(self.writer, schema, "csv_schema", list(columns), records)
        return 0

    def transform(self) -> None:
        """Write the files (MindSpore's entry point)."""
        self.run()


class FixedLenFeature(tuple):
    """A fixed-length feature of a ``tf.train.Example``, as ``tf.io.FixedLenFeature`` (``shape``,
    ``dtype``, ``default_value``), for :class:`TFRecordToMR` without TensorFlow. ``dtype`` is a name
    (``"string"``, ``"int64"``, ``"float32"``, …), a NumPy dtype or a TensorFlow dtype; TensorFlow's
    own ``FixedLenFeature`` works the same.

    Examples:
        >>> from minddata.mindrecord import FixedLenFeature
        >>> FixedLenFeature([3], "float32").shape
        [3]
    """

    def __new__(cls, shape: Any, dtype: Any, default_value: Any = None) -> FixedLenFeature:
        return super().__new__(cls, (shape, dtype, default_value))

    shape = property(lambda self: self[0])
    dtype = property(lambda self: self[1])
    default_value = property(lambda self: self[2])


# TensorFlow's types → MindRecord's (MindSpore's table).
_TF_TO_MR = {
    "string": "string", "int8": "int32", "int16": "int32", "int32": "int32", "int64": "int64", "uint8": "int32",
    "uint16": "int32", "uint32": "int64", "uint64": "int64", "float16": "float32", "half": "float32",
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64", "bool": "int32",
}
_SPECIAL = set('!"#$%&\'()*+,-./:;<=>?@[\\]^`{|}~ ')


def _cast_name(key: str) -> str:
    """MindSpore's field name for a feature: punctuation and spaces (not ``_``) become ``_``."""
    return "".join("_" if c in _SPECIAL else c for c in key)


def _type_name(dtype: Any) -> str:
    name = getattr(dtype, "name", None)
    if not isinstance(name, str):
        name = str(np.dtype(dtype)) if not isinstance(dtype, str) else dtype
    return {"str": "string", "bytes": "string", "object": "string"}.get(name, name)


class TFRecordToMR:
    """A TFRecord file of ``tf.train.Example`` records → MindRecord (MindSpore's ``TFRecordToMR``), read
    with minddata's own TFRecord reader: TensorFlow is not needed.

    Args:
        source: the TFRecord file.
        destination: the MindRecord file to write (one shard).
        feature_dict: ``{feature name: FixedLenFeature(shape, dtype)}`` (``tf.io.FixedLenFeature`` or
            :class:`FixedLenFeature`): shape ``[]`` for a scalar, ``[n]`` for a list of n numbers.
        bytes_fields: string features to write as ``bytes`` (e.g. images) rather than text.

    The schema is MindSpore's: a scalar string is a ``string`` field (``bytes`` when listed in
    ``bytes_fields``), integers are ``int32``/``int64`` and floats ``float32``/``float64`` as in
    MindSpore's type table, a list is an array field of shape ``[n]``; feature names have their
    punctuation and spaces replaced by ``_``. A record whose feature is missing (and has no default) or
    has another length is an error naming the record.

    Examples:
        >>> from minddata.mindrecord import FixedLenFeature, TFRecordToMR
        >>> TFRecordToMR("in.tfrecord", "out.mindrecord", {"label": FixedLenFeature([], "int64")}).mindrecord_schema
        {'label': {'type': 'int64'}}
    """

    def __init__(self, source: str, destination: str, feature_dict: dict, bytes_fields: list[str] | None = None):
        where = "TFRecordToMR"
        if not isinstance(source, str) or not isinstance(destination, str):
            raise ArgumentError(f"{where}: `source` and `destination` must be str.")
        if not isinstance(feature_dict, dict) or not feature_dict:
            raise ArgumentError(f"{where}: `feature_dict` must be a dict of FixedLenFeature. Found: {feature_dict!r}")
        for key, feature in feature_dict.items():
            if not (hasattr(feature, "shape") and hasattr(feature, "dtype")):
                raise ArgumentError(f"{where}: feature_dict[{key!r}] must be a FixedLenFeature. Found: {feature!r}")
        self.source, self.destination, self.feature_dict = source, destination, feature_dict
        if bytes_fields is not None and not isinstance(bytes_fields, list):
            raise ArgumentError(f"{where}: `bytes_fields` must be list(str). Found: {bytes_fields!r}")
        self.bytes_fields_list: list[str] = []
        for item in bytes_fields or []:
            if not isinstance(item, str) or item not in feature_dict:
                raise ArgumentError(f"{where}: `bytes_fields` items must be names of feature_dict. Found: {item!r}")
            if _type_name(feature_dict[item].dtype) != "string":
                raise ArgumentError(f"{where}: bytes field {item!r} must be a string feature in feature_dict")
            self.bytes_fields_list.append(_cast_name(item))
        self.mindrecord_schema = self._schema(where)

    def _schema(self, where: str) -> dict:
        schema: dict[str, dict] = {}
        for key, feature in self.feature_dict.items():
            name, kind = _cast_name(key), _type_name(feature.dtype)
            if kind not in _TF_TO_MR:
                raise ArgumentError(f"{where}: feature_dict[{key!r}] has type {kind}, which MindRecord can't hold")
            shape = list(feature.shape) if feature.shape is not None else []
            if not shape:
                schema[name] = {"type": "bytes" if name in self.bytes_fields_list else _TF_TO_MR[kind]}
                continue
            if len(shape) != 1 or not isinstance(shape[0], int) or shape[0] < 1:
                raise ArgumentError(f"{where}: feature_dict[{key!r}].shape must be [] or [n] with n > 0. Found: {shape}")
            if kind == "string":
                raise ArgumentError(f"{where}: feature_dict[{key!r}] is a list of strings, which is not supported")
            schema[name] = {"type": _TF_TO_MR[kind], "shape": [shape[0]]}
        return schema

    def _rows(self) -> Iterator[dict]:
        from minddata.dataset._protobuf import ProtobufError, parse_example
        from minddata.dataset.text_sources import _records

        where = "TFRecordToMR"
        for number, _, data in _records(self.source, ""):
            try:
                features = parse_example(data)  # type: ignore[arg-type]  # _records reads each record's data here
            except ProtobufError as error:
                raise DataFormatError(f"{where}: {self.source}, record {number}: not a tf.train.Example: {error}",
                                      path=self.source) from None
            yield {_cast_name(key): self._value(where, number, key, feature, features.get(key))
                   for key, feature in self.feature_dict.items()}

    def _value(self, where: str, number: int, key: str, feature: Any, found: Any) -> Any:
        name, kind = _cast_name(key), _type_name(feature.dtype)
        field = self.mindrecord_schema[name]
        shape = list(feature.shape) if feature.shape is not None else []
        values: Any
        if found is None or found[0] == "empty":
            if feature.default_value is None:
                raise DataFormatError(f"{where}: {self.source}, record {number}: feature {key!r} is missing and has "
                                      "no default_value", path=self.source)
            values = np.atleast_1d(np.asarray(feature.default_value))
        else:
            values = found[1]
            if (kind == "string") != (found[0] == "bytes"):
                raise DataFormatError(f"{where}: {self.source}, record {number}: feature {key!r} holds a "
                                      f"{found[0]} list, not {kind}", path=self.source)
        expected = shape[0] if shape else 1
        if len(values) != expected:
            raise DataFormatError(f"{where}: {self.source}, record {number}: feature {key!r} has {len(values)} "
                                  f"values; feature_dict says {expected}", path=self.source)
        if kind == "string":
            value = values[0] if isinstance(values[0], bytes) else str(values[0]).encode()
            if field["type"] == "bytes":
                return value
            try:
                return value.decode("utf-8")
            except UnicodeDecodeError:
                raise DataFormatError(f"{where}: {self.source}, record {number}: feature {key!r} is not UTF-8 text; "
                                      "name it in bytes_fields to keep it as bytes", path=self.source) from None
        if shape:
            return np.asarray(values, field["type"])
        return int(values[0]) if field["type"].startswith("int") else float(values[0])

    def run(self) -> int:
        """Convert; returns ``SUCCESS`` (0)."""
        writer = MindRecordWriter(self.destination)
        writer.add_schema(self.mindrecord_schema, "TFRecord to MindRecord")
        batch: list[dict] = []
        try:
            for row in self._rows():
                batch.append(row)
                if len(batch) == _BATCH:
                    writer.write_raw_data(batch, True)
                    batch = []
            if batch:
                writer.write_raw_data(batch, True)
            writer.commit()
        except BaseException:
            writer.abort()
            raise
        return 0

    def transform(self) -> None:
        """Convert (MindSpore's entry point); errors are raised."""
        self.run()
