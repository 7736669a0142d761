"""Dvpp: the reference model's rules and output, the row policy, and pipelines mixing CPU and Dvpp.

All of it runs on the ``reference`` driver (DVPP's rules and NV12 output, modelled on the CPU), which
is what CI has; hardware drivers share the rule checks (minddata/ops/dvpp/rules.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from testkit import jpeg_array, png_array, png_bytes

import minddata as md
from minddata import vision
from minddata.errors import DeviceError, RowError
from minddata.ops import KernelContext, get_kernel
from minddata.ops.dvpp import rules
from minddata.ops.dvpp.rules import DvppRuleError


@pytest.fixture(autouse=True)
def _reference():
    md.config.set_dvpp_driver("reference")


def _gradient(h: int, w: int) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x + y) % 256], -1).astype(np.uint8)


def _dvpp(op, data, row=0):
    return get_kernel(op.name, "Dvpp")(op, KernelContext(row_index=row), data)


def _cpu(op, data, row=0):
    return get_kernel(op.name, "CPU")(op, KernelContext(row_index=row), data)


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """A COCO-like folder of 640x480-ish photographs (the benchmark generator): 3-channel baseline
    JPEGs with texture and sensor noise."""
    from minddata.bench import images

    folder = tmp_path_factory.mktemp("photos")
    images.generate(folder, num_images=12, num_classes=2, seed=5, size=(640, 480))
    return folder


def _baseline_color(folder):
    files = sorted(folder.rglob("*.jpg"))
    found = []
    for f in files:
        data = np.frombuffer(f.read_bytes(), np.uint8)
        frame = rules.jpeg_frame(data)
        if frame and frame[0] == 0xC0 and frame[3] == 3:
            found.append(data)
    return found


def test_a_kernel_without_a_driver_names_the_op_and_the_fix(monkeypatch):
    from minddata.ops import probe
    from minddata.ops.dvpp import kernels

    monkeypatch.setattr(kernels, "_drivers", {})
    monkeypatch.setattr(probe, "ascend_driver", lambda: probe.DriverInfo("ascend", False, "no 'acl' module"))
    md.config.set_dvpp_driver("ascend")
    with pytest.raises(DeviceError, match=r"Decode on Dvpp: no driver available here \(ascend: no 'acl' module\)\. "
                                          r"Place Decode on the CPU .*set_dvpp_driver\('reference'\)"):
        _dvpp(vision.Decode(), jpeg_array(_gradient(32, 32)))


# --- rules ----------------------------------------------------------------------------------------


def test_decode_supports_jpeg_only_and_says_what_the_row_is():
    with pytest.raises(DvppRuleError) as caught:
        _dvpp(vision.Decode(), png_array(_gradient(40, 40)))
    assert str(caught.value).startswith("Dvpp Decode supports JPEG only; this row is PNG: place it on the CPU")
    assert caught.value.rule == "jpeg-only" and isinstance(caught.value, ValueError)


def test_decode_refuses_progressive_jpeg():
    with pytest.raises(DvppRuleError, match="baseline and extended sequential .* this row is a progressive JPEG"):
        _dvpp(vision.Decode(), jpeg_array(_gradient(64, 64), progressive=True))


@pytest.mark.parametrize(("w", "h", "ok"), [(32, 32, True), (31, 64, False), (64, 31, False), (8192, 32, True)])
def test_decode_size_limits(w, h, ok):
    data = jpeg_array(np.full((h, w, 3), 90, np.uint8))
    if ok:
        assert _dvpp(vision.Decode(), data).shape == (h, w, 3)
    else:
        with pytest.raises(DvppRuleError, match=rf"32-8192 pixels per side; this row is {w}x{h}"):
            _dvpp(vision.Decode(), data)


@pytest.mark.parametrize(
    ("size", "ok"), [((6, 32), True), ((5, 32), False), ((40, 31), False), ((4096, 4096), True), ((40, 4097), False)]
)
def test_resize_output_limits(size, ok):
    op = vision.Resize(size)
    image = _gradient(48, 64)
    if ok:
        assert _dvpp(op, image).shape == (*size, 3)
    else:
        with pytest.raises(DvppRuleError, match=r"outputs images 32-4096 wide and 6-4096 high; this row's output is"):
            _dvpp(op, image)


def test_vpc_takes_three_channel_uint8_images_and_does_not_pad():
    with pytest.raises(DvppRuleError, match=r"takes 3-channel uint8 images .* this row is \(48, 64\) uint8"):
        _dvpp(vision.Resize((40, 40)), _gradient(48, 64)[..., 0])
    with pytest.raises(DvppRuleError, match="crops inside the image only .it can't pad."):
        _dvpp(vision.CenterCrop((40, 80)), _gradient(48, 64))


def test_output_buffers_are_aligned_and_nv12():
    assert rules.aligned_size(640, 480, "decode") == (640, 480)
    assert rules.aligned_size(641, 481, "decode") == (768, 496)
    assert rules.aligned_size(33, 7, "vpc") == (48, 8)
    gray = np.repeat(_gradient(37, 45)[..., :1], 3, axis=2)
    assert np.array_equal(rules.nv12_roundtrip(gray, "vpc"), gray)  # no chroma, nothing lost
    # A colour edge finer than NV12's 2x2 chroma blurs; the luma survives.
    stripes = np.zeros((4, 8, 3), np.uint8)
    stripes[:, ::2] = (255, 0, 0)
    stripes[:, 1::2] = (0, 0, 255)
    out = rules.nv12_roundtrip(stripes, "vpc")
    assert out.shape == stripes.shape and np.abs(out.astype(int) - stripes).max() > 60


# --- the model's output on real JPEGs -------------------------------------------------------------

# On photographs (4:2:0 JPEGs with sensor noise) the reference output is the CPU path's geometry with
# NV12's chroma loss: measured 2.2-2.5 levels mean for decode and crops, 3.3-3.8 for a 640->416 resize,
# up to 3.4 for a small random crop enlarged to 224.
PHOTO_TOLERANCE = {"Decode": 3.0, "Resize": 4.5, "RandomResizedCrop": 4.0, "CenterCrop": 3.0}


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 10 * np.log10(255.0**2 / mse) if mse else float("inf")


def test_reference_output_is_close_to_the_cpu_on_photographs(photos):
    jpegs = _baseline_color(photos)
    assert len(jpegs) >= 4
    for data in jpegs[:4]:
        got, want = _dvpp(vision.Decode(), data), _cpu(vision.Decode(), data)
        assert got.shape == want.shape
        assert np.abs(got.astype(int) - want).mean() <= PHOTO_TOLERANCE["Decode"] and _psnr(got, want) >= 35
        for op in (vision.Resize((416, 416)), vision.RandomResizedCrop(224), vision.CenterCrop(224)):
            for row in range(2):
                got, want = _dvpp(op, _cpu(vision.Decode(), data), row), _cpu(op, _cpu(vision.Decode(), data), row)
                assert got.shape == want.shape
                assert np.abs(got.astype(int) - want).mean() <= PHOTO_TOLERANCE[op.name], op
                assert _psnr(got, want) >= 31, op


def test_random_crops_are_the_cpus(photos):
    # Gray JPEGs pass NV12 unchanged, so equal outputs mean equal crop boxes.
    gray = [jpeg_array(np.repeat(_gradient(96, 128)[..., 1:2] ^ (17 * k), 3, axis=2)) for k in range(3)]
    op = vision.RandomResizedCrop((40, 48), scale=(0.2, 1.0))
    for data in gray:
        image = _cpu(vision.Decode(), data)
        for row in range(4):
            assert np.array_equal(_dvpp(op, image, row), _cpu(op, image, row))
    fused = vision.RandomCropDecodeResize((40, 48), scale=(0.2, 1.0))
    for row in range(4):
        # The CPU's fused kernel decodes at a reduced DCT scale: compare it with the unfused CPU chain.
        crop = vision.RandomResizedCrop((40, 48), scale=(0.2, 1.0))
        want = _cpu(crop, _cpu(vision.Decode(), gray[0]), row)
        assert np.array_equal(_dvpp(fused, gray[0], row), want)


# --- the row policy -------------------------------------------------------------------------------


@pytest.fixture
def mixed_folder(tmp_path):
    """4 baseline JPEGs and a PNG among them (row 2)."""
    root = tmp_path / "mixed" / "c"
    root.mkdir(parents=True)
    for i in range(5):
        pixels = np.roll(_gradient(48, 64), 7 * i, axis=1)
        data = png_array(pixels) if i == 2 else jpeg_array(pixels)
        (root / f"{i}.{'png' if i == 2 else 'jpg'}").write_bytes(data.tobytes())
    return tmp_path / "mixed"


def _run(folder, ops, workers=2):
    ds = md.ImageFolderDataset(str(folder), shuffle=False, num_parallel_workers=workers)
    ds = ds.map(ops, input_columns="image", num_parallel_workers=workers)
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    rows = [row["image"] for row in it]
    return rows, it.device_stats


def test_a_row_breaking_a_rule_fails_naming_the_row_and_the_rule(mixed_folder):
    with pytest.raises(RowError) as caught:
        _run(mixed_folder, [vision.Decode().device("Dvpp"), vision.Resize((32, 40))])
    message = str(caught.value)
    assert "op Decode failed on row 2" in message and "2.png" in message
    assert "Dvpp Decode supports JPEG only; this row is PNG" in message


def test_the_profile_reports_rows_a_device_op_ran_on_the_cpu(mixed_folder):
    md.config.set_dvpp_policy("cpu")
    with md.Profiler() as prof:
        _, stats = _run(mixed_folder, [vision.Decode().device("Dvpp"), vision.Resize((32, 40))])
    summary = prof.summary()
    assert summary.device_cpu_rows == {"Decode": 1}
    assert summary.device_transfers == stats.transfers == {"CPU->Dvpp": 5, "Dvpp->CPU": 5}
    text = str(summary)
    assert "device ops that ran on the CPU instead (rows): Decode 1" in text
    assert "rows between devices: CPU->Dvpp 5, Dvpp->CPU 5" in text


def test_policy_cpu_runs_that_row_alone_on_the_cpu_and_counts_it(mixed_folder):
    md.config.set_dvpp_policy("cpu")
    rows, stats = _run(mixed_folder, [vision.Decode().device("Dvpp"), vision.Resize((32, 40))])
    assert len(rows) == 5 and stats.cpu_rows == {"Decode": 1}
    md.config.set_dvpp_driver("auto")
    md.config.set_dvpp_policy("error")
    cpu_rows, _ = _run(mixed_folder, [vision.Decode(), vision.Resize((32, 40))])
    assert np.array_equal(rows[2], cpu_rows[2])  # the PNG row: the CPU's own output


def test_skip_mode_drops_rows_a_device_refuses(mixed_folder):
    md.config.set_error_samples_mode("skip")
    ds = md.ImageFolderDataset(str(mixed_folder), shuffle=False).map(
        [vision.Decode().device("Dvpp")], input_columns="image"
    )
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    assert len(list(it)) == 4 and it.skipped_rows == 1


# --- pipelines mixing devices ---------------------------------------------------------------------


def test_cpu_dvpp_cpu_chain_moves_each_row_once_per_boundary(photos):
    mean, std = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]
    chain = [vision.Decode(), vision.Resize((96, 128)).device("Dvpp"), vision.CenterCrop(64).device("Dvpp"),
             vision.Normalize(mean, std), vision.HWC2CHW()]
    rows, stats = _run(photos, chain)
    assert len(rows) == 12 and rows[0].shape == (3, 64, 64)
    assert stats.transfers == {"CPU->Dvpp": 12, "Dvpp->CPU": 12}
    # Two trips: Dvpp, back to the CPU for a flip, Dvpp again.
    chain = [vision.Decode().device("Dvpp"), vision.HorizontalFlip(), vision.Resize((96, 128)).device("Dvpp")]
    rows, stats = _run(photos, chain)
    assert stats.transfers == {"CPU->Dvpp": 24, "Dvpp->CPU": 24}


def test_decode_resize_on_dvpp_fuses_into_one_engine_op_with_the_same_output(photos):
    ops = lambda: [vision.Decode().device("Dvpp"), vision.Resize((96, 128)).device("Dvpp")]  # noqa: E731
    md.config.set_dvpp_policy("cpu")
    fused, stats = _run(photos, ops())
    assert stats.transfers == {"CPU->Dvpp": 12, "Dvpp->CPU": 12}
    md.config.set_enable_fusion(False)
    unfused, _ = _run(photos, ops())
    assert all(np.abs(a.astype(int) - b).mean() < 1.0 for a, b in zip(fused, unfused, strict=True))


def test_output_is_the_same_for_any_worker_count(photos):
    md.config.set_seed(4)
    md.config.set_dvpp_policy("cpu")
    ops = lambda: [vision.Decode().device("Dvpp"), vision.RandomResizedCrop(64).device("Dvpp")]  # noqa: E731
    one, _ = _run(photos, ops(), workers=1)
    three, _ = _run(photos, ops(), workers=3)
    assert all(np.array_equal(a, b) for a, b in zip(one, three, strict=True))


# --- tensor ops (MindSpore's device("Ascend") pixel and warp ops) ----------------------------------

TENSOR_OPS = {
    "AdjustBrightness": lambda: vision.AdjustBrightness(1.3),
    "AdjustContrast": lambda: vision.AdjustContrast(1.7),
    "AdjustHue": lambda: vision.AdjustHue(-0.2),
    "AdjustSaturation": lambda: vision.AdjustSaturation(0.6),
    "AdjustSharpness": lambda: vision.AdjustSharpness(2.0),
    "AutoContrast": lambda: vision.AutoContrast(cutoff=5.0),
    "Equalize": vision.Equalize,
    "Erase": lambda: vision.Erase(2, 3, 5, 6, value=(10, 20, 30)),
    "Posterize": lambda: vision.Posterize(3),
    "Solarize": lambda: vision.Solarize((50, 200)),
    "Perspective": lambda: vision.Perspective(
        [[0, 0], [39, 0], [39, 29], [0, 29]], [[2, 1], [37, 0], [39, 27], [1, 29]], vision.Inter.NEAREST
    ),
}


def test_every_tensor_op_has_its_rule_and_a_reference_kernel():
    from minddata.ops import available_devices
    from minddata.ops.dvpp.kernels import DRIVER_OPS

    assert set(TENSOR_OPS) == set(rules.TENSOR_OPS)
    for name in TENSOR_OPS:
        assert "Dvpp" in available_devices(name) and name in DRIVER_OPS["reference"], name


@pytest.mark.parametrize("name", sorted(TENSOR_OPS))
def test_tensor_ops_compute_the_cpus_pixels_within_dvpps_rules(name):
    op = TENSOR_OPS[name]()
    image = _gradient(30, 40)
    # HWC in, HWC out: no NV12 buffer between, so the pixels are the CPU kernel's.
    assert np.array_equal(_dvpp(op, image), _cpu(op, image))


@pytest.mark.parametrize(("h", "w", "ok"), [(4, 6, True), (3, 40, False), (30, 5, False), (8192, 6, True),
                                            (8193, 6, False), (4, 4096, True), (4, 4097, False)])
def test_tensor_op_size_limits(h, w, ok):
    image = np.zeros((h, w, 3), np.uint8)
    if ok:
        assert _dvpp(vision.Posterize(2), image).shape == (h, w, 3)
        return
    with pytest.raises(DvppRuleError, match=r"Dvpp Posterize takes images 4-8192 high and 6-4096 wide") as caught:
        _dvpp(vision.Posterize(2), image)
    assert caught.value.rule == "tensor-size"


def test_perspective_needs_a_larger_image_than_the_pixel_ops():
    op = TENSOR_OPS["Perspective"]()
    with pytest.raises(DvppRuleError, match=r"Dvpp Perspective takes images 6-8192 high and 10-4096 wide; this row is 30x9"):
        _dvpp(op, _gradient(30, 9))
    assert _dvpp(op, _gradient(6, 10)).shape == (6, 10, 3)


def test_tensor_ops_take_one_or_three_channels_of_the_stated_dtypes():
    rgba = np.zeros((20, 30, 4), np.uint8)
    with pytest.raises(DvppRuleError, match=r"Dvpp Solarize takes uint8 or float32 images of shape <H, W> or <H, W, 3>"):
        _dvpp(vision.Solarize(100), rgba)
    # Equalize runs on uint8 only; Solarize also on float32; neither on int16.
    with pytest.raises(DvppRuleError, match=r"Dvpp Equalize takes uint8 images") as caught:
        _dvpp(vision.Equalize(), np.zeros((20, 30, 3), np.float32))
    assert caught.value.rule == "tensor-format"
    image = _gradient(20, 30).astype(np.float32)
    assert np.array_equal(_dvpp(vision.Solarize(100), image), _cpu(vision.Solarize(100), image))
    with pytest.raises(DvppRuleError, match=r"this row is \(20, 30, 3\) int16"):
        _dvpp(vision.Solarize(100), image.astype(np.int16))
    gray = _gradient(20, 30)[..., 0]
    assert np.array_equal(_dvpp(vision.Equalize(), gray), _cpu(vision.Equalize(), gray))


def test_perspective_with_bicubic_is_refused_when_the_iterator_is_created(photos):
    from minddata.errors import DeviceError

    op = vision.Perspective([[0, 0], [9, 0], [9, 9], [0, 9]], [[1, 0], [9, 1], [8, 9], [0, 8]], vision.Inter.BICUBIC)
    ds = md.ImageFolderDataset(str(photos), shuffle=False).map([vision.Decode(), op.device("Dvpp")], input_columns="image")
    with pytest.raises(DeviceError, match="Perspective: Dvpp warps with BILINEAR or NEAREST interpolation only"):
        ds.create_dict_iterator(num_epochs=1)


def test_a_tensor_op_row_breaking_a_rule_runs_on_the_cpu_under_policy_cpu(tmp_path):
    (tmp_path / "c").mkdir()
    for i, (h, w) in enumerate([(40, 50), (3, 50), (40, 50)]):  # row 1 is too low for DVPP
        (tmp_path / "c" / f"{i}.png").write_bytes(png_bytes(_gradient(h, w)))
    md.config.set_dvpp_policy("cpu")
    ops = lambda dvpp: [vision.Decode(), vision.AdjustBrightness(1.4).device("Dvpp" if dvpp else "CPU")]  # noqa: E731
    rows, stats = _run(tmp_path, ops(True))
    want, _ = _run(tmp_path, ops(False))
    assert stats.cpu_rows == {"AdjustBrightness": 1}
    assert all(np.array_equal(a, b) for a, b in zip(rows, want, strict=True))
