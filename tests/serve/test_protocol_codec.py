"""The protocol codec against tritonclient's own encoder and decoder (no server needed)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import tritonclient.http as triton
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minddata.serve.app import npy_bytes, npz_bytes
from minddata.serve.protocol import (
    InferRequest,
    ProtocolError,
    encode_infer_response,
    encode_infer_response_pieces,
    parse_infer_request,
)


def binary_request(images: list[bytes]) -> tuple[bytes, str | None]:
    """The body tritonclient sends for these images (its own encoder), and its JSON header's length."""
    tensor = np.empty(len(images), dtype=np.object_)
    tensor[:] = images
    inp = triton.InferInput("image", [len(images)], "BYTES")
    inp.set_data_from_numpy(tensor, binary_data=True)
    body, json_size = triton.InferenceServerClient.generate_request_body([inp])
    return body, None if json_size is None else str(json_size)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(max_size=64), min_size=1, max_size=8))
def test_binary_bytes_tensor_round_trips(images):
    body, header_length = binary_request(images)
    assert parse_infer_request(body, header_length, "image").images == images


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.sampled_from(["float32", "uint8", "int64"]),
       st.booleans())
def test_tritonclient_decodes_our_responses(shape, dtype, binary):
    array = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    request = InferRequest(images=[b""], binary_default=binary)
    body, header_length = encode_infer_response("m", request, {"out": array})
    result = triton.InferResult.from_response_body(body, header_length=header_length)
    got = result.as_numpy("out")
    assert got.dtype == array.dtype
    np.testing.assert_array_equal(got, array)


def test_binary_outputs_are_sent_from_the_tensors_own_memory():
    first, second = np.arange(12, dtype=np.float32).reshape(3, 4), np.arange(5, dtype=np.uint8)
    request = InferRequest(images=[b""], binary_default=True)
    pieces, header_length = encode_infer_response_pieces("m", request, {"a": first, "b": second})
    assert header_length == len(pieces[0])
    assert np.shares_memory(np.frombuffer(pieces[1], np.float32), first)
    assert np.shares_memory(np.frombuffer(pieces[2], np.uint8), second)
    assert b"".join(pieces) == encode_infer_response("m", request, {"a": first, "b": second})[0]


@pytest.mark.parametrize("body, header_length, message", [
    (b"{", None, "malformed"),
    (b"[]", None, "must be a JSON object"),
    (b'{"inputs": []}', None, "exactly one tensor"),
    (b'{"inputs": [{"name": "image", "shape": [1], "datatype": "FP32", "data": [1]}]}', None, "BYTES"),
    (b'{"inputs": [{"name": "image", "shape": [2], "datatype": "BYTES", "data": ["a"]}]}', None, "2 element"),
    (b'{"inputs": [{"name": "image", "shape": [1], "datatype": "BYTES"}]}', None, "binary_data_size"),
    (b"{}", "99", "between 0 and the body size"),
])
def test_malformed_requests_name_the_rule(body, header_length, message):
    with pytest.raises(ProtocolError, match=message):
        parse_infer_request(body, header_length, "image")


def test_truncated_binary_element_is_reported():
    body, header_length = binary_request([b"abcdef"])
    header, raw = body[: int(header_length)], body[int(header_length) :]
    cut = header.replace(b'"binary_data_size":10', b'"binary_data_size":6')
    with pytest.raises(ProtocolError, match="says 6 bytes but only 2 remain"):
        parse_infer_request(cut + raw[:6], str(len(cut)), "image")


npy_arrays = hnp.arrays(
    dtype=st.sampled_from([np.uint8, np.int16, np.int64, np.float16, np.float32, np.float64, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6),
)


@settings(max_examples=60, deadline=None)
@given(npy_arrays, st.sampled_from(["c", "fortran", "strided"]))
def test_npy_response_loads_back_as_the_array(array, layout):
    if layout == "fortran":
        array = np.asfortranarray(array)
    elif layout == "strided" and array.ndim:
        array = array[::2]
    back = np.load(io.BytesIO(npy_bytes(array)), allow_pickle=False)
    assert back.dtype == array.dtype and back.shape == array.shape and back.tobytes() == array.tobytes()


@settings(max_examples=30, deadline=None)
@given(npy_arrays)
def test_npy_response_is_what_np_save_writes_for_a_c_ordered_array(array):
    saved = io.BytesIO()
    np.save(saved, np.require(array, requirements="C"), allow_pickle=False)
    assert npy_bytes(np.require(array, requirements="C")) == saved.getvalue()


def test_shapes_are_sized_with_python_integers_before_anything_is_built():
    # [2**62, 4] wraps to 0 in int64; rows are checked against the limit before any image is sliced.
    body = b'{"inputs": [{"name": "image", "shape": [4611686018427387904, 4], "datatype": "UINT8", "data": []}]}'
    with pytest.raises(ProtocolError, match="at most 256 images") as caught:
        parse_infer_request(body, None, "image", max_images=256)
    assert caught.value.status == 413
    # Without a row limit the declared size still has to match the data sent.
    with pytest.raises(ProtocolError, match="0 to 255|holds 0"):
        parse_infer_request(body, None, "image")


def test_json_answers_are_written_in_slices_within_the_deadline():
    import time

    from minddata.serve.protocol import DeadlinePassed, json_numbers

    array = np.arange(200_000, dtype=np.float64)
    assert json_numbers(array) == "[" + ",".join(str(float(v)) for v in array) + "]"
    with pytest.raises(DeadlinePassed):
        json_numbers(array, deadline=time.monotonic() - 1)


@pytest.mark.parametrize("writer", ["orjson", "%.9g"])
def test_float32_json_answers_read_back_exactly(writer, monkeypatch):
    import json

    from minddata.serve import protocol
    from minddata.serve.protocol import json_numbers

    if writer == "orjson":
        pytest.importorskip("orjson", reason="orjson (the serve extra's float writer) is not installed")
    else:
        monkeypatch.setattr(protocol, "_orjson_dumps", lambda: None)  # as where orjson is not installed

    info = np.finfo(np.float32)
    rng = np.random.default_rng(0)
    special = [0.0, 1.0, -1.0, info.max, -info.max, info.tiny, info.smallest_subnormal, info.eps, 1e-30, 3e38]
    array = np.concatenate([np.array(special, np.float32), rng.standard_normal(150_000).astype(np.float32) * 100,
                            rng.integers(-2**31, 2**31, 1000).view(np.float32)])
    array = array[np.isfinite(array) & ~(np.signbit(array) & (array == 0))]  # the two have tests of their own
    text = json_numbers(array)
    assert len(text) < 17 * array.size
    back = np.asarray(json.loads(text), np.float64).astype(np.float32)
    assert np.array_equal(back.view(np.uint32), array.view(np.uint32))  # bit for bit


def test_a_negative_zero_in_a_float32_json_answer_keeps_its_sign():
    import json

    from minddata.serve.protocol import json_numbers

    back = np.asarray(json.loads(json_numbers(np.array([-0.0, 2.0], np.float32))), np.float32)
    assert np.signbit(back[0]) and back[1] == 2.0


def test_float32_json_with_nan_or_infinity_keeps_pythons_json_spelling():
    from minddata.serve.protocol import json_numbers

    assert json_numbers(np.array([1.5, np.nan, np.inf], np.float32)) == "[1.5,NaN,Infinity]"


def test_npz_answers_read_back_with_numpy_whatever_the_output_names():
    tensors = {"image": np.arange(24, dtype=np.float32).reshape(2, 3, 4), "allow_pickle": np.array([7], np.int64),
               "label": np.array(3, np.int32)}
    with np.load(io.BytesIO(npz_bytes(tensors)), allow_pickle=False) as archive:
        assert sorted(archive.files) == sorted(tensors)
        for name, value in tensors.items():
            assert archive[name].dtype == value.dtype and np.array_equal(archive[name], value)
