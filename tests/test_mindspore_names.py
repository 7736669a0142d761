"""MindSpore scripts port by changing the import: module paths, ``mstype``, and names not there yet."""

from __future__ import annotations

import numpy as np
import pytest

import minddata as md

# The imports of a typical MindSpore 2.x training script, with `mindspore` changed to `minddata`.
MINDSPORE_STYLE_SCRIPT = """
import minddata.dataset as ds
import minddata.dataset.vision as vision
import minddata.dataset.transforms as transforms
import minddata.dataset.vision.c_transforms as c_vision
import minddata.dataset.vision.py_transforms as py_vision
import minddata.dataset.transforms.c_transforms as C
import minddata.dataset.transforms.py_transforms as P
from minddata.dataset.transforms.transforms import TypeCast
from minddata.dataset.vision.transforms import Decode, Resize, HWC2CHW, Normalize
from minddata.dataset.vision import Inter
from minddata.dataset import vision as vision2, transforms as transforms2
import minddata.common.dtype as mstype

ds.config.set_seed(1)
data = ds.ImageFolderDataset(folder, shuffle=False)
data = data.map([Decode(), Resize((8, 8), Inter.BILINEAR), c_vision.Rescale(1 / 255.0, 0),
                 Normalize([0.5] * 3, [0.5] * 3, is_hwc=True), HWC2CHW()], input_columns="image")
data = data.map([C.TypeCast(mstype.int32), transforms.OneHot(3), TypeCast(mstype.float32)], input_columns="label")
data = data.batch(4, drop_remainder=True)
batch = next(data.create_dict_iterator(num_epochs=1, output_numpy=True))
assert vision2 is vision and transforms2 is transforms and py_vision.Decode is vision.Decode and P.Compose
"""


def test_a_mindspore_style_script_runs_after_changing_its_imports(image_folder):
    namespace = {"folder": str(image_folder)}
    exec(compile(MINDSPORE_STYLE_SCRIPT, "train.py", "exec"), namespace)
    batch = namespace["batch"]
    assert batch["image"].shape == (4, 3, 8, 8) and batch["image"].dtype == np.float32
    assert batch["label"].tolist() == [[1.0, 0.0, 0.0]] * 4 and batch["label"].dtype == np.float32


def test_mstype_names_are_dtypes_accepted_by_typecast_and_schema():
    import minddata.common.dtype as mstype
    from minddata import transforms

    assert mstype.int32 == np.int32 and mstype.float64 == np.float64 and mstype.bool_ == np.bool_
    assert mstype.bool is mstype.bool_ and mstype.dtype_to_nptype(mstype.uint8) is np.uint8
    assert transforms.TypeCast(mstype.string)(np.array([1, 2])).tolist() == ["1", "2"]
    assert transforms.TypeCast(mstype.bool_)(np.array([0, 3])).tolist() == [False, True]
    schema = md.Schema()
    schema.add_column("text", de_type=mstype.string)
    schema.add_column("label", de_type=mstype.int64, shape=[1])
    assert [(c["name"], c["type"]) for c in schema.columns] == [("text", "string"), ("label", "int64")]


@pytest.mark.parametrize(
    "module, name",
    [("minddata.dataset", "NoSuchDataset"),
     ("minddata.dataset.transforms.c_transforms", "Plugin"), ("minddata.common.dtype", "bfloat16"), ("minddata", "Tensor")],
)
def test_a_missing_name_says_not_implemented_and_points_at_the_coverage_table(module, name):
    import importlib

    mod = importlib.import_module(module)
    with pytest.raises(AttributeError, match=rf"{name}.*does not implement it yet.*docs/coverage.md"):
        getattr(mod, name)
    with pytest.raises(ImportError, match=rf"{name}.*does not implement it yet.*docs/coverage.md"):
        exec(f"from {module} import {name}", {})
    assert not hasattr(mod, "__wrapped__")  # tools probing private names get a plain AttributeError
