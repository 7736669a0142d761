"""Image folder → record files (``minddata convert``).

Rows hold ``file_name`` (the path below the folder, string), ``label`` (int32, the class's index as
:class:`minddata.ImageFolderDataset` assigns it) and ``image`` (the file's bytes, undecoded), in
the folder's sorted order; ``label`` and ``file_name`` are index fields.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from minddata.errors import ArgumentError, DataFormatError
from minddata.record.writer import FileWriter

__all__ = ["convert_image_folder", "ConvertResult", "IMAGE_FOLDER_SCHEMA"]

IMAGE_FOLDER_SCHEMA = {"file_name": {"type": "string"}, "label": {"type": "int32"}, "image": {"type": "bytes"}}


@dataclass
class ConvertResult:
    images: int
    bytes: int
    seconds: float
    files: list[str]
    classes: dict[str, int]


def convert_image_folder(
    source: str | os.PathLike,
    dest: str | os.PathLike,
    *,
    shard_num: int = 1,
    overwrite: bool = False,
    extensions: Sequence[str] | None = None,
    progress: Callable[[int, int, int], None] | None = None,
    executor: str = "local",
) -> ConvertResult:
    """Write every image of ``source/<class>/<image>`` to the record set ``dest``.

    ``executor="ray"`` reads the images in Ray tasks (an ``ImageFolderDataset`` run with
    ``executor="ray"``, on the cluster ``ray.init()`` connected to); the writer stays in this process.

    ``progress(done, total, bytes_done)`` is called as rows are written. Nothing appears under
    ``dest`` unless every image was read and written (the writer commits at the end).

    Example:
        >>> import os, tempfile
        >>> import minddata as md
        >>> from minddata.record.convert import convert_image_folder
        >>> root = tempfile.mkdtemp()
        >>> for cls in ("cat", "dog"):
        ...     os.makedirs(os.path.join(root, "in", cls))
        ...     with open(os.path.join(root, "in", cls, "a.jpg"), "wb") as f:
        ...         _ = f.write(cls.encode())
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

    def read(path: str) -> bytes:
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as error:
            raise DataFormatError(f"convert: can't read {path}: {error.strerror or error}", path=path) from None

    with FileWriter(dest, shard_num=shard_num, overwrite=overwrite) as writer:
        writer.add_schema(IMAGE_FOLDER_SCHEMA, f"image folder {folder}")
        writer.add_index(["label", "file_name"])
        for first, datas in _read_batches(folder, exts, files, batch, read, executor):
            paths = files[first : first + batch]
            writer.write_raw_data(
                [
                    {"file_name": os.path.relpath(p, folder).replace(os.sep, "/"), "label": int(labels[first + k]), "image": d}  # type: ignore[index]
                    for k, (p, d) in enumerate(zip(paths, datas))
                ]
            )
            written += len(paths)
            nbytes += sum(len(d) for d in datas)
            if progress is not None:
                progress(written, total, nbytes)
        paths_out = list(writer.paths)
    return ConvertResult(written, nbytes, time.perf_counter() - start, paths_out, listing.classes())


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
