"""Dataset nodes (sources and operations) and their iterators: ``mindspore.dataset``'s namespace.

As in MindSpore, ``config``, the samplers and the ``vision`` / ``transforms`` / ``text`` op modules are here too
(``import minddata.dataset as ds; ds.config.set_seed(1)``; ``from minddata.dataset import vision``).
"""

from minddata import config
from minddata._missing import module_getattr
from minddata.dataset import debug  # noqa: F401  (mindspore.dataset.debug)
from minddata.dataset._files import Shuffle
from minddata.dataset.arrow_sources import MindDataset, OBSMindDataset, ParquetDataset
from minddata.dataset.base import Dataset, concat, zip
from minddata.dataset.cache import DatasetCache
from minddata.dataset.callback import DSCallback, WaitedDSCallback
from minddata.dataset.caltech import Caltech101Dataset, Caltech256Dataset
from minddata.dataset.celeba import CelebADataset
from minddata.dataset.cityscapes import CityscapesDataset
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
from minddata.dataset.div2k import DIV2KDataset
from minddata.dataset.flickr import FlickrDataset
from minddata.dataset.flowers102 import Flowers102Dataset
from minddata.dataset.food101 import Food101Dataset
from minddata.dataset.iterators import DictIterator, TupleIterator
from minddata.dataset.kitti import KITTIDataset
from minddata.dataset.lfw import LFWDataset
from minddata.dataset.lsun import LSUNDataset
from minddata.dataset.manifest import ManifestDataset
from minddata.dataset.mnist_family import (
    EMnistDataset,
    FashionMnistDataset,
    KMnistDataset,
    MnistDataset,
    QMnistDataset,
    USPSDataset,
)
from minddata.dataset.omniglot import OmniglotDataset
from minddata.dataset.photo_tour import PhotoTourDataset
from minddata.dataset.places365 import Places365Dataset
from minddata.dataset.rank_sync import sync_wait_for_dataset
from minddata.dataset.rendered_sst2 import RenderedSST2Dataset
from minddata.dataset.sbd import SBDataset
from minddata.dataset.sbu import SBUDataset
from minddata.dataset.schema import Schema
from minddata.dataset.semeion import SemeionDataset
from minddata.dataset.serialization import compare, deserialize, serialize, show
from minddata.dataset.sources import GeneratorDataset, ImageFolderDataset, NumpySlicesDataset, OnlineDataset
from minddata.dataset.speech import (
    CMUArcticDataset,
    GTZANDataset,
    LibriTTSDataset,
    LJSpeechDataset,
    SpeechCommandsDataset,
    YesNoDataset,
)
from minddata.dataset.standard import (
    Cifar10Dataset,
    Cifar100Dataset,
    CocoDataset,
    FakeImageDataset,
    PaddedDataset,
    RandomDataset,
)
from minddata.dataset.stl10 import STL10Dataset
from minddata.dataset.sun397 import SUN397Dataset
from minddata.dataset.svhn import SVHNDataset
from minddata.dataset.tedlium import TedliumDataset
from minddata.dataset.text_sources import CSVDataset, TextFileDataset, TFRecordDataset
from minddata.dataset.voc import VOCDataset
from minddata.dataset.webdataset import WebDataset
from minddata.dataset.wider_face import WIDERFaceDataset
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
    "DatasetCache",
    "DictIterator",
    "FakeImageDataset",
    "GeneratorDataset",
    "ImageFolderDataset",
    "MindDataset",
    "MnistDataset",
    "NumpySlicesDataset",
    "OBSMindDataset",
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
    "WebDataset",
    "compare",
    "concat",
    "config",
    "deserialize",
    "serialize",
    "show",
    "sync_wait_for_dataset",
    "zip",
    "DistributedSampler",
    "PKSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "SubsetSampler",
    "WeightedRandomSampler",
    # the standard image datasets
    "Caltech101Dataset",
    "Caltech256Dataset",
    "CelebADataset",
    "CityscapesDataset",
    "DIV2KDataset",
    "EMnistDataset",
    "FashionMnistDataset",
    "FlickrDataset",
    "Flowers102Dataset",
    "Food101Dataset",
    "KITTIDataset",
    "KMnistDataset",
    "LFWDataset",
    "LSUNDataset",
    "ManifestDataset",
    "OmniglotDataset",
    "PhotoTourDataset",
    "Places365Dataset",
    "QMnistDataset",
    "RenderedSST2Dataset",
    "SBDataset",
    "SBUDataset",
    "SemeionDataset",
    "LJSpeechDataset",
    "CMUArcticDataset",
    "GTZANDataset",
    "LibriTTSDataset",
    "SpeechCommandsDataset",
    "YesNoDataset",
    "TedliumDataset",
    "STL10Dataset",
    "SUN397Dataset",
    "SVHNDataset",
    "USPSDataset",
    "VOCDataset",
    "WIDERFaceDataset",
]

# The op modules import on first use, so `import minddata` stays light.
__getattr__ = module_getattr(
    __name__, lazy={name: f"{__name__}.{name}" for name in ("vision", "transforms", "text")}
)
