"""The GPU device's torch driver (``config.set_gpu_driver("torch")``), run on CPU tensors.

The same plans as the DALI driver run on PyTorch tensor operations; ``set_gpu_emulation(True)``
runs them on CPU tensors, which is how this is checked without a GPU (as the DALI driver is checked on
DALI's CPU backend). On a GPU machine ``MINDDATA_REQUIRE_GPU`` runs tests/ops/test_gpu_device.py
against the real device. Skipped, with the reason, where torch is not installed.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from vision_testing import noise_photo

import minddata as md
from minddata import transforms, vision
from minddata.errors import DeviceError, RowError
from minddata.ops import KernelContext, get_kernel, probe

torch = pytest.importorskip("torch", reason="PyTorch is not installed: the torch GPU driver needs it")

MEAN, STD = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]


@pytest.fixture(autouse=True)
def _torch_driver_emulated(monkeypatch):
    md.config.set_gpu_driver("torch")
    md.config.set_gpu_emulation(True)
    from minddata.ops.gpu import kernels

    monkeypatch.setattr(kernels, "_backends", {})


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """12 JPEGs of assorted sizes, a PNG (row 5) and a grayscale JPEG (row 9), in one class."""
    root = tmp_path_factory.mktemp("torchgpu") / "images"
    (root / "c").mkdir(parents=True)
    for i in range(12):
        pixels = noise_photo(40 + 3 * i, 56 + 5 * (i % 4), seed=i)
        buf = io.BytesIO()
        if i == 5:
            Image.fromarray(pixels).save(buf, "PNG")
        else:
            Image.fromarray(pixels[..., 0] if i == 9 else pixels).save(buf, "JPEG", quality=92)
        (root / "c" / f"{i:02d}.{'png' if i == 5 else 'jpg'}").write_bytes(buf.getvalue())
    return root


def _run(folder, ops, *, workers=2, batch=None):
    ds = md.ImageFolderDataset(str(folder), shuffle=False, num_parallel_workers=workers)
    ds = ds.map(ops, input_columns="image", num_parallel_workers=workers)
    if batch:
        ds = ds.batch(batch)
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    return [row["image"] for row in it], it.device_stats


def _gpu(*ops):
    return [op.device("GPU") for op in ops]


def test_the_torch_driver_is_chosen_and_emulated():
    backend, why = probe.gpu_backend()
    assert backend == "torch-cpu" and "PyTorch" in why


def test_geometry_flips_and_casts_are_exactly_the_cpus(folder):
    md.config.set_seed(21)

    def ops():
        return [vision.Decode(), vision.CenterCrop((30, 44)), vision.RandomHorizontalFlip(), vision.RandomVerticalFlip(),
                vision.Pad((1, 2, 3, 4), fill_value=(9, 8, 7)), vision.Crop((1, 1), (28, 40)),
                vision.CenterCrop(50), vision.Normalize(MEAN, STD), vision.HWC2CHW(), transforms.TypeCast(np.float16)]

    want, _ = _run(folder, ops())
    got, stats = _run(folder, _gpu(*ops()))
    assert len(got) == 12 and all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    assert stats.transfers == {"CPU->GPU": 12, "GPU->CPU": 12}
    assert "one torch segment on CPU tensors (emulation)" in md.ImageFolderDataset(str(folder)).map(
        _gpu(vision.Decode(), vision.HorizontalFlip()), input_columns="image").explain()


def test_random_resized_crop_draws_the_cpus_boxes(folder):
    md.config.set_seed(22)

    def ops():
        return [vision.Decode(), vision.RandomResizedCrop((32, 48), scale=(0.2, 1.0)), vision.RandomHorizontalFlip()]

    md.config.set_enable_fusion(False)  # the CPU's fused decode-crop resamples at a reduced DCT scale
    want, _ = _run(folder, ops())
    md.config.set_enable_fusion(True)
    got, _ = _run(folder, _gpu(*ops()))
    diffs = [np.abs(a.astype(int) - b.astype(int)) for a, b in zip(got, want, strict=True)]
    # BILINEAR within a level or two: another crop or flip would be off by tens of levels.
    assert max(d.max() for d in diffs) <= 2 and np.mean([d.mean() for d in diffs]) < 0.3


def test_resize_and_rotation_stay_within_stated_tolerances(folder):
    md.config.set_seed(23)

    def ops():
        return [vision.Decode(), vision.Resize((33, 47)), vision.RandomRotation(25, expand=True)]

    want, _ = _run(folder, ops())
    got, _ = _run(folder, _gpu(*ops()))
    for a, b in zip(got, want, strict=True):
        assert a.shape == b.shape
        diff = np.abs(a.astype(int) - b.astype(int))
        # Rotation edges fall on different sides of a pixel now and then; the body matches within 2.
        assert np.mean(diff <= 2) > 0.97 and diff.mean() < 1.0


def test_fused_decode_ops_run_on_the_torch_driver(folder):
    md.config.set_seed(24)
    ops = [vision.Decode(), vision.Resize((20, 24)), vision.HWC2CHW()]
    want, _ = _run(folder, ops)  # CPU, fused: reduced-DCT decode within its stated bound
    got, _ = _run(folder, _gpu(*[vision.Decode(), vision.Resize((20, 24)), vision.HWC2CHW()]))
    md.config.set_enable_fusion(False)
    unfused, _ = _run(folder, [vision.Decode(), vision.Resize((20, 24)), vision.HWC2CHW()])
    for a, b in zip(got, unfused, strict=True):
        assert a.shape == b.shape == (3, 20, 24) and np.abs(a.astype(int) - b.astype(int)).max() <= 1
    assert len(want) == 12


def test_the_same_seed_gives_the_same_crops_on_the_dali_and_torch_drivers(folder):
    pytest.importorskip("nvidia.dali", reason="NVIDIA DALI is not installed: nothing to compare with")

    def ops():
        return _gpu(vision.Decode(), vision.RandomResizedCrop(24, interpolation=vision.Inter.NEAREST),
                    vision.RandomHorizontalFlip())

    md.config.set_seed(25)
    torch_rows, _ = _run(folder, ops())
    md.config.set_gpu_driver("dali")
    dali_rows, _ = _run(folder, ops())
    # NEAREST picks source pixels: the same boxes and flips give (nearly) the same pixels.
    same = np.mean([np.mean(a == b) for a, b in zip(torch_rows, dali_rows, strict=True)])
    assert same > 0.95


def test_a_bad_row_fails_alone_naming_op_row_and_file(tmp_path):
    bad = tmp_path / "bad" / "c"
    bad.mkdir(parents=True)
    for i in range(6):
        buf = io.BytesIO()
        Image.fromarray(noise_photo(40, 48, i)).save(buf, "JPEG")
        data = buf.getvalue()
        if i == 3:
            data = data[: len(data) // 3]
        (bad / f"{i}.jpg").write_bytes(data)
    with pytest.raises(RowError) as caught:
        _run(tmp_path / "bad", _gpu(vision.Decode(), vision.Resize((16, 16))))
    assert "failed on row 3" in str(caught.value) and "3.jpg" in str(caught.value)
    md.config.set_error_samples_mode("skip")
    ds = md.ImageFolderDataset(str(tmp_path / "bad"), shuffle=False).map(
        _gpu(vision.Decode(), vision.Resize((16, 16))), input_columns="image")
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    assert len(list(it)) == 5 and it.skipped_rows == 1


def test_an_op_without_a_torch_kernel_fails_when_the_iterator_is_created(folder):
    ds = md.ImageFolderDataset(str(folder), shuffle=False).map(
        [vision.Decode(), vision.RandomColorAdjust(0.4).device("GPU")], input_columns="image")
    with pytest.raises(DeviceError, match="RandomColorAdjust has no kernel on the GPU's torch driver"):
        ds.create_dict_iterator(num_epochs=1)



def test_an_interpolation_only_dali_has_is_refused_for_the_torch_driver():
    from minddata.ops.gpu.torch_segment import torch_unsupported_reason

    assert torch_unsupported_reason(vision.Resize((8, 8), vision.Inter.BILINEAR)) is None
    for op in (vision.Resize((8, 8), vision.Inter.LANCZOS), vision.RandomResizedCrop(8, interpolation=vision.Inter.LANCZOS),
               vision.RandomCropDecodeResize(8, interpolation=vision.Inter.LANCZOS)):
        assert torch_unsupported_reason(op) == f"{op.name}: interpolation LANCZOS has no torch equivalent"


def test_each_torch_kernel_sits_in_the_module_of_its_ops_translation():
    from minddata.ops.gpu.translation import TORCH_KERNELS, TRANSLATIONS

    assert {"Resize", "Decode", "AdjustGamma", "Erase"} <= set(TORCH_KERNELS)  # guards the scan
    elsewhere = sorted(f"{name}: {kernel.__module__} (its translation: {TRANSLATIONS[name].plan.__module__})"
                       for name, kernel in TORCH_KERNELS.items()
                       if kernel.__module__ != TRANSLATIONS[name].plan.__module__)
    assert not elsewhere, "torch kernels outside their op's family module: " + "; ".join(elsewhere)


def test_a_torch_kernel_is_registered_after_its_translation():
    from minddata.ops.gpu.translation import TORCH_KERNELS, torch_kernel

    with pytest.raises(LookupError, match="register the op's translation first"):
        torch_kernel("NoSuchOp")(lambda op, x, args, torch: x)
    assert "NoSuchOp" not in TORCH_KERNELS


def test_importing_the_gpu_kernels_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, minddata.ops.gpu.kernels, minddata.ops.gpu.torch_segment; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_per_row_kernels_draw_what_the_cpu_kernels_draw():
    image = noise_photo(60, 80, 1)
    op = vision.RandomHorizontalFlip()
    for row in range(8):
        ctx = dict(seed=5, pass_index=2, row_index=row, op_position=3)
        got = get_kernel(op.name, "GPU")(op, KernelContext(**ctx), image)
        want = get_kernel(op.name, "CPU")(op, KernelContext(**ctx), image)
        assert np.array_equal(got, want)


# The pixel adjustments the torch driver runs: the CPU kernels' arithmetic, rounded half to even.
TORCH_ADJUST_OPS = {
    "Invert": vision.Invert,
    "RandomInvert": lambda: vision.RandomInvert(0.5),
    "Posterize": lambda: vision.Posterize(3),
    "RandomPosterize": lambda: vision.RandomPosterize((1, 7)),
    "Solarize": lambda: vision.Solarize((50, 200)),
    "Solarize-single": lambda: vision.Solarize(128),
    "RandomSolarize": lambda: vision.RandomSolarize((0, 255)),
    "AdjustBrightness": lambda: vision.AdjustBrightness(1.3),
    "AdjustBrightness-ties": lambda: vision.AdjustBrightness(1.5),
}


@pytest.mark.parametrize("name", sorted(TORCH_ADJUST_OPS))
def test_pixel_adjustments_are_exactly_the_cpus_with_the_same_draws(name):
    op = TORCH_ADJUST_OPS[name]()
    image = noise_photo(37, 45, 3)
    for row in range(6):
        ctx = dict(seed=4, pass_index=1, row_index=row, op_position=2)
        got = get_kernel(op.name, "GPU")(op, KernelContext(**ctx), image)
        want = get_kernel(op.name, "CPU")(op, KernelContext(**ctx), image)
        assert got.dtype == want.dtype and np.array_equal(got, want), f"row {row}"


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.float32, np.float64])
def test_brightness_and_solarize_keep_the_cpus_dtype_rules(dtype):
    image = (noise_photo(20, 24, 5).astype(np.float64) * 1.7 - 30).astype(dtype)
    for op in (vision.AdjustBrightness(1.3), vision.Solarize((50, 200)), vision.Invert()):
        got = get_kernel(op.name, "GPU")(op, KernelContext(), image)
        want = get_kernel(op.name, "CPU")(op, KernelContext(), image)
        assert got.dtype == want.dtype and np.array_equal(got, want), op.name


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize(
    "make",
    [
        lambda: vision.PadToSize((50, 60), fill_value=(9, 8, 7)),
        lambda: vision.PadToSize(60, offset=(1, 2), fill_value=200),
        lambda: vision.Erase(2, 3, 5, 6, value=(10, 20, 30)),
        lambda: vision.Erase(30, 40, 50, 60, value=3.7),
    ],
)
def test_pad_to_size_and_erase_are_exactly_the_cpus(make, dtype):
    op = make()
    image = (noise_photo(37, 45, 7).astype(np.float64) * 1.5).astype(dtype)
    got = get_kernel(op.name, "GPU")(op, KernelContext(), image)
    want = get_kernel(op.name, "CPU")(op, KernelContext(), image)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_random_resize_draws_the_cpus_interpolation_and_resizes_as_resize_does():
    from minddata.ops.plans.bbox import random_interpolation

    image = noise_photo(24, 33, 9)
    op = vision.RandomResize((10, 14))
    for row in range(8):
        name = random_interpolation(KernelContext(seed=2, row_index=row).rng)
        got = get_kernel("RandomResize", "GPU")(op, KernelContext(seed=2, row_index=row), image)
        same = vision.Resize((10, 14), getattr(vision.Inter, name))
        assert np.array_equal(got, get_kernel("Resize", "GPU")(same, KernelContext(), image)), f"row {row}: {name}"


@pytest.mark.parametrize(
    ("make", "largest"),
    [
        (lambda: vision.RandomLighting(0.5), {np.uint8: 0, np.int16: 0, np.float32: 0, np.float64: 0}),
        (lambda: vision.AdjustGamma(2.2, gain=1.1), {np.uint8: 0, np.float32: 1.2e-7, np.float64: 1e-15}),
        (vision.ToTensor, {np.uint8: 0, np.int16: 0, np.float32: 0}),
        (lambda: vision.ToTensor(np.int32), {np.uint8: 0, np.float64: 0}),
    ],
)
def test_lighting_gamma_and_to_tensor_match_the_cpu(make, largest):
    op = make()
    for dtype, tolerance in largest.items():
        scale = 1 / 255 if op.name == "AdjustGamma" and np.dtype(dtype).kind == "f" else 1.3
        image = (noise_photo(30, 40, 15) * scale).astype(dtype)
        for row in range(4):
            got = get_kernel(op.name, "GPU")(op, KernelContext(seed=6, row_index=row), image)
            want = get_kernel(op.name, "CPU")(op, KernelContext(seed=6, row_index=row), image)
            assert got.dtype == want.dtype and got.shape == want.shape, (dtype, row)
            assert np.abs(got.astype(np.float64) - want).max() <= tolerance, (dtype, row)


# --- integer rounding, decode fallbacks, device faults ---------------------------------------------


@pytest.mark.parametrize("dtype", [np.int16, np.uint16])
@pytest.mark.parametrize("make", [lambda: vision.Resize((23, 31)), lambda: vision.Rotate(17)])
def test_16_bit_resizes_and_warps_round_as_opencv_does(make, dtype):
    op = make()
    image = (noise_photo(40, 52, 11).astype(np.int64) * 97 - (9000 if dtype == np.int16 else 0)).astype(dtype)
    got = get_kernel(op.name, "GPU")(op, KernelContext(), image)
    want = get_kernel(op.name, "CPU")(op, KernelContext(), image)
    diff = np.abs(got.astype(np.int64) - want)
    assert got.dtype == want.dtype
    # Truncating instead of rounding puts about half the pixels one level low (a mean near 0.5).
    assert np.mean(diff <= 1) > 0.99 and diff.mean() < 0.1, diff.mean()


def _nvjpeg_stand_in(refuse: set[int]):
    """What torchvision's GPU ``decode_jpeg`` does here, on CPU tensors: decodes a batch to CHW tensors,
    and, like nvJPEG with a CMYK file, fails the whole call when one file (by its size) is refused."""

    def decode(datas, device):
        if any(d.numel() in refuse for d in datas):
            raise RuntimeError("The provided mode is not supported for JPEG decoding on GPU")
        return [torch.from_numpy(np.array(Image.open(io.BytesIO(d.numpy().tobytes())).convert("RGB"))).permute(2, 0, 1)
                for d in datas]

    return decode


def test_rows_nvjpeg_refuses_decode_on_the_cpu_and_are_counted(caplog):
    from minddata.ops.gpu.torch_segment import TorchSegment

    jpegs = []
    for i in range(4):
        buf = io.BytesIO()
        Image.fromarray(noise_photo(20 + i, 30, i)).save(buf, "JPEG", quality=90)
        jpegs.append(buf.getvalue())
    seg = TorchSegment([vision.Decode(), vision.HorizontalFlip()], backend="torch-cpu")
    seg.cuda = True  # as on the GPU: a decoder to fall back from, one host copy per batch
    seg._gpu_decode = _nvjpeg_stand_in({len(jpegs[2])})
    ctxs = [[KernelContext(), KernelContext()] for _ in jpegs]
    results, stats = seg.run(jpegs, ctxs)
    want = [get_kernel("HorizontalFlip", "CPU")(vision.HorizontalFlip(), KernelContext(),
                                                  get_kernel("Decode", "CPU")(vision.Decode(), KernelContext(), j))
            for j in jpegs]
    assert [r.shape for r in results] == [w.shape for w in want]
    assert np.array_equal(results[2], want[2])  # the refused row: libjpeg-turbo's pixels
    assert stats.cpu_rows == {"Decode": 1}  # only the refused row left nvJPEG; the others were retried alone
    assert stats.to_device == stats.to_host == 4
    assert "nvJPEG could not decode a row" in caplog.text
    seg._gpu_decode = _nvjpeg_stand_in(set())
    _, stats = seg.run(jpegs, ctxs)
    assert stats.cpu_rows is None  # nothing fell back: the GPU tests assert this on a real GPU


def test_a_device_fault_stops_the_pipeline_under_skip(folder, monkeypatch):
    from minddata.ops.gpu import torch_segment

    def out_of_memory(op, x, args, torch):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setitem(torch_segment.TORCH_OPS, "Resize", out_of_memory)
    md.config.set_error_samples_mode("skip")
    ds = md.ImageFolderDataset(str(folder), shuffle=False).map(_gpu(vision.Decode(), vision.Resize((16, 16))),
                                                              input_columns="image")
    md.config.set_enable_fusion(False)
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    with pytest.raises(DeviceError, match="the device failed.*CUDA out of memory.*not a problem with the data"):
        list(it)
    assert it.skipped_rows == 0
