"""The ``ascend`` Dvpp driver: Huawei DVPP (JPEGD + VPC) through the CANN toolkit's ``acl`` module.

Detected, never assumed: :func:`minddata.ops.probe.ascend_driver` reports it only where ``acl``
imports, and nothing here imports ``acl`` before an op runs on it. The rules a row must meet are
the reference model's (:mod:`minddata.ops.dvpp.rules`), checked on the host before the hardware is
asked, so rows fail (or fall back to the CPU) with the same messages on both drivers.

What runs on the engine: JPEGD decodes into an NV12 device buffer (width aligned to 128, height to
16); VPC's crop-and-paste crops and resizes NV12 to NV12 (width aligned to 16, height to 2, crop
edges snapped to even pixels as VPC requires); the valid region comes back to the host and is
converted to RGB there. An RGB input to a VPC op is converted to NV12 on the host first.

Status: written against pyACL's documented API (CANN 6-8) and unverified: no Ascend machine was
available to this project. CI exercises the same rules through the reference driver.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from minddata.errors import DeviceError
from minddata.ops.base import KernelContext, Op
from minddata.ops.dvpp import rules
from minddata.ops.formats import sniff_format
from minddata.ops.plans.decode import check_image_pixels, encoded_bytes
from minddata.ops.plans.resize import CROP_RESIZE_OPS, crop_resize
from minddata.ops.registry import decoder_ops

__all__ = ["run"]

_MEMCPY_HOST_TO_DEVICE = 1
_MEMCPY_DEVICE_TO_HOST = 2
_PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1  # NV12
_NPY_UINT8 = 2


def _check(ret: int, what: str) -> None:
    if ret != 0:
        raise DeviceError(f"Dvpp (ascend): {what} failed with ACL error {ret}")


class _Device:
    """One ACL context, stream and DVPP channel per process, used under a lock (one row at a time)."""

    _instance: _Device | None = None
    _create_lock = threading.Lock()

    def __init__(self, device_id: int = 0):
        import acl

        self.acl = acl
        self.lock = threading.Lock()
        _check(acl.init(), "acl.init")
        _check(acl.rt.set_device(device_id), f"acl.rt.set_device({device_id})")
        self.context, ret = acl.rt.create_context(device_id)
        _check(ret, "acl.rt.create_context")
        self.stream, ret = acl.rt.create_stream()
        _check(ret, "acl.rt.create_stream")
        self.channel = acl.media.dvpp_create_channel_desc()
        _check(acl.media.dvpp_create_channel(self.channel), "dvpp_create_channel")

    @classmethod
    def get(cls) -> _Device:
        with cls._create_lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    # -- buffers ---------------------------------------------------------------------------------

    def upload(self, data: np.ndarray) -> tuple[int, int]:
        acl = self.acl
        size = int(data.nbytes)
        ptr, ret = acl.media.dvpp_malloc(size)
        _check(ret, "dvpp_malloc")
        host = np.ascontiguousarray(data)
        _check(acl.rt.memcpy(ptr, size, acl.util.numpy_to_ptr(host), size, _MEMCPY_HOST_TO_DEVICE), "memcpy to device")
        return ptr, size

    def download(self, ptr: int, size: int) -> np.ndarray:
        acl = self.acl
        out = np.empty(size, np.uint8)
        _check(acl.rt.memcpy(acl.util.numpy_to_ptr(out), size, ptr, size, _MEMCPY_DEVICE_TO_HOST), "memcpy to host")
        return out

    def picture(self, width: int, height: int, stage: str) -> tuple[Any, int, int, int, int]:
        """A device NV12 picture of ``width`` x ``height`` in a buffer aligned for ``stage``."""
        acl = self.acl
        aw, ah = rules.aligned_size(width, height, stage)
        size = aw * ah * 3 // 2
        ptr, ret = acl.media.dvpp_malloc(size)
        _check(ret, "dvpp_malloc")
        desc = acl.media.dvpp_create_pic_desc()
        acl.media.dvpp_set_pic_desc_data(desc, ptr)
        acl.media.dvpp_set_pic_desc_format(desc, _PIXEL_FORMAT_YUV_SEMIPLANAR_420)
        acl.media.dvpp_set_pic_desc_width(desc, width)
        acl.media.dvpp_set_pic_desc_height(desc, height)
        acl.media.dvpp_set_pic_desc_width_stride(desc, aw)
        acl.media.dvpp_set_pic_desc_height_stride(desc, ah)
        acl.media.dvpp_set_pic_desc_size(desc, size)
        return desc, ptr, size, aw, ah

    def free(self, desc: Any, ptr: int) -> None:
        self.acl.media.dvpp_destroy_pic_desc(desc)
        self.acl.media.dvpp_free(ptr)

    # -- operations ------------------------------------------------------------------------------

    def decode(self, buf: np.ndarray, width: int, height: int) -> tuple[Any, int, int, int, int]:
        acl = self.acl
        src, size = self.upload(buf)
        pic = self.picture(width, height, "decode")
        try:
            _check(acl.media.dvpp_jpeg_decode_async(self.channel, src, size, pic[0], self.stream), "JPEGD decode")
            _check(acl.rt.synchronize_stream(self.stream), "JPEGD synchronize")
        except BaseException:
            self.free(pic[0], pic[1])
            raise
        finally:
            acl.media.dvpp_free(src)
        return pic

    def crop_resize(self, pic: tuple, box: tuple[int, int, int, int], out_w: int, out_h: int) -> tuple:
        """VPC crop-and-paste: ``box`` (top, left, height, width) of ``pic`` resized to out_w x out_h."""
        acl = self.acl
        top, left, ch, cw = box
        # VPC's crop edges: left/top even, right/bottom odd (inclusive), i.e. even-sized boxes.
        left, top = left & ~1, top & ~1
        right, bottom = max(left + 1, (left + cw - 1) | 1), max(top + 1, (top + ch - 1) | 1)
        out = self.picture(out_w, out_h, "vpc")
        crop = acl.media.dvpp_create_roi_config(left, right, top, bottom)
        paste = acl.media.dvpp_create_roi_config(0, (out_w - 1) | 1, 0, (out_h - 1) | 1)
        try:
            _check(
                acl.media.dvpp_vpc_crop_and_paste_async(self.channel, pic[0], out[0], crop, paste, self.stream),
                "VPC crop and paste",
            )
            _check(acl.rt.synchronize_stream(self.stream), "VPC synchronize")
        except BaseException:
            self.free(out[0], out[1])
            raise
        finally:
            acl.media.dvpp_destroy_roi_config(crop)
            acl.media.dvpp_destroy_roi_config(paste)
        return out

    def to_rgb(self, pic: tuple, width: int, height: int) -> np.ndarray:
        import cv2

        desc, ptr, size, aw, ah = pic
        nv12 = self.download(ptr, size)
        # The valid region at even size (NV12's 2x2 chroma), out of the aligned planes.
        w2, h2 = width + width % 2, height + height % 2
        y = nv12[: aw * ah].reshape(ah, aw)[:h2, :w2]
        uv = nv12[aw * ah :].reshape(ah // 2, aw)[: h2 // 2, :w2]
        rgb = cv2.cvtColor(np.ascontiguousarray(np.vstack([y, uv])), cv2.COLOR_YUV2RGB_NV12)
        return np.ascontiguousarray(rgb[:height, :width])

    def upload_rgb(self, image: np.ndarray) -> tuple:
        import cv2

        h, w = image.shape[:2]
        pic = self.picture(w, h, "vpc")
        desc, ptr, size, aw, ah = pic
        padded = np.pad(image, ((0, ah - h), (0, aw - w), (0, 0)), mode="edge")
        i420 = cv2.cvtColor(padded, cv2.COLOR_RGB2YUV_I420).reshape(-1)
        y, rest = i420[: aw * ah], i420[aw * ah :]
        u, v = rest[: rest.size // 2], rest[rest.size // 2 :]
        nv12 = np.concatenate([y, np.stack([u, v], axis=1).reshape(-1)])
        acl = self.acl
        _check(acl.rt.memcpy(ptr, size, acl.util.numpy_to_ptr(nv12), size, _MEMCPY_HOST_TO_DEVICE), "memcpy to device")
        return pic


def _decoded(dev: _Device, op_name: str, data: Any, limit: int | None) -> tuple[tuple, int, int]:
    buf = np.ascontiguousarray(encoded_bytes(data, op_name))
    height, width = rules.check_decode(op_name, buf, sniff_format(buf))
    # JPEGD writes into a picture buffer of exactly this size (it fails on a stream that disagrees),
    # so this is the size to hold to the pixel limit.
    check_image_pixels(op_name, width, height, limit)
    return dev.decode(buf, width, height), height, width


def run(op: Op, ctx: KernelContext, data: Any) -> np.ndarray:
    """``op`` on one row on the Ascend DVPP (rules checked first, as the reference model checks them)."""
    dev = _Device.get()
    name = op.name
    with dev.lock:
        if name in decoder_ops():
            decode_name = "RandomCropDecodeResize" if name == "RandomCropDecodeResize" else "Decode"
            pic, h, w = _decoded(dev, decode_name, data, ctx.options.max_image_pixels)
        else:
            image = rules.check_vpc_input(name, data)
            h, w = image.shape[:2]
            pic = None
        try:
            if name == "Decode":
                return dev.to_rgb(pic, w, h)  # type: ignore[arg-type]  # a decoder op: pic was decoded above
            if name not in CROP_RESIZE_OPS:
                raise DeviceError(f"{name} has no kernel on the Dvpp driver 'ascend'")
            # The reference model's plan and checks, in its order: a row fails the same way on both drivers.
            box, out_h, out_w = crop_resize(op, h, w, ctx.rng, (h, w) if pic is not None else image.shape)
            rules.check_crop_inside(name, box, h, w)
            rules.check_vpc_output(name, out_h, out_w)
            if pic is None:
                pic = dev.upload_rgb(image)
            out = dev.crop_resize(pic, box, out_w, out_h)
            try:
                return dev.to_rgb(out, out_w, out_h)
            finally:
                dev.free(out[0], out[1])
        finally:
            if pic is not None:
                dev.free(pic[0], pic[1])
