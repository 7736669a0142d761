"""Speech corpora read from their published layouts (MindSpore's ``YesNoDataset``, ``LJSpeechDataset``,
``SpeechCommandsDataset``). WAV files are read with Python's ``wave`` module: PCM, 8/16/24/32-bit,
scaled to about [-1, 1] as float32 (16-bit samples divided by 32767, as MindSpore does); a file that is
not PCM WAV is an error naming it. Files are listed in sorted order (MindSpore's YesNo order is the
directory's)."""

from __future__ import annotations

import csv
import os
import wave
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, missing, usage_splits
from minddata.dataset.base import Dataset
from minddata.errors import DataFormatError, RowError

__all__ = ["LJSpeechDataset", "SpeechCommandsDataset", "YesNoDataset", "read_wav"]


def read_wav(path: str) -> tuple[np.ndarray, int]:
    """``(samples, sample_rate)`` of a PCM WAV file: float32 (16- and 32-bit samples divided by the
    largest positive value, as MindSpore does), shape ``(time,)`` for mono and
    ``(channels, time)`` otherwise.

    Examples:
        >>> import io, wave, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "a.wav")
        >>> with wave.open(path, "wb") as w:
        ...     w.setnchannels(1); w.setsampwidth(2); w.setframerate(8000); w.writeframes(b"\\x00\\x40\\x00\\xc0")
        >>> samples, rate = read_wav(path)
        >>> samples.round(4).tolist(), rate
        ([0.5, -0.5], 8000)
    """
    with wave.open(path, "rb") as w:
        channels, width, rate, frames = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
        data = w.readframes(frames)
    if width == 1:
        samples = (np.frombuffer(data, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 3:
        raw = np.frombuffer(data, np.uint8).reshape(-1, 3)
        ints = (raw[:, 0].astype(np.int32) | raw[:, 1].astype(np.int32) << 8 | raw[:, 2].astype(np.int32) << 16)
        samples = (np.where(ints >= 1 << 23, ints - (1 << 24), ints) / float(1 << 23)).astype(np.float32)
    else:
        dtype = {2: "<i2", 4: "<i4"}[width]
        samples = (np.frombuffer(data, dtype).astype(np.float64) / float((1 << (8 * width - 1)) - 1)).astype(np.float32)
    if channels > 1:
        return np.ascontiguousarray(samples.reshape(-1, channels).T), rate
    return samples, rate


def _waveform_reader(where: str, channels_first: bool) -> Any:
    """A FileIndex reader: a wav path → the waveform (``(1, time)`` with ``channels_first`` for mono)."""

    def read(path: str, row: int) -> np.ndarray:
        try:
            samples, _ = read_wav(path)
        except (OSError, EOFError, wave.Error, KeyError) as error:
            raise RowError(f"{where}: can't read row {row}, {path} is not a PCM WAV file: {error}",
                           op=where, row=row, source=path) from None
        return samples[None] if channels_first and samples.ndim == 1 else samples

    return read


def _rate(where: str, path: str) -> int:
    try:
        with wave.open(path, "rb") as w:
            return w.getframerate()
    except (OSError, EOFError, wave.Error) as error:
        raise DataFormatError(f"{where}: {path} is not a PCM WAV file: {error}", path=path) from None


_COMMON = ("num_samples", "num_parallel_workers", "shuffle", "sampler", "num_shards", "shard_id", "cache")


class YesNoDataset(Dataset):
    """The YesNo corpus (MindSpore's ``YesNoDataset``): 60 recordings of eight Hebrew "yes"/"no"
    words, ``dataset_dir/<l0>_<l1>_..._<l7>.wav``, the file name giving the labels.

    Columns, as MindSpore's: ``waveform`` float32 ``(1, time)``, ``sample_rate`` int32 and ``label``
    int32 ``(8,)`` (1 for yes).

    Examples:
        >>> import minddata as md
        >>> md.YesNoDataset("no/such/folder")
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: YesNoDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(self, dataset_dir: str | os.PathLike, num_samples: int | None = None,
                 num_parallel_workers: int | None = None, shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None, cache: Any = None):
        where = "YesNoDataset"
        folder = dataset_folder(where, dataset_dir)

        def build() -> list[tuple]:
            rows = []
            for name in sorted(os.listdir(folder)):
                stem, ext = os.path.splitext(name)
                if ext.lower() != ".wav":
                    continue
                parts = stem.split("_")
                if not all(p in ("0", "1") for p in parts):
                    raise DataFormatError(f"{where}: {name}: the file name must be labels like 0_1_0_0_1_0_1_0.wav",
                                          path=os.path.join(folder, name))
                path = os.path.join(folder, name)
                rows.append((path, np.int32(_rate(where, path)), np.array([int(p) for p in parts], np.int32)))
            if not rows:
                raise missing(where, folder, f"{where} reads the .wav files in dataset_dir.")
            return rows

        self._index = FileIndex(where, build, file_columns=0, readers={0: _waveform_reader(where, True)})
        super().__init__(file_source(
            where, ["waveform", "sample_rate", "label"], self._index, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))


class LJSpeechDataset(Dataset):
    """LJ Speech (MindSpore's ``LJSpeechDataset``): ``dataset_dir/metadata.csv`` (``id|transcription|
    normalized transcription`` per line) and ``dataset_dir/wavs/<id>.wav``.

    Columns, as MindSpore's: ``waveform`` float32 ``(1, time)``, ``sample_rate`` int32,
    ``transcription`` and ``normalized_transcription`` strings.

    Examples:
        >>> import minddata as md
        >>> md.LJSpeechDataset("no/such/folder")
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: LJSpeechDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(self, dataset_dir: str | os.PathLike, num_samples: int | None = None,
                 num_parallel_workers: int | None = None, shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None, cache: Any = None):
        where = "LJSpeechDataset"
        folder = dataset_folder(where, dataset_dir)

        def build() -> list[tuple]:
            meta = os.path.join(folder, "metadata.csv")
            if not os.path.isfile(meta):
                raise missing(where, meta, f"{where} reads metadata.csv and wavs/ from dataset_dir.")
            rows = []
            with open(meta, encoding="utf-8", newline="") as f:
                for number, fields in enumerate(csv.reader(f, delimiter="|", quoting=csv.QUOTE_NONE), 1):
                    if not fields:
                        continue
                    if len(fields) != 3:
                        raise DataFormatError(f"{where}: {meta} line {number}: expected id|transcription|"
                                              f"normalized transcription, found {len(fields)} fields", path=meta)
                    path = os.path.join(folder, "wavs", fields[0] + ".wav")
                    if not os.path.isfile(path):
                        raise missing(where, path, f"{meta} line {number} names it.")
                    rows.append((path, np.int32(_rate(where, path)), np.array(fields[1]), np.array(fields[2])))
            return rows

        self._index = FileIndex(where, build, file_columns=0, readers={0: _waveform_reader(where, True)})
        super().__init__(file_source(
            where, ["waveform", "sample_rate", "transcription", "normalized_transcription"], self._index,
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))


class SpeechCommandsDataset(Dataset):
    """Speech Commands (MindSpore's ``SpeechCommandsDataset``): ``dataset_dir/<label>/<speaker>_nohash_
    <n>.wav``, with ``validation_list.txt`` and ``testing_list.txt`` naming the valid and test files
    (the rest is train); ``_background_noise_`` is skipped.

    Args:
        usage: ``"train"``, ``"valid"``, ``"test"`` or ``"all"`` (None: all).

    Columns, as MindSpore's: ``waveform`` float32 ``(1, time)``, ``sample_rate`` int32, ``label`` and
    ``speaker_id`` strings, ``utterance_number`` int32.

    Examples:
        >>> import minddata as md
        >>> md.SpeechCommandsDataset("no/such/folder")
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: SpeechCommandsDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(self, dataset_dir: str | os.PathLike, usage: str | None = None, num_samples: int | None = None,
                 num_parallel_workers: int | None = None, shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None, cache: Any = None):
        where = "SpeechCommandsDataset"
        folder = dataset_folder(where, dataset_dir)
        splits = set(usage_splits(where, usage, ("train", "valid", "test")))

        def listed(name: str) -> set[str]:
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                return set()
            with open(path, encoding="utf-8") as f:
                return {os.path.normpath(line.strip()) for line in f if line.strip()}

        def build() -> list[tuple]:
            valid, test = listed("validation_list.txt"), listed("testing_list.txt")
            rows = []
            for label in sorted(os.listdir(folder)):
                sub = os.path.join(folder, label)
                if label.startswith("_") or not os.path.isdir(sub):
                    continue
                for name in sorted(os.listdir(sub)):
                    if not name.lower().endswith(".wav"):
                        continue
                    rel = os.path.normpath(os.path.join(label, name))
                    split = "valid" if rel in valid else "test" if rel in test else "train"
                    if split not in splits:
                        continue
                    speaker, _, rest = os.path.splitext(name)[0].partition("_nohash_")
                    if not rest.isdigit():
                        raise DataFormatError(f"{where}: {rel}: the file name must be <speaker>_nohash_<n>.wav",
                                              path=os.path.join(sub, name))
                    path = os.path.join(sub, name)
                    rows.append((path, np.int32(_rate(where, path)), np.array(label), np.array(speaker),
                                 np.int32(int(rest))))
            return rows

        self._index = FileIndex(where, build, file_columns=0, readers={0: _waveform_reader(where, True)})
        super().__init__(file_source(
            where, ["waveform", "sample_rate", "label", "speaker_id", "utterance_number"], self._index,
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))
