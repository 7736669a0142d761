"""MindSpore's side of the MindRecord compatibility tests; runs under MindSpore's Python (numpy 1.x).

    python mindspore_side.py write OUT_DIR      # write every DATASETS set with mindspore's FileWriter,
                                                # plus OUT_DIR/<name>.expected.json: what MindSpore reads back
    python mindspore_side.py read FILE OUT.json [FILE OUT.json ...]
                                                # what MindSpore's MindDataset and FileReader read from FILE
    python mindspore_side.py save FILE NUM_FILES  # MindSpore's Dataset.save of the save_rows() pipeline
    python mindspore_side.py refuse FOLDER OUT.json  # what MindSpore's Dataset.save makes of REFUSED_SAVES

The rows are defined here (``rows(name)``) so that minddata's tests, which import this module
without MindSpore, write the same rows. ``tests/record/data/mindspore_files.tar.gz`` is the output of
``write`` for the stored copy (recreate it with ``python mindspore_side.py pack``).
"""

from __future__ import annotations

import base64
import io
import json
import os
import sys
import tarfile
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ARCHIVE = os.path.join(HERE, "mindspore_files.tar.gz")

# name -> (shard_num, schema, index fields or None, sizes of the write_raw_data calls)
DATASETS = {
    "mixed": (
        3,
        {
            "id": {"type": "int32"},
            "big": {"type": "int64"},
            "score": {"type": "float64"},
            "ratio": {"type": "float32"},
            "name": {"type": "string"},
            "data": {"type": "bytes"},
            "mat": {"type": "float32", "shape": [2, 3]},
            "seq": {"type": "int64", "shape": [-1]},
            "pairs": {"type": "int32", "shape": [-1, 2]},
        },
        ["id", "name"],
        [13, 5],
    ),
    "images": (2, {"label": {"type": "int32"}, "file_name": {"type": "string"}, "image": {"type": "bytes"}}, None, [7]),
    "scalars": (1, {"id": {"type": "int64"}, "value": {"type": "float64"}, "tag": {"type": "string"}}, ["tag"], [40]),
    "one_array": (2, {"counts": {"type": "int64", "shape": [-1]}}, None, [9]),
    "few": (4, {"id": {"type": "int64"}, "value": {"type": "float32"}}, None, [2]),  # shards without rows
}


def _jpeg(i: int) -> bytes:
    from PIL import Image

    pixels = (np.add.outer(np.arange(12), np.arange(16))[:, :, None] * (i + 1) % 256).astype(np.uint8).repeat(3, axis=2)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=85)
    return buf.getvalue()


def rows(name: str) -> list[dict]:
    """The rows of data set ``name``, in write order (values of the schema's NumPy types).

    Arrays are never empty: MindSpore 2.10 reads an empty int array back as a scalar of undefined
    value (minddata gives the empty array)."""
    _, _, _, calls = DATASETS[name]
    n = sum(calls)
    if name == "mixed":
        return [
            {
                "id": i,
                "big": (-1) ** i * 2**40 * i,
                "score": i / 7,
                "ratio": float(np.float32(i / 3)),
                "name": f"row-{i}-é",
                "data": bytes(range(i, i + 5 + i)) + b"\x00",
                "mat": np.arange(6, dtype=np.float32).reshape(2, 3) * i,
                "seq": np.array([0, -1, 300, -70000, 2**33, -(2**40)][: i % 6 + 1], dtype=np.int64) * (i + 1),
                "pairs": np.arange(2 * (i % 3 + 1), dtype=np.int32).reshape(-1, 2) - 1000 * i,
            }
            for i in range(n)
        ]
    if name == "images":
        return [{"label": i % 3, "file_name": f"class{i % 3}/{i}.jpg", "image": _jpeg(i)} for i in range(n)]
    if name == "scalars":
        return [{"id": i, "value": i * 0.25 - 3, "tag": "t" * (i % 4)} for i in range(n)]
    if name == "few":
        return [{"id": i, "value": i + 0.5} for i in range(n)]
    if name == "one_array":
        return [{"counts": np.arange(i + 1, dtype=np.int64) * 1000 - i} for i in range(n)]
    raise KeyError(name)


# The columns of save_rows(): every type MindSpore's Dataset.save casts, arrays fixed and variable
# in their first dimension, and a name with punctuation (saved as "my_rows").
SAVE_COLUMNS = ["label", "big", "flag", "small", "u16", "u32", "half", "ratio", "score", "name", "blob", "image",
                "pixels", "mat", "seq", "my.rows"]


def save_rows() -> list[tuple]:
    """The rows both sides' Dataset.save write (a GeneratorDataset of SAVE_COLUMNS)."""
    out = []
    for i in range(11):
        pixels = (np.arange(36).reshape(3, 4, 3) * (i + 1) % 256).astype(np.uint8)
        out.append((
            np.int32(i - 3),
            np.int64((-1) ** i * 2**40 * i),
            np.bool_(i % 2),
            np.int8(-i),
            np.uint16(65000 - i),
            np.uint32(4_000_000_000 + i),
            np.float16(i / 4),
            np.float32(i / 3),
            np.float64(i / 7),
            np.array(f"row-{i}-é"),
            np.array(bytes([i + 1, 0, 255 - i, 7])),
            np.frombuffer(_jpeg(i), np.uint8),
            pixels,
            np.arange(6, dtype=np.float32).reshape(2, 3) * i,
            np.array([0, -1, 300, -70000, 2**33][: i % 5 + 1], dtype=np.int64) * (i + 1),
            np.full((i % 3 + 1, 2), i / 8, np.float64),
        ))
    return out


def save(file_name: str, num_files: int) -> None:
    import mindspore.dataset as ds

    ds.GeneratorDataset(save_rows, SAVE_COLUMNS, shuffle=False).save(file_name, num_files)


# One-column pipelines (their rows) that MindSpore's Dataset.save refuses, or writes as files it cannot
# read, and one it takes.
REFUSED_SAVES = {
    "strings": [np.array(["a", "b"])],
    "one_string_array": [np.array(["a"])],
    "bytes_array": [np.array([b"a", b"b"])],
    "varying_second_dimension": [np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)],
    "int_then_float": [np.int32(1), np.float32(2.5)],
    "scalar_then_array": [np.int32(1), np.array([2, 3], np.int32)],
    "taken": [np.array([1, 2], np.int64), np.array([3], np.int64)],
}


def refuse(folder: str) -> dict:
    """For each REFUSED_SAVES pipeline, what MindSpore's Dataset.save did: "refused" (it raised),
    "unreadable" (its MindDataset cannot read the files) or "saved"."""
    import mindspore.dataset as ds

    outcome = {}
    for name, values in REFUSED_SAVES.items():
        path = os.path.join(folder, name)
        try:
            ds.GeneratorDataset([(v,) for v in values], ["col"], shuffle=False).save(path)
        except (RuntimeError, ValueError, TypeError):
            outcome[name] = "refused"
            continue
        try:
            list(ds.MindDataset(path, shuffle=False).create_dict_iterator(output_numpy=True, num_epochs=1))
            outcome[name] = "saved"
        except (RuntimeError, ValueError, TypeError):
            outcome[name] = "unreadable"
    return outcome


def encode(value) -> list:
    """A value as JSON: [dtype, shape, base64 of its bytes] (bytes values as a 1-element S array)."""
    if isinstance(value, (bytes, bytearray)):
        array = np.array([bytes(value)])
    else:
        array = np.asarray(value)
    if array.dtype.kind == "U":
        return ["str", list(array.shape), str(array.item()) if array.ndim == 0 else array.tolist()]
    return [array.dtype.str, list(array.shape), base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()]


def write(out_dir: str) -> None:
    from mindspore.mindrecord import FileWriter

    for name, (shard_num, schema, index, calls) in DATASETS.items():
        path = os.path.join(out_dir, f"{name}.mindrecord")
        writer = FileWriter(path, shard_num=shard_num, overwrite=True)
        writer.set_header_size(1 << 14)
        writer.set_page_size(1 << 15)
        writer.add_schema(schema, f"minddata test set {name}")
        if index:
            writer.add_index(index)
        data = rows(name)
        start = 0
        for size in calls:
            writer.write_raw_data(data[start : start + size])
            start += size
        writer.commit()
        first = path + ("0" if shard_num > 1 else "")
        with open(os.path.join(out_dir, f"{name}.expected.json"), "w") as f:
            json.dump(read(first), f)


def read(first: str) -> dict:
    """What MindSpore reads from the set of ``first``: its MindDataset rows (shuffle=False) and
    column names, and its FileReader rows."""
    import mindspore.dataset as ds
    from mindspore.mindrecord import FileReader

    dataset = ds.MindDataset(first, shuffle=False)
    columns = dataset.get_col_names()
    mind_rows = [{k: encode(v) for k, v in row.items()} for row in dataset.create_dict_iterator(output_numpy=True, num_epochs=1)]
    reader = FileReader(first)
    reader_rows = [{k: encode(v) for k, v in row.items()} for row in reader.get_next()]
    reader.close()
    return {"columns": columns, "size": dataset.get_dataset_size(), "rows": mind_rows, "reader_rows": reader_rows}


def protect(out_dir: str) -> None:
    """``encrypted.mindrecord``: 5 rows of one int32 column, written under MindSpore's encryption."""
    from mindspore.mindrecord import FileWriter, set_enc_key

    set_enc_key("0123456789012345")
    try:
        writer = FileWriter(os.path.join(out_dir, "encrypted.mindrecord"), shard_num=1, overwrite=True)
        writer.add_schema({"label": {"type": "int32"}}, "encrypted")
        writer.write_raw_data([{"label": i} for i in range(5)])
        writer.commit()
    finally:
        set_enc_key(None)


def pack() -> None:
    """Recreate the stored archive (small files: the header and page sizes are MindSpore's minimum)."""
    with tempfile.TemporaryDirectory() as tmp:
        write(tmp)
        with tarfile.open(ARCHIVE, "w:gz") as tar:
            for name in sorted(os.listdir(tmp)):
                tar.add(os.path.join(tmp, name), arcname=name)


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "write" and len(sys.argv) == 3:
        write(sys.argv[2])
    elif command == "read" and len(sys.argv) >= 4 and len(sys.argv) % 2 == 0:
        for first, out in zip(sys.argv[2::2], sys.argv[3::2]):
            with open(out, "w") as f:
                json.dump(read(first), f)
    elif command == "save" and len(sys.argv) == 4:
        save(sys.argv[2], int(sys.argv[3]))
    elif command == "refuse" and len(sys.argv) == 4:
        with open(sys.argv[3], "w") as f:
            json.dump(refuse(sys.argv[2]), f)
    elif command == "protect" and len(sys.argv) == 3:
        protect(sys.argv[2])
    elif command == "pack":
        pack()
    else:
        sys.exit(__doc__)
