"""``Dataset.to_torch()``: a pipeline as a ``torch.utils.data.IterableDataset`` for plain PyTorch loops.

Imported only by ``to_torch`` (it needs torch). Each process of a ``torch.distributed`` job and each
``DataLoader`` worker reads its own shard: shard ``rank * workers + worker`` of ``world_size *
workers``, so together they read every row of the epoch once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from minddata.dataset.iterators import TorchIterator, import_torch
from minddata.errors import ArgumentError

torch = import_torch("Dataset.to_torch")


def distributed_rank() -> tuple[int, int]:
    """(rank, world size) of this process under an initialised ``torch.distributed``, else (0, 1)."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class TorchIterableDataset(torch.utils.data.IterableDataset):
    """See :meth:`minddata.Dataset.to_torch`."""

    def __init__(self, dataset: Any, *, columns: Sequence[str] | None, as_dict: bool, pin_memory: bool,
                 int64_columns: Sequence[str], shard: bool) -> None:
        super().__init__()
        if columns is not None:
            dataset = dataset.project(list(columns))
        self.dataset = dataset
        self.columns = dataset.get_col_names()
        self.as_dict = as_dict
        self.pin_memory = pin_memory
        self.int64_columns = tuple(int64_columns)
        self.shard = shard
        self.epoch = 0

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        # DataLoader workers started by spawn/forkserver receive the dataset pickled; pipelines hold
        # lambdas and local functions, which only cloudpickle carries.
        import cloudpickle

        return _restore, (cloudpickle.dumps(self.__dict__),)

    def _shards(self) -> tuple[int, int]:
        rank, world = distributed_rank()
        info = torch.utils.data.get_worker_info()
        workers, worker = (info.num_workers, info.id) if info is not None else (1, 0)
        return world * workers, rank * workers + worker

    def _my_dataset(self) -> Any:
        num_shards, shard_id = self._shards()
        if not self.shard or num_shards == 1:
            return self.dataset
        if self.dataset._is_sharded():
            rank, world = distributed_rank()
            if num_shards == world:
                return self.dataset  # the script sharded it by rank itself
            raise ArgumentError(
                "Dataset.to_torch: this dataset is already sharded, so it cannot also be split across the "
                f"DataLoader's {num_shards // world} workers; use num_workers=0 (minddata's own workers "
                "parallelise the pipeline) or leave sharding to to_torch()"
            )
        return self.dataset._shard(num_shards, shard_id, "Dataset.to_torch")

    def __len__(self) -> int:
        num_shards, _ = self._shards()
        dataset = self._my_dataset() if num_shards > 1 else self.dataset
        return len(dataset)

    def __iter__(self) -> Iterator[Any]:
        iterator = TorchIterator(self._my_dataset(), num_epochs=1, int64_columns=self.int64_columns)
        pin = self.pin_memory and torch.cuda.is_available()
        try:
            for row in iterator:
                if pin:
                    row = [t.pin_memory() if isinstance(t, torch.Tensor) and not t.is_cuda else t for t in row]
                yield dict(zip(self.columns, row)) if self.as_dict else tuple(row)
        finally:
            iterator.close()


def _restore(state: bytes) -> TorchIterableDataset:
    import cloudpickle

    restored = TorchIterableDataset.__new__(TorchIterableDataset)
    restored.__dict__.update(cloudpickle.loads(state))
    return restored
