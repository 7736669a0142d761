"""Record files: minddata's Arrow record format (MindSpore's record API on Apache Arrow IPC files).

A record set is one or more data files (shards), each an uncompressed Arrow IPC file read through a
memory map, with a small ``<file>.meta.json`` beside it: the schema, row and batch counts, a CRC-32
per column per record batch, the index fields and the names of the set's other shards. MindSpore
does not read these files; MindSpore's own MindRecord format is written by
:class:`minddata.mindrecord.FileWriter` (and by ``minddata convert``).

- :class:`ArrowRecordWriter` writes rows (``add_schema``, ``add_index``, ``write_raw_data``,
  ``commit``), spreading them over the shards round-robin; files appear under their names only at
  ``commit``.
- :class:`FileReader` reads rows back one by one; :class:`minddata.MindDataset` reads both formats
  into a pipeline with random access (global shuffle, sharding, samplers).
- ``Dataset.save(path, num_files, file_type="arrow")`` writes any pipeline's output as these files (the
  default, ``"mindrecord"``, writes MindSpore's format); ``minddata convert --format arrow`` turns an
  image folder into a record set.

Examples:
    >>> import os, tempfile
    >>> import minddata as md
    >>> from minddata.record import ArrowRecordWriter
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.arrow")
    >>> with ArrowRecordWriter(path, shard_num=2) as writer:
    ...     _ = writer.add_schema({"x": {"type": "float32", "shape": [2]}, "label": {"type": "int32"}})
    ...     writer.write_raw_data([{"x": [i, -i], "label": i} for i in range(4)])
    >>> ds = md.MindDataset(path + "0", shuffle=False)   # one shard's name reads the whole set
    >>> sorted(int(r["label"]) for r in ds.create_dict_iterator(output_numpy=True))
    [0, 1, 2, 3]
"""

from typing import Any

from minddata.record.reader import FileReader
from minddata.record.writer import ArrowRecordWriter

__all__ = ["ArrowRecordWriter", "FileReader"]


def __getattr__(name: str) -> Any:
    if name == "FileWriter":
        # Two writers of one name wrote two formats; the Arrow one was renamed for what it writes.
        raise AttributeError(
            "minddata.record.FileWriter is now minddata.record.ArrowRecordWriter (minddata's Arrow record files); "
            "to write MindSpore's MindRecord files, which MindSpore reads, use minddata.mindrecord.FileWriter."
        )
    raise AttributeError(f"module 'minddata.record' has no attribute {name!r}")
