"""DVPP's documented rules, and a CPU model of its output: the ``reference`` Dvpp driver.

A media engine is fixed-function: it takes some inputs and not others, at some sizes and not others,
and its output passes through a YUV420SP (NV12) buffer. These are the rules of Huawei's DVPP (the
Ascend 310's JPEGD decoder and VPC resizer/cropper), which MindSpore's Dvpp ops inherit:

============== ==============================================================================
JPEGD decode   JPEG only (not PNG, GIF, ...); baseline or extended sequential Huffman JPEG
               (SOF0/SOF1: not progressive, arithmetic-coded or lossless); 1 or 3 components
               (not CMYK); 32-8192 pixels per side. Output buffer: width aligned to 128,
               height to 16, YUV420SP.
VPC resize /   3-channel uint8 images; input at least 32 wide and 6 high; output 32-4096 wide
crop           and 6-4096 high; BILINEAR or NEAREST interpolation; a crop must lie inside
               the image (no padding). Output buffer: width aligned to 16, height to 2,
               YUV420SP.
Tensor ops     The pixel and warp ops MindSpore 2.x runs on Ascend with ``.device("Ascend")``
               (:data:`TENSOR_OPS`): HWC images in, HWC images out (no NV12 buffer); uint8 (and
               float32 where MindSpore allows it) with 1 or 3 channels; height 4-8192 and width
               6-4096 (Perspective: 6-8192 and 10-4096, BILINEAR or NEAREST only).
============== ==============================================================================

Every check raises :class:`DvppRuleError` (a ``ValueError``) naming the op, the rule, what this row
is, and the fix. The engine then applies ``config.set_dvpp_policy``: the row fails (``"error"``), or
that row alone runs on the CPU kernel (``"cpu"``).

The model (:func:`nv12_roundtrip`): each Dvpp op's output goes through the aligned NV12 buffer the
engine writes (the padding repeats the last row and column, chroma is the mean of each 2x2 block,
BT.601 full-range YCbCr as JPEG uses), and is converted back to RGB for the next op, chroma
interpolated bilinearly between 2x2 block centres. Geometry is the CPU kernels' (same boxes, same sizes, same resampling), so the
reference output differs from the CPU's only by what the NV12 intermediate loses: colour detail
finer than 2x2 pixels. On photographs (4:2:0 JPEGs, whose chroma is already subsampled) that is a
few levels on average (measured in tests/ops/test_dvpp.py); on synthetic pixel noise it is more.

Examples:
    >>> from minddata.ops.dvpp.rules import aligned_size
    >>> aligned_size(500, 375, "decode")
    (512, 384)
    >>> aligned_size(225, 225, "vpc")
    (240, 226)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import cv2
import numpy as np

__all__ = [
    "DECODE_LIMITS",
    "VPC_INPUT_MIN",
    "VPC_OUTPUT_LIMITS",
    "DvppRuleError",
    "aligned_size",
    "check_crop_inside",
    "check_decode",
    "check_vpc_input",
    "check_vpc_output",
    "check_tensor_op",
    "TENSOR_OPS",
    "TensorOpRule",
    "jpeg_frame",
    "nv12_roundtrip",
]

DECODE_LIMITS = (32, 8192)  # pixels per side
VPC_INPUT_MIN = (32, 6)  # (width, height)
VPC_OUTPUT_LIMITS = ((32, 4096), (6, 4096))  # (width range, height range)
ALIGNMENT = {"decode": (128, 16), "vpc": (16, 2)}  # (width, height) of the output buffer
VPC_INTERPOLATIONS = ("BILINEAR", "LINEAR", "NEAREST")

_FIX = "place it on the CPU, or minddata.config.set_dvpp_policy('cpu') to run such rows on the CPU"


class DvppRuleError(ValueError):
    """A row breaks one of DVPP's rules. ``rule`` is its short name (e.g. ``"jpeg-only"``)."""

    def __init__(self, message: str, rule: str):
        super().__init__(message)
        self.rule = rule

    def __reduce__(self) -> Any:
        return (DvppRuleError, (str(self), self.rule))


def aligned_size(width: int, height: int, stage: str) -> tuple[int, int]:
    """(width, height) of the buffer DVPP writes an image of this size into: ``"decode"`` (JPEGD,
    128x16) or ``"vpc"`` (resize/crop, 16x2)."""
    aw, ah = ALIGNMENT[stage]
    return -(-width // aw) * aw, -(-height // ah) * ah


# ---------------------------------------------------------------------------------------------- JPEG

# Start-of-frame markers and what they are; only SOF0/SOF1 (sequential Huffman) decode on JPEGD.
_SOF_KIND = {
    0xC0: "baseline", 0xC1: "extended sequential", 0xC2: "progressive", 0xC3: "lossless",
    0xC5: "differential sequential", 0xC6: "differential progressive", 0xC7: "differential lossless",
    0xC9: "arithmetic-coded sequential", 0xCA: "arithmetic-coded progressive", 0xCB: "arithmetic-coded lossless",
    0xCD: "arithmetic-coded differential sequential", 0xCE: "arithmetic-coded differential progressive",
    0xCF: "arithmetic-coded differential lossless",
}


def jpeg_frame(buf: np.ndarray) -> tuple[int, int, int, int] | None:
    """``(sof_marker, height, width, components)`` from a JPEG's frame header, or ``None``."""
    data = bytes(buf[: min(buf.size, 1 << 20)])  # the frame header sits in the first segments
    n = len(data)
    if n < 4 or data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        if marker in (0xD9, 0xDA):
            return None
        length = (data[i + 2] << 8) | data[i + 3]
        if marker in _SOF_KIND:
            if i + 10 > n:
                return None
            height = (data[i + 5] << 8) | data[i + 6]
            width = (data[i + 7] << 8) | data[i + 8]
            return marker, height, width, data[i + 9]
        i += 2 + length
    return None


def check_decode(op_name: str, buf: np.ndarray, fmt: str) -> tuple[int, int]:
    """JPEGD's rules for one encoded row; returns (height, width)."""
    if fmt != "JPEG":
        raise DvppRuleError(
            f"Dvpp {op_name} supports JPEG only; this row is {fmt if fmt != 'unknown' else 'not a JPEG'}: {_FIX}",
            "jpeg-only",
        )
    frame = jpeg_frame(buf)
    if frame is None:
        raise ValueError(f"{op_name}: the input is not a decodable image: its JPEG frame header can't be read")
    marker, height, width, components = frame
    if marker not in (0xC0, 0xC1):
        raise DvppRuleError(
            f"Dvpp {op_name} decodes baseline and extended sequential (Huffman) JPEG only; this row is a "
            f"{_SOF_KIND[marker]} JPEG: {_FIX}",
            "sequential-jpeg",
        )
    if components not in (1, 3):
        raise DvppRuleError(
            f"Dvpp {op_name} decodes grayscale and YCbCr JPEG only; this row has {components} components "
            f"(CMYK/YCCK): {_FIX}",
            "components",
        )
    low, high = DECODE_LIMITS
    if not (low <= width <= high and low <= height <= high):
        raise DvppRuleError(
            f"Dvpp {op_name} decodes images of {low}-{high} pixels per side; this row is {width}x{height} "
            f"(WxH): {_FIX}",
            "decode-size",
        )
    return height, width


# ---------------------------------------------------------------------------------------------- VPC


def check_vpc_input(op_name: str, image: Any) -> np.ndarray:
    """VPC's input rules: a 3-channel uint8 image at least 32 wide and 6 high."""
    if not isinstance(image, np.ndarray):
        if hasattr(image, "getbands") and hasattr(image, "mode"):
            image = np.array(image)
        else:
            raise TypeError(f"{op_name}: expected an image as a numpy array. Found: {type(image).__name__}")
    if image.ndim in (2, 3) and (image.shape[0] == 0 or image.shape[1] == 0):
        raise ValueError(f"{op_name}: expected a non-empty image. Found shape {image.shape}")
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise DvppRuleError(
            f"Dvpp {op_name} takes 3-channel uint8 images (RGB, converted to YUV420SP); this row is "
            f"{image.shape} {image.dtype}: {_FIX}",
            "rgb-uint8",
        )
    h, w = image.shape[:2]
    min_w, min_h = VPC_INPUT_MIN
    if w < min_w or h < min_h:
        raise DvppRuleError(
            f"Dvpp {op_name} takes images at least {min_w} wide and {min_h} high; this row is {w}x{h} (WxH): {_FIX}",
            "vpc-input-size",
        )
    return image


def check_crop_inside(op_name: str, box: tuple[int, int, int, int], height: int, width: int) -> None:
    """VPC crops inside the image only: it can't pad (CenterCrop of a smaller image pads on the CPU)."""
    top, left, ch, cw = box
    if top < 0 or left < 0 or top + ch > height or left + cw > width:
        raise DvppRuleError(
            f"Dvpp {op_name} crops inside the image only (it can't pad); the crop (top={top}, left={left}, "
            f"height={ch}, width={cw}) leaves the {height}x{width} (HxW) image: {_FIX}",
            "crop-inside",
        )


def check_vpc_output(op_name: str, height: int, width: int) -> None:
    (w_lo, w_hi), (h_lo, h_hi) = VPC_OUTPUT_LIMITS
    if not (w_lo <= width <= w_hi and h_lo <= height <= h_hi):
        raise DvppRuleError(
            f"Dvpp {op_name} outputs images {w_lo}-{w_hi} wide and {h_lo}-{h_hi} high; this row's output is "
            f"{width}x{height} (WxH): {_FIX}",
            "vpc-output-size",
        )


# ---------------------------------------------------------------------------------------------- NV12

# BT.601 full range (JFIF), the YCbCr a JPEG holds.
_TO_YUV = np.array([[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]], np.float32)
_TO_RGB = np.array([[1.0, 0.0, 1.402], [1.0, -0.344136, -0.714136], [1.0, 1.772, 0.0]], np.float32)


def nv12_roundtrip(image: np.ndarray, stage: str) -> np.ndarray:
    """``image`` (H, W, 3 uint8 RGB) through DVPP's aligned NV12 output buffer and back to RGB."""
    h, w = image.shape[:2]
    aw, ah = aligned_size(w, h, stage)
    # The buffer's padding repeats the edge: it is what the last odd row/column's chroma averages with.
    padded = np.pad(image, ((0, ah - h), (0, aw - w), (0, 0)), mode="edge").astype(np.float32)
    yuv = padded @ _TO_YUV.T
    y = np.clip(np.rint(yuv[..., 0]), 0, 255)
    chroma = yuv[..., 1:].reshape(ah // 2, 2, aw // 2, 2, 2).mean(axis=(1, 3))
    chroma = np.clip(np.rint(chroma + 128.0), 0, 255) - 128.0
    # Back to RGB with chroma interpolated between sample centres (bilinear), as libjpeg's "fancy
    # upsampling" does: the CPU path's decoder, so only what NV12 loses shows as a difference.
    full = cv2.resize(chroma.astype(np.float32), (aw, ah), interpolation=cv2.INTER_LINEAR)
    rgb = np.stack([y, full[..., 0], full[..., 1]], axis=-1) @ _TO_RGB.T
    return np.clip(np.rint(rgb[:h, :w]), 0, 255).astype(np.uint8)


# ---------------------------------------------------------------------------------------------- tensor ops


class TensorOpRule(NamedTuple):
    """What one of DVPP's tensor ops takes (MindSpore 2.x's ``device("Ascend")`` documentation)."""

    dtypes: tuple[str, ...]
    channels: tuple[int, ...]
    height: tuple[int, int]
    width: tuple[int, int]
    interpolations: tuple[str, ...] = ()  # empty: the op has no interpolation


_PIXELS = (4, 8192), (6, 4096)  # (height range, width range)
TENSOR_OPS: dict[str, TensorOpRule] = {
    "AdjustBrightness": TensorOpRule(("uint8", "float32"), (1, 3), *_PIXELS),
    "AdjustContrast": TensorOpRule(("uint8", "float32"), (3,), *_PIXELS),
    "AdjustHue": TensorOpRule(("uint8", "float32"), (3,), *_PIXELS),
    "AdjustSaturation": TensorOpRule(("uint8", "float32"), (3,), *_PIXELS),
    "AdjustSharpness": TensorOpRule(("uint8", "float32"), (1, 3), *_PIXELS),
    "AutoContrast": TensorOpRule(("uint8", "float32"), (1, 3), *_PIXELS),
    "Equalize": TensorOpRule(("uint8",), (1, 3), *_PIXELS),
    "Erase": TensorOpRule(("uint8", "float32"), (3,), *_PIXELS),
    "Posterize": TensorOpRule(("uint8",), (1, 3), *_PIXELS),
    "Solarize": TensorOpRule(("uint8", "float32"), (1, 3), *_PIXELS),
    "Perspective": TensorOpRule(("uint8", "float32"), (1, 3), (6, 8192), (10, 4096), VPC_INTERPOLATIONS),
}


def check_tensor_op(op_name: str, image: Any) -> np.ndarray:
    """The rules of DVPP's tensor op ``op_name`` (:data:`TENSOR_OPS`) for one row; returns the image."""
    rule = TENSOR_OPS[op_name]
    if not isinstance(image, np.ndarray):
        if hasattr(image, "getbands") and hasattr(image, "mode"):
            image = np.array(image)
        else:
            raise TypeError(f"{op_name}: expected an image as a numpy array. Found: {type(image).__name__}")
    if image.ndim in (2, 3) and (image.shape[0] == 0 or image.shape[1] == 0):
        raise ValueError(f"{op_name}: expected a non-empty image. Found shape {image.shape}")
    channels = 1 if image.ndim == 2 else image.shape[2] if image.ndim == 3 else None
    if channels not in rule.channels or image.dtype.name not in rule.dtypes:
        shape = " or ".join("<H, W>" if c == 1 else f"<H, W, {c}>" for c in rule.channels)
        raise DvppRuleError(
            f"Dvpp {op_name} takes {' or '.join(rule.dtypes)} images of shape {shape}"
            f"{' (or <H, W, 1>)' if 1 in rule.channels else ''}; this row is {image.shape} {image.dtype}: {_FIX}",
            "tensor-format",
        )
    h, w = image.shape[:2]
    (h_lo, h_hi), (w_lo, w_hi) = rule.height, rule.width
    if not (h_lo <= h <= h_hi and w_lo <= w <= w_hi):
        raise DvppRuleError(
            f"Dvpp {op_name} takes images {h_lo}-{h_hi} high and {w_lo}-{w_hi} wide; this row is {h}x{w} (HxW): "
            f"{_FIX}",
            "tensor-size",
        )
    return image
