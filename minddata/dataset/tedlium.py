"""TED-LIUM (MindSpore's ``TedliumDataset``): TED talks in NIST SPHERE audio with STM transcripts, one
row per STM line, and the SPHERE reader it needs (:func:`read_sphere_header`, :func:`read_sphere`).

Layouts read, as MindSpore's:

- release1 and release2: ``dataset_dir/{train,test,dev}/stm/<talk>.stm`` and ``.../sph/<talk>.sph``;
- release3: ``dataset_dir/data/stm/<talk>.stm`` and ``dataset_dir/data/sph/<talk>.sph``.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np

from minddata.dataset import _validate as v
from minddata.dataset._loaders import Lazy, dataset_folder, missing, source_sampler, usage_splits
from minddata.dataset.base import Dataset
from minddata.dataset.cache import with_cache
from minddata.engine import ir
from minddata.errors import ArgumentError, DataFormatError, RowError

__all__ = ["SphereHeader", "TedliumDataset", "read_sphere", "read_sphere_header"]

RELEASES = ("release1", "release2", "release3")
# release1/2 splits in the order "all" lists them (MindSpore's: train, test, dev).
_SPLITS = ("train", "test", "dev")
COLUMNS = ["waveform", "sample_rate", "transcript", "talk_id", "speaker_id", "identifier"]
# 16-bit samples are divided by the largest positive value, as MindSpore's SPHERE and WAV readers do.
_INT16_SCALE = 32767.0
_SPH2PIPE_FIX = "convert it to PCM SPHERE first, e.g. `sph2pipe -f sph in.sph out.sph` (sph2pipe ships with Kaldi)"


class SphereHeader(NamedTuple):
    """What a NIST SPHERE header says about the samples that follow it."""

    header_bytes: int
    sample_rate: int
    channel_count: int
    sample_n_bytes: int
    byte_order: str  # "<" (sample_byte_format 01) or ">" (10)
    sample_coding: str
    sample_count: int | None


def _header_fields(path: str, text: str) -> dict[str, str]:
    """``name -type value`` lines up to ``end_head``; a ``-sN`` value is exactly N characters
    (it may hold spaces)."""
    fields: dict[str, str] = {}
    for line in text.split("\n")[2:]:
        line = line.rstrip("\r")
        if line.strip() == "end_head":
            return fields
        if not line.strip() or line.startswith(";"):
            continue
        name, _, rest = line.partition(" ")
        kind, _, value = rest.partition(" ")
        if kind.startswith("-s") and kind[2:].isdigit():
            value = value[: int(kind[2:])]
        elif kind not in ("-i", "-r"):
            raise DataFormatError(f"{path}: SPHERE header line {line!r}: the type must be -i, -r or -sN", path=path)
        fields[name] = value.strip() if kind in ("-i", "-r") else value
    raise DataFormatError(f"{path}: the SPHERE header has no end_head line: the file is truncated or not SPHERE",
                          path=path)


def read_sphere_header(path: str) -> SphereHeader:
    """The header of a NIST SPHERE file (``NIST_1A``, its size, then ``name -type value`` lines).

    Only 16-bit PCM is read; a shorten-compressed file (TED-LIUM ships PCM, other LDC corpora do not) is
    an error that names the file and how to convert it.

    Examples:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "a.sph")
        >>> head = b"NIST_1A\\n   1024\\nsample_rate -i 16000\\nsample_byte_format -s2 01\\nend_head\\n"
        >>> _ = open(path, "wb").write(head.ljust(1024, b" ") + b"\\x00\\x40")
        >>> header = read_sphere_header(path)
        >>> header.sample_rate, header.byte_order, header.sample_n_bytes
        (16000, '<', 2)
    """
    try:
        with open(path, "rb") as f:
            start = f.read(1024)
            if start[:8] != b"NIST_1A\n":
                raise DataFormatError(f"{path} is not a NIST SPHERE file: it does not start with NIST_1A", path=path)
            size_text = start[8:16].strip()
            if not size_text.isdigit():
                raise DataFormatError(f"{path}: the SPHERE header size must follow NIST_1A. Found: {size_text!r}",
                                      path=path)
            header_bytes = int(size_text)
            if header_bytes > len(start):
                start += f.read(header_bytes - len(start))
    except OSError as error:
        raise DataFormatError(f"can't read {path}: {error.strerror or error}", path=path) from None
    fields = _header_fields(path, start[:header_bytes].decode("latin-1"))

    def number(name: str, default: int | None) -> int | None:
        text = fields.get(name)
        if text is None:
            return default
        try:
            return int(text)
        except ValueError:
            raise DataFormatError(f"{path}: SPHERE header field {name} must be an integer. Found: {text!r}",
                                  path=path) from None

    rate = number("sample_rate", None)
    if rate is None or rate <= 0:
        raise DataFormatError(f"{path}: the SPHERE header has no positive sample_rate", path=path)
    coding = fields.get("sample_coding", "pcm").strip()
    if "shorten" in coding:
        raise DataFormatError(f"{path} is shorten-compressed SPHERE (sample_coding {coding!r}); "
                              f"minddata reads PCM: {_SPH2PIPE_FIX}", path=path)
    if coding != "pcm":
        raise DataFormatError(f"{path}: sample_coding must be pcm. Found: {coding!r}; {_SPH2PIPE_FIX}", path=path)
    width = number("sample_n_bytes", 2)
    if width != 2:
        raise DataFormatError(f"{path}: sample_n_bytes must be 2 (16-bit PCM). Found: {width}", path=path)
    # SPHERE's default order is big-endian ("10"), which is also what MindSpore assumes.
    byte_format = fields.get("sample_byte_format", "10").strip()
    if byte_format not in ("01", "10"):
        raise DataFormatError(f"{path}: sample_byte_format must be 01 (little-endian) or 10 (big-endian). "
                              f"Found: {byte_format!r}", path=path)
    channels = number("channel_count", 1)
    if channels is None or channels <= 0:
        raise DataFormatError(f"{path}: channel_count must be greater than 0. Found: {channels}", path=path)
    return SphereHeader(header_bytes, rate, channels, width, "<" if byte_format == "01" else ">", coding,
                        number("sample_count", None))


def read_sphere(path: str, start: int = 0, stop: int | None = None,
                header: SphereHeader | None = None) -> tuple[np.ndarray, int]:
    """``(samples, sample_rate)`` of frames ``[start, stop)`` of a 16-bit PCM SPHERE file: float32
    ``(channels, frames)`` scaled by 1/32767 (as MindSpore); ``stop=None`` reads to the end.

    Examples:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "a.sph")
        >>> head = b"NIST_1A\\n   1024\\nsample_rate -i 8000\\nsample_byte_format -s2 10\\nend_head\\n"
        >>> _ = open(path, "wb").write(head.ljust(1024, b" ") + b"\\x40\\x00\\xc0\\x00\\x00\\x00")
        >>> samples, rate = read_sphere(path, 0, 2)
        >>> samples.round(4).tolist(), rate
        ([[0.5, -0.5]], 8000)
    """
    header = header or read_sphere_header(path)
    frame_bytes = header.sample_n_bytes * header.channel_count
    available = (os.path.getsize(path) - header.header_bytes) // frame_bytes
    stop = available if stop is None else stop
    if not 0 <= start <= stop <= available:
        raise DataFormatError(f"{path}: frames [{start}, {stop}) are outside the file's {available} frames", path=path)
    data = np.fromfile(path, dtype=f"{header.byte_order}i2", count=(stop - start) * header.channel_count,
                       offset=header.header_bytes + start * frame_bytes)
    samples = (data.astype(np.float64) / _INT16_SCALE).astype(np.float32)
    return np.ascontiguousarray(samples.reshape(-1, header.channel_count).T), header.sample_rate


class _Segment(NamedTuple):
    """One STM line: where its audio lies and its text columns."""

    sph: str
    stm: str
    line: int
    start: int  # frames
    stop: int
    header: SphereHeader  # the SPHERE file's, read once when the STM files are listed
    transcript: str
    talk_id: str
    speaker_id: str
    identifier: str


def _stm_segments(where: str, stm: str, sph: str, header: SphereHeader) -> list[_Segment]:
    sample_rate = header.sample_rate
    try:
        with open(stm, encoding="utf-8", newline="\n") as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError) as error:
        raise DataFormatError(f"{where}: can't read {stm}: {error}", path=stm) from None
    segments = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        # talk_id channel speaker_id start end <label> transcript (the transcript keeps its spaces).
        fields = line.split(" ", 6)
        if len(fields) < 6:
            raise DataFormatError(f"{where}: {stm} line {number}: expected 'talk_id channel speaker_id start end "
                                  f"<label> transcript', found {len(fields)} fields", path=stm)
        try:
            begin, end = float(fields[3]), float(fields[4])
        except ValueError:
            raise DataFormatError(f"{where}: {stm} line {number}: start and end must be seconds. Found: "
                                  f"{fields[3]!r}, {fields[4]!r}", path=stm) from None
        # Frames as MindSpore counts them: seconds * rate, each truncated.
        first, last = int(begin * sample_rate), int(end * sample_rate)
        if not 0 <= first <= last:
            raise DataFormatError(f"{where}: {stm} line {number}: the segment must have 0 <= start <= end. "
                                  f"Found: {fields[3]} to {fields[4]}", path=stm)
        segments.append(_Segment(sph, stm, number, first, last, header, fields[6] if len(fields) > 6 else "",
                                 fields[0], fields[2], fields[5]))
    return segments


def _list_segments(where: str, folder: str, parts: list[str], extensions: str) -> list[_Segment]:
    segments: list[_Segment] = []
    for part in parts:
        stm_folder = os.path.join(folder, part, "stm")
        if not os.path.isdir(stm_folder):
            raise missing(where, stm_folder, f"{where} reads <part>/stm/*.stm and <part>/sph/*{extensions} in "
                          "dataset_dir (part: train, test, dev for release1 and release2; data for release3).")
        for name in sorted(os.listdir(stm_folder)):
            stem, ext = os.path.splitext(name)
            if ext != ".stm":
                continue
            stm = os.path.join(stm_folder, name)
            sph = os.path.join(folder, part, "sph", stem + extensions)
            if not os.path.isfile(sph):
                raise missing(where, sph, f"{stm} transcribes it.")
            segments.extend(_stm_segments(where, stm, sph, read_sphere_header(sph)))
    if not segments:
        raise DataFormatError(f"{where}: no STM lines under {[os.path.join(folder, p, 'stm') for p in parts]}: "
                              "check dataset_dir, release and usage", path=folder)
    return segments


class _FetchSegments:
    """Rows by index: each reads its segment's frames from the SPHERE file."""

    def __init__(self, where: str, segments: Lazy):
        self.where = where
        self.segments = segments

    def __call__(self, ids: list[int]) -> list[tuple]:
        segments = self.segments.get()
        rows = []
        for i in ids:
            s = segments[i]
            try:
                waveform, rate = read_sphere(s.sph, s.start, s.stop, s.header)
            except DataFormatError as error:
                raise RowError(f"{self.where}: can't read row {i} ({s.stm} line {s.line}): {error}",
                               op=self.where, row=i, source=s.sph) from None
            rows.append((waveform, np.int32(rate), np.array(s.transcript), np.array(s.talk_id),
                         np.array(s.speaker_id), np.array(s.identifier)))
        return rows

    def origins(self, ids: list[int]) -> list[str]:
        segments = self.segments.get()
        return [segments[i].sph for i in ids]


class TedliumDataset(Dataset):
    """TED-LIUM releases 1, 2 and 3 (MindSpore's ``TedliumDataset``): one row per line of the STM
    transcripts, its audio the line's ``[start, end)`` seconds of the talk's SPHERE file.

    Args:
        dataset_dir: the release's folder (``TEDLIUM_release1``, ``TEDLIUM_release-3``...).
        release: ``"release1"``, ``"release2"`` or ``"release3"``.
        usage: ``"train"``, ``"test"``, ``"dev"`` or ``"all"`` for release1 and release2 (``"all"``
            reads train, test and dev, in that order); only ``"all"`` for release3. None: ``"all"``.
        extensions: the audio files' extension (None: ``".sph"``).
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache: as for every
            source.

    Columns, as MindSpore's: ``waveform`` float32 ``(1, frames)`` (16-bit samples / 32767),
    ``sample_rate`` int32, and the strings ``transcript``, ``talk_id``, ``speaker_id`` and
    ``identifier`` (the STM label, e.g. ``<o,f0,male>``). Every STM line is a row, the
    ``ignore_time_segment_in_scoring`` ones included, as in MindSpore.

    Unlike MindSpore 2.10, whose reader returns zeros for every sample, the waveform holds the audio;
    the byte order is the one the header names; and rows come in file order (split, talk, line)
    rather than MindSpore's order by the line number's text.

    Examples:
        >>> import minddata as md
        >>> md.TedliumDataset("no/such/folder", release="release1")
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: TedliumDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(self, dataset_dir: str | os.PathLike, release: str, usage: str | None = None,
                 extensions: str | None = None, num_samples: int | None = None,
                 num_parallel_workers: int | None = None, shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None, cache: Any = None):
        where = "TedliumDataset"
        if release not in RELEASES:
            raise ArgumentError(f"{where}: `release` must be one of {', '.join(RELEASES)}. Found: {release!r}")
        folder = dataset_folder(where, dataset_dir)
        if release == "release3":
            if usage not in (None, "all"):
                raise ArgumentError(f"{where}: `usage` must be 'all' (or None) for release3, which has no splits. "
                                    f"Found: {usage!r}")
            parts = ["data"]
        else:
            parts = usage_splits(where, usage, _SPLITS)
        extensions = ".sph" if extensions is None else extensions
        if not isinstance(extensions, str) or not extensions.startswith(".") or len(extensions) < 2:
            raise ArgumentError(f"{where}: `extensions` must be a file extension such as '.sph'. Found: {extensions!r}")
        segments = Lazy(lambda: _list_segments(where, folder, parts, extensions))
        fetch = _FetchSegments(where, segments)
        node = ir.RandomAccessSourceNode(
            where, list(COLUMNS), lambda: len(segments.get()),
            source_sampler(where, sampler, shuffle, num_samples, num_shards, shard_id),
            fetch, origins=fetch.origins, num_workers=v.workers(where, num_parallel_workers), chunk_rows=8,
        )
        super().__init__(with_cache(where, node, cache))
