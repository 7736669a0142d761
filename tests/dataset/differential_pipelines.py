"""Small pipelines written once against the ``mindspore.dataset`` API, for the differential suite.

The same functions run under MindSpore 2.10 (in its own virtual environment: it needs numpy<2) and
under minddata; ``tests/dataset/test_mindspore_differential.py`` compares what they give. This
module imports neither library at the top: ``lib`` (``.ds``, ``.vision``, ``.transforms``) is passed
in. Run as a script under MindSpore's python it runs every pipeline in one process and writes the
results (``python differential_pipelines.py PATHS_JSON OUT_PREFIX``): MindSpore's import costs
seconds, so the suite pays it once.

Results per pipeline: ``columns`` (get_col_names), ``size`` (get_dataset_size), ``rows`` (every row
of one epoch from ``create_tuple_iterator(output_numpy=True)``), or ``error`` (the exception's type
and message) when building or iterating raised.
"""

from __future__ import annotations

import functools
import io
import json
import os
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


# -- the data every pipeline reads (written once, by the test, with Pillow) -----------------------


def make_data(folder: str) -> dict[str, Any]:
    """Write the input files into ``folder``; returns their paths (plain JSON)."""
    from PIL import Image

    images = os.path.join(folder, "images")
    rng = np.random.default_rng(0)
    sizes = [(120, 90), (97, 131), (64, 64), (150, 100), (80, 120), (133, 77)]
    for i, (w, h) in enumerate(sizes):
        cls = os.path.join(images, ["cat", "dog"][i % 2])
        os.makedirs(cls, exist_ok=True)
        y, x = np.mgrid[0:h, 0:w]
        base = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), (x * 3 + y) % 256], axis=-1)
        pixels = np.clip(base + rng.integers(0, 30, (h, w, 3)), 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
        with open(os.path.join(cls, f"{i:02d}.jpg"), "wb") as out:
            out.write(buf.getvalue())
    csv_plain = os.path.join(folder, "plain.csv")
    with open(csv_plain, "w", newline="") as out:
        # An empty string field, a quoted field holding a delimiter and a \r\n, CRLF line ends.
        out.write('1,0.5,abc\n2,1.5,\n3,2.25,"q,\r\nr"\r\n4,4.25,last\n')
    csv_parts = []
    for f in range(2):
        path = os.path.join(folder, f"part{f}.csv")
        with open(path, "w", newline="") as out:
            out.write("".join(f"{10 * f + i},row{i}\n" for i in range(5 + f)))
        csv_parts.append(path)
    csv_header = os.path.join(folder, "header.csv")
    with open(csv_header, "w", newline="") as out:
        out.write("name,city\nann,paris\nbob,\"new, york\"\ncid,rome\n")
    texts = []
    for f, lines in enumerate((["alpha", "beta", "gamma"], ["delta", "", "epsilon"])):
        path = os.path.join(folder, f"text{f}.txt")
        with open(path, "w") as out:
            out.write("\n".join(lines) + "\n")
        texts.append(path)
    text_cr = os.path.join(folder, "crlf.txt")
    with open(text_cr, "wb") as out:  # CRLF line ends, a "\r"-only line, a bare "\r" inside a line
        out.write(b"a\r\nb\r\n\r\nc\rd\n\nlast")
    imdb = os.path.join(folder, "imdb")
    for split, label, text in [("train", "pos", "good film"), ("train", "neg", "dull"), ("test", "pos", "fine"),
                                 ("test", "neg", "poor")]:
        os.makedirs(os.path.join(imdb, split, label), exist_ok=True)
        with open(os.path.join(imdb, split, label, "0_7.txt"), "w") as out:
            out.write(text)
    manifest = os.path.join(folder, "manifest.json")
    with open(manifest, "w") as out:  # one entry of one class, one of two
        for name, classes in [("cat/00.jpg", ["cat"]), ("dog/01.jpg", ["cat", "dog"]), ("cat/02.jpg", ["dog"])]:
            out.write(json.dumps({"source": os.path.join(images, name), "usage": "train",
                                  "annotation": [{"name": c, "type": "label"} for c in classes]}) + "\n")
    return {"images": images, "csv_plain": csv_plain, "csv_header": csv_header, "texts": texts,
            "csv_parts": csv_parts, "text_cr": text_cr, "imdb": imdb, "manifest": manifest}


# -- the pipelines ---------------------------------------------------------------------------------


class _RandomAccess:
    def __init__(self, n: int):
        self.n = n

    def __getitem__(self, i: int) -> tuple:
        return np.array(i, dtype=np.int64), np.array([i, i * i], dtype=np.float32)

    def __len__(self) -> int:
        return self.n


def _gen() -> Any:
    for i in range(5):
        yield np.array(i, dtype=np.int64), np.arange(i + 1, dtype=np.int32)


def _abc(lib: Any) -> Any:
    return lib.ds.NumpySlicesDataset(
        {"a": np.arange(6, dtype=np.int64), "b": np.arange(6, dtype=np.int64) * 10, "c": np.arange(6.0)},
        shuffle=False,
    )


def _five(lib: Any) -> Any:
    return lib.ds.NumpySlicesDataset(np.arange(5, dtype=np.int64), column_names=["x"], shuffle=False)


def _images(lib: Any, paths: dict, ops: list | None = None, **kwargs: Any) -> Any:
    data = lib.ds.ImageFolderDataset(paths["images"], shuffle=False, **kwargs)
    return data.map(ops, input_columns="image") if ops else data


def _ragged(lib: Any) -> Any:
    return lib.ds.GeneratorDataset(_gen, ["i", "v"], shuffle=False)


def _shard_csv(k: int, lib: Any, p: dict) -> Any:
    return lib.ds.CSVDataset(p["csv_parts"], column_defaults=[0, ""], column_names=["n", "s"], shuffle=False,
                             num_shards=2, shard_id=k)


def _shard_text(k: int, lib: Any, p: dict) -> Any:
    return lib.ds.TextFileDataset(p["texts"], shuffle=False, num_shards=3, shard_id=k)


def _shard_numpy(k: int, lib: Any, p: dict) -> Any:
    return lib.ds.NumpySlicesDataset(np.arange(7, dtype=np.int64), column_names=["x"], shuffle=False,
                                     num_shards=3, shard_id=k)


def _shard_sampler(k: int, lib: Any, p: dict) -> Any:
    return lib.ds.NumpySlicesDataset(np.arange(5, dtype=np.int64), column_names=["x"],
                                     sampler=lib.ds.DistributedSampler(2, k, shuffle=False))


def _shard_images(k: int, lib: Any, p: dict) -> Any:
    return _images(lib, p, num_shards=4, shard_id=k)


PIPELINES: dict[str, Callable[[Any, dict], Any]] = {
    # sources
    "numpy_dict": lambda lib, p: _abc(lib),
    "numpy_list": lambda lib, p: lib.ds.NumpySlicesDataset([[1, 2], [3, 4], [5, 6]], column_names=["x"], shuffle=False),
    "generator_function": lambda lib, p: _ragged(lib),
    "generator_random_access": lambda lib, p: lib.ds.GeneratorDataset(_RandomAccess(5), ["i", "f"], shuffle=False),
    "image_folder": lambda lib, p: _images(lib, p),
    "image_folder_num_samples": lambda lib, p: _images(lib, p, num_samples=4),
    "csv_typed": lambda lib, p: lib.ds.CSVDataset(
        p["csv_plain"], column_defaults=[0, 0.0, "-"], column_names=["i", "f", "s"], shuffle=False),
    "csv_header": lambda lib, p: lib.ds.CSVDataset(p["csv_header"], shuffle=False),
    "text_files": lambda lib, p: lib.ds.TextFileDataset(p["texts"], shuffle=False),
    "csv_two_files": lambda lib, p: lib.ds.CSVDataset(
        p["csv_parts"], column_defaults=[0, ""], column_names=["n", "s"], shuffle=False),
    **{f"shard_csv_{k}_of_2": functools.partial(_shard_csv, k) for k in range(2)},
    **{f"shard_text_{k}_of_3": functools.partial(_shard_text, k) for k in range(3)},
    # map and column changes
    "map_non_adjacent_to_one": lambda lib, p: _abc(lib).map(
        lambda a, c: a + c, input_columns=["a", "c"], output_columns=["s"]),
    "map_one_to_many": lambda lib, p: _abc(lib).map(
        lambda b: (b, b * 2), input_columns=["b"], output_columns=["b1", "b2"]),
    "map_same_count_swaps": lambda lib, p: _abc(lib).map(
        lambda c, a: (c, a), input_columns=["c", "a"], output_columns=["p", "q"]),
    "map_chain": lambda lib, p: _five(lib).map([lambda x: x + 1, lambda x: x * 3], input_columns="x"),
    # batching
    "batch": lambda lib, p: _five(lib).batch(2),
    "batch_drop_remainder": lambda lib, p: _five(lib).batch(2, drop_remainder=True),
    "padded_batch": lambda lib, p: _ragged(lib).padded_batch(2, pad_info={"v": ([6], -1)}),
    "batch_after_map": lambda lib, p: _abc(lib).map(lambda a: a * 2, input_columns="a").batch(4),
    # shuffle-free dataset ops
    "repeat": lambda lib, p: _five(lib).repeat(2),
    "take_repeat": lambda lib, p: _five(lib).take(2).repeat(3),
    "repeat_skip": lambda lib, p: _five(lib).repeat(2).skip(3),
    "zip": lambda lib, p: lib.ds.zip((_five(lib), _abc(lib).project(["b", "c"]))),
    "concat": lambda lib, p: _five(lib).concat(_five(lib).map(lambda x: x + 10, input_columns="x")),
    "project": lambda lib, p: _abc(lib).project(["c", "a"]),
    "rename": lambda lib, p: _abc(lib).rename(["a", "c"], ["alpha", "gamma"]),
    "take": lambda lib, p: _abc(lib).take(4),
    "skip": lambda lib, p: _abc(lib).skip(4),
    "filter": lambda lib, p: _abc(lib).filter(lambda a: a % 2 == 0, input_columns=["a"]),
    "filter_then_batch": lambda lib, p: _five(lib).filter(lambda x: x > 0).batch(3),
    # sharding (deterministic without shuffling)
    **{f"shard_numpy_{k}_of_3": functools.partial(_shard_numpy, k) for k in range(3)},
    **{f"shard_sampler_{k}_of_2": functools.partial(_shard_sampler, k) for k in range(2)},
    **{f"shard_images_{k}_of_4": functools.partial(_shard_images, k) for k in range(4)},
    # deterministic vision and transforms ops
    "decode": lambda lib, p: _images(lib, p, [lib.vision.Decode()]),
    "decode_resize_small": lambda lib, p: _images(lib, p, [lib.vision.Decode(), lib.vision.Resize(24)]),
    "decode_resize_pair": lambda lib, p: _images(lib, p, [lib.vision.Decode(), lib.vision.Resize((20, 30))]),
    "decode_resize_centercrop": lambda lib, p: _images(
        lib, p, [lib.vision.Decode(), lib.vision.Resize(40), lib.vision.CenterCrop(32)]),
    "inference_preprocessing": lambda lib, p: _images(lib, p, [
        lib.vision.Decode(), lib.vision.Resize(36), lib.vision.CenterCrop(32),
        lib.vision.Normalize(MEAN, STD), lib.vision.HWC2CHW()]).batch(3),
    "rescale_typecast": lambda lib, p: _images(lib, p, [
        lib.vision.Decode(), lib.vision.Resize((8, 8)), lib.vision.Rescale(1.0 / 255, -0.5),
        lib.transforms.TypeCast(np.float16)]),
    "pad_flip": lambda lib, p: _images(lib, p, [
        lib.vision.Decode(), lib.vision.Resize((6, 6)), lib.vision.Pad(2, fill_value=7),
        lib.vision.HorizontalFlip()]),
    "one_hot_labels": lambda lib, p: _images(lib, p).map(lib.transforms.OneHot(2), input_columns="label"),
    "typecast_labels": lambda lib, p: _images(lib, p).map(
        lib.transforms.TypeCast(np.int64), input_columns="label").project(["label"]),
    "sizes_of_a_long_chain": lambda lib, p: _abc(lib).repeat(3).skip(2).take(11).batch(4, drop_remainder=True),
    "resize_nearest": lambda lib, p: _images(lib, p, [
        lib.vision.Decode(), lib.vision.Resize((17, 23), lib.vision.Inter.NEAREST)]),
    "resize_bicubic": lambda lib, p: _images(lib, p, [
        lib.vision.Decode(), lib.vision.Resize((17, 23), lib.vision.Inter.BICUBIC)]),
    "resize_area": lambda lib, p: _images(lib, p, [
        lib.vision.Decode(), lib.vision.Resize((17, 23), lib.vision.Inter.AREA)]),
    "resize_up": lambda lib, p: _images(lib, p, [lib.vision.Decode(), lib.vision.Resize((150, 170))]),
    "crop_vflip": lambda lib, p: _images(lib, p, [
        lib.vision.Decode(), lib.vision.Crop((5, 7), (20, 30)), lib.vision.VerticalFlip()]),
    "normalize_chw": lambda lib, p: _images(lib, p, [
        lib.vision.Decode(), lib.vision.Resize((10, 12)), lib.vision.HWC2CHW(),
        lib.vision.Normalize(MEAN, STD, is_hwc=False)]),
    "image_folder_class_indexing": lambda lib, p: lib.ds.ImageFolderDataset(
        p["images"], shuffle=False, class_indexing={"cat": 5, "dog": 2}).project(["label"]),
    "sequential_sampler": lambda lib, p: lib.ds.NumpySlicesDataset(
        np.arange(8, dtype=np.int64), column_names=["x"], sampler=lib.ds.SequentialSampler(2, 4)),
    "subset_sampler": lambda lib, p: lib.ds.NumpySlicesDataset(
        np.arange(8, dtype=np.int64), column_names=["x"], sampler=lib.ds.SubsetSampler([5, 1, 1, 7])),
    "generator_num_samples": lambda lib, p: lib.ds.GeneratorDataset(
        _RandomAccess(6), ["i", "f"], shuffle=False, num_samples=4),
    "per_batch_map": lambda lib, p: _five(lib).batch(
        2, per_batch_map=lambda x, info: ([v * 10 + info.get_batch_num() for v in x],), input_columns=["x"]),
    "fill_duplicate": lambda lib, p: _five(lib).map(lib.transforms.Fill(7), input_columns="x").map(
        lib.transforms.Duplicate(), input_columns="x", output_columns=["x", "y"]),
    "zip_rename_batch": lambda lib, p: lib.ds.zip((_five(lib), _five(lib).rename("x", "y"))).batch(3),
    "take_more_than_rows": lambda lib, p: _five(lib).take(100),
    "skip_all": lambda lib, p: _five(lib).skip(9),
    "endless_repeat_size": lambda lib, p: _SizeOnly(_five(lib).repeat(-1).batch(2)),
    "one_hot_smoothing": lambda lib, p: _labels(lib, np.int32).map(
        lib.transforms.OneHot(3, smoothing_rate=0.1), input_columns="y"),
    "one_hot_int64_labels": lambda lib, p: _labels(lib, np.int64).map(lib.transforms.OneHot(3), input_columns="y"),
}



class _Probe:
    """A dataset compared on what ``probe(dataset)`` computes from it (rows of arrays) instead of
    its output_numpy rows: the default iterator's Tensor values, Dataset methods after transforms."""

    def __init__(self, dataset: Any, probe: Callable[[Any], list]):
        self.dataset, self.probe = dataset, probe

    def get_col_names(self) -> list[str]:
        return self.dataset.get_col_names()

    def get_dataset_size(self) -> int:
        return self.dataset.get_dataset_size()

    def create_tuple_iterator(self, **kwargs: Any) -> Any:
        return iter(self.probe(self.dataset))


def _tensor_essentials(dataset: Any) -> list:
    # The default iterator's values as ported code uses them: asnumpy(), shape, dim(), ndim, size.
    return [[v.asnumpy(), np.array(v.shape, np.int64), np.array([v.dim(), v.ndim, v.size], np.int64)]
            for row in dataset.create_tuple_iterator(num_epochs=1) for v in row]


def _source_answers(dataset: Any) -> list:
    # What MindSpore answers from the source after operations: class indexing (as sorted pairs),
    # class count (-1 for None), shuffled, sharded.
    pairs = sorted(dataset.get_class_indexing().items())
    count = dataset.num_classes()
    return [[np.array([k for k, _ in pairs] or [""]), np.array([i for _, i in pairs] or [-1], np.int64),
             np.array([-1 if count is None else count, dataset.is_shuffled(), dataset.is_sharded()], np.int64)]]


PIPELINES.update({
    "class_indexing_after_map_batch": lambda lib, p: _Probe(_images(lib, p, [lib.vision.Decode()]).batch(2),
                                                            _source_answers),
    "class_indexing_after_zip_shuffle": lambda lib, p: _Probe(lib.ds.zip((lib.ds.ImageFolderDataset(
        p["images"], class_indexing={"cat": 5, "dog": 2}, num_shards=2, shard_id=0), _five(lib))).shuffle(2),
        _source_answers),
    "custom_class_indexing_after_batch": lambda lib, p: _Probe(lib.ds.ImageFolderDataset(
        p["images"], class_indexing={"cat": 5, "dog": 2}, shuffle=False).batch(3).repeat(2), _source_answers),
    "text_file_carriage_returns": lambda lib, p: lib.ds.TextFileDataset(p["text_cr"], shuffle=False),
    "imdb_labels": lambda lib, p: lib.ds.IMDBDataset(p["imdb"], shuffle=False),
    "manifest_labels": lambda lib, p: lib.ds.ManifestDataset(p["manifest"], shuffle=False).project(["label"]),
    "manifest_classes_after_map": lambda lib, p: _Probe(lib.ds.ManifestDataset(p["manifest"], shuffle=False).map(
        lib.vision.Decode(), input_columns="image"), _source_answers),
    # Exact grey levels (int16, so not compared within one level as images are): PIL input is
    # converted as MindSpore's PIL-only RandomGrayscale does.
    "random_grayscale_pil_exact": lambda lib, p: _Probe(_images(lib, p, [
        lib.vision.Decode(to_pil=True), lib.vision.RandomGrayscale(1.0)]), lambda d: [
        [np.asarray(row[0]).astype(np.int16)] for row in d.create_tuple_iterator(num_epochs=1, output_numpy=True)]),
    "numpy_ragged_arrays": lambda lib, p: lib.ds.NumpySlicesDataset(
        [np.array([1, 2, 3]), np.array([4, 5]), np.array([6])], column_names=["x"], shuffle=False),
    "numpy_ragged_lists_two_columns": lambda lib, p: lib.ds.NumpySlicesDataset(
        ([[1.5, 2.5], [3.5]], [7, 8]), column_names=["x", "y"], shuffle=False),
    "unique_2d_rows": lambda lib, p: lib.ds.NumpySlicesDataset(
        {"x": np.array([[[0, -1, -2, -1, 2], [2, 0, 2, 1, -3]]], np.int32)}, shuffle=False).map(
        lib.transforms.Unique(), input_columns="x", output_columns=["x", "idx", "count"]),
    "no_classes_after_map": lambda lib, p: _Probe(_five(lib).map(lambda x: x, input_columns="x"), _source_answers),

    "default_iterator_tensors": lambda lib, p: _Probe(_abc(lib).batch(4), _tensor_essentials),
    "default_dict_iterator_asnumpy": lambda lib, p: _Probe(_five(lib).map(lambda x: x * 2, input_columns="x"), lambda d: [
        [r["x"].asnumpy()] for r in d.create_dict_iterator(num_epochs=1)]),
})

# Pipelines both libraries must refuse with a RuntimeError (MindSpore when iterating; minddata may
# refuse earlier, when the graph is built).
RAISING: dict[str, Callable[[Any, dict], Any]] = {
    "missing_map_column": lambda lib, p: _five(lib).map(lambda z: z, input_columns=["nope"]),
    "missing_project_column": lambda lib, p: _five(lib).project(["nope"]),
    "missing_rename_column": lambda lib, p: _five(lib).rename(["nope"], ["z"]),
    "concat_int32_int64": lambda lib, p: _labels(lib, np.int32).concat(_labels(lib, np.int64)),
    "typecast_from_strings": lambda lib, p: lib.ds.NumpySlicesDataset(
        {"s": np.array(["1", "2.5"])}, shuffle=False).map(lib.transforms.TypeCast(np.float32), input_columns="s"),
}


def _labels(lib: Any, dtype: Any) -> Any:
    return lib.ds.NumpySlicesDataset({"y": np.array([0, 2, 1], dtype)}, shuffle=False)


class _SizeOnly:
    """A dataset compared on columns and size only (iterating an endless repeat never ends)."""

    def __init__(self, dataset: Any):
        self.dataset = dataset

    def get_col_names(self) -> list[str]:
        return self.dataset.get_col_names()

    def get_dataset_size(self) -> int:
        return self.dataset.get_dataset_size()

    def create_tuple_iterator(self, **kwargs: Any) -> Any:
        return iter(())


# -- running and recording ----------------------------------------------------------------------------


def run(lib: Any, paths: dict, names: list[str] | None = None) -> dict[str, dict]:
    """Every pipeline's columns, size and rows (or the error it raised), in plain Python/NumPy."""
    results: dict[str, dict] = {}
    every = {**PIPELINES, **RAISING}
    for name in names or list(every):
        try:
            dataset = every[name](lib, paths)
            columns = list(dataset.get_col_names())
            size = int(dataset.get_dataset_size())
            rows = [list(row) for row in dataset.create_tuple_iterator(num_epochs=1, output_numpy=True)]
            results[name] = {"columns": columns, "size": size, "rows": [[np.asarray(v) for v in r] for r in rows]}
        except Exception as error:  # noqa: BLE001 - recorded and compared, never hidden
            results[name] = {"error": f"{type(error).__name__}: {error}",
                             "runtime_error": isinstance(error, RuntimeError)}
    return results


def save(results: dict[str, dict], prefix: str) -> None:
    """``prefix.json`` (columns, sizes, errors, row counts) and ``prefix.npz`` (the values)."""
    arrays, meta = {}, {}
    for name, result in results.items():
        entry = {k: v for k, v in result.items() if k != "rows"}
        if "rows" in result:
            entry["rows"] = [len(r) for r in result["rows"]]
            for i, row in enumerate(result["rows"]):
                for j, value in enumerate(row):
                    arrays[f"{name}|{i}|{j}"] = value
        meta[name] = entry
    np.savez(prefix + ".npz", **arrays)
    with open(prefix + ".json", "w") as out:
        json.dump(meta, out)


def load(prefix: str) -> dict[str, dict]:
    with open(prefix + ".json") as f:
        meta = json.load(f)
    with np.load(prefix + ".npz", allow_pickle=False) as arrays:
        for name, entry in meta.items():
            if "rows" in entry:
                entry["rows"] = [[arrays[f"{name}|{i}|{j}"] for j in range(width)]
                                 for i, width in enumerate(entry["rows"])]
    return meta


def mindspore_lib() -> Any:
    import mindspore.dataset as ds
    import mindspore.dataset.transforms as transforms
    import mindspore.dataset.vision as vision

    return types.SimpleNamespace(ds=ds, vision=vision, transforms=transforms)


def minddata_lib() -> Any:
    import minddata as ds
    from minddata import transforms, vision

    return types.SimpleNamespace(ds=ds, vision=vision, transforms=transforms)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        data_paths = json.load(f)
    save(run(mindspore_lib(), data_paths), sys.argv[2])
