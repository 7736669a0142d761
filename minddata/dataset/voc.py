"""PASCAL VOC (MindSpore's ``VOCDataset``): detection boxes from the XML annotations, or
segmentation masks, with MindSpore's columns and types."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ElementTree
from typing import Any

import numpy as np

from minddata.dataset import _validate as v
from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, missing, name_inside, read_lines
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["VOCDataset"]

_COLUMNS = {
    "Detection": ["image", "bbox", "label", "difficult", "truncate"],
    "Segmentation": ["image", "target"],
}
_LIST_FOLDER = {"Detection": "Main", "Segmentation": "Segmentation"}


class VOCDataset(Dataset):
    """PASCAL VOC from its folder layout (MindSpore's ``VOCDataset``).

    ``dataset_dir`` holds ``JPEGImages/<id>.jpg``, ``ImageSets/<Main|Segmentation>/<usage>.txt``
    (one image id per line), ``Annotations/<id>.xml`` (Detection) and ``SegmentationClass/<id>.png``
    (Segmentation).

    Args:
        dataset_dir: the VOC folder (e.g. ``VOCdevkit/VOC2012``).
        task: ``"Segmentation"`` (default) or ``"Detection"``.
        usage: the list file's name in ``ImageSets/<Segmentation|Main>/`` without ``.txt``
            (default ``"train"``).
        class_indexing: Detection only: object name → label. Objects whose name it lacks are left
            out (an image left with none is skipped). Default: the names found, sorted, numbered from 0.
        decode: decode ``image`` (and ``target``) to RGB HWC uint8 (default: the file's bytes).
        extra_metadata: add a ``_meta-filename`` column with each image's id.
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as elsewhere.

    Columns, as MindSpore's:

    - Detection: ``image`` uint8, ``bbox`` float32 (N, 4) ``[xmin, ymin, width, height]``,
      ``label``, ``difficult`` and ``truncate`` uint32 (N, 1); one row per listed image with at least
      one object. A box with ``xmin`` or ``ymin`` <= 0 or no area is an error naming the XML file.
    - Segmentation: ``image`` uint8 and ``target`` uint8 (the PNG mask's bytes; decoded, RGB).

    Examples:
        >>> import minddata as md
        >>> md.VOCDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: VOCDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        task: str = "Segmentation",
        usage: str = "train",
        class_indexing: dict[str, int] | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        decode: bool = False,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
        extra_metadata: bool = False,
        decrypt: Any = None,
    ):
        where = "VOCDataset"
        folder = dataset_folder(where, dataset_dir)
        if task not in _COLUMNS:
            raise ArgumentError(f"{where}: `task` must be 'Segmentation' or 'Detection'. Found: {task!r}")
        if not isinstance(usage, str) or not usage or os.sep in usage or "/" in usage:
            raise ArgumentError(f"{where}: `usage` must be the name of a list file, e.g. 'train'. Found: {usage!r}")
        if class_indexing is not None:
            if task != "Detection":
                raise ArgumentError(f"{where}: `class_indexing` is only valid with task='Detection'. Found task={task!r}")
            if not isinstance(class_indexing, dict) or not all(
                isinstance(k, str) and v.is_int(x) and x >= 0 for k, x in class_indexing.items()
            ):
                raise ArgumentError(
                    f"{where}: `class_indexing` must map object names to int labels >= 0. Found: {class_indexing!r}"
                )
        v.bool_arg(where, "extra_metadata", extra_metadata)
        list_file = os.path.join(folder, "ImageSets", _LIST_FOLDER[task], f"{usage}.txt")
        if not os.path.isfile(list_file):
            raise missing(
                where, list_file,
                f"task={task!r}, usage={usage!r} reads the image ids from it; check dataset_dir (the folder holding "
                "JPEGImages/ and ImageSets/) and usage.",
            )
        self._task = task
        self._parsed = _VOCIndex(folder, list_file, task, dict(class_indexing) if class_indexing else None,
                                 bool(extra_metadata))
        index = FileIndex(where, self._parsed.rows, file_columns=2 if task == "Segmentation" else 1)
        columns = _COLUMNS[task] + (["_meta-filename"] if extra_metadata else [])
        super().__init__(file_source(
            where, columns, index, decode=decode,
            decode_columns=("image", "target") if task == "Segmentation" else ("image",),
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))

    def get_class_indexing(self) -> dict[str, int]:
        """Object name → label, for the names found in the annotations (Detection only)."""
        if self._task != "Detection":
            raise ArgumentError("VOCDataset: get_class_indexing is only valid with task='Detection'.")
        self._parsed.rows()
        return dict(self._parsed.classes)


class _VOCIndex:
    def __init__(self, folder: str, list_file: str, task: str, class_indexing: dict[str, int] | None, extra: bool):
        self.folder = folder
        self.list_file = list_file
        self.task = task
        self.class_indexing = class_indexing
        self.extra = extra
        self.classes: dict[str, int] = {}
        self._rows: list[tuple] | None = None

    def rows(self) -> list[tuple]:
        if self._rows is None:
            self._rows = self._build()
        return self._rows

    def _build(self) -> list[tuple]:
        where = "VOCDataset"
        ids = read_lines(where, self.list_file, "")
        if not ids:
            raise DataFormatError(f"{where}: {self.list_file} lists no image ids.", path=self.list_file)

        def path(sub: str, image_id: str, ext: str) -> str:
            return name_inside(where, self.folder, f"{sub}/{image_id}{ext}", f"{self.list_file}: image id")

        if self.task == "Segmentation":
            return [
                (path("JPEGImages", i, ".jpg"), path("SegmentationClass", i, ".png"),
                 *((np.asarray(i),) if self.extra else ()))
                for i in ids
            ]
        kept = []
        for image_id in ids:
            xml_file = path("Annotations", image_id, ".xml")
            objects = [o for o in _parse_annotation(xml_file)
                       if self.class_indexing is None or o[0] in self.class_indexing]
            if objects:
                kept.append((image_id, objects))
        names = sorted({o[0] for _, objects in kept for o in objects})
        self.classes = (
            {n: int(self.class_indexing[n]) for n in names} if self.class_indexing is not None
            else {n: k for k, n in enumerate(names)}
        )
        if not kept:
            raise DataFormatError(
                f"{where}: none of the images listed in {self.list_file} has an object"
                + (f" named in class_indexing {sorted(self.class_indexing)}" if self.class_indexing else "")
                + ".",
                path=self.list_file,
            )
        rows = []
        for image_id, objects in kept:
            boxes = np.asarray([o[1] for o in objects], dtype=np.float32).reshape(-1, 4)
            label = np.asarray([self.classes[o[0]] for o in objects], dtype=np.uint32).reshape(-1, 1)
            difficult = np.asarray([o[2] for o in objects], dtype=np.uint32).reshape(-1, 1)
            truncate = np.asarray([o[3] for o in objects], dtype=np.uint32).reshape(-1, 1)
            rows.append((path("JPEGImages", image_id, ".jpg"), boxes, label, difficult, truncate,
                         *((np.asarray(image_id),) if self.extra else ())))
        return rows


def _number(node: ElementTree.Element | None, tag: str, xml_file: str) -> float:
    child = None if node is None else node.find(tag)
    if child is None or child.text is None or not child.text.strip():
        return 0.0
    try:
        return float(child.text)
    except ValueError:
        raise DataFormatError(f"VOCDataset: {xml_file}: <{tag}> is not a number: {child.text!r}", path=xml_file) from None


def _parse_annotation(xml_file: str) -> list[tuple[str, list[float], int, int]]:
    """(name, [xmin, ymin, w, h], difficult, truncated) per named <object> of one annotation file."""
    if not os.path.isfile(xml_file):
        raise missing("VOCDataset", xml_file, "Detection needs Annotations/<id>.xml for every listed id.")
    try:
        root = ElementTree.parse(xml_file).getroot()
    except ElementTree.ParseError as error:
        raise DataFormatError(f"VOCDataset: {xml_file} is not valid XML: {error}", path=xml_file) from None
    objects = root.findall("object")
    if not objects:
        raise DataFormatError(f"VOCDataset: {xml_file} has no <object>.", path=xml_file)
    out = []
    for k, obj in enumerate(objects):
        box = obj.find("bndbox")
        if box is None:
            raise DataFormatError(f"VOCDataset: {xml_file}: <object> {k} has no <bndbox>.", path=xml_file)
        xmin, ymin, xmax, ymax = (_number(box, t, xml_file) for t in ("xmin", "ymin", "xmax", "ymax"))
        if not (xmin > 0 and ymin > 0 and xmax > xmin and ymax > ymin):
            raise DataFormatError(
                f"VOCDataset: {xml_file}: <object> {k} has an invalid <bndbox> {{{xmin:g}, {ymin:g}, {xmax:g}, "
                f"{ymax:g}}}: it needs xmin > 0, ymin > 0, xmax > xmin and ymax > ymin.",
                path=xml_file,
            )
        name_node = obj.find("name")
        name = (name_node.text or "").strip() if name_node is not None else ""
        if name:
            out.append((name, [xmin, ymin, xmax - xmin, ymax - ymin], int(_number(obj, "difficult", xml_file)),
                        int(_number(obj, "truncated", xml_file))))
    return out
