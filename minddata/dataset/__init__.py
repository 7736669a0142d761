"""Dataset nodes (sources and operations) and their iterators: ``mindspore.dataset``'s namespace.

As in MindSpore, ``config``, the samplers and the ``vision`` / ``transforms`` op modules are here too
(``import minddata.dataset as ds; ds.config.set_seed(1)``; ``from minddata.dataset import vision``).
"""

from minddata import config
from minddata._missing import module_getattr
from minddata.dataset._files import Shuffle
from minddata.dataset.arrow_sources import MindDataset, ParquetDataset
from minddata.dataset.base import Dataset, concat, zip
from minddata.dataset.callback import DSCallback, WaitedDSCallback
from minddata.dataset.corpora_csv import (
    AGNewsDataset,
    AmazonReviewDataset,
    DBpediaDataset,
    SogouNewsDataset,
    SST2Dataset,
    YahooAnswersDataset,
    YelpReviewDataset,
)
from minddata.dataset.corpora_imdb import IMDBDataset
from minddata.dataset.corpora_json import CLUEDataset, SQuADDataset
from minddata.dataset.corpora_lines import EnWik9Dataset, PennTreebankDataset, WikiTextDataset
from minddata.dataset.corpora_tagging import CoNLL2000Dataset, UDPOSDataset
from minddata.dataset.corpora_translation import IWSLT2016Dataset, IWSLT2017Dataset, Multi30kDataset
from minddata.dataset.iterators import DictIterator, TupleIterator
from minddata.dataset.schema import Schema
from minddata.dataset.serialization import compare, deserialize, serialize, show
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
from minddata.samplers import (
    DistributedSampler,
    PKSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    SubsetSampler,
    WeightedRandomSampler,
)

__all__ = [
    "AGNewsDataset",
    "AmazonReviewDataset",
    "CLUEDataset",
    "CoNLL2000Dataset",
    "DBpediaDataset",
    "EnWik9Dataset",
    "IMDBDataset",
    "IWSLT2016Dataset",
    "IWSLT2017Dataset",
    "Multi30kDataset",
    "PennTreebankDataset",
    "SQuADDataset",
    "SST2Dataset",
    "SogouNewsDataset",
    "UDPOSDataset",
    "WikiTextDataset",
    "YahooAnswersDataset",
    "YelpReviewDataset",
    "BatchInfo",
    "CSVDataset",
    "Cifar100Dataset",
    "Cifar10Dataset",
    "CocoDataset",
    "DSCallback",
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
    "WaitedDSCallback",
    "compare",
    "concat",
    "config",
    "deserialize",
    "serialize",
    "show",
    "zip",
    "DistributedSampler",
    "PKSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "SubsetSampler",
    "WeightedRandomSampler",
]

# The op modules import on first use, so `import minddata` stays light.
__getattr__ = module_getattr(
    __name__, lazy={name: f"{__name__}.{name}" for name in ("vision", "transforms")}
)
