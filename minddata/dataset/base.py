"""``Dataset``: a lazy node of the dataflow graph, with MindSpore's operations and iterators."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from minddata.dataset import _validate as v
from minddata.dataset import splitting
from minddata.engine import ir
from minddata.errors import ArgumentError, ColumnNotFoundError, GraphError
from minddata.ops.base import Op

if TYPE_CHECKING:
    from minddata.config import RunOptions

__all__ = ["Dataset", "zip", "concat"]

_builtin_zip = zip


class Dataset:
    """A node of the lazy dataflow graph. Operations return new datasets; nothing runs until iteration.

    Examples:
        >>> import minddata as md
        >>> ds = md.NumpySlicesDataset({"x": list(range(5))}, shuffle=False)
        >>> ds = ds.map(lambda x: x + 1, input_columns="x").batch(2)
        >>> [b["x"].tolist() for b in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
        [[1, 2], [3, 4], [5]]
    """

    def __init__(self, node: ir.Node, inputs: Sequence[Dataset] = ()):
        self._node = node
        self._size_cache: int | None = None
        # The datasets this one was made from (none for a source): MindSpore's ``children``, which
        # get_class_indexing(), num_classes() and the other source-answered methods ask in turn.
        self._inputs: tuple[Dataset, ...] = tuple(inputs)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Dataset classes remember their constructor call, which serialize() writes for the source.
        from minddata.dataset._recorded import remember_source_arguments

        remember_source_arguments(cls)

    # -- operations --------------------------------------------------------------------------

    def map(
        self,
        operations: Any,
        input_columns: str | Sequence[str] | None = None,
        output_columns: str | Sequence[str] | None = None,
        num_parallel_workers: int | None = None,
        python_multiprocessing: bool = False,
        *,
        device: str | None = None,
        **kwargs: Any,
    ) -> Dataset:
        """Apply ``operations`` (op specs or Python callables) in order to ``input_columns``.

        ``input_columns=None`` passes the first column only, as MindSpore. The last op's outputs are named
        ``output_columns`` (default: the input names). With as many outputs as inputs each output takes
        its input's place; otherwise outputs come first, then the other columns (as MindSpore).
        ``python_multiprocessing=True`` runs the ops in worker processes (arrays travel through shared
        memory); callables are sent with cloudpickle, so lambdas work.

        ``device`` places every op of this map that was not placed itself (``op.device(...)`` wins):
        ``"CPU"``, ``"GPU"``, ``"Dvpp"`` (alias ``"Ascend"``) or ``"auto"`` (the placement pass chooses
        per op by cost among the devices this machine has). Python callables always run on the CPU.
        Devices are checked when an iterator is created (``minddata devices`` lists what is here).

        Examples:
            >>> import minddata as md
            >>> from minddata import vision
            >>> ds = md.NumpySlicesDataset({"image": [[[[1, 2, 3]]]]}, shuffle=False)
            >>> ds = ds.map([vision.HorizontalFlip()], input_columns="image", device="auto")
            >>> next(iter(ds))[0].shape
            (1, 1, 3)
        """
        where = "map"
        ops = operations if isinstance(operations, (list, tuple)) else [operations]
        if not ops:
            raise ArgumentError("map: `operations` must name at least one op or callable. Found: []")
        for i, op in enumerate(ops):
            if not (isinstance(op, Op) or callable(op)):
                raise ArgumentError(
                    f"map: operations[{i}] must be an op (e.g. vision.Decode()) or a callable. Found: {op!r}"
                )
        unknown = set(kwargs) - {"max_rowsize", "cache", "callbacks", "offload"}
        if unknown:
            raise ArgumentError(f"map: unexpected argument(s) {sorted(unknown)}")
        if device is not None:
            ops = _placed_ops(ops, device)
        child = self._node
        runner = None
        if kwargs.get("callbacks"):
            from minddata.dataset.callback import CallbackRunner, check_callbacks

            runner = CallbackRunner(check_callbacks(where, kwargs["callbacks"]))
            child = ir.CallbackNode(child, runner, "begin")
        node = ir.MapNode(
            child,
            list(ops),
            v.column_list(where, "input_columns", input_columns),
            v.column_list(where, "output_columns", output_columns),
            v.workers(where, num_parallel_workers),
            bool(v.bool_arg(where, "python_multiprocessing", python_multiprocessing)),
        )
        if kwargs.get("cache") is not None:
            from minddata.dataset.cache import with_cache

            node = with_cache(where, node, kwargs["cache"])
        if runner is not None:
            node = ir.CallbackNode(node, runner, "end")
        return self._checked(node)

    def batch(
        self,
        batch_size: int | Callable[[Any], int],
        drop_remainder: bool = False,
        num_parallel_workers: int | None = None,
        **kwargs: Any,
    ) -> Dataset:
        """Stack ``batch_size`` consecutive rows into one (each column gains a leading axis).

        ``batch_size`` may be a callable of :class:`BatchInfo` giving each batch's size. Keyword
        arguments: ``per_batch_map(*column_lists, batch_info)`` returning a tuple of column lists,
        with ``input_columns`` / ``output_columns`` as in :meth:`map`.
        """
        where = "batch"
        if not callable(batch_size):
            v.positive_int(where, "batch_size", batch_size)
        v.bool_arg(where, "drop_remainder", drop_remainder)
        per_batch_map = kwargs.pop("per_batch_map", None)
        input_columns = v.column_list(where, "input_columns", kwargs.pop("input_columns", None))
        output_columns = v.column_list(where, "output_columns", kwargs.pop("output_columns", None))
        kwargs.pop("python_multiprocessing", None)
        kwargs.pop("max_rowsize", None)
        if kwargs:
            raise ArgumentError(f"batch: unexpected argument(s) {sorted(kwargs)}")
        if per_batch_map is not None and not callable(per_batch_map):
            raise ArgumentError(f"batch: `per_batch_map` must be callable. Found: {per_batch_map!r}")
        if per_batch_map is None and (input_columns or output_columns):
            raise ArgumentError("batch: `input_columns`/`output_columns` only apply with `per_batch_map`.")
        workers = 1 if num_parallel_workers is None else v.workers(where, num_parallel_workers)
        if not callable(batch_size):
            _count_sync_in_batches(self._node, int(batch_size))
        node = ir.BatchNode(
            self._node,
            batch_size if callable(batch_size) else int(batch_size),
            bool(drop_remainder),
            workers,
            per_batch_map,
            input_columns,
            output_columns,
        )
        return self._checked(node)

    def padded_batch(
        self,
        batch_size: int | Callable[[Any], int],
        drop_remainder: bool = False,
        num_parallel_workers: int | None = None,
        pad_info: dict[str, tuple[Any, Any]] | None = None,
    ) -> Dataset:
        """:meth:`batch`, padding rows of a column to one shape first (MindSpore's ``padded_batch``).

        ``pad_info`` maps a column to ``(pad_shape, pad_value)``: ``pad_shape`` is a list with one size
        per dimension, where ``None`` means "the largest row of this batch"; ``pad_shape=None`` pads every
        dimension that way. ``pad_value`` fills the padding (``None``: 0, or ``""`` for strings).
        Columns not named are batched as they are (their rows must share a shape); ``pad_info={}``
        pads every column to its largest row; ``pad_info=None`` pads nothing. A row larger than its
        ``pad_shape`` is an error (padding never truncates).

        Examples:
            >>> import minddata as md
            >>> ds = md.NumpySlicesDataset({"n": [1, 3, 2]}, shuffle=False)
            >>> ds = ds.map(lambda n: np.arange(n), input_columns="n", output_columns="seq")
            >>> ds = ds.padded_batch(3, pad_info={"seq": ([None], -1)})
            >>> next(iter(ds.create_dict_iterator(output_numpy=True)))["seq"].tolist()
            [[0, -1, -1], [0, 1, 2], [0, 1, -1]]
        """
        where = "padded_batch"
        if not callable(batch_size):
            v.positive_int(where, "batch_size", batch_size)
        v.bool_arg(where, "drop_remainder", drop_remainder)
        info = _pad_info(where, pad_info)
        if info:
            missing = [c for c in info if c not in self.get_col_names()]
            if missing:
                raise ColumnNotFoundError(
                    f"{where}: pad_info names column(s) {missing} that the input does not have. "
                    f"Input columns: {self.get_col_names()}."
                )
        workers = 1 if num_parallel_workers is None else v.workers(where, num_parallel_workers)
        node = ir.BatchNode(
            self._node,
            batch_size if callable(batch_size) else int(batch_size),
            bool(drop_remainder),
            workers,
            None,
            None,
            None,
            pad_info=info,
        )
        return self._checked(node)

    def bucket_batch_by_length(
        self,
        column_names: str | Sequence[str],
        bucket_boundaries: Sequence[int],
        bucket_batch_sizes: Sequence[int],
        element_length_function: Callable[..., Any] | None = None,
        pad_info: dict[str, tuple[Any, Any]] | None = None,
        pad_to_bucket_boundary: bool = False,
        drop_remainder: bool = False,
    ) -> Dataset:
        """Batch rows of similar length together (MindSpore's ``bucket_batch_by_length``).

        A row's length is ``element_length_function(*column_names)`` or, without a function, the
        first dimension of the single column in ``column_names``. ``bucket_boundaries`` (strictly
        increasing ints > 0) cut lengths into ``len(bucket_boundaries) + 1`` buckets:
        ``[0, b0), [b0, b1), ..., [b_last, inf)``; ``bucket_batch_sizes`` gives each bucket's batch
        size. A full bucket is emitted as a batch at once; at the end of a pass the rest of each bucket
        is emitted in bucket order, unless ``drop_remainder``. ``pad_info`` is as in
        :meth:`padded_batch`; with ``pad_to_bucket_boundary`` its ``None`` dimensions pad to the
        bucket's upper boundary minus 1 (a row in the last bucket is then an error).

        Examples:
            >>> import minddata as md
            >>> ds = md.NumpySlicesDataset({"n": [1, 5, 2, 6]}, shuffle=False)
            >>> ds = ds.map(lambda n: np.ones(n, np.int32), input_columns="n", output_columns="seq")
            >>> ds = ds.bucket_batch_by_length("seq", [4], [2, 2], pad_info={"seq": ([None], 0)})
            >>> [b["seq"].shape for b in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
            [(2, 2), (2, 6)]
        """
        where = "bucket_batch_by_length"
        names = v.column_list(where, "column_names", column_names, allow_none=False)
        if isinstance(bucket_boundaries, (str, bytes)) or not isinstance(bucket_boundaries, (list, tuple)):
            raise ArgumentError(f"{where}: `bucket_boundaries` must be a list of ints. Found: {bucket_boundaries!r}")
        if not bucket_boundaries:
            raise ArgumentError(f"{where}: `bucket_boundaries` must name at least one boundary. Found: []")
        bounds = [v.positive_int(where, "bucket_boundaries", b) for b in bucket_boundaries]
        if any(b >= c for b, c in _builtin_zip(bounds, bounds[1:])):
            raise ArgumentError(f"{where}: `bucket_boundaries` must be strictly increasing. Found: {bounds}")
        if isinstance(bucket_batch_sizes, (str, bytes)) or not isinstance(bucket_batch_sizes, (list, tuple)):
            raise ArgumentError(f"{where}: `bucket_batch_sizes` must be a list of ints. Found: {bucket_batch_sizes!r}")
        sizes = [v.positive_int(where, "bucket_batch_sizes", b) for b in bucket_batch_sizes]
        if len(sizes) != len(bounds) + 1:
            raise ArgumentError(
                f"{where}: `bucket_batch_sizes` needs one size per bucket, len(bucket_boundaries) + 1 = "
                f"{len(bounds) + 1}. Found {len(sizes)}: {sizes}"
            )
        if element_length_function is None and len(names) != 1:  # type: ignore[arg-type]  # column_list(allow_none=False) gives a list
            raise ArgumentError(
                f"{where}: without `element_length_function` the length is the first dimension of one column, "
                f"so `column_names` must name exactly one. Found: {names}"
            )
        if element_length_function is not None and not callable(element_length_function):
            raise ArgumentError(f"{where}: `element_length_function` must be callable. Found: {element_length_function!r}")
        v.bool_arg(where, "pad_to_bucket_boundary", pad_to_bucket_boundary)
        v.bool_arg(where, "drop_remainder", drop_remainder)
        node = ir.BucketBatchNode(
            self._node,
            names,  # type: ignore[arg-type]  # column_list(allow_none=False) gives a list
            bounds,  # type: ignore[arg-type]  # positive_int gives None only with allow_none
            sizes,  # type: ignore[arg-type]  # positive_int gives None only with allow_none
            element_length_function,
            _pad_info(where, pad_info),
            bool(pad_to_bucket_boundary),
            bool(drop_remainder),
        )
        return self._checked(node)

    def save(self, file_name: str, num_files: int = 1, file_type: str = "mindrecord") -> None:
        """Write one epoch of this pipeline's output to files: MindSpore's MindRecord (the default),
        minddata's Arrow record files (``file_type="arrow"``) or WebDataset tar shards
        (``file_type="webdataset"``). Read the first two back with :class:`MindDataset`, which tells
        them apart by content. Files appear only once every row is written; existing files are an
        error, never overwritten.

        ``file_type="mindrecord"``: MindRecord files as MindSpore 2.10's ``Dataset.save`` writes
        them (MindSpore reads them). ``num_files`` (1 to 1000) shards: ``file_name`` itself for one,
        else ``file_name0``, ``file_name1``, ... (not zero-padded), each with its ``.db`` index; row
        ``i`` goes to shard ``i % num_files``, so rows read back in order only with one file. The
        schema comes from the first row, with MindSpore's casts: bool, int8, uint8, int16, uint16
        and int32 are stored as ``int32``; uint32, int64 and uint64 as ``int64``; float16 and float32
        as ``float32``; float64 as ``float64``; strings as ``string``; a bytes value (a 0-d or
        one-element ``S`` array) as ``bytes``. Arrays keep their shape, the first dimension free to
        vary between rows (``[-1, ...]``); a 1-D uint8 array (an encoded image) is stored as an
        ``int32`` array, as MindSpore stores it (turn it into a bytes value with
        ``lambda img: np.array(img.tobytes())`` in a map to store it as bytes, which ``Decode``
        reads). Arrays of strings or bytes, other dtypes, shapes that vary after the first
        dimension, and a column whose type or rank changes between rows are errors naming the
        column and the fix. Punctuation in column names becomes ``_``.

        ``file_type="arrow"``: minddata's Arrow record files (:mod:`minddata.record`), which take
        every NumPy type and shape, but which MindSpore does not read. ``num_files`` shards named as
        above (each with its ``.meta.json``); 1-D uint8 arrays are stored as bytes, strings as
        strings, other arrays as typed tensors (a dimension that varies between rows is stored as
        variable, -1).

        ``file_type="webdataset"``: ``num_files`` tar shards (``file_name`` itself for one, else
        ``name-000000.tar``, ``name-000001.tar``, ... for ``name.tar``: read them back with
        ``WebDataset("name-{000000..00000N}.tar")`` or the ``webdataset`` package); row ``i`` goes
        to shard ``i % num_files``. A sample's key is its ``__key__`` column if there is one, else the
        row number (9 digits); every other column is a member ``<key>.<column>`` when the column's name
        ends in an extension readers decode (``jpg``, ``png``, ``cls``, ``txt``, ``json``, ``npy``, ...),
        else ``<key>.<column>.<type>`` with the type of its first row's value, so that it reads back
        (in :class:`WebDataset` and the ``webdataset`` package) as it was written: bytes and 1-D uint8
        arrays as they are, under ``.jpg``/``.png``/``.gif``/``.webp``/``.tiff``/``.bmp`` when they are
        an encoded image (a MindRecord ``image`` column becomes ``image.jpg``, which ``vision.Decode()``
        and ``webdataset``'s image decoders take), else under the column's name; strings as UTF-8
        (``.txt``), integers as ASCII digits (``.cls``, read back as an int64); other values in NumPy's
        ``.npy`` format (``.npy``).

        ``file_name`` is a local path (or a ``file://`` URL): an object storage URL (``s3://``,
        ``gs://``, ...) is refused; write locally, then upload the files.

        Examples:
            >>> import minddata as md, numpy as np, tempfile, os
            >>> path = os.path.join(tempfile.mkdtemp(), "nums.mindrecord")
            >>> ds = md.NumpySlicesDataset({"x": [1, 2, 3], "v": np.ones((3, 2), np.float32)}, shuffle=False)
            >>> ds.save(path)
            >>> back = md.MindDataset(path, shuffle=False)
            >>> [(int(r["x"]), r["v"].tolist()) for r in back.create_dict_iterator(output_numpy=True)]
            [(1, [1.0, 1.0]), (2, [1.0, 1.0]), (3, [1.0, 1.0])]
            >>> ds.save(os.path.join(os.path.dirname(path), "nums.arrow"), num_files=2, file_type="arrow")
            >>> sorted(f for f in os.listdir(os.path.dirname(path)) if not f.endswith(".json"))
            ['nums.arrow0', 'nums.arrow1', 'nums.mindrecord', 'nums.mindrecord.db']
        """
        file_name = local_destination("save", "file_name", file_name)
        if file_type == "webdataset":
            from minddata.dataset.webdataset import save_dataset as save_shards

            save_shards(self, file_name, v.positive_int("save", "num_files", num_files))  # type: ignore[arg-type]  # positive_int gives None only with allow_none
            return
        if file_type == "arrow":
            from minddata.record.writer import save_dataset

            save_dataset(self, file_name, v.positive_int("save", "num_files", num_files))  # type: ignore[arg-type]  # positive_int gives None only with allow_none
            return
        if file_type != "mindrecord":
            raise ArgumentError(
                f"save: `file_type` must be 'mindrecord' (MindSpore's format), 'arrow' (minddata's record files) or "
                f"'webdataset'. Found: {file_type!r}"
            )
        from minddata.record.mindrecord_save import MAX_SAVE_FILES, save_mindrecord

        if not v.is_int(num_files) or not 1 <= num_files <= MAX_SAVE_FILES:
            raise ArgumentError(
                f"save: `num_files` must be an int in [1, {MAX_SAVE_FILES}] for MindRecord files (MindSpore's limit). "
                f"Found: {num_files!r}"
            )
        save_mindrecord(self, file_name, int(num_files))

    def shuffle(self, buffer_size: int) -> Dataset:
        """Shuffle rows through a buffer of ``buffer_size`` rows; a new order every epoch.

        ``buffer_size`` at least the dataset size gives a uniform shuffle.
        """
        size = v.positive_int("shuffle", "buffer_size", buffer_size)
        if size == 1:
            raise ArgumentError("shuffle: `buffer_size` must be greater than 1 (1 would not shuffle). Found: 1")
        return self._checked(ir.ShuffleNode(self._node, size))  # type: ignore[arg-type]  # positive_int gives None only with allow_none

    def repeat(self, count: int | None = None) -> Dataset:
        """Repeat the dataset ``count`` times per epoch (``None`` or ``-1``: endlessly)."""
        if count is None:
            count = -1
        if not v.is_int(count) or (count <= 0 and count != -1):
            raise ArgumentError(f"repeat: `count` must be -1 (endless) or greater than 0. Found: {count!r}")
        return self._checked(ir.RepeatNode(self._node, int(count)))

    def take(self, count: int = -1) -> Dataset:
        """The first ``count`` rows of each pass (``-1``: all)."""
        if not v.is_int(count) or (count <= 0 and count != -1):
            raise ArgumentError(f"take: `count` must be -1 (all) or greater than 0. Found: {count!r}")
        return self._checked(ir.TakeNode(self._node, int(count)))

    def skip(self, count: int) -> Dataset:
        """Drop the first ``count`` rows of each pass."""
        return self._checked(ir.SkipNode(self._node, v.non_negative_int("skip", "count", count)))

    def project(self, columns: str | Sequence[str]) -> Dataset:
        """Keep only ``columns``, in the order given."""
        return self._checked(ir.ProjectNode(self._node, v.column_list("project", "columns", columns, allow_none=False)))  # type: ignore[arg-type]  # allow_none=False gives a list

    def rename(self, input_columns: str | Sequence[str], output_columns: str | Sequence[str]) -> Dataset:
        """Rename ``input_columns`` to ``output_columns`` (same length)."""
        inputs = v.column_list("rename", "input_columns", input_columns, allow_none=False)
        outputs = v.column_list("rename", "output_columns", output_columns, allow_none=False)
        if len(inputs) != len(outputs):  # type: ignore[arg-type]  # allow_none=False gives lists
            raise ArgumentError(
                f"rename: `input_columns` and `output_columns` must have the same length. Found: {inputs} and {outputs}"
            )
        return self._checked(ir.RenameNode(self._node, inputs, outputs))  # type: ignore[arg-type]  # allow_none=False gives lists

    def filter(
        self,
        predicate: Callable[..., Any],
        input_columns: str | Sequence[str] | None = None,
        num_parallel_workers: int | None = None,
    ) -> Dataset:
        """Keep the rows for which ``predicate(*input_columns)`` is true."""
        if not callable(predicate):
            raise ArgumentError(f"filter: `predicate` must be callable. Found: {predicate!r}")
        workers = 1 if num_parallel_workers is None else v.workers("filter", num_parallel_workers)
        node = ir.FilterNode(self._node, predicate, v.column_list("filter", "input_columns", input_columns), workers)
        return self._checked(node)

    def zip(self, datasets: Dataset | Sequence[Dataset]) -> Dataset:
        """Join rows side by side with ``datasets``; stops at the shortest. Column names must differ."""
        others = [datasets] if isinstance(datasets, Dataset) else list(datasets)
        return zip([self, *others])

    def concat(self, datasets: Dataset | Sequence[Dataset]) -> Dataset:
        """Rows of this dataset, then of each of ``datasets`` (same columns). Also ``a + b``."""
        others = [datasets] if isinstance(datasets, Dataset) else list(datasets)
        return concat([self, *others])

    def __add__(self, other: Dataset) -> Dataset:
        return self.concat(other)

    def use_sampler(self, sampler: Any) -> None:
        """Shard a concatenated dataset (MindSpore's ``ConcatDataset.use_sampler``), in place; on a
        random-access source (``ImageFolderDataset(...)``, ``NumpySlicesDataset(...)``), read it through
        ``sampler`` from now on (MindSpore's ``MappableDataset.use_sampler``).

        ``sampler`` must be a ``DistributedSampler(num_shards, shard_id, shuffle=False)`` without
        ``num_samples``: row ``k`` of the concatenation goes to shard ``k % num_shards``, as in
        MindSpore, so shards differ in size by at most one row. This is how a ``PaddedDataset`` pads a
        dataset to a size that divides evenly: ``(data + padded).use_sampler(...)``. Unlike MindSpore,
        which hands each source its part, every shard reads all rows of the concatenation and keeps its
        own, so put expensive maps after it.

        Examples:
            >>> import minddata as md
            >>> data = md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False)
            >>> padded = md.PaddedDataset([{"x": np.array(-1)}])
            >>> both = data + padded
            >>> both.use_sampler(md.DistributedSampler(num_shards=2, shard_id=1, shuffle=False))
            >>> [int(r["x"]) for r in both.create_dict_iterator(output_numpy=True)]
            [2, -1]
        """
        from minddata.samplers import DistributedSampler, Sampler

        where = "use_sampler"
        if isinstance(self._node, ir.RandomAccessSourceNode):
            # MindSpore's MappableDataset.use_sampler: the source reads through `sampler` from now on.
            if not isinstance(sampler, Sampler):
                raise ArgumentError(f"{where}: `sampler` must be a Sampler. Found: {sampler!r}")
            self._node = self._node.with_sampler(sampler)
            self._size_cache = None
            return
        base = self._node.children[0] if isinstance(self._node, ir.ShardRowsNode) else self._node
        if not isinstance(base, ir.ConcatNode):
            raise ArgumentError(
                f"{where}: only a concatenated dataset (a + b, or concat()) or a random-access source takes a "
                f"sampler this way. Found: {base.label}"
            )
        if not isinstance(sampler, DistributedSampler):
            raise ArgumentError(
                f"{where}: the sampler must be a DistributedSampler (minddata does not implement MindSpore's "
                f"RandomSampler here yet; see docs/coverage.md). Found: {sampler!r}"
            )
        if sampler.is_shuffled():
            raise ArgumentError(f"{where}: the DistributedSampler must have shuffle=False, as in MindSpore. Found: {sampler!r}")
        if sampler.get_num_samples() is not None:
            raise ArgumentError(f"{where}: the DistributedSampler must not set num_samples, as in MindSpore. Found: {sampler!r}")
        for child in base.children:
            if isinstance(child, (ir.BatchNode, ir.BucketBatchNode)):
                raise ArgumentError(f"{where}: a concatenated input must not be batched ({child.label}); batch after sharding.")
        self._node = ir.ShardRowsNode(base, int(sampler.num_shards), int(sampler.shard_id))
        self._size_cache = None

    def flat_map(self, func: Callable[..., Dataset]) -> Dataset:
        """Replace each row by all rows of the dataset ``func(*row)`` returns (MindSpore's ``flat_map``).

        The output columns are those of the returned datasets; finding them runs the pipeline for one
        row and ``func`` once (when the columns are first needed).

        Examples:
            >>> import minddata as md
            >>> ds = md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False)
            >>> ds = ds.flat_map(lambda x: md.NumpySlicesDataset({"y": [x * 10, x * 10 + 1]}, shuffle=False))
            >>> [int(r["y"]) for r in ds.create_dict_iterator(output_numpy=True)]
            [10, 11, 20, 21]
        """
        if not callable(func):
            raise ArgumentError(f"flat_map: `func` must be callable. Found: {func!r}")

        def dataset_of(*row: Any) -> Dataset:
            out = func(*row)
            if not isinstance(out, Dataset):
                raise ArgumentError(f"flat_map: `func` must return a Dataset. Found: {type(out).__name__}")
            return out

        def rows_of(*row: Any) -> Any:
            iterator = dataset_of(*row).create_tuple_iterator(num_epochs=1, output_numpy=True)
            try:
                yield from iterator
            finally:
                iterator.close()

        source = self
        return Dataset(ir.FlatMapNode(self._node, rows_of, lambda: dataset_of(*source._first_row()).get_col_names()),
                       (self,))

    def apply(self, apply_func: Callable[[Dataset], Dataset]) -> Dataset:
        """``apply_func(self)``, which must return a dataset (MindSpore's ``apply``).

        Examples:
            >>> import minddata as md
            >>> ds = md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False).apply(lambda d: d.batch(2))
            >>> [r["x"].tolist() for r in ds.create_dict_iterator(output_numpy=True)]
            [[1, 2], [3]]
        """
        if not callable(apply_func):
            raise ArgumentError(f"apply: `apply_func` must be callable. Found: {apply_func!r}")
        out = apply_func(self)
        if not isinstance(out, Dataset):
            raise ArgumentError(f"apply: `apply_func` must return a Dataset. Found: {type(out).__name__}")
        return out

    def build_vocab(
        self,
        columns: str | Sequence[str] | None,
        freq_range: tuple[int | None, int | None] | None,
        top_k: int | None,
        special_tokens: Sequence[str] | None,
        special_first: bool,
    ) -> Any:
        """A :class:`~minddata.text.Vocab` of the words of ``columns`` (MindSpore's ``build_vocab``): one pass
        over this dataset, as :meth:`minddata.text.Vocab.from_dataset`.

        Examples:
            >>> import minddata as md
            >>> ds = md.NumpySlicesDataset({"text": [["b", "a"], ["a", "c"]]}, shuffle=False)
            >>> ds.build_vocab("text", None, None, ["<pad>"], True).vocab()
            {'<pad>': 0, 'a': 1, 'b': 2, 'c': 3}
        """
        from minddata.text import Vocab

        return Vocab.from_dataset(self, columns, freq_range, top_k, special_tokens, special_first)

    def build_sentencepiece_vocab(
        self, columns: Sequence[str], vocab_size: int, character_coverage: float, model_type: Any, params: dict
    ) -> Any:
        """A :class:`~minddata.text.SentencePieceVocab` trained on the strings of ``columns`` (MindSpore's
        ``build_sentencepiece_vocab``), as :meth:`minddata.text.SentencePieceVocab.from_dataset`."""
        from minddata.text import SentencePieceVocab

        return SentencePieceVocab.from_dataset(self, columns, vocab_size, character_coverage, model_type, params)

    def sync_wait(self, condition_name: str, num_batch: int = 1, callback: Callable[[Any], Any] | None = None) -> Dataset:
        """Let ``num_batch`` batches through at the start of each epoch, then wait for
        :meth:`sync_update` (MindSpore's ``sync_wait``); counts are in batches of the batch after it.

        ``sync_update(condition_name, num_batch=None, data=None)`` lets ``num_batch`` more through (default:
        this ``num_batch``) and calls ``callback(data)``. A wait longer than 60 s stops waiting, with a
        warning, so a loop that never calls ``sync_update`` does not hang.

        Examples:
            >>> import minddata as md
            >>> seen = []
            >>> ds = md.NumpySlicesDataset({"x": list(range(6))}, shuffle=False)
            >>> ds = ds.sync_wait("policy", num_batch=1, callback=seen.append).batch(2)
            >>> for i, batch in enumerate(ds.create_dict_iterator(num_epochs=1, output_numpy=True)):
            ...     ds.sync_update("policy", data=i)
            >>> seen
            [0, 1, 2]
        """
        from minddata.engine.flow import SyncGate

        where = "sync_wait"
        if not isinstance(condition_name, str):
            raise ArgumentError(f"{where}: `condition_name` must be a string. Found: {condition_name!r}")
        v.positive_int(where, "num_batch", num_batch)
        if callback is not None and not callable(callback):
            raise ArgumentError(f"{where}: `callback` must be callable or None. Found: {callback!r}")
        if any(isinstance(n, ir.SyncWaitNode) and n.condition_name == condition_name for n in self._node.walk()):
            raise ArgumentError(f"{where}: condition name {condition_name!r} is already in use in this pipeline.")
        return self._checked(ir.SyncWaitNode(self._node, condition_name, SyncGate(int(num_batch), callback)))

    def sync_update(self, condition_name: str, num_batch: int | None = None, data: Any = None) -> None:
        """Release ``num_batch`` more batches at the :meth:`sync_wait` named ``condition_name`` and call
        its callback with ``data``."""
        gates = [n.gate for n in self._node.walk() if isinstance(n, ir.SyncWaitNode)]
        named = [n.gate for n in self._node.walk() if isinstance(n, ir.SyncWaitNode) and n.condition_name == condition_name]
        if num_batch is not None and (isinstance(num_batch, bool) or not isinstance(num_batch, int) or num_batch <= 0):
            for gate in gates:
                gate.disable()
            raise ArgumentError(f"sync_update: `num_batch` must be an int greater than 0 or None. Found: {num_batch!r}")
        if not named:
            for gate in gates:
                gate.disable()  # as MindSpore: a failed update must not leave the pipeline blocked
            raise ArgumentError(
                f"sync_update: no sync_wait named {condition_name!r} in this pipeline. "
                f"Conditions: {[n.condition_name for n in self._node.walk() if isinstance(n, ir.SyncWaitNode)]}"
            )
        named[0].release(num_batch, data)

    def split(self, sizes: Sequence[int | float], randomize: bool = True) -> list[Dataset]:
        """Split into datasets of the given sizes (row counts, or fractions summing to 1).

        With ``randomize`` the rows are assigned at random (from the seed) and the source must be
        random-access; otherwise the splits are consecutive ranges.
        """
        total = self.get_dataset_size()
        counts = splitting.split_counts(sizes, total)
        if randomize:
            return [Dataset(node, (self,)) for node in splitting.random_split(self._node, counts, total)]
        out, start = [], 0
        for count in counts:
            part = self.skip(start) if start else self
            out.append(part.take(count))
            start += count
        return out

    # -- running -----------------------------------------------------------------------------

    def create_dict_iterator(
        self,
        num_epochs: int = -1,
        output_numpy: bool = False,
        do_copy: bool = True,
        state: dict | list[dict] | None = None,
        executor: str = "local",
    ) -> Any:
        """Iterate rows as ``{column: array}``. Each ``for`` loop over the iterator reads one epoch.

        As MindSpore's iterator gives ``mindspore.Tensor`` values unless ``output_numpy=True``,
        numeric columns come as :class:`minddata.common.tensor.Tensor`: the pipeline's NumPy array
        viewed (no copy) as an ``ndarray`` subclass that also has ``asnumpy()``, ``dim()``,
        ``numel()`` and MindSpore's casts. ``output_numpy=True`` gives plain ``numpy.ndarray``; string
        columns are plain arrays either way. ``config.set_framework("torch")`` (or ``"jax"``,
        ``"cupy"``) gives that framework's tensors instead.

        ``executor="ray"`` runs the per-row part of the pipeline on the Ray cluster that ``ray.init()``
        connected to (a local one by default; needs ``pip install 'minddata[ray]'``), with the same rows
        as the local executor; see :meth:`to_ray`.

        ``state`` (from ``iterator.get_state()``) resumes exactly where that iterator was: the same
        rows and random augmentations follow, whatever the worker counts. Sources and one-row-in,
        one-row-out ops skip ahead without computing the skipped rows; shuffle buffers, filters and
        error modes "skip"/"replace" replay them. ``state`` may also be the list of the states of every
        rank of a data-parallel run: each rank of a run on another number of ranks (its own
        ``num_shards``/``shard_id``) passes the whole list and reads its share of the rows that epoch
        had left (each once; ``config.set_elastic_equal_shares`` pads the shares to equal length, as
        lockstep training needs), each augmented as in an uninterrupted run (docs/data.md, "Resuming
        on a different number of ranks"; pipelines that lose rows' positions raise a GraphError naming
        the op).

        Examples:
            >>> import minddata as md
            >>> md.config.set_seed(7)
            >>> ds = md.NumpySlicesDataset({"x": list(range(10))}).map(lambda x: x * 2, input_columns="x")
            >>> it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
            >>> first = [int(next(it)["x"]) for _ in range(4)]
            >>> state = it.get_state()
            >>> rest = [int(r["x"]) for r in it]
            >>> resumed = ds.create_dict_iterator(num_epochs=1, output_numpy=True, state=state)
            >>> [int(r["x"]) for r in resumed] == rest
            True
        """
        from minddata.dataset.iterators import DictIterator

        return DictIterator(
            self, num_epochs=num_epochs, output_numpy=output_numpy, state=self._start_state(state), executor=executor
        )

    def create_tuple_iterator(
        self,
        columns: Sequence[str] | None = None,
        num_epochs: int = -1,
        output_numpy: bool = False,
        do_copy: bool = True,
        state: dict | list[dict] | None = None,
        executor: str = "local",
    ) -> Any:
        """Iterate rows as lists of arrays, in ``columns`` order (default: all columns). Values
        (Tensor-like unless ``output_numpy=True``), ``state`` (resume) and ``executor`` are as in
        :meth:`create_dict_iterator`."""
        from minddata.dataset.iterators import TupleIterator

        source = self.project(columns) if columns is not None else self
        return TupleIterator(
            source, num_epochs=num_epochs, output_numpy=output_numpy, state=self._start_state(state), executor=executor
        )

    def send(self, tensor: Any = None, dst: int | list[int] = 0, group: Any = None) -> None:
        """Send ``tensor`` (an array, or a list of arrays) or, when None, this dataset's next row to
        rank ``dst`` (or each rank of a list), which takes it with :meth:`recv`; as MindSpore's
        (experimental) ``send``, over ``torch.distributed`` (initialized by the caller; ``group``: a
        torch process group, None for the default one). Own rows come from one iterator kept across
        calls, over unlimited epochs; numeric and bool columns only (``project`` away strings).

        Examples:
            >>> import os, tempfile, torch.distributed as dist
            >>> import minddata as md
            >>> dist.init_process_group("gloo", init_method="file://" + os.path.join(tempfile.mkdtemp(), "store"),
            ...                         rank=0, world_size=1)
            >>> md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).send(dst=0)
            Traceback (most recent call last):
                ...
            minddata.errors.ArgumentError: Dataset.send: `dst` must not hold this rank (0): a rank reads its own rows with recv. Found: 0
            >>> dist.destroy_process_group()
        """
        from minddata.dataset.rank_comm import send

        send(self, tensor, dst, group)

    def recv(self, src: int | list[int] = 0, group: Any = None) -> Any:
        """The row or arrays rank ``src`` sent with :meth:`send` (each of a list of ranks: their
        arrays in order); where ``src`` is this rank, this dataset's own next row. As MindSpore's
        (experimental) ``recv``, over ``torch.distributed``: one array comes back as itself, several
        as a list, numeric ones Tensor-like as the default iterators give them.

        Examples:
            >>> import os, tempfile, torch.distributed as dist
            >>> import minddata as md
            >>> dist.init_process_group("gloo", init_method="file://" + os.path.join(tempfile.mkdtemp(), "store"),
            ...                         rank=0, world_size=1)
            >>> ds = md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False)
            >>> [int(ds.recv(src=0)) for _ in range(3)]  # this rank's own rows, epoch after epoch
            [1, 2, 1]
            >>> dist.destroy_process_group()
        """
        from minddata.dataset.rank_comm import recv

        return recv(self, src, group)

    def to_ray(self) -> Any:
        """The pipeline as a ``ray.data.Dataset`` (one pass): its rows, or its batches when the graph
        ends in ``batch``, with the pipeline's column names; ready for ``iter_batches``,
        ``iter_torch_batches``, ``streaming_split`` and ``write_parquet``.

        Runs on the Ray cluster that ``ray.init()`` connected to (needs ``pip install 'minddata[ray]'``).
        The source's rows are cut into Ray read tasks in the local engine's order (sampler, shards,
        ``num_samples`` and a seeded ``shuffle`` over the source included); maps, filters and projects
        become ``map_batches`` steps. With ``config.set_seed``, the rows equal the local executor's bit
        for bit. Ops that run only in a consumer (repeat, zip, concat, take/skip, a shuffle buffer over
        mapped rows) raise a GraphError naming the op: iterate with ``executor="ray"`` instead.
        The example needs a Ray cluster, so it is not run here.

        Examples:
            >>> import minddata as md  # doctest: +SKIP
            >>> ds = md.NumpySlicesDataset({"x": list(range(8))}, shuffle=False).map(lambda x: x * 2, "x")  # doctest: +SKIP
            >>> ds.batch(4).to_ray().take_all()[0]["x"].tolist()  # doctest: +SKIP
            [0, 2, 4, 6]
        """
        from minddata.engine.ray_executor import require_ray, to_ray

        require_ray()
        return to_ray(self._node, self.get_col_names())

    def set_init_step(self, init_step: int) -> None:
        """Start iterators created afterwards at global step ``init_step`` (MindSpore's failover reset):
        epoch ``init_step // get_dataset_size()``, row ``init_step % get_dataset_size()``. Needs
        ``config.set_seed`` so that the restarted job draws the same shuffles and augmentations."""
        from minddata import config

        if isinstance(init_step, bool) or not isinstance(init_step, int) or init_step < 0:
            raise ArgumentError(f"set_init_step: `init_step` must be an int of 0 or more. Found: {init_step!r}")
        if not config.seed_is_set():
            raise ArgumentError(
                "set_init_step: call minddata.config.set_seed(...) first: without a fixed seed the restarted "
                "pipeline would shuffle and augment differently from the one that stopped."
            )
        self._init_step = init_step

    def _start_state(self, state: dict | list[dict] | None) -> dict | list[dict] | None:
        step = getattr(self, "_init_step", None)
        if state is not None or not step:
            return state
        from minddata import config
        from minddata.engine.iterator import STATE_VERSION

        size = self.get_dataset_size()
        epoch, row = divmod(step, size) if size else (0, 0)
        return {"version": STATE_VERSION, "seed": config.get_seed(), "epoch": epoch, "row": row}

    def __iter__(self) -> Any:
        return iter(self.create_tuple_iterator(num_epochs=1))

    def serve(self, thread_nice: int = 0, options: RunOptions | None = None) -> Any:
        """Start an online session over a pipeline rooted at :class:`OnlineDataset`.

        ``thread_nice`` (0-19, Linux) lowers the OS priority of the session's threads by that much, so
        that a server's request handling runs first when the pipeline saturates the cores.
        ``options`` are the settings the session runs with (default: ``config.snapshot()`` now), so
        a server can set its own limits without changing the process's settings.

        Examples:
            >>> import minddata as md
            >>> pipe = md.OnlineDataset(["x"]).map(lambda x: x * 2, input_columns="x")
            >>> with pipe.serve() as session:
            ...     int(session.submit({"x": 21}).result(timeout=10)["x"])
            42
        """
        from minddata.engine.online import OnlineSession

        return OnlineSession(self._node, thread_nice=thread_nice, options=options)

    # -- introspection -----------------------------------------------------------------------

    def __len__(self) -> int:
        """Rows (or batches, after ``batch``) per epoch: :meth:`get_dataset_size`, so that
        ``torch.utils.data.DataLoader(dataset.to_torch(), batch_size=None)`` and ``len()`` work."""
        return self.get_dataset_size()

    def __bool__(self) -> bool:
        # A dataset is an object, not a container: truth must not run the pipeline to count rows.
        return True

    def to_torch(
        self,
        columns: Sequence[str] | None = None,
        *,
        as_dict: bool = False,
        pin_memory: bool = False,
        int64_columns: Sequence[str] | None = None,
        int64_labels: bool = True,
        shard: bool = True,
    ) -> Any:
        """This pipeline as a ``torch.utils.data.IterableDataset`` of tensors, for a plain PyTorch loop.

        Each row (a batch, after ``batch``) comes as a tuple of tensors in column order (a dict with
        ``as_dict``), converted without a copy. Under ``torch.distributed`` and in each ``DataLoader``
        worker it reads only its shard (``shard=False`` turns that off): the ranks and workers together
        read each row once per epoch. ``pin_memory`` pins the tensors (when CUDA is available) for
        ``non_blocking`` copies. Pass it to a ``DataLoader`` with ``batch_size=None``: minddata batches
        already.

        Labels come out as torch's losses want them: with two or more columns the last one is the
        label (as in ``Model``), and an integer label column (int32 from ``ImageFolderDataset``, uint32
        from MNIST/CIFAR, uint8 masks...) becomes ``torch.int64``, which ``cross_entropy`` and
        ``nll_loss`` need as targets. ``int64_labels=False`` keeps the source dtype; ``int64_columns``
        names further integer columns to cast. Floating and bool columns, and the only column of a
        one-column dataset, are never cast.

        Example (needs torch, so not run as a doctest; ``tests/trainer/test_to_torch.py`` runs it)::

            ds = md.NumpySlicesDataset({"x": np.ones((6, 2), np.float32), "y": np.arange(6, dtype=np.int32)},
                                       shuffle=False).batch(4)
            loader = torch.utils.data.DataLoader(ds.to_torch(), batch_size=None)
            len(loader), [(tuple(x.shape), y.dtype) for x, y in loader]
            # (2, [((4, 2), torch.int64), ((2, 2), torch.int64)])
        """
        from minddata.dataset.torch_data import TorchIterableDataset

        names = list(columns) if columns is not None else self.get_col_names()
        cast = list(int64_columns or [])
        if int64_labels and len(names) > 1:
            cast.append(names[-1])
        return TorchIterableDataset(self, columns=columns, as_dict=as_dict, pin_memory=pin_memory,
                                    int64_columns=cast, shard=shard)

    def get_col_names(self) -> list[str]:
        return self._node.columns

    def get_dataset_size(self) -> int:
        """Rows (or batches) per epoch. Counted by running one epoch when it can't be inferred.

        An endless ``repeat()`` counts as one pass, as in MindSpore (so ``repeat(-1)`` returns the
        size of its input instead of never returning)."""
        if self._size_cache is None:
            node = ir.one_pass(self._node)
            size = node.static_size()
            if size is None:
                size = 0
                counted = self if node is self._node else Dataset(node)
                iterator = counted.create_tuple_iterator(num_epochs=1, output_numpy=True)
                try:
                    for _ in iterator:
                        size += 1
                finally:
                    iterator.close()
            self._size_cache = size
        return self._size_cache

    def _first_row(self) -> list[np.ndarray]:
        iterator = self.create_tuple_iterator(num_epochs=1, output_numpy=True)
        try:
            for row in iterator:
                return row
        finally:
            iterator.close()
        raise GraphError("the dataset is empty, so it has no output shapes or types")

    def output_shapes(self) -> list[list[int]]:
        """Shape of each column of the first row (runs the pipeline for one row)."""
        return [list(np.shape(col)) for col in self._first_row()]

    def output_types(self) -> list[np.dtype]:
        """NumPy dtype of each column of the first row (runs the pipeline for one row)."""
        return [np.asarray(col).dtype for col in self._first_row()]

    def get_batch_size(self) -> int:
        """The batch size of the last batch op (1 without one), or what :meth:`copy_batch_size` set."""
        if getattr(self, "_copied_batch_size", None) is not None:
            return self._copied_batch_size
        for node in self._node.walk():
            if isinstance(node, ir.BatchNode):
                return node.batch_size if not callable(node.batch_size) else -1
        return 1

    def get_repeat_count(self) -> int:
        """The count of the last repeat op (1 without one)."""
        for node in self._node.walk():
            if isinstance(node, ir.RepeatNode):
                return node.count
        return 1

    # -- MindSpore's introspection, answered from the source as there ------------------------

    def get_class_indexing(self) -> dict[str, int]:
        """Class name → label of the source (``ImageFolderDataset``, ``ManifestDataset``, VOC...);
        ``{}`` for sources without classes. Asked of the first input after ``map``, ``batch`` and the
        other operations, as MindSpore does.

        Examples:
            >>> import minddata as md
            >>> md.NumpySlicesDataset({"x": [1, 2]}).batch(2).get_class_indexing()
            {}
        """
        return self._inputs[0].get_class_indexing() if self._inputs else {}

    def num_classes(self) -> int | None:
        """Number of classes of the source (``ImageFolderDataset``...), asked of the input after
        operations; ``None`` for sources without classes and, as in MindSpore, after ``zip`` or
        ``concat`` (several inputs)."""
        return self._inputs[0].num_classes() if len(self._inputs) == 1 else None

    def get_init_step(self) -> int:
        """The step :meth:`set_init_step` set here or, with one input, on it; else 0 (as MindSpore)."""
        step = getattr(self, "_init_step", None)
        if step is not None:
            return step
        return self._inputs[0].get_init_step() if len(self._inputs) == 1 else 0

    def is_shuffled(self) -> bool:
        """Whether this dataset or one of its inputs shuffles (a ``shuffle`` op, a shuffling sampler or
        a streamed source's ``shuffle``)."""
        if isinstance(self._node, ir.ShuffleNode) or any(d.is_shuffled() for d in self._inputs):
            return True
        return not self._inputs and _source_flag(self._node, "shuffled")

    def is_sharded(self) -> bool:
        """Whether this dataset's source reads one shard (``num_shards`` > 1 or a sharded sampler)."""
        if any(d.is_sharded() for d in self._inputs):
            return True
        return not self._inputs and _source_flag(self._node, "sharded")

    def is_sync(self) -> bool:
        """Whether the pipeline has a :meth:`sync_wait`."""
        return any(isinstance(n, ir.SyncWaitNode) for n in self._node.walk())

    def disable_sync(self) -> None:
        """Stop every :meth:`sync_wait` of the pipeline from waiting."""
        for node in self._node.walk():
            if isinstance(node, ir.SyncWaitNode):
                node.gate.disable()

    def get_sync_notifiers(self) -> dict[str, Callable[..., None]]:
        """``{condition name: release(num_batch=None, data=None)}`` for each :meth:`sync_wait`."""
        return {n.condition_name: functools.partial(_release, n.gate) for n in self._node.walk()
                if isinstance(n, ir.SyncWaitNode)}

    def reset(self) -> None:
        """Nothing to do: each iterator starts its own pass (MindSpore's ``reset`` is empty too)."""

    @property
    def input_indexs(self) -> Any:
        """Column order for the network in sink mode, as set (MindSpore's spelling); ``()`` unless set
        here or on an input."""
        own = getattr(self, "_input_indexs", ())
        if own != ():
            return own
        for d in self._inputs:
            if d.input_indexs != ():
                return d.input_indexs
        return ()

    @input_indexs.setter
    def input_indexs(self, value: Any) -> None:
        self._input_indexs = value

    def copy_batch_size(self, value: int) -> None:
        """Make :meth:`get_batch_size` return ``value`` (what MindSpore's model does for sink mode)."""
        self._copied_batch_size = value

    def explain(self) -> str:
        """The plan an iterator would run, root first: stages, their ops after fusion, and what the
        optimizer rewrote (``config.set_enable_fusion(False)`` shows the unfused plan).

        Examples:
            >>> import minddata as md
            >>> ds = md.NumpySlicesDataset({"x": [1]}).map(lambda x: x, input_columns="x").map(abs, input_columns="x")
            >>> print(ds.explain())  # doctest: +ELLIPSIS
            fusion: on
            Map[<lambda>, abs]  columns=['x']  workers=...
              fused: merged the adjacent map over 'x' into this one; bound: bit-exact
              NumpySlicesDataset  columns=['x']
        """
        from minddata import config
        from minddata.engine.compiler import plan_tree

        lines = [f"fusion: {'on' if config.get_enable_fusion() else 'off'}"]

        def visit(node: ir.Node, depth: int) -> None:
            pad = "  " * depth
            extra = f"  workers={node.num_workers}" if isinstance(node, (ir.MapNode, ir.BatchNode)) else ""
            lines.append(f"{pad}{node.label}  columns={node.columns}{extra}")
            for note in node.fusion_notes:
                lines.append(f"{pad}  fused: {note}")
            for child in node.children:
                visit(child, depth + 1)

        visit(plan_tree(self._node), 0)
        return "\n".join(lines)

    def to_json(self, filename: str = "") -> dict[str, Any]:
        """This pipeline as JSON types (see :func:`minddata.serialize`), also written to ``filename``
        when given. Returns the dict, as MindSpore's implementation does (its docs say a string).

        Examples:
            >>> import minddata as md
            >>> md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).batch(2).to_json()["op_type"]
            'Batch'
        """
        from minddata.dataset.serialization import serialize

        return serialize(self, filename)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._node.label} columns={self._node.columns}>"

    def _is_sharded(self) -> bool:
        """Whether a random-access source of this pipeline already reads one shard (``num_shards``/
        ``shard_id`` or a sharded sampler were given). Streamed sources (CSV, TFRecord, text,
        generators) shard inside their reader and are not detected here."""
        return splitting.is_sharded(self._node)

    def _shard(self, num_shards: int, shard_id: int, where: str) -> Dataset:
        """This pipeline reading only shard ``shard_id`` of ``num_shards`` of its source's rows, as if
        the source had been given ``num_shards``/``shard_id`` (:func:`minddata.dataset.splitting.shard`,
        for ``to_torch`` and ``Model.train`` under torch.distributed); ``where`` names the caller in errors."""
        node = splitting.shard(self._node, num_shards, shard_id, where)
        return self if node is self._node else Dataset(node)

    def _checked(self, node: ir.Node, inputs: Sequence[Dataset] | None = None) -> Dataset:
        _ = node.columns  # schema errors surface where the graph is built, naming the node
        return Dataset(node, (self,) if inputs is None else inputs)


def _release(gate: Any, num_batch: int | None = None, data: Any = None) -> None:
    gate.release(num_batch, data)


def _source_flag(node: ir.Node, which: str) -> bool:
    """Whether the source under ``node`` (a source dataset's own node, maybe behind its cache or
    decode) is ``"shuffled"`` or ``"sharded"``: its sampler says, or a streamed source's arguments."""
    for below in node.walk():
        sampler = getattr(below, "sampler", None)
        if isinstance(below, ir.RandomAccessSourceNode) and sampler is not None:
            return bool(sampler.is_shuffled() if which == "shuffled" else sampler.is_sharded())
        if isinstance(below, ir.IterableSourceNode):
            if which == "sharded":
                return bool(below.sharded)
            call = getattr(below, "source_call", None) or getattr(node, "source_call", None)
            return call is not None and _shuffle_argument(call)
    return False


def _shuffle_argument(call: Any) -> bool:
    # A streamed source's ``shuffle`` argument as given, else its default (MindSpore's Shuffle.GLOBAL).
    import inspect

    shuffle = call.kwargs.get("shuffle", inspect._empty)
    if shuffle is inspect._empty:
        try:
            params = list(inspect.signature(call.cls).parameters.values())
        except (TypeError, ValueError):
            return False
        names = [p.name for p in params]
        if "shuffle" not in names:
            return False
        index = names.index("shuffle")
        shuffle = call.args[index] if index < len(call.args) else params[index].default
    if shuffle is None or shuffle is True:
        return True
    return bool(shuffle) and str(getattr(shuffle, "value", shuffle)).lower() not in ("false", "0")


def _count_sync_in_batches(node: ir.Node, batch_size: int) -> None:
    """A batch above a sync_wait makes its counts batches of ``batch_size`` rows (as MindSpore)."""
    for below in node.walk():
        if isinstance(below, ir.BatchNode):
            return
        if isinstance(below, ir.SyncWaitNode):
            below.gate.rows_per_batch = batch_size


def local_destination(where: str, argument: str, file_name: Any) -> Any:
    """``file_name`` where a writer writes: a local path (a ``file://`` URL made its path); an object
    storage URL is refused, naming the URL and the fix. Other values are left to the writer's checks."""
    from minddata.dataset import _storage

    if not isinstance(file_name, (str, os.PathLike)):
        return file_name
    text = os.fspath(file_name)
    if not _storage.is_remote(text):  # any scheme but file:// is remote
        return _storage.local_path(text) if text.lower().startswith("file://") else file_name
    raise ArgumentError(
        f"{where}: `{argument}` must be a local path: minddata writes local files and does not upload them to "
        f"object storage. Found: {text!r}. Write to a local folder, then upload the files (e.g. `aws s3 cp "
        "--recursive out/ s3://bucket/out/`), and read them from the bucket with the sources' URLs "
        "(`minddata index` writes only the small index files next to shards already in a bucket)."
    )


def _pad_info(where: str, pad_info: Any) -> dict[str, tuple[Any, Any]] | None:
    """``pad_info`` checked and normalized to ``{column: (tuple shape or None, value or None)}``."""
    if pad_info is None:
        return None
    if not isinstance(pad_info, dict):
        raise ArgumentError(f"{where}: `pad_info` must be a dict {{column: (pad_shape, pad_value)}} or None. Found: {pad_info!r}")
    out: dict[str, tuple[Any, Any]] = {}
    for name, spec in pad_info.items():
        if not isinstance(name, str) or not name:
            raise ArgumentError(f"{where}: `pad_info` keys must be column names. Found: {name!r}")
        if not isinstance(spec, (tuple, list)) or len(spec) != 2:
            raise ArgumentError(
                f"{where}: pad_info[{name!r}] must be a (pad_shape, pad_value) pair. Found: {spec!r}"
            )
        shape, value = spec
        if shape is not None:
            if isinstance(shape, (str, bytes)) or not isinstance(shape, (list, tuple)) or not all(
                d is None or (v.is_int(d) and d > 0) for d in shape
            ):
                raise ArgumentError(
                    f"{where}: pad_info[{name!r}] pad_shape must be None or a list of ints > 0 (or None per "
                    f"dimension). Found: {shape!r}"
                )
            shape = tuple(None if d is None else int(d) for d in shape)
        if value is not None and not isinstance(value, (int, float, str, bytes, np.generic)) or isinstance(value, bool):
            raise ArgumentError(
                f"{where}: pad_info[{name!r}] pad_value must be a number, a string or None. Found: {value!r}"
            )
        out[name] = (shape, value)
    return out


def _placed_ops(ops: Sequence[Any], device: str) -> list[Any]:
    """``map(device=...)``: copies of the ops not placed themselves, placed on ``device``."""
    import copy

    from minddata.engine.optimizer import flatten_operations
    from minddata.ops.base import canonical_device

    target = canonical_device(device, where="map")
    out: list[Any] = []
    for op in flatten_operations(list(ops)):
        if isinstance(op, Op) and "_device" not in vars(op):
            op = copy.copy(op)
            op._device = target
        out.append(op)
    return out


def zip(datasets: Sequence[Dataset]) -> Dataset:
    """Join the rows of ``datasets`` side by side (``mindspore.dataset.zip``)."""
    datasets = list(datasets)
    if len(datasets) < 2 or not all(isinstance(d, Dataset) for d in datasets):
        raise ArgumentError(f"zip: `datasets` must be at least two datasets. Found: {datasets!r}")
    return Dataset(ir.ZipNode([d._node for d in datasets]))._checked(ir.ZipNode([d._node for d in datasets]), datasets)


def concat(datasets: Sequence[Dataset]) -> Dataset:
    """Rows of each dataset in turn; they must have the same columns."""
    datasets = list(datasets)
    if len(datasets) < 2 or not all(isinstance(d, Dataset) for d in datasets):
        raise ArgumentError(f"concat: `datasets` must be at least two datasets. Found: {datasets!r}")
    return Dataset(ir.ConcatNode([d._node for d in datasets]))._checked(ir.ConcatNode([d._node for d in datasets]), datasets)
