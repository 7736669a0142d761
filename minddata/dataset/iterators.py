"""Iterators over a dataset: rows as dicts or lists of arrays, one epoch per ``for`` loop."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minddata import config
from minddata.common.tensor import Tensor
from minddata.config import RunOptions
from minddata.engine.iterator import EPOCH_END, PipelineRun
from minddata.engine.runtime import DeviceStats, ErrorStats
from minddata.errors import ArgumentError

__all__ = ["DictIterator", "TorchIterator", "TupleIterator"]


_FRAMEWORK_EXTRAS = {
    "torch": "pip install 'minddata[torch]'",
    "jax": "pip install jax",
    "cupy": "pip install cupy-cuda12x (needs an NVIDIA GPU)",
}


def _numeric(array: np.ndarray) -> bool:
    return array.dtype.kind in "biuf" or array.dtype == np.bool_


def _tensor_adapter(output_numpy: bool, options: RunOptions) -> Callable[[np.ndarray], Any] | None:
    framework = options.framework
    if output_numpy:
        return None
    if framework == "numpy":
        return _to_tensor
    copy = options.iterator_copy
    try:
        module = __import__(framework)
    except ImportError:
        raise ImportError(
            f"config.set_framework({framework!r}) needs {framework}: {_FRAMEWORK_EXTRAS[framework]}, or "
            "create the iterator with output_numpy=True"
        ) from None
    adapt = {"torch": _to_torch, "jax": _to_jax, "cupy": _to_cupy}[framework](module)
    if not copy:
        return adapt

    def adapt_copy(array: Any) -> Any:
        # config.set_iterator_mode(do_copy=True): a tensor of its own, never the pipeline's buffer.
        return adapt(array.copy() if isinstance(array, np.ndarray) else array)

    return adapt_copy


def _on_device(value: Any) -> bool:
    # A GPU map's row: a torch CUDA tensor or a CuPy array (see minddata.ops.gpu.segment).
    module = type(value).__module__
    return module.startswith("cupy") or (module.startswith("torch") and getattr(value, "is_cuda", False))


def _to_torch(torch: Any) -> Callable[[Any], Any]:
    ndarray, from_numpy = np.ndarray, torch.from_numpy

    def to_torch(array: Any) -> Any:
        # The common case first: a contiguous numeric NumPy array becomes a tensor over its memory.
        if type(array) is ndarray and array.dtype.kind in "biuf" and array.flags.c_contiguous:
            return from_numpy(array)
        if isinstance(array, torch.Tensor):
            return array  # e.g. a GPU map's output: it stays on the GPU
        if _on_device(array):
            return torch.from_dlpack(array)
        array = _as_array(array)
        return torch.from_numpy(np.ascontiguousarray(array)) if _numeric(array) else array

    return to_torch


def _to_jax(jax: Any) -> Callable[[Any], Any]:
    import jax.dlpack
    import jax.numpy as jnp

    def to_jax(array: Any) -> Any:
        if _on_device(array):
            return jax.dlpack.from_dlpack(array)  # zero-copy from the GPU map's output
        array = _as_array(array)
        return jnp.asarray(array) if _numeric(array) else array

    return to_jax


def _to_cupy(cupy: Any) -> Callable[[Any], Any]:
    def to_cupy(array: Any) -> Any:
        if type(array).__module__.startswith("cupy"):
            return array
        if _on_device(array):
            return cupy.from_dlpack(array)
        array = _as_array(array)
        return cupy.asarray(array) if _numeric(array) else array

    return to_cupy


def _to_tensor(value: Any) -> Any:
    # MindSpore's default iterators give Tensors: a numeric array is viewed as minddata's Tensor
    # (an ndarray subclass with asnumpy(), dim()...; no copy); strings and objects stay as they are.
    if type(value) is not np.ndarray:
        value = _host_array(value)
    return value.view(Tensor) if value.dtype.kind in "biufc" else value


def _as_is(row: Any) -> Any:
    return row


class _Iterator:
    """Shared by both iterator kinds. Created by ``Dataset.create_*_iterator``; starts on first ``next``.

    ``for row in iterator`` reads one epoch; the next ``for`` loop reads the next epoch, up to
    ``num_epochs`` (``-1``: no limit). Reading past them raises :class:`~minddata.errors.EpochsExhaustedError`.
    ``close()`` (or leaving a ``with`` block, or garbage collection) stops every worker.
    ``options``: the settings the iterator runs with (default: ``config.snapshot()``, taken now).
    """

    def __init__(
        self, dataset: Any, num_epochs: int, output_numpy: bool, state: dict | list[dict] | None = None,
        executor: str = "local", options: RunOptions | None = None,
    ):
        names = dataset.get_col_names()
        self._names = names
        if options is None:
            options = config.snapshot()  # the one read of the settings: the run takes this snapshot
        self._convert = self._make_converter(names, _tensor_adapter(output_numpy, options))
        # config.set_iterator_mode(parallel_convert=False): rows become items on the caller's thread.
        self._convert_here = not options.iterator_parallel_convert
        self._run = PipelineRun(dataset._node, num_epochs, _as_is if self._convert_here else self._convert, state, executor,
                                options=options)
        self._profiler: Any = None
        self._profiler_run: Any = None
        # The run must not hold the iterator, so an abandoned iterator is collected and closes its run.
        self._finalizer = weakref.finalize(self, self._run.close)

    @staticmethod
    def _make_converter(names: list[str], adapt: Callable | None) -> Callable:  # pragma: no cover - abstract
        raise NotImplementedError

    def __iter__(self) -> _Iterator:
        return self

    def __next__(self) -> Any:
        try:
            item = self._run.next_item()
        except BaseException:
            self.close()
            raise
        if item is EPOCH_END:
            raise StopIteration
        return self._convert(item) if self._convert_here else item

    def close(self) -> None:
        """Stop the pipeline now and release its workers, threads and shared memory."""
        self._finalizer()

    stop = close

    def __enter__(self) -> _Iterator:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def get_state(self) -> dict:
        """Where this iterator is (epoch, row, seed): small and JSON-serializable. Pass it as
        ``state=`` to ``create_dict_iterator``/``create_tuple_iterator`` to continue from here; the
        list of every rank's state resumes on another number of ranks (its ``"elastic"`` part)."""
        return self._run.get_state()

    @property
    def error_stats(self) -> ErrorStats:
        """Rows skipped or replaced so far under ``error_samples_mode`` ``"skip"``/``"replace"``."""
        return self._run.rt.errors

    @property
    def skipped_rows(self) -> int:
        return self._run.rt.errors.skipped

    @property
    def replaced_rows(self) -> int:
        return self._run.rt.errors.replaced

    @property
    def epochs_done(self) -> int:
        return self._run.epochs_done

    @property
    def device_stats(self) -> DeviceStats:
        """Rows that crossed between devices (``transfers``, e.g. ``{"CPU->GPU": 64}``) and rows a
        device op ran on the CPU instead (``cpu_rows``), so far."""
        return self._run.rt.device_stats

    @property
    def profiler(self) -> Any:
        """This iterator's profile as a :class:`minddata.Profiler`, when it was profiled
        (``config.set_profiling(True)``, an active ``Profiler``, or autotune); else ``None``.
        Available once the first item was read."""
        run = self._run.profile
        if run is None:
            return None
        if self._profiler is None or self._profiler_run is not run:
            from minddata.profiler import Profiler

            self._profiler, self._profiler_run = Profiler._of_run(run), run
        return self._profiler

    def get_col_names(self) -> list[str]:
        return list(self._names)


def _as_array(value: Any) -> np.ndarray:
    return value if type(value) is np.ndarray else _host_array(value)


def _host_array(value: Any) -> np.ndarray:
    # A GPU map's output (a torch CUDA tensor or a CuPy array) comes to the host for NumPy consumers.
    module = type(value).__module__
    if module.startswith("torch") and hasattr(value, "cpu"):
        return value.detach().cpu().numpy()
    if module.startswith("cupy") and hasattr(value, "get"):
        return value.get()
    return np.asarray(value)


class DictIterator(_Iterator):
    """Rows as ``{column name: array}``."""

    @staticmethod
    def _make_converter(names: list[str], adapt: Callable | None) -> Callable:
        if adapt is None:
            return lambda row: {name: _as_array(value) for name, value in zip(names, row)}
        return lambda row: {name: adapt(value) for name, value in zip(names, row)}


class TupleIterator(_Iterator):
    """Rows as lists of arrays in column order."""

    @staticmethod
    def _make_converter(names: list[str], adapt: Callable | None) -> Callable:
        if adapt is None:
            return lambda row: [_as_array(value) for value in row]
        return lambda row: [adapt(value) for value in row]


def import_torch(who: str) -> Any:
    try:
        import torch
    except ImportError:
        raise ImportError(f"{who} needs PyTorch, which is not installed: {_FRAMEWORK_EXTRAS['torch']}") from None
    return torch


class TorchIterator(_Iterator):
    """Rows as lists of torch tensors in column order, whatever ``config.set_framework`` says.

    Numeric host arrays become tensors without a copy (``torch.from_numpy``), on the pipeline's
    prefetch thread; rows a GPU map left on the device stay there (torch tensors as they are, CuPy
    arrays through DLPack). Integer columns named in ``int64_columns`` are cast to int64 (what
    ``torch.nn.CrossEntropyLoss`` wants for class labels). ``options``: the settings it runs with
    (default: taken now; the trainer passes its own, see ``minddata.trainer.sink.device_options``).
    """

    def __init__(self, dataset: Any, num_epochs: int = -1, state: dict | list[dict] | None = None,
                 int64_columns: Sequence[str] = (), options: RunOptions | None = None) -> None:
        self._int64_columns = frozenset(int64_columns)
        missing = sorted(self._int64_columns - set(dataset.get_col_names()))
        if missing:
            raise ArgumentError(
                f"TorchIterator: `int64_columns` names {missing}, which the dataset does not have; "
                f"its columns are {dataset.get_col_names()}"
            )
        super().__init__(dataset, num_epochs=num_epochs, output_numpy=True, state=state, options=options)

    def _make_converter(self, names: list[str], adapt: Callable | None) -> Callable:  # type: ignore[override]  # needs self (its int64 columns); the others are static
        torch = import_torch("TorchIterator")
        to_torch = _to_torch(torch)
        casts = [i for i, name in enumerate(names) if name in self._int64_columns]
        int64 = torch.int64

        def convert(row: list[Any]) -> list[Any]:
            out = [to_torch(value) for value in row]
            for i in casts:
                value = out[i]
                if isinstance(value, torch.Tensor) and not value.is_floating_point() \
                        and value.dtype not in (int64, torch.bool):
                    out[i] = value.to(int64)
            return out

        return convert
