"""TedliumDataset over small real SPHERE + STM files in TED-LIUM's release1/2 and release3 layouts, and
compared with MindSpore 2.10's TedliumDataset on the same files."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from loader_checks import assert_shards_partition
from peers import peer_env
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.dataset.tedlium import read_sphere, read_sphere_header
from minddata.errors import ArgumentError, DataFormatError

RATE = 16000


def write_sphere(path, samples: np.ndarray, byte_format: str = "10", coding: str = "pcm", rate: int = RATE) -> None:
    """A NIST SPHERE file of int16 ``samples`` (``(frames,)`` or ``(frames, channels)``) as sph2pipe writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    head = (f"NIST_1A\n   1024\nsample_count -i {samples.shape[0]}\nsample_n_bytes -i 2\nchannel_count -i {channels}\n"
            f"sample_byte_format -s2 {byte_format}\nsample_rate -i {rate}\nsample_coding -s{len(coding)} {coding}\n"
            "database_id -s7 TEDLIUM\nend_head\n").encode()
    order = "<" if byte_format == "01" else ">"
    path.write_bytes(head.ljust(1024, b" ") + samples.astype(f"{order}i2").tobytes())


def write_talk(root, part: str, talk: str, seed: int, byte_format: str, lines: int) -> np.ndarray:
    """``root/part/sph/<talk>.sph`` (one second) and its STM with ``lines`` segments plus one
    ignore_time_segment_in_scoring line; returns the samples."""
    samples = (np.random.default_rng(seed).standard_normal(RATE) * 4000).astype(np.int16)
    write_sphere(root / part / "sph" / f"{talk}.sph", samples, byte_format)
    text = "".join(f"{talk} 1 {talk} {0.1 * k:.2f} {0.1 * k + 0.05:.2f} <o,f0,male> words of {talk} {k}\n"
                   for k in range(lines))
    text += f"{talk} 1 inter_segment_gap 0.90 0.93 <o,,unknown> ignore_time_segment_in_scoring\n"
    (root / part / "stm").mkdir(parents=True, exist_ok=True)
    (root / part / "stm" / f"{talk}.stm").write_text(text)
    return samples


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    """``(release1 folder, release3 folder, {talk: samples})``: release1 has train (2 talks, both byte
    orders), test and dev (1 talk each): 3 + 4 + 2 + 3 = 12 rows (each talk adds its ignore line)."""
    root = tmp_path_factory.mktemp("tedlium")
    r1, r3 = root / "TEDLIUM_release1", root / "TEDLIUM_release-3"
    audio = {
        "AaronHuey_2010X": write_talk(r1, "train", "AaronHuey_2010X", 1, "01", 2),
        "AdamGrosser_2007": write_talk(r1, "train", "AdamGrosser_2007", 2, "10", 3),
        "BillGates_2010": write_talk(r1, "test", "BillGates_2010", 3, "01", 1),
        "AlGore_2009": write_talk(r1, "dev", "AlGore_2009", 4, "10", 2),
        "911Mothers_2010W": write_talk(r3, "data", "911Mothers_2010W", 5, "01", 3),
        "AalaElKhani": write_talk(r3, "data", "AalaElKhani", 6, "10", 1),
    }
    (r1 / "readme").write_text("TED-LIUM release 1")
    (r1 / "train" / "stm" / "notes.txt").write_text("not an stm file")
    return r1, r3, audio


def rows(ds):
    return list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))


def test_columns_dtypes_and_segments_of_both_byte_orders(releases):
    r1, _, audio = releases
    got = rows(md.TedliumDataset(str(r1), "release1", usage="train", shuffle=False))
    assert [str(r["talk_id"]) for r in got] == ["AaronHuey_2010X"] * 3 + ["AdamGrosser_2007"] * 4
    first = got[0]
    assert list(first) == ["waveform", "sample_rate", "transcript", "talk_id", "speaker_id", "identifier"]
    assert first["waveform"].dtype == np.float32 and first["waveform"].shape == (1, 800)
    assert first["sample_rate"].dtype == np.int32 and int(first["sample_rate"]) == RATE
    assert str(first["transcript"]) == "words of AaronHuey_2010X 0" and str(first["identifier"]) == "<o,f0,male>"
    for row in (got[1], got[4]):  # little-endian (01) and big-endian (10) files, the segment [0.1 s, 0.15 s)
        expected = audio[str(row["talk_id"])][1600:2400] / np.float32(32767)
        np.testing.assert_allclose(row["waveform"][0], expected, rtol=1e-6)


def test_ignore_time_segment_lines_are_rows(releases):
    r1, _, _ = releases
    gap = rows(md.TedliumDataset(str(r1), "release1", usage="dev", shuffle=False))[-1]
    assert str(gap["transcript"]) == "ignore_time_segment_in_scoring" and str(gap["speaker_id"]) == "inter_segment_gap"
    assert gap["waveform"].shape == (1, int(0.93 * RATE) - int(0.90 * RATE))


def test_usage_selects_the_splits_and_release3_reads_data(releases):
    r1, r3, _ = releases
    sizes = {u: md.TedliumDataset(str(r1), "release1", usage=u).get_dataset_size() for u in ("train", "test", "dev")}
    assert sizes == {"train": 7, "test": 2, "dev": 3}
    everything = rows(md.TedliumDataset(str(r1), "release2", shuffle=False))
    assert [str(r["talk_id"]) for r in everything][7:] == ["BillGates_2010"] * 2 + ["AlGore_2009"] * 3
    assert len(everything) == 12
    assert md.TedliumDataset(str(r3), "release3", usage="all").get_dataset_size() == 6


def test_shards_and_resume(releases):
    r1, _, _ = releases
    assert_shards_partition(lambda **kw: md.TedliumDataset(str(r1), "release1", shuffle=False, **kw), 3)
    assert_resumes_exactly(lambda w: md.TedliumDataset(str(r1), "release1", num_parallel_workers=w))


def test_argument_errors_name_the_rule():
    with pytest.raises(ArgumentError, match=r"`release` must be one of release1, release2, release3. Found: 'release4'"):
        md.TedliumDataset(".", "release4")
    with pytest.raises(ArgumentError, match=r"`usage` must be 'all' \(or None\) for release3"):
        md.TedliumDataset(".", "release3", usage="train")
    with pytest.raises(ArgumentError, match=r"`usage` must be one of \['train', 'test', 'dev', 'all'\] or None. Found: 'valid'"):
        md.TedliumDataset(".", "release1", usage="valid")
    with pytest.raises(ArgumentError, match=r"`extensions` must be a file extension"):
        md.TedliumDataset(".", "release1", extensions="sph")


def test_a_shorten_compressed_file_names_itself_and_the_fix(tmp_path):
    write_sphere(tmp_path / "data" / "sph" / "Talk.sph", np.zeros(100, np.int16), coding="pcm,embedded-shorten-v2.00")
    (tmp_path / "data" / "stm").mkdir(parents=True)
    (tmp_path / "data" / "stm" / "Talk.stm").write_text("Talk 1 Talk 0.0 0.001 <o,f0,male> hi\n")
    with pytest.raises(DataFormatError, match=r"Talk.sph is shorten-compressed SPHERE .*sph2pipe -f sph"):
        md.TedliumDataset(str(tmp_path), "release3").get_dataset_size()


def test_a_missing_sph_or_stm_folder_is_named(tmp_path):
    (tmp_path / "data" / "stm").mkdir(parents=True)
    (tmp_path / "data" / "stm" / "Talk.stm").write_text("Talk 1 Talk 0.0 0.001 <o,f0,male> hi\n")
    with pytest.raises(DataFormatError, match=r"data/sph/Talk.sph is missing. .*Talk.stm transcribes it"):
        md.TedliumDataset(str(tmp_path), "release3").get_dataset_size()
    with pytest.raises(DataFormatError, match=r"train/stm is missing"):
        md.TedliumDataset(str(tmp_path), "release1", usage="train").get_dataset_size()


def test_a_segment_past_the_end_of_the_audio_names_the_stm_line(tmp_path):
    write_sphere(tmp_path / "data" / "sph" / "Talk.sph", np.zeros(RATE, np.int16))
    (tmp_path / "data" / "stm").mkdir(parents=True)
    (tmp_path / "data" / "stm" / "Talk.stm").write_text("Talk 1 Talk 0.0 0.5 <o> a\nTalk 1 Talk 0.5 1.5 <o> b\n")
    with pytest.raises(Exception, match=r"row 1 \(.*Talk.stm line 2\): .*frames \[8000, 24000\) are outside"):
        rows(md.TedliumDataset(str(tmp_path), "release3", shuffle=False))


def test_sphere_reader_keeps_channels_and_header_size(tmp_path):
    stereo = np.array([[1, -1], [2, -2], [3, -3]], np.int16) * 1000
    write_sphere(tmp_path / "s.sph", stereo, "01", rate=8000)
    header = read_sphere_header(str(tmp_path / "s.sph"))
    assert (header.channel_count, header.sample_count, header.header_bytes) == (2, 3, 1024)
    samples, rate = read_sphere(str(tmp_path / "s.sph"), 1, 3)
    assert rate == 8000 and samples.shape == (2, 2)
    np.testing.assert_allclose(samples * 32767, [[2000, 3000], [-2000, -3000]], rtol=1e-6)


MINDSPORE_SIDE = """
import json, sys
import mindspore.dataset as ds
out = {}
for name, release, usage in [("r1_all", "release1", None), ("r1_train", "release1", "train"),
                             ("r1_test", "release1", "test"), ("r3", "release3", "all")]:
    folder = sys.argv[1] if release == "release1" else sys.argv[2]
    d = ds.TedliumDataset(folder, release, usage=usage, shuffle=False)
    rows = [{k: [str(v.dtype)[:2] if v.dtype.kind == "U" else str(v.dtype), list(v.shape),
                 None if k == "waveform" else v.tolist()] for k, v in r.items()}
            for r in d.create_dict_iterator(num_epochs=1, output_numpy=True)]
    out[name] = {"columns": d.get_col_names(), "size": d.get_dataset_size(), "rows": sorted(rows, key=json.dumps)}
print(json.dumps(out))
"""


def test_rows_match_mindspore(releases, mindspore_python_path):
    """Every column, dtype and shape and every text value as MindSpore 2.10 gives them, rows compared as
    sets (MindSpore orders rows by the text of their line number). The waveform's values are left out:
    MindSpore 2.10's reader returns zeros for every sample (the tests above check ours against the files)."""
    r1, r3, _ = releases
    done = subprocess.run([mindspore_python_path, "-c", MINDSPORE_SIDE, str(r1), str(r3)], capture_output=True,
                          text=True, timeout=300, env=peer_env())
    assert done.returncode == 0, done.stderr[-3000:]
    ms = json.loads(done.stdout.strip().splitlines()[-1])
    for name, release, usage in [("r1_all", "release1", None), ("r1_train", "release1", "train"),
                                 ("r1_test", "release1", "test"), ("r3", "release3", "all")]:
        d = md.TedliumDataset(str(r1 if release == "release1" else r3), release, usage=usage, shuffle=False)
        mine = [{k: [str(v.dtype)[:2] if v.dtype.kind == "U" else str(v.dtype), list(v.shape),
                     None if k == "waveform" else v.tolist()] for k, v in r.items()} for r in rows(d)]
        assert d.get_col_names() == ms[name]["columns"] and d.get_dataset_size() == ms[name]["size"], name
        assert sorted(json.loads(json.dumps(mine)), key=json.dumps) == ms[name]["rows"], name
