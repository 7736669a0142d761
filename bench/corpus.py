"""A corpus of odd and broken images, and the decompression bombs, built from scratch.

Shared by the probes in the test suite (tests/ops/test_image_corpus.py) and the long fuzz run
(bench/fuzz.py). Every entry says what a correct ``Decode`` gives: the exact pixels (Pillow's decode
of the same bytes, the reference), just a shape (CMYK: decoders convert CMYK differently), or an
error. Nothing here decodes a bomb: their expectations are written down, not computed.

Examples:
    >>> import tempfile, pathlib
    >>> entries = build_image_corpus(pathlib.Path(tempfile.mkdtemp()))
    >>> sorted({e.expect for e in entries})
    ['error', 'pixels', 'shape']
    >>> len(bomb_jpeg(junk_before_sof=True)) < 1000
    True
"""

from __future__ import annotations

import io
import pathlib
import random
import struct
import zlib
from dataclasses import dataclass

import numpy as np
from PIL import Image

__all__ = [
    "CorpusEntry",
    "bomb_jpeg",
    "bomb_png",
    "build_image_corpus",
    "csv_text",
    "jpeg_bytes",
    "mutate",
    "pillow_reference",
    "proto_field",
    "tf_example",
    "tf_feature",
    "tfrecord_bytes",
    "varint",
]

# A bomb's claimed size: 400 MP, over the default limit (178,956,970) and 1.2 GB as RGB.
BOMB_SIDE = 20000


@dataclass(frozen=True)
class CorpusEntry:
    """One file of the corpus and what ``Decode`` must make of it."""

    path: pathlib.Path
    expect: str  # "pixels" (exactly ``reference``), "shape" (``reference.shape`` only) or "error"
    reference: np.ndarray | None = None
    why: str = ""


def _pixels(width: int, height: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([x * 255 // max(width - 1, 1), y * 255 // max(height - 1, 1), (x + y) % 256], axis=-1)
    return np.clip(base + rng.integers(0, 40, size=(height, width, 3)), 0, 255).astype(np.uint8)


def _save(image: Image.Image, fmt: str, **options: object) -> bytes:
    buf = io.BytesIO()
    image.save(buf, fmt, **options)
    return buf.getvalue()


def jpeg_bytes(width: int = 64, height: int = 48, *, seed: int = 0, **options: object) -> bytes:
    """A real JPEG of a gradient with noise (``options`` go to Pillow: quality, progressive, ...)."""
    return _save(Image.fromarray(_pixels(width, height, seed)), "JPEG", **{"quality": 90, **options})


def bomb_jpeg(width: int = BOMB_SIDE, height: int = BOMB_SIDE, *, junk_before_sof: bool = False) -> bytes:
    """A few-hundred-byte JPEG whose SOF0 frame header declares ``width`` x ``height``.

    With ``junk_before_sof`` one stray byte sits before the SOF0 marker: libjpeg skips it with a
    warning and decodes, while a strict hand parser of the marker chain stops there, so a guard that
    parses the header itself instead of asking the decoder misses the size.
    """
    data = bytearray(jpeg_bytes(16, 16, quality=50))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    if junk_before_sof:
        data[sof:sof] = b"\x00"
    return bytes(data)


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def bomb_png(width: int = BOMB_SIDE, height: int = BOMB_SIDE) -> bytes:
    """A PNG whose IHDR claims ``width`` x ``height`` RGB, with a tiny IDAT and an IEND."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", ihdr)
        + _png_chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + _png_chunk(b"IEND", b"")
    )


def pillow_reference(data: bytes) -> np.ndarray:
    """The reference decode: Pillow's first frame as RGB; 16-bit grey keeps its high byte."""
    with Image.open(io.BytesIO(data)) as im:
        if im.mode.startswith("I;16"):
            return np.repeat((np.asarray(im, dtype=np.uint16) >> 8).astype(np.uint8)[..., None], 3, axis=2)
        return np.asarray(im.convert("RGB"))


def _animated(fmt: str) -> bytes:
    frames = [Image.fromarray(_pixels(20, 12, seed)) for seed in range(3)]
    if fmt == "GIF":
        frames = [f.convert("P") for f in frames]
    return _save(frames[0], fmt, save_all=True, append_images=frames[1:], duration=50, loop=0)


def build_image_corpus(folder: pathlib.Path, seed: int = 0) -> list[CorpusEntry]:
    """Write the corpus into ``folder`` and return what ``Decode`` must give for each file."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    base = jpeg_bytes(64, 48, seed=seed)
    sos = base.index(b"\xff\xda")
    gray16 = Image.fromarray(_pixels(24, 16, seed)[..., 0].astype(np.uint16) * 257 + 3)
    rgb16 = _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 3, 2, 16, 2, 0, 0, 0))
    rgb16_rows = b"".join(b"\x00" + bytes(rng.randrange(256) for _ in range(3 * 6)) for _ in range(2))
    rgb16 = b"\x89PNG\r\n\x1a\n" + rgb16 + _png_chunk(b"IDAT", zlib.compress(rgb16_rows)) + _png_chunk(b"IEND", b"")
    good = {
        "rgb.jpg": base,
        "gray.jpg": _save(Image.fromarray(_pixels(33, 17, seed)[..., 1]), "JPEG", quality=85),
        "progressive.jpg": jpeg_bytes(41, 29, seed=seed, progressive=True),
        "one_pixel.jpg": jpeg_bytes(1, 1, seed=seed),
        "one_pixel.png": _save(Image.fromarray(_pixels(1, 1, seed)), "PNG"),
        "gray.png": _save(Image.fromarray(_pixels(9, 7, seed)[..., 2]), "PNG"),
        "rgba.png": _save(Image.fromarray(np.dstack([_pixels(8, 8, seed), _pixels(8, 8, seed + 1)[..., :1]])), "PNG"),
        "gray16.png": _save(gray16, "PNG"),
        "rgb16.png": rgb16,
        "animated.gif": _animated("GIF"),
        "animated.png": _animated("PNG"),
        "png_named.jpg": _save(Image.fromarray(_pixels(10, 6, seed)), "PNG"),  # wrong extension
        "jpeg_named.png": jpeg_bytes(12, 8, seed=seed),
        "bmp.bmp": _save(Image.fromarray(_pixels(7, 5, seed)), "BMP"),
    }
    broken = {
        "empty.jpg": (b"", "zero bytes"),
        "random.jpg": (bytes(rng.randrange(256) for _ in range(512)), "random bytes"),
        "soi_only.jpg": (base[:2], "truncated after SOI"),
        "header_cut.jpg": (base[:40], "truncated inside the header"),
        "after_sos.jpg": (base[: sos + 20], "truncated just after the scan starts"),
        "half.jpg": (base[: len(base) // 2], "truncated half way"),
        "no_eoi.jpg": (base[:-2], "missing only its EOI marker"),
        "half.png": (good["gray.png"][: len(good["gray.png"]) // 2], "PNG truncated half way"),
        "bomb.jpg": (bomb_jpeg(), "JPEG bomb"),
        "bomb_junk.jpg": (bomb_jpeg(junk_before_sof=True), "JPEG bomb with junk before SOF0"),
        "bomb_progressive.jpg": (_bomb_progressive(), "progressive JPEG bomb with junk before SOF2"),
        "bomb.png": (bomb_png(), "PNG bomb"),
    }
    entries = []
    for name, data in good.items():
        (folder / name).write_bytes(data)
        entries.append(CorpusEntry(folder / name, "pixels", pillow_reference(data)))
    cmyk = _save(Image.fromarray(_pixels(10, 8, seed)).convert("CMYK"), "JPEG", quality=90)
    (folder / "cmyk.jpg").write_bytes(cmyk)
    entries.append(CorpusEntry(folder / "cmyk.jpg", "shape", np.zeros((8, 10, 3), np.uint8), "CMYK"))
    for name, (data, why) in broken.items():
        (folder / name).write_bytes(data)
        entries.append(CorpusEntry(folder / name, "error", None, why))
    return entries


def _bomb_progressive() -> bytes:
    data = bytearray(jpeg_bytes(16, 16, quality=50, progressive=True))
    sof = data.index(b"\xff\xc2")
    data[sof + 5 : sof + 9] = struct.pack(">HH", BOMB_SIDE, BOMB_SIDE)
    data[sof:sof] = b"\x00"
    return bytes(data)


def mutate(rng: random.Random, data: bytes, max_edits: int = 4) -> bytes:
    """A few random edits of ``data``: flip, overwrite with an edge value, insert, delete or cut."""
    out = bytearray(data)
    for _ in range(rng.randint(1, max_edits)):
        if not out:
            out.append(rng.randrange(256))
            continue
        kind = rng.randrange(5)
        at = rng.randrange(len(out))
        if kind == 0:
            out[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            out[at] = rng.choice((0x00, 0x7F, 0x80, 0xFF))
        elif kind == 2:
            out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif kind == 3:
            del out[at : at + rng.randint(1, 8)]
        else:
            del out[at:]
    return bytes(out)


# ---------------------------------------------------------------------------------------------- TFRecord


def varint(n: int) -> bytes:
    """Protobuf's base-128 varint (negative ints as 64-bit two's complement, 10 bytes)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if not n:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def proto_field(number: int, wire: int, payload: bytes) -> bytes:
    """One protobuf field: key, then (for wire type 2) the length, then the payload."""
    key = varint((number << 3) | wire)
    return key + (varint(len(payload)) + payload if wire == 2 else payload)


def tf_feature(kind: str, values: list, packed: bool = True) -> bytes:
    """A ``tf.train.Feature``: ``kind`` is "bytes", "float" or "int64"."""
    if kind == "bytes":
        return proto_field(1, 2, b"".join(proto_field(1, 2, v) for v in values))
    if kind == "float":
        if packed:
            body = proto_field(1, 2, b"".join(struct.pack("<f", v) for v in values))
        else:
            body = b"".join(proto_field(1, 5, struct.pack("<f", v)) for v in values)
        return proto_field(2, 2, body)
    if packed:
        body = proto_field(1, 2, b"".join(varint(v) for v in values))
    else:
        body = b"".join(proto_field(1, 0, varint(v)) for v in values)
    return proto_field(3, 2, body)


def tf_example(features: dict[str, bytes]) -> bytes:
    """A ``tf.train.Example`` of ``name -> tf_feature(...)``."""
    entries = b"".join(
        proto_field(1, 2, proto_field(1, 2, name.encode()) + proto_field(2, 2, value)) for name, value in features.items()
    )
    return proto_field(1, 2, entries)


def tfrecord_bytes(records: list[bytes]) -> bytes:
    """TFRecord framing: length, masked CRC of the length, data, masked CRC of the data."""
    from minddata.dataset._crc32c import masked_crc

    out = bytearray()
    for data in records:
        length = struct.pack("<Q", len(data))
        out += length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))
    return bytes(out)


def csv_text(rows: list[list[object]], header: list[str] | None = None) -> str:
    """A small CSV file's text (no quoting needed for the values the fuzzer starts from)."""
    lines = [",".join(header)] if header else []
    lines += [",".join(str(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"
