"""Pipelines as JSON: ``serialize``, ``deserialize``, ``show`` and ``compare`` (``mindspore.dataset``'s).

A pipeline is written root first, one JSON object per node: ``op_type``, the node's parameters,
``num_parallel_workers`` and ``children``, as MindSpore lays it out. A source is written as the call
that made it (its class and constructor arguments), an op as ``tensor_op_name`` / ``tensor_op_params``
(its constructor arguments), a sampler as ``sampler_name`` with its arguments and ``child_sampler``.
Nothing here knows individual classes: ops, samplers and dataset classes remember their constructor
call (:func:`minddata.ops.base.record_init_arguments`), so a new op or dataset serializes as soon as
it exists.

Values JSON lacks are tagged objects: ``{"__tuple__": [...]}``, ``{"__ndarray__": [...], "dtype":
"uint8", "shape": [...]}``, ``{"__enum__": "Inter", "module": "minddata.vision", "name": "AREA"}``,
``{"__dtype__": "float32"}``, ``{"__slice__": [start, stop, step]}`` and a few more. Python code
(lambdas, functions, ``GeneratorDataset`` sources, callbacks) is written by name only, as MindSpore
does; :func:`deserialize` then fails naming the node, the argument and the fix. Only classes of the
``minddata`` package are rebuilt from JSON: a file names no code to import beyond them.
"""

from __future__ import annotations

import base64
import enum
import functools
import importlib
import inspect
import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from minddata.dataset._recorded import CALL_TAG as _CALL_TAG
from minddata.dataset._recorded import DatasetCall as _DatasetCall
from minddata.dataset.base import Dataset, concat, zip
from minddata.engine import ir
from minddata.engine.autotune import AUTOTUNE, is_autotune
from minddata.engine.cache_stage import CacheNode
from minddata.errors import ArgumentError, GraphError
from minddata.ops.base import Op, init_arguments

__all__ = ["compare", "deserialize", "op_from_dict", "op_to_dict", "serialize", "show"]

# Keys of a node object that are not constructor arguments of a source.
_NODE_KEYS = ("op_type", "module", "num_parallel_workers", "children", "use_sampler", "unserializable")
_SAMPLER_KEYS = ("sampler_name", "sampler_module", "child_sampler", "python_module")
# Tag keys of values JSON has no type for; a plain dict using one of them is written as pairs.
_TAGS = (
    "__tuple__",
    "__ndarray__",
    "__numpy__",
    "__bytes__",
    "__complex__",
    "__slice__",
    "__ellipsis__",
    "__dtype__",
    "__numpy_type__",
    "__builtin_type__",
    "__enum__",
    "__autotune__",
    "__dict__",
    "__dataset__",
    "__schema__",
    "__object__",
    "__python_object__",
    "tensor_op_name",
    "sampler_name",
)
_BUILTIN_TYPES = {t.__name__: t for t in (bool, int, float, complex, str, bytes, object)}
# Source arguments holding paths: written absolute (as MindSpore does), so the JSON file can be read
# from another working directory.
_PATH_SUFFIXES = ("_dir", "_file", "_files", "_path")


# ------------------------------------------------------------------------------------ public API


def serialize(dataset: Dataset, json_filepath: str = "") -> dict[str, Any]:
    """The pipeline ending at ``dataset`` as a dict of JSON types, also written to ``json_filepath``
    when given (``mindspore.dataset.serialize``).

    Python code in the pipeline (lambdas and functions in ``map``, ``filter`` predicates,
    ``GeneratorDataset`` sources, callbacks) is written by name only, as MindSpore does: the file shows
    it, but :func:`deserialize` cannot rebuild it and says so.

    Raises:
        OSError: ``json_filepath`` can't be written.

    Examples:
        >>> import minddata as md
        >>> from minddata import transforms
        >>> ds = md.NumpySlicesDataset({"label": [0, 2, 1]}, shuffle=False)
        >>> ds = ds.map(transforms.OneHot(3), input_columns="label").batch(3)
        >>> pipeline = md.serialize(ds)
        >>> pipeline["op_type"], pipeline["children"][0]["operations"][0]["tensor_op_name"]
        ('Batch', 'OneHot')
        >>> again = md.deserialize(input_dict=pipeline)
        >>> next(again.create_dict_iterator(output_numpy=True))["label"].tolist()
        [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    """
    if not isinstance(dataset, Dataset):
        raise ArgumentError(f"serialize: `dataset` must be a Dataset. Found: {type(dataset).__name__}")
    if not isinstance(json_filepath, (str, os.PathLike)):
        raise ArgumentError(f"serialize: `json_filepath` must be a path string. Found: {json_filepath!r}")
    pipeline = _Writer().node(dataset._node)
    if os.fspath(json_filepath):
        with open(json_filepath, "w", encoding="utf-8") as f:
            json.dump(pipeline, f, indent=2)
    return pipeline


def deserialize(input_dict: dict[str, Any] | None = None, json_filepath: str | None = None) -> Dataset:
    """Rebuild a pipeline from :func:`serialize`'s dict (``input_dict``) or JSON file
    (``json_filepath``, which wins when both are given), as ``mindspore.dataset.deserialize``.

    The rebuilt pipeline gives the same rows as the original under the same seed. A pipeline holding
    Python code (written by name only) raises a GraphError naming the node and the argument; MindSpore
    fails there too. Unlike MindSpore, which returns None when it can't rebuild a pipeline, every
    failure raises.

    Raises:
        OSError: ``json_filepath`` can't be read.

    Examples:
        >>> import minddata as md
        >>> ds = md.NumpySlicesDataset({"x": [1, 2, 3, 4]}, shuffle=False).skip(1).repeat(2)
        >>> again = md.deserialize(input_dict=md.serialize(ds))
        >>> [int(r["x"]) for r in again.create_dict_iterator(output_numpy=True)]
        [2, 3, 4, 2, 3, 4]
    """
    if json_filepath is not None:
        with open(json_filepath, encoding="utf-8") as f:
            try:
                input_dict = json.load(f)
            except ValueError as error:
                raise ArgumentError(
                    f"deserialize: {os.fspath(json_filepath)!r} is not valid JSON: {error}"
                ) from None
    if input_dict is None:
        raise ArgumentError("deserialize: give `input_dict` (from serialize()) or `json_filepath`.")
    if not isinstance(input_dict, dict):
        raise ArgumentError(
            f"deserialize: `input_dict` must be the dict serialize() returns. Found: {type(input_dict).__name__}"
        )
    return _Reader().node(input_dict, "root")


def show(dataset: Dataset, indentation: int | None = 2) -> None:
    """Print the pipeline ending at ``dataset`` as JSON, indented by ``indentation`` spaces (None: on
    one line). MindSpore writes it to its INFO log, where it is hidden by default; here it is
    printed.

    Examples:
        >>> import minddata as md
        >>> md.show(md.NumpySlicesDataset({"x": [1]}, shuffle=False).repeat(2), indentation=None)
        ... # doctest: +ELLIPSIS
        {"op_type": "Repeat", "count": 2, "num_parallel_workers": 1, "children": [{"op_type": "NumpySlicesDataset", ...
    """
    if indentation is not None and (isinstance(indentation, bool) or not isinstance(indentation, int)):
        raise ArgumentError(f"show: `indentation` must be an int or None. Found: {indentation!r}")
    print(json.dumps(serialize(dataset), indent=indentation))


def compare(pipeline1: Dataset, pipeline2: Dataset) -> bool:
    """Whether two pipelines are the same: same nodes, ops and arguments (their JSON is equal), as
    ``mindspore.dataset.compare``.

    Examples:
        >>> import minddata as md
        >>> a = md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).batch(2)
        >>> b = md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).batch(2)
        >>> md.compare(a, b), md.compare(a, b.repeat(2))
        (True, False)
    """
    return serialize(pipeline1) == serialize(pipeline2)


def op_to_dict(op: Any) -> dict[str, Any]:
    """One op (or a Python callable, by name only) as it appears in a map's ``operations``.

    Examples:
        >>> from minddata import vision
        >>> op_to_dict(vision.Resize(8))["tensor_op_params"]
        {'size': 8, 'interpolation': {'__enum__': 'Inter', 'module': 'minddata.vision', 'name': 'BILINEAR'}}
    """
    return _Writer().op(op)


def op_from_dict(entry: dict[str, Any]) -> Op:
    """The op :func:`op_to_dict` wrote.

    Examples:
        >>> from minddata import vision
        >>> op_from_dict(op_to_dict(vision.Resize(8))) == vision.Resize(8)
        True
    """
    return _Reader().op(entry, "op")


# --------------------------------------------------------------------------------------- writing


@functools.cache
def _signature(cls: type) -> inspect.Signature | None:
    try:
        return inspect.signature(cls)
    except (TypeError, ValueError):
        return None


def _in_minddata(module: str) -> bool:
    return module == "minddata" or module.startswith("minddata.")


@functools.cache
def _public_module(cls: type) -> str | None:
    """The shortest public module of the ``minddata`` package that exports ``cls`` under its name
    (``minddata.vision`` for ``minddata.vision._ops.Resize``), or None for a class outside it."""
    module = getattr(cls, "__module__", "") or ""
    if not _in_minddata(module):
        return None
    parts = module.split(".")
    for end in range(1, len(parts) + 1):
        if parts[end - 1].startswith("_"):
            break
        candidate = ".".join(parts[:end])
        try:
            exported = getattr(importlib.import_module(candidate), cls.__name__, None)
        except Exception:  # noqa: BLE001  (a lazy module's missing-name error is just "not here")
            exported = None
        if exported is cls:
            return candidate
    return module


def _python_name(obj: Any) -> tuple[str, str]:
    """(name, module) of Python code or an object, for the by-name record of what JSON can't hold."""
    target = obj if (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj)) else type(obj)
    if inspect.ismethod(obj):
        target = obj.__func__
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or type(obj).__name__
    return name, getattr(target, "__module__", None) or ""


def _python_object(obj: Any) -> dict[str, Any]:
    name, module = _python_name(obj)
    return {"__python_object__": name, "python_module": module}


def _holds_python_object(value: Any) -> bool:
    if isinstance(value, dict):
        if "__python_object__" in value or value.get("is_python_front_end_op"):
            return True
        return any(_holds_python_object(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_python_object(v) for v in value)
    return False


def _is_path_argument(name: str) -> bool:
    return name == "dataset_files" or name.endswith(_PATH_SUFFIXES)


class _Writer:
    """Graph nodes, ops, samplers and argument values to JSON types."""

    # -- nodes -----------------------------------------------------------------------------------

    def node(self, node: ir.Node) -> dict[str, Any]:
        call = getattr(node, _CALL_TAG, None)
        if call is not None:
            return self.source(node, call)
        if isinstance(node, ir.CallbackNode):
            return self.callbacks(node)
        if isinstance(node, CacheNode):  # a cached map: MindSpore writes the cache as the map's field
            out = self.node(node.child)
            out["cache"] = {"session_id": node.session_id, "size": node.size_mb, "spilling": node.spilling}
            return out
        writer = _FLOW_WRITERS.get(type(node))
        if writer is None:
            what = "a source not made by a dataset class" if not node.children else f"a {node.name} node"
            return {
                "op_type": node.name,
                "unserializable": _UNSERIALIZABLE.get(
                    type(node), f"minddata has no JSON form for {what} ({node.label})."
                ),
                "num_parallel_workers": getattr(node, "num_workers", 1),
                "children": [self.node(child) for child in node.children],
            }
        out: dict[str, Any] = {"op_type": node.name}
        out.update(writer(self, node))
        out["num_parallel_workers"] = self.value(getattr(node, "num_workers", 1))
        out["children"] = [self.node(child) for child in node.children]
        return out

    def source(self, node: ir.Node, call: _DatasetCall) -> dict[str, Any]:
        module = _public_module(call.cls)
        out: dict[str, Any] = {"op_type": call.cls.__name__}
        if module is None:
            name, module_name = call.cls.__qualname__, call.cls.__module__
            out["unserializable"] = (
                f"the dataset class {name} (module {module_name}) is defined outside minddata; only "
                "minddata's own classes are rebuilt from JSON. Build this source in Python."
            )
            out["children"] = []
            return out
        out["module"] = module
        arguments = self.arguments(call.cls, call.args, call.kwargs, paths=True)
        if arguments is None:
            out["unserializable"] = f"{call.cls.__name__}'s constructor arguments don't fit its signature."
            arguments = {}
        out.update(arguments)
        sampler = getattr(node, "sampler", None)
        if sampler is not None and sampler is not call.sampler:
            out["use_sampler"] = self.value(sampler)
        out.setdefault("num_parallel_workers", None)
        out["children"] = []
        return out

    def callbacks(self, node: ir.CallbackNode) -> dict[str, Any]:
        # map(callbacks=...) builds Callbacks[end] -> Map -> Callbacks[begin]: written as one Map.
        inner = node.children[0]
        below = inner.children[0] if isinstance(inner, ir.MapNode) else None
        if node.where == "end" and isinstance(below, ir.CallbackNode) and below.runner is node.runner:
            out = self.node(
                ir.MapNode(
                    below.children[0],
                    inner.operations,
                    inner.input_columns,
                    inner.output_columns,
                    inner.num_workers,
                    inner.python_multiprocessing,
                )
            )
            children = out.pop("children")
            out["callbacks"] = self.value(list(node.runner.callbacks))
            out["children"] = children
            return out
        return {
            "op_type": node.name,
            "unserializable": "map callbacks outside their map.",
            "num_parallel_workers": 1,
            "children": [self.node(child) for child in node.children],
        }

    # -- ops and samplers --------------------------------------------------------------------------

    def op(self, op: Any) -> dict[str, Any]:
        module = _public_module(type(op)) if isinstance(op, Op) else None
        arguments = self.arguments(type(op), *init_arguments(op)) if module and init_arguments(op) else None
        if module and arguments is None:
            arguments = self.attribute_arguments(op)
        if module is None or arguments is None:
            name, python_module = _python_name(op)
            return {"tensor_op_name": name, "python_module": python_module, "is_python_front_end_op": True}
        out: dict[str, Any] = {
            "tensor_op_name": type(op).__name__,
            "tensor_op_module": module,
            "tensor_op_params": arguments,
        }
        if "_device" in vars(op):
            out["device_target"] = op._device
        out["is_python_front_end_op"] = False
        return out

    def sampler(self, sampler: Any) -> dict[str, Any]:
        cls = type(sampler)
        module = _public_module(cls)
        call = init_arguments(sampler)
        arguments = self.arguments(cls, *call) if module and call is not None else None
        if module is None or arguments is None:
            return {"sampler_name": cls.__qualname__, "python_module": cls.__module__}
        out: dict[str, Any] = {"sampler_name": cls.__name__, "sampler_module": module}
        out.update(arguments)
        child = getattr(sampler, "child_sampler", None)
        out["child_sampler"] = [] if child is None else [self.sampler(child)]
        return out

    def arguments(
        self, cls: type, args: tuple[Any, ...], kwargs: dict[str, Any], *, paths: bool = False
    ) -> dict[str, Any] | None:
        """The constructor call by parameter name, defaults included (a default JSON can't hold is
        left out: reading the file uses it again)."""
        sig = _signature(cls)
        if sig is None:
            return None
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return None
        out: dict[str, Any] = {}
        for name, param in sig.parameters.items():
            if name in bound.arguments:
                value = bound.arguments[name]
                if paths and _is_path_argument(name):
                    value = _absolute(value)
                if param.kind is inspect.Parameter.VAR_POSITIONAL:
                    out[name] = [self.value(v) for v in value]
                elif param.kind is inspect.Parameter.VAR_KEYWORD:
                    out[name] = {str(k): self.value(v) for k, v in value.items()}
                else:
                    out[name] = self.value(value)
            elif param.default is not inspect.Parameter.empty:
                default = self.value(param.default)
                if not _holds_python_object(default):
                    out[name] = default
        return out

    def attribute_arguments(self, obj: Any) -> dict[str, Any] | None:
        """For a class that doesn't record its constructor call (a dataclass): each parameter read
        from the attribute of its name (or ``_name``)."""
        sig = _signature(type(obj))
        state = getattr(obj, "__dict__", {})
        if sig is None:
            return None
        out: dict[str, Any] = {}
        for name, param in sig.parameters.items():
            if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                return None
            key = name if name in state else f"_{name}"
            if key in state:
                out[name] = self.value(state[key])
            elif param.default is inspect.Parameter.empty:
                return None
        return out

    # -- values ----------------------------------------------------------------------------------

    def value(self, x: Any) -> Any:  # noqa: C901, PLR0911, PLR0912  (one branch per JSON tag)
        if x is None or type(x) in (bool, str):
            return x
        if isinstance(x, enum.Enum):
            cls = type(x)
            module = _public_module(cls)
            if module is None:
                return _python_object(x)
            return {"__enum__": cls.__name__, "module": module, "name": x.name}
        if is_autotune(x):
            return {"__autotune__": True}
        if isinstance(x, np.generic):
            return {"__numpy__": x.dtype.name, "value": self.value(x.item())}
        if type(x) in (int, float):
            return x
        if isinstance(x, (bool, int, float, str)):  # a subclass of a JSON type: write the plain value
            return self.value(type(x).__mro__[-2](x))
        if isinstance(x, list):
            return [self.value(v) for v in x]
        if isinstance(x, tuple):
            return {"__tuple__": [self.value(v) for v in x]}
        if isinstance(x, dict):
            if all(type(k) is str for k in x) and not any(k in _TAGS for k in x):
                return {k: self.value(v) for k, v in x.items()}
            return {"__dict__": [[self.value(k), self.value(v)] for k, v in x.items()]}
        if isinstance(x, np.ndarray):
            return self.array(x)
        if isinstance(x, (bytes, bytearray)):
            return {"__bytes__": base64.b64encode(bytes(x)).decode("ascii")}
        if isinstance(x, complex):
            return {"__complex__": [x.real, x.imag]}
        if isinstance(x, slice):
            return {"__slice__": [self.value(x.start), self.value(x.stop), self.value(x.step)]}
        if x is Ellipsis:
            return {"__ellipsis__": True}
        if isinstance(x, np.dtype):
            return {"__dtype__": x.name if x.kind in "biufc" and x.isnative else x.str}
        if isinstance(x, type):
            if issubclass(x, np.generic):
                return {"__numpy_type__": x.__name__}
            if _BUILTIN_TYPES.get(x.__name__) is x:
                return {"__builtin_type__": x.__name__}
            return _python_object(x)
        if isinstance(x, os.PathLike):
            return os.fspath(x)
        if isinstance(x, Op) or (callable(x) and not _is_recorded_minddata_object(x)):
            return self.op(x) if isinstance(x, Op) else _python_object(x)
        from minddata.samplers import Sampler

        if isinstance(x, Sampler):
            return self.sampler(x)
        if isinstance(x, Dataset):
            return {"__dataset__": self.node(x._node)}
        from minddata.dataset.schema import Schema

        if isinstance(x, Schema):
            return {"__schema__": json.loads(x.to_json())}
        if _is_recorded_minddata_object(x):
            cls = type(x)
            arguments = self.arguments(cls, *init_arguments(x))  # type: ignore[misc]  # a recorded object has its call (checked above)
            if arguments is not None:
                return {"__object__": cls.__name__, "module": _public_module(cls), "arguments": arguments}
        return _python_object(x)

    def array(self, x: np.ndarray) -> dict[str, Any]:
        kind = x.dtype.kind
        if kind not in "biufcUSO":
            return _python_object(x)
        dtype = x.dtype.name if kind in "biufc" else x.dtype.str
        return {"__ndarray__": self.value(x.tolist()), "dtype": dtype, "shape": list(x.shape)}


def _is_recorded_minddata_object(x: Any) -> bool:
    return init_arguments(x) is not None and _public_module(type(x)) is not None


def _absolute(value: Any) -> Any:
    """A path argument as written: local paths absolute, URLs as URLs, as messages show them (an
    http(s) URL's query, which may hold a presigned URL's signature and token, and a password, hidden)."""
    from minddata.dataset._storage import is_remote, shown_url

    if isinstance(value, (str, os.PathLike)):
        return shown_url(str(value)) if is_remote(value) else os.path.abspath(os.fspath(value))
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, os.PathLike)) for v in value):
        return type(value)(shown_url(str(v)) if is_remote(v) else os.path.abspath(os.fspath(v)) for v in value)
    return value


def _columns(node: Any, name: str) -> Any:
    value = getattr(node, name)
    return None if value is None else list(value)


_UNSERIALIZABLE = {
    ir.FlatMapNode: "flat_map's `func` is Python code, which JSON can't hold (as in MindSpore). Fix: deserialize "
    "the pipeline below it and call .flat_map(func) again in Python.",
}

_FLOW_WRITERS: dict[type, Callable[[_Writer, Any], dict[str, Any]]] = {
    ir.MapNode: lambda w, n: {
        "operations": [w.op(op) for op in n.operations],
        "input_columns": _columns(n, "input_columns"),
        "output_columns": _columns(n, "output_columns"),
        "python_multiprocessing": n.python_multiprocessing,
    },
    ir.BatchNode: lambda w, n: {
        "batch_size": w.value(n.batch_size),
        "drop_remainder": n.drop_remainder,
        "per_batch_map": w.value(n.per_batch_map),
        "input_columns": _columns(n, "input_columns"),
        "output_columns": _columns(n, "output_columns"),
        "pad_info": w.value(n.pad_info),
    },
    ir.BucketBatchNode: lambda w, n: {
        "column_names": list(n.column_names),
        "bucket_boundaries": list(n.bucket_boundaries),
        "bucket_batch_sizes": list(n.bucket_batch_sizes),
        "element_length_function": w.value(n.element_length_function),
        "pad_info": w.value(n.pad_info),
        "pad_to_bucket_boundary": n.pad_to_bucket_boundary,
        "drop_remainder": n.drop_remainder,
    },
    ir.ShuffleNode: lambda w, n: {"buffer_size": n.buffer_size},
    ir.RepeatNode: lambda w, n: {"count": n.count},
    ir.TakeNode: lambda w, n: {"count": n.count},
    ir.SkipNode: lambda w, n: {"count": n.count},
    ir.ZipNode: lambda w, n: {},
    ir.ConcatNode: lambda w, n: {},
    ir.ProjectNode: lambda w, n: {"columns": list(n.keep)},
    ir.RenameNode: lambda w, n: {
        "input_columns": list(n.input_columns),
        "output_columns": list(n.output_columns),
    },
    ir.FilterNode: lambda w, n: {
        "predicate": w.value(n.predicate),
        "input_columns": _columns(n, "input_columns"),
    },
    ir.ShardRowsNode: lambda w, n: {"num_shards": n.num_shards, "shard_id": n.shard_id},
    ir.SyncWaitNode: lambda w, n: {
        "condition_name": n.condition_name,
        "num_batch": n.gate.num_batch,
        "callback": w.value(n.gate.callback),
    },
}


# --------------------------------------------------------------------------------------- reading


class _Reader:
    """JSON types back to datasets, ops, samplers and argument values."""

    def node(self, entry: Any, path: str) -> Dataset:
        if not isinstance(entry, dict) or not isinstance(entry.get("op_type"), str):
            raise ArgumentError(
                f"deserialize: the node at {path} needs an 'op_type' string. Found: {entry!r}"
            )
        op_type = entry["op_type"]
        where = f"{op_type} (at {path})"
        if "unserializable" in entry:
            raise GraphError(f"deserialize: {where}: {entry['unserializable']}")
        children_entries = entry.get("children", [])
        if not isinstance(children_entries, list):
            raise ArgumentError(
                f"deserialize: {where}: 'children' must be a list. Found: {children_entries!r}"
            )
        children = [self.node(child, f"{path} > children[{i}]") for i, child in enumerate(children_entries)]
        if "module" in entry:
            return self.source(entry, children, where)
        reader = _FLOW_READERS.get(op_type)
        if reader is None:
            raise ArgumentError(
                f"deserialize: {where}: unknown op_type {op_type!r}. A source needs its 'module'; flow "
                f"operations are {sorted(_FLOW_READERS)}."
            )
        expected = 2 if op_type in ("Zip", "Concat") else 1
        if len(children) < expected or (expected == 1 and len(children) != 1):
            raise ArgumentError(
                f"deserialize: {where} needs {'at least 2' if expected == 2 else 1} child node(s). Found {len(children)}."
            )
        params = {
            k: self.value(v, f"{where} argument `{k}`") for k, v in entry.items() if k not in _NODE_KEYS
        }
        params["num_parallel_workers"] = self.value(entry.get("num_parallel_workers"), where)
        return reader(children, params)

    def source(self, entry: dict[str, Any], children: list[Dataset], where: str) -> Dataset:
        if children:
            raise ArgumentError(
                f"deserialize: {where} is a source, so it takes no children. Found {len(children)}."
            )
        cls = _resolve(entry["module"], entry["op_type"], Dataset, where)
        params = {
            k: self.value(v, f"{where} argument `{k}`")
            for k, v in entry.items()
            if k not in _NODE_KEYS or (k == "num_parallel_workers" and _accepts(cls, k))
        }
        dataset = _call(cls, params, where)
        if "use_sampler" in entry:
            dataset.use_sampler(self.value(entry["use_sampler"], f"{where} use_sampler"))
        return dataset

    def op(self, entry: dict[str, Any], where: str) -> Op:
        name = entry.get("tensor_op_name")
        if entry.get("is_python_front_end_op") or "tensor_op_module" not in entry:
            module = entry.get("python_module") or "?"
            raise GraphError(
                f"deserialize: {where} is the Python callable {name!r} (module {module}). JSON keeps only its "
                "name, so it can't be rebuilt (as in MindSpore). Fix: use minddata.vision / minddata.transforms "
                "ops in the pipeline instead, or rebuild this step in Python after deserializing."
            )
        cls = _resolve(entry["tensor_op_module"], str(name), Op, where)
        params = entry.get("tensor_op_params", {})
        if not isinstance(params, dict):
            raise ArgumentError(
                f"deserialize: {where}: 'tensor_op_params' must be an object. Found: {params!r}"
            )
        op = _call(cls, {k: self.value(v, f"{where} argument `{k}`") for k, v in params.items()}, where)
        if "device_target" in entry:
            op = op.device(entry["device_target"])
        return op

    def sampler(self, entry: dict[str, Any], where: str) -> Any:
        from minddata.samplers import Sampler

        name = entry.get("sampler_name")
        if "sampler_module" not in entry:
            raise GraphError(
                f"deserialize: {where} is the sampler class {name!r} of module {entry.get('python_module') or '?'}, "
                "defined outside minddata. JSON keeps only its name, so it can't be rebuilt. Fix: use a minddata "
                "sampler, or set this sampler in Python after deserializing (dataset.use_sampler(...))."
            )
        cls = _resolve(entry["sampler_module"], str(name), Sampler, where)
        params = {
            k: self.value(v, f"{where} argument `{k}`") for k, v in entry.items() if k not in _SAMPLER_KEYS
        }
        sampler = _call(cls, params, where)
        for child in entry.get("child_sampler") or []:
            sampler.add_child(self.sampler(child, f"{where} child_sampler"))
        return sampler

    def value(self, x: Any, where: str) -> Any:  # noqa: C901, PLR0911, PLR0912  (one branch per JSON tag)
        if isinstance(x, list):
            return [self.value(v, f"{where}[{i}]") for i, v in enumerate(x)]
        if not isinstance(x, dict):
            return x
        if "__python_object__" in x:
            module = x.get("python_module") or "?"
            raise GraphError(
                f"deserialize: {where} is the Python object {x['__python_object__']!r} (module {module}). JSON "
                "keeps only its name, so it can't be rebuilt (as in MindSpore). Fix: build this part of the "
                "pipeline in Python, or replace the Python code with minddata's own ops and datasets."
            )
        if "tensor_op_name" in x:
            return self.op(x, where)
        if "sampler_name" in x:
            return self.sampler(x, where)
        if "__tuple__" in x:
            return tuple(self.value(v, where) for v in x["__tuple__"])
        if "__ndarray__" in x:
            return _array(self.value(x["__ndarray__"], where), x["dtype"], x["shape"])
        if "__numpy__" in x:
            return np.dtype(x["__numpy__"]).type(self.value(x["value"], where))
        if "__bytes__" in x:
            return base64.b64decode(x["__bytes__"])
        if "__complex__" in x:
            return complex(*x["__complex__"])
        if "__slice__" in x:
            return slice(*(self.value(v, where) for v in x["__slice__"]))
        if "__ellipsis__" in x:
            return Ellipsis
        if "__dtype__" in x:
            return np.dtype(x["__dtype__"])
        if "__numpy_type__" in x:
            kind = getattr(np, x["__numpy_type__"], None)
            if not (isinstance(kind, type) and issubclass(kind, np.generic)):
                raise ArgumentError(
                    f"deserialize: {where}: {x['__numpy_type__']!r} is not a NumPy scalar type."
                )
            return kind
        if "__builtin_type__" in x:
            if x["__builtin_type__"] not in _BUILTIN_TYPES:
                raise ArgumentError(f"deserialize: {where}: {x['__builtin_type__']!r} is not a builtin type.")
            return _BUILTIN_TYPES[x["__builtin_type__"]]
        if "__enum__" in x:
            cls = _resolve(x["module"], x["__enum__"], enum.Enum, where)
            try:
                return cls[x["name"]]
            except KeyError:
                raise ArgumentError(
                    f"deserialize: {where}: {cls.__name__} has no member {x['name']!r}."
                ) from None
        if "__autotune__" in x:
            return AUTOTUNE
        if "__dict__" in x:
            return {self.value(k, where): self.value(v, where) for k, v in x["__dict__"]}
        if "__dataset__" in x:
            return self.node(x["__dataset__"], where)
        if "__schema__" in x:
            from minddata.dataset.schema import Schema

            schema = Schema()
            schema.from_json(x["__schema__"])
            return schema
        if "__object__" in x:
            cls = _resolve(x["module"], x["__object__"], object, where)
            return _call(cls, {k: self.value(v, where) for k, v in x["arguments"].items()}, where)
        return {k: self.value(v, f"{where}[{k!r}]") for k, v in x.items()}


def _array(values: Any, dtype: str, shape: list[int]) -> np.ndarray:
    kind = np.dtype(dtype)
    if kind.kind != "O":
        return np.array(values, dtype=kind).reshape(shape)
    # Object arrays are filled element by element: np.array would read nested lists as dimensions.
    flat = list(_flatten(values, len(shape))) if shape else [values]
    out = np.empty(len(flat), dtype=object)
    for i, item in enumerate(flat):
        out[i] = item
    return out.reshape(shape)


def _flatten(values: Any, depth: int) -> Any:
    if depth <= 1:
        yield from values
        return
    for v in values:
        yield from _flatten(v, depth - 1)


def _resolve(module: Any, name: str, base: type, where: str) -> Any:
    """The class ``module.name``, only from the minddata package and only a subclass of ``base``."""
    if not isinstance(module, str) or not _in_minddata(module):
        raise GraphError(
            f"deserialize: {where} names {name!r} of module {module!r}; only classes of the minddata package "
            "are rebuilt from JSON."
        )
    try:
        found = getattr(importlib.import_module(module), name, None)
    except Exception:  # noqa: BLE001  (missing module or a lazy module's missing-name error)
        found = None
    if not (isinstance(found, type) and issubclass(found, base)):
        kind = {Op: "an op", Dataset: "a dataset class", enum.Enum: "an enum"}.get(base, f"a {base.__name__}")
        raise ArgumentError(f"deserialize: {where}: {module}.{name} is not {kind} of this minddata version.")
    return found


def _accepts(cls: type, name: str) -> bool:
    sig = _signature(cls)
    return sig is not None and (
        name in sig.parameters
        or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    )


def _call(cls: type, params: dict[str, Any], where: str) -> Any:
    """``cls(...)`` with ``params`` by parameter name, positional where the signature needs it
    (parameters before and including ``*args``)."""
    sig = _signature(cls)
    if sig is None:
        raise ArgumentError(f"deserialize: {where}: {cls.__name__}'s signature can't be read.")
    kinds = inspect.Parameter
    has_var_positional = any(p.kind is kinds.VAR_POSITIONAL for p in sig.parameters.values())
    known = set(sig.parameters)
    unknown = [k for k in params if k not in known]
    if unknown and not any(p.kind is kinds.VAR_KEYWORD for p in sig.parameters.values()):
        raise ArgumentError(f"deserialize: {where}: {cls.__name__} has no argument(s) {unknown}.")
    args: list[Any] = []
    kwargs: dict[str, Any] = {k: params[k] for k in unknown}
    positional = True
    for name, param in sig.parameters.items():
        present = name in params
        if param.kind is kinds.VAR_POSITIONAL:
            args.extend(params.get(name, []))
            positional = False
        elif param.kind is kinds.VAR_KEYWORD:
            kwargs.update(params.get(name, {}))
        elif param.kind is kinds.POSITIONAL_ONLY or (
            positional and has_var_positional and param.kind is kinds.POSITIONAL_OR_KEYWORD
        ):
            if present:
                args.append(params[name])
            elif param.default is not kinds.empty:
                args.append(param.default)
            else:
                raise ArgumentError(f"deserialize: {where}: {cls.__name__} needs argument `{name}`.")
        elif present:
            kwargs[name] = params[name]
    return cls(*args, **kwargs)


def _map(children: list[Dataset], p: dict[str, Any]) -> Dataset:
    extra: dict[str, Any] = {"callbacks": p["callbacks"]} if p.get("callbacks") else {}
    if p.get("cache"):
        from minddata.dataset.cache import DatasetCache

        extra["cache"] = DatasetCache(**p["cache"])
    return children[0].map(
        p["operations"],
        p.get("input_columns"),
        p.get("output_columns"),
        p.get("num_parallel_workers"),
        p.get("python_multiprocessing", False),
        **extra,
    )


def _batch(children: list[Dataset], p: dict[str, Any]) -> Dataset:
    if p.get("pad_info") is not None:
        return children[0].padded_batch(
            p["batch_size"], p.get("drop_remainder", False), p.get("num_parallel_workers"), p["pad_info"]
        )
    extra = {}
    if p.get("per_batch_map") is not None:
        extra = {k: p.get(k) for k in ("per_batch_map", "input_columns", "output_columns")}
    return children[0].batch(
        p["batch_size"], p.get("drop_remainder", False), p.get("num_parallel_workers"), **extra
    )


def _use_sampler(children: list[Dataset], p: dict[str, Any]) -> Dataset:
    from minddata.samplers import DistributedSampler

    children[0].use_sampler(DistributedSampler(p["num_shards"], p["shard_id"], shuffle=False))
    return children[0]


_FLOW_READERS: dict[str, Callable[[list[Dataset], dict[str, Any]], Dataset]] = {
    "Map": _map,
    "Batch": _batch,
    "BucketBatch": lambda c, p: c[0].bucket_batch_by_length(
        p["column_names"],
        p["bucket_boundaries"],
        p["bucket_batch_sizes"],
        p.get("element_length_function"),
        p.get("pad_info"),
        p.get("pad_to_bucket_boundary", False),
        p.get("drop_remainder", False),
    ),
    "Shuffle": lambda c, p: c[0].shuffle(p["buffer_size"]),
    "Repeat": lambda c, p: c[0].repeat(p["count"]),
    "Take": lambda c, p: c[0].take(p["count"]),
    "Skip": lambda c, p: c[0].skip(p["count"]),
    "Zip": lambda c, p: zip(c),
    "Concat": lambda c, p: concat(c),
    "Project": lambda c, p: c[0].project(p["columns"]),
    "Rename": lambda c, p: c[0].rename(p["input_columns"], p["output_columns"]),
    "Filter": lambda c, p: c[0].filter(p["predicate"], p.get("input_columns"), p.get("num_parallel_workers")),
    "UseSampler": _use_sampler,
    "SyncWait": lambda c, p: c[0].sync_wait(p["condition_name"], p.get("num_batch", 1), p.get("callback")),
}
