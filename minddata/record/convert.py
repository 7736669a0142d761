"""Image folder → record files (``minddata convert``).

Rows hold ``file_name`` (the path below the folder, string), ``label`` (int32, the class's index as
:class:`minddata.ImageFolderDataset` assigns it) and ``image`` (the file's bytes, undecoded), in
the folder's sorted order; ``label`` and ``file_name`` are index fields.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

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
) -> ConvertResult:
    """Write every image of ``source/<class>/<image>`` to the record set ``dest``.

    ``progress(done, total, bytes_done)`` is called as rows are written. Nothing appears under
    ``dest`` unless every image was read and written (the writer commits at the end).

    ``check`` looks at each image before it is written: ``"header"`` (the default) parses its header
    with the decoder that will read it, ``"decode"`` decodes it fully, ``"none"`` copies bytes blindly.
    An image that fails stops the conversion with an error naming it, or with ``skip_bad`` is left out
    and listed in ``ConvertResult.skipped``.

    Example:
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

    def read(path: str) -> bytes | None:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as error:
            raise DataFormatError(f"convert: can't read {path}: {error.strerror or error}", path=path) from None
        why = _image_problem(data, check)
        if why is None:
            return data
        if skip_bad:
            return None
        raise DataFormatError(
            f"convert: {path}: {why}. Fix or remove the file, or pass skip_bad=True (`--skip-bad`) to leave bad "
            "images out and list them", path=path)

    with FileWriter(dest, shard_num=shard_num, overwrite=overwrite) as writer:
        writer.add_schema(IMAGE_FOLDER_SCHEMA, f"image folder {folder}")
        writer.add_index(["label", "file_name"])
        with ThreadPoolExecutor(max_workers=4) as pool:
            for first in range(0, total, batch):
                paths = files[first : first + batch]
                datas = list(pool.map(read, paths))
                rows = []
                for k, (p, d) in enumerate(zip(paths, datas)):
                    if d is None:
                        with open(p, "rb") as f:
                            skipped.append(f"{p}: {_image_problem(f.read(), check)}")
                        continue
                    rows.append({"file_name": os.path.relpath(p, folder).replace(os.sep, "/"),
                                 "label": int(labels[first + k]), "image": d})  # type: ignore[index]
                if rows:
                    writer.write_raw_data(rows)
                written += len(paths)
                nbytes += sum(len(d) for d in datas if d is not None)
                if progress is not None:
                    progress(written, total, nbytes)
        paths_out = list(writer.paths)
    return ConvertResult(written - len(skipped), nbytes, time.perf_counter() - start, paths_out, listing.classes(),
                         skipped)


_CHECKS = ("header", "decode", "none")


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
