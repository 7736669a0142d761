"""A state that does not fit the pipeline is refused (docs/data.md, "Resuming on a different number of
ranks"): a state saved from other files with the same row count and columns (another WebDataset shard,
another image folder), on any number of ranks, and a state resumed under another seed set with
config.set_seed. The same files under another folder resume, and an unset seed takes the state's."""

from __future__ import annotations

import io
import shutil
import tarfile

import numpy as np
import pytest

import minddata as md
from minddata.engine import elastic

SEED = 7


def write_shard(path, names):
    """A WebDataset shard written with tarfile: one sample per name, ``cls`` its index, ``txt`` the name."""
    with tarfile.open(path, "w") as tar:
        for i, name in enumerate(names):
            for ext, data in (("cls", str(i).encode()), ("txt", name.encode())):
                info = tarfile.TarInfo(f"{name}.{ext}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def write_images(root, names):
    """An image folder of two classes, ``a/<name>.jpg`` and ``b/<name>.jpg``, whose bytes name the file."""
    for label in ("a", "b"):
        (root / label).mkdir(parents=True)
        for name in names:
            (root / label / f"{name}.jpg").write_bytes(f"{label}/{name}".encode())


def webdataset(folder):
    """The shards of ``folder``, shuffled, on rank ``k`` of ``n``."""
    return lambda n, k: md.WebDataset(str(folder / "*.tar"), columns_list=["cls", "txt"], shuffle=True,
                                      num_shards=n, shard_id=k)


def image_folder(folder):
    return lambda n, k: md.ImageFolderDataset(str(folder), shuffle=True, num_shards=n, shard_id=k)


def make_webdataset(folder, names):
    """``folder/train-<first name>.tar``: the samples ``a<name>`` and ``b<name>`` (the rows write_images
    makes). Files are told by name and row count, not content, so other data has another file name."""
    folder.mkdir(parents=True)
    write_shard(folder / f"train-{names[0]}.tar", [label + name for label in ("a", "b") for name in names])


# A source: (write its files under a folder, its pipeline on rank k of n over a folder).
SOURCES = {"webdataset": (make_webdataset, webdataset), "image_folder": (write_images, image_folder)}
ONE = [f"s{i}" for i in range(3)]  # the image folders have two classes: 6 rows either way
OTHER = [f"t{i}" for i in range(3)]
ROWS = 6


def key(row):
    return tuple(np.asarray(column).tobytes() for column in row)


def save(ds_of, num_shards=2):
    """Each rank of a ``num_shards``-rank run under seed SEED takes a row: (the rows taken, the states)."""
    taken, states = [], []
    for k in range(num_shards):
        md.config.set_seed(SEED)
        it = ds_of(num_shards, k).create_tuple_iterator(num_epochs=1, output_numpy=True)
        taken.append(key(next(it)))
        states.append(it.get_state())
        it.close()
    return taken, states


def resume(ds_of, state, num_shards=1, shard_id=0):
    """The rows a rank resumed from ``state`` gives (under the seed configured now)."""
    it = ds_of(num_shards, shard_id).create_tuple_iterator(num_epochs=1, output_numpy=True, state=state)
    rows = [key(row) for row in it]
    it.close()
    return rows


def saved(tmp_path, source, names=ONE, folder="one"):
    """(the pipeline over ``names`` written under ``tmp_path/folder``, the rows taken, the states)."""
    write, ds_of = SOURCES[source]
    write(tmp_path / folder, names)
    return (ds_of(tmp_path / folder), *save(ds_of(tmp_path / folder)))


# Other data ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES)
def test_a_state_of_other_files_with_the_same_rows_and_columns_is_refused(tmp_path, source):
    _, _, states = saved(tmp_path, source)
    other, _, _ = saved(tmp_path, source, OTHER, "other")
    md.config.set_seed(SEED)
    with pytest.raises(ValueError, match="saved from other data.*Resume with the files the state was saved from"):
        resume(other, states)


def test_another_shard_of_one_webdataset_is_refused(tmp_path):
    # train-000000.tar and train-000001.tar of one folder: the same row count and columns.
    write_shard(tmp_path / "train-000000.tar", ONE)
    write_shard(tmp_path / "train-000001.tar", OTHER)

    def shard(name):
        return lambda n, k: md.WebDataset(str(tmp_path / name), columns_list=["cls", "txt"], num_shards=n, shard_id=k)

    _, states = save(shard("train-000000.tar"))
    md.config.set_seed(SEED)
    with pytest.raises(ValueError, match=r"other data.*reads 1 file\(s\): train-000001\.tar"):
        resume(shard("train-000001.tar"), states, num_shards=3)


@pytest.mark.parametrize("source", SOURCES)
def test_a_state_of_other_files_is_refused_on_the_same_number_of_ranks(tmp_path, source):
    _, _, states = saved(tmp_path, source)
    other, _, _ = saved(tmp_path, source, OTHER, "other")
    md.config.set_seed(SEED)
    with pytest.raises(ValueError, match="saved from other data"):
        resume(other, states[1], num_shards=2, shard_id=1)


@pytest.mark.parametrize("source", SOURCES)
def test_the_same_files_in_another_folder_resume(tmp_path, source):
    ds_of, taken, states = saved(tmp_path, source)
    shutil.copytree(tmp_path / "one", tmp_path / "elsewhere" / "copy")
    md.config.set_seed(SEED)
    want = resume(ds_of, states)
    md.config.set_seed(SEED)
    rest = resume(SOURCES[source][1](tmp_path / "elsewhere" / "copy"), states)
    assert rest == want
    assert len(set(taken + rest)) == len(taken + rest) == ROWS  # each row once


# Seeds --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("world", ["other", "same"])
def test_a_state_resumed_under_another_explicit_seed_is_refused(tmp_path, world):
    ds_of, _, states = saved(tmp_path, "webdataset")
    md.config.set_seed(999)
    with pytest.raises(ValueError, match=r"seed 7, but this process set seed 999.*config\.set_seed\(7\)"):
        if world == "other":
            resume(ds_of, states)  # a list of every rank's state, one new rank
        else:
            resume(ds_of, states[0], num_shards=2, shard_id=0)  # a rank's own state


def test_a_state_without_elastic_part_resumed_under_another_explicit_seed_is_refused(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"line {i}\n" for i in range(6)))
    md.config.set_seed(SEED)
    it = md.TextFileDataset(str(path)).create_tuple_iterator(num_epochs=1, output_numpy=True)
    next(it)
    state = it.get_state()
    it.close()
    assert "elastic" not in state
    md.config.set_seed(SEED + 1)
    with pytest.raises(ValueError, match=r"config\.set_seed\(7\), or leave the seed unset"):
        md.TextFileDataset(str(path)).create_tuple_iterator(num_epochs=1, state=state)


@pytest.mark.parametrize("world", ["other", "same"])
def test_an_unset_seed_takes_the_state_seed(tmp_path, world):
    ds_of, _, states = saved(tmp_path, "webdataset")
    state, shards = (states, 1) if world == "other" else (states[0], 2)
    md.config.set_seed(SEED)
    want = resume(ds_of, state, num_shards=shards)
    md.config.load_defaults()  # no seed set
    assert resume(ds_of, state, num_shards=shards) == want


def test_the_data_identity_is_the_files_relative_to_their_folder_with_their_rows(tmp_path):
    write_shard(tmp_path / "train-000000.tar", ["a", "b", "c"])
    write_shard(tmp_path / "train-000001.tar", ["d", "e"])
    ds = md.WebDataset(str(tmp_path / "train-*.tar"), columns_list=["cls", "txt"], shuffle=False)
    assert ds._node.data_identity() == (["train-000000.tar", "train-000001.tar"], [3, 2])
    assert md.NumpySlicesDataset({"x": np.arange(3)})._node.data_identity() == ([], [])  # no files


def test_a_state_saved_before_the_data_digest_is_refused_on_another_number_of_ranks(tmp_path):
    ds_of, _, states = saved(tmp_path, "webdataset")
    for state in states:  # as an older minddata saved it: no "data", a checksum over the rest
        part = {k: v for k, v in state["elastic"].items() if k != "data"}
        part["check"] = elastic._checksum(part, state["seed"], state["shard_seed"], state["epoch"], state["row"])
        state["elastic"] = part
    md.config.set_seed(SEED)
    with pytest.raises(ValueError, match="no data digest.*on the number of ranks that saved it"):
        resume(ds_of, states)
    assert len(resume(ds_of, states[0], num_shards=2, shard_id=0)) == ROWS // 2 - 1  # as before on the same world
