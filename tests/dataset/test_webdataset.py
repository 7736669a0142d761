"""WebDataset tar shards: reading (``md.WebDataset``) and writing (``Dataset.save(file_type="webdataset")``,
``minddata convert --format webdataset``), checked both ways against the real ``webdataset`` package."""

from __future__ import annotations

import io
import json
import os
import tarfile

import numpy as np
import pytest
import webdataset as wds
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from loader_checks import assert_shards_partition
from test_resume import _read
from testkit import dict_rows, make_jpeg

import minddata as md
from minddata import vision
from minddata.cli import main as cli_main
from minddata.errors import ArgumentError, DataFormatError, RowError


def _write_wds(path, samples):
    with wds.TarWriter(str(path)) as writer:
        for sample in samples:
            writer.write(sample)


def _sample(i, prefix=""):
    return {"__key__": f"{prefix}s{i:03d}", "jpg": make_jpeg(16 + i % 5, 12, seed=i), "cls": i % 4,
            "json": {"i": i}, "txt": f"text {i}"}


@pytest.fixture
def shards(tmp_path):
    """Three shards written by webdataset.TarWriter, 6 + 4 + 2 samples with real JPEGs."""
    start = 0
    for k, n in enumerate((6, 4, 2)):
        _write_wds(tmp_path / f"shard-{k:06d}.tar", [_sample(start + i) for i in range(n)])
        start += n
    return str(tmp_path / "shard-{000000..000002}.tar")


def _keys(ds, epochs=1):
    return [str(row["__key__"]) for row in dict_rows(ds, epochs)]


def _tar(path, members):
    """A tar of ``(name, bytes)`` members, written with tarfile (no webdataset conventions applied)."""
    with tarfile.open(path, "w") as tar:
        for name, data in members:
            if data is None:
                info = tarfile.TarInfo(name)
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
                continue
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


# -- reading ---------------------------------------------------------------------------------------


def test_columns_are_the_key_and_every_extension(shards):
    assert md.WebDataset(shards).get_col_names() == ["__key__", "cls", "jpg", "json", "txt"]


def test_values_have_the_documented_types(shards):
    row = dict_rows(md.WebDataset(shards, shuffle=False))[3]
    expected = _sample(3)
    assert str(row["__key__"]) == "s003"
    assert row["jpg"].dtype == np.uint8 and row["jpg"].ndim == 1 and row["jpg"].tobytes() == expected["jpg"]
    assert row["cls"].dtype == np.int64 and row["cls"].shape == () and int(row["cls"]) == 3
    assert row["json"].dtype.kind == "U" and json.loads(str(row["json"])) == {"i": 3}
    assert row["txt"].dtype.kind == "U" and str(row["txt"]) == "text 3"


def test_unshuffled_order_is_shard_then_tar_order(shards):
    assert _keys(md.WebDataset(shards, shuffle=False)) == [f"s{i:03d}" for i in range(12)]


def test_decode_takes_the_jpg_column_as_it_is(shards):
    ds = md.WebDataset(shards, columns_list=["jpg", "cls"], shuffle=False).map(vision.Decode(), input_columns="jpg")
    images = [row["jpg"] for row in dict_rows(ds)]
    assert [im.shape for im in images[:3]] == [(12, 16, 3), (12, 17, 3), (12, 18, 3)]


def test_columns_list_picks_and_orders_columns(shards):
    ds = md.WebDataset(shards, columns_list=["txt", "__key__"], shuffle=False)
    assert ds.get_col_names() == ["txt", "__key__"]
    assert [(str(r["txt"]), str(r["__key__"])) for r in dict_rows(ds)][:2] == [("text 0", "s000"), ("text 1", "s001")]


def test_a_glob_a_list_and_braces_name_the_same_shards(shards, tmp_path):
    names = [str(tmp_path / f"shard-{k:06d}.tar") for k in range(3)]
    expected = _keys(md.WebDataset(shards, shuffle=False))
    assert _keys(md.WebDataset(str(tmp_path / "shard-*.tar"), shuffle=False)) == expected
    assert _keys(md.WebDataset(names, shuffle=False)) == expected


def test_grouping_matches_the_webdataset_package_on_odd_members(tmp_path):
    path = _tar(tmp_path / "odd.tar", [
        ("dir", None),                      # not a regular file: skipped
        ("__meta__", b"skipped"),           # metadata: skipped
        ("README", b"no extension"),        # no extension: skipped
        ("dir/a.b.seg.PNG", b"\x01\x02"),   # key dir/a, extension b.seg.png
        ("dir/a.b.cls", b"7"),
        ("dir/c.b.seg.png", b"\x03"),
        ("dir/c.b.cls", b" 8\n"),
        ("dir/a.b.cls", b"9"),              # the same key again, not adjacent: a new sample
        ("dir/a.b.seg.png", b"\x04"),
    ])
    ours = [(str(r["__key__"]), r["b.seg.png"].tobytes(), int(r["b.cls"])) for r in dict_rows(md.WebDataset(path, shuffle=False))]
    theirs = [(s["__key__"], s["b.seg.png"], int(s["b.cls"])) for s in wds.WebDataset(path, shardshuffle=False)]
    assert ours == theirs == [("dir/a", b"\x01\x02", 7), ("dir/c", b"\x03", 8), ("dir/a", b"\x04", 9)]


_MEMBER_NAMES = st.sampled_from(["a.jpg", "a.cls", "b.txt", "d/e.f.png", "__meta__", "noext", "x" * 90 + ".jpg",
                                  "deep/" * 25 + "k.jpg", "k\u00e9y.txt", "s p a c e.json"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(members=st.lists(st.tuples(_MEMBER_NAMES, st.sampled_from(["file", "folder", "symlink", "empty"]),
                                  st.integers(0, 1500)), max_size=8),
       tar_format=st.sampled_from([tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT, tarfile.PAX_FORMAT]))
def test_the_plain_header_walk_reads_what_tarfile_reads(tmp_path, members, tar_format):
    """Shards of plain ustar/GNU headers are indexed by a walk of their headers; it must find the same
    (name, offset, size) members as tarfile, and leave to tarfile every shard it does not understand."""
    from minddata.dataset import webdataset as impl

    path = tmp_path / "t.tar"
    with tarfile.open(path, "w", format=tar_format) as tar:
        for name, kind, size in members:
            info = tarfile.TarInfo(name)
            if kind == "folder":
                info.type = tarfile.DIRTYPE
            elif kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, "a.jpg"
            else:
                info.size = 0 if kind == "empty" else size
            try:
                tar.addfile(info, io.BytesIO(bytes(range(256)) * 6) if info.isreg() else None)
            except ValueError:  # a name this format can't hold (ustar: too long, not ASCII)
                continue
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        expected = list(impl._tarfile_members("t", str(path), f, size))
        walked = impl._plain_members(lambda offset: os.pread(f.fileno(), 512, offset), size)
    uses_pax = tar_format == tarfile.PAX_FORMAT and any(n.startswith("k\u00e9") or len(n) > 100 for n, _, _ in members)
    if walked is None:
        assert uses_pax or tar_format == tarfile.GNU_FORMAT and any(len(n) >= 100 for n, _, _ in members) or not members
    else:
        assert walked == expected


@example(b"\xff" * 512)  # the largest sum: each 256-byte half just below Adler-32's modulus
@example(b"\xff" * 256)
@given(data=st.binary(max_size=512))
def test_a_headers_byte_sum_is_exact_for_any_bytes(data):
    """The header checksum's byte sum (taken from Adler-32 for speed) equals Python's sum."""
    from minddata.dataset import webdataset as impl

    assert impl._byte_sum(data) == sum(data)


def test_a_header_with_a_wrong_checksum_is_not_read_as_plain():
    from minddata.dataset import webdataset as impl

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo("a.jpg")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
    header = bytearray(out.getvalue()[:512])
    assert impl._header_fields(bytes(header)) == (b"a.jpg", ord("0"), 3)
    header[0] ^= 0x80  # one bit of the name: the stored checksum no longer matches
    assert impl._header_fields(bytes(header)) is None


def test_header_blocks_read_in_pieces_are_the_streams_bytes_at_any_offset():
    from minddata.dataset import webdataset as impl

    data = bytes(range(256)) * 8000

    class ShortReads:  # a file's positional reads, at most 1,000 bytes each (as a body gives them)
        def read_on(self, offset, buffer):
            chunk = data[offset:offset + min(len(buffer), 1000)]
            buffer[:len(chunk)] = chunk
            return len(chunk)

    blocks = impl._Blocks(ShortReads(), piece=4096)
    for offset in (0, 512, 3584, 4000, 1_000_000, 1_000_512, 2_047_488, 500_000, len(data) - 100, len(data)):
        assert blocks(offset) == data[offset:offset + 512]


def test_dataset_size_counts_samples(shards):
    assert md.WebDataset(shards).get_dataset_size() == 12
    assert md.WebDataset(shards, num_shards=5, shard_id=0).get_dataset_size() == 3


def test_num_samples_caps_an_epoch(shards):
    assert len(_keys(md.WebDataset(shards, num_samples=5))) == 5


# -- shuffle, shards, resume -----------------------------------------------------------------------


def test_shuffle_is_the_same_for_a_seed(shards):
    md.config.set_seed(3)
    first = _keys(md.WebDataset(shards), epochs=2)
    md.config.set_seed(3)
    assert _keys(md.WebDataset(shards), epochs=2) == first
    assert sorted(first[:12]) == sorted(first[12:]) and first[:12] != first[12:]  # a new order per epoch


def test_shuffle_files_keeps_each_shards_samples_together(shards):
    md.config.set_seed(5)
    keys = _keys(md.WebDataset(shards, shuffle=md.Shuffle.FILES))
    blocks = [keys[i:i + n] for i, n in ((0, 6), (6, 4), (10, 2))]
    assert sorted(keys) == [f"s{i:03d}" for i in range(12)]
    assert any(block == sorted(block) for block in blocks)


def test_shards_partition_the_samples(shards):
    assert_shards_partition(lambda **kw: md.WebDataset(shards, **kw), 3)
    assert_shards_partition(lambda **kw: md.WebDataset(shards, shuffle=False, **kw), 4)


def test_state_saved_mid_epoch_restores_the_rest(shards):
    md.config.set_seed(9)
    full = _keys(md.WebDataset(shards, num_parallel_workers=2), epochs=2)
    it = md.WebDataset(shards, num_parallel_workers=2).create_dict_iterator(num_epochs=2, output_numpy=True)
    before = [str(next(it)["__key__"]) for _ in range(7)]
    state = json.loads(json.dumps(it.get_state()))
    it.close()
    resumed = md.WebDataset(shards, num_parallel_workers=3).create_dict_iterator(num_epochs=2, output_numpy=True, state=state)
    after = [str(row["__key__"]) for _ in range(2) for row in resumed]
    assert before + after == full


@pytest.fixture(scope="module")
def property_shards(tmp_path_factory):
    root = tmp_path_factory.mktemp("wds_property")
    start = 0
    for k, n in enumerate((5, 3, 7)):
        _write_wds(root / f"p-{k}.tar", [{"__key__": f"k{start + i:03d}", "jpg": make_jpeg(8, 8, seed=start + i),
                                          "cls": start + i} for i in range(n)])
        start += n
    return str(root / "p-{0..2}.tar")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(workers=st.integers(1, 4), stop=st.integers(0, 30), resumed_workers=st.integers(1, 4),
       shuffle=st.sampled_from([True, False, "files", "infile"]), seed=st.integers(0, 2**31))
def test_rows_do_not_depend_on_workers_and_resume_exactly_at_any_point(property_shards, workers, stop,
                                                                      resumed_workers, shuffle, seed):
    def build(w):
        return md.WebDataset(property_shards, num_parallel_workers=w, shuffle=shuffle).map(
            vision.Decode(), input_columns="jpg")

    md.config.set_seed(seed)
    full = _read(build(workers).create_tuple_iterator(num_epochs=2, output_numpy=True))
    md.config.set_seed(seed)
    assert _read(build(resumed_workers).create_tuple_iterator(num_epochs=2, output_numpy=True)) == full
    md.config.set_seed(seed)
    it = build(workers).create_tuple_iterator(num_epochs=2, output_numpy=True)
    before = _read(it, stop)
    state = it.get_state()
    it.close()
    resumed = build(resumed_workers).create_tuple_iterator(num_epochs=2, output_numpy=True, state=state)
    assert before + _read(resumed) == full


# -- missing members and bad files -----------------------------------------------------------------


@pytest.fixture
def ragged(tmp_path):
    """A shard whose second sample has no .cls member."""
    return _tar(tmp_path / "ragged.tar", [("a.jpg", b"\xff\xd8"), ("a.cls", b"1"), ("b.jpg", b"\xff\xd8"),
                                           ("c.jpg", b"\xff\xd8"), ("c.cls", b"3")])


def test_a_missing_member_names_the_shard_and_the_key(ragged):
    with pytest.raises(RowError, match=r"ragged\.tar, sample 'b' \(row 1\) has no member cls"):
        dict_rows(md.WebDataset(ragged, columns_list=["jpg", "cls"], shuffle=False))


def test_a_missing_member_is_skipped_under_skip_mode(ragged):
    md.config.set_error_samples_mode("skip")
    ds = md.WebDataset(ragged, columns_list=["__key__", "cls"], shuffle=False)
    assert [(str(r["__key__"]), int(r["cls"])) for r in dict_rows(ds)] == [("a", 1), ("c", 3)]


def test_a_column_no_sample_has_is_an_error(shards):
    with pytest.raises(DataFormatError, match=r"columns_list names \['png'\].*Extensions found: \['cls', 'jpg'"):
        md.WebDataset(shards, columns_list=["png"]).get_dataset_size()


def test_a_cls_that_is_not_an_integer_names_the_member(tmp_path):
    path = _tar(tmp_path / "bad.tar", [("x.cls", b"seven")])
    with pytest.raises(RowError, match=r"bad\.tar, member x\.cls.*ASCII integer; found b'seven'"):
        dict_rows(md.WebDataset(path))


def test_two_members_with_one_extension_in_a_sample_are_an_error(tmp_path):
    path = _tar(tmp_path / "dup.tar", [("x.jpg", b"1"), ("x.JPG", b"2")])
    with pytest.raises(DataFormatError, match=r"dup\.tar: sample 'x' has two members with the extension 'jpg'"):
        md.WebDataset(path)


def _truncations(path):
    size = os.path.getsize(path)
    with tarfile.open(path) as tar:
        members = tar.getmembers()
    second, last = members[1], members[-1]
    data_end = last.offset_data + -(-last.size // 512) * 512
    assert size > data_end
    return {"inside a member's data": second.offset_data + 3, "inside a header": second.offset + 100,
            "without the end blocks": data_end}


@pytest.mark.parametrize("where", ["inside a member's data", "inside a header", "without the end blocks"])
def test_a_truncated_shard_names_the_file_the_offset_and_the_fix(shards, tmp_path, where):
    path = tmp_path / "shard-000001.tar"
    cut = _truncations(path)[where]
    os.truncate(path, cut)
    with pytest.raises(DataFormatError, match=r"shard-000001\.tar is not a complete tar file: .* at byte offset \d+\. "
                       r".*copy or write it again"):
        md.WebDataset(shards)


def test_a_damaged_header_names_its_offset(shards, tmp_path):
    path = tmp_path / "shard-000000.tar"
    with tarfile.open(path) as tar:
        third = tar.getmembers()[2].offset
    with open(path, "r+b") as f:
        f.seek(third + 10)
        f.write(b"garbage!")
    with pytest.raises(DataFormatError, match=rf"damaged member header .* at byte offset {third}\."):
        md.WebDataset(shards)


def test_a_compressed_shard_says_to_decompress_it(tmp_path):
    path = tmp_path / "s.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.addfile(tarfile.TarInfo("a.txt"))
    with pytest.raises(DataFormatError, match=r"s\.tar\.gz is a gzip-compressed file.*gunzip -k s\.tar\.gz"):
        md.WebDataset(str(path))


def test_a_missing_file_names_it(tmp_path):
    with pytest.raises(ArgumentError, match=r"shard .*nope\.tar is not a file"):
        md.WebDataset(str(tmp_path / "nope.tar"))


def test_a_brace_pattern_with_a_missing_shard_names_the_pattern(shards, tmp_path):
    pattern = str(tmp_path / "shard-{000000..000003}.tar")
    with pytest.raises(ArgumentError, match=r"shard-000003\.tar \(from the pattern .*shard-\{000000\.\.000003\}\.tar\)"):
        md.WebDataset(pattern)


def test_an_empty_glob_names_the_pattern(tmp_path):
    with pytest.raises(ArgumentError, match=r"the pattern .*none-\*\.tar matches no file"):
        md.WebDataset(str(tmp_path / "none-*.tar"))


def test_a_pipe_url_is_refused():
    with pytest.raises(ArgumentError, match="pipe: commands are not run"):
        md.WebDataset("pipe:cat x.tar", storage_options={"anon": True})


@pytest.mark.parametrize("kwargs, message", [
    ({"num_shards": -1, "shard_id": 0}, "`num_shards` must be greater than 0. Found: -1"),
    ({"num_parallel_workers": 0}, "num_parallel_workers"),
    ({"shuffle": "sometimes"}, "`shuffle` must be True, False"),
    ({"storage_options": "anon"}, "`storage_options` must be a dict or None. Found: 'anon'"),
    ({"columns_list": ["jpg", "jpg"]}, "names a column more than once"),
])
def test_bad_arguments_name_the_argument_and_the_value(shards, kwargs, message):
    with pytest.raises(ArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        md.WebDataset(shards, **kwargs)


# -- writing ---------------------------------------------------------------------------------------


class _Rows:
    """Row i: a JPEG, its label, a caption and a float mask."""

    def __getitem__(self, i):
        return (np.frombuffer(make_jpeg(10, 8, seed=i), np.uint8), np.int64(i), np.array(f"row {i}"),
                np.arange(i * 4, i * 4 + 4, dtype=np.float32).reshape(2, 2))

    def __len__(self):
        return 7


def _pipeline():
    return md.GeneratorDataset(_Rows(), ["jpg", "cls", "txt", "mask"], shuffle=False)


def test_saved_shards_read_back_in_the_webdataset_package(tmp_path):
    _pipeline().save(str(tmp_path / "out.tar"), num_files=2, file_type="webdataset")
    samples = list(wds.WebDataset(str(tmp_path / "out-{000000..000001}.tar"), shardshuffle=False).decode("rgb8"))
    by_key = {s["__key__"]: s for s in samples}
    assert sorted(by_key) == [f"{i:09d}" for i in range(7)]
    for i in range(7):
        s = by_key[f"{i:09d}"]
        assert s["jpg"].shape == (8, 10, 3)  # webdataset's decoder opened the JPEG bytes
        assert (s["cls"], s["txt"]) == (i, f"row {i}")
        np.testing.assert_array_equal(s["mask.npy"], np.arange(i * 4, i * 4 + 4, dtype=np.float32).reshape(2, 2))


def test_saved_shards_read_back_in_minddata(tmp_path):
    _pipeline().save(str(tmp_path / "one.tar"), file_type="webdataset")
    rows = dict_rows(md.WebDataset(str(tmp_path / "one.tar"), shuffle=False))
    assert [int(r["cls"]) for r in rows] == list(range(7))
    assert rows[2]["jpg"].tobytes() == make_jpeg(10, 8, seed=2)
    assert np.load(io.BytesIO(rows[3]["mask.npy"].tobytes())).tolist() == [[12, 13], [14, 15]]


def test_save_uses_the_key_column(tmp_path, shards):
    md.WebDataset(shards, shuffle=False).save(str(tmp_path / "copy.tar"), file_type="webdataset")
    assert [s["__key__"] for s in wds.WebDataset(str(tmp_path / "copy.tar"), shardshuffle=False)] == \
        [f"s{i:03d}" for i in range(12)]


def test_save_refuses_an_existing_file_and_leaves_no_temporary_file(tmp_path):
    (tmp_path / "taken.tar").write_bytes(b"x")
    with pytest.raises(ArgumentError, match="taken.tar exists"):
        _pipeline().save(str(tmp_path / "taken.tar"), file_type="webdataset")
    assert os.listdir(tmp_path) == ["taken.tar"]


def test_save_refuses_a_column_readers_would_rename(tmp_path):
    ds = md.NumpySlicesDataset({"Label": [1, 2]}, shuffle=False)
    with pytest.raises(ArgumentError, match="column 'Label' can't be a WebDataset extension"):
        ds.save(str(tmp_path / "x.tar"), file_type="webdataset")
    assert os.listdir(tmp_path) == []


def test_save_names_the_file_types(tmp_path):
    with pytest.raises(ArgumentError, match="'mindrecord'.*'arrow'.*'webdataset'. Found: 'zip'"):
        _pipeline().save(str(tmp_path / "x"), file_type="zip")


def test_convert_writes_an_image_folder_as_shards(tmp_path, capsys):
    for c in ("cat", "dog"):
        (tmp_path / "img" / c).mkdir(parents=True)
        for i in range(3):
            (tmp_path / "img" / c / f"{i}.jpeg").write_bytes(make_jpeg(9, 7, seed=i))
    assert cli_main(["convert", str(tmp_path / "img"), str(tmp_path / "w.tar"), "--shards", "2",
                     "--format", "webdataset"]) == 0
    samples = list(wds.WebDataset(str(tmp_path / "w-{000000..000001}.tar"), shardshuffle=False))
    assert sorted((s["__key__"], int(s["cls"])) for s in samples) == [
        ("cat/0", 0), ("cat/1", 0), ("cat/2", 0), ("dog/0", 1), ("dog/1", 1), ("dog/2", 1)]
    for path in sorted(tmp_path.glob("w-*.tar")):  # each shard carries its index, first
        with tarfile.open(path) as tar:
            assert tar.getnames()[0] == "__minddata_index__"
    assert all(s["jpg"] == make_jpeg(9, 7, seed=int(s["__key__"][-1])) for s in samples)
    assert "w-000001.tar" in capsys.readouterr().out


def test_convert_writes_record_files_as_shards(tmp_path):
    path = str(tmp_path / "r.mindrecord")
    md.NumpySlicesDataset({"cls": [4, 5, 6], "txt": ["a", "b", "c"]}, shuffle=False).save(path)
    assert cli_main(["convert", path, str(tmp_path / "r.tar"), "--format", "webdataset"]) == 0
    samples = list(wds.WebDataset(str(tmp_path / "r.tar"), shardshuffle=False))
    assert [(int(s["cls"]), s["txt"].decode()) for s in samples] == [(4, "a"), (5, "b"), (6, "c")]


def test_convert_refuses_to_overwrite_without_the_flag(tmp_path, capsys):
    path = str(tmp_path / "r.mindrecord")
    md.NumpySlicesDataset({"cls": [1]}, shuffle=False).save(path)
    (tmp_path / "r.tar").write_bytes(b"old")
    assert cli_main(["convert", path, str(tmp_path / "r.tar"), "--format", "webdataset"]) == 2
    err = capsys.readouterr().err
    assert "r.tar exists" in err and "Pass --overwrite" in err
    assert cli_main(["convert", path, str(tmp_path / "r.tar"), "--format", "webdataset", "--overwrite"]) == 0
    assert [int(s["cls"]) for s in wds.WebDataset(str(tmp_path / "r.tar"), shardshuffle=False)] == [1]
