"""Which dataset columns feed the network and which are labels.

By default (as MindSpore's ``Model``) the last column is the label and the others are the network's
inputs, in order; ``input_columns=`` / ``label_columns=`` override that. When every parameter of the
network is named by a column, columns go by name. A dataset whose columns do not fit gets a
:class:`ColumnMismatchError` naming the columns and the network's signature.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass

from minddata.errors import ArgumentError

__all__ = ["ColumnMap", "ColumnMismatchError", "Signature", "map_columns"]


class ColumnMismatchError(ArgumentError):
    """The dataset's columns do not fit the network's inputs (or there is no label column)."""


@dataclass(frozen=True)
class Signature:
    """What a network takes: parameter names in order, how many are required, whether ``*args`` is."""

    owner: str
    names: tuple[str, ...]
    required: int
    variadic: bool = False

    @classmethod
    def of_callable(cls, fn, owner: str) -> Signature:
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            return cls(owner, (), 0, True)
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return cls(
            owner=owner,
            names=tuple(p.name for p in positional),
            required=sum(p.default is p.empty for p in positional),
            variadic=any(p.kind is p.VAR_POSITIONAL for p in params),
        )

    def accepts(self, count: int) -> bool:
        return count >= self.required and (self.variadic or count <= len(self.names))

    def text(self) -> str:
        args = list(self.names) + (["*args"] if self.variadic else [])
        return f"{self.owner}({', '.join(args)})"

    def arity(self) -> str:
        if self.variadic:
            return f"{self.required} or more arguments"
        if self.required == len(self.names):
            return f"{self.required} argument{'s' if self.required != 1 else ''}"
        return f"{self.required} to {len(self.names)} arguments"


@dataclass(frozen=True)
class ColumnMap:
    """Column names that go to the network, and those that are labels (empty when not used)."""

    inputs: tuple[str, ...]
    labels: tuple[str, ...]

    def indices(self, columns: Sequence[str]) -> tuple[list[int], list[int]]:
        position = {name: i for i, name in enumerate(columns)}
        return [position[c] for c in self.inputs], [position[c] for c in self.labels]


def _names(value: str | Sequence[str] | None, what: str, columns: Sequence[str], where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = (value,) if isinstance(value, str) else tuple(value)
    missing = [n for n in names if n not in columns]
    if missing:
        raise ColumnMismatchError(
            f"{where}: `{what}` names {missing} which the dataset does not have; its columns are {list(columns)}"
        )
    return names


def map_columns(
    columns: Sequence[str],
    signature: Signature,
    *,
    input_columns: str | Sequence[str] | None = None,
    label_columns: str | Sequence[str] | None = None,
    labels: str = "required",
    where: str = "Model",
) -> ColumnMap:
    """Split ``columns`` into network inputs and labels.

    ``labels``: ``"required"`` (train/eval: at least one label column), ``"none"`` (predict: labels,
    if any, are left out; a dataset of exactly the inputs is fine).

    Examples:
        >>> from minddata.trainer.columns import Signature, map_columns
        >>> sig = Signature("Net.forward", ("x",), 1)
        >>> map_columns(["image", "label"], sig)
        ColumnMap(inputs=('image',), labels=('label',))
        >>> map_columns(["image", "label"], sig, labels="none")
        ColumnMap(inputs=('image',), labels=())
    """
    columns = list(columns)
    inputs = _names(input_columns, "input_columns", columns, where)
    label_names = _names(label_columns, "label_columns", columns, where)
    fix = "pass input_columns=[...] and label_columns=[...] to say which columns are which"

    if inputs is None and signature.required and all(n in columns for n in signature.names[: signature.required]):
        # Every required parameter is named by a column: go by name.
        by_name = tuple(n for n in signature.names if n in columns)
        # Going by name must leave exactly the labels: all other columns, or the one left over.
        if labels == "none" or label_names or len(columns) - len(by_name) == 1:
            inputs = by_name
    if inputs is None:
        if label_names is not None:
            inputs = tuple(c for c in columns if c not in label_names)
        elif labels == "none":
            if signature.accepts(len(columns)):
                inputs = tuple(columns)
            elif len(columns) > 1 and signature.accepts(len(columns) - 1):
                inputs = tuple(columns[:-1])  # the last column is the label; predict leaves it out
            else:
                raise ColumnMismatchError(
                    f"{where}: the dataset's columns {columns} do not fit {signature.text()}, which takes "
                    f"{signature.arity()} ({len(columns)} columns, or {len(columns) - 1} without the last as "
                    f"the label); {fix}"
                )
        else:
            if len(columns) < 2:
                raise ColumnMismatchError(
                    f"{where}: the dataset has columns {columns}, but training and evaluation need inputs for "
                    f"{signature.text()} and a label column (by default the last); {fix}"
                )
            inputs = tuple(columns[:-1])
            label_names = (columns[-1],)
    if label_names is None:
        label_names = tuple(c for c in columns if c not in inputs) if labels != "none" else ()
    overlap = set(inputs) & set(label_names)
    if overlap:
        raise ColumnMismatchError(f"{where}: columns {sorted(overlap)} are both inputs and labels; {fix}")
    if labels == "required" and not label_names:
        raise ColumnMismatchError(
            f"{where}: no label column: the dataset's columns {columns} all go to {signature.text()}; {fix}"
        )
    if not signature.accepts(len(inputs)):
        default = "" if input_columns is not None else " (by default the last column is the label and the others are inputs)"
        raise ColumnMismatchError(
            f"{where}: the dataset's columns {columns} do not fit {signature.text()}: inputs {list(inputs)}"
            f"{default} are {len(inputs)}, but it takes {signature.arity()}; {fix}"
        )
    return ColumnMap(tuple(inputs), tuple(label_names) if labels != "none" else ())
