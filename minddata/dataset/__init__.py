"""Dataset nodes (sources and operations) and their iterators."""

from minddata.dataset.base import Dataset, concat, zip
from minddata.dataset.iterators import DictIterator, TupleIterator
from minddata.dataset.sources import GeneratorDataset, ImageFolderDataset, NumpySlicesDataset, OnlineDataset
from minddata.engine.batchfn import BatchInfo

__all__ = [
    "BatchInfo",
    "Dataset",
    "DictIterator",
    "GeneratorDataset",
    "ImageFolderDataset",
    "NumpySlicesDataset",
    "OnlineDataset",
    "TupleIterator",
    "concat",
    "zip",
]
