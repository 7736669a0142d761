"""minddata.ops.cpu.jpeg: libjpeg-turbo reduced-size and cropped decoding, against Pillow.

Measured here (libjpeg-turbo 2.1.5 in the extension, Pillow 13 with its bundled libjpeg-turbo 3.x,
OpenCV 5): every comparison below is bit-exact, so the tests assert equality, not a tolerance —

* full decode == Pillow's decode;
* 1/2, 1/4, 1/8 decode == Pillow's ``draft('RGB', (W//s, H//s))`` decode;
* crop == full decode at the same scale cut to ``scaled_crop_box`` (thanks to the one-column margin
  the extension decodes on each side; a bare ``jpeg_crop_scanline`` differs on its edge columns,
  which ``test_bare_crop_scanline_differs_only_on_edge_columns`` pins down);
* the OpenCV slow path == the extension (OpenCV's IMREAD_REDUCED_* is libjpeg's DCT scaling too).
"""

from __future__ import annotations

import io
import os
import struct
import threading
import time

import numpy as np
import pytest
from PIL import Image

from minddata.ops.cpu import jpeg

needs_ext = pytest.mark.skipif(not jpeg.AVAILABLE, reason=jpeg.WHY_UNAVAILABLE or "extension built")


def _photo(h: int, w: int, seed: int = 0) -> np.ndarray:
    """Gradients plus blocky and fine noise: strong chroma detail, so upsampling differences show."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    blocky = rng.normal(0, 30, (h // 3 + 1, w // 3 + 1, 3)).repeat(3, 0).repeat(3, 1)[:h, :w]
    img = np.stack([x / w * 200, y / h * 200, (x + y) / (w + h) * 150 + 50], axis=-1)
    img = img + blocky + rng.normal(0, 10, (h, w, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def _encode(pixels: np.ndarray, mode: str = "RGB", **options) -> bytes:
    im = Image.fromarray(pixels)
    if mode != "RGB":
        im = im.convert(mode)
    buf = io.BytesIO()
    im.save(buf, format="JPEG", **options)
    return buf.getvalue()


ODD = _photo(517, 333)  # H x W: odd in both, not a multiple of any iMCU
KINDS = [
    "420",
    "444",
    "422",
    "gray",
    "progressive",
    "progressive_gray",
    "restart_blocks",
    "restart_rows",
    "500x375",
    "tiny",
]


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    exif = Image.Exif()
    exif[0x010E] = "minddata test image"  # ImageDescription: an APP1 segment before the frame header
    return {
        "420": _encode(ODD, quality=90, subsampling=2, exif=exif.tobytes()),
        "444": _encode(ODD, quality=90, subsampling=0),
        "422": _encode(ODD, quality=90, subsampling=1),
        "gray": _encode(ODD, "L", quality=90),
        "progressive": _encode(ODD, quality=90, progressive=True),
        "progressive_gray": _encode(ODD, "L", quality=85, progressive=True),
        "restart_blocks": _encode(ODD, quality=90, restart_marker_blocks=3),
        "restart_rows": _encode(ODD, quality=90, subsampling=1, restart_marker_rows=1),
        "500x375": _encode(_photo(375, 500, seed=1), quality=90, subsampling=2),
        "tiny": _encode(_photo(9, 13, seed=2), quality=90, subsampling=2),
        "cmyk": _encode(_photo(40, 56, seed=3), "CMYK", quality=90),
    }


def _pillow(data: bytes, scale: int = 1) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        if scale > 1:
            w, h = im.size
            im.draft("RGB", (w // scale, h // scale))
        return np.array(im.convert("RGB"))


def _size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as im:
        return im.size[1], im.size[0]


def _assert_equal(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == np.uint8
    diff = np.abs(got.astype(np.int16) - want.astype(np.int16))
    assert diff.max() == 0, f"{what}: max |diff| {diff.max()} at {np.argwhere(diff > 0)[:5].tolist()}"


def _crops(h: int, w: int, seed: int) -> list[tuple[int, int, int, int]]:
    """Edge cases (whole image, corners, 1-pixel crops, iMCU boundaries +-1) plus random crops."""
    crops = [(0, 0, h, w), (0, 0, 1, 1), (h - 1, w - 1, 1, 1), (0, w - 1, h, 1), (h - 1, 0, 1, w)]
    for b in (8, 16, 32, 48):
        for d in (-1, 0, 1):
            t, lf = min(max(b + d, 0), h - 1), min(max(b + d, 0), w - 1)
            crops.append((t, lf, min(h - t, 37), min(w - lf, 29)))
            crops.append((0, 0, min(h, b + d) or 1, min(w, b + d) or 1))
    rng = np.random.default_rng(seed)
    for _ in range(40):
        t, lf = int(rng.integers(0, h)), int(rng.integers(0, w))
        crops.append((t, lf, int(rng.integers(1, h - t + 1)), int(rng.integers(1, w - lf + 1))))
    return crops


# ---------------------------------------------------------------------------------------------- fixtures


def test_fixture_files_are_what_they_claim(files):
    for kind in ("restart_blocks", "restart_rows"):
        if not any(bytes([0xFF, 0xD0 + k]) in files[kind] for k in range(8)):
            pytest.skip("this Pillow ignores restart_marker_blocks/restart_marker_rows")
    assert jpeg._py_read_header(files["progressive"])[3] is True
    assert jpeg._py_read_header(files["cmyk"])[2] == 4


# ---------------------------------------------------------------------------------------------- header


@pytest.mark.parametrize("kind", [*KINDS, "cmyk"])
def test_header_matches_pillow(files, kind):
    data = files[kind]
    h, w = _size(data)
    components = {"gray": 1, "progressive_gray": 1, "cmyk": 4}.get(kind, 3)
    want = (h, w, components, kind.startswith("progressive"))
    assert jpeg.read_header(data) == want
    assert jpeg._py_read_header(data) == want  # the pure-Python parser used without the extension
    assert jpeg._py_read_header(np.frombuffer(data, np.uint8)) == want
    assert jpeg.is_jpeg(data) and jpeg.is_jpeg(np.frombuffer(data, np.uint8))


@needs_ext
@pytest.mark.parametrize("kind", KINDS)
def test_extension_header_accepts_every_input_type(files, kind):
    data = files[kind]
    want = jpeg._py_read_header(data)
    for form in (data, bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        assert jpeg._jpeg.read_header(form) == want
    # a non-contiguous view (every other byte of a doubled buffer) is copied, not misread
    doubled = np.repeat(np.frombuffer(data, np.uint8), 2)[::2]
    assert jpeg._jpeg.read_header(doubled) == want


def test_is_jpeg():
    assert jpeg.is_jpeg(b"\xff\xd8\xff\xe0rest")
    assert not jpeg.is_jpeg(b"\x89PNG\r\n\x1a\n")
    assert not jpeg.is_jpeg(b"")
    assert not jpeg.is_jpeg(b"\xff\xd8")
    assert not jpeg.is_jpeg(12345)


# ---------------------------------------------------------------------------------------------- boxes


def test_scaled_crop_box_rule():
    assert jpeg.scaled_crop_box(10, 3, 100, 50, 1, 375, 500) == (10, 3, 100, 50)
    assert jpeg.scaled_crop_box(10, 3, 100, 50, 4, 375, 500) == (2, 0, 26, 14)
    assert jpeg.scaled_crop_box(0, 0, 375, 500, 8, 375, 500) == (0, 0, 47, 63)
    assert jpeg.scaled_size(375, 500, 8) == (47, 63)
    for s in jpeg.SCALES:
        hs, ws = jpeg.scaled_size(23, 19, s)
        for top in range(23):
            for height in range(1, 23 - top + 1):
                t, lf, h, w = jpeg.scaled_crop_box(top, 0, height, 19, s, 23, 19)
                assert t * s <= top and (t + h) * s >= top + height  # rounded outwards
                assert h >= 1 and t + h <= hs and (lf, w) == (0, ws)
                assert t == top // s and t + h == -(-(top + height) // s)


@needs_ext
def test_scaled_crop_box_same_in_extension():
    for s in jpeg.SCALES:
        for top in range(0, 21, 3):
            for height in range(1, 21 - top + 1, 2):
                for left in range(0, 17, 5):
                    args = (top, left, height, 17 - left, s, 21, 17)
                    assert jpeg._jpeg.scaled_crop_box(*args) == jpeg.scaled_crop_box(*args)


@pytest.mark.parametrize(
    "crop", [(-1, 0, 5, 5), (0, -1, 5, 5), (0, 0, 0, 5), (0, 0, 5, 0), (20, 0, 5, 5), (0, 15, 5, 5)]
)
def test_scaled_crop_box_rejects_bad_crops(crop):
    with pytest.raises(ValueError, match="crop"):
        jpeg.scaled_crop_box(*crop, 2, 24, 19)


@pytest.mark.parametrize("scale", [0, 3, 16, -2, True])
def test_bad_scale_is_rejected(files, scale):
    with pytest.raises(ValueError, match="scale_denom"):
        jpeg.decode(files["tiny"], scale)
    with pytest.raises(ValueError, match="scale_denom"):
        jpeg.scaled_size(10, 10, scale)


# ---------------------------------------------------------------------------------------------- decode


@needs_ext
def test_version_is_reported():
    assert jpeg.LIBJPEG_VERSION.startswith("libjpeg-turbo ")
    assert jpeg._jpeg.LIBJPEG_TURBO_VERSION_NUMBER >= 1005000


@needs_ext
@pytest.mark.parametrize("kind", KINDS)
def test_full_decode_matches_pillow(files, kind):
    data = files[kind]
    _assert_equal(jpeg.decode(data), _pillow(data), f"{kind} full decode vs Pillow")


@needs_ext
@pytest.mark.parametrize("scale", [2, 4, 8])
@pytest.mark.parametrize("kind", KINDS)
def test_scaled_decode_matches_pillow_draft(files, kind, scale):
    data = files[kind]
    got = jpeg.decode(data, scale)
    h, w = _size(data)
    assert got.shape == (*jpeg.scaled_size(h, w, scale), 3)
    _assert_equal(got, _pillow(data, scale), f"{kind} 1/{scale} decode vs Pillow draft")


@needs_ext
@pytest.mark.parametrize("scale", [1, 2, 4, 8])
@pytest.mark.parametrize("kind", KINDS)
def test_crop_matches_full_decode_cropped(files, kind, scale):
    # contiguous=False: the crop's rows decoded at full width, each pixel at its own column, and the
    # crop returned as a view of them (no row copied out of libjpeg's row buffer): the same pixels.
    data = files[kind]
    h, w = _size(data)
    full = jpeg.decode(data, scale)
    for crop in _crops(h, w, seed=scale):
        t, lf, bh, bw = jpeg.scaled_crop_box(*crop, scale, h, w)
        for contiguous in (True, False):
            got = jpeg.decode(data, scale, crop, contiguous=contiguous)
            _assert_equal(got, full[t : t + bh, lf : lf + bw], f"{kind} 1/{scale} crop {crop}, contiguous={contiguous}")
            assert got.strides[1:] == (3, 1)


@needs_ext
def test_a_crop_narrower_than_the_image_comes_back_as_a_view_of_whole_rows(files):
    got = jpeg.decode(files["500x375"], 2, (10, 40, 100, 60), contiguous=False)
    assert got.shape == (50, 30, 3) and got.base is not None and got.base.shape[1] == 250


@needs_ext
@pytest.mark.parametrize("kind", ["420", "422", "progressive"])
def test_bare_crop_scanline_differs_only_on_edge_columns(files, kind):
    """Why the extension decodes a one-column margin: without it (``_margin=0``), libjpeg's fancy
    chroma upsampling treats a crop's left/right edge as the image edge (libjpeg.txt, "Decompressing
    partial scanlines"). Rows are unaffected: jpeg_skip_scanlines keeps the upsampling context."""
    data = files[kind]
    h, w = _size(data)
    full = jpeg.decode(data)
    differing = 0
    for crop in _crops(h, w, seed=7):
        t, lf, bh, bw = crop
        diff = np.abs(
            jpeg._jpeg.decode(data, 1, crop, _margin=0).astype(np.int16) - full[t : t + bh, lf : lf + bw]
        )
        inner = diff[:, 1:-1] if bw > 2 else diff[:, :0]
        assert inner.max(initial=0) == 0, f"{kind} crop {crop}: difference away from the edge columns"
        differing += bool(diff.max())
    assert differing > 0  # the margin is needed: some bare crops do differ on their edges


@needs_ext
def test_grayscale_is_replicated_to_rgb(files):
    got = jpeg.decode(files["gray"], 2)
    assert got.shape[2] == 3
    assert np.array_equal(got[..., 0], got[..., 1]) and np.array_equal(got[..., 0], got[..., 2])


@needs_ext
def test_input_types(files):
    data = files["tiny"]
    want = jpeg.decode(data)
    for form in (
        bytearray(data),
        memoryview(data),
        np.frombuffer(data, np.uint8),
        np.frombuffer(data, np.int8),
    ):
        assert np.array_equal(jpeg.decode(form), want)
    with pytest.raises(TypeError, match="encoded bytes"):
        jpeg.decode(np.zeros((4, 4), np.uint8))
    with pytest.raises(TypeError, match="encoded bytes"):
        jpeg.decode("not bytes")
    with pytest.raises(TypeError, match="crop"):
        jpeg.decode(data, 1, crop=(0, 0, 2))


# ---------------------------------------------------------------------------------------------- out=


def _check_out_param(files):
    data = files["420"]
    h, w = _size(data)
    crop = (100, 40, 224, 200)
    t, lf, bh, bw = jpeg.scaled_crop_box(*crop, 2, h, w)
    want = jpeg.decode(data, 2, crop)
    out = np.full((bh, bw, 3), 7, np.uint8)
    assert jpeg.decode(data, 2, crop, out=out) is out
    assert np.array_equal(out, want)
    batch = np.zeros((3, bh, bw, 3), np.uint8)  # one image of a batch buffer, written in place
    assert np.shares_memory(jpeg.decode(data, 2, crop, out=batch[1]), batch)
    assert np.array_equal(batch[1], want) and not batch[0].any() and not batch[2].any()
    with pytest.raises(ValueError, match="shape"):
        jpeg.decode(data, 2, crop, out=np.empty((bh + 1, bw, 3), np.uint8))
    with pytest.raises(TypeError, match="uint8"):
        jpeg.decode(data, 2, crop, out=np.empty((bh, bw, 3), np.float32))
    readonly = np.empty((bh, bw, 3), np.uint8)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        jpeg.decode(data, 2, crop, out=readonly)


@needs_ext
def test_out_is_written_in_place(files):
    _check_out_param(files)
    # rows need not be adjacent: a window of a larger canvas
    data = files["tiny"]
    canvas = np.zeros((20, 30, 3), np.uint8)
    jpeg.decode(data, out=canvas[5:14, 10:23])
    assert np.array_equal(canvas[5:14, 10:23], jpeg.decode(data))
    assert canvas[:5].sum() == 0 and canvas[:, :10].sum() == 0
    with pytest.raises(ValueError, match="contiguous"):
        jpeg.decode(data, out=np.zeros((9, 26, 3), np.uint8)[:, ::2])


def test_out_is_written_in_place_on_slow_path(files, monkeypatch):
    monkeypatch.setattr(jpeg, "AVAILABLE", False)
    _check_out_param(files)


# ---------------------------------------------------------------------------------------------- errors

NOT_JPEG = {
    "empty": (b"", "empty"),
    "png": (b"\x89PNG\r\n\x1a\n" + bytes(64), "not a JPEG"),
    "text": (b"hello, world", "not a JPEG"),
}


def _claiming(data: bytes, height: int, width: int) -> bytes:
    """``data`` with its frame header edited to claim ``height`` x ``width``: the scan ends (at EOI)
    long before the image it claims does."""
    out = bytearray(data)
    sof = next(i for i in range(len(out) - 1) if out[i] == 0xFF and out[i + 1] in (0xC0, 0xC1, 0xC2))
    out[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    return bytes(out)


def _damaged(files) -> dict[str, tuple[bytes, str]]:
    data = files["420"]
    prog = files["progressive"]
    return {
        "soi only": (b"\xff\xd8", "header"),
        "garbage after SOI": (b"\xff\xd8" + bytes(range(256)) * 4, "header"),
        "header cut": (data[:200], "header"),
        "half": (data[: len(data) // 2], "truncated"),
        "no EOI": (data[:-2], "truncated"),
        "last bytes": (data[:-9], "truncated"),
        "progressive cut": (prog[: len(prog) * 3 // 4], "truncated"),
        "frame larger than its scan": (_claiming(data, 65000, 65000), "truncated"),
        "progressive frame larger than its scans": (_claiming(prog, 65000, 65000), "truncated"),
    }


@pytest.mark.parametrize("name", list(NOT_JPEG))
def test_not_jpeg_raises_on_both_paths(name, monkeypatch):
    data, match = NOT_JPEG[name]
    with pytest.raises(ValueError, match=match):
        jpeg.read_header(data)
    with pytest.raises(ValueError, match=match):
        jpeg.decode(data)
    monkeypatch.setattr(jpeg, "AVAILABLE", False)
    with pytest.raises(ValueError, match=match):
        jpeg.read_header(data)
    with pytest.raises(ValueError, match=match):
        jpeg.decode(data)


@needs_ext
def test_damaged_data_raises_naming_the_problem(files):
    for name, (data, match) in _damaged(files).items():
        with pytest.raises(ValueError, match=match) as info:
            jpeg.decode(data)
        assert "JPEG" in str(info.value), name
        if match == "header":
            with pytest.raises(ValueError, match="header"):
                jpeg.read_header(data)
    # a header-only read of a file cut in its image data is fine: the header is intact
    assert jpeg.read_header(files["420"][: len(files["420"]) // 2])[:2] == _size(files["420"])


@needs_ext
def test_crop_above_the_damage_still_decodes(files):
    """A crop stops reading at its last row (baseline files): damage below it goes unnoticed."""
    data = files["420"]
    cut = data[: len(data) // 2]
    assert np.array_equal(jpeg.decode(cut, 1, (0, 0, 16, 40)), jpeg.decode(data, 1, (0, 0, 16, 40)))
    with pytest.raises(ValueError, match="truncated"):
        jpeg.decode(cut, 1, (400, 0, 16, 40))


def test_damaged_data_raises_on_slow_path(files, monkeypatch):
    monkeypatch.setattr(jpeg, "AVAILABLE", False)
    for name, (data, _) in _damaged(files).items():
        with pytest.raises(ValueError, match="JPEG decode"):
            jpeg.decode(data)
        assert name


@needs_ext
def test_frame_larger_than_its_scan_is_truncated(files):
    """libjpeg only warns ("premature end of data segment") and pads the missing rows with grey."""
    with pytest.raises(ValueError, match="truncated"):
        jpeg.decode(_claiming(files["420"], 4000, 4000))


@needs_ext
def test_corrupt_entropy_data_is_tolerated_unless_strict(files):
    data = bytearray(files["420"])
    data[len(data) // 2 : len(data) // 2 + 2] = b"\xff\xd5"  # a stray RST marker inside the scan
    got = jpeg.decode(bytes(data))  # libjpeg warns and carries on, as Pillow and OpenCV do
    assert got.shape == (*_size(files["420"]), 3)
    with pytest.raises(ValueError, match="Corrupt JPEG data"):
        jpeg.decode(bytes(data), strict=True)


@needs_ext
def test_cmyk_is_refused_for_the_caller_to_fall_back(files):
    with pytest.raises(ValueError, match="CMYK"):
        jpeg.decode(files["cmyk"])
    with pytest.raises(ValueError, match="CMYK"):
        jpeg.decode(files["cmyk"], 2, (0, 0, 8, 8))


def test_slow_path_decodes_cmyk(files, monkeypatch):
    monkeypatch.setattr(jpeg, "AVAILABLE", False)
    assert jpeg.decode(files["cmyk"], 2).shape == (20, 28, 3)


# ---------------------------------------------------------------------------------------------- slow path


@pytest.mark.parametrize("scale", [1, 2, 4, 8])
@pytest.mark.parametrize("kind", ["420", "422", "gray", "progressive", "500x375", "tiny"])
def test_slow_path_gives_the_same_shapes(files, kind, scale, monkeypatch):
    data = files[kind]
    h, w = _size(data)
    crops = [None, (0, 0, h, w), (3, 5, max(h // 3, 1), max(w // 2, 1)), (h - 1, w - 1, 1, 1)]
    fast = {c: jpeg.decode(data, scale, c) for c in crops} if jpeg.AVAILABLE else {}
    monkeypatch.setattr(jpeg, "AVAILABLE", False)
    for crop in crops:
        slow = jpeg.decode(data, scale, crop)
        hs, ws = jpeg.scaled_size(h, w, scale)
        want = (hs, ws, 3) if crop is None else (*jpeg.scaled_crop_box(*crop, scale, h, w)[2:], 3)
        assert slow.shape == want and slow.dtype == np.uint8 and slow.flags.c_contiguous
        if fast:
            # OpenCV's reduced decode is libjpeg's DCT scaling: measured bit-exact here; allow +-1
            # for another OpenCV build.
            diff = np.abs(slow.astype(np.int16) - fast[crop])
            assert diff.max() <= 1, f"{kind} 1/{scale} crop {crop}: slow path off by {diff.max()}"


def test_availability_is_explained():
    if jpeg.AVAILABLE:
        assert jpeg.WHY_UNAVAILABLE == "" and jpeg.LIBJPEG_VERSION
    else:
        assert "_jpeg extension" in jpeg.WHY_UNAVAILABLE and jpeg.LIBJPEG_VERSION is None


def test_extension_is_built_where_the_headers_are():
    """A build that silently dropped the extension would otherwise only show up as skipped tests."""
    if not os.path.isfile("/usr/include/jpeglib.h") or os.environ.get("JPEG_INCLUDE_DIR") is not None:
        pytest.skip("no libjpeg-turbo headers in /usr/include (or JPEG_INCLUDE_DIR overrides them)")
    assert jpeg.AVAILABLE, jpeg.WHY_UNAVAILABLE


# ---------------------------------------------------------------------------------------------- GIL


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@needs_ext
def test_gil_is_released_while_decoding():
    """While one thread decodes large JPEGs, the main thread keeps running Python.

    Counted in CPU time, not in gaps of wall time (which a busy machine stretches): a C call that held
    the GIL would leave the main thread blocked on it for every decode, running only a switch interval
    (5 ms) between two decodes: 13-20% of the decoder's CPU time here (a held-GIL stand-in, idle and
    with three spinning processes); released, the main thread spins beside the decoder and the
    scheduler gives the two runnable threads comparable shares whatever the load: 100-126%.
    """
    data = _encode(_photo(2400, 3200, seed=5), quality=90)
    decodes = 4
    done = threading.Event()
    decoder_cpu: list[float] = []

    def work():
        start = time.thread_time()
        for _ in range(decodes):
            jpeg.decode(data)
        decoder_cpu.append(time.thread_time() - start)
        done.set()

    thread = threading.Thread(target=work)
    main_start = time.thread_time()
    thread.start()
    while not done.is_set():
        pass
    main_cpu = time.thread_time() - main_start
    thread.join()
    assert main_cpu > 0.5 * decoder_cpu[0], (
        f"the main thread ran {main_cpu * 1e3:.0f} ms of CPU while another decoded for {decoder_cpu[0] * 1e3:.0f} ms: "
        "is the GIL held while decoding?"
    )
