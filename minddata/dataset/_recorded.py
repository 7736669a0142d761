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
    _refuse_urls_unless_supported(cls)


# Path arguments of sources; a source that reads object storage has a ``storage_options`` argument.
_PATH_ARGUMENTS = ("dataset_dir", "dataset_files", "dataset_file", "data_dir", "annotation_file")


def _refuse_urls_unless_supported(cls: type) -> None:
    """A source without ``storage_options`` takes a ``file://`` path as the local path it names, and
    refuses an ``s3://``/``gs://``/``http(s)://`` path with an
    error naming it (rather than "not a folder")."""
    import functools
    import inspect

    init = cls.__dict__.get("__init__")
    if init is None:
        return
    try:
        names = list(inspect.signature(init).parameters)[1:]
    except (TypeError, ValueError):
        return
    paths = [(names.index(n), n) for n in _PATH_ARGUMENTS if n in names]
    if "storage_options" in names or getattr(cls, "_reads_object_storage", False) or not paths:
        return

    @functools.wraps(init)
    def refusing_init(self: Any, *args: Any, **kwargs: Any) -> None:
        from minddata.dataset._storage import local_paths, refuse_remote

        given = list(args)
        for at, name in paths:
            value = given[at] if at < len(given) else kwargs.get(name)
            if value is None:
                continue
            refuse_remote(type(self).__name__, value)
            # A file:// URL is a local path for every source, as for those that read object storage.
            if at < len(given):
                given[at] = local_paths(value)
            else:
                kwargs[name] = local_paths(value)
        init(self, *given, **kwargs)

    cls.__init__ = refusing_init  # type: ignore[misc]  # replacing a class's constructor is the point


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
    from minddata.dataset._storage import REDACTED, redact_options

    def hidden(name: str, value: Any) -> Any:
        if name == "storage_options":
            return redact_options(value)
        return REDACTED if name in _SECRET_ARGUMENTS and value is not None else value

    kwargs = {k: hidden(k, x) for k, x in kwargs.items()}
    if args:
        import inspect

        try:
            names = list(inspect.signature(cls.__init__).parameters)[1:]
        except (TypeError, ValueError):
            return args, kwargs
        args = tuple(hidden(names[i], x) if i < len(names) else x for i, x in enumerate(args))
    return args, kwargs


# Constructor arguments that are credentials themselves (OBSMindDataset's secret key).
_SECRET_ARGUMENTS = frozenset({"sk"})
