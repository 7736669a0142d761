"""WebDataset shards' index files in DALI's format: ``minddata index`` / ``write_index_files`` write
what DALI's ``wds2idx`` writes, and DALI's own webdataset reader reads them (on its CPU backend).
Reading them from object storage is tested in tests/storage/test_webdataset_remote_index_files.py."""

from __future__ import annotations

import io
import tarfile

import numpy as np
import pytest
import webdataset as wds
from testkit import make_jpeg

from minddata.cli import main as cli_main
from minddata.dataset.webdataset import sidecar_path, write_index_files
from minddata.errors import ArgumentError, DataFormatError


@pytest.fixture
def shards(tmp_path):
    """Two shards written by webdataset.TarWriter (5 and 3 samples: a JPEG, a class, a text each)."""
    paths = []
    for s, count in enumerate((5, 3)):
        path = tmp_path / f"shard-{s:06d}.tar"
        with wds.TarWriter(str(path)) as writer:
            for i in range(count):
                writer.write({"__key__": f"k{s}_{i:02d}", "jpg": make_jpeg(20 + i, 14, seed=10 * s + i),
                              "cls": (s + i) % 3, "txt": f"sample {s} {i}"})
        paths.append(path)
    return paths


def test_the_index_file_is_named_as_dalis_tool_names_it():
    assert sidecar_path("/data/train/shard-000001.tar") == "/data/train/shard-000001.idx"
    assert sidecar_path("s3://bucket/a.b/part.v2.tar") == "s3://bucket/a.b/part.idx"


def test_index_files_equal_dalis_wds2idx_byte_for_byte(shards, tmp_path):
    wds2idx = pytest.importorskip("wds2idx", reason="DALI's wds2idx (in the nvidia-dali wheel, Linux x86_64 only) is not installed")
    written = write_index_files(str(tmp_path / "shard-*.tar"))
    assert written == [str(p.with_suffix(".idx")) for p in shards]
    for path in shards:
        theirs = tmp_path / f"{path.stem}.dali-idx"
        with wds2idx.IndexCreator(str(path), str(theirs), verbose=False) as creator:
            creator.create_index()
        assert path.with_suffix(".idx").read_text() == theirs.read_text()


def test_dalis_webdataset_reader_reads_the_index_files(shards, tmp_path):
    pytest.importorskip("nvidia.dali", reason="NVIDIA DALI (Linux x86_64 wheel) is not installed")
    from nvidia.dali import fn, pipeline_def

    write_index_files([str(p) for p in shards])

    @pipeline_def(batch_size=8, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def read():
        jpg, txt = fn.readers.webdataset(paths=[str(p) for p in shards], index_paths=[str(p.with_suffix(".idx")) for p in shards],
                                         ext=["jpg", "txt"], missing_component_behavior="error", random_shuffle=False)
        return jpg, txt

    pipe = read()
    pipe.build()
    jpgs, txts = pipe.run()
    got = [(bytes(np.asarray(jpgs.at(i))), bytes(np.asarray(txts.at(i)))) for i in range(8)]
    want = []
    for path in shards:
        with tarfile.open(path) as tar:
            members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
        keys = sorted({name.split(".")[0] for name in members})
        want += [(members[f"{k}.jpg"], members[f"{k}.txt"]) for k in keys]
    assert got == want


def test_a_member_name_with_a_space_is_refused_with_its_name(tmp_path):
    path = tmp_path / "odd.tar"
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo("a sample.cls")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"1"))
    with pytest.raises(DataFormatError, match=r"'a sample\.cls' has a space in its name"):
        write_index_files(str(path))
    assert not (tmp_path / "odd.idx").exists()


def test_an_index_file_given_as_a_shard_is_refused(shards, tmp_path):
    write_index_files(str(shards[0]))
    with pytest.raises(ArgumentError, match="named as an index file"):
        write_index_files(str(tmp_path / "shard-000000.*"), overwrite=True)


def test_the_command_writes_once_then_asks_for_overwrite(shards, tmp_path, capsys):
    pattern = str(tmp_path / "shard-{000000..000001}.tar")
    assert cli_main(["index", pattern]) == 0
    assert capsys.readouterr().out.splitlines() == ["wrote 2 index file(s):", *(f"  {p.with_suffix('.idx')}" for p in shards)]
    before = shards[0].with_suffix(".idx").stat().st_mtime_ns
    assert cli_main(["index", pattern]) == 2
    err = capsys.readouterr().err
    assert "minddata index: error: 2 index file(s) exist already" in err and "Pass --overwrite" in err
    assert shards[0].with_suffix(".idx").stat().st_mtime_ns == before
    assert cli_main(["index", pattern, "--overwrite"]) == 0
