"""Brace patterns in file names (``minddata.dataset._braces``): what the ``braceexpand`` package (the
``webdataset`` package's expander) gives, and every file source expanding them before globs."""

from __future__ import annotations

import pytest
from braceexpand import braceexpand
from hypothesis import given, settings
from hypothesis import strategies as st

import minddata as md
from minddata.dataset._braces import brace_expand
from minddata.errors import ArgumentError


@pytest.mark.parametrize("pattern", [
    "shard-{000000..000010..2}.tar", "{a,b,c}", "python{2.{5..7},3.{2,3}}", "{07..10}", "{4..1}", "{2..-1}",
    "{a..g..2}", "{c..A}", "{10..1..3}", "index.html{,.backup}", "{x}", "{}", "{{a,b}}", "{1\\{2,3}", "x{1..3}y{a,b}",
    "s3://bucket/train-{0..2}.tar", "plain.tar",
])
def test_a_pattern_expands_as_braceexpand_expands_it(pattern):
    assert brace_expand(pattern) == list(braceexpand(pattern))


_TEXT = st.sampled_from(["a", "0", "07", "-", ".", "..", "/", "x1", "10", "b"])


def _groups(inner):
    items = st.lists(inner, min_size=1, max_size=3)
    return st.one_of(items.map(lambda parts: "{" + ",".join(parts) + "}"), inner.map(lambda t: "{" + t + "}"))


def _range(first, last, step, padded):
    """``{first..last..step}``, the first bound zero-padded when asked (and not negative)."""
    return "{" + (f"0{first}" if padded and first >= 0 else str(first)) + f"..{last}{step}" + "}"


_RANGES = st.builds(_range, st.integers(-12, 12), st.integers(-12, 12), st.sampled_from(["", "..2", "..3", "..0"]),
                    st.booleans())
_PATTERNS = st.recursive(_TEXT, lambda inner: st.one_of(_groups(inner), st.tuples(inner, inner).map("".join), _RANGES),
                         max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(pattern=_PATTERNS)
def test_any_balanced_pattern_expands_as_braceexpand_expands_it(pattern):
    assert brace_expand(pattern) == list(braceexpand(pattern))


def test_an_unclosed_group_names_the_pattern_and_the_fix():
    with pytest.raises(ArgumentError, match=r"TFRecordDataset: the brace pattern part-\{0\.\.1\.tfrecord has a '\{' "
                       r"without its '\}'\. Close the group, or write a literal brace as '\\\{'"):
        md.TFRecordDataset("part-{0..1.tfrecord")


def test_a_pattern_of_too_many_names_is_refused():
    with pytest.raises(ArgumentError, match=r"WebDataset: the brace pattern s-\{0\.\.99999999\}\.tar stands for more "
                       r"than 1,000,000 names\. Found: 100,000,000"):
        md.WebDataset("s-{0..99999999}.tar")


@pytest.fixture
def shards(tmp_path):
    import io
    import tarfile

    for k in range(5):
        with tarfile.open(tmp_path / f"shard-{k:06d}.tar", "w") as tar:
            info = tarfile.TarInfo(f"s{k}.cls")
            info.size = 1
            tar.addfile(info, io.BytesIO(str(k).encode()))
    return tmp_path


def _labels(ds):
    return [int(r["cls"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def test_webdataset_reads_a_range_with_a_step(shards):
    assert _labels(md.WebDataset(str(shards / "shard-{000000..000004..2}.tar"), shuffle=False)) == [0, 2, 4]


def test_webdataset_reads_nested_groups(shards):
    pattern = str(shards / "shard-{00000{3,4},{000000..000001}}.tar")
    assert _labels(md.WebDataset(pattern, shuffle=False)) == [3, 4, 0, 1]


@pytest.fixture
def text_files(tmp_path):
    for k in range(4):
        (tmp_path / f"lines-{k}.txt").write_text(f"line {k}\n")
    return tmp_path


def _lines(ds):
    return [str(r["text"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def test_a_file_source_expands_a_range(text_files):
    assert _lines(md.TextFileDataset(str(text_files / "lines-{1..2}.txt"), shuffle=False)) == ["line 1", "line 2"]


def test_a_file_source_expands_a_list_of_globs(text_files):
    ds = md.TextFileDataset(str(text_files / "lines-{0,[23]}.txt"), shuffle=False)
    assert _lines(ds) == ["line 0", "line 2", "line 3"]


def test_a_file_named_with_braces_is_read_as_it_is(tmp_path):
    (tmp_path / "odd-{1,2}.txt").write_text("literal\n")
    assert _lines(md.TextFileDataset(str(tmp_path / "odd-{1,2}.txt"), shuffle=False)) == ["literal"]


def test_a_missing_expanded_file_names_the_pattern(text_files):
    pattern = str(text_files / "lines-{3..4}.txt")
    with pytest.raises(ArgumentError, match=r"lines-4\.txt \(from the pattern .*lines-\{3\.\.4\}\.txt\) is not a file"):
        md.TextFileDataset(pattern)
