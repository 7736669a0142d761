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
from minddata.dataset.caltech import Caltech101Dataset, Caltech256Dataset
from minddata.dataset.celeba import CelebADataset
from minddata.dataset.cityscapes import CityscapesDataset
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
from minddata.dataset.rendered_sst2 import RenderedSST2Dataset
from minddata.dataset.sbd import SBDataset
from minddata.dataset.sbu import SBUDataset
from minddata.dataset.schema import Schema
from minddata.dataset.semeion import SemeionDataset
from minddata.dataset.sources import GeneratorDataset, ImageFolderDataset, NumpySlicesDataset, OnlineDataset
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
from minddata.dataset.text_sources import CSVDataset, TextFileDataset, TFRecordDataset
from minddata.dataset.voc import VOCDataset
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
    "RenderedSST2Dataset",
    "SUN397Dataset",
    "ManifestDataset",
    "FlickrDataset",
    "SemeionDataset",
    "LFWDataset",
    "PhotoTourDataset",
    "SBDataset",
    "WIDERFaceDataset",
    "KITTIDataset",
    "CityscapesDataset",
    "DIV2KDataset",
    "OmniglotDataset",
    "SBUDataset",
    "LSUNDataset",
    "Places365Dataset",
    "Food101Dataset",
    "Flowers102Dataset",
    "Caltech256Dataset",
    "Caltech101Dataset",
    "CelebADataset",
    "STL10Dataset",
    "SVHNDataset",
    "USPSDataset",
    "QMnistDataset",
    "EMnistDataset",
    "KMnistDataset",
    "FashionMnistDataset",
    "VOCDataset",
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
    "concat",
    "config",
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
