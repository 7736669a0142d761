"""Every fusion rewrite, run fused and unfused on the same graph and compared.

Tolerances: merged maps and the Normalize→batch move are bit-exact. By default Decode→Resize is not
rewritten: deterministic preprocessing gives MindSpore's pixels (full decode, then resize), within
one grey level on average (here: exactly). With ``config.set_fast_decode_resize(True)``, and always
for Decode→RandomResizedCrop, a reduced DCT scale changes the resampling: the JPEG is downscaled
inside the IDCT (an averaging, anti-aliased reduction), then resized the rest of the way, where the
unfused pipeline's bilinear resize of the full image skips pixels and aliases. Those differ from the
unfused output by 1.5-5 grey levels on average on photo-like images and up to ~7 on the
noise-textured ones (bounds used: mean absolute difference ≤ 8, 99th percentile ≤ 40), and are
*closer* to an anti-aliased reference (INTER_AREA on the full decode) than the unfused output is;
at scale 1 they are exact to ±1.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testkit import make_jpeg

import minddata as md
from minddata import transforms, vision
from minddata.errors import PipelineError, RowError


def photo_like_jpeg(width, height, seed):
    """Smooth shapes and mild texture, like a photo, rather than per-pixel noise."""
    import io

    import cv2
    from PIL import Image

    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, (max(2, height // 24), max(2, width // 24), 3), dtype=np.uint8)
    pixels = cv2.resize(small, (width, height), interpolation=cv2.INTER_CUBIC)
    pixels = np.clip(pixels.astype(np.int16) + rng.integers(-6, 7, pixels.shape), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
    return buf.getvalue()

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


@pytest.fixture
def jpeg_rows(tmp_path):
    root = tmp_path / "imgs"
    (root / "a").mkdir(parents=True)
    sizes = [(500, 375), (333, 517), (640, 480), (301, 299), (256, 256), (97, 131)]
    for i, (w, h) in enumerate(sizes):
        (root / "a" / f"{i}.jpg").write_bytes(photo_like_jpeg(w, h, seed=i) if i % 2 == 0 else make_jpeg(w, h, seed=i))
    return root


def outputs(ds, fused, column="image", fast_decode_resize=False):
    md.config.set_enable_fusion(fused)
    md.config.set_fast_decode_resize(fast_decode_resize)
    md.config.set_seed(1234)
    return [row[column] for row in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def folder(root, ops, workers=2):
    return md.ImageFolderDataset(root, shuffle=False).map(ops, input_columns="image", num_parallel_workers=workers)


def close_enough(a, b, mean_tol=8.0, p99_tol=40):
    assert a.shape == b.shape and a.dtype == b.dtype
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16))
    assert diff.mean() <= mean_tol, diff.mean()
    assert np.percentile(diff, 99) <= p99_tol, np.percentile(diff, 99)


def test_explain_shows_the_fusions(jpeg_rows):
    ds = folder(jpeg_rows, [vision.Decode(), vision.Resize(64)]).map(vision.CenterCrop(32), input_columns="image")
    ds = ds.map([vision.Normalize(MEAN, STD), vision.HWC2CHW()], input_columns="image").batch(2)
    plan = ds.explain()
    assert "Decode+Resize" in plan and "merged the adjacent map" in plan and "moved into the batch" in plan
    md.config.set_enable_fusion(False)
    assert "fused:" not in ds.explain()


def test_merged_maps_are_bit_exact():
    ds = md.NumpySlicesDataset({"x": np.arange(50)}, shuffle=False)
    ds = ds.map(lambda x: x * 3, input_columns="x").map(lambda x: x - 1, input_columns="x", num_parallel_workers=3)
    assert [int(v) for v in outputs(ds, True, "x")] == [int(v) for v in outputs(ds, False, "x")]


@pytest.mark.parametrize("size", [48, 100, (40, 60)])
def test_decode_resize_by_default_gives_the_full_decode_pixels(jpeg_rows, size):
    # The bound deterministic preprocessing must keep by default: within 1 grey level on average of
    # MindSpore's pixels, which are the unfused full decode + resize (the differential suite checks
    # those against MindSpore itself). Not rewriting keeps them exact.
    ds = folder(jpeg_rows, [vision.Decode(), vision.Resize(size), vision.CenterCrop(32)])
    for a, b in zip(outputs(ds, True), outputs(ds, False)):
        assert np.abs(a.astype(np.int16) - b.astype(np.int16)).mean() <= 1.0
        np.testing.assert_array_equal(a, b)
    md.config.set_enable_fusion(True)
    assert "reduced DCT scale, then resize" not in ds.explain()


def test_fast_decode_resize_is_opt_in_and_within_its_tolerance(jpeg_rows):
    ds = folder(jpeg_rows, [vision.Decode(), vision.Resize(48)])
    md.config.set_fast_decode_resize(True)
    assert "Decode+Resize: decode JPEGs at a reduced DCT scale" in ds.explain()
    assert "bound: pixels differ" in ds.explain()
    fast, unfused = outputs(ds, True, fast_decode_resize=True), outputs(ds, False)
    assert any(not np.array_equal(a, b) for a, b in zip(fast, unfused)), "the reduced scale was used"
    for a, b in zip(fast, unfused):
        close_enough(a, b)


def test_explain_states_a_bound_for_every_rewrite(jpeg_rows):
    ds = folder(jpeg_rows, [vision.Decode(), vision.RandomResizedCrop(64)]).map(vision.Resize(32), "image")
    ds = ds.map([vision.Normalize(MEAN, STD), vision.HWC2CHW()], input_columns="image").batch(2)
    fused_lines = [line for line in ds.explain().splitlines() if "fused:" in line or "merged" in line
                   or "moved" in line or "reads " in line]
    assert fused_lines
    for line in fused_lines:
        assert "bound:" in line, line


def test_decode_resize_large_target_is_exact(jpeg_rows):
    # Target more than half the image: no reduced scale fits, so the fused op decodes in full.
    ds = folder(jpeg_rows, [vision.Decode(), vision.Resize((300, 300))])
    for a, b in zip(outputs(ds, True), outputs(ds, False)):
        np.testing.assert_array_equal(a, b)


def test_decode_random_resized_crop_draws_the_same_crop(jpeg_rows):
    # scale=(1, 1) and ratio=(1, 1) pin the crop size; the position is random. A 1x1 resize target
    # means the crop region is decoded at 1/8, so only the drawn position can make rows agree.
    op = vision.RandomResizedCrop(64, scale=(0.3, 0.3), ratio=(1.0, 1.0))
    ds = folder(jpeg_rows, [vision.Decode(), op])
    for a, b in zip(outputs(ds, True), outputs(ds, False)):
        close_enough(a, b)


def test_decode_random_resized_crop_full_scale_is_exact_to_one_level(jpeg_rows):
    op = vision.RandomResizedCrop(330, scale=(0.5, 1.0))  # no crop is 2x the target: scale 1 only
    ds = folder(jpeg_rows, [vision.Decode(), op, vision.RandomHorizontalFlip()])
    for a, b in zip(outputs(ds, True), outputs(ds, False)):
        assert np.abs(a.astype(np.int16) - b.astype(np.int16)).max() <= 1


def test_normalize_moves_into_the_batch_bit_exact(jpeg_rows):
    # A resize larger than half of every image keeps the decode exact, isolating the Normalize move.
    ops = [vision.Decode(), vision.Resize((330, 340)), vision.RandomHorizontalFlip(),
           vision.Normalize(MEAN, STD), vision.HWC2CHW()]
    ds = folder(jpeg_rows, ops).batch(4)
    fused, unfused = outputs(ds, True), outputs(ds, False)
    assert [b.shape for b in fused] == [(4, 3, 330, 340), (2, 3, 330, 340)]
    for a, b in zip(fused, unfused):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("tail", [
    [vision.Normalize(MEAN, STD)],
    [vision.Normalize(MEAN, STD), vision.HWC2CHW(), transforms.TypeCast(np.float16)],
    [vision.Normalize([100.0], [50.0]), vision.HWC2CHW()],
])
def test_normalize_variants_in_the_batch_are_bit_exact(tail):
    images = np.random.default_rng(0).integers(0, 256, (6, 8, 10, 3), dtype=np.uint8)
    ds = md.NumpySlicesDataset({"image": images}, shuffle=False).map(tail, input_columns="image").batch(3)
    for a, b in zip(outputs(ds, True), outputs(ds, False)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_normalize_in_batch_handles_grayscale_rows():
    images = np.random.default_rng(0).integers(0, 256, (4, 5, 7), dtype=np.uint8)
    ds = md.NumpySlicesDataset({"image": images}, shuffle=False)
    ds = ds.map([vision.Normalize([10.0], [3.0]), vision.HWC2CHW()], input_columns="image").batch(2)
    for a, b in zip(outputs(ds, True), outputs(ds, False)):
        np.testing.assert_array_equal(a, b)


def test_moved_normalize_still_fails_bad_rows_in_the_map():
    images = [np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4, 2), np.uint8)]
    ds = md.GeneratorDataset(lambda: iter([(i,) for i in images]), column_names=["image"])
    ds = ds.map([vision.Normalize(MEAN, STD), vision.HWC2CHW()], input_columns="image").batch(2)
    md.config.set_enable_fusion(True)
    with pytest.raises(RowError, match=r"failed on row 1.*Normalize: expected an HWC image with 3 channels.*\(4, 4, 2\)"):
        list(ds)


def test_moved_normalize_respects_skip_mode():
    images = [np.full((2, 2, 3), i, np.uint8) if i != 1 else np.zeros((2, 2, 2), np.uint8) for i in range(4)]
    ds = md.GeneratorDataset(lambda: iter([(i,) for i in images]), column_names=["image"])
    ds = ds.map([vision.Normalize([0.0] * 3, [1.0] * 3), vision.HWC2CHW()], input_columns="image").batch(3)
    md.config.set_error_samples_mode("skip")
    md.config.set_enable_fusion(True)
    batch = next(iter(ds.create_dict_iterator(num_epochs=1, output_numpy=True)))["image"]
    assert batch[:, 0, 0, 0].tolist() == [0.0, 2.0, 3.0]


def test_the_map_workers_normalize_each_image_into_its_batch_slot(monkeypatch):
    import threading

    from minddata.ops.cpu import normalize

    calls = []
    real = normalize.normalize_into

    def recorded(*args):
        calls.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(normalize, "normalize_into", recorded)
    images = np.random.default_rng(0).integers(0, 256, (10, 6, 7, 3), dtype=np.uint8)
    ds = md.NumpySlicesDataset({"image": images}, shuffle=False)
    ds = ds.map([vision.Normalize(MEAN, STD), vision.HWC2CHW()], input_columns="image", num_parallel_workers=2)
    fused = outputs(ds.batch(4), True)
    assert len(calls) == 10 and all(name.startswith("minddata-Map") for name in calls), calls
    for a, b in zip(fused, outputs(ds.batch(4), False)):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 30), batch_size=st.integers(1, 7), chunk=st.integers(1, 6), workers=st.integers(2, 4),
       drop=st.booleans(), tail=st.sampled_from(["chw", "hwc", "float16", "gray"]))
def test_normalize_in_the_map_workers_gives_the_batch_pipelines_numbers(rows, batch_size, chunk, workers, drop, tail):
    # Chunks that straddle batches, partial and dropped last batches, a second epoch reusing the
    # buffers while the first epoch's batches are still held.
    md.config.load_defaults()
    md.config.set_rows_per_chunk(chunk)
    rng = np.random.default_rng(rows)
    gray = tail == "gray"
    images = rng.integers(0, 256, (rows, 5, 6) if gray else (rows, 5, 6, 3), dtype=np.uint8)
    ops = [vision.Normalize([100.0] if gray else MEAN, [50.0] if gray else STD)]
    ops += [] if tail == "hwc" else [vision.HWC2CHW()]
    ops += [transforms.TypeCast(np.float16)] if tail == "float16" else []
    ds = md.NumpySlicesDataset({"image": images}, shuffle=False).map(ops, input_columns="image",
                                                                    num_parallel_workers=workers)
    ds = ds.batch(batch_size, drop_remainder=drop)
    md.config.set_enable_fusion(False)
    expected = [row["image"] for row in ds.create_dict_iterator(num_epochs=1, output_numpy=True)] * 2
    md.config.set_enable_fusion(True)
    epochs = ds.create_dict_iterator(num_epochs=2, output_numpy=True)
    got = [row["image"] for _ in range(2) for row in epochs]
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def test_a_batch_with_failed_or_odd_rows_is_let_go_once_all_its_rows_have_come():
    # An online pipeline delivers failed rows instead of raising: their batches still end.
    from minddata.engine.batchfn import BatchSlots, BufferPool
    from minddata.engine.chunk import Chunk, FailedRow

    slots = BatchSlots(0, 3, vision.Normalize(MEAN, STD), True, BufferPool())
    image, odd = np.zeros((4, 4, 3), np.uint8), np.zeros((4, 5, 3), np.uint8)
    slots.write(Chunk([(image,), (FailedRow(ValueError("bad")),)]), 0, 0)
    slots.write(Chunk([(odd,), (image,), (odd,), (image,)]), 0, 2)
    assert slots._open == {}


@pytest.mark.parametrize("odd_row", [0, 1])
def test_a_batch_of_two_shapes_fails_as_before_when_the_map_workers_normalize(odd_row):
    # One row a chunk: whichever row reaches the batch's buffer first fixes its shape.
    images = [np.zeros((4, 5, 3) if i == odd_row else (4, 4, 3), np.uint8) for i in range(3)]
    ds = md.GeneratorDataset(lambda: iter([(i,) for i in images]), column_names=["image"])
    ds = ds.map([vision.Normalize(MEAN, STD), vision.HWC2CHW()], input_columns="image", num_parallel_workers=2)
    md.config.set_enable_fusion(True)
    md.config.set_rows_per_chunk(1)
    shapes = r"\(4, 5, 3\), \(4, 4, 3\)" if odd_row == 0 else r"\(4, 4, 3\), \(4, 5, 3\)"
    with pytest.raises(PipelineError, match=rf"batch 0 have different shapes \[{shapes}\]"):
        list(ds.batch(3))


@pytest.mark.parametrize("images", [
    np.random.default_rng(0).integers(0, 256, (5, 9, 11, 3), dtype=np.uint8),
    np.random.default_rng(1).integers(0, 256, (5, 9, 11), dtype=np.uint8),  # grayscale: the two kernels
    np.random.default_rng(2).random((5, 9, 11, 3)).astype(np.float32) * 255,  # float rows: the two kernels
], ids=["rgb", "gray", "float"])
def test_normalize_hwc2chw_without_a_batch_is_one_bit_exact_op(images):
    mean, std = (MEAN, STD) if images.ndim == 4 else ([100.0], [50.0])
    ds = md.NumpySlicesDataset({"image": images}, shuffle=False)
    ds = ds.map([vision.Normalize(mean, std), vision.HWC2CHW()], input_columns="image")
    md.config.set_enable_fusion(True)
    assert "Map[Normalize+HWC2CHW]" in ds.explain()
    fused, unfused = outputs(ds, True), outputs(ds, False)
    assert len(fused) == 5
    for a, b in zip(fused, unfused):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def test_normalize_hwc2chw_before_a_batch_still_moves_into_the_batch():
    images = np.zeros((4, 6, 6, 3), np.uint8)
    ds = md.NumpySlicesDataset({"image": images}, shuffle=False)
    ds = ds.map([vision.Normalize(MEAN, STD), vision.HWC2CHW()], input_columns="image").batch(2)
    md.config.set_enable_fusion(True)
    plan = ds.explain()
    assert "moved into the batch" in plan and "Normalize+HWC2CHW" not in plan


def test_fused_normalize_hwc2chw_fails_a_bad_row_as_normalize():
    images = [np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4, 2), np.uint8)]
    ds = md.GeneratorDataset(lambda: iter([(i,) for i in images]), column_names=["image"])
    ds = ds.map([vision.Normalize(MEAN, STD), vision.HWC2CHW()], input_columns="image")
    md.config.set_enable_fusion(True)
    with pytest.raises(RowError, match=r"failed on row 1.*Normalize: expected an HWC image with 3 channels.*\(4, 4, 2\)"):
        list(ds)


def test_random_crop_decode_resize_matches_decode_then_random_resized_crop(jpeg_rows):
    args = dict(size=64, scale=(0.4, 0.9))
    # Same op position (1) in both maps, so both draw from the same random stream.
    a = outputs(folder(jpeg_rows, [lambda x: x, vision.RandomCropDecodeResize(**args)]), True)
    b = outputs(folder(jpeg_rows, [vision.Decode(), vision.RandomResizedCrop(**args)]), True)
    c = outputs(folder(jpeg_rows, [vision.Decode(), vision.RandomResizedCrop(**args)]), False)
    for x, y, z in zip(a, b, c):
        np.testing.assert_array_equal(x, y)
        close_enough(x, z)


def test_fusion_off_is_a_no_op_switch(jpeg_rows):
    ds = folder(jpeg_rows, [vision.Decode(), vision.Resize(48)])
    md.config.set_enable_fusion(False)
    assert "fusion: off" in ds.explain()
