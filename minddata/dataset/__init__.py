"""Dataset nodes (sources and operations) and their iterators."""

from minddata.dataset._files import Shuffle
from minddata.dataset.arrow_sources import MindDataset, ParquetDataset
from minddata.dataset.base import Dataset, concat, zip
from minddata.dataset.iterators import DictIterator, TupleIterator
from minddata.dataset.schema import Schema
from minddata.dataset.sources import GeneratorDataset, ImageFolderDataset, NumpySlicesDataset, OnlineDataset
from minddata.dataset.standard import (
    Cifar10Dataset,
    Cifar100Dataset,
    CocoDataset,
    FakeImageDataset,
    MnistDataset,
    PaddedDataset,
    RandomDataset,
)
from minddata.dataset.text_sources import CSVDataset, TextFileDataset, TFRecordDataset
from minddata.engine.batchfn import BatchInfo

__all__ = [
    "BatchInfo",
    "CSVDataset",
    "Cifar100Dataset",
    "Cifar10Dataset",
    "CocoDataset",
    "Dataset",
    "DictIterator",
    "FakeImageDataset",
    "GeneratorDataset",
    "ImageFolderDataset",
    "MindDataset",
    "MnistDataset",
    "NumpySlicesDataset",
    "OnlineDataset",
    "PaddedDataset",
    "ParquetDataset",
    "RandomDataset",
    "Schema",
    "Shuffle",
    "TFRecordDataset",
    "TextFileDataset",
    "TupleIterator",
    "concat",
    "zip",
]
