"""The Open Inference Protocol (KServe / Triton v2) over HTTP: requests in, responses out.

Pure functions over bytes and NumPy arrays, no web framework: the app parses a request body into
images with :func:`parse_infer_request` and encodes the results with :func:`encode_infer_response`.
Both the JSON tensor form and the binary tensor data extension (a JSON header of
``Inference-Header-Content-Length`` bytes followed by the raw tensors) are supported, as
``tritonclient.http`` sends and expects them.

Examples:
    >>> import json
    >>> body = json.dumps({"inputs": [{"name": "image", "shape": [1], "datatype": "BYTES",
    ...                                "data": ["aGk="], "parameters": {"content_type": "base64"}}]})
    >>> parse_infer_request(body.encode(), None, "image").images
    [b'hi']
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import math
import struct
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "HEADER_LENGTH",
    "DeadlinePassed",
    "OUTPUT_DATATYPES",
    "InferRequest",
    "ProtocolError",
    "datatype_dtype",
    "encode_infer_response",
    "encode_infer_response_pieces",
    "header_length_value",
    "json_chars_per_element",
    "json_number_bytes",
    "json_numbers",
    "oip_datatype",
    "parse_infer_request",
    "parse_json",
    "whole_number",
]

HEADER_LENGTH = "Inference-Header-Content-Length"

# NumPy dtype → OIP datatype string (the protocol's tensor data types).
OUTPUT_DATATYPES: dict[str, str] = {
    "bool": "BOOL",
    "uint8": "UINT8",
    "uint16": "UINT16",
    "uint32": "UINT32",
    "uint64": "UINT64",
    "int8": "INT8",
    "int16": "INT16",
    "int32": "INT32",
    "int64": "INT64",
    "float16": "FP16",
    "float32": "FP32",
    "float64": "FP64",
}


class ProtocolError(ValueError):
    """A request that breaks the protocol: answered with ``status`` (400, or 413 for a request over a
    size limit) and this message."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def oip_datatype(dtype: np.dtype) -> str:
    """The OIP datatype of a NumPy dtype, e.g. ``float32`` → ``"FP32"``; anything else → ``"BYTES"``."""
    return OUTPUT_DATATYPES.get(np.dtype(dtype).name, "BYTES")


@dataclass
class InferRequest:
    """A parsed infer request: the encoded images (one per row of the input tensor), the request id,
    and which outputs to return (all when ``outputs`` is None) and how (binary or JSON)."""

    images: list[bytes]
    id: str | None = None
    outputs: list[str] | None = None
    binary_outputs: dict[str, bool] = field(default_factory=dict)
    binary_default: bool = False


# How deep a tensor's ``data`` may nest (a tensor of rank 64 is already far past any image tensor).
MAX_DATA_DEPTH = 64


def _show(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters: error messages echo what was found, not all of it."""
    try:
        text = repr(value)
    except ValueError:  # an integer too long for str()
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def whole_number(value: str | None) -> int | None:
    """A length header's value as a number, or None unless it is 1 to 18 ASCII digits (``int()``
    also takes ``+108``, ``1_08`` and surrounding spaces)."""
    if value is not None and 0 < len(value) <= 18 and value.isascii() and value.isdigit():
        return int(value)
    return None


def header_length_value(header_length: str) -> int:
    """``Inference-Header-Content-Length`` as a number: ASCII digits only (see :func:`whole_number`)."""
    size = whole_number(header_length)
    if size is None:
        raise ProtocolError(f"{HEADER_LENGTH} must be a whole number of bytes, in digits. "
                            f"Found: {_show(header_length)}")
    return size


def parse_json(data: bytes) -> Any:
    """``json.loads`` with every failure a :class:`ProtocolError`: malformed text, nesting too deep
    for the parser, an integer too long to convert."""
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"the request's JSON is malformed: {exc}") from None
    except RecursionError:
        raise ProtocolError("the request's JSON is nested too deeply") from None
    except ValueError:  # an integer of over 4300 digits
        raise ProtocolError("the request's JSON holds an integer too long to read") from None


def _split_binary(body: bytes, header_length: str | None) -> tuple[dict, bytes]:
    if header_length is None:
        size = len(body)
    else:
        size = header_length_value(header_length)
        if not 0 <= size <= len(body):
            raise ProtocolError(
                f"{HEADER_LENGTH} must be between 0 and the body size ({len(body)} bytes). Found: {size}"
            )
    header = parse_json(body[:size])
    if not isinstance(header, dict):
        raise ProtocolError(f"the request must be a JSON object. Found: {type(header).__name__}")
    return header, body[size:]


def _bytes_elements(raw: bytes, count: int, name: str) -> list[bytes]:
    """BYTES tensor binary form: each element is a 4-byte little-endian length, then that many bytes."""
    out: list[bytes] = []
    pos = 0
    while pos < len(raw):
        if pos + 4 > len(raw):
            raise ProtocolError(f"input {name!r}: binary BYTES data ends inside an element's 4-byte length")
        (length,) = struct.unpack_from("<I", raw, pos)
        pos += 4
        if pos + length > len(raw):
            raise ProtocolError(
                f"input {name!r}: a binary BYTES element says {length} bytes but only {len(raw) - pos} remain"
            )
        if len(out) == count:
            raise ProtocolError(f"input {name!r}: the shape says {count} element(s) but the binary data holds more")
        out.append(bytes(raw[pos : pos + length]))
        pos += length
    if len(out) != count:
        raise ProtocolError(f"input {name!r}: the shape says {count} element(s) but the binary data holds {len(out)}")
    return out


def _json_bytes(data: Any, count: int, name: str, base64_encoded: bool) -> list[bytes]:
    flat = _flatten(data, count, name)
    out = []
    for item in flat:
        if not isinstance(item, str):
            raise ProtocolError(f"input {name!r}: BYTES data must be strings. Found: {type(item).__name__}")
        if base64_encoded:
            try:
                out.append(base64.b64decode(item, validate=True))
            except (binascii.Error, ValueError):
                raise ProtocolError(f"input {name!r}: an element is not valid base64") from None
        else:
            out.append(item.encode("utf-8"))
    return out


def _flatten(data: Any, count: int, name: str) -> list[Any]:
    """The elements of a (possibly nested) ``data`` list, in order; without recursion, so that the
    nesting's depth costs no stack (deeper than :data:`MAX_DATA_DEPTH` is refused), and stopping as
    soon as there are more than ``count``."""
    if not isinstance(data, list):
        data = [data]
    out: list[Any] = []
    stack = [iter(data)]
    while stack:
        for item in stack[-1]:
            if isinstance(item, list):
                if len(stack) >= MAX_DATA_DEPTH:
                    raise ProtocolError(f"input {name!r}: 'data' is nested more than {MAX_DATA_DEPTH} lists deep")
                stack.append(iter(item))
                break
            out.append(item)
            if len(out) > count:
                raise ProtocolError(f"input {name!r}: the shape says {count} element(s) but 'data' holds more")
        else:
            stack.pop()
    if len(out) != count:
        raise ProtocolError(f"input {name!r}: the shape says {count} element(s) but 'data' holds {len(out)}")
    return out


def _shape(spec: dict, name: str) -> list[int]:
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise ProtocolError(f"input {name!r}: 'shape' must be a list of whole numbers >= 0. Found: {_show(shape)}")
    return shape


def _check_rows(rows: int, name: str, max_images: int | None) -> None:
    if max_images is not None and rows > max_images:
        raise ProtocolError(f"input {name!r}: a request may hold at most {max_images} images (--max-queue). "
                            f"Found: {_show(rows)}", status=413)


def _uint8_images(spec: dict, raw: bytes | None, name: str, max_images: int | None) -> list[bytes]:
    """UINT8 input (as Triton's DALI backend takes encoded images): shape [n] is one image of n bytes,
    [b, n] is b images of n bytes each. Sizes are Python integers (NumPy's int64 product wraps), and
    checked against the bytes actually sent before anything is allocated."""
    shape = _shape(spec, name)
    if len(shape) not in (1, 2):
        raise ProtocolError(f"input {name!r}: a UINT8 image tensor must have shape [n] or [batch, n]. "
                            f"Found: {_show(shape)}")
    rows = 1 if len(shape) == 1 else shape[0]
    step = shape[-1]
    _check_rows(rows, name, max_images)
    if step == 0 or rows == 0:
        raise ProtocolError(f"input {name!r}: the shape {_show(shape)} holds no image bytes")
    total = math.prod(shape)
    if raw is None:
        flat = _flatten(spec.get("data"), total, name)
        if not all(type(v) is int and 0 <= v <= 255 for v in flat):
            raise ProtocolError(f"input {name!r}: 'data' must hold {total} whole numbers from 0 to 255")
        buffer = bytes(flat)
    else:
        if len(raw) != total:
            raise ProtocolError(f"input {name!r}: the shape says {_show(total)} bytes but the binary data holds "
                                f"{len(raw)}")
        buffer = raw
    return [buffer[i * step : (i + 1) * step] for i in range(rows)]


def parse_infer_request(body: bytes, header_length: str | None, input_name: str,
                        max_images: int | None = None) -> InferRequest:
    """Parse an infer request body: JSON, or JSON plus binary tensors when ``header_length`` (the
    ``Inference-Header-Content-Length`` header) is given; at most ``max_images`` images (None: no
    limit), checked on the declared shape before anything is built. The JSON header's length plus the
    binary sizes must be the body's length, as in Triton. Raises :class:`ProtocolError`."""
    header, binary = _split_binary(body, header_length)
    inputs = header.get("inputs")
    if not isinstance(inputs, list) or len(inputs) != 1 or not isinstance(inputs[0], dict):
        raise ProtocolError(f"the request must have 'inputs' with exactly one tensor, {input_name!r}")
    spec = inputs[0]
    name = spec.get("name")
    if name != input_name:
        raise ProtocolError(f"the input tensor must be named {input_name!r}. Found: {_show(name)}")
    params = spec.get("parameters") or {}
    if not isinstance(params, dict):
        raise ProtocolError(f"input {name!r}: 'parameters' must be an object")
    raw: bytes | None = None
    if "binary_data_size" in params:
        size = params["binary_data_size"]
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= len(binary):
            raise ProtocolError(
                f"input {name!r}: binary_data_size must be between 0 and the {len(binary)} bytes after the header. "
                f"Found: {_show(size)}"
            )
        raw = binary[:size]
    elif "data" not in spec:
        raise ProtocolError(f"input {name!r}: give the tensor in 'data' or as binary data (binary_data_size)")
    used = 0 if raw is None else len(raw)
    if used != len(binary):
        what = "input data" if raw is not None else "binary data (no input has binary_data_size)"
        raise ProtocolError(f"unexpected additional {what}: {len(binary) - used} byte(s) after the tensors; "
                            f"{HEADER_LENGTH} plus the binary_data_size of the inputs must be the body's length")
    datatype = spec.get("datatype")
    if datatype == "BYTES":
        shape = _shape(spec, name)
        count = math.prod(shape)  # a Python integer: no wrapping; 1 for shape []
        _check_rows(count, name, max_images)
        if raw is not None:
            images = _bytes_elements(raw, count, name)
        else:
            images = _json_bytes(spec.get("data"), count, name, params.get("content_type") == "base64")
    elif datatype == "UINT8":
        images = _uint8_images(spec, raw, name, max_images)
    else:
        raise ProtocolError(f"input {name!r}: datatype must be BYTES (encoded images) or UINT8. "
                            f"Found: {_show(datatype)}")
    if not images:
        raise ProtocolError(f"input {name!r}: the tensor holds no image")
    request = InferRequest(images=images, id=header.get("id") if isinstance(header.get("id"), str) else None)
    top = header.get("parameters") or {}
    if isinstance(top, dict):
        request.binary_default = bool(top.get("binary_data_output", False))
    outputs = header.get("outputs")
    if outputs is not None:
        if not isinstance(outputs, list) or not all(isinstance(o, dict) and isinstance(o.get("name"), str) for o in outputs):
            raise ProtocolError("'outputs' must be a list of objects with a 'name'")
        request.outputs = [o["name"] for o in outputs]
        for o in outputs:
            p = o.get("parameters") or {}
            if isinstance(p, dict) and "binary_data" in p:
                request.binary_outputs[o["name"]] = bool(p["binary_data"])
    return request


# OIP datatype → NumPy dtype: the inverse of OUTPUT_DATATYPES, looked up per request.
_DTYPE_OF_DATATYPE = {oip: np.dtype(name) for name, oip in OUTPUT_DATATYPES.items()}


class DeadlinePassed(Exception):
    """Encoding an answer went past the request's deadline."""


# Elements per slice when writing a tensor as JSON numbers: each slice is one short C call, so a
# thread that encodes a large answer lets the event loop's thread run between slices.
_JSON_SLICE = 65536


def json_numbers(array: np.ndarray, deadline: float | None = None) -> str:
    """``array``'s elements as a flat JSON list, written slice by slice; raises :class:`DeadlinePassed`
    once ``time.monotonic()`` passes ``deadline``.

    Finite float32 tensors (every normalized image) are written with as few digits as read back
    exactly as float32: the shortest such decimal, by ``orjson`` where it is installed (the ``serve``
    extra; 4 against 31 ms for a 3x224x224 tensor here), else 9 significant digits (``%.9g``), which is
    what a float32 needs, instead of the 17 of a float64's repr. Other dtypes, and tensors holding
    NaN, infinities or a negative zero, are written by ``json.dumps``.

    >>> values = np.array([0.1, -2.5, 3], np.float32)
    >>> np.array_equal(np.array(json.loads(json_numbers(values)), np.float32), values)
    True
    """
    return json_number_bytes(array, deadline).decode("ascii")


def json_number_bytes(array: np.ndarray, deadline: float | None = None) -> bytes:
    """:func:`json_numbers` as ASCII bytes, as an answer's body takes them (no text made and encoded)."""
    flat = np.ascontiguousarray(np.asarray(array).ravel())
    # "%g" writes -0.0 as "-0", which JSON reads as the integer 0: a negative zero takes json.dumps too.
    float32 = (flat.dtype == np.float32 and bool(np.isfinite(flat).all())
               and not bool((np.signbit(flat) & (flat == 0)).any()))
    shortest = _orjson_dumps() if float32 else None
    parts = []
    for start in range(0, flat.size, _JSON_SLICE):
        if deadline is not None and time.monotonic() > deadline:
            raise DeadlinePassed
        if shortest is not None:
            parts.append(shortest(flat[start : start + _JSON_SLICE])[1:-1])
            continue
        piece = flat[start : start + _JSON_SLICE].tolist()
        if float32:
            parts.append(("%.9g," * len(piece) % tuple(piece))[:-1].encode("ascii"))
        else:
            parts.append(json.dumps(piece, separators=(",", ":"))[1:-1].encode("ascii"))
    return b"[" + b",".join(parts) + b"]"


@functools.lru_cache(maxsize=1)
def _orjson_dumps() -> Any:
    """``orjson``'s writer of a 1-D NumPy array as a JSON list (bytes), or None where it is not
    installed (looked up once: every JSON answer asks)."""
    try:
        import orjson
    except ImportError:
        return None
    return functools.partial(orjson.dumps, option=orjson.OPT_SERIALIZE_NUMPY)


def json_chars_per_element(dtype: Any) -> int:
    """At most how many characters one element of ``dtype`` takes in a JSON list, comma included."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return 6
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return max(len(str(info.min)), len(str(info.max))) + 1
    return 25  # a float's repr, e.g. -1.2345678901234567e-300, and a comma


def datatype_dtype(datatype: str) -> np.dtype | None:
    """The NumPy dtype of an OIP datatype (None for BYTES)."""
    return _DTYPE_OF_DATATYPE.get(datatype)


def encode_infer_response(
    model_name: str, request: InferRequest, tensors: dict[str, np.ndarray], model_version: str = "1",
    deadline: float | None = None,
) -> tuple[bytes, int | None]:
    """The response body and, when any output is binary, the JSON header's length (for the
    ``Inference-Header-Content-Length`` response header). Raises :class:`DeadlinePassed` once
    ``time.monotonic()`` passes ``deadline`` while writing JSON numbers."""
    pieces, header_length = encode_infer_response_pieces(model_name, request, tensors, model_version, deadline)
    return b"".join(pieces), header_length


def encode_infer_response_pieces(
    model_name: str, request: InferRequest, tensors: dict[str, np.ndarray], model_version: str = "1",
    deadline: float | None = None,
) -> tuple[list[bytes | memoryview], int | None]:
    """:func:`encode_infer_response`'s body as the pieces it is sent in: the JSON header, then each
    binary output's own memory (no copy: a server writes them one after the other, where a joined
    body is a fresh answer-sized object per request)."""
    # The JSON header as a list of pieces joined once (a JSON tensor's numbers are megabytes).
    doc = [f'{{"model_name":{json.dumps(model_name)},"model_version":{json.dumps(model_version)}'.encode()]
    if request.id is not None:
        doc.append(f',"id":{json.dumps(request.id)}'.encode())
    doc.append(b',"outputs":[')
    chunks: list[bytes | memoryview] = []
    for i, (name, array) in enumerate(tensors.items()):
        array = np.ascontiguousarray(array)
        entry: dict[str, Any] = {"name": name, "datatype": oip_datatype(array.dtype), "shape": list(array.shape)}
        if i:
            doc.append(b",")
        if request.binary_outputs.get(name, request.binary_default):
            data = array.reshape(-1).data.cast("B") if array.size else b""
            entry["parameters"] = {"binary_data_size": len(data)}
            chunks.append(data)
            doc.append(json.dumps(entry, separators=(",", ":")).encode())
        else:
            doc += [json.dumps(entry, separators=(",", ":"))[:-1].encode(), b',"data":',
                    json_number_bytes(array, deadline), b"}"]
    doc.append(b"]}")
    header = b"".join(doc)
    if not chunks:
        return [header], None
    return [header, *chunks], len(header)
