"""OneHot, Fill, Duplicate, Concatenate, RandomApply, RandomChoice, RandomOrder: specs and CPU kernels,
each against a reference computed here with NumPy."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minddata as md
from minddata import transforms, vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, TensorSpec, get_kernel, row_rng
from minddata.ops.cpu.generic import child_position

IMG = np.random.default_rng(0).integers(0, 256, (6, 9, 3), dtype=np.uint8)


def run(op: Any, *inputs: Any, seed: int = 2, pass_index: int = 0, row: int = 0, position: int = 0) -> Any:
    ctx = KernelContext(seed=seed, pass_index=pass_index, row_index=row, op_position=position)
    return get_kernel(op.name, "CPU")(op, ctx, *inputs)


# ---------------------------------------------------------------------------------------------- OneHot


@pytest.mark.parametrize("labels", [np.array(3), np.array([0, 4, 2]), np.array([[1, 0], [4, 4]], np.uint8)])
def test_one_hot_matches_eye(labels: np.ndarray) -> None:
    out = transforms.OneHot(5)(labels)
    assert out.dtype == labels.dtype and out.shape == (*labels.shape, 5)
    np.testing.assert_array_equal(out, np.eye(5, dtype=labels.dtype)[labels])


def test_one_hot_smoothing() -> None:
    out = transforms.OneHot(4, smoothing_rate=0.1)(np.array([2, 0]))
    want = np.eye(4)[[2, 0]] * 0.9 + 0.1 / 4
    assert out.dtype == np.float64  # as MindSpore
    np.testing.assert_allclose(out, want, rtol=1e-12)


@pytest.mark.parametrize(("labels", "found"), [(np.array([1, 5]), "5"), (np.array([-1, 2]), "-1")])
def test_one_hot_rejects_labels_out_of_range(labels: np.ndarray, found: str) -> None:
    with pytest.raises(
        ValueError, match=rf"OneHot: labels must be in \[0, 5\) for num_classes=5. Found: {found}"
    ):
        transforms.OneHot(5)(labels)


def test_one_hot_rejects_float_labels() -> None:
    with pytest.raises(TypeError, match=r"OneHot: expected integer labels. Found dtype float64"):
        transforms.OneHot(5)(np.array([1.0]))


# ---------------------------------------------------------------------------------------------- Fill


@pytest.mark.parametrize(
    ("data", "value", "want"),
    [
        (np.zeros((2, 3), np.uint8), 7, np.full((2, 3), 7, np.uint8)),
        (np.zeros(4, np.int32), -2.9, np.full(4, -2, np.int32)),  # astype truncates toward zero
        (np.zeros((2, 2), np.float32), 0.5, np.full((2, 2), 0.5, np.float32)),
        (np.zeros(3, bool), 1, np.ones(3, bool)),
        (np.array(["a", "bb"]), "xyz", np.array(["xyz", "xyz"])),
        (np.array([b"a"]), b"q", np.array([b"q"])),
    ],
)
def test_fill_keeps_shape_and_dtype(data: np.ndarray, value: Any, want: np.ndarray) -> None:
    out = transforms.Fill(value)(data)
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)
    assert transforms.Fill(value).output_spec(TensorSpec(data.shape, data.dtype)) == TensorSpec(
        want.shape, want.dtype
    )


def test_fill_rejects_values_that_do_not_fit() -> None:
    with pytest.raises(ValueError, match=r"Fill: fill_value 300 is out of range for dtype uint8 \[0, 255\]"):
        transforms.Fill(300)(np.zeros(2, np.uint8))
    with pytest.raises(TypeError, match=r"Fill: cannot fill a int64 tensor with 'a'"):
        transforms.Fill("a")(np.zeros(2, np.int64))
    with pytest.raises(TypeError, match=r"Fill: cannot fill a tensor of dtype <U1 with 3"):
        transforms.Fill(3)(np.array(["a"]))


# ---------------------------------------------------------------------------------------------- Duplicate


def test_duplicate_gives_two_independent_equal_arrays() -> None:
    a, b = run(transforms.Duplicate(), IMG)
    np.testing.assert_array_equal(a, IMG)
    np.testing.assert_array_equal(b, IMG)
    b[...] = 0
    assert a.any()


def test_duplicate_in_a_pipeline_makes_two_columns() -> None:
    ds = md.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False)
    ds = ds.map(transforms.Duplicate(), input_columns="x", output_columns=["x", "y"])
    rows = [(int(r["x"]), int(r["y"])) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert rows == [(0, 0), (1, 1), (2, 2), (3, 3)]


# ---------------------------------------------------------------------------------------------- Concatenate


def test_concatenate_matches_numpy() -> None:
    op = transforms.Concatenate(0, prepend=np.array([1, 2]), append=np.array([9]))
    data = np.array([5, 6, 7], np.int16)
    out = op(data)
    assert out.dtype == np.int16
    np.testing.assert_array_equal(out, np.concatenate([[1, 2], data, [9]]))
    assert op.output_spec(TensorSpec((3,), np.dtype(np.int16))) == TensorSpec((6,), np.dtype(np.int16))


def test_concatenate_along_another_axis_and_strings() -> None:
    grid = np.arange(6).reshape(2, 3)
    op = transforms.Concatenate(-1, append=np.array([[10], [20]]))
    np.testing.assert_array_equal(op(grid), np.concatenate([grid, [[10], [20]]], axis=1))
    words = transforms.Concatenate(prepend=np.array(["<s>"]), append=np.array(["</s>"]))(
        np.array(["a", "bc"])
    )
    assert words.tolist() == ["<s>", "a", "bc", "</s>"]


@pytest.mark.parametrize(
    ("op", "data", "error", "message"),
    [
        (
            transforms.Concatenate(append=np.array([300])),
            np.zeros(2, np.uint8),
            ValueError,
            r"does not fit the input's dtype uint8",
        ),
        (
            transforms.Concatenate(append=np.array(["x"])),
            np.zeros(2),
            TypeError,
            r"cannot join append of dtype <U1",
        ),
        (
            transforms.Concatenate(append=np.ones((2, 2))),
            np.zeros((2, 3)),
            ValueError,
            r"append of shape \(2, 2\) must match",
        ),
        (
            transforms.Concatenate(axis=1),
            np.zeros(3),
            ValueError,
            r"`axis` 1 is out of range for an input of shape \(3,\)",
        ),
        (transforms.Concatenate(), np.array(3), ValueError, r"expected a tensor of at least 1 dimension"),
    ],
)
def test_concatenate_errors_name_the_problem(
    op: Any, data: np.ndarray, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=rf"Concatenate: .*{message}"):
        op(data)


# ---------------------------------------------------------------------------------------------- RandomApply / Choice / Order


def test_child_positions_are_deterministic_distinct_and_far_from_top_level_ones() -> None:
    positions = {child_position(p, i) for p in range(50) for i in range(20)}
    assert len(positions) == 1000
    assert child_position(3, 1) == child_position(3, 1)
    assert not positions & set(range(10_000))


def test_random_apply_applies_when_the_row_draw_is_below_prob() -> None:
    op = transforms.RandomApply([vision.HorizontalFlip(), transforms.TypeCast("int16")], prob=0.4)
    applied = []
    for row in range(40):
        out = run(op, IMG, row=row, position=3)
        apply = row_rng(2, 0, row, 3).random() < 0.4
        want = IMG[:, ::-1].astype(np.int16) if apply else IMG
        assert out.dtype == want.dtype
        np.testing.assert_array_equal(out, want)
        applied.append(apply)
    assert 0 < sum(applied) < 40


def test_inner_random_ops_draw_from_their_own_position() -> None:
    flip = vision.RandomHorizontalFlip(0.5)
    op = transforms.RandomApply([vision.Rescale(1.0, 0.0), flip], prob=1.0)
    for row in range(16):
        inner = KernelContext(2, 0, row, child_position(7, 1))
        want = get_kernel(flip.name, "CPU")(flip, inner, IMG.astype(np.float32))
        np.testing.assert_array_equal(run(op, IMG, row=row, position=7), want)


def test_random_choice_picks_the_drawn_element() -> None:
    choices = [vision.HorizontalFlip(), vision.Resize((3, 4)), transforms.TypeCast("float32")]
    op = transforms.RandomChoice(choices)
    seen = set()
    for row in range(30):
        i = int(row_rng(2, 1, row, 0).integers(3))
        want = choices[i](IMG)
        out = run(op, IMG, pass_index=1, row=row)
        assert out.dtype == want.dtype
        np.testing.assert_array_equal(out, want)
        seen.add(i)
    assert seen == {0, 1, 2}


def test_random_order_applies_in_the_drawn_order() -> None:
    elements = [vision.HorizontalFlip(), vision.CenterCrop((4, 6)), vision.Rescale(2.0, 1.0)]
    op = transforms.RandomOrder(elements)
    orders = set()
    for row in range(30):
        order = row_rng(2, 0, row, 0).permutation(3).tolist()
        want = IMG
        for i in order:
            want = elements[i](want)
        np.testing.assert_array_equal(run(op, IMG, row=row), want)
        orders.add(tuple(order))
    assert len(orders) == 6


def test_random_ops_give_the_same_rows_for_any_worker_count() -> None:
    images = np.random.default_rng(1).integers(0, 256, (24, 8, 10, 3), dtype=np.uint8)
    ops = [
        transforms.RandomApply([vision.RandomResizedCrop(5)], prob=0.5),
        transforms.RandomChoice([vision.RandomHorizontalFlip(), vision.CenterCrop(5)]),
        transforms.RandomOrder([vision.RandomHorizontalFlip(), vision.Resize((5, 5))]),
    ]

    def rows(workers: int) -> list[bytes]:
        md.config.set_seed(11)
        md.config.set_rows_per_chunk(3)
        ds = md.NumpySlicesDataset({"img": images}, shuffle=False)
        ds = ds.map(ops, input_columns="img", num_parallel_workers=workers)
        return [r["img"].tobytes() for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]

    assert rows(1) == rows(2)


def test_errors_inside_name_the_holder_and_the_element() -> None:
    op = transforms.RandomChoice([vision.HorizontalFlip(), vision.Resize(4)])
    with pytest.raises(
        ValueError, match=r"RandomChoice: transforms\[\d\] \((HorizontalFlip|Resize)\) failed: .*non-empty"
    ):
        run(op, np.zeros((0, 0, 3), np.uint8))


def test_random_apply_with_prob_0_or_1() -> None:
    np.testing.assert_array_equal(transforms.RandomApply([vision.HorizontalFlip()], prob=0.0)(IMG), IMG)
    np.testing.assert_array_equal(
        transforms.RandomApply([vision.HorizontalFlip()], prob=1.0)(IMG), IMG[:, ::-1]
    )


# ---------------------------------------------------------------------------------------------- specs


U8 = np.dtype(np.uint8)


def test_holder_output_specs_cover_every_outcome() -> None:
    spec = TensorSpec((10, 12, 3), U8)
    apply = transforms.RandomApply([vision.Resize((4, 4))])
    assert apply.output_spec(spec) == TensorSpec((None, None, 3), U8)
    choice = transforms.RandomChoice([vision.Resize((4, 4)), vision.CenterCrop((4, 4))])
    assert choice.output_spec(spec) == TensorSpec((4, 4, 3), U8)
    mixed = transforms.RandomChoice([vision.HorizontalFlip(), transforms.TypeCast("float32")])
    assert mixed.output_spec(spec) == TensorSpec((10, 12, 3), None)
    # Resize first or HWC2CHW first: (3, 4, 4) or (4, 4, 12).
    order = transforms.RandomOrder([vision.Resize((4, 4)), vision.HWC2CHW()])
    assert order.output_spec(spec) == TensorSpec((None, 4, None), U8)
    assert transforms.RandomOrder([vision.Resize((4, 4)), vision.HorizontalFlip()]).output_spec(
        spec
    ) == TensorSpec((4, 4, 3), U8)


def test_random_order_spec_for_many_elements_is_bounded() -> None:
    op = transforms.RandomOrder([vision.HorizontalFlip()] * 11 + [vision.Resize((4, 4))])
    assert op.output_spec(TensorSpec((10, 12, 3), U8)) == TensorSpec((None, None, 3), U8)


def test_compose_spec_chains_and_refuses_callables() -> None:
    op = transforms.Compose([vision.Decode(), vision.Resize(8), vision.HWC2CHW()])
    assert op.output_spec(TensorSpec((None,), U8)) == TensorSpec((3, None, None), U8)
    with pytest.raises(NotImplementedError, match=r"Compose: transforms\[1\] is a plain callable"):
        transforms.Compose([vision.HWC2CHW(), lambda x: x]).output_spec(TensorSpec((2, 2, 3), U8))


def test_label_and_tensor_specs() -> None:
    i64 = np.dtype(np.int64)
    assert transforms.OneHot(7).output_spec(TensorSpec((None,), i64)) == TensorSpec((None, 7), i64)
    assert transforms.OneHot(7, 0.2).output_spec(TensorSpec((), i64)) == TensorSpec(
        (7,), np.dtype(np.float64)
    )
    a, b = transforms.Duplicate().output_spec(TensorSpec((2, None), U8))
    assert a == b == TensorSpec((2, None), U8)
    assert transforms.TypeCast("float16").output_spec(TensorSpec((5,), U8)) == TensorSpec(
        (5,), np.dtype("float16")
    )


# ---------------------------------------------------------------------------------------------- construction


def test_specs_pickle_and_compare() -> None:
    ops = [
        transforms.OneHot(3, 0.1),
        transforms.Fill(2.5),
        transforms.Duplicate(),
        transforms.Concatenate(0, np.array([1]), np.array([2, 3])),
        transforms.RandomApply([vision.HorizontalFlip()], 0.3),
        transforms.RandomChoice([vision.HorizontalFlip(), vision.Resize(3)]),
        transforms.RandomOrder([vision.HorizontalFlip(), vision.Resize(3)]),
    ]
    for op in ops:
        back = pickle.loads(pickle.dumps(op))
        assert back == op and repr(back) == repr(op)
    assert transforms.Concatenate(0, np.array([1])) != transforms.Concatenate(0, np.array([2]))
    assert [op.random for op in ops] == [False, False, False, False, True, True, True]


BAD: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (
        lambda: transforms.OneHot(0),
        ArgumentError,
        r"OneHot: `num_classes` must be in \[1, 2147483647\]. Found: 0",
    ),
    (
        lambda: transforms.OneHot(2.0),
        TypeError,
        r"OneHot: `num_classes` must be an int. Found: 2.0 \(float\)",
    ),
    (
        lambda: transforms.OneHot(3, 1.5),
        ArgumentError,
        r"OneHot: `smoothing_rate` must be in \[0, 1\]. Found: 1.5",
    ),
    (
        lambda: transforms.Fill([1]),
        TypeError,
        r"Fill: `fill_value` must be an int, float, bool, str or bytes",
    ),
    (lambda: transforms.Concatenate(axis=0.5), TypeError, r"Concatenate: `axis` must be an int"),
    (
        lambda: transforms.Concatenate(prepend=3),
        ArgumentError,
        r"Concatenate: `prepend` must have at least 1 dimension",
    ),
    (
        lambda: transforms.Concatenate(append=[object()]),
        TypeError,
        r"Concatenate: `append` must be a numeric or string",
    ),
    (lambda: transforms.RandomApply([]), ArgumentError, r"RandomApply: `transforms` must not be empty"),
    (
        lambda: transforms.RandomApply([vision.HWC2CHW()], prob=2),
        ArgumentError,
        r"RandomApply: `prob` must be in \[0, 1\]. Found: 2.0",
    ),
    (
        lambda: transforms.RandomApply([transforms.Duplicate()]),
        ArgumentError,
        r"RandomApply: `transforms` must give as many outputs",
    ),
    (
        lambda: transforms.RandomChoice(vision.HWC2CHW()),
        TypeError,
        r"RandomChoice: `transforms` must be a list of ops",
    ),
    (
        lambda: transforms.RandomOrder([vision.HWC2CHW(), 3]),
        TypeError,
        r"RandomOrder: `transforms\[1\]` must be an op or a callable",
    ),
    (
        lambda: transforms.RandomOrder([transforms.Duplicate()]),
        ArgumentError,
        r"RandomOrder: `transforms\[0\]` \(Duplicate\) must give",
    ),
]


@pytest.mark.parametrize(
    ("make", "error", "message"), BAD, ids=[m.split(":")[0] + str(i) for i, (_, _, m) in enumerate(BAD)]
)
def test_bad_arguments_fail_at_construction(
    make: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make()
