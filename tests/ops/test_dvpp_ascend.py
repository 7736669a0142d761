"""The ``ascend`` Dvpp driver's host side, against a stand-in for CANN's ``acl`` module.

No Ascend machine is available, so ACL itself is never exercised here. The stand-in keeps device
buffers in NumPy and does JPEGD/VPC's work with OpenCV in NV12 buffers laid out as DVPP lays them out
(aligned strides, interleaved chroma). What this checks is minddata's side: buffer sizes and strides,
NV12 packing and unpacking, crop boxes snapped to even edges, releasing every buffer, and the rules
checked before ACL is called.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types

import cv2
import numpy as np
import pytest
from testkit import jpeg_array

import minddata as md
from minddata import vision
from minddata.ops import KernelContext, get_kernel
from minddata.ops.dvpp import ascend, kernels
from minddata.ops.dvpp.rules import DvppRuleError


class _FakeAcl:
    """Just enough of pyACL: buffers are NumPy arrays behind integer "pointers"."""

    def __init__(self):
        self.buffers: dict[int, np.ndarray] = {}
        self.device: set[int] = set()  # what dvpp_malloc handed out and dvpp_free has not taken back
        self.next = 1
        self.rt = types.SimpleNamespace(
            set_device=lambda d: 0, create_context=lambda d: ("ctx", 0), create_stream=lambda: ("stream", 0),
            memcpy=self._memcpy, synchronize_stream=lambda s: 0,
        )
        self.util = types.SimpleNamespace(numpy_to_ptr=self._register)
        self.media = types.SimpleNamespace(
            dvpp_create_channel_desc=lambda: "channel", dvpp_create_channel=lambda c: 0,
            dvpp_malloc=self._malloc, dvpp_free=self._free,
            dvpp_create_pic_desc=lambda: {}, dvpp_destroy_pic_desc=lambda d: None,
            dvpp_set_pic_desc_data=lambda d, p: d.__setitem__("data", p),
            dvpp_set_pic_desc_format=lambda d, f: d.__setitem__("format", f),
            dvpp_set_pic_desc_width=lambda d, v: d.__setitem__("w", v),
            dvpp_set_pic_desc_height=lambda d, v: d.__setitem__("h", v),
            dvpp_set_pic_desc_width_stride=lambda d, v: d.__setitem__("ws", v),
            dvpp_set_pic_desc_height_stride=lambda d, v: d.__setitem__("hs", v),
            dvpp_set_pic_desc_size=lambda d, v: d.__setitem__("size", v),
            dvpp_jpeg_decode_async=self._decode, dvpp_create_roi_config=lambda left, right, top, bottom: (left, right, top, bottom),
            dvpp_destroy_roi_config=lambda c: None, dvpp_vpc_crop_and_paste_async=self._crop_and_paste,
        )

    def init(self):
        return 0

    def _register(self, array):
        ptr = self.next
        self.next += 1
        self.buffers[ptr] = array.reshape(-1).view(np.uint8)
        return ptr

    def _malloc(self, size):
        ptr = self._register(np.zeros(size, np.uint8))
        self.device.add(ptr)
        return ptr, 0

    def _free(self, ptr):
        self.device.remove(ptr)
        del self.buffers[ptr]
        return 0

    def _memcpy(self, dst, dst_size, src, src_size, kind):
        self.buffers[dst][:src_size] = self.buffers[src][:src_size]
        return 0

    def _write_nv12(self, desc, rgb):
        h, w, ws, hs = desc["h"], desc["w"], desc["ws"], desc["hs"]
        padded = np.pad(rgb, ((0, hs - h), (0, ws - w), (0, 0)), mode="edge")
        i420 = cv2.cvtColor(padded, cv2.COLOR_RGB2YUV_I420).reshape(-1)
        y, rest = i420[: ws * hs], i420[ws * hs :]
        u, v = rest[: rest.size // 2], rest[rest.size // 2 :]
        self.buffers[desc["data"]][: desc["size"]] = np.concatenate([y, np.stack([u, v], 1).reshape(-1)])

    def _read_rgb(self, desc):
        ws, hs = desc["ws"], desc["hs"]
        nv12 = self.buffers[desc["data"]][: desc["size"]].reshape(hs * 3 // 2, ws)
        return cv2.cvtColor(np.ascontiguousarray(nv12), cv2.COLOR_YUV2RGB_NV12)[: desc["h"], : desc["w"]]

    def _decode(self, channel, src, size, desc, stream):
        bgr = cv2.imdecode(self.buffers[src][:size], cv2.IMREAD_COLOR)
        self._write_nv12(desc, cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
        return 0

    def _crop_and_paste(self, channel, src_desc, dst_desc, crop, paste, stream):
        left, right, top, bottom = crop
        assert left % 2 == 0 and top % 2 == 0 and right % 2 == 1 and bottom % 2 == 1, crop  # VPC's rule
        region = self._read_rgb(src_desc)[top : bottom + 1, left : right + 1]
        out = cv2.resize(region, (dst_desc["w"], dst_desc["h"]), interpolation=cv2.INTER_LINEAR)
        self._write_nv12(dst_desc, out)
        return 0


@pytest.fixture
def fake_acl(monkeypatch):
    fake = _FakeAcl()
    module = types.ModuleType("acl")
    module.__spec__ = importlib.machinery.ModuleSpec("acl", None)
    for name in ("init", "rt", "util", "media"):
        setattr(module, name, getattr(fake, name))
    monkeypatch.setitem(sys.modules, "acl", module)
    monkeypatch.setattr(ascend._Device, "_instance", None)
    monkeypatch.setattr(kernels, "_drivers", {})
    md.config.set_dvpp_driver("ascend")
    yield fake
    assert not fake.device, "device buffers were not freed"


def _photo(h: int = 120, w: int = 161) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([(x * 255) // w, (y * 255) // h, ((x + y) * 2) % 256], -1).astype(np.uint8)


def _close(got: np.ndarray, want: np.ndarray, mean: float) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.abs(got.astype(int) - want).mean() <= mean


def test_decode_unpacks_the_aligned_nv12_buffer(fake_acl):
    data = jpeg_array(_photo(), quality=95)
    got = get_kernel("Decode", "Dvpp")(vision.Decode(), KernelContext(), data)
    _close(got, get_kernel("Decode", "CPU")(vision.Decode(), KernelContext(), data), 3.0)


def test_decode_resize_and_crops_on_the_engine(fake_acl):
    data = jpeg_array(_photo(), quality=95)
    image = get_kernel("Decode", "CPU")(vision.Decode(), KernelContext(), data)
    for op, source in ((vision.Resize((64, 96)), image), (vision.CenterCrop((60, 80)), image),
                       (vision.Crop((10, 20), (50, 64)), image)):
        got = get_kernel(op.name, "Dvpp")(op, KernelContext(), source)
        _close(got, get_kernel(op.name, "CPU")(op, KernelContext(), source), 4.0)
    op = vision.RandomCropDecodeResize((48, 64), scale=(0.5, 1.0))
    for row in range(3):
        got = get_kernel(op.name, "Dvpp")(op, KernelContext(row_index=row), data)
        assert got.shape == (48, 64, 3)


def test_rules_are_checked_before_acl_is_called(fake_acl):
    png = cv2.imencode(".png", _photo())[1].reshape(-1)
    with pytest.raises(DvppRuleError, match="supports JPEG only; this row is PNG"):
        get_kernel("Decode", "Dvpp")(vision.Decode(), KernelContext(), png)
    assert not fake_acl.device and fake_acl.next == 1  # nothing was allocated: ACL was never asked


def test_the_pixel_limit_holds_before_acl_allocates(fake_acl):
    md.config.set_max_image_pixels(161 * 120 - 1)
    with pytest.raises(ValueError, match=r"161x120 = 19320 pixels, over the limit of 19319"):
        get_kernel("Decode", "Dvpp")(vision.Decode(), KernelContext(), jpeg_array(_photo(), quality=95))
    assert not fake_acl.device and fake_acl.next == 1  # no picture buffer was allocated
