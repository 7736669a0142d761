"""transforms.TypeCast and transforms.Compose: specs and CPU kernels."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

from minddata import transforms, vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, get_kernel

SRC = np.array([[-2.7, -0.5, 0.0, 0.49], [1.5, 2.99, 127.9, 300.0]])


@pytest.mark.parametrize(
    "dtype", [np.float32, "float32", np.dtype("float16"), "int64", np.int8, "uint8", bool, "float64", "U8"]
)
def test_type_cast_matches_astype(dtype: Any) -> None:
    out = transforms.TypeCast(dtype)(SRC)
    want = SRC.astype(dtype)
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)


def test_type_cast_truncates_toward_zero_and_takes_scalars_and_lists() -> None:
    np.testing.assert_array_equal(transforms.TypeCast("int32")(np.array([-1.9, 1.9])), [-1, 1])
    assert transforms.TypeCast("float32")(3).dtype == np.float32
    assert transforms.TypeCast(np.int16)([1, 2]).tolist() == [1, 2]


def test_type_cast_spec() -> None:
    op = transforms.TypeCast("float32")
    assert op.data_type == np.dtype(np.float32)
    assert op == transforms.TypeCast(np.float32) and op != transforms.TypeCast("float64")
    assert pickle.loads(pickle.dumps(op)) == op
    with pytest.raises(TypeError, match=r"TypeCast: `data_type` must be a numpy dtype .* Found: None"):
        transforms.TypeCast(None)
    with pytest.raises(TypeError, match=r"TypeCast: `data_type` must be a numpy dtype .*'nope' \(str\)"):
        transforms.TypeCast("nope")
    with pytest.raises(ArgumentError, match=r"TypeCast: `data_type` must be a numeric"):
        transforms.TypeCast(object)


def test_type_cast_runtime_error_names_the_op() -> None:
    with pytest.raises(
        ValueError, match=r"TypeCast: cannot cast an array of dtype <U3 \(shape \(1,\)\) to float32"
    ):
        transforms.TypeCast("float32")(np.array(["abc"]))


def test_compose_applies_in_order() -> None:
    img = np.arange(2 * 5 * 3, dtype=np.uint8).reshape(2, 5, 3)
    ops = [vision.HorizontalFlip(), vision.Rescale(2.0, 1.0), vision.HWC2CHW(), transforms.TypeCast("int16")]
    want = img
    for op in ops:
        want = op(want)
    out = transforms.Compose(ops)(img)
    assert out.dtype == np.int16
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(out, (img[:, ::-1] * 2 + 1).transpose(2, 0, 1).astype(np.int16))


def test_compose_takes_callables_and_passes_tuples_on() -> None:
    op = transforms.Compose([lambda x: (x, x + 1), lambda a, b: a * 10 + b, transforms.TypeCast("int8")])
    assert op(np.array(2)).tolist() == 23
    two_out = transforms.Compose([lambda x, y: (y, x)])
    assert two_out(1, 2) == (2, 1)


def test_compose_arity_follows_its_ends_and_kernel_follows_the_engine_protocol() -> None:
    ops = transforms.Compose([vision.HWC2CHW(), transforms.TypeCast("float32")])
    assert (ops.num_inputs, ops.num_outputs) == (1, 1)
    img = np.zeros((2, 3, 4), np.uint8)
    assert get_kernel("Compose", "CPU")(ops, KernelContext(), img).shape == (4, 2, 3)
    loose = transforms.Compose([lambda *xs: xs, lambda *xs: xs[0]])
    assert (loose.num_inputs, loose.num_outputs) == (-1, -1)
    # Outputs of unknown count come back as a sequence to the engine, unwrapped to an eager caller.
    assert isinstance(get_kernel("Compose", "CPU")(loose, KernelContext(), img), tuple)
    assert loose(img) is img


def test_compose_nested_and_random_elements_use_the_row_context() -> None:
    flip = vision.RandomHorizontalFlip()
    op = transforms.Compose([transforms.Compose([vision.HWC2CHW(), vision.HWC2CHW()]), flip])
    assert op.random and not transforms.Compose([vision.HWC2CHW()]).random
    kernel = get_kernel("Compose", "CPU")
    img = np.arange(8, dtype=np.uint8).reshape(1, 8)
    seen = set()
    for row in range(16):
        ctx = KernelContext(seed=3, row_index=row, op_position=4)
        a, b = kernel(op, ctx, img), kernel(op, KernelContext(seed=3, row_index=row, op_position=4), img)
        np.testing.assert_array_equal(a, b)
        # Element 1 of a Compose at position 4 draws as a flattened op at position 5 would.
        alone = get_kernel(flip.name, "CPU")(flip, KernelContext(seed=3, row_index=row, op_position=5), img)
        np.testing.assert_array_equal(a, alone)
        seen.add(a.tobytes())
    assert len(seen) == 2


def test_compose_spec_pickles_and_validates() -> None:
    op = transforms.Compose(
        [vision.Resize(4), vision.RandomHorizontalFlip(0.2), transforms.TypeCast("float32")]
    )
    back = pickle.loads(pickle.dumps(op))
    assert back == op and repr(back) == repr(op)
    assert op != transforms.Compose(
        [vision.Resize(5), vision.RandomHorizontalFlip(0.2), transforms.TypeCast("float32")]
    )
    with pytest.raises(ArgumentError, match=r"Compose: `transforms` must not be empty"):
        transforms.Compose([])
    with pytest.raises(
        TypeError, match=r"Compose: `transforms\[1\]` must be an op or a callable. Found: 3 \(int\)"
    ):
        transforms.Compose([vision.HWC2CHW(), 3])
    with pytest.raises(TypeError, match=r"Compose: `transforms` must be a list of ops or callables"):
        transforms.Compose(vision.HWC2CHW())


def test_compose_reports_an_arity_mismatch() -> None:
    op = transforms.Compose([lambda x: (x, x), vision.HWC2CHW()])
    with pytest.raises(
        ValueError,
        match=r"Compose: transforms\[1\] \(HWC2CHW\) expects 1 input\(s\); the previous step gave 2",
    ):
        op(np.zeros((2, 2, 3)))
