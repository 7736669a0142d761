"""A deterministic, ImageNet-like JPEG folder for benchmarks: ``<dir>/<class>/<n>.jpg``.

Decode cost depends on what is in the file (size, entropy, progressive or baseline, chroma
subsampling, grayscale), so a benchmark on flat-colour JPEGs flatters every pipeline. These images are
built to resemble the ImageNet validation set on those points: about 500x375 (some portrait), quality 90,
4:2:0 chroma, about 10% progressive and 10% grayscale, and content with smooth gradients, shapes, edges,
texture and sensor noise, so the files weigh 50-150 KB like photographs do.

Each image is drawn from its own RNG stream derived from (seed, index): the same parameters give
byte-identical files (with the same Pillow/libjpeg build) in any order and on any number of threads.
A marker file written last records the parameters; :func:`ensure_images` reuses a folder only when its
marker matches.

Examples:
    >>> import tempfile
    >>> from minddata.bench.images import generate, list_images
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = generate(folder, num_images=4, num_classes=2, size=(64, 48))
    ...     [p.relative_to(folder).as_posix() for p in list_images(folder)]
    ['class_00/00000.jpg', 'class_00/00001.jpg', 'class_01/00000.jpg', 'class_01/00001.jpg']
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

__all__ = [
    "GENERATOR_VERSION",
    "IMAGE_EXTENSIONS",
    "MARKER_NAME",
    "ImageSetInfo",
    "default_cache_dir",
    "ensure_images",
    "generate",
    "list_images",
]

# Bump when the drawing changes, so caches made by an older generator are not reused.
GENERATOR_VERSION = 1
MARKER_NAME = ".minddata-images.json"
# What an image folder source is expected to read; used to count and validate folders.
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp")

QUALITY = 90
PROGRESSIVE_FRACTION = 0.10
GRAYSCALE_FRACTION = 0.10
PORTRAIT_FRACTION = 0.15
# Amplitudes (in 0-255 levels) tuned so files weigh what photographs of this size do (~50-150 KB).
TEXTURE_SHADE = 0.10
TEXTURE_FINE = 22.0
NOISE_RANGE = 16


@dataclass(frozen=True)
class ImageSetInfo:
    """Parameters of a generated image folder; these are what the marker file records and matches."""

    num_images: int
    num_classes: int
    seed: int
    size: tuple[int, int]
    quality: int = QUALITY
    generator_version: int = GENERATOR_VERSION

    def to_json(self) -> dict:
        d = asdict(self)
        d["size"] = list(self.size)
        return d


def default_cache_dir() -> Path:
    """``$MINDDATA_CACHE/bench`` when ``MINDDATA_CACHE`` is set, else ``~/.cache/minddata/bench``."""
    from minddata.engine.cache_store import user_cache_folder

    return Path(user_cache_folder()) / "bench"


def list_images(data_dir: str | os.PathLike) -> list[Path]:
    """Image files in the class sub-folders of ``data_dir`` (one level deep, as an image folder
    dataset reads them), sorted. Files directly in ``data_dir`` do not count: they have no class."""
    root = Path(data_dir)
    found: list[Path] = []
    for class_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        found.extend(
            sorted(f for f in class_dir.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_EXTENSIONS)
        )
    return found


def _class_name(c: int, num_classes: int) -> str:
    return f"class_{c:0{max(2, len(str(num_classes - 1)))}d}"


def _image_rng(seed: int, index: int) -> np.random.Generator:
    # One independent stream per image: output does not depend on generation order or thread count.
    return np.random.default_rng([seed, index, GENERATOR_VERSION])


def _smooth_field(rng: np.random.Generator, h: int, w: int, cells: tuple[int, int], channels: int) -> np.ndarray:
    """Band-limited noise, planar ``(channels, h, w)``: a coarse random grid upsampled bicubically,
    roughly in [-1, 1]. Planar because NumPy broadcasts over a trailing axis of 3 very slowly."""
    ch, cw = cells
    coarse = rng.standard_normal((channels, ch, cw), dtype=np.float32)
    return np.stack([np.asarray(Image.fromarray(plane, mode="F").resize((w, h), Image.BICUBIC)) for plane in coarse])


def _palette(rng: np.random.Generator, class_index: int, num_classes: int, n: int) -> np.ndarray:
    """``n`` RGB colours around the class's hue, so classes differ the way real categories do."""
    hue = (class_index / max(1, num_classes) + rng.normal(0, 0.06, n)) % 1.0
    sat = rng.uniform(0.25, 0.85, n)
    val = rng.uniform(0.25, 0.95, n)
    # HSV -> RGB, vectorized.
    i = np.floor(hue * 6).astype(int) % 6
    f = hue * 6 - np.floor(hue * 6)
    p, q, t = val * (1 - sat), val * (1 - f * sat), val * (1 - (1 - f) * sat)
    table = np.stack(
        [np.stack(c, axis=-1) for c in ((val, t, p), (q, val, p), (p, val, t), (p, q, val), (t, p, val), (val, p, q))]
    )
    return table[i, np.arange(n)] * 255.0


def _draw_image(index: int, info: ImageSetInfo) -> tuple[str, bytes]:
    """One image: returns (relative path, JPEG bytes)."""
    rng = _image_rng(info.seed, index)
    c = index % info.num_classes
    base_w, base_h = info.size
    # Sizes vary a little around the nominal one, and some images are portrait, as in ImageNet.
    w = max(8, int(round(base_w * rng.uniform(0.88, 1.12))))
    h = max(8, int(round(base_h * rng.uniform(0.88, 1.12))))
    if rng.random() < PORTRAIT_FRACTION:
        w, h = h, w
    colours = _palette(rng, c, info.num_classes, 12)

    # Background: a linear gradient between two colours in a random direction, plus soft "lighting".
    angle = rng.uniform(0, 2 * np.pi)
    gx = (np.cos(angle) / w) * np.arange(w, dtype=np.float32)
    gy = (np.sin(angle) / h) * np.arange(h, dtype=np.float32)
    ramp = gy[:, None] + gx[None, :]
    ramp -= ramp.min()
    ramp /= max(1e-6, float(ramp.max()))
    c0, c1 = colours[0].astype(np.float32), colours[1].astype(np.float32)
    img = c0[:, None, None] + ramp[None] * (c1 - c0)[:, None, None]
    img += 28.0 * _smooth_field(rng, h, w, (3, 4), 3)

    # Objects: filled shapes with hard and blurred edges (the edges are where JPEG spends its bits).
    layer = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8).transpose(1, 2, 0).copy(), "RGB")
    for _ in range(int(rng.integers(4, 10))):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        rx, ry = rng.uniform(0.05, 0.35) * w, rng.uniform(0.05, 0.35) * h
        kind = int(rng.integers(0, 3))
        blur = float(rng.choice([0.0, 0.0, 1.0, 2.5, 6.0]))
        colour = tuple(int(v) for v in colours[2 + int(rng.integers(0, 10))])
        # Draw and blur only the shape's bounding box (plus the blur's reach): far cheaper than full frames.
        pad = int(3 * blur) + 2
        x0, y0 = max(0, int(cx - rx) - pad), max(0, int(cy - ry) - pad)
        x1, y1 = min(w, int(cx + rx) + pad + 1), min(h, int(cy + ry) + pad + 1)
        if x1 <= x0 or y1 <= y0:
            continue
        mask = Image.new("L", (x1 - x0, y1 - y0), 0)
        draw = ImageDraw.Draw(mask)
        lx, ly = cx - x0, cy - y0
        if kind == 0:
            draw.ellipse([lx - rx, ly - ry, lx + rx, ly + ry], fill=255)
        elif kind == 1:
            draw.rectangle([lx - rx, ly - ry, lx + rx, ly + ry], fill=255)
        else:
            k = int(rng.integers(3, 8))
            angles = np.sort(rng.uniform(0, 2 * np.pi, k))
            draw.polygon([(lx + rx * np.cos(a), ly + ry * np.sin(a)) for a in angles], fill=255)
        if blur:
            mask = mask.filter(ImageFilter.GaussianBlur(blur))
        layer.paste(colour, (x0, y0, x1, y1), mask)
    img = np.asarray(layer, dtype=np.float32).transpose(2, 0, 1)

    # Texture (mid frequencies, shading objects) and sensor noise (high frequencies).
    img *= 1.0 + TEXTURE_SHADE * _smooth_field(rng, h, w, (max(2, h // 24), max(2, w // 24)), 1)
    img += TEXTURE_FINE * _smooth_field(rng, h, w, (max(2, h // 3), max(2, w // 3)), 3)
    # Uniform integer noise: what matters to the encoder is its power, and it is 6x cheaper to draw
    # than Gaussian noise.
    img += rng.integers(-NOISE_RANGE, NOISE_RANGE + 1, size=(3, h, w), dtype=np.int8)
    img += 0.5
    rgb = np.clip(img, 0, 255, out=img).astype(np.uint8).transpose(1, 2, 0).copy()

    pil = Image.fromarray(rgb, "RGB")
    if rng.random() < GRAYSCALE_FRACTION:
        pil = pil.convert("L")
    progressive = bool(rng.random() < PROGRESSIVE_FRACTION)
    buf = io.BytesIO()
    # subsampling=2 is 4:2:0; optimize=False keeps libjpeg's default Huffman tables, as most cameras do.
    pil.save(buf, "JPEG", quality=info.quality, subsampling=2, progressive=progressive, optimize=False)
    n = index // info.num_classes
    return f"{_class_name(c, info.num_classes)}/{n:05d}.jpg", buf.getvalue()


def _check_params(num_images: int, num_classes: int, seed: int, size: tuple[int, int]) -> None:
    for name, value, low in (("num_images", num_images, 1), ("num_classes", num_classes, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"bench.images: {name} must be an int >= {low}. Found: {value!r}")
    if num_classes > num_images:
        raise ValueError(
            f"bench.images: num_classes ({num_classes}) must not exceed num_images ({num_images}): "
            "every class needs at least one image"
        )
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"bench.images: seed must be an int >= 0. Found: {seed!r}")
    if len(size) != 2 or not all(isinstance(s, int) and s >= 8 for s in size):
        raise ValueError(f"bench.images: size must be (width, height), ints >= 8. Found: {size!r}")


def generate(
    out_dir: str | os.PathLike,
    num_images: int = 2000,
    num_classes: int = 10,
    seed: int = 0,
    size: tuple[int, int] = (500, 375),
    threads: int | None = None,
    progress: Callable[[int], Any] | None = None,
) -> ImageSetInfo:
    """Write ``num_images`` JPEGs into ``out_dir/<class>/<n>.jpg`` and the marker file (last).

    Images are spread round-robin over ``num_classes`` classes. ``threads`` defaults to the number of
    usable cores; the files do not depend on it. ``progress(images_written)`` is called as they are.
    """
    size = tuple(size)  # type: ignore[assignment]
    _check_params(num_images, num_classes, seed, size)
    info = ImageSetInfo(num_images=num_images, num_classes=num_classes, seed=seed, size=size)
    out = Path(out_dir)
    for c in range(num_classes):
        (out / _class_name(c, num_classes)).mkdir(parents=True, exist_ok=True)

    def work(i: int) -> int:
        rel, data = _draw_image(i, info)
        (out / rel).write_bytes(data)
        return len(data)

    # NumPy and Pillow's encoder release the GIL for most of the work, so threads scale.
    total = 0
    with ThreadPoolExecutor(max_workers=threads or _usable_cores()) as pool:
        for done, nbytes in enumerate(pool.map(work, range(num_images)), start=1):
            total += nbytes
            if progress is not None:
                progress(done)
    marker = info.to_json() | {"total_bytes": total, "pillow": Image.__version__}
    (out / MARKER_NAME).write_text(json.dumps(marker, indent=1, sort_keys=True) + "\n")
    return info


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _marker_matches(folder: Path, info: ImageSetInfo) -> bool:
    try:
        marker = json.loads((folder / MARKER_NAME).read_text())
    except (OSError, ValueError):
        return False
    return all(marker.get(k) == v for k, v in info.to_json().items())


def ensure_images(
    num_images: int = 2000,
    num_classes: int = 10,
    seed: int = 0,
    size: tuple[int, int] = (500, 375),
    cache_dir: str | os.PathLike | None = None,
    progress: Callable[[int], Any] | None = None,
) -> tuple[Path, bool]:
    """The cached generated folder for these parameters, generating it first when needed.

    Returns ``(folder, generated_now)``. A folder is reused only if its marker records the same
    parameters. Generation happens in a temporary sibling folder renamed into place at the end, so an
    interrupted run never leaves a folder that looks complete, and two concurrent runs do not mix files.
    """
    size = tuple(size)  # type: ignore[assignment]
    _check_params(num_images, num_classes, seed, size)
    info = ImageSetInfo(num_images=num_images, num_classes=num_classes, seed=seed, size=size)
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = hashlib.sha1(json.dumps(info.to_json(), sort_keys=True).encode()).hexdigest()[:8]
    folder = root / f"images-{num_images}-{size[0]}x{size[1]}-c{num_classes}-s{seed}-{key}"
    if _marker_matches(folder, info):
        return folder, False
    if folder.exists():
        if not (folder / MARKER_NAME).exists():
            raise FileExistsError(
                f"bench.images: {folder} exists but was not made by this generator (no {MARKER_NAME}); "
                "remove it or set MINDDATA_CACHE to another folder"
            )
        shutil.rmtree(folder)  # ours, with stale parameters
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".tmp-", dir=root))
    try:
        generate(tmp, num_images=num_images, num_classes=num_classes, seed=seed, size=size, progress=progress)
        try:
            tmp.rename(folder)
        except OSError:
            # Another run finished the same folder first; its files are identical, keep them.
            if not _marker_matches(folder, info):
                raise
            shutil.rmtree(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder, True
