"""The decompression-bomb guard: config.set_max_image_pixels, and Decode refusing an oversized header
before decoding anything."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

import minddata as md
from minddata import vision
from minddata.ops.plans.decode import image_header_size


def encoded(fmt: str, width: int = 30, height: int = 20, **kw: object) -> np.ndarray:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (10, 20, 30)).save(buf, fmt, **kw)
    return np.frombuffer(buf.getvalue(), np.uint8)


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_header_only(width: int, height: int) -> np.ndarray:
    """A PNG whose valid IHDR claims ``width`` x ``height``, with an IDAT of a few bytes and IEND."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunks = _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + _png_chunk(b"IEND", b"")
    return np.frombuffer(b"\x89PNG\r\n\x1a\n" + chunks, np.uint8)


def test_setting_defaults_round_trips_and_validates() -> None:
    assert md.config.get_max_image_pixels() == 178_956_970
    md.config.set_max_image_pixels(1000)
    assert md.config.get_max_image_pixels() == 1000
    md.config.set_max_image_pixels(None)
    assert md.config.get_max_image_pixels() is None
    md.config.load_defaults()
    assert md.config.get_max_image_pixels() == 178_956_970
    with pytest.raises(
        ValueError, match=r"config.set_max_image_pixels: the value must be greater than 0. Found: 0"
    ):
        md.config.set_max_image_pixels(0)
    with pytest.raises(TypeError, match=r"config.set_max_image_pixels: the value must be an int. Found: 1.5"):
        md.config.set_max_image_pixels(1.5)


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "BMP", "GIF", "WEBP", "TIFF"])
def test_header_size_is_read_without_decoding(fmt: str) -> None:
    assert image_header_size(encoded(fmt, 30, 20)) == (30, 20)


def test_progressive_jpeg_with_exif_header() -> None:
    data = encoded("JPEG", 33, 17, progressive=True, exif=b"Exif\x00\x00" + b"\x00" * 200)
    assert image_header_size(data) == (33, 17)


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP"])
def test_a_real_image_over_a_low_limit_is_refused(fmt: str) -> None:
    data = encoded(fmt, 30, 20)
    md.config.set_max_image_pixels(599)
    with pytest.raises(
        ValueError,
        match=r"Decode: the image header says 30x20 = 600 pixels, over the limit of 599 pixels .*"
        r"minddata.config.set_max_image_pixels\(n\)",
    ):
        vision.Decode()(data)
    md.config.set_max_image_pixels(600)
    assert vision.Decode()(data).shape == (20, 30, 3)


def test_a_crafted_100000_square_png_header_is_refused_before_decoding() -> None:
    with pytest.raises(ValueError, match=r"Decode: the image header says 100000x100000 = 10000000000 pixels"):
        vision.Decode()(png_header_only(100_000, 100_000))


def test_to_pil_is_guarded_too() -> None:
    with pytest.raises(ValueError, match=r"over the limit of 178956970 pixels"):
        vision.Decode(to_pil=True)(png_header_only(100_000, 100_000))


def test_no_limit_lets_the_decoder_report_a_truncated_file() -> None:
    md.config.set_max_image_pixels(None)
    with pytest.raises(ValueError, match=r"Decode: the input is not a decodable image .*truncated"):
        vision.Decode()(png_header_only(3000, 3000))


def test_a_pipeline_reports_the_refused_row() -> None:
    md.config.set_max_image_pixels(100)
    files = [encoded("PNG", 5, 5), encoded("PNG", 30, 20)]
    ds = md.GeneratorDataset(lambda: ((f,) for f in files), column_names=["img"], shuffle=False)
    ds = ds.map(vision.Decode(), input_columns="img")
    with pytest.raises(md.errors.RowError, match=r"row 1.*30x20 = 600 pixels, over the limit of 100"):
        list(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))
