"""The GPU device's DALI translation, run on DALI's CPU backend (``config.set_gpu_emulation``).

The same pipelines run on a real GPU in tests/ops/test_gpu_device.py (marked ``gpu``). Pipelines are
small and shared where possible: building a DALI pipeline costs a few milliseconds on the CPU backend.
Skipped, with the reason, where NVIDIA DALI is not installed (``pip install 'minddata[gpu]'``).
"""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest
from testkit import jpeg_bytes
from vision_testing import noise_photo

import minddata as md
from minddata import transforms, vision
from minddata.errors import DeviceError, RowError
from minddata.ops import KernelContext, get_kernel
from minddata.ops.gpu.segment import DaliSegment, torch_dtype
from minddata.ops.gpu.translation import Kind
from minddata.ops.probe import dali_status

_ok, _why = dali_status()
if not _ok and os.environ.get("MINDDATA_REQUIRE_DALI"):
    # CI installs DALI to test the translation; a skip there would hide that nothing was tested.
    raise RuntimeError(f"MINDDATA_REQUIRE_DALI is set but nvidia.dali is not importable: {_why}")
pytestmark = pytest.mark.skipif(not _ok, reason=f"nvidia.dali not importable ({_why})")

MEAN, STD = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]


@pytest.fixture(autouse=True)
def _emulate():
    md.config.set_gpu_emulation(True)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """20 JPEGs of assorted sizes, a PNG (row 5) and a grayscale JPEG (row 9), in one class."""
    root = tmp_path_factory.mktemp("gpu") / "images"
    (root / "c").mkdir(parents=True)
    for i in range(20):
        pixels = noise_photo(40 + 3 * i, 56 + 5 * (i % 4), seed=i)
        if i == 5:
            data = cv2.imencode(".png", pixels[..., ::-1])[1].tobytes()
        elif i == 9:
            data = jpeg_bytes(pixels[..., 0], quality=92)
        else:
            data = jpeg_bytes(pixels, quality=92)
        (root / "c" / f"{i:02d}.{'png' if i == 5 else 'jpg'}").write_bytes(data)
    return root


def _run(folder, ops, *, workers=2, batch=None, columns="image"):
    ds = md.ImageFolderDataset(str(folder), shuffle=False, num_parallel_workers=workers)
    ds = ds.map(ops, input_columns=columns, num_parallel_workers=workers)
    if batch:
        ds = ds.batch(batch)
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    rows = [row["image"] for row in it]
    return rows, it.device_stats


def _gpu(*ops):
    return [op.device("GPU") for op in ops]


# --- a seeded pipeline gives the CPU's crops and flips --------------------------------------------


def test_geometry_and_flips_are_exactly_the_cpus(folder):
    md.config.set_seed(11)

    def ops():
        return [vision.Decode(), vision.CenterCrop((30, 44)), vision.RandomHorizontalFlip(), vision.RandomVerticalFlip(),
                vision.Pad((1, 2, 3, 4), fill_value=(9, 8, 7)), vision.Crop((1, 1), (28, 40)), vision.HWC2CHW()]

    want, _ = _run(folder, ops())
    got, stats = _run(folder, _gpu(*ops()))
    assert len(got) == 20 and all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    assert stats.transfers == {"CPU->GPU": 20, "GPU->CPU": 20}


def test_random_resized_crop_and_normalize_match_within_a_level(folder):
    md.config.set_seed(12)

    def ops():
        return [vision.Decode(), vision.RandomResizedCrop((32, 48), scale=(0.2, 1.0)), vision.RandomHorizontalFlip(),
                vision.Normalize(MEAN, STD), vision.HWC2CHW()]

    md.config.set_enable_fusion(False)  # the CPU's fused decode-crop resamples at a reduced DCT scale
    want, _ = _run(folder, ops(), batch=4)
    md.config.set_enable_fusion(True)
    got, _ = _run(folder, _gpu(*ops()), batch=4)
    diff = np.abs(np.concatenate(got) - np.concatenate(want)) * np.asarray(STD, np.float32)[:, None, None]
    # BILINEAR within 1 level: a different crop or flip would be off by tens of levels.
    assert diff.max() <= 1.0 + 1e-3 and diff.mean() < 0.2


def test_output_does_not_depend_on_worker_count_or_chunking(folder):
    md.config.set_seed(13)

    def ops():
        return _gpu(vision.Decode(), vision.RandomResizedCrop(24), vision.RandomRotation(20, expand=True),
                    vision.RandomColorAdjust(0.3, 0.3, 0.3, 0.05))

    one, _ = _run(folder, ops(), workers=1)
    md.config.set_rows_per_chunk(3)
    three, _ = _run(folder, ops(), workers=3)
    assert all(np.array_equal(a, b) for a, b in zip(one, three, strict=True))


# --- segments, boundaries and transfers -----------------------------------------------------------


def test_a_map_splits_into_device_parts_and_moves_rows_once_per_boundary(folder):
    ops = [vision.Decode(), vision.Resize((32, 32)).device("GPU"), vision.Rescale(1 / 255, 0),
           vision.HorizontalFlip().device("GPU"), vision.HWC2CHW().device("GPU")]
    ds = md.ImageFolderDataset(str(folder), shuffle=False).map(ops, input_columns="image")
    text = ds.explain()
    assert text.count("one DALI pipeline") == 2
    rows, stats = _run(folder, ops)
    assert stats.transfers == {"CPU->GPU": 40, "GPU->CPU": 40}
    want = [
        np.ascontiguousarray(cv2.resize(vision.Decode()(np.fromfile(f, np.uint8)), (32, 32)).astype(np.float32)
                             [:, ::-1].transpose(2, 0, 1) / np.float32(255))
        for f in sorted((folder / "c").iterdir())
    ]
    assert all(np.abs(a - b).max() <= 1.0 / 255 + 1e-6 for a, b in zip(rows, want, strict=True))


def test_png_and_grayscale_rows_decode_on_the_gpu(folder):
    rows, _ = _run(folder, _gpu(vision.Decode()))
    cpu, _ = _run(folder, [vision.Decode()])
    assert rows[5].shape == cpu[5].shape and rows[9].shape == cpu[9].shape == (67, 56 + 5 * 1, 3)
    assert all(np.array_equal(a, b) for a, b in zip(rows, cpu, strict=True))


def test_a_bad_row_fails_alone_naming_op_row_and_file(folder, tmp_path):
    bad = tmp_path / "bad" / "c"
    bad.mkdir(parents=True)
    for i in range(6):
        data = jpeg_bytes(noise_photo(40, 48, i), quality=92)
        if i == 3:
            data = data[: len(data) // 3]  # truncated: the header reads, the data does not
        if i == 4:
            data = b"GIF89a" + bytes(40)
        (bad / f"{i}.jpg").write_bytes(data)
    with pytest.raises(RowError) as caught:
        _run(tmp_path / "bad", _gpu(vision.Decode(), vision.Resize((16, 16))))
    assert "failed on row 3" in str(caught.value) and "3.jpg" in str(caught.value)
    md.config.set_error_samples_mode("skip")
    ds = md.ImageFolderDataset(str(tmp_path / "bad"), shuffle=False).map(
        _gpu(vision.Decode(), vision.Resize((16, 16))), input_columns="image"
    )
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    assert len(list(it)) == 4 and it.skipped_rows == 2
    assert any("GIF image" in s and "Place Decode on the CPU" in s for s in it.error_stats.samples)


def test_an_error_in_an_earlier_part_keeps_row_order_and_index(folder):
    def fail_on_row_7(image):
        if image.shape[0] == 40 + 3 * 7:
            raise ValueError("row 7 is refused")
        return image

    md.config.set_error_samples_mode("replace")
    rows, _ = _run(folder, [vision.Decode(), fail_on_row_7, vision.Resize((20, 20)).device("GPU"), vision.HWC2CHW()])
    assert len(rows) == 20 and np.array_equal(rows[7], rows[6])
    md.config.set_error_samples_mode("raise")
    with pytest.raises(RowError, match="op fail_on_row_7 failed on row 7"):
        _run(folder, [vision.Decode(), fail_on_row_7, vision.Resize((20, 20)).device("GPU")])


def test_segments_batch_rows_and_close_with_the_iterator(folder):
    from minddata.ops.gpu import segment

    runs: list[int] = []
    made: list[segment.DaliSegment] = []
    original_run, original_init = segment.DaliSegment.run, segment.DaliSegment.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        made.append(self)

    def run(self, values, contexts):
        runs.append(len(values))
        return original_run(self, values, contexts)

    mp = pytest.MonkeyPatch()
    mp.setattr(segment.DaliSegment, "__init__", init)
    mp.setattr(segment.DaliSegment, "run", run)
    try:
        ds = md.ImageFolderDataset(str(folder), shuffle=False).map(
            _gpu(vision.Decode(), vision.Resize((16, 16))), input_columns="image"
        ).batch(8)
        it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
        assert [b["image"].shape[0] for b in it] == [8, 8, 4]
        it.close()
    finally:
        mp.undo()
    # The following batch's size is the DALI batch: 20 rows in 3 runs, not one per source chunk.
    assert runs == [8, 8, 4]
    assert made and all(seg._closed for seg in made)


# --- the per-row kernels --------------------------------------------------------------------------


def test_per_row_kernels_draw_what_the_cpu_kernels_draw():
    from minddata.ops import get_kernel

    image = noise_photo(60, 80, 1)
    op = vision.RandomResizedCrop((20, 30), scale=(0.1, 1.0), interpolation=vision.Inter.NEAREST)
    for row in range(6):
        ctx = dict(seed=5, pass_index=2, row_index=row, op_position=3)
        got = get_kernel(op.name, "GPU")(op, KernelContext(**ctx), image)
        want = get_kernel(op.name, "CPU")(op, KernelContext(**ctx), image)
        # NEAREST: the same box, the same source pixels but at OpenCV's double-rounded pixel edges.
        differ = np.any(got != want, axis=-1)
        assert differ.any(axis=1).sum() <= 2 or differ.any(axis=0).sum() <= 2  # a column or two, a row or two


def test_per_row_kernel_needs_a_gpu_or_emulation(monkeypatch):
    from minddata.errors import DeviceError
    from minddata.ops import get_kernel, probe
    from minddata.ops.gpu import kernels

    md.config.set_gpu_emulation(False)
    monkeypatch.setattr(probe, "visible_gpus", lambda: ([], "no NVIDIA GPU visible (nvidia-smi -L found none)"))
    monkeypatch.setattr(kernels, "_backends", {})
    with pytest.raises(DeviceError, match=r"HorizontalFlip on the GPU: not available here.*Place HorizontalFlip on "
                                          r"the CPU.*set_gpu_emulation"):
        get_kernel("HorizontalFlip", "GPU")(vision.HorizontalFlip(), KernelContext(), noise_photo(4, 4, 0))


def test_resume_mid_epoch_gives_the_rest_of_the_uninterrupted_run(folder):
    md.config.set_seed(21)
    ops = lambda: [vision.Decode(), vision.RandomResizedCrop(24).device("GPU"), vision.Rescale(1 / 255, 0),  # noqa: E731
                   vision.RandomHorizontalFlip().device("GPU")]
    ds = md.ImageFolderDataset(str(folder), shuffle=False).map(ops(), input_columns="image").batch(4)
    whole = [b["image"] for b in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    first = [next(it)["image"] for _ in range(2)]
    state = it.get_state()
    it.close()
    rest = [b["image"] for b in ds.create_dict_iterator(num_epochs=1, output_numpy=True, state=state)]
    assert len(first) + len(rest) == len(whole) == 5
    assert all(np.array_equal(a, b) for a, b in zip(first + rest, whole, strict=True))


def test_online_session_runs_gpu_ops_and_delivers_a_bad_rows_error(folder):
    pipe = md.OnlineDataset(["image"]).map(_gpu(vision.Decode(), vision.Resize((20, 20))) + [vision.HWC2CHW()],
                                           input_columns="image")
    files = sorted((folder / "c").iterdir())[:3]
    with pipe.serve() as session:
        good = [session.submit({"image": np.fromfile(f, np.uint8)}) for f in files]
        bad = session.submit({"image": np.frombuffer(b"not an image at all", np.uint8)})
        assert [f.result(timeout=30)["image"].shape for f in good] == [(3, 20, 20)] * 3
        with pytest.raises(RowError, match="op Decode\\+Resize failed"):
            bad.result(timeout=30)


# --- pixel adjustments (minddata.vision.adjust) ---------------------------------------------------

# Each is the CPU kernel's arithmetic in the same precision with the same rounding: exact on uint8.
ADJUST_OPS = {
    "Invert": vision.Invert,
    "RandomInvert": lambda: vision.RandomInvert(0.5),
    "Posterize": lambda: vision.Posterize(3),
    "RandomPosterize": lambda: vision.RandomPosterize((1, 7)),
    "Solarize": lambda: vision.Solarize((50, 200)),
    "Solarize-single": lambda: vision.Solarize(128),
    "RandomSolarize": lambda: vision.RandomSolarize((0, 255)),
    "AdjustBrightness": lambda: vision.AdjustBrightness(1.3),
    "AdjustBrightness-ties": lambda: vision.AdjustBrightness(1.5),
    "AdjustContrast": lambda: vision.AdjustContrast(1.7),
    "AdjustSaturation": lambda: vision.AdjustSaturation(0.55),
    "RandomColor": lambda: vision.RandomColor((0.1, 1.9)),
    "AdjustHue": lambda: vision.AdjustHue(-0.2),
    "AdjustHue-zero": lambda: vision.AdjustHue(0.0),
}


@pytest.mark.parametrize("name", sorted(ADJUST_OPS))
def test_pixel_adjustments_are_exactly_the_cpus_with_the_same_draws(name):
    op = ADJUST_OPS[name]()
    image = noise_photo(37, 45, 3)
    outputs = set()
    for row in range(6):
        ctx = dict(seed=4, pass_index=1, row_index=row, op_position=2)
        got = get_kernel(op.name, "GPU")(op, KernelContext(**ctx), image)
        want = get_kernel(op.name, "CPU")(op, KernelContext(**ctx), image)
        assert got.dtype == want.dtype and np.array_equal(got, want), f"row {row}"
        outputs.add(got.tobytes())
    assert len(outputs) > 1 if op.random else len(outputs) == 1


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("make", [vision.Invert, lambda: vision.AdjustBrightness(1.3), lambda: vision.Solarize((50, 200))])
def test_numeric_adjustments_keep_the_cpus_dtype_rules(make, dtype):
    op = make()
    image = (noise_photo(20, 24, 5).astype(np.float64) * 1.7 - 30).astype(dtype)
    got = get_kernel(op.name, "GPU")(op, KernelContext(), image)
    want = get_kernel(op.name, "CPU")(op, KernelContext(), image)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_seeded_random_adjustments_in_a_pipeline_match_the_cpu(folder):
    md.config.set_seed(17)

    def ops():
        return [vision.Decode(), vision.RandomInvert(0.5), vision.RandomPosterize((2, 6)),
                vision.RandomSolarize((60, 220)), vision.RandomColor((0.2, 1.8))]

    want, _ = _run(folder, ops())
    got, _ = _run(folder, [ops()[0], *_gpu(*ops()[1:])])
    assert len(got) == 20 and all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))


def test_rgb_only_adjustments_reject_other_images_as_the_cpu_does():
    gray = noise_photo(20, 24, 6)[..., 0]
    for op in (vision.AdjustContrast(1.5), vision.AdjustHue(0.1), vision.RandomColor()):
        with pytest.raises(ValueError, match=f"{op.name}: expected an RGB uint8 image"):
            get_kernel(op.name, "GPU")(op, KernelContext(), gray)
    with pytest.raises(TypeError, match="Posterize: expected a uint8 image"):
        get_kernel("Posterize", "GPU")(vision.Posterize(2), KernelContext(), gray.astype(np.float32))


# --- PadToSize and Erase (minddata.vision.pad_erase) ----------------------------------------------

PAD_ERASE_OPS = {
    "PadToSize-centred": lambda: vision.PadToSize((50, 60), fill_value=(9, 8, 7)),
    "PadToSize-offset": lambda: vision.PadToSize(60, offset=(1, 2), fill_value=200),
    "Erase-inside": lambda: vision.Erase(2, 3, 5, 6, value=(10, 20, 30)),
    "Erase-leaves-the-image": lambda: vision.Erase(30, 40, 50, 60, value=3.7),
    "Erase-outside": lambda: vision.Erase(40, 3, 5, 6),
}


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
@pytest.mark.parametrize("name", sorted(PAD_ERASE_OPS))
def test_pad_to_size_and_erase_are_exactly_the_cpus(name, dtype):
    op = PAD_ERASE_OPS[name]()
    image = (noise_photo(37, 45, 7).astype(np.float64) * 1.5).astype(dtype)
    got = get_kernel(op.name, "GPU")(op, KernelContext(), image)
    want = get_kernel(op.name, "CPU")(op, KernelContext(), image)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_pad_to_size_that_does_not_fit_fails_as_on_the_cpu():
    op = vision.PadToSize(40, offset=(1, 2))
    with pytest.raises(ValueError, match=r"PadToSize: an image of size \(37, 45\) at offset"):
        get_kernel("PadToSize", "GPU")(op, KernelContext(), noise_photo(37, 45, 8))


def test_pad_to_size_with_an_edge_border_is_refused_when_the_iterator_is_created(folder):
    from minddata.errors import DeviceError

    op = vision.PadToSize(80, padding_mode=vision.Border.EDGE).device("GPU")
    ds = md.ImageFolderDataset(str(folder), shuffle=False).map([vision.Decode(), op], input_columns="image")
    with pytest.raises(DeviceError, match="PadToSize: padding_mode='edge' has no GPU equivalent"):
        ds.create_dict_iterator(num_epochs=1)


# --- RandomResize ---------------------------------------------------------------------------------


def test_random_resize_draws_the_cpus_interpolation_and_resizes_as_resize_does():
    from minddata.ops.plans.bbox import random_interpolation

    image = noise_photo(24, 33, 9)
    op = vision.RandomResize((10, 14))
    drawn = set()
    for row in range(12):
        name = random_interpolation(KernelContext(seed=2, row_index=row).rng)
        drawn.add(name)
        got = get_kernel("RandomResize", "GPU")(op, KernelContext(seed=2, row_index=row), image)
        same = vision.Resize((10, 14), getattr(vision.Inter, name))
        assert np.array_equal(got, get_kernel("Resize", "GPU")(same, KernelContext(), image)), f"row {row}: {name}"
        want = get_kernel("RandomResize", "CPU")(op, KernelContext(seed=2, row_index=row), image)
        # Resize's stated differences from OpenCV: AREA and BICUBIC filters differ by design.
        assert np.abs(got.astype(int) - want).max() <= (16 if name in ("AREA", "BICUBIC") else 1)
    assert drawn == {"NEAREST", "BILINEAR", "BICUBIC", "AREA"}


def test_random_resize_spells_dalis_interpolation_codes():
    from nvidia.dali.types import DALIInterpType

    from minddata.ops.gpu.resize import ROW_INTERP

    assert ROW_INTERP == {"NEAREST": int(DALIInterpType.INTERP_NN), "BILINEAR": int(DALIInterpType.INTERP_LINEAR),
                          "BICUBIC": int(DALIInterpType.INTERP_CUBIC), "AREA": int(DALIInterpType.INTERP_LINEAR)}


# --- Equalize and the perspective warps -----------------------------------------------------------


@pytest.mark.parametrize("make", [vision.Equalize, lambda: vision.RandomEqualize(0.5)])
def test_equalize_is_exactly_opencvs_with_the_same_draws(make):
    op = make()
    for image in (noise_photo(37, 45, 10), noise_photo(37, 45, 11)[..., 0]):
        for row in range(6):
            got = get_kernel(op.name, "GPU")(op, KernelContext(seed=3, row_index=row), image)
            want = get_kernel(op.name, "CPU")(op, KernelContext(seed=3, row_index=row), image)
            assert got.shape == want.shape and np.array_equal(got, want), f"row {row}"


WARP_POINTS = ([[0, 0], [59, 0], [59, 39], [0, 39]], [[3, 2], [55, 0], [59, 35], [1, 39]])


@pytest.mark.parametrize("interpolation", ["NEAREST", "BILINEAR", "BICUBIC"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_perspective_warps_as_opencv_does(interpolation, dtype):
    op = vision.Perspective(*WARP_POINTS, getattr(vision.Inter, interpolation))
    image = noise_photo(40, 60, 12).astype(dtype)
    got = get_kernel("Perspective", "GPU")(op, KernelContext(), image)
    want = get_kernel("Perspective", "CPU")(op, KernelContext(), image)
    diff = np.abs(got.astype(np.float64) - want)
    # The homography travels as float32 (OpenCV keeps doubles): at most a level where OpenCV's fixed-point
    # weights round the other way.
    assert got.dtype == want.dtype and diff.max() <= 1.0 and diff.mean() < 0.01


def test_random_perspective_draws_the_cpus_corners():
    op = vision.RandomPerspective(0.5, prob=0.6, interpolation=vision.Inter.BILINEAR)
    image = noise_photo(40, 60, 13)
    warped = 0
    for row in range(10):
        got = get_kernel(op.name, "GPU")(op, KernelContext(seed=8, row_index=row), image)
        want = get_kernel(op.name, "CPU")(op, KernelContext(seed=8, row_index=row), image)
        # Another draw would move corners by pixels: tens of levels off, not at most one.
        assert np.abs(got.astype(int) - want).max() <= 1, f"row {row}"
        warped += not np.array_equal(want, image)
    assert 0 < warped < 10


def test_perspective_on_a_dtype_dali_cannot_warp_names_the_fix():
    op = vision.Perspective(*WARP_POINTS)
    with pytest.raises(TypeError, match="Perspective: DALI resamples uint8, int16, uint16 and float32 images"):
        get_kernel("Perspective", "GPU")(op, KernelContext(), noise_photo(40, 60, 14).astype(np.int32))


# --- RandomLighting, AdjustGamma, RandomGrayscale, ToTensor ---------------------------------------

# Largest difference per dtype: exact where the CPU kernel's arithmetic is reproduced step by step; one
# unit in the last place where NumPy's float32/float16 power or OpenCV's float/16-bit grey conversion
# round differently from the float64 result rounded once.
NEAR_EXACT = {
    "RandomLighting": (lambda: vision.RandomLighting(0.5), {np.uint8: 0, np.int16: 0, np.float32: 0, np.float64: 0}),
    "AdjustGamma": (lambda: vision.AdjustGamma(2.2, gain=1.1),
                    {np.uint8: 0, np.float32: 1.2e-7, np.float64: 1e-15, np.float16: 1e-3}),
    "RandomGrayscale": (lambda: vision.RandomGrayscale(0.5),
                        {np.uint8: 0, np.int32: 0, np.float64: 0, np.float32: 1e-4, np.uint16: 1}),
    "ToTensor": (vision.ToTensor, {np.uint8: 0, np.int16: 0, np.float32: 0, np.float64: 0}),
    "ToTensor-float16": (lambda: vision.ToTensor(np.float16), {np.uint8: 0, np.float32: 0}),
    "ToTensor-int32": (lambda: vision.ToTensor(np.int32), {np.uint8: 0, np.float64: 0}),
}


@pytest.mark.parametrize("name", sorted(NEAR_EXACT))
def test_lighting_gamma_grayscale_and_to_tensor_match_the_cpu(name):
    make, largest = NEAR_EXACT[name]
    op = make()
    for dtype, tolerance in largest.items():
        scale = 1 / 255 if name == "AdjustGamma" and np.dtype(dtype).kind == "f" else 200 if dtype == np.uint16 else 1.3
        image = (noise_photo(30, 40, 15) * scale).astype(dtype)
        for row in range(4):
            got = get_kernel(op.name, "GPU")(op, KernelContext(seed=6, row_index=row), image)
            want = get_kernel(op.name, "CPU")(op, KernelContext(seed=6, row_index=row), image)
            assert got.dtype == want.dtype and got.shape == want.shape, (dtype, row)
            assert np.abs(got.astype(np.float64) - want).max() <= tolerance, (dtype, row)


def test_to_tensor_hands_a_chw_row_to_the_next_op_and_a_gray_image_gets_a_channel_axis(folder):
    got, _ = _run(folder, [vision.Decode(), *_gpu(vision.Resize((20, 24)), vision.ToTensor())])
    want, _ = _run(folder, [vision.Decode(), vision.Resize((20, 24)), vision.ToTensor()])
    assert got[0].shape == (3, 20, 24) and all(np.abs(a - b).max() <= 1 / 255 + 1e-6 for a, b in zip(got, want, strict=True))
    gray = noise_photo(20, 24, 16)[..., 0]
    assert get_kernel("ToTensor", "GPU")(vision.ToTensor(), KernelContext(), gray).shape == (1, 20, 24)


# --- sharpness ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [lambda: vision.AdjustSharpness(2.0), lambda: vision.RandomSharpness((0.1, 1.9)),
     lambda: vision.RandomAdjustSharpness(0.3, prob=0.5)],
)
def test_sharpness_is_exactly_the_cpus_on_uint8_borders_included(make):
    op = make()
    # Images of 1-3 pixels per side are all border: the CPU keeps every pixel before blending.
    for image in (noise_photo(24, 33, 17), noise_photo(24, 33, 18)[..., 0], noise_photo(2, 33, 19), noise_photo(3, 3, 20)):
        for row in range(4):
            got = get_kernel(op.name, "GPU")(op, KernelContext(seed=9, row_index=row), image)
            want = get_kernel(op.name, "CPU")(op, KernelContext(seed=9, row_index=row), image)
            assert got.shape == want.shape and np.array_equal(got, want), (image.shape, row)


def test_sharpness_on_other_dtypes_is_within_opencvs_rounding():
    op = vision.RandomSharpness((0.1, 1.9))
    for dtype, largest in ((np.int16, 1), (np.uint16, 1), (np.float32, 1e-4)):
        image = (noise_photo(24, 33, 21) * 100).astype(dtype)
        for row in range(4):
            got = get_kernel(op.name, "GPU")(op, KernelContext(row_index=row), image)
            want = get_kernel(op.name, "CPU")(op, KernelContext(row_index=row), image)
            assert got.dtype == want.dtype and np.abs(got.astype(np.float64) - want).max() <= largest
    with pytest.raises(TypeError, match="RandomSharpness: DALI filters uint8, int16, uint16 and float32 images"):
        get_kernel(op.name, "GPU")(op, KernelContext(), noise_photo(24, 33, 22).astype(np.float64))


# --- device copies, device faults, the hardware decoder ------------------------------------------


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
                                   "float16", "float32", "float64", "bool"])
def test_a_segments_copy_for_torch_covers_every_output_dtype(dtype):
    # DALI's own feed_ndarray looks dtypes up in a table without UINT16/32/64 (a KeyError there);
    # the segment copies with copy_to_external into a tensor of torch's dtype. On DALI's CPU backend
    # the samples are host tensors, copied the same way into host tensors.
    torch = pytest.importorskip("torch", reason="torch is not installed: device outputs are torch tensors")
    from minddata.ops.gpu.segment import _DeviceCopies

    image = (noise_photo(5, 7, 2) % 2).astype(dtype) if dtype == "bool" else (noise_photo(5, 7, 2) * 3).astype(dtype)
    seg = DaliSegment([transforms.TypeCast(dtype)], backend="dali-cpu", batch_size=2)
    try:
        pipe = seg._pipeline(Kind("HWC", np.dtype(dtype), 3))
        pipe.feed_input("in", [image, image[::-1].copy()])
        (out,) = pipe.run()
        copies = _DeviceCopies(None)
        got = [copies.copy(out[j]) for j in range(2)]
        copies.finish()
    finally:
        seg.close()
    assert all(isinstance(t, torch.Tensor) and t.dtype == torch_dtype(np.dtype(dtype)) for t in got)
    np.testing.assert_array_equal(got[0].numpy(), image)
    np.testing.assert_array_equal(got[1].numpy(), image[::-1])


DEVICE_FAULTS = [
    "Critical error in pipeline:\nError in MIXED operator `nvidia.dali.fn.decoders.image`: CUDA error "
    "\"cudaErrorMemoryAllocation\" out of memory",
    "Critical error in pipeline:\nCUDA runtime API error cudaErrorIllegalAddress (700):\nan illegal memory access "
    "was encountered",
    "Error in MIXED operator `nvidia.dali.fn.decoders.image`: nvJPEG error (NVJPEG_STATUS_NOT_INITIALIZED)",
    "Error in MIXED operator: nvJPEG error (NVJPEG_STATUS_ALLOCATOR_FAILURE): allocator failed",
    "CUDA driver API error CUDA_ERROR_LAUNCH_FAILED (719): unspecified launch failure",
]
ROW_ERRORS = [
    "Error in CPU operator `nvidia.dali.fn.decoders.image`: Unrecognized image format. Supported formats are: JPEG",
    "Error in MIXED operator: nvJPEG error (NVJPEG_STATUS_BAD_JPEG): bitstream corrupted",
    "Assert on \"crop_window\" failed: the crop window is outside the image",
]


@pytest.mark.parametrize("text", DEVICE_FAULTS)
def test_cuda_and_nvjpeg_failures_are_device_faults(text):
    from minddata.ops.gpu.segment import device_fault

    assert device_fault(RuntimeError(text))


@pytest.mark.parametrize("text", ROW_ERRORS)
def test_bad_data_is_not_a_device_fault(text):
    from minddata.ops.gpu.segment import device_fault

    assert not device_fault(RuntimeError(text))


def test_dalis_own_error_for_a_truncated_jpeg_is_the_rows(tmp_path):
    from minddata.ops.gpu.segment import RowFailure, device_fault

    seg = DaliSegment([vision.Decode()], backend="dali-cpu", batch_size=2)
    try:
        results, _ = seg.run([jpeg_bytes(noise_photo(40, 48, 1), quality=92)[:300], jpeg_bytes(noise_photo(40, 48, 2), quality=92)], [[KernelContext()]] * 2)
    finally:
        seg.close()
    assert isinstance(results[0], RowFailure) and not device_fault(results[0].error.__cause__ or results[0].error)
    assert results[1].shape == (40, 48, 3)


def test_a_device_fault_stops_the_pipeline_under_skip(folder, monkeypatch):
    # What DALI raises when the GPU runs out of memory mid-run; DALI's CPU backend cannot produce it.
    from minddata.ops.gpu.segment import DaliSegment as Segment

    real = Segment._pipeline

    def failing(self, kind):
        pipe = real(self, kind)
        monkeypatch.setattr(pipe, "run", lambda: (_ for _ in ()).throw(RuntimeError(DEVICE_FAULTS[0])))
        return pipe

    monkeypatch.setattr(Segment, "_pipeline", failing)
    md.config.set_error_samples_mode("skip")
    it = md.ImageFolderDataset(str(folder), shuffle=False).map(
        _gpu(vision.Decode(), vision.Resize((16, 16))), input_columns="image").create_dict_iterator(num_epochs=1)
    with pytest.raises(DeviceError, match="the device failed.*out of memory.*not a problem with the data"):
        list(it)
    assert it.skipped_rows == 0


def test_gpu_decoders_share_the_work_with_the_hardware_jpeg_engines():
    from minddata.ops.gpu.segment import GPU_HW_DECODER_LOAD

    assert 0 < GPU_HW_DECODER_LOAD <= 1
    assert DaliSegment([vision.Decode()], backend="cuda", device_id=0).hw_decoder_loads == [GPU_HW_DECODER_LOAD]
    dvpp = DaliSegment([vision.Decode()], backend="cuda", device_id=0, hw_decoder_load=[1.0])
    assert dvpp.hw_decoder_loads == [1.0]
