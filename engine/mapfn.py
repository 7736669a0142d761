"""The work of a ``map``: run its op list over the rows of a chunk, and apply the error policy."""

from __future__ import annotations

import operator
import pickle
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from minddata.config import RunOptions
from minddata.engine.chunk import Chunk, FailedRow
from minddata.engine.debughooks import PrintMetaDataHook
from minddata.engine.ir import column_layout
from minddata.engine.runtime import PipelineStopped, Runtime
from minddata.errors import PipelineError, RowError
from minddata.ops.base import KernelContext, Op, op_label
from minddata.ops.registry import get_kernel

__all__ = ["MapFunction", "MapErrorPolicy", "op_label", "column_layout"]


class _OutputCountError(PipelineError):
    """An op returned a different number of columns than output_columns names: a graph error."""


class MapFunction:
    """Picklable: runs in a worker thread or, for ``python_multiprocessing``, in a worker process.

    ``self((rows, pass_index, row_start)) -> (out_rows, failures)``; ``out_rows[i]`` is ``None``
    where row ``i`` failed and ``failures`` lists ``(i, op_index, error, traceback_text)``.
    """

    def __init__(
        self,
        operations: list[Any],
        op_positions: list[int],
        input_indices: list[int],
        layout: list[tuple[int, int]],
        num_outputs: int,
        seed: int,
        label: str,
        keep_tracebacks: bool,
        options: RunOptions | None = None,
    ):
        self.operations = operations
        self.op_positions = op_positions
        self.input_indices = input_indices
        self.layout = layout
        self.num_outputs = num_outputs
        self.seed = seed
        # The iterator's settings snapshot: pickled with this function, so worker processes see the
        # same settings as threads (kernels read ctx.options, not the global config).
        self.options = options
        self.label = label
        # Across a process boundary exceptions lose their traceback: carry it as text instead.
        self.keep_tracebacks = keep_tracebacks
        self._steps_cache: tuple | None = None
        # Set by the profiler (thread workers only): seconds per op, summed per thread.
        self.op_timer: Any = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_steps_cache"] = None
        state["op_timer"] = None
        return state

    def _steps(self) -> tuple:
        if self._steps_cache is None:
            steps: list[tuple[Callable[..., Any], Op | None, bool, bool | None]] = []
            for op in self.operations:
                if isinstance(op, Op):
                    kernel = get_kernel(op.name, "CPU")
                    steps.append((kernel, op, op.random, op.num_outputs != 1))
                else:
                    steps.append((op, None, False, None))
            self._steps_cache = (steps, self._assembler())
        return self._steps_cache

    def _assembler(self) -> Callable[[tuple, tuple], tuple]:
        layout = self.layout
        width = len(layout)
        if all(src == 1 for src, _ in layout) and [k for _, k in layout] == list(range(width)):
            return lambda row, out: out
        if sum(src == 1 for src, _ in layout) == 1 and self.num_outputs == 1 and len(self.input_indices) == 1:
            position = next(i for i, (src, _) in enumerate(layout) if src == 1)
            # A splice is right only when the one input column is the one replaced: then the row is
            # as wide as the output. (Two inputs into one output leave a column to drop.)
            in_place = list(self.input_indices) == [position]
            if in_place and [k for src, k in layout if src == 0] == [i for i in range(width) if i != position]:
                return lambda row, out: row[:position] + out + row[position + 1 :]
        return lambda row, out: tuple(out[k] if src else row[k] for src, k in layout)

    def __call__(
        self, arg: tuple, stop: threading.Event | None = None
    ) -> tuple[list[Any], list[tuple]]:
        # (rows, pass, row_start) or (rows, pass, row_start, keys): with keys (the rows' global
        # identities, Chunk.keys), row i draws from the stream of keys[i] instead of row_start + i.
        rows, pass_index, row_start = arg[0], arg[1], arg[2]
        keys = arg[3] if len(arg) > 3 else None
        if keys is not None:
            row_start = _Keyed(keys)
        steps, assemble = self._steps()
        contexts = [
            KernelContext(self.seed, pass_index, row_start, position, self.options) if op is not None else None
            for (_, op, _, _), position in zip(steps, self.op_positions)
        ]
        random_contexts = [ctx for ctx, (_, _, rnd, _) in zip(contexts, steps) if rnd]
        plan = list(zip(steps, contexts))
        indices = self.input_indices
        if len(indices) == 1:
            only = indices[0]
            pick: Callable[[tuple], tuple] = lambda row: (row[only],)  # noqa: E731
        else:
            pick = operator.itemgetter(*indices) if indices else (lambda row: ())
        out_rows: list[Any] = []
        failures: list[tuple] = []
        if self.options is not None and self.options.debug_mode:
            plan = self._debug_plan(plan)
        else:
            timer = self.op_timer
            acc = timer.sample() if timer is not None else None
            if acc is not None:
                plan = _observed(plan, step=_timing(acc), row_done=_counting(acc, len(plan)))
        self._run_rows(rows, row_start, stop, plan, random_contexts, pick, assemble, out_rows, failures)
        return out_rows, failures

    def _run_rows(self, rows: list[Any], row_start: Any, stop: threading.Event | None, plan: list,
                  random_contexts: list, pick: Callable[[tuple], tuple], assemble: Callable[[tuple, tuple], tuple],
                  out_rows: list[Any], failures: list[tuple]) -> None:
        # The one loop applying the map's ops to each row, for thread and process workers alike; the
        # profiler's clock and the debug hooks ride in the plan's steps (_observed), so this loop pays
        # nothing for them when they are off.
        n_out = self.num_outputs
        for i, row in enumerate(rows):
            # A slow op over a long chunk would otherwise hold up shutdown until the chunk ends.
            if stop is not None and stop.is_set():
                raise PipelineStopped("pipeline stopped")
            if type(row) is FailedRow:
                out_rows.append(row)
                continue
            for ctx in random_contexts:
                ctx.row_index = row_start + i
            step_index = 0
            try:
                values = pick(row)
                for step_index, ((fn, op, _, multi), ctx) in enumerate(plan):  # noqa: B007 (read by the handler)
                    if op is None:
                        result = fn(*values)
                        values = result if type(result) is tuple else (result,)
                    else:
                        result = fn(op, ctx, *values)
                        values = tuple(result) if multi else (result,)
                if len(values) != n_out:
                    raise _OutputCountError(
                        f"{self.label}: the last op returned {len(values)} value(s) for row {row_start + i}, "
                        f"but output_columns names {n_out} column(s). Give output_columns {len(values)} "
                        f"name(s), or make the op return {n_out}."
                    )
                out_rows.append(assemble(row, values))
            except Exception as error:  # noqa: BLE001 - the error policy decides
                out_rows.append(None)
                text = traceback.format_exc() if self.keep_tracebacks else ""
                failures.append((i, step_index, portable_error(error) if text else error, text))

    def _debug_plan(self, plan: list) -> list:
        # The debug hooks (config.set_debug_mode), called on the values going into the first op and
        # coming out of each op.
        hooks = self.options.debug_hooks if self.options is not None else None
        if hooks is None:
            hooks = (PrintMetaDataHook(),)
        names = [op_label(op if op is not None else fn) for (fn, op, _, _), _ in plan]

        def show(after: str | None, values: tuple) -> None:
            for hook in hooks:
                name_it = getattr(hook, "set_previous_op_name", None)
                if name_it is not None:
                    name_it(after)
                hook(*values)

        return _observed(plan, start=lambda values: show(None, values),
                         step=lambda index, seconds, values: show(names[index], values))


def _observed(
    plan: list,
    *,
    step: Callable[[int, float, tuple], None],
    start: Callable[[tuple], None] | None = None,
    row_done: Callable[[], None] | None = None,
) -> list:
    """``plan`` with an observer around each op: ``start(values)`` before the first op,
    ``step(index, seconds, values out)`` after each, ``row_done()`` after the last."""
    last = len(plan) - 1
    observed = []
    for index, ((fn, op, random, multi), ctx) in enumerate(plan):
        first_start = start if index == 0 else None
        done = row_done if index == last else None
        wrap = _observe_python if op is None else _observe_kernel
        observed.append(((wrap(fn, index, multi, step, first_start, done), op, random, multi), ctx))
    return observed


def _observe_python(fn: Callable[..., Any], index: int, multi: bool | None, step: Callable[[int, float, tuple], None],
                    start: Callable[[tuple], None] | None, done: Callable[[], None] | None) -> Callable[..., Any]:
    """A map's Python function ``fn`` (plan step ``index``) with the observers of :func:`_observed`."""
    perf = time.perf_counter

    def run(*values: Any) -> Any:
        if start is not None:
            start(values)
        t = perf()
        result = fn(*values)
        step(index, perf() - t, result if type(result) is tuple else (result,))
        if done is not None:
            done()
        return result

    return run


def _observe_kernel(fn: Callable[..., Any], index: int, multi: bool | None, step: Callable[[int, float, tuple], None],
                    start: Callable[[tuple], None] | None, done: Callable[[], None] | None) -> Callable[..., Any]:
    """An op's kernel ``fn`` (plan step ``index``) with the observers of :func:`_observed`."""
    perf = time.perf_counter

    def run(op: Any, ctx: Any, *values: Any) -> Any:
        if start is not None:
            start(values)
        t = perf()
        result = fn(op, ctx, *values)
        step(index, perf() - t, tuple(result) if multi else (result,))
        if done is not None:
            done()
        return result

    return run


def _timing(acc: list[float]) -> Callable[[int, float, tuple], None]:
    def step(index: int, seconds: float, values: tuple) -> None:
        acc[index] += seconds

    return step


def _counting(acc: list[float], slot: int) -> Callable[[], None]:
    def row_done() -> None:
        acc[slot] += 1

    return row_done


class UnpicklableError(PipelineError):
    """Stands in for an op's exception that cannot leave a worker process (it holds a lock, a file, a
    socket...): its message and the original type's name travel instead, so a failure reads the same
    from a process worker as from a thread worker (``op X failed on row N: TheType: message``)."""

    def __init__(self, type_name: str, text: str):
        super().__init__(text)
        self.type_name = type_name

    def __reduce__(self) -> tuple:
        return (UnpicklableError, (self.type_name, str(self)))


def portable_error(error: BaseException) -> BaseException:
    """``error`` if pickle can send it, else an :class:`UnpicklableError` with its type's name and
    message. Plain pickle, as the worker's reply is (``procpool.messages.dumps``): a class defined in a
    function, which only cloudpickle could send by value, travels as text too."""
    try:
        pickle.dumps(error)
        return error
    except Exception:  # noqa: BLE001 - any failure to pickle means: send the text
        return UnpicklableError(type(error).__name__, str(error))


def error_type_name(error: BaseException) -> str:
    """The name a failure is reported under: the original type's, also for a stand-in."""
    return error.type_name if isinstance(error, UnpicklableError) else type(error).__name__


class _RemoteTraceback(Exception):
    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return "\n\n" + self.text


class MapErrorPolicy:
    """Turns per-row failures into the configured behaviour: raise, skip, replace, or deliver."""

    def __init__(self, rt: Runtime, mode: str, label: str, op_labels: list[str]):
        self.rt = rt
        self.mode = mode
        self.label = label
        self.op_labels = op_labels

    def row_error(self, chunk: Chunk, i: int, row_index: int, op_index: int, error: BaseException, text: str) -> RowError:
        where = chunk.where(i)
        op_name = self.op_labels[op_index] if op_index < len(self.op_labels) else "?"
        message = (
            f"{self.label}: op {op_name} failed on row {row_index}"
            + (f" ({where})" if where else "")
            + f": {error_type_name(error)}: {error}"
        )
        exc = RowError(message, op=op_name, row=row_index, source=chunk.origins[i] if chunk.origins else None)
        if text and error.__cause__ is None:
            error.__cause__ = _RemoteTraceback(text)
        exc.__cause__ = error
        return exc

    def finish(self, chunk: Chunk, result: tuple[list[Any], list[tuple]], pass_index: int, row_start: int) -> Chunk:
        out_rows, failures = result
        errors: dict[int, BaseException] = {}
        for i, op_index, error, text in failures:
            if isinstance(error, _OutputCountError):
                raise error
            errors[i] = self.row_error(chunk, i, row_start + i, op_index, error, text)
        return self.apply(chunk, out_rows, errors)

    def apply(self, chunk: Chunk, out_rows: list[Any], errors: dict[int, BaseException]) -> Chunk:
        """The chunk of ``out_rows`` after the policy for the rows that failed (``errors``: row → error).

        :class:`FailedRow` placeholders (a row that failed upstream: a source read, an earlier device
        part) fail here too, unless this policy delivers them."""
        if self.mode != "deliver" and any(type(row) is FailedRow for row in out_rows):
            errors = dict(errors)
            for i, row in enumerate(out_rows):
                if type(row) is FailedRow:
                    errors.setdefault(i, row.error)
        if not errors:
            return Chunk(out_rows, chunk.ids, chunk.origins, chunk.keys)
        for i in sorted(errors):
            error = errors[i]
            if self.mode == "raise":
                raise error
            if self.mode == "deliver":
                out_rows[i] = FailedRow(error)
            elif self.mode == "replace":
                out_rows[i] = _REPLACE
                self.rt.record_error("replace", str(error))
            else:
                out_rows[i] = None
                self.rt.record_error("skip", str(error))
        if self.mode == "skip":
            return Chunk(out_rows, chunk.ids, chunk.origins, chunk.keys).take([i for i, row in enumerate(out_rows) if row is not None])
        return Chunk(out_rows, chunk.ids, chunk.origins, chunk.keys)

    def replace_in_order(self, chunk: Chunk | None, state: dict) -> Chunk | None:
        """``replace`` mode: a failed row becomes a copy of the nearest good row before it (or, at the
        start of a pass, the first good row after it). Runs in sequence order, so it is deterministic."""
        pending: list[Chunk] = state.setdefault("pending", [])
        if chunk is None:
            if pending:
                raise PipelineError(
                    f"{self.label}: every row of the pass failed, so error_samples_mode='replace' has no good "
                    "row to replace them with. Fix the op or the data; the errors were logged."
                )
            return None
        last = state.get("last_good")
        if last is None:
            good = next((row for row in chunk.rows if row is not _REPLACE), None)
            if good is None:
                pending.append(chunk)
                return None
            last = good
        rows = []
        for row in chunk.rows:
            if row is _REPLACE:
                rows.append(last)
            else:
                rows.append(row)
                last = row
        state["last_good"] = last
        if pending:
            first = next(row for row in chunk.rows if row is not _REPLACE)
            held = [Chunk([first] * len(c), c.ids, c.origins, c.keys) for c in pending]
            pending.clear()
            return _concat(held + [Chunk(rows, chunk.ids, chunk.origins, chunk.keys)])
        return Chunk(rows, chunk.ids, chunk.origins, chunk.keys)


class _Keyed(int):
    """``row_start`` for rows with global keys: ``_Keyed(keys) + i`` is ``keys[i]``, so the row loops
    (and their error messages) use each row's key where they used its position."""

    keys: list[int]

    def __new__(cls, keys: list[int]) -> _Keyed:
        self = super().__new__(cls, keys[0] if len(keys) else 0)
        self.keys = keys
        return self

    def __add__(self, i: int) -> int:
        return self.keys[i]


def _concat(chunks: list[Chunk]) -> Chunk:
    rows = [row for c in chunks for row in c.rows]
    ids = None if any(c.ids is None for c in chunks) else [i for c in chunks for i in c.ids]  # type: ignore[union-attr]  # no None: any() checked
    origins = None if any(c.origins is None for c in chunks) else [o for c in chunks for o in c.origins]  # type: ignore[union-attr]  # no None: any() checked
    keys = None if any(c.keys is None for c in chunks) else [k for c in chunks for k in c.keys]  # type: ignore[union-attr]  # no None: any() checked
    return Chunk(rows, ids, origins, keys)


class _Replace:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<row to replace>"


_REPLACE = _Replace()
