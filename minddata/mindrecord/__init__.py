"""``minddata.mindrecord``: MindSpore's ``mindspore.mindrecord`` API on real MindRecord files.

:class:`FileWriter` writes MindSpore's own MindRecord format (shard files with their ``.db``
index), so MindSpore reads what it writes and a script that writes a dataset ports by changing its
import; :class:`FileReader` reads MindRecord files (and minddata's Arrow record files).
:class:`MindPage` reads a set a page at a time, grouped by an index field.
:class:`ImageNetToMR`, :class:`MnistToMR`, :class:`Cifar10ToMR`, :class:`Cifar100ToMR`, :class:`CsvToMR`
and :class:`TFRecordToMR` (without TensorFlow) convert those data sets as MindSpore's converters do.
:class:`minddata.MindDataset` reads both formats into a pipeline; ``minddata convert`` converts
between them. The format itself: :mod:`minddata.record.mindrecord_format`.

Examples:
    >>> import os, tempfile
    >>> import minddata as md
    >>> from minddata.mindrecord import FileWriter
    >>> path = os.path.join(tempfile.mkdtemp(), "m.mindrecord")
    >>> writer = FileWriter(path, shard_num=2)
    >>> _ = writer.add_schema({"label": {"type": "int32"}, "image": {"type": "bytes"}}, "demo")
    >>> writer.write_raw_data([{"label": i, "image": b"x" * i} for i in range(4)])
    >>> writer.commit()
    >>> ds = md.MindDataset(path + "0", shuffle=False)
    >>> ds.get_col_names(), [int(r["label"]) for r in ds.create_dict_iterator(output_numpy=True)]
    (['image', 'label'], [0, 1, 2, 3])
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from minddata.mindrecord.converters import (
    Cifar10ToMR,
    Cifar100ToMR,
    CsvToMR,
    FixedLenFeature,
    ImageNetToMR,
    MnistToMR,
    TFRecordToMR,
)
from minddata.mindrecord.mindpage import MindPage
from minddata.record.mindrecord_format import MindRecordSet, MindRecordWriter, read_as_mindrecord

__all__ = ["FileWriter", "FileReader", "MindPage", "Cifar10ToMR", "Cifar100ToMR", "CsvToMR", "ImageNetToMR",
           "MnistToMR", "TFRecordToMR", "FixedLenFeature", "SUCCESS", "FAILED"]

SUCCESS = 0
FAILED = 1

FileWriter = MindRecordWriter

# MindSpore's encryption settings, which minddata does not have (an AttributeError that says so, not a bare one).
_NOT_YET = (
    "set_enc_key", "set_enc_mode", "set_dec_mode",
)
DIFFERENCES_DOC = "docs/mindspore_differences.md (MindRecord)"


class FileReader:
    """Reads a MindRecord set (or a minddata Arrow record set) row by row, as MindSpore's
    ``mindspore.mindrecord.FileReader``.

    Args:
        file_name: one shard (the whole set is read) or a list of shard files (exactly those).
        num_consumer: accepted for MindSpore compatibility; reading is single-threaded here.
        columns: the fields to read (default: all).
        operator: accepted for MindSpore compatibility (unused there too).

    Rows are dicts of Python values as MindSpore gives them: ``int``/``float``/``str`` for scalar
    fields, ``bytes`` for bytes fields, NumPy arrays for array fields.

    Examples:
        >>> import os, tempfile
        >>> from minddata.mindrecord import FileReader, FileWriter
        >>> path = os.path.join(tempfile.mkdtemp(), "r.mindrecord")
        >>> writer = FileWriter(path)
        >>> _ = writer.add_schema({"id": {"type": "int64"}, "name": {"type": "string"}})
        >>> writer.write_raw_data([{"id": i, "name": n} for i, n in enumerate("ab")])
        >>> writer.commit()
        >>> reader = FileReader(path)
        >>> list(reader.get_next()), reader.len()
        ([{'id': 0, 'name': 'a'}, {'id': 1, 'name': 'b'}], 2)
        >>> reader.close()
    """

    def __init__(self, file_name: Any, num_consumer: int = 4, columns: Sequence[str] | None = None, operator: Any = None):
        first = file_name if isinstance(file_name, (str, os.PathLike)) else (list(file_name) or [None])[0]
        self._arrow = None
        self._set = None
        if isinstance(first, (str, os.PathLike)) and not read_as_mindrecord(first):
            from minddata.record.reader import FileReader as ArrowReader

            self._arrow = ArrowReader(file_name, num_consumer, columns, operator)
        else:
            self._set = MindRecordSet("FileReader", file_name, columns)

    def get_next(self) -> Iterator[dict[str, Any]]:
        """Yield every row as a dict, shard by shard in write order."""
        if self._arrow is not None:
            yield from self._arrow.get_next()
            return
        records = self._set
        if records is None:
            return
        step = 256
        for start in range(0, records.num_rows, step):
            for row in records.fetch(range(start, min(start + step, records.num_rows)), python=True):
                yield dict(zip(records.columns, row))

    def schema(self) -> dict[str, dict[str, Any]]:
        """The schema, as given to ``FileWriter.add_schema``."""
        return self._arrow.schema() if self._arrow is not None else self._set.schema()  # type: ignore[union-attr]  # one of the two readers is set

    def len(self) -> int:
        """The number of rows (MindSpore's name)."""
        return len(self._arrow) if self._arrow is not None else self._set.num_rows  # type: ignore[union-attr]  # one of the two readers is set

    def __len__(self) -> int:
        return self.len()

    def close(self) -> None:
        """Release the files."""
        if self._arrow is not None:
            self._arrow.close()
        self._arrow = self._set = None


def __getattr__(name: str) -> Any:
    if name in _NOT_YET:
        raise AttributeError(
            f"minddata.mindrecord.{name} is not implemented: minddata writes and reads plain MindRecord files "
            f"only (MindSpore's encryption is not supported; see {DIFFERENCES_DOC}). Write the rows with FileWriter "
            "and no encryption setting."
        )
    raise AttributeError(f"module 'minddata.mindrecord' has no attribute {name!r}")
