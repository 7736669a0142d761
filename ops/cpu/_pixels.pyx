# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""One-pass pixel kernels over uint8 images, without the GIL.

``normalize_u8`` maps each byte through a per-channel table of its 256 possible results. The table
is computed by NumPy with exactly the Normalize kernel's float32 arithmetic (``(x - mean) / std``),
so the output is bit-identical to it; the pass itself reads each pixel once and writes each float
once, in HWC or transposed to CHW.
"""

import numpy as np


def normalize_table(mean, std, channels: int):
    """(channels, 256) float32: the normalized value of every byte, per channel."""
    values = np.arange(256, dtype=np.float32)
    mean = np.asarray(mean, np.float32)
    std = np.asarray(std, np.float32)
    rows = []
    for k in range(channels):
        m = mean[k] if mean.shape[0] > 1 else mean[0]
        s = std[k] if std.shape[0] > 1 else std[0]
        row = values - m
        row /= s
        rows.append(row)
    return np.ascontiguousarray(np.stack(rows), dtype=np.float32)


def normalize_u8(const unsigned char[:, :, ::1] image, const float[:, ::1] table, out, bint chw):
    cdef Py_ssize_t h = image.shape[0], w = image.shape[1], c = image.shape[2]
    cdef Py_ssize_t y, x, k
    cdef float[:, :, ::1] dst = out
    if table.shape[0] != c or table.shape[1] != 256:
        raise ValueError(f"normalize_u8: table must have shape ({c}, 256)")
    if chw:
        if dst.shape[0] != c or dst.shape[1] != h or dst.shape[2] != w:
            raise ValueError("normalize_u8: out must have shape (C, H, W)")
        if c == 3 and w > 0:
            # Without the GIL, as the other paths: a 416x416 image takes ~0.2 ms, which the map
            # workers' threads would otherwise spend waiting to take the GIL back after their decodes.
            with nogil:
                _chw3(image, table, dst, h, w)
            return
        with nogil:
            for y in range(h):
                for x in range(w):
                    for k in range(c):
                        dst[k, y, x] = table[k, image[y, x, k]]
    else:
        if dst.shape[0] != h or dst.shape[1] != w or dst.shape[2] != c:
            raise ValueError("normalize_u8: out must have shape (H, W, C)")
        with nogil:
            for y in range(h):
                for x in range(w):
                    for k in range(c):
                        dst[y, x, k] = table[k, image[y, x, k]]


cdef void _chw3(const unsigned char[:, :, ::1] image, const float[:, ::1] table, float[:, :, ::1] dst,
                Py_ssize_t h, Py_ssize_t w) noexcept nogil:
    # Three channels (nearly every image): one contiguous output row per plane, read with plain
    # pointers, so the compiler keeps the row pointers in registers and unrolls the loop.
    cdef const float* t0 = &table[0, 0]
    cdef const float* t1 = &table[1, 0]
    cdef const float* t2 = &table[2, 0]
    cdef const unsigned char* src
    cdef float* d0
    cdef float* d1
    cdef float* d2
    cdef Py_ssize_t y, x
    for y in range(h):
        src = &image[y, 0, 0]
        d0 = &dst[0, y, 0]
        d1 = &dst[1, y, 0]
        d2 = &dst[2, y, 0]
        for x in range(w):
            d0[x] = t0[src[0]]
            d1[x] = t1[src[1]]
            d2[x] = t2[src[2]]
            src += 3
