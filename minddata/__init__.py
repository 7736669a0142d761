"""minddata: data pipelines for deep learning with per-op CPU, Dvpp and GPU kernels.

Examples:
    >>> import minddata as md
    >>> ds = md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False).map(lambda x: x * 10, input_columns="x")
    >>> [int(row["x"]) for row in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    [10, 20, 30]
"""

# _checkout first: from a source checkout it serves minddata.ops/engine/... from the sibling folders.
from minddata import _checkout, _missing, config, errors  # noqa: F401  (isort: _checkout sorts first on purpose)
from minddata._devices import DeviceInfo, DriverInfo, devices
from minddata._version import __version__
from minddata.dataset import (
    AGNewsDataset,
    AmazonReviewDataset,
    BatchInfo,
    DSCallback,
    WaitedDSCallback,
    Cifar10Dataset,
    Cifar100Dataset,
    CLUEDataset,
    CocoDataset,
    CoNLL2000Dataset,
    CSVDataset,
    Dataset,
    DBpediaDataset,
    EnWik9Dataset,
    FakeImageDataset,
    GeneratorDataset,
    ImageFolderDataset,
    IMDBDataset,
    IWSLT2016Dataset,
    IWSLT2017Dataset,
    MindDataset,
    MnistDataset,
    Multi30kDataset,
    NumpySlicesDataset,
    OnlineDataset,
    PaddedDataset,
    ParquetDataset,
    PennTreebankDataset,
    RandomDataset,
    Schema,
    Shuffle,
    SogouNewsDataset,
    SQuADDataset,
    SST2Dataset,
    TextFileDataset,
    TFRecordDataset,
    UDPOSDataset,
    WikiTextDataset,
    YahooAnswersDataset,
    YelpReviewDataset,
    compare,
    concat,
    deserialize,
    serialize,
    show,
    zip,
)
from minddata.engine.autotune import AUTOTUNE
from minddata.profiler import Profiler
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
    "AUTOTUNE",
    "BatchInfo",
    "DSCallback",
    "WaitedDSCallback",
    "CSVDataset",
    "Cifar100Dataset",
    "Cifar10Dataset",
    "CocoDataset",
    "Dataset",
    "DeviceInfo",
    "DistributedSampler",
    "PKSampler",
    "DriverInfo",
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
    "Profiler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "SubsetSampler",
    "WeightedRandomSampler",
    "__version__",
    "compare",
    "concat",
    "config",
    "deserialize",
    "devices",
    "errors",
    "serialize",
    "show",
    "zip",
]


# vision/transforms import lazily so `import minddata` stays light; a MindSpore name minddata lacks
# says so (minddata._missing).
__getattr__ = _missing.module_getattr(
    __name__, lazy={name: f"minddata.{name}" for name in ("vision", "transforms", "record", "common")}
)
