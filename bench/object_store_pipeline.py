"""The train pipeline over WebDataset shards, as a pipeline file (``build(data_dir, workers,
batch_size)``) for :mod:`minddata.bench.object_store`, whose rounds load it in their own processes.

Examples:
    >>> from minddata.bench.object_store_pipeline import build
    >>> build.__name__
    'build'
"""

from __future__ import annotations

from typing import Any


def build(data_dir: str, workers: int, batch_size: int) -> Any:
    """The ``train`` pipeline over the shards ``<data_dir>shard-*.tar`` (``jpg`` and ``cls`` members),
    as :func:`minddata.bench.pipelines.build` makes it over an image folder: 2 workers per stage, no
    shuffle, the last partial batch kept."""
    import minddata as md
    from minddata.bench.pipelines import make_ops

    ds = md.WebDataset(f"{data_dir}shard-*.tar", columns_list=["jpg", "cls"], shuffle=False,
                       num_parallel_workers=workers)
    ds = ds.rename(["jpg", "cls"], ["image", "label"])
    ds = ds.map(operations=make_ops("train"), input_columns="image", num_parallel_workers=workers)
    return ds.batch(batch_size, drop_remainder=False)
