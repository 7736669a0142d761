"""Image folder → record files, and record files between MindRecord and Arrow (``minddata convert``).

Both write MindSpore's MindRecord format by default (MindSpore reads it, and so does
:class:`minddata.MindDataset`); ``format="arrow"`` writes minddata's Arrow record files instead.
Image folder rows hold ``file_name`` (the path below the folder, string), ``label`` (int32, the class's index as
:class:`minddata.ImageFolderDataset` assigns it) and ``image`` (the file's bytes, undecoded), in
the folder's sorted order; ``label`` and ``file_name`` are index fields.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minddata.errors import ArgumentError, DataFormatError
from minddata.record.writer import ArrowRecordWriter

__all__ = [
    "convert_image_folder", "convert_records", "ConvertResult", "RecordConvertResult", "IMAGE_FOLDER_SCHEMA", "FORMATS",
]

# What a conversion can write: MindSpore's MindRecord files (the default) or minddata's Arrow record files.
FORMATS = ("mindrecord", "arrow")

IMAGE_FOLDER_SCHEMA = {"file_name": {"type": "string"}, "label": {"type": "int32"}, "image": {"type": "bytes"}}


@dataclass
class ConvertResult:
    images: int
    bytes: int
    seconds: float
    files: list[str]
    classes: dict[str, int]
    # "<path>: <why>" for each image left out by ``skip_bad``.
    skipped: list[str] = field(default_factory=list)


def convert_image_folder(
    source: str | os.PathLike,
    dest: str | os.PathLike,
    *,
    shard_num: int = 1,
    overwrite: bool = False,
    extensions: Sequence[str] | None = None,
    progress: Callable[[int, int, int], None] | None = None,
    check: str = "header",
    skip_bad: bool = False,
    executor: str = "local",
    format: str = "mindrecord",
) -> ConvertResult:
    """Write every image of ``source/<class>/<image>`` to the record set ``dest``.

    ``format`` is ``"mindrecord"`` (MindSpore's format, which MindSpore reads; the default) or
    ``"arrow"`` (minddata's Arrow record files). Either way the rows go to the shards in contiguous
    blocks, so :class:`minddata.MindDataset` reads the set back in the folder's order with
    ``shuffle=False``.

    ``executor="ray"`` reads the images in Ray tasks (an ``ImageFolderDataset`` run with
    ``executor="ray"``, on the cluster ``ray.init()`` connected to); the writer stays in this process.

    ``progress(done, total, bytes_done)`` is called as rows are written. Nothing appears under
    ``dest`` unless every image was read and written (the writer commits at the end). Missing folders
    above ``dest`` are created (and removed again if the conversion fails).

    ``check`` looks at each image before it is written: ``"header"`` (the default) parses its header
    with the decoder that will read it, ``"decode"`` decodes it fully, ``"none"`` copies bytes blindly.
    An image that fails stops the conversion with an error naming it, or with ``skip_bad`` is left out
    and listed in ``ConvertResult.skipped``.

    Examples:
        >>> import os, tempfile
        >>> from PIL import Image
        >>> import minddata as md
        >>> from minddata.record.convert import convert_image_folder
        >>> root = tempfile.mkdtemp()
        >>> for cls in ("cat", "dog"):
        ...     os.makedirs(os.path.join(root, "in", cls))
        ...     Image.new("RGB", (4, 3)).save(os.path.join(root, "in", cls, "a.jpg"))
        >>> convert_image_folder(os.path.join(root, "in"), os.path.join(root, "out.mindrecord")).images
        2
        >>> ds = md.MindDataset(os.path.join(root, "out.mindrecord"), shuffle=False)
        >>> [(str(r["file_name"]), int(r["label"])) for r in ds.create_dict_iterator(output_numpy=True)]
        [('cat/a.jpg', 0), ('dog/a.jpg', 1)]
    """
    from minddata.dataset.sources import IMAGE_EXTENSIONS, _FolderListing

    folder = os.path.abspath(os.fspath(source))
    if not os.path.isdir(folder):
        raise ArgumentError(f"convert: SOURCE {source} is not a folder; pass a folder of class sub-folders of images.")
    exts = tuple(e.lower() if e.startswith(".") else "." + e.lower() for e in extensions) if extensions else IMAGE_EXTENSIONS
    listing = _FolderListing(folder, exts, None)
    try:
        total = listing.count()
    except Exception as error:  # GraphError: no images
        raise ArgumentError(f"convert: {error}") from None
    files = listing.paths_of(list(range(total)))
    labels = listing._labels  # noqa: SLF001 - same package
    start = time.perf_counter()
    written = 0
    nbytes = 0
    batch = 64

    if check not in _CHECKS:
        raise ArgumentError(f"convert: `check` must be one of {', '.join(_CHECKS)}. Found: {check!r}")
    skipped: list[str] = []

    def read(path: str) -> bytes:
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as error:
            raise DataFormatError(f"convert: can't read {path}: {error.strerror or error}", path=path) from None

    with _dest_folder(dest), _open_writer(format, dest, shard_num, overwrite) as writer:
        writer.add_schema(IMAGE_FOLDER_SCHEMA, f"image folder {folder}")
        writer.add_index(["label", "file_name"])
        shard_of = _contiguous_shards(total, shard_num)
        for first, datas in _read_batches(folder, exts, files, batch, read, executor):
            paths = files[first : first + batch]
            rows = []
            shards = []
            for k, (p, d) in enumerate(zip(paths, datas)):
                why = _image_problem(d, check)
                if why is not None:
                    if not skip_bad:
                        raise DataFormatError(
                            f"convert: {p}: {why}. Fix or remove the file, or pass skip_bad=True (`--skip-bad`) to "
                            "leave bad images out and list them", path=p)
                    skipped.append(f"{p}: {why}")
                    continue
                rows.append({"file_name": os.path.relpath(p, folder).replace(os.sep, "/"),
                             "label": int(labels[first + k]), "image": d})  # type: ignore[index]  # the listing was scanned for its files above
                shards.append(shard_of(first + k))
            _write(writer, rows, shards)
            written += len(paths)
            nbytes += sum(len(d) for d in datas)
            if progress is not None:
                progress(written, total, nbytes)
        paths_out = list(writer.paths)
    return ConvertResult(written - len(skipped), nbytes, time.perf_counter() - start, paths_out, listing.classes(),
                         skipped)


_CHECKS = ("header", "decode", "none")


def _check_format(format: str) -> None:
    if format not in FORMATS:
        raise ArgumentError(
            f"convert: `format` must be 'mindrecord' (MindSpore's format) or 'arrow' (minddata's Arrow record "
            f"files). Found: {format!r}"
        )


def _open_writer(format: str, dest: str | os.PathLike, shard_num: int, overwrite: bool) -> Any:
    from minddata.record.mindrecord_format import MindRecordWriter

    _check_format(format)
    kind = MindRecordWriter if format == "mindrecord" else ArrowRecordWriter
    return kind(dest, shard_num=shard_num, overwrite=overwrite)


def _contiguous_shards(total: int, shard_num: int) -> Callable[[int], int]:
    """Row → shard for contiguous blocks, the first ``total % shard_num`` shards one row longer (as
    one MindRecord ``write_raw_data`` call splits its rows), so a set reads back in row order."""
    per, extra = divmod(total, shard_num)
    long_rows = extra * (per + 1)

    def shard_of(row: int) -> int:
        return row // (per + 1) if row < long_rows else extra + (row - long_rows) // max(per, 1)

    return shard_of


def _write(writer: Any, rows: list[dict[str, Any]], shards: list[int]) -> None:
    """Write each of ``rows`` to its shard of ``shards`` (either writer)."""
    start = 0
    for k in range(1, len(rows) + 1):
        if k == len(rows) or shards[k] != shards[start]:
            writer._write_shard(shards[start], rows[start:k])  # noqa: SLF001 - same package
            start = k


@contextlib.contextmanager
def _dest_folder(dest: str | os.PathLike) -> Iterator[None]:
    """Create the missing folders above ``dest`` (``minddata convert train/ out/train.mindrecord``
    makes ``out/``); a conversion that fails removes those it created again, unless something is in them."""
    parent = os.path.dirname(os.path.abspath(os.fspath(dest)))
    created = []
    folder = parent
    while not os.path.isdir(folder) and folder != os.path.dirname(folder):
        created.append(folder)  # deepest first
        folder = os.path.dirname(folder)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as error:
        _remove_empty(created)
        raise ArgumentError(
            f"convert: DEST {dest}: can't create its folder {parent}: {error.strerror or error}. "
            "Pass a DEST in a folder you can write to."
        ) from None
    try:
        yield
    except BaseException:
        _remove_empty(created)
        raise


def _remove_empty(folders: list[str]) -> None:
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            return  # not empty (or not ours to remove): nor are the folders above it


def _image_problem(data: bytes, check: str) -> str | None:
    """Why ``data`` is not a usable image under ``check``, or None when it is.

    Pillow reads the header (or decodes the whole image with ``"decode"``): the same library family the
    Decode op falls back to, so an image that passes here decodes in a pipeline.
    """
    if check == "none":
        return None
    import io

    from PIL import Image

    if not data:
        return "empty file (0 bytes)"
    try:
        with Image.open(io.BytesIO(data)) as im:
            if check == "decode":
                im.load()
    except Exception as error:  # PIL raises several types for bad data; each is a bad image here
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        return f"not a decodable image ({text})"
    return None


# -- MindRecord <-> Arrow records ----------------------------------------------------------------

@dataclass
class RecordConvertResult:
    rows: int
    seconds: float
    source_format: str
    dest_format: str
    files: list[str]


def convert_records(
    source: str | os.PathLike,
    dest: str | os.PathLike,
    *,
    shard_num: int = 1,
    overwrite: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    format: str = "mindrecord",
) -> RecordConvertResult:
    """Convert a record set between MindSpore's MindRecord format and minddata's Arrow record files.

    ``source`` is one file of the set (the whole set is converted; its format is told by content);
    ``dest`` is written in ``format``, ``"mindrecord"`` (the default) or ``"arrow"``, as
    ``shard_num`` files, rows in the order ``MindDataset`` reads them with ``shuffle=False`` (a set
    converted to its own format is re-sharded). Arrow types MindRecord lacks are widened (bool, int8,
    int16, uint8, uint16 -> int32; uint32, uint64 -> int64; float16 -> float32); a uint64 value beyond
    int64 is an error. Nothing appears under ``dest`` unless every row was written. Missing folders above
    ``dest`` are created (and removed again if the conversion fails).

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> from minddata.record.convert import convert_records
        >>> root = tempfile.mkdtemp()
        >>> arrow = os.path.join(root, "a.arrow")
        >>> md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False).save(arrow, file_type="arrow")
        >>> convert_records(arrow, os.path.join(root, "m.mindrecord")).dest_format
        'mindrecord'
        >>> ds = md.MindDataset(os.path.join(root, "m.mindrecord"), shuffle=False)
        >>> [int(r["x"]) for r in ds.create_dict_iterator(output_numpy=True)]
        [1, 2, 3]
    """
    from minddata.record.mindrecord_format import (
        NUMPY_TO_MINDRECORD,
        MindRecordSet,
        read_as_mindrecord,
    )
    from minddata.record.reader import RecordSet, open_set

    where = "convert"
    _check_format(format)
    from minddata.dataset import _storage

    source_path = os.path.abspath(_storage.local_path(source))
    if not os.path.isfile(source_path):
        raise ArgumentError(f"{where}: SOURCE {source} is not a file; pass one file of a record set.")
    with _dest_folder(dest):
        start = time.perf_counter()
        if read_as_mindrecord(source_path):
            records: Any = MindRecordSet(where, source_path)
            schema = records.schema()
            formats = ("mindrecord", format)
        else:
            records = RecordSet(where, open_set(where, source_path))
            schema = {name: field.to_json() for name, field in records.fields.items()}
            formats = ("arrow", format)
        if format == "mindrecord":
            for name, spec in schema.items():
                # Arrow record types MindRecord lacks, widened to one it has (values are unchanged).
                spec["type"] = NUMPY_TO_MINDRECORD.get(spec["type"], spec["type"])
                if "shape" in spec and spec["type"] in ("string", "bytes"):
                    raise ArgumentError(f"{where}: field {name!r} ({records.fields[name].describe()}) has no MindRecord type.")
        writer = _open_writer(format, dest, shard_num, overwrite)
        try:
            writer.add_schema(schema, f"converted from {os.path.basename(source_path)}")
            index = [f for f in records.index_fields if f in schema and "shape" not in schema[f] and schema[f]["type"] != "bytes"]
            if index:
                writer.add_index(index)
            total = records.num_rows
            names = records.columns
            done = 0
            shard_of = _contiguous_shards(total, shard_num)
            step = 256
            for first in range(0, total, step):
                ids = range(first, min(first + step, total))
                rows = [dict(zip(names, _plain(row))) for row in records.fetch(ids)]
                _write(writer, rows, [shard_of(i) for i in ids])
                done += len(rows)
                if progress is not None:
                    progress(done, total, 0)
            writer.commit()
        except BaseException:
            writer.abort()
            raise
        return RecordConvertResult(total, time.perf_counter() - start, formats[0], formats[1], list(writer.paths))


def _plain(row: tuple) -> list[Any]:
    """Values as both writers take them: MindRecord's shape-(1,) bytes arrays become bytes."""
    out = []
    for value in row:
        if isinstance(value, np.ndarray) and value.dtype.kind == "S" and value.shape == (1,):
            value = value.tobytes()
        out.append(value)
    return out


def _read_batches(
    folder: str, exts: tuple[str, ...], files: list[str], batch: int, read: Callable[[str], bytes], executor: str
) -> Iterator[tuple[int, list[bytes]]]:
    """``(first row, file contents)`` per ``batch`` files, in listing order: read by threads here, or
    by Ray tasks (the folder as an unshuffled ImageFolderDataset, which lists it in the same order)."""
    if executor == "local":
        with ThreadPoolExecutor(max_workers=4) as pool:
            for first in range(0, len(files), batch):
                yield first, list(pool.map(read, files[first : first + batch]))
        return
    if executor != "ray":
        raise ArgumentError(f"convert: `executor` must be 'local' or 'ray'. Found: {executor!r}")
    from minddata.dataset.sources import ImageFolderDataset

    ds = ImageFolderDataset(folder, shuffle=False, extensions=list(exts))
    pending: list[bytes] = []
    first = 0
    with ds.create_tuple_iterator(num_epochs=1, output_numpy=True, executor="ray") as rows:
        for image, _label in rows:
            pending.append(image.tobytes())
            if len(pending) == batch:
                yield first, pending
                first, pending = first + batch, []
    if pending:
        yield first, pending
