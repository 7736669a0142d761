"""Dataset classes remember the constructor call that made each instance, on the graph node it built.

Kept apart from ``serialization`` (which reads it) so that ``Dataset.__init_subclass__`` imports
nothing heavy while the dataset modules are still loading.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

from minddata.ops.base import init_arguments, record_init_arguments

__all__ = ["CALL_TAG", "DatasetCall", "remember_source_arguments"]

# The plan node field holding its DatasetCall.
CALL_TAG = "source_call"


class DatasetCall(NamedTuple):
    """How a dataset class instance was made: class, constructor arguments, and the sampler its node
    had then (``use_sampler`` or ``split`` later give the node another one)."""

    cls: type
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    sampler: Any

    def __reduce__(self) -> tuple[Any, ...]:
        # Graph nodes travel pickled to worker processes and Ray tasks, which run them but never
        # serialize them: the constructor arguments (a NumpySlicesDataset's data) stay behind.
        return (_dropped, ())

    def __deepcopy__(self, memo: dict[int, Any]) -> DatasetCall:
        return self


def _dropped() -> None:
    return None


def remember_source_arguments(cls: type) -> None:
    """Make the dataset class ``cls`` record each instance's constructor call on the graph node it
    builds, so ``minddata.serialize`` can write the source as that call."""
    record_init_arguments(cls, after=_tag_node)


def _tag_node(dataset: Any) -> None:
    call = init_arguments(dataset)
    node = getattr(dataset, "_node", None)
    if call is None or node is None:
        return
    # A new node (plan nodes are frozen): one that came from another dataset object keeps that
    # object's description.
    args, kwargs = _without_secrets(type(dataset), call[0], call[1])
    dataset._node = dataclasses.replace(
        node, source_call=DatasetCall(type(dataset), args, kwargs, getattr(node, "sampler", None))
    )


def _without_secrets(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call with ``storage_options``' credentials replaced by ``<redacted>``: a serialized
    pipeline never holds them (the reader takes them from the environment or its own options)."""
    if "storage_options" in kwargs:
        from minddata.dataset._storage import redact_options

        kwargs = dict(kwargs, storage_options=redact_options(kwargs["storage_options"]))
    if args:
        import inspect

        try:
            names = list(inspect.signature(cls.__init__).parameters)[1:]
        except (TypeError, ValueError):
            return args, kwargs
        if "storage_options" in names and names.index("storage_options") < len(args):
            from minddata.dataset._storage import redact_options

            at = names.index("storage_options")
            args = (*args[:at], redact_options(args[at]), *args[at + 1:])
    return args, kwargs
