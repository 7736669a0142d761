"""Iterators over a dataset: rows as dicts or lists of arrays, one epoch per ``for`` loop."""

from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from minddata import config
from minddata.engine.iterator import EPOCH_END, PipelineRun
from minddata.engine.runtime import ErrorStats

__all__ = ["DictIterator", "TupleIterator"]


def _tensor_adapter(output_numpy: bool) -> Callable[[np.ndarray], Any] | None:
    if output_numpy or config.get_framework() == "numpy":
        return None
    try:
        import torch
    except ImportError:
        raise ImportError(
            "config.set_framework('torch') needs PyTorch: pip install 'minddata[torch]', or use "
            "output_numpy=True"
        ) from None

    def to_torch(array: np.ndarray) -> Any:
        if array.dtype.kind in "biuf" or array.dtype == np.bool_:
            return torch.from_numpy(np.ascontiguousarray(array))
        return array

    return to_torch


class _Iterator:
    """Shared by both iterator kinds. Created by ``Dataset.create_*_iterator``; starts on first ``next``.

    ``for row in iterator`` reads one epoch; the next ``for`` loop reads the next epoch, up to
    ``num_epochs`` (``-1``: no limit). Reading past them raises :class:`~minddata.errors.EpochsExhaustedError`.
    ``close()`` (or leaving a ``with`` block, or garbage collection) stops every worker.
    """

    def __init__(self, dataset: Any, num_epochs: int, output_numpy: bool):
        names = dataset.get_col_names()
        self._names = names
        self._convert = self._make_converter(names, _tensor_adapter(output_numpy))
        self._run = PipelineRun(dataset._node, num_epochs, self._convert)
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
        return item

    def close(self) -> None:
        """Stop the pipeline now and release its workers, threads and shared memory."""
        self._finalizer()

    stop = close

    def __enter__(self) -> _Iterator:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

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

    def get_col_names(self) -> list[str]:
        return list(self._names)


def _as_array(value: Any) -> np.ndarray:
    return value if type(value) is np.ndarray else np.asarray(value)


class DictIterator(_Iterator):
    """Rows as ``{column name: array}``."""

    @staticmethod
    def _make_converter(names: list[str], adapt: Callable | None) -> Callable:
        if adapt is None:
            return lambda row: {name: _as_array(value) for name, value in zip(names, row)}
        return lambda row: {name: adapt(_as_array(value)) for name, value in zip(names, row)}


class TupleIterator(_Iterator):
    """Rows as lists of arrays in column order."""

    @staticmethod
    def _make_converter(names: list[str], adapt: Callable | None) -> Callable:
        if adapt is None:
            return lambda row: [_as_array(value) for value in row]
        return lambda row: [adapt(_as_array(value)) for value in row]
