"""Food101Dataset over its real layout: class folders of JPEGs and meta/ list files."""

from __future__ import annotations

import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import DataFormatError, RowError

FOOD = {"train": ["apple_pie/1005649", "apple_pie/1014775", "pie/3012"], "test": ["apple_pie/101251", "pie/4411"]}


@pytest.fixture
def food(tmp_path):
    root = tmp_path / "food-101"
    (root / "meta").mkdir(parents=True)
    for k, entry in enumerate(FOOD["train"] + FOOD["test"]):
        (root / "images" / entry).parent.mkdir(parents=True, exist_ok=True)
        (root / "images" / f"{entry}.jpg").write_bytes(make_jpeg(16, 10 + k, seed=k))
    for split, entries in FOOD.items():
        (root / "meta" / f"{split}.txt").write_text("\n".join(entries) + "\n")
    return root


def test_food_labels_are_class_names(food):
    got = rows(md.Food101Dataset(str(food), usage="train", shuffle=False))
    assert [str(r["label"]) for r in got] == ["apple_pie", "apple_pie", "pie"]
    assert got[0]["label"].dtype.kind == "U" and got[2]["image"].tobytes() == (food / "images/pie/3012.jpg").read_bytes()
    assert md.Food101Dataset(str(food)).get_dataset_size() == 5
    assert md.Food101Dataset(str(food), usage="test", decode=True).get_dataset_size() == 2


def test_food_shards_and_resume(food):
    (food / "meta" / "test.txt").write_text("apple_pie/101251\n")  # 4 rows in all
    assert_shards_partition(lambda **kw: md.Food101Dataset(str(food), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.Food101Dataset(str(food), decode=True, num_parallel_workers=w))


def test_food_errors_name_the_file(food):
    (food / "images" / "pie" / "4411.jpg").unlink()
    with pytest.raises(RowError, match=r"4411.jpg"):
        rows(md.Food101Dataset(str(food), usage="test", shuffle=False))
    (food / "meta" / "test.txt").write_text("apple_pie\n")
    with pytest.raises(DataFormatError, match=r"test.txt line 1 must be `<class>/<id>`"):
        md.Food101Dataset(str(food), usage="test").get_dataset_size()
    (food / "meta" / "train.txt").unlink()
    with pytest.raises(DataFormatError, match=r"train.txt is missing"):
        md.Food101Dataset(str(food), usage="train").get_dataset_size()
