"""vision.Decode's CPU kernel against Pillow's decode of the same files, written with Pillow."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
from PIL import Image

from minddata import vision


def _photo(h: int = 48, w: int = 64, seed: int = 0) -> np.ndarray:
    """A smooth, photo-like RGB image: gradients plus blurred noise (JPEG-friendly, not constant)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    noise = rng.normal(0, 25, (h // 4 + 1, w // 4 + 1, 3)).repeat(4, 0).repeat(4, 1)[:h, :w]
    img = np.stack([x / w * 200, y / h * 200, (x + y) / (w + h) * 150 + 50], axis=-1) + noise
    return np.clip(img, 0, 255).astype(np.uint8)


PHOTO = _photo()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Encoded test images written to disk with Pillow and read back as raw bytes."""
    root = tmp_path_factory.mktemp("decode")
    rgb = Image.fromarray(PHOTO)
    second = Image.fromarray(255 - PHOTO)
    made = {
        "jpeg": (rgb, "JPEG", {"quality": 90}),
        "png": (rgb, "PNG", {}),
        "bmp": (rgb, "BMP", {}),
        "tiff": (rgb, "TIFF", {}),
        "webp_lossless": (rgb, "WEBP", {"lossless": True}),
        "webp": (rgb, "WEBP", {"quality": 90}),
        "gif": (rgb.convert("P"), "GIF", {"save_all": True, "append_images": [second.convert("P")]}),
        "png_L": (rgb.convert("L"), "PNG", {}),
        "png_P": (rgb.convert("P"), "PNG", {}),
        "png_RGBA": (rgb.convert("RGBA"), "PNG", {}),
        "png_LA": (rgb.convert("LA"), "PNG", {}),
        "jpeg_L": (rgb.convert("L"), "JPEG", {"quality": 90}),
        "jpeg_CMYK": (rgb.convert("CMYK"), "JPEG", {"quality": 90}),
        "tiff_CMYK": (rgb.convert("CMYK"), "TIFF", {}),
    }
    out = {}
    for name, (im, fmt, kw) in made.items():
        path = root / f"{name}.{fmt.lower()}"
        im.save(path, fmt, **kw)
        out[name] = path.read_bytes()
    return out


def _pil_rgb(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        return np.array(im.convert("RGB"))


def _close(a: np.ndarray, b: np.ndarray, tol: int = 1, frac: float = 0.99) -> bool:
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16))
    return a.shape == b.shape and float((diff <= tol).mean()) >= frac


@pytest.mark.parametrize("name", ["png", "bmp", "tiff", "webp_lossless"])
def test_lossless_formats_are_exact(files: dict[str, bytes], name: str) -> None:
    out = vision.Decode()(np.frombuffer(files[name], np.uint8))
    assert out.dtype == np.uint8 and out.shape == PHOTO.shape
    np.testing.assert_array_equal(out, PHOTO)


@pytest.mark.parametrize("name", ["jpeg", "webp", "jpeg_CMYK"])
def test_lossy_formats_match_pillow(files: dict[str, bytes], name: str) -> None:
    out = vision.Decode()(np.frombuffer(files[name], np.uint8))
    assert _close(out, _pil_rgb(files[name]))


@pytest.mark.parametrize("name", ["gif", "png_L", "png_P", "png_RGBA", "png_LA", "jpeg_L", "tiff_CMYK"])
def test_every_mode_becomes_rgb_like_pillow(files: dict[str, bytes], name: str) -> None:
    out = vision.Decode()(files[name])
    assert out.shape == PHOTO.shape and out.dtype == np.uint8
    assert _close(out, _pil_rgb(files[name]), tol=1, frac=1.0 if name.startswith("png") else 0.99)


def test_gif_gives_the_first_frame(files: dict[str, bytes]) -> None:
    out = vision.Decode()(files["gif"])
    with Image.open(io.BytesIO(files["gif"])) as im:
        assert im.n_frames == 2
        first = np.array(im.convert("RGB"))
    np.testing.assert_array_equal(out, first)


def test_accepted_input_forms_agree(files: dict[str, bytes]) -> None:
    data = files["png"]
    want = vision.Decode()(np.frombuffer(data, np.uint8))
    for form in (data, bytearray(data), memoryview(data), np.array(data), np.frombuffer(data, np.int8)):
        np.testing.assert_array_equal(vision.Decode()(form), want)


def test_output_is_a_writable_contiguous_array(files: dict[str, bytes]) -> None:
    for name in ("jpeg", "gif"):
        out = vision.Decode()(files[name])
        assert out.flags.c_contiguous and out.flags.writeable


def test_to_pil(files: dict[str, bytes]) -> None:
    im = vision.Decode(to_pil=True)(files["png"])
    assert isinstance(im, Image.Image) and im.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(im), PHOTO)
    # Later ops take the PIL image as the array it holds.
    assert vision.HorizontalFlip()(im).shape == PHOTO.shape


def test_garbage_raises_clearly() -> None:
    with pytest.raises(
        ValueError, match=r"Decode: the input is not a decodable image \(17 bytes; its signature is no known format"
    ) as e:
        vision.Decode()(bytes(range(17)))
    assert "JPEG, PNG, BMP, GIF, WebP or TIFF" in str(e.value)
    assert "00 01 02" not in str(e.value), "errors must not echo the file's contents"


def test_truncated_and_empty_inputs_raise(files: dict[str, bytes]) -> None:
    half = len(files["jpeg"]) // 2
    with pytest.raises(
        ValueError,
        match=rf"Decode: the JPEG is truncated: its data ends after {half} bytes, before the image does .*"
        r"set_error_samples_mode\('skip'\)",
    ):
        vision.Decode()(files["jpeg"][:half])
    with pytest.raises(ValueError, match="Decode: the input is empty"):
        vision.Decode()(b"")


def test_already_decoded_input_raises_naming_the_shape() -> None:
    with pytest.raises(TypeError, match=r"Decode: .*shape \(48, 64, 3\).*already decoded"):
        vision.Decode()(PHOTO)
    with pytest.raises(TypeError, match="Decode: expected encoded image bytes.*list"):
        vision.Decode()([1, 2, 3])


def test_spec_pickles_and_validates() -> None:
    op = vision.Decode(to_pil=True)
    assert pickle.loads(pickle.dumps(op)) == op
    assert op != vision.Decode()
    with pytest.raises(TypeError, match=r"Decode: `to_pil` must be a bool. Found: 1 \(int\)"):
        vision.Decode(to_pil=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["cpu", "fused", "dvpp"])
def test_an_empty_file_is_named_with_the_skip_advice(path: str, tmp_path) -> None:
    import minddata as md
    from minddata.errors import RowError

    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "empty.jpg").write_bytes(b"")
    ops = [vision.Decode()]
    if path == "cpu":
        md.config.set_enable_fusion(False)
    elif path == "fused":
        ops.append(vision.Resize((6, 5)))
    else:
        md.config.set_dvpp_driver("reference")
        ops = [vision.Decode().device("Dvpp")]
    ds = md.ImageFolderDataset(str(tmp_path), shuffle=False, num_parallel_workers=1)
    ds = ds.map(ops, input_columns="image", num_parallel_workers=1)
    with pytest.raises(RowError) as caught:
        list(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))
    text = str(caught.value)
    assert "empty.jpg" in text
    assert "Decode: the input is empty (0 bytes)" in text
    assert "set_error_samples_mode('skip')" in text


def _claiming(data: bytes, height: int, width: int) -> bytes:
    out = bytearray(data)
    sof = next(i for i in range(len(out) - 1) if out[i] == 0xFF and out[i + 1] in (0xC0, 0xC1, 0xC2))
    out[sof + 5 : sof + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(out)


@pytest.mark.parametrize("to_pil", [False, True], ids=["array", "pil"])
def test_a_frame_its_data_cannot_fill_is_truncated_before_any_pixel(files: dict[str, bytes], to_pil: bool) -> None:
    """A small JPEG whose frame header claims 13000x13000: every decoder would pad it with grey."""
    from minddata.ops.cpu.decode import decode_image

    data = np.frombuffer(_claiming(files["jpeg"], 13000, 13000), np.uint8)
    with pytest.raises(ValueError, match="Decode: the JPEG is truncated") as caught:
        decode_image(data, to_pil=to_pil, max_pixels=None)
    assert "set_error_samples_mode('skip')" in str(caught.value)
