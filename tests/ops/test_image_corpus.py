"""Probes: odd and broken images (bench/corpus.py) through Decode on every decoder path here.

Each file gives the right pixels, or a minddata error naming the file; a decompression bomb is
refused on every path whatever its header looks like (one junk byte before the frame header once
let a 20000x20000 JPEG through an unfused Decode). Paths: the CPU Decode (libjpeg-turbo extension
and Pillow), Decode(to_pil=True), the fused Decode+Resize and Decode+RandomResizedCrop, the Dvpp reference model (the
Ascend driver's check is in test_dvpp_ascend.py), and DALI on
its CPU backend where DALI is installed.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import minddata as md
from minddata import vision
from minddata.bench.corpus import BOMB_SIDE, bomb_jpeg, bomb_png, build_image_corpus, jpeg_bytes
from minddata.errors import RowError
from minddata.ops.cpu import jpeg
from minddata.ops.probe import dali_status

DALI_OK, DALI_WHY = dali_status()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return build_image_corpus(tmp_path_factory.mktemp("corpus") / "files")


def _one_file_folder(tmp: pathlib.Path, name: str, data: bytes) -> pathlib.Path:
    (tmp / "c").mkdir(parents=True, exist_ok=True)
    (tmp / "c" / name).write_bytes(data)
    return tmp


def _decode_in_pipeline(folder: pathlib.Path, ops: list) -> np.ndarray:
    ds = md.ImageFolderDataset(str(folder), shuffle=False, num_parallel_workers=1)
    ds = ds.map(ops, input_columns="image", num_parallel_workers=1)
    (row,) = list(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))
    return row[0]


PATHS = {
    "cpu": lambda: [vision.Decode()],
    "pil": lambda: [vision.Decode(to_pil=True)],
    "fused": lambda: [vision.Decode(), vision.Resize((6, 5))],
    # The crop covers the whole image: the fused path decodes only the crop's region, so a random crop
    # that stops above damage at the end of a file (a missing EOI marker) rightly decodes it.
    "fused-crop": lambda: [vision.Decode(), vision.RandomResizedCrop((6, 5), scale=(1.0, 1.0), ratio=(0.01, 100.0))],
    "dvpp": lambda: [vision.Decode().device("Dvpp")],
    "gpu": lambda: [vision.Decode().device("GPU")],
}


def _set_path(path: str) -> None:
    if path == "cpu":
        md.config.set_enable_fusion(False)  # the unfused Decode, which the junk-before-SOF bomb passed
    if path == "dvpp":
        md.config.set_dvpp_driver("reference")
    if path == "gpu":
        if not DALI_OK:
            pytest.skip(f"nvidia.dali not importable ({DALI_WHY})")
        md.config.set_gpu_emulation(True)


@pytest.mark.parametrize("path", list(PATHS))
def test_every_corpus_file_gives_pixels_or_an_error_naming_it(path, corpus, tmp_path) -> None:
    _set_path(path)
    wrong = []
    for i, entry in enumerate(corpus):
        folder = _one_file_folder(tmp_path / str(i), entry.path.name, entry.path.read_bytes())
        try:
            out = _decode_in_pipeline(folder, PATHS[path]())
        except RowError as error:
            if entry.path.name not in str(error):
                wrong.append(f"{entry.path.name}: the error does not name the file: {error}")
            elif entry.expect != "error" and path in ("cpu", "pil", "fused", "fused-crop"):
                wrong.append(f"{entry.path.name}: the CPU must decode it: {error}")
            continue
        except Exception as error:  # noqa: BLE001 - counted: anything but a RowError is a failure
            wrong.append(f"{entry.path.name}: {type(error).__name__}: {error}")
            continue
        if entry.expect == "error":
            wrong.append(f"{entry.path.name} ({entry.why}): decoded to {out.shape}, expected an error")
        elif path in ("fused", "fused-crop"):
            if out.shape != (6, 5, 3):
                wrong.append(f"{entry.path.name}: shape {out.shape}")
        elif out.shape != entry.reference.shape:
            wrong.append(f"{entry.path.name}: shape {out.shape}, expected {entry.reference.shape}")
        elif entry.expect == "pixels" and path in ("cpu", "pil") and not np.array_equal(out, entry.reference):
            wrong.append(f"{entry.path.name}: pixels differ from Pillow's decode")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("junk", [False, True], ids=["plain", "junk-before-SOF"])
@pytest.mark.parametrize("path", list(PATHS))
def test_a_jpeg_bomb_is_refused_on_every_path(path, junk, tmp_path) -> None:
    _set_path(path)
    folder = _one_file_folder(tmp_path, "bomb.jpg", bomb_jpeg(junk_before_sof=junk))
    with pytest.raises(RowError, match=r"bomb\.jpg") as caught:
        _decode_in_pipeline(folder, PATHS[path]())
    text = str(caught.value)
    # Refused for its size (the guard, or Dvpp's own size rule), or as unreadable: never decoded.
    assert any(why in text for why in ("decompression-bomb guard", "pixels per side", "not a decodable")), text


def test_the_unfused_cpu_decode_refuses_the_692_byte_junk_bomb_from_its_decoder() -> None:
    data = bomb_jpeg(junk_before_sof=True)
    assert len(data) < 1000
    md.config.set_enable_fusion(False)
    with pytest.raises(ValueError, match=rf"{BOMB_SIDE}x{BOMB_SIDE} = {BOMB_SIDE**2} pixels, over the limit"):
        vision.Decode()(data)


@pytest.mark.skipif(not jpeg.AVAILABLE, reason=jpeg.WHY_UNAVAILABLE or "no _jpeg extension")
def test_the_libjpeg_extension_asks_before_allocating() -> None:
    seen = []

    def refuse(width: int, height: int) -> None:
        seen.append((width, height))
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        jpeg.decode(bomb_jpeg(junk_before_sof=True), check_size=refuse)
    assert seen == [(BOMB_SIDE, BOMB_SIDE)]


def test_a_png_bomb_is_refused_by_the_size_pillow_parsed() -> None:
    md.config.set_max_image_pixels(10**9)  # over Pillow's own limit: ours is the one that counts
    with pytest.raises(ValueError, match=r"30000x40000 = 1200000000 pixels, over the limit of 1000000000"):
        vision.Decode()(bomb_png(30000, 40000))


def test_a_lifted_limit_decodes_an_image_over_pillows_default() -> None:
    from PIL import Image

    md.config.set_max_image_pixels(None)
    old = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = 100  # Pillow's own limit does not apply: minddata's setting decides
    try:
        assert vision.Decode()(jpeg_bytes(40, 30)).shape == (30, 40, 3)
        assert vision.Decode(to_pil=True)(jpeg_bytes(20, 30)).size == (20, 30)
    finally:
        Image.MAX_IMAGE_PIXELS = old


def test_a_truncated_jpeg_says_so_and_suggests_skip_mode() -> None:
    data = jpeg_bytes(64, 48)
    with pytest.raises(ValueError) as caught:
        vision.Decode()(data[:500])
    text = str(caught.value)
    assert "the JPEG is truncated: its data ends after 500 bytes" in text
    assert "set_error_samples_mode('skip')" in text
    assert "ff d8" not in text


@pytest.mark.parametrize("junk", [False, True], ids=["plain", "junk-before-SOF"])
def test_without_the_extension_the_fallbacks_refuse_the_bomb_too(junk, monkeypatch) -> None:
    """Where the _jpeg extension was not built, Decode uses Pillow and the fused kernels OpenCV's
    reduced decode; both are checked before decoding."""
    data = bomb_jpeg(junk_before_sof=junk)
    monkeypatch.setattr(jpeg, "AVAILABLE", False)
    with pytest.raises(ValueError, match="over the limit"):
        vision.Decode()(data)
    sizes = []

    def refuse(width: int, height: int) -> None:
        sizes.append((width, height))
        raise ValueError("refused")

    with pytest.raises(ValueError):
        jpeg.decode(data, 2, check_size=refuse)  # the OpenCV slow path
    # Its strict header parser refuses junk before a marker outright; otherwise the check refuses.
    assert sizes == ([] if junk else [(BOMB_SIDE, BOMB_SIDE)])
