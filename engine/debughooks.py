"""The hooks a map calls in debug mode (``config.set_debug_mode``), public as
``minddata.dataset.debug`` (MindSpore's ``mindspore.dataset.debug``).

They live here, with the map that calls them, so that the engine's default hook
(:class:`PrintMetaDataHook`, used when debug mode is given no list) needs nothing above it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["DebugHook", "PrintMetaDataHook", "PrintDataHook"]


class DebugHook:
    """Base class of debug hooks: called by a map in debug mode before its first transform and after
    each transform, with that transform's input or output values.

    Args:
        prev_op_name: The transform whose output the hook sees (``None`` before the first one). The map
            sets it on each call; there is normally no need to give it.
    """

    def __init__(self, prev_op_name: str | None = None) -> None:
        self.prev_op_name = prev_op_name

    def set_previous_op_name(self, prev_op_name: str | None) -> None:
        """Called by the map before :meth:`compute`: the transform that made the values (or ``None``)."""
        self.prev_op_name = prev_op_name

    def compute(self, *args: Any) -> Any:
        """Look at the values (``args``: one per column). Override this; the return value is ignored,
        the values pass on unchanged."""
        raise NotImplementedError(f"{type(self).__name__}: a DebugHook must override compute(self, *args)")

    def __call__(self, *args: Any) -> tuple:
        self.compute(*args)
        return args

    def _where(self) -> str:
        return (
            f"the output of {self.prev_op_name}" if self.prev_op_name else "the input of the first transform"
        )

    # Hooks travel in the settings snapshot, which is compared and copied: two hooks of one kind
    # with the same state are the same hook.
    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and _same_state(vars(self), vars(other))

    def __hash__(self) -> int:
        return hash(type(self))


def _same_state(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    try:
        return all(bool(np.all(a[k] == b[k])) if isinstance(a[k], np.ndarray) else a[k] == b[k] for k in a)
    except Exception:  # noqa: BLE001 - state that can't be compared is not the same
        return False


def _describe(value: Any) -> str:
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    text = f"type {type(value).__name__}"
    if shape is not None:
        text += f", shape {tuple(shape)}"
    if dtype is not None:
        text += f", dtype {dtype}"
    return text


class PrintMetaDataHook(DebugHook):
    """Prints the type, shape and dtype of each value (the default hook of debug mode).

    Examples:
        >>> import numpy as np
        >>> from minddata.dataset.debug import PrintMetaDataHook
        >>> _ = PrintMetaDataHook()(np.zeros((2, 3), np.uint8))
        [Dataset debugger] the input of the first transform: column 0: type ndarray, shape (2, 3), dtype uint8
    """

    def compute(self, *args: Any) -> Any:
        for i, value in enumerate(args):
            print(f"[Dataset debugger] {self._where()}: column {i}: {_describe(value)}")
        return args


class PrintDataHook(DebugHook):
    """Prints each value.

    Examples:
        >>> import numpy as np
        >>> from minddata.dataset.debug import PrintDataHook
        >>> _ = PrintDataHook("Decode")(np.array([1, 2]))
        [Dataset debugger] the output of Decode: column 0: [1 2]
    """

    def compute(self, *args: Any) -> Any:
        for i, value in enumerate(args):
            print(f"[Dataset debugger] {self._where()}: column {i}: {value}")
        return args
