"""Errors reach the consumer with op, row and file; the three error_samples_mode policies."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from testkit import column

import minddata as md
from minddata.errors import PipelineError, RowError


def fails_on(bad):
    def op(x):
        if int(x) in bad:
            raise ValueError(f"bad value {int(x)}")
        return x

    return op


def ten():
    return md.NumpySlicesDataset(np.arange(10), column_names=["x"], shuffle=False)


def test_error_names_op_row_and_chains_the_original():
    ds = ten().map(fails_on({4}), input_columns="x", num_parallel_workers=2)
    with pytest.raises(RowError) as info:
        column(ds)
    error = info.value
    assert error.op == "op" and error.row == 4
    assert "Map[op]: op op failed on row 4 (source row 4): ValueError: bad value 4" in str(error)
    assert isinstance(error.__cause__, ValueError)
    assert error.__cause__.__traceback__ is not None


def test_error_names_the_source_file(image_folder):
    def explode(image):
        raise RuntimeError("cannot use")

    ds = md.ImageFolderDataset(image_folder, shuffle=False).map(explode, input_columns="image")
    with pytest.raises(RowError, match=r"file .*cat/00\.jpg") as info:
        column(ds)
    assert info.value.source.endswith("00.jpg")


def test_error_names_which_op_of_a_map_failed():
    ds = ten().map([lambda x: x + 1, fails_on({3})], input_columns="x")
    with pytest.raises(RowError, match="op op failed on row 2"):
        column(ds)


def test_iterator_is_dead_after_an_error():
    it = ten().map(fails_on({0}), input_columns="x").create_tuple_iterator(num_epochs=1)
    with pytest.raises(RowError):
        next(it)
    with pytest.raises(PipelineError):
        next(it)


def test_skip_mode_drops_bad_rows_and_counts_them(caplog):
    md.config.set_error_samples_mode("skip")
    ds = ten().map(fails_on({2, 7}), input_columns="x", num_parallel_workers=2)
    it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
    with caplog.at_level(logging.WARNING, logger="minddata"):
        assert [int(r[0]) for r in it] == [0, 1, 3, 4, 5, 6, 8, 9]
    assert it.skipped_rows == 2
    assert "2 row(s) skipped" in caplog.text and "bad value 2" in caplog.text


def test_replace_mode_keeps_the_row_count():
    md.config.set_error_samples_mode(md.config.ErrorSamplesMode.REPLACE)
    ds = ten().map(fails_on({0, 1, 5}), input_columns="x", num_parallel_workers=3)
    it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
    # Rows before the first good row take the first good row; later ones the previous good row.
    assert [int(r[0]) for r in it] == [2, 2, 2, 3, 4, 4, 6, 7, 8, 9]
    assert it.replaced_rows == 3


def test_replace_mode_is_deterministic_across_workers():
    md.config.set_error_samples_mode("replace")
    md.config.set_rows_per_chunk(3)
    bad = {0, 3, 4, 5, 11, 12, 13, 29}
    outs = [
        column(md.NumpySlicesDataset(np.arange(30), column_names=["x"], shuffle=False).map(
            fails_on(bad), input_columns="x", num_parallel_workers=w))
        for w in (1, 2, 4)
    ]
    assert outs[0] == outs[1] == outs[2]
    assert len(outs[0]) == 30


def test_replace_mode_with_every_row_bad_says_so():
    md.config.set_error_samples_mode("replace")
    ds = ten().map(fails_on(set(range(10))), input_columns="x")
    with pytest.raises(PipelineError, match="every row"):
        column(ds)


def test_invalid_error_mode():
    with pytest.raises(ValueError, match="'raise', 'skip', 'replace'"):
        md.config.set_error_samples_mode("ignore")


def test_error_in_generator_source_reaches_consumer():
    def gen():
        yield (1,)
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        column(md.GeneratorDataset(gen, column_names=["x"]).map(lambda x: x))


# -- source reads under the error modes ----------------------------------------------------------


def _listed_then_deleted(image_folder, *, with_map: bool, workers: int = 2):
    """An ImageFolderDataset iterator created after listing, with one file deleted afterwards."""
    ds = md.ImageFolderDataset(str(image_folder), shuffle=False, num_parallel_workers=workers)
    if with_map:
        ds = ds.map(lambda x: x[:4], input_columns="image", num_parallel_workers=workers)
    assert ds.get_dataset_size() == 12  # the folder is listed now
    victim = sorted((image_folder / "dog").iterdir())[1]
    victim.unlink()
    return ds.create_tuple_iterator(num_epochs=1, output_numpy=True), victim


@pytest.mark.parametrize("with_map", [False, True], ids=["source-only", "map-reading-source"])
def test_a_file_deleted_after_listing_raises_naming_it_by_default(image_folder, with_map):
    it, victim = _listed_then_deleted(image_folder, with_map=with_map)
    with pytest.raises(RowError, match=rf"can't read row 5, file .*{victim.name}"):
        list(it)


@pytest.mark.parametrize("with_map", [False, True], ids=["source-only", "map-reading-source"])
def test_skip_mode_skips_a_file_deleted_after_listing_and_counts_it(image_folder, with_map, caplog):
    md.config.set_error_samples_mode("skip")
    it, victim = _listed_then_deleted(image_folder, with_map=with_map)
    with caplog.at_level(logging.WARNING, logger="minddata"):
        rows = list(it)
    assert len(rows) == 11 and it.skipped_rows == 1
    assert victim.name in caplog.text


@pytest.mark.parametrize("with_map", [False, True], ids=["source-only", "map-reading-source"])
def test_replace_mode_replaces_a_file_deleted_after_listing(image_folder, with_map):
    md.config.set_error_samples_mode("replace")
    it, _ = _listed_then_deleted(image_folder, with_map=with_map)
    rows = list(it)
    assert len(rows) == 12 and it.replaced_rows == 1
    assert rows[5][0].tobytes() == rows[4][0].tobytes() and int(rows[5][1]) == int(rows[4][1])
