"""CelebADataset over CelebA's real layout: list_attr_celeba.txt, list_eval_partition.txt, JPEGs."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

ATTRS = ["5_o_Clock_Shadow", "Arched_Eyebrows", "Attractive", "Bags_Under_Eyes", "Bald", "Bangs", "Big_Lips",
         "Big_Nose", "Black_Hair", "Blond_Hair", "Blurry", "Brown_Hair", "Bushy_Eyebrows", "Chubby", "Double_Chin",
         "Eyeglasses", "Goatee", "Gray_Hair", "Heavy_Makeup", "High_Cheekbones", "Male", "Mouth_Slightly_Open",
         "Mustache", "Narrow_Eyes", "No_Beard", "Oval_Face", "Pale_Skin", "Pointy_Nose", "Receding_Hairline",
         "Rosy_Cheeks", "Sideburns", "Smiling", "Straight_Hair", "Wavy_Hair", "Wearing_Earrings", "Wearing_Hat",
         "Wearing_Lipstick", "Wearing_Necklace", "Wearing_Necktie", "Young"]
PARTITION = [0, 0, 0, 0, 1, 1, 2, 2]


@pytest.fixture
def celeba(tmp_path):
    rng = np.random.default_rng(0)
    values = rng.choice([-1, 1], size=(len(PARTITION), 40))
    names = [f"{k + 1:06d}.jpg" for k in range(len(PARTITION))]
    for k, name in enumerate(names):
        (tmp_path / name).write_bytes(make_jpeg(17, 21, seed=k))
    # the real file aligns columns with two spaces before a 1 and one before a -1
    lines = [f"{len(names)}", " ".join(ATTRS) + " "]
    lines += [name + "".join(f" {v:2d}" for v in row) for name, row in zip(names, values)]
    (tmp_path / "list_attr_celeba.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "list_eval_partition.txt").write_text("".join(f"{n} {p}\n" for n, p in zip(names, PARTITION)))
    return tmp_path, names, values


def test_columns_types_and_attributes(celeba):
    folder, names, values = celeba
    got = rows(md.CelebADataset(str(folder), shuffle=False))
    assert len(got) == 8
    assert got[0]["image"].dtype == np.uint8 and got[0]["image"].tobytes() == (folder / names[0]).read_bytes()
    assert got[0]["attr"].shape == (40,) and got[0]["attr"].dtype == np.uint32
    assert np.array_equal(np.stack([r["attr"] for r in got]), (values == 1).astype(np.uint32))


def test_usage_follows_the_partition_file(celeba):
    folder, _, _ = celeba
    sizes = {u: md.CelebADataset(str(folder), usage=u).get_dataset_size() for u in ("train", "valid", "test", "all")}
    assert sizes == {"train": 4, "valid": 2, "test": 2, "all": 8}
    with pytest.raises(ArgumentError, match="`usage` must be one of"):
        md.CelebADataset(str(folder), usage="val")


def test_decode_and_extensions(celeba):
    folder, _, _ = celeba
    got = rows(md.CelebADataset(str(folder), usage="test", decode=True, shuffle=False))
    assert [r["image"].shape for r in got] == [(21, 17, 3)] * 2
    assert md.CelebADataset(str(folder), extensions=[".png"]).get_dataset_size() == 0


def test_shards_and_resume(celeba):
    folder, _, _ = celeba
    assert_shards_partition(lambda **kw: md.CelebADataset(str(folder), shuffle=False, **kw), 4)
    assert_resumes_exactly(lambda w: md.CelebADataset(str(folder), decode=True, num_parallel_workers=w))


def test_truncated_attribute_file_is_named(celeba):
    folder, _, _ = celeba
    path = folder / "list_attr_celeba.txt"
    path.write_text("\n".join(path.read_text().splitlines()[:-2]) + "\n")
    with pytest.raises(DataFormatError, match=r"list_attr_celeba.txt declares 8 images but lists 6"):
        md.CelebADataset(str(folder)).get_dataset_size()


def test_missing_files_are_named(celeba):
    folder, _, _ = celeba
    (folder / "list_eval_partition.txt").unlink()
    with pytest.raises(DataFormatError, match=r"list_eval_partition.txt is missing"):
        md.CelebADataset(str(folder), usage="train").get_dataset_size()
    (folder / "list_attr_celeba.txt").unlink()
    with pytest.raises(DataFormatError, match=r"list_attr_celeba.txt is missing"):
        md.CelebADataset(str(folder)).get_dataset_size()
    with pytest.raises(ArgumentError, match="`dataset_dir` must be an existing folder"):
        md.CelebADataset(str(folder / "nowhere"))
