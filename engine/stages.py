"""Executable stages. A stage's ``run()`` is one pass over its output, as a generator of chunks.

Stages that do cheap work (take, skip, project, shuffle, batch grouping) run inline, in whichever
thread pulls from them; stages that do real work run in worker threads or processes
(:mod:`minddata.engine.parallel`). Every stage counts its passes: pass ``k`` of a stage is its
``k``-th call of ``run()``, which keys the randomness of that pass (reshuffle per epoch).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from contextlib import closing
from typing import Any

import numpy as np

from minddata.engine.chunk import Chunk, Chunks, FailedRow
from minddata.engine.runtime import Runtime
from minddata.errors import PipelineError

__all__ = [
    "Stage",
    "IndexSourceStage",
    "IterableSourceStage",
    "InlineApplyStage",
    "TakeStage",
    "SkipStage",
    "RepeatStage",
    "ConcatStage",
    "ZipStage",
    "ProjectStage",
    "ShuffleStage",
    "GroupStage",
    "node_rng",
]


def node_rng(seed: int, pass_index: int, position: int) -> np.random.Generator:
    """The RNG of a whole-pass decision (a shuffle buffer, a sampler) of the node at ``position``."""
    return np.random.default_rng([seed, pass_index, position, 0x5EED])


class Stage:
    label = "Stage"
    # The plan node this stage was built from (the compiler sets it; the profiler names stages by it).
    node: Any = None
    # The stage's profile while a profiled run uses it (minddata.engine.profiling.StageProfile).
    prof: Any = None
    # Set on a map's stage and on the batch's above it when the map's workers normalize into the
    # batch's buffers (minddata.engine.batchfn.BatchSlots): the profiler names the work where it runs.
    batch_slots: Any = None

    def __init__(self, rt: Runtime, children: list[Stage], label: str | None = None):
        self.rt = rt
        self.children = children
        self.passes = 0
        if label is not None:
            self.label = label

    # Whether ``_run(pass_index, skip)`` starts ``skip`` rows into the pass without computing them
    # (resume skips at the source); other stages replay the rows and drop them.
    fast_skip = False

    def run(self, skip: int = 0) -> Chunks:
        """One pass over this stage's output, starting ``skip`` rows in (for resume)."""
        pass_index = self.passes
        self.passes += 1
        if not skip:
            chunks = self._run(pass_index)
        elif self.fast_skip:
            chunks = self._run(pass_index, skip)  # type: ignore[call-arg]  # a fast_skip stage's _run takes skip
        else:
            chunks = _drop_rows(self._run(pass_index), skip)
        if self.prof is None:
            return chunks
        return self.prof.wrap(chunks)

    def run_at(self, pass_index: int, skip: int) -> Chunks:
        """Pass ``pass_index`` of this stage alone, computed from row ``skip`` on with nothing dropped
        and no pass counted: for an executor that runs the stage over a slice of a pass (the Ray
        actors, whose rows arrive already positioned). Only stages whose pass takes ``skip`` can run
        so: the row steps the Ray executor runs (its ``ROW_STEPS``); flat-map, bucketing and online
        sources cannot, and the Ray planner never hands them to an actor."""
        return self._run(pass_index, skip)  # type: ignore[call-arg]  # the abstract _run alone declares no skip

    def skip_passes(self, count: int) -> None:
        """Count ``count`` passes as done without running them, here and below (resume at an epoch)."""
        self.passes += count
        for child in self.children:
            child.skip_passes(count * self.child_passes_per_pass())

    def child_passes_per_pass(self) -> int:
        return 1

    def _child_sizes(self) -> list[int | None]:
        node = self.node
        if node is None:
            return [None] * len(self.children)
        return [child.static_size() for child in node.children]

    def _run(self, pass_index: int) -> Chunks:  # pragma: no cover - abstract
        """One pass. Stages with ``fast_skip`` also take ``skip``: start that many rows in."""
        raise NotImplementedError


def _drop_rows(chunks: Chunks, count: int) -> Chunks:
    with closing(chunks):
        for chunk in chunks:
            if count:
                if len(chunk) <= count:
                    count -= len(chunk)
                    continue
                chunk = chunk.slice(count, len(chunk))
                count = 0
            yield chunk


class IndexSourceStage(Stage):
    """Emits chunks of row indices drawn from a sampler; a fetch stage turns them into rows."""

    def __init__(self, rt: Runtime, num_rows: int, sampler: Any, seed: int, chunk_rows: int, label: str):
        super().__init__(rt, [], label)
        self.seed = seed
        self.num_rows = num_rows
        self.sampler = sampler
        self.chunk_rows = chunk_rows

    fast_skip = True
    # pass index -> (indices, keys) replacing the sampler's for that pass (an elastic resume's epoch,
    # minddata.engine.elastic); set by the iterator before the run starts.
    override: dict[int, tuple[np.ndarray, np.ndarray]] | None = None

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        planned = self.override.get(pass_index) if self.override else None
        keys: np.ndarray | None
        if planned is not None:
            indices, keys = planned
        else:
            indices = self.sampler._indices(self.num_rows, self.seed, pass_index)
            global_keys = getattr(self.sampler, "_global_keys", None)
            keys = global_keys(self.num_rows) if global_keys is not None else None
        indices = indices[skip:]
        step = self.chunk_rows
        if keys is None:
            for start in range(0, len(indices), step):
                ids = indices[start : start + step].tolist()
                yield Chunk(ids, ids)
            return
        keys = keys[skip:]
        for start in range(0, len(indices), step):
            ids = indices[start : start + step].tolist()
            yield Chunk(ids, ids, keys=keys[start : start + step].tolist())


class IterableSourceStage(Stage):
    """Pulls rows from a Python iterable (a generator function, an iterable object)."""

    def __init__(
        self,
        rt: Runtime,
        open_iter: Callable[[int], Iterator[Any]],
        to_row: Callable[[Any, int], tuple],
        chunk_rows: int,
        num_samples: int | None,
        label: str,
    ):
        super().__init__(rt, [], label)
        self.open_iter = open_iter
        self.to_row = to_row
        self.chunk_rows = chunk_rows
        self.num_samples = num_samples

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        limit = self.num_samples
        source = self.open_iter(pass_index)
        to_row = self.to_row
        position = 0
        rows: list[tuple] = []
        try:
            for item in source:
                rows.append(to_row(item, position))
                position += 1
                if len(rows) >= self.chunk_rows:
                    yield Chunk(rows, list(range(position - len(rows), position)))
                    rows = []
                    self.rt.check()
                if limit is not None and position >= limit:
                    break
            if rows:
                yield Chunk(rows, list(range(position - len(rows), position)))
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()


class InlineApplyStage(Stage):
    """Applies ``fn(chunk, pass_index, row_start) -> chunk`` in the pulling thread (cheap work only)."""

    def __init__(
        self,
        rt: Runtime,
        child: Stage,
        fn: Callable[[Chunk, int, int], Chunk | None],
        label: str,
        one_to_one: bool = False,
        ordered: Callable[[Chunk | None, dict], Chunk | None] | None = None,
    ):
        super().__init__(rt, [child], label)
        self.fn = fn
        # One output row per input row: a resume can skip in the child instead of replaying.
        self.fast_skip = one_to_one and ordered is None
        # As in ParallelApplyStage: a step over the results in order (error_samples_mode "replace"),
        # called with None once the pass ends.
        self.ordered = ordered

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        fn, ordered = self.fn, self.ordered
        state: dict = {}
        row_start = skip
        with closing(self.children[0].run(skip)) as source:
            for chunk in source:
                n = len(chunk)
                out = fn(chunk, pass_index, row_start)
                row_start += n
                if ordered is not None:
                    out = ordered(out, state)
                if out is not None and len(out):
                    yield out
        if ordered is not None:
            tail = ordered(None, state)
            if tail is not None and len(tail):
                yield tail


class TakeStage(Stage):
    def __init__(self, rt: Runtime, child: Stage, count: int, label: str):
        super().__init__(rt, [child], label)
        self.count = count

    fast_skip = True

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        left = self.count - skip
        if left <= 0:
            # The child's pass still counts, as if it had run up to the take.
            self.children[0].skip_passes(1)
            return
        with closing(self.children[0].run(skip)) as source:
            for chunk in source:
                if len(chunk) >= left:
                    yield chunk.slice(0, left)
                    return
                left -= len(chunk)
                yield chunk


class SkipStage(Stage):
    """``skip(count)``: the child's pass started ``count`` rows in (it skips fast or drops the rows,
    as :meth:`Stage.run` decides)."""

    def __init__(self, rt: Runtime, child: Stage, count: int, label: str):
        super().__init__(rt, [child], label)
        self.count = count

    fast_skip = True

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        with closing(self.children[0].run(self.count + skip)) as source:
            yield from source


class RepeatStage(Stage):
    def __init__(self, rt: Runtime, child: Stage, count: int, label: str):
        super().__init__(rt, [child], label)
        self.count = count

    @property
    def fast_skip(self) -> bool:  # type: ignore[override]  # per instance, where Stage has a class attribute
        size = self._child_sizes()[0]
        return size is not None and size > 0

    def child_passes_per_pass(self) -> int:
        return max(self.count, 0)

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        done = 0
        if skip:
            done, skip = divmod(skip, self._child_sizes()[0])  # type: ignore[operator]  # skip comes only with fast_skip: size known
            self.children[0].skip_passes(done)
        while self.count < 0 or done < self.count:
            produced = 0
            offset, skip = skip, 0
            with closing(self.children[0].run(offset)) as source:
                for chunk in source:
                    produced += len(chunk)
                    yield chunk
            done += 1
            if produced == 0 and self.count < 0:
                # An empty child repeated forever would spin without ever yielding.
                return


def _value_type(value: Any) -> str:
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return type(value).__name__
    return "string" if dtype.kind in "US" else str(dtype)  # MindSpore: one string type, any length


class ConcatStage(Stage):
    """The children's rows one after the other. As MindSpore, the children's columns must have the
    same types (checked on each child's first row of a pass): int32 rows followed by int64 ones
    would make batches of mixed types downstream."""

    def __init__(self, rt: Runtime, children: list[Stage], label: str | None = None,
                 columns: list[str] | None = None):
        super().__init__(rt, children, label)
        self.columns = columns

    @property
    def fast_skip(self) -> bool:  # type: ignore[override]  # per instance, where Stage has a class attribute
        return all(size is not None for size in self._child_sizes())

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        sizes = self._child_sizes() if skip else [None] * len(self.children)
        reference: tuple[int, list[str]] | None = None
        for index, (child, size) in enumerate(zip(self.children, sizes)):
            if skip and size is not None and skip >= size:
                child.skip_passes(1)
                skip -= size
                continue
            offset, skip = skip, 0
            with closing(child.run(offset)) as source:
                checked = False
                for chunk in source:
                    if not checked:
                        row = next((r for r in chunk.rows if type(r) is not FailedRow), None)
                        if row is not None:
                            types = [_value_type(v) for v in row]
                            if reference is None:
                                reference = (index, types)
                            else:
                                self._check_types(reference, index, types)
                            checked = True
                    yield chunk

    def _check_types(self, reference: tuple[int, list[str]], index: int, types: list[str]) -> None:
        first, expected = reference
        for k, (a, b) in enumerate(zip(expected, types)):
            if a != b:
                name = self.columns[k] if self.columns and k < len(self.columns) else str(k)
                cast = f"transforms.TypeCast(np.{a})" if a != "string" else "a map that formats it as text"
                raise PipelineError(
                    f"{self.label}: column {name!r} is {a} in dataset {first} of the concat but {b} in dataset "
                    f"{index}; concatenated datasets need the same types (as in MindSpore). Cast one of them, "
                    f"e.g. .map({cast}, input_columns={name!r}) on dataset {index}."
                )


class ZipStage(Stage):
    """Joins the i-th rows of every child; ends with the shortest child."""

    fast_skip = True

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        sources = [child.run(skip) for child in self.children]
        buffers: list[list[Any]] = [[] for _ in sources]
        try:
            while True:
                for i, source in enumerate(sources):
                    while not buffers[i]:
                        chunk = next(source, None)
                        if chunk is None:
                            return
                        buffers[i] = list(chunk.rows)
                n = min(len(b) for b in buffers)
                parts = [b[:n] for b in buffers]
                for i in range(len(buffers)):
                    del buffers[i][:n]
                rows = []
                for pieces in zip(*parts):
                    failed = next((p for p in pieces if type(p) is FailedRow), None)
                    rows.append(failed if failed is not None else sum(pieces, ()))
                yield Chunk(rows)
        finally:
            for source in sources:
                source.close()


class ProjectStage(Stage):
    """Reorders/drops columns. Runs inline: a tuple rebuild per row."""

    def __init__(self, rt: Runtime, child: Stage, indices: list[int], label: str):
        super().__init__(rt, [child], label)
        if len(indices) == 1:
            only = indices[0]
            self.pick: Callable[[tuple], tuple] = lambda row: (row[only],)
        else:
            self.pick = operator.itemgetter(*indices)

    fast_skip = True

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        pick = self.pick
        with closing(self.children[0].run(skip)) as source:
            for chunk in source:
                rows = [row if type(row) is FailedRow else pick(row) for row in chunk.rows]
                yield Chunk(rows, chunk.ids, chunk.origins, chunk.keys)


class ShuffleStage(Stage):
    """Buffer shuffle (as tf.data and MindSpore): keep ``buffer_size`` rows, emit a random one each time.

    The draws are one uniform number per emitted row from the pass's RNG, so the order depends only on
    the seed, the pass and the incoming row order, not on chunk boundaries or worker counts.
    """

    def __init__(self, rt: Runtime, child: Stage, buffer_size: int, position: int, chunk_rows: int, label: str):
        super().__init__(rt, [child], label)
        self.buffer_size = buffer_size
        self.position = position
        self.chunk_rows = chunk_rows

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        rng = node_rng(self.rt.seed, pass_index, self.position)
        uniforms = rng.random(1024)
        used = 0
        buffer: list[Any] = []
        size = self.buffer_size
        out: list[Any] = []
        with closing(self.children[0].run()) as source:
            for chunk in source:
                for row in chunk.rows:
                    if len(buffer) < size:
                        buffer.append(row)
                        continue
                    if used == len(uniforms):
                        uniforms, used = rng.random(1024), 0
                    j = int(uniforms[used] * size)
                    used += 1
                    out.append(buffer[j])
                    buffer[j] = row
                if len(out) >= self.chunk_rows:
                    yield Chunk(out)
                    out = []
        # Drain: emit the rest of the buffer in a random order from the same stream.
        while buffer:
            if used == len(uniforms):
                uniforms, used = rng.random(1024), 0
            j = int(uniforms[used] * len(buffer))
            used += 1
            buffer[j], buffer[-1] = buffer[-1], buffer[j]
            out.append(buffer.pop())
            if len(out) >= self.chunk_rows:
                yield Chunk(out)
                out = []
        if out:
            yield Chunk(out)


class GroupStage(Stage):
    """Groups rows into batches: each emitted chunk holds ONE row, the list of that batch's rows.

    A collate function (inline or in workers) then stacks the columns. ``batch_size`` may be a
    callable of :class:`BatchInfo`, as in MindSpore.
    """

    def __init__(
        self,
        rt: Runtime,
        child: Stage,
        batch_size: int | Callable[[Any], int],
        drop_remainder: bool,
        make_info: Callable[[int, int], Any],
        label: str,
    ):
        super().__init__(rt, [child], label)
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self.make_info = make_info

    def _size(self, batch_num: int, pass_index: int) -> int:
        if not callable(self.batch_size):
            return self.batch_size
        size = self.batch_size(self.make_info(batch_num, pass_index))
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size <= 0:
            raise PipelineError(
                f"{self.label}: the batch_size callable must return an int greater than 0. Found: {size!r}"
            )
        return int(size)

    @property
    def fast_skip(self) -> bool:  # type: ignore[override]  # per instance, where Stage has a class attribute
        return not callable(self.batch_size)

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        batch_num = skip
        want = self._size(batch_num, pass_index)
        rows: list[Any] = []
        with closing(self.children[0].run(skip * want if skip else 0)) as source:
            for chunk in source:
                pending = chunk.rows
                while pending:
                    take = want - len(rows)
                    rows.extend(pending[:take])
                    pending = pending[take:]
                    if len(rows) == want:
                        yield Chunk([rows])
                        rows = []
                        batch_num += 1
                        want = self._size(batch_num, pass_index)
        if rows and not self.drop_remainder:
            yield Chunk([rows])
