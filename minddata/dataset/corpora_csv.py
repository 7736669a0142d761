"""Text classification corpora stored as CSV or TSV files: ``AGNewsDataset``, ``AmazonReviewDataset``,
``YelpReviewDataset``, ``SogouNewsDataset``, ``DBpediaDataset``, ``YahooAnswersDataset`` (the
character-level CNN collection: ``train.csv`` and ``test.csv``, no header, every field quoted) and
``SST2Dataset`` (GLUE's ``train.tsv``, ``dev.tsv``, ``test.tsv`` with a header line).

Every column is a string, as in MindSpore (labels included: ``"3"``); fields keep their escapes
(``\\n`` stays two characters, as in the files). Sharding, shuffling and resume: see
:mod:`minddata.dataset.corpora_common`.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from typing import Any

from minddata.dataset.base import Dataset
from minddata.dataset.corpora_common import check_dir, check_usage, stream_node, usage_files
from minddata.dataset.text_sources import _CsvReader

__all__ = [
    "AGNewsDataset",
    "AmazonReviewDataset",
    "DBpediaDataset",
    "SogouNewsDataset",
    "SST2Dataset",
    "YahooAnswersDataset",
    "YelpReviewDataset",
]

_TRAIN_TEST = {"train": "train.csv", "test": "test.csv"}


def _csv_corpus(
    where: str,
    columns: list[str],
    dataset_dir: Any,
    usage: Any,
    num_samples: Any,
    num_parallel_workers: Any,
    shuffle: Any,
    num_shards: Any,
    shard_id: Any,
) -> Any:
    folder = check_dir(where, dataset_dir)
    split = check_usage(where, usage, ("train", "test", "all"))
    files = usage_files(where, folder, split, _TRAIN_TEST)
    reader = _CsvReader(columns, ",", None, False, where=where)
    return stream_node(
        where,
        columns,
        files,
        reader.read,
        reader.count,
        shuffle=shuffle,
        num_samples=num_samples,
        num_parallel_workers=num_parallel_workers,
        num_shards=num_shards,
        shard_id=shard_id,
    )


_ARGS = """
    Args:
        dataset_dir: the folder holding ``train.csv`` and ``test.csv``.
        usage: ``"train"``, ``"test"`` or ``"all"`` (default: all).
        num_samples: read at most this many rows per epoch (per shard when sharding).
        num_parallel_workers: MindSpore's file readers (default 8), whose rows interleave.
        shuffle: ``Shuffle.GLOBAL`` (default, same as True), ``Shuffle.FILES``, ``Shuffle.INFILE`` or False.
        num_shards, shard_id: this shard's rows (row ``p`` of the stream to shard ``p % num_shards``).
        cache: accepted for MindSpore's signature.
"""


class _CsvCorpus(Dataset):
    """The character-level CNN collection's shared reader: ``train.csv``/``test.csv`` of ``_COLUMNS``."""

    _COLUMNS: list[str] = []

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        super().__init__(
            _csv_corpus(type(self).__name__, list(self._COLUMNS), dataset_dir, usage, num_samples,
                        num_parallel_workers, shuffle, num_shards, shard_id)
        )


class AGNewsDataset(_CsvCorpus):
    """AG News (MindSpore's ``AGNewsDataset``): columns ``index`` (class 1-4), ``title``,
    ``description``, all strings.
    {args}
    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     for name in ("train.csv", "test.csv"):
        ...         _ = open(os.path.join(folder, name), "w").write('"3","Wall St.","Stocks rose."\\n')
        ...     ds = md.AGNewsDataset(folder, usage="train", shuffle=False)
        ...     rows = [(str(r["index"]), str(r["title"])) for r in ds.create_dict_iterator(output_numpy=True)]
        >>> rows
        [('3', 'Wall St.')]
    """

    _COLUMNS = ["index", "title", "description"]


class AmazonReviewDataset(_CsvCorpus):
    """Amazon Review, Polarity or Full (MindSpore's ``AmazonReviewDataset``): columns ``label``,
    ``title``, ``content``, all strings.
    {args}
    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     for name in ("train.csv", "test.csv"):
        ...         _ = open(os.path.join(folder, name), "w").write('"2","Great","Works well."\\n')
        ...     ds = md.AmazonReviewDataset(folder, usage="test", shuffle=False)
        ...     rows = [(str(r["label"]), str(r["title"])) for r in ds.create_dict_iterator(output_numpy=True)]
        >>> rows
        [('2', 'Great')]
    """

    _COLUMNS = ["label", "title", "content"]


class YelpReviewDataset(_CsvCorpus):
    """Yelp Review, Polarity or Full (MindSpore's ``YelpReviewDataset``): columns ``label``, ``text``,
    both strings.
    {args}
    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     for name in ("train.csv", "test.csv"):
        ...         _ = open(os.path.join(folder, name), "w").write('"1","Cold food."\\n')
        ...     ds = md.YelpReviewDataset(folder, usage="test", shuffle=False)
        ...     rows = [(str(r["label"]), str(r["text"])) for r in ds.create_dict_iterator(output_numpy=True)]
        >>> rows
        [('1', 'Cold food.')]
    """

    _COLUMNS = ["label", "text"]


class SogouNewsDataset(_CsvCorpus):
    """Sogou News (MindSpore's ``SogouNewsDataset``): columns ``index`` (class 1-5), ``title``,
    ``content``, all strings.
    {args}
    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     for name in ("train.csv", "test.csv"):
        ...         _ = open(os.path.join(folder, name), "w").write('"4","Headline","Body."\\n')
        ...     ds = md.SogouNewsDataset(folder, usage="test", shuffle=False)
        ...     rows = [(str(r["index"]), str(r["title"])) for r in ds.create_dict_iterator(output_numpy=True)]
        >>> rows
        [('4', 'Headline')]
    """

    _COLUMNS = ["index", "title", "content"]


class DBpediaDataset(_CsvCorpus):
    """DBpedia ontology classification (MindSpore's ``DBpediaDataset``): columns ``class`` (1-14),
    ``title``, ``content``, all strings.
    {args}
    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     for name in ("train.csv", "test.csv"):
        ...         _ = open(os.path.join(folder, name), "w").write('"7","Mount Fuji","A volcano."\\n')
        ...     ds = md.DBpediaDataset(folder, usage="test", shuffle=False)
        ...     rows = [(str(r["class"]), str(r["title"])) for r in ds.create_dict_iterator(output_numpy=True)]
        >>> rows
        [('7', 'Mount Fuji')]
    """

    _COLUMNS = ["class", "title", "content"]


class YahooAnswersDataset(_CsvCorpus):
    """Yahoo! Answers topic classification (MindSpore's ``YahooAnswersDataset``): columns ``class``
    (1-10), ``title``, ``content``, ``answer``, all strings.
    {args}
    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     for name in ("train.csv", "test.csv"):
        ...         _ = open(os.path.join(folder, name), "w").write('"5","Why?","Because.","It is so."\\n')
        ...     ds = md.YahooAnswersDataset(folder, usage="test", shuffle=False)
        ...     rows = [(str(r["class"]), str(r["title"])) for r in ds.create_dict_iterator(output_numpy=True)]
        >>> rows
        [('5', 'Why?')]
    """

    _COLUMNS = ["class", "title", "content", "answer"]



for _cls in (
    AGNewsDataset,
    AmazonReviewDataset,
    YelpReviewDataset,
    SogouNewsDataset,
    DBpediaDataset,
    YahooAnswersDataset,
):
    _cls.__doc__ = _cls.__doc__.replace("{args}", _ARGS)  # type: ignore[union-attr]  # these classes have docstrings


# -- SST-2 ------------------------------------------------------------------------------------------

_SST2_FILES = {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"}


class _SST2Reader:
    """GLUE's SST-2 TSV: a header line, then ``sentence<TAB>label`` (``index<TAB>sentence`` in
    test.tsv, whose index MindSpore drops). Sentences are tokenised text, quotes included, so fields
    are not unquoted."""

    def __init__(self, test: bool):
        names = ["index", "sentence"] if test else ["sentence", "label"]
        self.test = test
        self.csv = _CsvReader(names, "\t", None, True, where="SST2Dataset", quoting=csv.QUOTE_NONE)

    def read(self, path: str) -> Iterator[tuple]:
        for row in self.csv.read(path):
            yield row[1:] if self.test else row

    def count(self, path: str) -> int:
        return self.csv.count(path)


class SST2Dataset(Dataset):
    """Stanford Sentiment Treebank v2 as GLUE ships it (MindSpore's ``SST2Dataset``).

    ``dataset_dir`` holds ``train.tsv``, ``dev.tsv`` and ``test.tsv``. ``usage`` ``"train"`` (default)
    or ``"dev"`` gives columns ``sentence`` and ``label`` (``"0"`` or ``"1"``), ``"test"`` gives
    ``sentence`` only; all strings. Each file's first line is its header, which must name the columns
    above. Other arguments as in :class:`AGNewsDataset`.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> folder = tempfile.mkdtemp()
        >>> _ = open(os.path.join(folder, "dev.tsv"), "w").write("sentence\\tlabel\\nit 's a charming journey . \\t1\\n")
        >>> ds = md.SST2Dataset(folder, usage="dev", shuffle=False)
        >>> [(str(r["sentence"]), str(r["label"])) for r in ds.create_dict_iterator(output_numpy=True)]
        [("it 's a charming journey . ", '1')]
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "SST2Dataset"
        folder = check_dir(where, dataset_dir)
        split = check_usage(where, usage, ("train", "dev", "test"), default="train")
        files = usage_files(where, folder, split, _SST2_FILES)
        reader = _SST2Reader(split == "test")
        columns = ["sentence"] if split == "test" else ["sentence", "label"]
        super().__init__(
            stream_node(
                where,
                columns,
                files,
                reader.read,
                reader.count,
                shuffle=shuffle,
                num_samples=num_samples,
                num_parallel_workers=num_parallel_workers,
                num_shards=num_shards,
                shard_id=shard_id,
            )
        )
