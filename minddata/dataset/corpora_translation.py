"""Translation corpora: ``IWSLT2016Dataset``, ``IWSLT2017Dataset`` and ``Multi30kDataset``. Rows are
sentence pairs in columns ``text`` (the source language) and ``translation`` (the target), both
strings. Sharding, shuffling and resume: see :mod:`minddata.dataset.corpora_common`.

IWSLT as WIT3 ships it: training data in ``train.tags.<src>-<tgt>.<lang>`` files (one sentence per
line, with talk metadata on lines holding XML-like tags such as ``<url>``, which are skipped), and
development and test sets in ``IWSLT16.TED.<set>.<src>-<tgt>.<lang>.xml`` files (``<seg>`` elements
inside ``<doc>`` elements), read pairwise from the source and target files. Unlike MindSpore, nothing
is written next to the data: the pairs are read from the original files.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from minddata.dataset.base import Dataset
from minddata.dataset.corpora_common import check_dir, check_usage, stream_node, text_lines
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["IWSLT2016Dataset", "IWSLT2017Dataset", "Multi30kDataset"]

# Lines of train.tags files that hold talk metadata rather than a sentence (as MindSpore skips them).
_TAGS = (
    "<url",
    "<keywords",
    "<talkid",
    "<description",
    "<reviewer",
    "<translator",
    "<title",
    "<speaker",
    "<doc",
    "</doc",
)


def _is_metadata(line: str) -> bool:
    return any(tag in line for tag in _TAGS)


class _Pairs:
    """Sentence pairs from (source file, target file); the stream knows a pair by its source file."""

    def __init__(self, where: str, targets: dict[str, str]):
        self.where = where
        self.targets = targets

    def read(self, path: str) -> Iterator[tuple]:
        for text, translation in self._pairs(path):
            yield np.asarray(text), np.asarray(translation)

    def count(self, path: str) -> int:
        return sum(1 for _ in self._pairs(path))

    def _pairs(self, path: str) -> Iterator[tuple[str, str]]:
        target = self.targets[path]
        if path.endswith(".xml"):
            yield from self._xml_pairs(path, target)
        else:
            yield from self._line_pairs(path, target)

    def _line_pairs(self, source: str, target: str) -> Iterator[tuple[str, str]]:
        src = text_lines(self.where, source, keep_empty=True)
        tgt = text_lines(self.where, target, keep_empty=True)
        for (_, a), (_, b) in _zip_exact(self.where, src, tgt, source, target):
            if _is_metadata(a) or _is_metadata(b):
                continue
            a, b = a.strip(" \r"), b.strip(" \r")
            if a or b:
                yield a, b

    def _xml_pairs(self, source: str, target: str) -> Iterator[tuple[str, str]]:
        src_docs, tgt_docs = self._docs(source), self._docs(target)
        if len(src_docs) != len(tgt_docs):
            raise DataFormatError(
                f"{self.where}: {source} has {len(src_docs)} <doc> element(s) but {target} has {len(tgt_docs)}; "
                "the two sides of a set must match.",
                path=source,
            )
        for k, (a, b) in enumerate(zip(src_docs, tgt_docs)):
            if len(a) != len(b):
                raise DataFormatError(
                    f"{self.where}: <doc> {k} has {len(a)} <seg> element(s) in {source} but {len(b)} in {target}.",
                    path=source,
                )
            yield from zip(a, b)

    def _docs(self, path: str) -> list[list[str]]:
        try:
            root = ElementTree.parse(path).getroot()
        except (OSError, ElementTree.ParseError) as error:
            raise DataFormatError(f"{self.where}: can't parse {path} as XML: {error}", path=path) from None
        # <mteval><srcset|refset ...><doc ...><seg id="1">text</seg>...</doc>...</srcset></mteval>
        sets = list(root)
        if not sets:
            raise DataFormatError(f"{self.where}: {path} has no set element under <{root.tag}>.", path=path)
        docs = sets[0].findall("doc")
        if not docs:
            raise DataFormatError(f"{self.where}: {path} has no <doc> element in <{sets[0].tag}>.", path=path)
        return [[(seg.text or "").strip(" ") for seg in doc.findall("seg")] for doc in docs]


def _zip_exact(where: str, a: Iterator[Any], b: Iterator[Any], path_a: str, path_b: str) -> Iterator[tuple]:
    """Pairs of ``a`` and ``b``; an error naming both files if one runs out first."""
    done = object()
    while True:
        x, y = next(a, done), next(b, done)
        if x is done and y is done:
            return
        if x is done or y is done:
            short, long_ = (path_a, path_b) if x is done else (path_b, path_a)
            raise DataFormatError(
                f"{where}: {short} has fewer lines than {long_}; the sentences of a pair of files must line up.",
                path=short,
            )
        yield x, y


def _language_pair(
    where: str, language_pair: Any, allowed: Sequence[tuple[str, str]], default: tuple[str, str]
) -> tuple[str, str]:
    if language_pair is None:
        return default
    if (
        isinstance(language_pair, (str, bytes))
        or not isinstance(language_pair, Sequence)
        or len(language_pair) != 2
    ):
        raise ArgumentError(
            f"{where}: `language_pair` must be a sequence of two languages. Found: {language_pair!r}"
        )
    pair = (language_pair[0], language_pair[1])
    if pair not in allowed:
        raise ArgumentError(
            f"{where}: `language_pair` must be one of {[list(p) for p in allowed]}. Found: {list(pair)}"
        )
    return pair


def _need(where: str, path: str, what: str) -> str:
    if not os.path.isfile(path):
        raise DataFormatError(f"{where}: {path} is missing ({what}).", path=path)
    return path


def _iwslt_node(
    where: str,
    folder: str,
    subdir: str,
    prefix: str,
    usage: str,
    pair: tuple[str, str],
    valid_set: str,
    test_set: str,
    stream: dict[str, Any],
) -> Any:
    src, tgt = pair
    base = os.path.join(folder, subdir)
    sources: list[str] = []
    targets: dict[str, str] = {}
    wanted = [("train", None), ("valid", valid_set), ("test", test_set)]
    for split, set_name in wanted:
        if usage not in (split, "all"):
            continue
        if set_name is None:
            names = [f"train.tags.{src}-{tgt}.{lang}" for lang in pair]
        else:
            names = [f"{prefix}.TED.{set_name}.{src}-{tgt}.{lang}.xml" for lang in pair]
        what = f"the {split} data of {src}-{tgt}"
        source = _need(where, os.path.join(base, names[0]), what)
        targets[source] = _need(where, os.path.join(base, names[1]), what)
        sources.append(source)
    pairs = _Pairs(where, targets)
    # MindSpore's order: train, valid, test.
    return stream_node(where, ["text", "translation"], sources, pairs.read, pairs.count, **stream)


_IWSLT_SETS = ("dev2010", "tst2010", "tst2011", "tst2012", "tst2013", "tst2014")
_IWSLT2016_PAIRS = (
    ("en", "fr"),
    ("en", "de"),
    ("en", "cs"),
    ("en", "ar"),
    ("fr", "en"),
    ("de", "en"),
    ("cs", "en"),
    ("ar", "en"),
)
_IWSLT2017_LANGUAGES = ("en", "nl", "de", "it", "ro")
_IWSLT2017_PAIRS = tuple((a, b) for a in _IWSLT2017_LANGUAGES for b in _IWSLT2017_LANGUAGES if a != b)


def _set_name(where: str, arg: str, value: Any, default: str) -> str:
    if value is None:
        return default
    if value not in _IWSLT_SETS:
        raise ArgumentError(f"{where}: `{arg}` must be one of {list(_IWSLT_SETS)}. Found: {value!r}")
    return str(value)


class IWSLT2016Dataset(Dataset):
    """IWSLT 2016 TED talks translation (MindSpore's ``IWSLT2016Dataset``).

    Files are read from ``dataset_dir/texts/<src>/<tgt>/<src>-<tgt>/``, WIT3's layout once each
    pair's archive is unpacked in place: ``train.tags.<src>-<tgt>.<src>`` and ``.<tgt>`` for
    ``usage="train"``, ``IWSLT16.TED.<set>.<src>-<tgt>.<src>.xml`` and ``.<tgt>.xml`` for the valid
    and test sets.

    Args:
        dataset_dir: the root folder (holding ``texts``).
        usage: ``"train"``, ``"valid"``, ``"test"`` or ``"all"`` (default: all, in that order).
        language_pair: (source, target), one of ``("en", "fr")``, ``("en", "de")``, ``("en", "cs")``,
            ``("en", "ar")`` and the reverse pairs; default ``("de", "en")``.
        valid_set: ``"dev2010"``, ``"tst2010"`` ... ``"tst2014"`` (default ``"tst2013"``).
        test_set: as ``valid_set`` (default ``"tst2014"``).
        num_samples: read at most this many rows per epoch (per shard when sharding).
        shuffle: ``Shuffle.GLOBAL`` (default, same as True), ``Shuffle.FILES``, ``Shuffle.INFILE`` or False.
        num_shards, shard_id: this shard's rows (row ``p`` of the stream to shard ``p % num_shards``).
        num_parallel_workers: MindSpore's file readers (default 8), whose rows interleave.
        cache: accepted for MindSpore's signature.

    Examples:
        >>> import minddata as md
        >>> md.IWSLT2016Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: IWSLT2016Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        language_pair: Sequence[str] | None = None,
        valid_set: str | None = None,
        test_set: str | None = None,
        num_samples: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        num_parallel_workers: int | None = None,
        cache: Any = None,
    ):
        where = "IWSLT2016Dataset"
        folder = check_dir(where, dataset_dir)
        split = check_usage(where, usage, ("train", "valid", "test", "all"))
        src, tgt = _language_pair(where, language_pair, _IWSLT2016_PAIRS, ("de", "en"))
        super().__init__(
            _iwslt_node(
                where,
                folder,
                os.path.join("texts", src, tgt, f"{src}-{tgt}"),
                "IWSLT16",
                split,
                (src, tgt),
                _set_name(where, "valid_set", valid_set, "tst2013"),
                _set_name(where, "test_set", test_set, "tst2014"),
                dict(
                    shuffle=shuffle,
                    num_samples=num_samples,
                    num_parallel_workers=num_parallel_workers,
                    num_shards=num_shards,
                    shard_id=shard_id,
                ),
            )
        )


class IWSLT2017Dataset(Dataset):
    """IWSLT 2017 multilingual TED talks translation (MindSpore's ``IWSLT2017Dataset``).

    Files are read from ``dataset_dir/texts/DeEnItNlRo/DeEnItNlRo/DeEnItNlRo-DeEnItNlRo/``:
    ``train.tags.<src>-<tgt>.<lang>`` for training, ``IWSLT17.TED.dev2010.<src>-<tgt>.<lang>.xml``
    (valid) and ``IWSLT17.TED.tst2010.<src>-<tgt>.<lang>.xml`` (test), as MindSpore reads them.

    Args:
        dataset_dir: the root folder (holding ``texts``).
        usage: ``"train"``, ``"valid"``, ``"test"`` or ``"all"`` (default: all, in that order).
        language_pair: (source, target), two different languages of en, nl, de, it, ro; default
            ``("de", "en")``.
        num_samples, shuffle, num_shards, shard_id, num_parallel_workers, cache: as in
            :class:`IWSLT2016Dataset`.

    Examples:
        >>> import minddata as md
        >>> md.IWSLT2017Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: IWSLT2017Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        language_pair: Sequence[str] | None = None,
        num_samples: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        num_parallel_workers: int | None = None,
        cache: Any = None,
    ):
        where = "IWSLT2017Dataset"
        folder = check_dir(where, dataset_dir)
        split = check_usage(where, usage, ("train", "valid", "test", "all"))
        pair = _language_pair(where, language_pair, _IWSLT2017_PAIRS, ("de", "en"))
        sub = os.path.join("texts", "DeEnItNlRo", "DeEnItNlRo", "DeEnItNlRo-DeEnItNlRo")
        super().__init__(
            _iwslt_node(
                where,
                folder,
                sub,
                "IWSLT17",
                split,
                pair,
                "dev2010",
                "tst2010",
                dict(
                    shuffle=shuffle,
                    num_samples=num_samples,
                    num_parallel_workers=num_parallel_workers,
                    num_shards=num_shards,
                    shard_id=shard_id,
                ),
            )
        )


_MULTI30K = {"train": "training/train", "valid": "validation/val", "test": "mmt16_task1_test/test"}


class Multi30kDataset(Dataset):
    """Multi30k English-German image descriptions (MindSpore's ``Multi30kDataset``).

    ``dataset_dir`` holds ``training/train.en`` and ``train.de``, ``validation/val.en`` and ``val.de``,
    and ``mmt16_task1_test/test.en`` and ``test.de``: line ``k`` of the English file translates line
    ``k`` of the German one (pairs of empty lines are skipped). Files are read in sorted path order, as
    MindSpore does.

    Args:
        dataset_dir: the root folder.
        usage: ``"train"``, ``"valid"``, ``"test"`` or ``"all"`` (default: all).
        language_pair: ``["en", "de"]`` (default: ``text`` is English) or ``["de", "en"]``.
        num_samples: read at most this many rows per epoch (per shard when sharding).
        num_parallel_workers: MindSpore's file readers (default 8), whose rows interleave.
        shuffle: ``Shuffle.GLOBAL`` (default, same as True), ``Shuffle.FILES``, ``Shuffle.INFILE`` or False.
        num_shards, shard_id: this shard's rows (row ``p`` of the stream to shard ``p % num_shards``).
        cache: accepted for MindSpore's signature.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> folder = tempfile.mkdtemp()
        >>> os.mkdir(os.path.join(folder, "validation"))
        >>> _ = open(os.path.join(folder, "validation", "val.en"), "w").write("A dog runs.\\n")
        >>> _ = open(os.path.join(folder, "validation", "val.de"), "w").write("Ein Hund rennt.\\n")
        >>> ds = md.Multi30kDataset(folder, usage="valid", shuffle=False)
        >>> [(str(r["text"]), str(r["translation"])) for r in ds.create_dict_iterator(output_numpy=True)]
        [('A dog runs.', 'Ein Hund rennt.')]
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        language_pair: Sequence[str] | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "Multi30kDataset"
        folder = check_dir(where, dataset_dir)
        split = check_usage(where, usage, ("train", "valid", "test", "all"))
        src, tgt = _language_pair(where, language_pair, (("en", "de"), ("de", "en")), ("en", "de"))
        sources: list[str] = []
        targets: dict[str, str] = {}
        for name, stem in _MULTI30K.items():
            if split not in (name, "all"):
                continue
            what = f"usage={split!r} reads {stem}.en and {stem}.de"
            source = _need(where, os.path.join(folder, f"{stem}.{src}"), what)
            targets[source] = _need(where, os.path.join(folder, f"{stem}.{tgt}"), what)
            sources.append(source)
        pairs = _Multi30kPairs(where, targets)
        super().__init__(
            stream_node(
                where,
                ["text", "translation"],
                sorted(sources),
                pairs.read,
                pairs.count,
                shuffle=shuffle,
                num_samples=num_samples,
                num_parallel_workers=num_parallel_workers,
                num_shards=num_shards,
                shard_id=shard_id,
            )
        )


class _Multi30kPairs(_Pairs):
    """Line ``k`` of one language with line ``k`` of the other, kept as they are."""

    def _pairs(self, path: str) -> Iterator[tuple[str, str]]:
        target = self.targets[path]
        src = text_lines(self.where, path, keep_empty=True)
        tgt = text_lines(self.where, target, keep_empty=True)
        for (_, a), (_, b) in _zip_exact(self.where, src, tgt, path, target):
            if a or b:
                yield a, b
