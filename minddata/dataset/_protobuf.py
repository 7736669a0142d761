"""A minimal protobuf wire-format reader for ``tf.train.Example`` (no protobuf or TensorFlow needed).

The messages (tensorflow/core/example/{example,feature}.proto)::

    message Example   { Features features = 1; }
    message Features  { map<string, Feature> feature = 1; }    // entries: key = 1, value = 2
    message Feature   { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
                                     Int64List int64_list = 3; } }
    message BytesList { repeated bytes value = 1; }
    message FloatList { repeated float value = 1 [packed = true]; }
    message Int64List { repeated int64 value = 1 [packed = true]; }

Wire format: each field is a varint key ``(field_number << 3) | wire_type`` then its value: a varint
(type 0), 8 bytes (1), a varint length and that many bytes (2), or 4 bytes (5). Repeated numbers
come packed (one length-delimited run) or unpacked (one key per value); a reader must accept both.
Unknown fields are skipped by their wire type. Int64 values are two's complement in 10-byte varints.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ProtobufError", "parse_example", "read_varint"]


class ProtobufError(ValueError):
    """The bytes are not a well-formed message; the text says where."""


def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise ProtobufError(f"varint runs past the end of its message (byte {pos})")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtobufError(f"varint longer than 10 bytes at byte {pos}")


def _skip(buf: bytes, pos: int, end: int, wire: int) -> int:
    if wire == 0:
        return read_varint(buf, pos, end)[1]
    if wire == 1:
        pos += 8
    elif wire == 2:
        length, pos = read_varint(buf, pos, end)
        pos += length
    elif wire == 5:
        pos += 4
    else:
        raise ProtobufError(f"unsupported wire type {wire} at byte {pos}")
    if pos > end:
        raise ProtobufError(f"field runs past the end of its message (byte {pos} > {end})")
    return pos


def _length_delimited(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    length, pos = read_varint(buf, pos, end)
    if pos + length > end:
        raise ProtobufError(f"a {length}-byte field at byte {pos} runs past the end of its message ({end})")
    return pos, pos + length


def _packed_varints(buf: bytes, start: int, stop: int) -> np.ndarray:
    """Decode a packed run of varints with NumPy: each value ends at a byte below 0x80."""
    data = np.frombuffer(buf, dtype=np.uint8, count=stop - start, offset=start)
    if data.size == 0:
        return np.zeros(0, np.int64)
    if data[-1] & 0x80:
        raise ProtobufError(f"packed varints at bytes {start}-{stop} end inside a varint")
    ends = np.flatnonzero(data < 0x80)
    starts = np.concatenate([[0], ends[:-1] + 1])
    if (ends - starts).max() >= 10:
        raise ProtobufError(f"varint longer than 10 bytes in packed run at bytes {start}-{stop}")
    group = np.repeat(np.arange(len(ends)), ends - starts + 1)
    shift = (np.arange(data.size) - starts[group]).astype(np.uint64) * np.uint64(7)
    parts = (data & 0x7F).astype(np.uint64) << shift
    return np.add.reduceat(parts, starts).view(np.int64)


def _parse_list(buf: bytes, start: int, stop: int, kind: str) -> Any:
    """Values of a BytesList (list of bytes), FloatList (float32 array) or Int64List (int64 array)."""
    pos = start
    items: list[Any] = []
    while pos < stop:
        key, pos = read_varint(buf, pos, stop)
        number, wire = key >> 3, key & 7
        if number != 1:
            pos = _skip(buf, pos, stop, wire)
            continue
        if kind == "bytes":
            if wire != 2:
                raise ProtobufError(f"BytesList value with wire type {wire} at byte {pos}")
            a, pos = _length_delimited(buf, pos, stop)
            items.append(buf[a:pos])
        elif kind == "float":
            if wire == 2:
                a, pos = _length_delimited(buf, pos, stop)
                if (pos - a) % 4:
                    raise ProtobufError(f"packed floats of {pos - a} bytes at byte {a} (not a multiple of 4)")
                items.append(np.frombuffer(buf, dtype="<f4", count=(pos - a) // 4, offset=a))
            elif wire == 5:
                if pos + 4 > stop:
                    raise ProtobufError(f"float runs past the end of its list at byte {pos}")
                items.append(np.frombuffer(buf, dtype="<f4", count=1, offset=pos))
                pos += 4
            else:
                raise ProtobufError(f"FloatList value with wire type {wire} at byte {pos}")
        else:
            if wire == 2:
                a, pos = _length_delimited(buf, pos, stop)
                items.append(_packed_varints(buf, a, pos))
            elif wire == 0:
                value, pos = read_varint(buf, pos, stop)
                items.append(np.asarray([value & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64).view(np.int64))
            else:
                raise ProtobufError(f"Int64List value with wire type {wire} at byte {pos}")
    if kind == "bytes":
        return items
    dtype = np.float32 if kind == "float" else np.int64
    if not items:
        return np.zeros(0, dtype)
    return items[0].astype(dtype) if len(items) == 1 else np.concatenate(items).astype(dtype)


_KINDS = {1: "bytes", 2: "float", 3: "int64"}


def _parse_feature(buf: bytes, start: int, stop: int) -> tuple[str, Any]:
    pos = start
    found: tuple[str, Any] | None = None
    while pos < stop:
        key, pos = read_varint(buf, pos, stop)
        number, wire = key >> 3, key & 7
        if number in _KINDS and wire == 2:
            a, pos = _length_delimited(buf, pos, stop)
            found = (_KINDS[number], _parse_list(buf, a, pos, _KINDS[number]))  # a later oneof member wins
        else:
            pos = _skip(buf, pos, stop, wire)
    return found if found is not None else ("empty", None)


def parse_example(buf: bytes) -> dict[str, tuple[str, Any]]:
    """``{feature name: (kind, values)}`` of a serialized ``tf.train.Example``.

    ``kind`` is ``"bytes"`` (a list of bytes), ``"float"`` (float32 array), ``"int64"`` (int64
    array) or ``"empty"`` (a Feature with no list set).

    Examples:
        >>> parse_example(bytes.fromhex("0a0f0a0d0a01781208" "1a060a0401029601"))
        {'x': ('int64', array([  1,   2, 150]))}
    """
    buf = bytes(buf)
    end = len(buf)
    features: dict[str, tuple[str, Any]] = {}
    pos = 0
    while pos < end:
        key, pos = read_varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if number != 1 or wire != 2:
            pos = _skip(buf, pos, end, wire)
            continue
        f_start, f_stop = _length_delimited(buf, pos, end)
        pos = f_stop
        q = f_start
        while q < f_stop:  # Features: repeated map entries (field 1)
            key, q = read_varint(buf, q, f_stop)
            number, wire = key >> 3, key & 7
            if number != 1 or wire != 2:
                q = _skip(buf, q, f_stop, wire)
                continue
            e_start, e_stop = _length_delimited(buf, q, f_stop)
            q = e_stop
            name = None
            value: tuple[str, Any] = ("empty", None)
            r = e_start
            while r < e_stop:
                key, r = read_varint(buf, r, e_stop)
                number, wire = key >> 3, key & 7
                if number == 1 and wire == 2:
                    a, r = _length_delimited(buf, r, e_stop)
                    try:
                        name = buf[a:r].decode("utf-8")
                    except UnicodeDecodeError:
                        raise ProtobufError(f"feature name at byte {a} is not UTF-8") from None
                elif number == 2 and wire == 2:
                    a, r = _length_delimited(buf, r, e_stop)
                    value = _parse_feature(buf, a, r)
                else:
                    r = _skip(buf, r, e_stop, wire)
            if name is None:
                raise ProtobufError(f"a feature map entry at byte {e_start} has no name")
            features[name] = value
    return features
