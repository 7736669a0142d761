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
import json
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "HEADER_LENGTH",
    "OUTPUT_DATATYPES",
    "InferRequest",
    "ProtocolError",
    "encode_infer_response",
    "oip_datatype",
    "parse_infer_request",
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
    """A request that breaks the protocol: answered with 400 and this message."""


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


def _split_binary(body: bytes, header_length: str | None) -> tuple[dict, bytes]:
    if header_length is None:
        size = len(body)
    else:
        try:
            size = int(header_length)
        except ValueError:
            raise ProtocolError(f"{HEADER_LENGTH} must be a whole number of bytes. Found: {header_length!r}") from None
        if not 0 <= size <= len(body):
            raise ProtocolError(
                f"{HEADER_LENGTH} must be between 0 and the body size ({len(body)} bytes). Found: {size}"
            )
    try:
        header = json.loads(body[:size])
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"the request's JSON is malformed: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError(f"the request must be a JSON object. Found: {type(header).__name__}")
    return header, body[size:]


def _bytes_elements(raw: bytes, count: int, name: str) -> list[bytes]:
    """BYTES tensor binary form: each element is a 4-byte little-endian length, then that many bytes."""
    out, pos = [], 0
    while pos < len(raw):
        if pos + 4 > len(raw):
            raise ProtocolError(f"input {name!r}: binary BYTES data ends inside an element's 4-byte length")
        (length,) = struct.unpack_from("<I", raw, pos)
        pos += 4
        if pos + length > len(raw):
            raise ProtocolError(
                f"input {name!r}: a binary BYTES element says {length} bytes but only {len(raw) - pos} remain"
            )
        out.append(bytes(raw[pos : pos + length]))
        pos += length
    if len(out) != count:
        raise ProtocolError(f"input {name!r}: the shape says {count} element(s) but the binary data holds {len(out)}")
    return out


def _json_bytes(data: Any, count: int, name: str, base64_encoded: bool) -> list[bytes]:
    flat = list(_flatten(data))
    if len(flat) != count:
        raise ProtocolError(f"input {name!r}: the shape says {count} element(s) but 'data' holds {len(flat)}")
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


def _flatten(data: Any):
    if isinstance(data, list):
        for item in data:
            yield from _flatten(item)
    else:
        yield data


def _shape(spec: dict, name: str) -> list[int]:
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise ProtocolError(f"input {name!r}: 'shape' must be a list of whole numbers >= 0. Found: {shape!r}")
    return shape


def _uint8_images(spec: dict, raw: bytes | None, name: str) -> list[bytes]:
    """UINT8 input (as Triton's DALI backend takes encoded images): shape [n] is one image of n bytes,
    [b, n] is b images of n bytes each."""
    shape = _shape(spec, name)
    if len(shape) not in (1, 2):
        raise ProtocolError(f"input {name!r}: a UINT8 image tensor must have shape [n] or [batch, n]. Found: {shape}")
    total = int(np.prod(shape))
    if raw is None:
        flat = list(_flatten(spec.get("data")))
        if len(flat) != total or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in flat):
            raise ProtocolError(f"input {name!r}: 'data' must hold {total} whole numbers from 0 to 255")
        buffer = bytes(flat)
    else:
        if len(raw) != total:
            raise ProtocolError(f"input {name!r}: the shape says {total} bytes but the binary data holds {len(raw)}")
        buffer = raw
    rows = 1 if len(shape) == 1 else shape[0]
    step = shape[-1]
    return [buffer[i * step : (i + 1) * step] for i in range(rows)]


def parse_infer_request(body: bytes, header_length: str | None, input_name: str) -> InferRequest:
    """Parse an infer request body: JSON, or JSON plus binary tensors when ``header_length`` (the
    ``Inference-Header-Content-Length`` header) is given. Raises :class:`ProtocolError`."""
    header, binary = _split_binary(body, header_length)
    inputs = header.get("inputs")
    if not isinstance(inputs, list) or len(inputs) != 1 or not isinstance(inputs[0], dict):
        raise ProtocolError(f"the request must have 'inputs' with exactly one tensor, {input_name!r}")
    spec = inputs[0]
    name = spec.get("name")
    if name != input_name:
        raise ProtocolError(f"the input tensor must be named {input_name!r}. Found: {name!r}")
    params = spec.get("parameters") or {}
    if not isinstance(params, dict):
        raise ProtocolError(f"input {name!r}: 'parameters' must be an object")
    raw: bytes | None = None
    if "binary_data_size" in params:
        size = params["binary_data_size"]
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= len(binary):
            raise ProtocolError(
                f"input {name!r}: binary_data_size must be between 0 and the {len(binary)} bytes after the header. "
                f"Found: {size!r}"
            )
        raw = binary[:size]
    elif "data" not in spec:
        raise ProtocolError(f"input {name!r}: give the tensor in 'data' or as binary data (binary_data_size)")
    datatype = spec.get("datatype")
    if datatype == "BYTES":
        shape = _shape(spec, name)
        count = int(np.prod(shape)) if shape else 1
        if raw is not None:
            images = _bytes_elements(raw, count, name)
        else:
            images = _json_bytes(spec.get("data"), count, name, params.get("content_type") == "base64")
    elif datatype == "UINT8":
        images = _uint8_images(spec, raw, name)
    else:
        raise ProtocolError(f"input {name!r}: datatype must be BYTES (encoded images) or UINT8. Found: {datatype!r}")
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


def encode_infer_response(
    model_name: str, request: InferRequest, tensors: dict[str, np.ndarray], model_version: str = "1"
) -> tuple[bytes, int | None]:
    """The response body and, when any output is binary, the JSON header's length (for the
    ``Inference-Header-Content-Length`` response header)."""
    outputs, chunks = [], []
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        entry: dict[str, Any] = {"name": name, "datatype": oip_datatype(array.dtype), "shape": list(array.shape)}
        if request.binary_outputs.get(name, request.binary_default):
            data = array.tobytes()
            entry["parameters"] = {"binary_data_size": len(data)}
            chunks.append(data)
        else:
            entry["data"] = array.ravel().tolist()
        outputs.append(entry)
    doc: dict[str, Any] = {"model_name": model_name, "model_version": model_version, "outputs": outputs}
    if request.id is not None:
        doc["id"] = request.id
    header = json.dumps(doc, separators=(",", ":")).encode()
    if not chunks:
        return header, None
    return b"".join([header, *chunks]), len(header)
