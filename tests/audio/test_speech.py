"""The speech corpora read from small real WAV files in each corpus' published layout, and compared with
MindSpore 2.10's loaders on the same files (rows as sets: MindSpore lists YesNo's files in directory
order, minddata sorted)."""

from __future__ import annotations

import json
import os
import subprocess
import wave

import numpy as np
import pytest
from peers import peer_env
from speech_rows import rows_of

import minddata as md
from minddata.dataset.speech import read_wav


def _wav(path, n: int, rate: int, seed: int) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    x = (np.random.default_rng(seed).standard_normal(n) * 3000).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(x.tobytes())


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    root = tmp_path_factory.mktemp("speech")
    for i, name in enumerate(["0_1_0_0_1_0_1_0", "1_1_0_0_1_0_1_1", "0_0_0_0_0_0_0_1"]):
        _wav(root / "yesno" / f"{name}.wav", 50 + i, 8000, i)
    (root / "lj" / "wavs").mkdir(parents=True)
    (root / "lj" / "metadata.csv").write_text(
        "LJ001-0001|Printing, in the only sense|Printing, in the only sense\n"
        "LJ001-0002|in 1200 Mr. X|in twelve hundred Mister X\n", encoding="utf-8")
    _wav(root / "lj" / "wavs" / "LJ001-0001.wav", 40, 22050, 5)
    _wav(root / "lj" / "wavs" / "LJ001-0002.wav", 30, 22050, 6)
    for k, rel in enumerate(["yes/0a7c2a8d_nohash_0.wav", "yes/0a7c2a8d_nohash_1.wav", "no/12ab_nohash_0.wav",
                             "no/99ff_nohash_2.wav"]):
        _wav(root / "sc" / rel, 20 + k, 16000, 10 + k)
    _wav(root / "sc" / "_background_noise_" / "noise.wav", 20, 16000, 30)
    (root / "sc" / "validation_list.txt").write_text("no/12ab_nohash_0.wav\n")
    (root / "sc" / "testing_list.txt").write_text("yes/0a7c2a8d_nohash_1.wav\n")
    # GTZAN: blues.00000 is in the valid split, blues.00012 and disco.00001 in test, blues.00029 and
    # disco.00005 in train; notes.txt is not a track.
    for k, track in enumerate(["blues.00000", "blues.00012", "blues.00029", "disco.00001", "disco.00005"]):
        _wav(root / "gtzan" / track.split(".")[0] / f"{track}.wav", 30 + k, 22050, 40 + k)
    (root / "gtzan" / "blues" / "notes.txt").write_text("not audio")
    tts = root / "libritts"
    for usage, speaker, chapter, utterances in [("dev-clean", 116, 288045, ["000003_000000", "000004_000001"]),
                                                ("train-clean-100", 19, 198, ["000000_000000"])]:
        folder = tts / usage / str(speaker) / str(chapter)
        lines = []
        for k, u in enumerate(utterances):
            uid = f"{speaker}_{chapter}_{u}"
            _wav(folder / f"{uid}.wav", 25 + k, 24000, 50 + k + speaker)
            lines.append(f"{uid}\tMr. Smith paid $5 ({k}).\tMister Smith paid five dollars ({k}).\n")
        (folder / f"{speaker}_{chapter}.trans.tsv").write_text("".join(lines), encoding="utf-8")
    for speaker, utterances in [("aew", ["arctic_a0001", "arctic_b0002"]), ("slt", ["arctic_a0001"])]:
        base = root / "cmu" / f"cmu_us_{speaker}_arctic"
        (base / "etc").mkdir(parents=True)
        (base / "etc" / "txt.done.data").write_text("".join(
            f'( {u} "Author of the danger trail, {speaker} {k}." )\n' for k, u in enumerate(utterances)))
        for k, u in enumerate(utterances):
            _wav(base / "wav" / f"{u}.wav", 22 + k, 16000, 70 + k)
    return root


RUNNER = """
import json, sys
sys.path.insert(0, sys.argv[1])
import mindspore.dataset as ds
from speech_rows import rows_of
print(json.dumps(rows_of(ds, sys.argv[2])))
"""


def test_loaders_match_mindspore(corpora, mindspore_python_path):
    done = subprocess.run(
        [mindspore_python_path, "-c", RUNNER, os.path.dirname(os.path.abspath(__file__)), str(corpora)],
        capture_output=True, text=True, timeout=300, env=peer_env(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ms = json.loads(done.stdout.strip().splitlines()[-1])
    mine = json.loads(json.dumps(rows_of(md, corpora)))
    for name in ms:
        assert mine[name] == ms[name], name


def test_columns_and_values(corpora):
    rows = list(md.YesNoDataset(str(corpora / "yesno"), shuffle=False).create_dict_iterator(
        num_epochs=1, output_numpy=True))
    assert [r["label"].tolist() for r in rows][0] == [0, 0, 0, 0, 0, 0, 0, 1]
    samples, rate = read_wav(str(corpora / "yesno" / "0_0_0_0_0_0_0_1.wav"))
    assert rate == 8000 and np.array_equal(rows[0]["waveform"], samples[None])
    sc = md.SpeechCommandsDataset(str(corpora / "sc"), usage="train")
    assert sc.get_dataset_size() == 2 and sc.get_col_names() == [
        "waveform", "sample_rate", "label", "speaker_id", "utterance_number"]


def test_errors_name_the_dataset_and_file(tmp_path):
    (tmp_path / "x.wav").write_bytes(b"not a wav")
    with pytest.raises(Exception, match="YesNoDataset: .*x.wav: the file name must be labels"):
        list(md.YesNoDataset(str(tmp_path)).create_dict_iterator(num_epochs=1))
    (tmp_path / "x.wav").rename(tmp_path / "0_1.wav")
    with pytest.raises(Exception, match="YesNoDataset: .*0_1.wav is not a PCM WAV file"):
        list(md.YesNoDataset(str(tmp_path)).create_dict_iterator(num_epochs=1))
    with pytest.raises(ValueError, match="SpeechCommandsDataset: `usage` must be one of"):
        md.SpeechCommandsDataset(str(tmp_path), usage="validation")
    (tmp_path / "lj").mkdir()
    with pytest.raises(Exception, match="metadata.csv"):
        list(md.LJSpeechDataset(str(tmp_path / "lj")).create_dict_iterator(num_epochs=1))



def test_gtzan_splits_and_new_loaders(corpora):
    def labels(ds):
        return sorted(str(r["label"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True))

    root = corpora / "gtzan"
    assert labels(md.GTZANDataset(str(root), usage="train")) == ["blues", "disco"]
    assert labels(md.GTZANDataset(str(root), usage="test")) == ["blues", "disco"]
    assert labels(md.GTZANDataset(str(root), usage="valid")) == ["blues"]
    assert md.GTZANDataset(str(root)).get_dataset_size() == 5
    tts = md.LibriTTSDataset(str(corpora / "libritts"), usage="dev-clean", shuffle=False)
    row = next(tts.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert row["speaker_id"] == 116 and row["chapter_id"] == 288045 and row["sample_rate"].dtype == np.uint32
    assert str(row["utterance_id"]) == "116_288045_000003_000000" and row["waveform"].shape == (1, 25)
    cmu = md.CMUArcticDataset(str(corpora / "cmu"), name="slt")
    assert cmu.get_col_names() == ["waveform", "sample_rate", "transcript", "utterance_id"]
    with pytest.raises(Exception, match="CMUArcticDataset: `name` must be one of"):
        md.CMUArcticDataset(str(corpora / "cmu"), name="xyz")
    with pytest.raises(Exception, match="GTZANDataset: `usage` must be one of"):
        md.GTZANDataset(str(root), usage="validation")


def test_a_corpus_file_of_another_rate_is_an_error(tmp_path):
    _wav(tmp_path / "rock" / "rock.00000.wav", 10, 16000, 1)
    with pytest.raises(Exception, match="GTZANDataset: .*rock.00000.wav has sample rate 16000: the corpus' files have 22050"):
        list(md.GTZANDataset(str(tmp_path)).create_dict_iterator(num_epochs=1))
