"""``Dataset.send`` and ``Dataset.recv``: a row (or given arrays) from one rank to others, as
MindSpore's experimental methods of those names, over ``torch.distributed`` where MindSpore uses
``mindspore.mint.distributed``.

Each message is a fixed-size int64 header (tensor count, then each tensor's ndim, shape and dtype code),
then each tensor's bytes, point to point. A rank that sends or receives its own rows reads them from one
iterator per dataset, kept across calls, over unlimited epochs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata._checks import is_int
from minddata.errors import ArgumentError

__all__ = ["HEADER_LENGTH", "recv", "send"]

# int64 values in a message's header (MindSpore's MAX_METADATA_LENGTH).
HEADER_LENGTH = 2048
# dtype code -> dtype; the codes are this module's own (both ends run minddata).
_DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                  np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128)]
_CODES = {dtype: code for code, dtype in enumerate(_DTYPES)}
_ITERATOR = "_rank_comm_iterator"


def _distributed(where: str) -> Any:
    try:
        import torch.distributed as dist
    except ImportError:
        raise ArgumentError(f"{where} sends rows over torch.distributed: pip install 'minddata[torch]'") from None
    if not dist.is_available() or not dist.is_initialized():
        raise ArgumentError(f"{where}: torch.distributed is not initialized; call torch.distributed."
                            "init_process_group(...) first (backend 'gloo' for CPU arrays), as MindSpore's needs "
                            "mindspore.mint.distributed.init_process_group()")
    return dist


def _ranks(where: str, name: str, value: Any) -> list[int]:
    ranks = value if isinstance(value, list) else [value]
    if not ranks or not all(is_int(r) and r >= 0 for r in ranks):
        raise ArgumentError(f"{where}: `{name}` must be a rank (an int of 0 or more) or a non-empty list of ranks. "
                            f"Found: {value!r}")
    return [int(r) for r in ranks]


def _group(where: str, group: Any) -> Any:
    if isinstance(group, str):
        raise ArgumentError(f"{where}: `group` must be None (the default group) or a torch.distributed process "
                            f"group: MindSpore's groups are named, torch's are objects. Found: {group!r}")
    return group


def _own_row(dataset: Any, where: str) -> list[Any]:
    """The next row of the dataset's own iterator, moving on to the next epoch at the end of one."""
    iterator = dataset.__dict__.get(_ITERATOR)
    if iterator is None:
        iterator = dataset.create_tuple_iterator(num_epochs=-1)
        dataset.__dict__[_ITERATOR] = iterator
    for _ in range(2):
        try:
            return list(next(iterator))
        except StopIteration:
            continue  # the next epoch
    raise ArgumentError(f"{where}: the dataset has no rows to send")


def _arrays(where: str, values: list[Any]) -> list[np.ndarray]:
    arrays = []
    for index, value in enumerate(values):
        if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
            value = value.detach().cpu().numpy()
        array = np.asarray(value)
        if array.dtype not in _CODES:
            raise ArgumentError(f"{where}: item {index} has dtype {array.dtype}, which can't be sent (numbers and "
                                "bools only, as MindSpore): drop string columns with dataset.project(...)")
        # (not np.ascontiguousarray, which makes a 0-d array 1-d)
        arrays.append(array if array.flags.c_contiguous else array.copy(order="C"))
    return arrays


def _header(where: str, arrays: list[np.ndarray]) -> np.ndarray:
    values = [len(arrays)]
    for array in arrays:
        values += [array.ndim, *array.shape, _CODES[array.dtype]]
    if len(values) > HEADER_LENGTH:
        raise ArgumentError(f"{where}: the message's header needs {len(values)} values, over the {HEADER_LENGTH} "
                            "a message has: send fewer or lower-dimensional arrays")
    return np.array(values + [0] * (HEADER_LENGTH - len(values)), dtype=np.int64)


def send(dataset: Any, tensor: Any = None, dst: int | list[int] = 0, group: Any = None) -> None:
    """Send ``tensor`` (an array or a list of arrays) or, when None, the dataset's next row to each of
    ``dst``; see :meth:`minddata.Dataset.send`."""
    where = "Dataset.send"
    targets = _ranks(where, "dst", dst)
    group = _group(where, group)
    dist = _distributed(where)
    me = dist.get_rank()
    if me in targets:
        raise ArgumentError(f"{where}: `dst` must not hold this rank ({me}): a rank reads its own rows with recv. "
                            f"Found: {dst!r}")
    if tensor is None:
        values = _own_row(dataset, where)
    else:
        values = tensor if isinstance(tensor, (list, tuple)) else [tensor]
    arrays = _arrays(where, values)
    import torch

    header = torch.from_numpy(_header(where, arrays))
    payloads = [torch.from_numpy(a.reshape(-1).view(np.uint8)) for a in arrays if a.nbytes]
    for rank in targets:
        dist.send(header, rank, group=group)
        for payload in payloads:
            dist.send(payload, rank, group=group)


def _receive(dist: Any, rank: int, group: Any) -> list[np.ndarray]:
    import torch

    from minddata.common.tensor import Tensor

    header = torch.zeros(HEADER_LENGTH, dtype=torch.int64)
    dist.recv(header, rank, group=group)
    values = header.tolist()
    arrays, at = [], 1
    for _ in range(values[0]):
        ndim = values[at]
        shape = tuple(values[at + 1:at + 1 + ndim])
        dtype = _DTYPES[values[at + 1 + ndim]]
        at += ndim + 2
        payload = torch.empty(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, dtype=torch.uint8)
        if payload.numel():
            dist.recv(payload, rank, group=group)
        array = payload.numpy().view(dtype).reshape(shape)
        arrays.append(array.view(Tensor))  # every sendable dtype is a number or bool
    return arrays


def _flatten_single_lists(nested: Any) -> Any:
    # MindSpore's shape of the answer: a list of one list is that list, a list of one array that array.
    if not isinstance(nested, list):
        return nested
    if len(nested) == 1 and isinstance(nested[0], list):
        return _flatten_single_lists(nested[0])
    return [_flatten_single_lists(item) for item in nested]


def recv(dataset: Any, src: int | list[int] = 0, group: Any = None) -> Any:
    """The arrays each of ``src`` sent (this rank's own next row where ``src`` names it); see
    :meth:`minddata.Dataset.recv`."""
    where = "Dataset.recv"
    sources = _ranks(where, "src", src)
    group = _group(where, group)
    dist = _distributed(where)
    me = dist.get_rank()
    received = [_own_row(dataset, where) if rank == me else _receive(dist, rank, group) for rank in sources]
    flat = _flatten_single_lists(received)
    if isinstance(flat, list) and len(flat) == 1:
        return flat[0]
    return flat
