"""Speech and music corpora read from their published layouts (MindSpore's ``YesNoDataset``,
``LJSpeechDataset``, ``SpeechCommandsDataset``, ``GTZANDataset``, ``LibriTTSDataset``,
``CMUArcticDataset``). WAV files are read with Python's ``wave`` module: PCM, 8/16/24/32-bit,
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
from minddata.errors import ArgumentError, DataFormatError, RowError

__all__ = [
    "CMUArcticDataset", "GTZANDataset", "LJSpeechDataset", "LibriTTSDataset", "SpeechCommandsDataset", "YesNoDataset",
    "read_wav",
]


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


def _waveform_reader(where: str, channels_first: bool, rate: int | None = None) -> Any:
    """A FileIndex reader: a wav path → the waveform (``(1, time)`` with ``channels_first`` for mono);
    with ``rate``, a file of another sample rate is an error (the corpus' rate, as MindSpore checks)."""

    def read(path: str, row: int) -> np.ndarray:
        try:
            samples, found = read_wav(path)
        except (OSError, EOFError, wave.Error, KeyError) as error:
            raise RowError(f"{where}: can't read row {row}, {path} is not a PCM WAV file: {error}",
                           op=where, row=row, source=path) from None
        if rate is not None and found != rate:
            raise RowError(f"{where}: can't read row {row}, {path} has sample rate {found}: the corpus' files have "
                           f"{rate}", op=where, row=row, source=path)
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


GTZAN_GENRES = ("blues", "classical", "country", "disco", "hiphop", "jazz", "metal", "pop", "reggae", "rock")

# The fault-filtered, artist-disjoint splits of GTZAN (Kereliuk, Sturm and Larsen 2015), as MindSpore
# and torchaudio use them: genre -> track number runs (inclusive).
_GTZAN_SPLITS: dict[str, dict[str, tuple]] = {
    "train": {
        "blues": ((29, 49), (73, 97)), "classical": ((30, 33), (43, 48), (50, 67), (80, 99)),
        "country": ((19, 26), (28, 29), (65, 99)),
        "disco": (5, (15, 20), (22, 37), (39, 45), 47, 49, (53, 54), (56, 57), 59, 61, 70, (73, 74), 89),
        "hiphop": ((2, 25), (28, 29), (31, 38), (41, 42), (55, 61), (77, 80)),
        "jazz": ((0, 1), (11, 24), 41, (47, 72)),
        "metal": ((2, 3), 5, 21, 24, 35, (46, 57), (59, 66), 69, (71, 72), (79, 80), 84, 86, (89, 99)),
        "pop": ((2, 9), (11, 12), (16, 20), (23, 29), (31, 36), (38, 42), 44, 46, (49, 50), 80, (97, 99)),
        "reggae": ((0, 2), 4, 6, 9, (11, 12), (14, 32), (42, 45), (49, 51), (54, 60), 63, 69),
        "rock": ((0, 9), (16, 26), (57, 70), (91, 99)),
    },
    "valid": {
        "blues": ((0, 11), (50, 60)), "classical": ((0, 10), (68, 76)),
        "country": ((0, 7), (9, 18), 27, (41, 42), 45, 49),
        "disco": (0, (2, 4), (6, 14), 46, 48, 52, (67, 68), 72, 75, 90, 95),
        "hiphop": ((81, 98),), "jazz": ((2, 10), (25, 32)),
        "metal": ((0, 1), (6, 11), (16, 20), (36, 37), 68, (76, 77), (81, 82)),
        "pop": (10, 53, 55, (58, 62), 81, (83, 86)),
        "reggae": ((61, 62), 70, 72, 74, (76, 78), 85, (92, 99)),
        "rock": (38, (49, 56), (71, 85)),
    },
    "test": {
        "blues": ((12, 28), (61, 72), (98, 99)), "classical": ((11, 29), (34, 41), 49, (77, 79)),
        "country": ((30, 40), (43, 44), (46, 48), (50, 51), (53, 64)),
        "disco": (1, 21, 58, (62, 66), 69, (76, 88), (91, 94), (96, 97), 99),
        "hiphop": (0, (26, 27), 30, 40, (43, 45), (51, 54), (62, 75), 99),
        "jazz": ((73, 99),),
        "metal": ((12, 15), (22, 23), (25, 33), (38, 39), 67, 70, (73, 75), 78, 83, 85, (87, 88)),
        "pop": ((0, 1), (13, 14), 43, (63, 66), (69, 79), 82, (88, 96)),
        "reggae": ((34, 40), (46, 48), (52, 53), (64, 68), 71, 79, (82, 84), (87, 90)),
        "rock": ((10, 15), (27, 37), (39, 48), (86, 90)),
    },
}


def gtzan_split(usage: str) -> list[str]:
    """The track names (``blues.00029``) of a GTZAN split, in MindSpore's order."""
    names = []
    for genre in GTZAN_GENRES:
        for run in _GTZAN_SPLITS[usage][genre]:
            low, high = run if isinstance(run, tuple) else (run, run)
            names.extend(f"{genre}.{n:05d}" for n in range(low, high + 1))
    return names


class GTZANDataset(Dataset):
    """GTZAN music genres (MindSpore's ``GTZANDataset``): ``dataset_dir/<genre>/<genre>.<nnnnn>.wav``,
    22050 Hz.

    Args:
        usage: ``"train"``, ``"valid"``, ``"test"`` (the fault-filtered splits MindSpore and torchaudio
            use; a listed file that is missing is skipped) or ``"all"`` (every ``<name>.<n>.wav`` of the
            ten genre folders; None: all).

    Columns, as MindSpore's: ``waveform`` float32 ``(1, time)``, ``sample_rate`` uint32 (22050),
    ``label`` string (the genre).

    Examples:
        >>> import minddata as md
        >>> md.GTZANDataset("no/such/folder")
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: GTZANDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(self, dataset_dir: str | os.PathLike, usage: str | None = None, num_samples: int | None = None,
                 num_parallel_workers: int | None = None, shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None, cache: Any = None):
        where = "GTZANDataset"
        folder = dataset_folder(where, dataset_dir)
        split = usage_splits(where, usage, ("train", "valid", "test"))
        split = "all" if len(split) > 1 else split[0]

        def build() -> list[tuple]:
            rows = []
            if split == "all":
                for genre in GTZAN_GENRES:
                    sub = os.path.join(folder, genre)
                    if not os.path.isdir(sub):
                        continue
                    for name in sorted(os.listdir(sub)):
                        stem, ext = os.path.splitext(name)
                        if ext == ".wav" and "." in stem:
                            rows.append((os.path.join(sub, name), np.uint32(22050), np.array(genre)))
            else:
                for track in gtzan_split(split):
                    genre = track.split(".")[0]
                    path = os.path.join(folder, genre, track + ".wav")
                    if os.path.isfile(path):
                        rows.append((path, np.uint32(22050), np.array(genre)))
            if not rows:
                raise missing(where, folder, f"{where} reads <genre>/<genre>.<n>.wav under dataset_dir.")
            return rows

        self._index = FileIndex(where, build, file_columns=0, readers={0: _waveform_reader(where, True, 22050)})
        super().__init__(file_source(
            where, ["waveform", "sample_rate", "label"], self._index, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))


LIBRITTS_USAGES = ("dev-clean", "dev-other", "test-clean", "test-other", "train-clean-100", "train-clean-360",
                   "train-other-500")


class LibriTTSDataset(Dataset):
    """LibriTTS (MindSpore's ``LibriTTSDataset``): ``dataset_dir/<usage>/<speaker>/<chapter>/`` holding
    ``<speaker>_<chapter>.trans.tsv`` (``utterance id<TAB>original text<TAB>normalized text`` per line)
    and ``<utterance id>.wav`` (24000 Hz); an utterance id is ``<speaker>_<chapter>_<n>_<m>``.

    Args:
        usage: one of ``"dev-clean"``, ``"dev-other"``, ``"test-clean"``, ``"test-other"``,
            ``"train-clean-100"``, ``"train-clean-360"``, ``"train-other-500"``, or ``"all"`` (None: all).

    Columns, as MindSpore's: ``waveform`` float32 ``(1, time)``, ``sample_rate`` uint32 (24000),
    ``original_text`` and ``normalized_text`` strings, ``speaker_id`` and ``chapter_id`` uint32,
    ``utterance_id`` string.

    Examples:
        >>> import minddata as md
        >>> md.LibriTTSDataset("no/such/folder")
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: LibriTTSDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(self, dataset_dir: str | os.PathLike, usage: str | None = None, num_samples: int | None = None,
                 num_parallel_workers: int | None = None, shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None, cache: Any = None):
        where = "LibriTTSDataset"
        folder = dataset_folder(where, dataset_dir)
        usages = usage_splits(where, usage, LIBRITTS_USAGES)

        def build() -> list[tuple]:
            rows = []
            for part in usages:
                top = os.path.join(folder, part)
                for here, dirs, files in sorted(os.walk(top)):
                    dirs.sort()
                    for name in sorted(files):
                        if name.endswith(".trans.tsv") and len(name) > len(".trans.tsv"):
                            rows.extend(_libritts_rows(where, os.path.join(here, name), top))
            if not rows:
                raise missing(where, folder, f"{where} reads <usage>/<speaker>/<chapter>/*.trans.tsv and their "
                                             ".wav files under dataset_dir.")
            return rows

        self._index = FileIndex(where, build, file_columns=0, readers={0: _waveform_reader(where, True, 24000)})
        super().__init__(file_source(
            where, ["waveform", "sample_rate", "original_text", "normalized_text", "speaker_id", "chapter_id",
                    "utterance_id"], self._index,
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))


def _libritts_rows(where: str, tsv: str, top: str) -> list[tuple]:
    rows = []
    with open(tsv, encoding="utf-8", newline="") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            utterance, _, rest = line.partition("\t")
            original, _, normalized = rest.partition("\t")
            parts = utterance.split("_")
            if len(parts) != 4 or not (parts[0].isdigit() and parts[1].isdigit()):
                raise DataFormatError(f"{where}: {tsv} line {number}: the utterance id must be "
                                      f"<speaker>_<chapter>_<n>_<m>. Found: {utterance!r}", path=tsv)
            path = os.path.join(top, parts[0], parts[1], utterance + ".wav")
            if not os.path.isfile(path):
                raise missing(where, path, f"{tsv} line {number} names it.")
            rows.append((path, np.uint32(24000), np.array(original), np.array(normalized), np.uint32(int(parts[0])),
                         np.uint32(int(parts[1])), np.array(utterance)))
    return rows


CMU_ARCTIC_NAMES = ("aew", "ahw", "aup", "awb", "axb", "bdl", "clb", "eey", "fem", "gka", "jmk", "ksp", "ljm", "lnh",
                    "rms", "rxr", "slp", "slt")


class CMUArcticDataset(Dataset):
    """CMU Arctic (MindSpore's ``CMUArcticDataset``): ``dataset_dir/cmu_us_<name>_arctic/etc/
    txt.done.data`` (lines ``( arctic_a0001 "transcript" )``) and ``.../wav/<utterance id>.wav``
    (16000 Hz), rows in the order of txt.done.data.

    Args:
        name: the speaker, one of ``aew``, ``ahw``, ``aup``, ``awb``, ``axb``, ``bdl``, ``clb``, ``eey``,
            ``fem``, ``gka``, ``jmk``, ``ksp``, ``ljm``, ``lnh``, ``rms``, ``rxr``, ``slp``, ``slt``
            (None: ``aew``).

    Columns, as MindSpore's: ``waveform`` float32 ``(1, time)``, ``sample_rate`` uint32 (16000),
    ``transcript`` and ``utterance_id`` strings (``a0001`` for ``arctic_a0001.wav``).

    Examples:
        >>> import minddata as md
        >>> md.CMUArcticDataset("no/such/folder")
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: CMUArcticDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(self, dataset_dir: str | os.PathLike, name: str | None = None, num_samples: int | None = None,
                 num_parallel_workers: int | None = None, shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None, cache: Any = None):
        where = "CMUArcticDataset"
        folder = dataset_folder(where, dataset_dir)
        speaker = "aew" if name is None else name
        if speaker not in CMU_ARCTIC_NAMES:
            raise ArgumentError(f"{where}: `name` must be one of {list(CMU_ARCTIC_NAMES)} or None. Found: {name!r}")
        base = os.path.join(folder, f"cmu_us_{speaker}_arctic")

        def build() -> list[tuple]:
            labels = os.path.join(base, "etc", "txt.done.data")
            if not os.path.isfile(labels):
                raise missing(where, labels, f"{where} reads cmu_us_<name>_arctic/etc/txt.done.data and wav/.")
            rows = []
            with open(labels, encoding="utf-8", newline="") as f:
                for number, line in enumerate(f, 1):
                    line = line.rstrip("\r\n")
                    first = line.find('"')
                    second = line.find('"', first + 1) if first >= 0 else -1
                    if second < 0 or first < 3:
                        raise DataFormatError(f"{where}: {labels} line {number}: expected "
                                              f'( <utterance id> "<transcript>" ). Found: {line!r}', path=labels)
                    utterance = line[2 : first - 1]
                    path = os.path.join(base, "wav", utterance + ".wav")
                    if not os.path.isfile(path):
                        raise missing(where, path, f"{labels} line {number} names it.")
                    # The utterance_id column drops the "arctic_" of the file name, as MindSpore's and torchaudio's.
                    short = utterance.split("_", 1)[1] if "_" in utterance else utterance
                    rows.append((path, np.uint32(16000), np.array(line[first + 1 : second]), np.array(short)))
            if not rows:
                raise missing(where, labels, f"{where} reads one utterance per line of txt.done.data.")
            return rows

        self._index = FileIndex(where, build, file_columns=0, readers={0: _waveform_reader(where, True, 16000)})
        super().__init__(file_source(
            where, ["waveform", "sample_rate", "transcript", "utterance_id"], self._index,
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))
