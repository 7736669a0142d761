"""The image file functions (minddata/vision/image_io.py) on real files written in tmp_path: Pillow and
OpenCV are the references (PNG exact; JPEG within the stated error of a lossy codec)."""

from __future__ import annotations

import io
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from minddata import vision
from minddata.dataset.vision import utils as compat_utils
from minddata.errors import ArgumentError
from minddata.vision import ImageReadMode

_y, _x = np.mgrid[0:24, 0:32]
SMOOTH = np.stack([_x * 7, _y * 9, (_x + _y) * 4], -1).astype(np.uint8)


def test_write_file_then_read_file_round_trips(tmp_path: Path) -> None:
    data = np.arange(256, dtype=np.uint8)
    vision.write_file(str(tmp_path / "b.bin"), data)
    assert (tmp_path / "b.bin").read_bytes() == data.tobytes()
    np.testing.assert_array_equal(vision.read_file(tmp_path / "b.bin"), data)


def test_read_file_of_a_missing_file_names_the_function(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="read_file: .*does not exist"):
        vision.read_file(str(tmp_path / "none"))


def test_write_file_takes_1d_uint8_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"write_file: `data` must be a 1-D uint8 array"):
        vision.write_file(str(tmp_path / "x"), np.zeros((2, 2), np.uint8))


@pytest.mark.parametrize("image", [SMOOTH, SMOOTH[..., 0], SMOOTH[..., :1]], ids=["rgb", "hw", "hw1"])
@pytest.mark.parametrize("level", [0, 6, 9])
def test_encode_png_decodes_to_the_same_pixels(image: np.ndarray, level: int) -> None:
    data = vision.encode_png(image, level)
    assert data.dtype == np.uint8 and data.ndim == 1
    back = np.asarray(Image.open(io.BytesIO(data.tobytes())))
    np.testing.assert_array_equal(back, image.reshape(back.shape))


def test_png_compression_level_trades_size() -> None:
    noisy = np.random.default_rng(0).integers(0, 4, (64, 64, 3), dtype=np.uint8) + SMOOTH[:1, :1]
    assert len(vision.encode_png(noisy, 0)) > len(vision.encode_png(noisy, 9))


@pytest.mark.parametrize("image", [SMOOTH, SMOOTH[..., 1]], ids=["rgb", "gray"])
def test_encode_jpeg_decodes_close_to_the_image(image: np.ndarray) -> None:
    data = vision.encode_jpeg(image, quality=95)
    assert data[:2].tolist() == [0xFF, 0xD8]
    back = np.asarray(Image.open(io.BytesIO(data.tobytes()))).astype(int)
    # Quality 95 on a smooth image: within 3 levels on average (chroma subsampling included).
    assert np.abs(back - image.astype(int)).mean() < 3.0


def test_jpeg_quality_trades_size() -> None:
    assert len(vision.encode_jpeg(SMOOTH, 10)) < len(vision.encode_jpeg(SMOOTH, 100))


def test_write_png_and_write_jpeg_write_what_encode_gives(tmp_path: Path) -> None:
    vision.write_png(tmp_path / "a.png", SMOOTH, 3)
    vision.write_jpeg(tmp_path / "a.jpg", SMOOTH, 80)
    assert (tmp_path / "a.png").read_bytes() == vision.encode_png(SMOOTH, 3).tobytes()
    assert (tmp_path / "a.jpg").read_bytes() == vision.encode_jpeg(SMOOTH, 80).tobytes()


def test_read_image_modes_on_an_rgb_png(tmp_path: Path) -> None:
    path = tmp_path / "rgb.png"
    Image.fromarray(SMOOTH).save(path)
    np.testing.assert_array_equal(vision.read_image(str(path)), SMOOTH)
    np.testing.assert_array_equal(vision.read_image(str(path), ImageReadMode.COLOR), SMOOTH)
    gray = vision.read_image(str(path), ImageReadMode.GRAYSCALE)
    np.testing.assert_array_equal(gray[..., 0], np.asarray(Image.fromarray(SMOOTH).convert("L")))
    assert gray.shape == (24, 32, 1)


def test_read_image_unchanged_keeps_gray_and_alpha(tmp_path: Path) -> None:
    Image.fromarray(SMOOTH[..., 0]).save(tmp_path / "g.png")
    rgba = np.dstack([SMOOTH, SMOOTH[..., :1]])
    Image.fromarray(rgba).save(tmp_path / "a.png")
    assert vision.read_image(str(tmp_path / "g.png")).shape == (24, 32, 1)
    np.testing.assert_array_equal(vision.read_image(str(tmp_path / "a.png")), rgba)
    np.testing.assert_array_equal(
        vision.read_image(str(tmp_path / "g.png"), ImageReadMode.COLOR), np.repeat(SMOOTH[..., :1], 3, axis=2)
    )


def test_read_image_16_bit_gray_keeps_the_high_byte(tmp_path: Path) -> None:
    deep = (SMOOTH[..., 0].astype(np.uint16) << 8) | 0xAB
    cv2.imwrite(str(tmp_path / "d.png"), deep)
    np.testing.assert_array_equal(vision.read_image(str(tmp_path / "d.png"))[..., 0], SMOOTH[..., 0])


@pytest.mark.parametrize("ext", ["jpg", "bmp", "tiff"])
def test_read_image_matches_opencv_for_other_formats(tmp_path: Path, ext: str) -> None:
    path = str(tmp_path / f"i.{ext}")
    cv2.imwrite(path, cv2.cvtColor(SMOOTH, cv2.COLOR_RGB2BGR))
    got = vision.read_image(path).astype(int)
    want = cv2.cvtColor(cv2.imread(path), cv2.COLOR_BGR2RGB).astype(int)
    # Lossless formats exactly; JPEG: both decoders are libjpeg, chroma upsampling may differ by a level.
    assert np.abs(got - want).max() <= (0 if ext != "jpg" else 8) and np.abs(got - want).mean() <= 1.0


def test_read_image_of_a_file_that_is_no_image(tmp_path: Path) -> None:
    (tmp_path / "x.png").write_bytes(b"not an image")
    with pytest.raises(ValueError, match="read_image: cannot decode"):
        vision.read_image(str(tmp_path / "x.png"))


def test_image_size_and_channels_of_arrays_and_pil_images() -> None:
    assert vision.get_image_size(SMOOTH) == [24, 32] and vision.get_image_num_channels(SMOOTH) == 3
    assert (
        vision.get_image_size(SMOOTH[..., 0]) == [24, 32]
        and vision.get_image_num_channels(SMOOTH[..., 0]) == 1
    )
    pil = Image.fromarray(SMOOTH).convert("RGBA")
    assert vision.get_image_size(pil) == [24, 32] and vision.get_image_num_channels(pil) == 4
    with pytest.raises(ValueError, match="get_image_size: `image` must have at least 2 dimensions"):
        vision.get_image_size(np.zeros(3))
    with pytest.raises(
        TypeError, match="get_image_num_channels: `image` must be a numpy.ndarray or a PIL image"
    ):
        vision.get_image_num_channels([[1]])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: vision.encode_jpeg(SMOOTH, 0),
            ArgumentError,
            r"encode_jpeg: `quality` must be in \[1, 100\]. Found: 0",
        ),
        (
            lambda: vision.encode_png(SMOOTH, 10),
            ArgumentError,
            r"encode_png: `compression_level` must be in \[0, 9\]",
        ),
        (
            lambda: vision.encode_png(SMOOTH, 1.5),
            TypeError,
            r"encode_png: `compression_level` must be an int",
        ),
        (
            lambda: vision.encode_jpeg(SMOOTH.astype(np.float32)),
            TypeError,
            r"encode_jpeg: `image` must be uint8",
        ),
        (
            lambda: vision.encode_png(np.dstack([SMOOTH, SMOOTH[..., :1]])),
            ValueError,
            r"<H, W>, <H, W, 1> or <H, W, 3>",
        ),
        (lambda: vision.read_image(3), TypeError, r"read_image: `filename` must be a str or a path"),
        (
            lambda: vision.read_image("x.png", 1),
            TypeError,
            r"read_image: `mode` must be a vision.ImageReadMode",
        ),
    ],
)
def test_bad_arguments_are_rejected_naming_the_function(call, error, message) -> None:  # noqa: ANN001
    with pytest.raises(error, match=message):
        call()


def test_mindspore_utils_path_has_the_functions() -> None:
    assert compat_utils.read_image is vision.read_image and compat_utils.ImageReadMode is ImageReadMode
    assert compat_utils.SliceMode is vision.SliceMode
