# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""JPEG decoding over libjpeg-turbo: header only, reduced-size (DCT-scaled) and cropped decodes.

Import it through :mod:`minddata.ops.cpu.jpeg`, which documents the API, knows whether this
extension was built and falls back to OpenCV when it was not.

Design notes
------------
* All libjpeg work runs in small C functions (the verbatim block below) called ``with nogil``. Each
  of them arms its own ``setjmp``; the error manager's ``error_exit`` formats libjpeg's message and
  ``longjmp``s back there, so a libjpeg error never calls ``exit()`` and never unwinds through
  Cython code. The decompressor and its row buffer live in one ``mdj_ctx`` that ``mdj_close`` frees
  on every path.
* Warnings: libjpeg reports most damage as a warning and carries on (it pads a truncated file with
  a fake EOI). A premature end of data is an error here, because the padded rows would silently be
  grey: the file ends (``JWRN_JPEG_EOF``), or the end-of-image marker comes before the scan's data
  does (``JWRN_HIT_MARKER`` at EOI, "premature end of data segment": e.g. a frame header that claims
  more rows than the scan holds; a stray marker inside the scan is corruption, tolerated). Other corrupt-data warnings are tolerated like Pillow and OpenCV do, unless
  ``strict=True``.
* Crop: ``jpeg_crop_scanline`` (columns, the offset moved left to an iMCU boundary by libjpeg),
  ``jpeg_skip_scanlines`` (rows above), then only the needed rows are read and the decompressor is
  aborted (nothing below the crop is decoded; for a progressive file the whole file is entropy-decoded
  by ``jpeg_start_decompress`` anyway, but IDCT, upsampling and colour conversion are still limited to
  the crop). libjpeg's fancy (smooth) chroma upsampling treats the left/right edge of a cropped row as
  an image edge, so an edge pixel can differ from a full decode; ``decode`` therefore widens the
  decoded columns by one pixel on each side (when the image has one there) and drops them after.
  libjpeg-turbo also switches to box upsampling when a cropped component is under 3 samples wide,
  so a narrow crop is widened to at least 3 * max_h_samp_factor pixels. Together these make crops
  bit-exact with a full decode at the same scale (see tests/ops/test_jpeg.py).
"""

from libc.stddef cimport ptrdiff_t

import numpy as np

cdef extern from *:
    """
    #include <setjmp.h>
    #include <stddef.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <jpeglib.h>
    #include <jerror.h>

    #ifndef LIBJPEG_TURBO_VERSION
    #error "minddata.ops.cpu._jpeg needs libjpeg-turbo >= 1.5 (jpeg_crop_scanline, jpeg_skip_scanlines)"
    #endif

    #define MDJ_STR2(x) #x
    #define MDJ_STR(x) MDJ_STR2(x)
    #define MDJ_LIBJPEG_VERSION "libjpeg-turbo " MDJ_STR(LIBJPEG_TURBO_VERSION) \
        " (libjpeg API " MDJ_STR(JPEG_LIB_VERSION) ")"
    #ifdef LIBJPEG_TURBO_VERSION_NUMBER
    #define MDJ_TURBO_NUMBER LIBJPEG_TURBO_VERSION_NUMBER
    #else
    #define MDJ_TURBO_NUMBER 0
    #endif

    #define MDJ_MSG_LEN (JMSG_LENGTH_MAX + 96)
    #define MDJ_MAX_ROWS 16

    typedef struct {
        struct jpeg_error_mgr pub;          /* first: libjpeg sees only this part */
        jmp_buf jump;
        int strict;
        int n_warnings;
        char message[MDJ_MSG_LEN];          /* the error, once a call returned -1 */
        char first_warning[JMSG_LENGTH_MAX];
    } mdj_error_mgr;

    typedef struct {
        struct jpeg_decompress_struct cinfo;
        mdj_error_mgr err;
        int created;
        unsigned char *rowbuf;
    } mdj_ctx;

    static void mdj_error_exit(j_common_ptr cinfo) {
        mdj_error_mgr *err = (mdj_error_mgr *)cinfo->err;
        (*cinfo->err->format_message)(cinfo, err->message);
        longjmp(err->jump, 1);
    }

    static void mdj_emit_message(j_common_ptr cinfo, int msg_level) {
        mdj_error_mgr *err = (mdj_error_mgr *)cinfo->err;
        char text[JMSG_LENGTH_MAX];
        if (msg_level >= 0) return;         /* trace messages */
        err->pub.num_warnings++;
        (*cinfo->err->format_message)(cinfo, text);
        if (err->n_warnings++ == 0) memcpy(err->first_warning, text, sizeof text);
        if (err->pub.msg_code == JWRN_JPEG_EOF ||
            (err->pub.msg_code == JWRN_HIT_MARKER && cinfo->is_decompressor &&
             ((j_decompress_ptr)cinfo)->unread_marker == 0xD9)) {
            snprintf(err->message, MDJ_MSG_LEN,
                     "%s: the data ends before the image does (truncated file?)", text);
            longjmp(err->jump, 1);
        }
        if (err->strict) {
            snprintf(err->message, MDJ_MSG_LEN, "%s (strict=True makes libjpeg warnings errors)", text);
            longjmp(err->jump, 1);
        }
    }

    static void mdj_output_message(j_common_ptr cinfo) { (void)cinfo; }

    static const char *mdj_message(mdj_ctx *ctx) { return ctx->err.message; }

    /* Create the decompressor over data[0:size] and read the header. 0 on success, -1 on error. */
    static int mdj_open(mdj_ctx *ctx, const unsigned char *data, size_t size, int strict) {
        memset(ctx, 0, sizeof *ctx);
        ctx->cinfo.err = jpeg_std_error(&ctx->err.pub);
        ctx->err.pub.error_exit = mdj_error_exit;
        ctx->err.pub.emit_message = mdj_emit_message;
        ctx->err.pub.output_message = mdj_output_message;
        ctx->err.strict = strict;
        if (setjmp(ctx->err.jump)) return -1;
        ctx->created = 1;                   /* jpeg_destroy copes with a half-made object */
        jpeg_create_decompress(&ctx->cinfo);
        jpeg_mem_src(&ctx->cinfo, data, (unsigned long)size);
        if (jpeg_read_header(&ctx->cinfo, TRUE) != JPEG_HEADER_OK) {
            snprintf(ctx->err.message, MDJ_MSG_LEN, "the datastream holds tables but no image");
            return -1;
        }
        return 0;
    }

    static void mdj_header(mdj_ctx *ctx, int *height, int *width, int *components, int *progressive,
                           int *color_space) {
        *height = (int)ctx->cinfo.image_height;
        *width = (int)ctx->cinfo.image_width;
        *components = ctx->cinfo.num_components;
        *progressive = ctx->cinfo.progressive_mode ? 1 : 0;
        switch (ctx->cinfo.jpeg_color_space) {
            case JCS_GRAYSCALE: *color_space = 1; break;
            case JCS_YCbCr: *color_space = 3; break;
            case JCS_RGB: *color_space = 2; break;
            case JCS_CMYK: *color_space = 4; break;
            case JCS_YCCK: *color_space = 5; break;
            default: *color_space = 0;
        }
    }

    /* Whether the entropy coding is Huffman: then every 8x8 block (or, lossless, every sample) of the
       fullest component costs at least one bit, which bounds the bytes a whole frame needs. */
    static int mdj_huffman(mdj_ctx *ctx) {
        return ctx->cinfo.arith_code ? 0 : 1;
    }

    /* RGB output at 1/scale_denom; the output size libjpeg will produce. */
    static int mdj_prepare(mdj_ctx *ctx, int scale_denom, int *out_height, int *out_width) {
        j_decompress_ptr cinfo = &ctx->cinfo;
        if (setjmp(ctx->err.jump)) return -1;
        cinfo->scale_num = 1;
        cinfo->scale_denom = (unsigned int)scale_denom;
        cinfo->out_color_space = JCS_RGB;
        cinfo->dct_method = JDCT_ISLOW;
        cinfo->do_fancy_upsampling = TRUE;
        cinfo->quantize_colors = FALSE;
        jpeg_calc_output_dimensions(cinfo);
        if (cinfo->out_color_components != 3) {
            snprintf(ctx->err.message, MDJ_MSG_LEN, "libjpeg gives %d output components, not RGB",
                     cinfo->out_color_components);
            return -1;
        }
        *out_height = (int)cinfo->output_height;
        *out_width = (int)cinfo->output_width;
        return 0;
    }

    /* Decode output rows [top, top+height) and columns [left, left+width) (output pixels, i.e. at
       the chosen scale) into out (row r at out + r*row_stride, 3 bytes per pixel). margin: how many
       extra columns to decode on each side of the crop (where the image has them) so that the kept
       pixels see their real chroma neighbours; 0 gives a bare jpeg_crop_scanline. in_place: out's
       rows hold the whole output width and every decoded pixel lands at its own column (the crop's
       pixels at columns [left, left+width)), read straight from libjpeg, with no row copied. */
    static int mdj_decode(mdj_ctx *ctx, unsigned int top, unsigned int left, unsigned int height,
                          unsigned int width, unsigned int margin, unsigned char *out,
                          ptrdiff_t row_stride, int in_place) {
        j_decompress_ptr cinfo = &ctx->cinfo;
        JSAMPROW rows[MDJ_MAX_ROWS];
        JDIMENSION x0, x1, xoffset, xwidth, skip_cols, done, n, want, i, full_width, min_width;
        int direct;
        if (setjmp(ctx->err.jump)) return -1;
        jpeg_start_decompress(cinfo);
        full_width = cinfo->output_width;
        if (top + height > cinfo->output_height || left + width > full_width) {
            snprintf(ctx->err.message, MDJ_MSG_LEN, "crop outside the %ux%u output",
                     (unsigned)full_width, (unsigned)cinfo->output_height);
            return -1;
        }
        x0 = left > margin ? left - margin : 0;
        x1 = left + width + margin < full_width ? left + width + margin : full_width;
        /* libjpeg-turbo falls back from fancy to box upsampling for a component whose cropped
           width is under 3 samples (jdsample.c, jpeg_crop_scanline's reinit_upsampler): decode at
           least 3 samples of every component, i.e. 3 * max_h_samp_factor pixels. */
        min_width = margin ? 3 * (JDIMENSION)cinfo->max_h_samp_factor : 0;
        if (x1 - x0 < min_width) {
            x1 = x0 + min_width < full_width ? x0 + min_width : full_width;
            if (x1 - x0 < min_width) x0 = x1 > min_width ? x1 - min_width : 0;
        }
        xoffset = x0;
        xwidth = x1 - x0;
        if (xoffset > 0 || xwidth < full_width)
            jpeg_crop_scanline(cinfo, &xoffset, &xwidth);   /* xoffset moves left to an iMCU edge */
        skip_cols = left - xoffset;
        if (top > 0) jpeg_skip_scanlines(cinfo, top);
        if (in_place) out += (size_t)xoffset * 3;   /* the decoded columns start at xoffset */
        direct = in_place || (skip_cols == 0 && cinfo->output_width == width);
        if (!direct) {
            ctx->rowbuf = (unsigned char *)malloc((size_t)cinfo->output_width * 3);
            if (ctx->rowbuf == NULL) {
                snprintf(ctx->err.message, MDJ_MSG_LEN, "out of memory for a row buffer");
                return -1;
            }
        }
        for (done = 0; done < height; done += n) {
            if (direct) {
                want = height - done < MDJ_MAX_ROWS ? height - done : MDJ_MAX_ROWS;
                for (i = 0; i < want; i++) rows[i] = out + (ptrdiff_t)(done + i) * row_stride;
                n = jpeg_read_scanlines(cinfo, rows, want);
            } else {
                rows[0] = ctx->rowbuf;
                n = jpeg_read_scanlines(cinfo, rows, 1);
                if (n == 1)
                    memcpy(out + (ptrdiff_t)done * row_stride, ctx->rowbuf + (size_t)skip_cols * 3,
                           (size_t)width * 3);
            }
            if (n == 0) {
                snprintf(ctx->err.message, MDJ_MSG_LEN, "libjpeg returned no rows at output row %u",
                         (unsigned)(top + done));
                return -1;
            }
        }
        jpeg_abort_decompress(cinfo);       /* stop here: rows below the crop are never decoded */
        return 0;
    }

    static void mdj_close(mdj_ctx *ctx) {
        if (ctx->created) jpeg_destroy_decompress(&ctx->cinfo);
        ctx->created = 0;
        free(ctx->rowbuf);
        ctx->rowbuf = NULL;
    }
    """
    ctypedef struct mdj_ctx:
        pass
    const char *MDJ_LIBJPEG_VERSION
    int MDJ_TURBO_NUMBER
    const char *mdj_message(mdj_ctx *ctx) nogil
    int mdj_open(mdj_ctx *ctx, const unsigned char *data, size_t size, int strict) nogil
    void mdj_header(mdj_ctx *ctx, int *height, int *width, int *components, int *progressive,
                    int *color_space) nogil
    int mdj_huffman(mdj_ctx *ctx) nogil
    int mdj_prepare(mdj_ctx *ctx, int scale_denom, int *out_height, int *out_width) nogil
    int mdj_decode(mdj_ctx *ctx, unsigned int top, unsigned int left, unsigned int height,
                   unsigned int width, unsigned int margin, unsigned char *out,
                   ptrdiff_t row_stride, int in_place) nogil
    void mdj_close(mdj_ctx *ctx) nogil


LIBJPEG_VERSION = MDJ_LIBJPEG_VERSION.decode("ascii")
"""The libjpeg-turbo this extension was compiled against, e.g. ``'libjpeg-turbo 2.1.5 (libjpeg API 62)'``."""
LIBJPEG_TURBO_VERSION_NUMBER = MDJ_TURBO_NUMBER
"""The same as a number, e.g. ``2001005``."""

SCALES = (1, 2, 4, 8)

# jpeg_color_space as mdj_header reports it
_CS_NAMES = {0: "an unknown colour space", 1: "grayscale", 2: "RGB", 3: "YCbCr", 4: "CMYK", 5: "YCCK"}


cdef const unsigned char[::1] _buffer(data) except *:
    if isinstance(data, np.ndarray):
        if data.ndim != 1 or data.dtype.itemsize != 1 or data.dtype.kind not in "uiS":
            raise TypeError(
                "JPEG decode: expected encoded bytes (bytes or a 1-D uint8 array). "
                f"Found an array of shape {data.shape}, dtype {data.dtype}"
            )
        if data.dtype != np.uint8:
            data = data.view(np.uint8)
        if not data.flags.c_contiguous:
            data = np.ascontiguousarray(data)
    try:
        return data
    except (TypeError, ValueError, BufferError):
        raise TypeError(
            "JPEG decode: expected encoded bytes (bytes or a 1-D uint8 array). "
            f"Found: {type(data).__name__}"
        ) from None


cdef str _first_bytes(const unsigned char[::1] buf):
    cdef Py_ssize_t n = min(buf.shape[0], 8)
    return " ".join([f"{buf[i]:02x}" for i in range(n)])


cdef int _open(mdj_ctx *ctx, const unsigned char[::1] buf, int strict) except -1:
    """Read the header into ctx; on failure close ctx and raise ValueError."""
    cdef size_t size = buf.shape[0]
    cdef const unsigned char *ptr
    cdef int rc
    if size == 0:
        raise ValueError("JPEG decode: the input is empty (0 bytes)")
    if size < 2 or buf[0] != 0xFF or buf[1] != 0xD8:
        raise ValueError(
            f"JPEG decode: not a JPEG (no SOI marker ff d8 at the start; first bytes "
            f"{_first_bytes(buf)}, {size} bytes)"
        )
    ptr = &buf[0]
    with nogil:
        rc = mdj_open(ctx, ptr, size, strict)
    if rc != 0:
        msg = mdj_message(ctx).decode("utf-8", "replace")
        mdj_close(ctx)
        raise ValueError(f"JPEG decode: corrupt or unsupported JPEG header: {msg} ({size} bytes)")
    return 0


def read_header(data):
    """``(height, width, components, progressive)`` of a JPEG, from its header only.

    ``data``: ``bytes``-like or a 1-D ``uint8`` array. Raises ``ValueError`` naming the problem when
    the data is not a JPEG or its header is damaged or truncated.
    """
    cdef const unsigned char[::1] buf = _buffer(data)
    cdef mdj_ctx ctx
    cdef int h = 0, w = 0, c = 0, prog = 0, cs = 0
    _open(&ctx, buf, 0)
    mdj_header(&ctx, &h, &w, &c, &prog, &cs)
    mdj_close(&ctx)
    return h, w, c, bool(prog)


cdef inline Py_ssize_t _ceil_div(Py_ssize_t a, Py_ssize_t b):
    return -((-a) // b)


cpdef tuple scaled_crop_box(Py_ssize_t top, Py_ssize_t left, Py_ssize_t height, Py_ssize_t width,
                            Py_ssize_t scale_denom, Py_ssize_t image_h, Py_ssize_t image_w):
    """The crop box ``(top, left, height, width)`` in the 1/``scale_denom`` image; see
    :func:`minddata.ops.cpu.jpeg.scaled_crop_box` (the same rule, tested equal)."""
    if scale_denom not in SCALES:
        raise ValueError(f"JPEG decode: scale_denom must be one of {SCALES}. Found {scale_denom}")
    if image_h < 1 or image_w < 1:
        raise ValueError(f"JPEG decode: image size must be positive. Found {image_h}x{image_w} (HxW)")
    if top < 0 or left < 0 or height < 1 or width < 1 or top + height > image_h or left + width > image_w:
        raise ValueError(
            f"JPEG decode: crop (top={top}, left={left}, height={height}, width={width}) must be a "
            f"non-empty region inside the {image_h}x{image_w} (HxW) image"
        )
    cdef Py_ssize_t s = scale_denom
    cdef Py_ssize_t t = top // s
    cdef Py_ssize_t l = left // s
    return t, l, _ceil_div(top + height, s) - t, _ceil_div(left + width, s) - l


cdef _check_scan_can_fill(mdj_ctx *ctx, int h, int w, Py_ssize_t size):
    """Refuse, before the output is allocated, data too short for the frame its header claims:
    libjpeg would only warn at the end of the data and pad the rest of a (say) 13000x13000 image
    with grey. Never refuses a valid file (see ``minddata.ops.cpu.jpeg.scan_shortfall``)."""
    cdef long long blocks = ((h + 7) // 8) * <long long>((w + 7) // 8)
    if mdj_huffman(ctx) and size * 8 < blocks:
        raise ValueError(
            f"JPEG decode: a {h}x{w} frame needs at least {(blocks + 7) // 8} bytes of Huffman-coded "
            f"data: the data ends before the image does (truncated file?)"
        )


def decode(data, int scale_denom=1, crop=None, out=None, *, bint strict=False, check_size=None,
           bint contiguous=True, int _margin=1):
    """Decode a JPEG to an RGB ``uint8`` ``(H, W, 3)`` array, optionally reduced and cropped.

    ``contiguous=False`` (with a crop and no ``out``): the result may be a view of the crop's rows
    decoded at their full width (the same pixels, each row contiguous; libjpeg writes them in place
    instead of each row being copied out of a row buffer).

    ``check_size``: called as ``check_size(width, height)`` with the size libjpeg's own
    ``jpeg_read_header`` found, before anything is allocated or decoded; it raises to refuse the
    image (the decompression-bomb guard reads the size from the decoder that decodes).
    See :func:`minddata.ops.cpu.jpeg.decode` for the full contract. ``_margin`` (private, for the
    tests that measure libjpeg's own crop-edge behaviour): extra columns decoded on each side of a
    crop; 0 reproduces a bare ``jpeg_crop_scanline``.
    """
    cdef const unsigned char[::1] buf = _buffer(data)
    cdef mdj_ctx ctx
    cdef int h = 0, w = 0, c = 0, prog = 0, cs = 0, oh = 0, ow = 0, rc
    cdef int in_place = 0
    cdef Py_ssize_t top_s = 0, left_s = 0, h_s, w_s
    cdef unsigned char[:, :, :] dst
    cdef unsigned char *dst_ptr
    cdef ptrdiff_t row_stride
    if scale_denom not in SCALES:
        raise ValueError(f"JPEG decode: scale_denom must be one of {SCALES}. Found {scale_denom}")
    if _margin < 0:
        raise ValueError("JPEG decode: _margin must be >= 0")
    _open(&ctx, buf, strict)
    try:
        mdj_header(&ctx, &h, &w, &c, &prog, &cs)
        if check_size is not None:
            check_size(w, h)
        _check_scan_can_fill(&ctx, h, w, buf.shape[0])
        if cs in (4, 5):
            raise ValueError(
                f"JPEG decode: {_CS_NAMES[cs]} JPEG ({c} components): CMYK/YCCK is not decoded by "
                "this fast path; decode it with OpenCV or Pillow"
            )
        if cs == 0:
            raise ValueError(
                f"JPEG decode: unsupported JPEG colour space ({c} components, not grayscale, YCbCr "
                "or RGB)"
            )
        with nogil:
            rc = mdj_prepare(&ctx, scale_denom, &oh, &ow)
        if rc != 0:
            raise ValueError(f"JPEG decode: {mdj_message(&ctx).decode('utf-8', 'replace')}")
        if crop is None:
            h_s, w_s = oh, ow
        else:
            try:
                ct, cl, ch, cw = map(int, crop)
            except (TypeError, ValueError):
                raise TypeError(
                    f"JPEG decode: crop must be (top, left, height, width) integers. Found {crop!r}"
                ) from None
            top_s, left_s, h_s, w_s = scaled_crop_box(ct, cl, ch, cw, scale_denom, h, w)
            if top_s + h_s > oh or left_s + w_s > ow:  # cannot happen while libjpeg rounds up
                raise ValueError(
                    f"JPEG decode: scaled crop {(top_s, left_s, h_s, w_s)} outside the {oh}x{ow} output"
                )
        in_place = out is None and not contiguous and w_s < ow and h_s > 0
        if in_place:
            whole = np.empty((h_s, ow, 3), dtype=np.uint8)
            out = whole[:, left_s:left_s + w_s]
            dst = whole
        elif out is None:
            out = np.empty((h_s, w_s, 3), dtype=np.uint8)
            dst = out
        else:
            _check_out(out, h_s, w_s)
            dst = out
        dst_ptr = &dst[0, 0, 0]
        row_stride = dst.strides[0]
        with nogil:
            rc = mdj_decode(&ctx, <unsigned int>top_s, <unsigned int>left_s, <unsigned int>h_s,
                            <unsigned int>w_s, <unsigned int>_margin, dst_ptr, row_stride, in_place)
        if rc != 0:
            raise ValueError(
                f"JPEG decode: {mdj_message(&ctx).decode('utf-8', 'replace')} "
                f"({buf.shape[0]} bytes, {h}x{w} image)"
            )
        return out
    finally:
        with nogil:
            mdj_close(&ctx)


cdef _check_out(out, Py_ssize_t h, Py_ssize_t w):
    if not isinstance(out, np.ndarray) or out.dtype != np.uint8:
        raise TypeError(
            f"JPEG decode: out must be a uint8 numpy array. Found "
            f"{type(out).__name__}{'' if not isinstance(out, np.ndarray) else ' of dtype ' + str(out.dtype)}"
        )
    if out.shape != (h, w, 3):
        raise ValueError(f"JPEG decode: out has shape {out.shape}; this decode gives {(h, w, 3)}")
    if not out.flags.writeable:
        raise ValueError("JPEG decode: out is read-only")
    if out.strides[2] != 1 or out.strides[1] != 3:
        raise ValueError(
            "JPEG decode: out must hold each row contiguously (strides (any, 3, 1)); "
            f"found strides {out.strides}"
        )
