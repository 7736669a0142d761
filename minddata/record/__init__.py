"""Record files: MindSpore's MindRecord format, stored as Apache Arrow IPC files.

A record set is one or more data files (shards), each an uncompressed Arrow IPC file read through a
memory map, with a small ``<file>.meta.json`` beside it: the schema, row and batch counts, a CRC-32
per column per record batch, the index fields and the names of the set's other shards.

- :class:`FileWriter` writes rows (``add_schema``, ``add_index``, ``write_raw_data``, ``commit``);
  files appear under their names only at ``commit``.
- :class:`FileReader` reads rows back one by one; :class:`minddata.MindDataset` reads them into a
  pipeline with random access (global shuffle, sharding, samplers).
- ``Dataset.save(path, num_files)`` writes any pipeline's output; ``minddata convert`` turns an image
  folder into a record set.

Examples:
    >>> import os, tempfile
    >>> import minddata as md
    >>> from minddata.record import FileWriter
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.mindrecord")
    >>> with FileWriter(path, shard_num=2) as writer:
    ...     _ = writer.add_schema({"x": {"type": "float32", "shape": [2]}, "label": {"type": "int32"}})
    ...     writer.write_raw_data([{"x": [i, -i], "label": i} for i in range(4)])
    >>> ds = md.MindDataset(path + "0", shuffle=False)   # one shard's name reads the whole set
    >>> sorted(int(r["label"]) for r in ds.create_dict_iterator(output_numpy=True))
    [0, 1, 2, 3]
"""

from minddata.record.reader import FileReader
from minddata.record.writer import FileWriter

__all__ = ["FileReader", "FileWriter"]
