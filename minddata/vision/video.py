"""Video decoding, named as in ``mindspore.dataset.vision`` (2.x): the :class:`DecodeVideo` op, the
:class:`VideoDecoder` reader and the :func:`read_video` / :func:`read_video_timestamps` functions.

Decoding is FFmpeg's, through PyAV, an optional dependency: ``pip install 'minddata[video]'``. Frames
come out RGB ``uint8`` ``<T, H, W, 3>``, audio planar ``float32`` ``<channels, samples>``. The work is
done in ``minddata.ops.cpu.video``.
"""

from __future__ import annotations

import os
from fractions import Fraction
from types import ModuleType
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.transforms import one_spec, spec_dtype
from minddata.vision._validators import is_int, is_real

__all__ = ["DecodeVideo", "VideoDecoder", "read_video", "read_video_timestamps"]


def _video_module() -> ModuleType:
    # Imported on first use: the kernels package loads OpenCV, PyAV and every kernel.
    from minddata.ops.cpu import video

    return video


class DecodeVideo(Op):
    """Decode encoded video bytes (AVI, MP4, MOV, MKV, H264, H265, WMV, ...) into its frames and sound.

    Two outputs: the frames, ``uint8`` ``<T, H, W, 3>`` RGB, and the audio, ``float32``
    ``<channels, samples>`` (``<0, 0>`` for a silent video): map it with two output columns.

    Examples:
        >>> import io
        >>> import av, numpy as np
        >>> from minddata import vision
        >>> buf = io.BytesIO()
        >>> with av.open(buf, mode="w", format="avi") as out:
        ...     stream = out.add_stream("mpeg4", rate=5)
        ...     stream.width, stream.height, stream.pix_fmt = 16, 16, "yuv420p"
        ...     for k in range(3):
        ...         frame = av.VideoFrame.from_ndarray(np.full((16, 16, 3), 60 * k, np.uint8), format="rgb24")
        ...         out.mux(stream.encode(frame))
        ...     out.mux(stream.encode())
        >>> frames, audio = vision.DecodeVideo()(np.frombuffer(buf.getvalue(), np.uint8))
        >>> frames.shape, audio.shape
        ((3, 16, 16, 3), (0, 0))
    """

    num_outputs = 2

    def __init__(self) -> None:
        pass

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        data = one_spec(self.name, inputs)
        dtype = spec_dtype(data)
        is_bytes = dtype is None or dtype.kind == "S" or (dtype.kind in "iu" and dtype.itemsize == 1)
        if len(data.shape) > 1 or not is_bytes:
            raise TypeError(
                f"DecodeVideo: expected encoded video bytes (a 1-D uint8 array). "
                f"Found a tensor of shape {tuple(data.shape)}, dtype {dtype}"
            )
        return TensorSpec((None, None, None, 3), np.dtype(np.uint8)), TensorSpec(
            (None, None), np.dtype(np.float32)
        )


def _filename(func: str, filename: Any) -> str:
    if not isinstance(filename, (str, os.PathLike)):
        raise TypeError(
            f"{func}: `filename` must be a str or a path. Found: {filename!r} ({type(filename).__name__})"
        )
    path = os.fspath(filename)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{func}: {path!r} does not exist or is not a regular file")
    return path


def _check_unit(func: str, pts_unit: Any) -> str:
    if not isinstance(pts_unit, str):
        raise TypeError(f"{func}: `pts_unit` must be a str. Found: {pts_unit!r} ({type(pts_unit).__name__})")
    if pts_unit not in ("pts", "sec"):
        raise ArgumentError(f"{func}: `pts_unit` must be 'pts' or 'sec'. Found: {pts_unit!r}")
    return pts_unit


def _check_time(func: str, arg: str, value: Any) -> float:
    if not (is_real(value) or isinstance(value, Fraction)):
        raise TypeError(
            f"{func}: `{arg}` must be an int, a float or a Fraction. Found: {value!r} ({type(value).__name__})"
        )
    return float(value)


def read_video(
    filename: str | os.PathLike,
    start_pts: float | Fraction | int = 0,
    end_pts: float | Fraction | int | None = None,
    pts_unit: str = "pts",
) -> tuple[np.ndarray, np.ndarray, dict[str, float | int]]:
    """Read a video file's frames, audio and frame rates between two presentation times.

    Args:
        filename: the video file (AVI, MP4, MOV, MKV, H264, H265, WMV, ...).
        start_pts: the first presentation time to keep, at least 0.
        end_pts: the last one (``None``: to the end), at least ``start_pts``.
        pts_unit: ``"pts"`` (the video stream's time-base units) or ``"sec"``.

    Returns:
        frames ``uint8`` ``<T, H, W, 3>``, audio ``float32`` ``<channels, samples>``, and
        ``{"video_fps": float, "audio_fps": int}`` (``audio_fps`` 0 for a silent video).

    Examples:
        >>> import os, tempfile
        >>> import av, numpy as np
        >>> from minddata import vision
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "v.avi")
        ...     with av.open(path, mode="w") as out:
        ...         stream = out.add_stream("mpeg4", rate=5)
        ...         stream.width, stream.height, stream.pix_fmt = 16, 16, "yuv420p"
        ...         for k in range(4):
        ...             frame = av.VideoFrame.from_ndarray(np.full((16, 16, 3), 50 * k, np.uint8), format="rgb24")
        ...             out.mux(stream.encode(frame))
        ...         out.mux(stream.encode())
        ...     frames, audio, meta = vision.read_video(path)
        >>> frames.shape, meta["video_fps"]
        ((4, 16, 16, 3), 5.0)
    """
    path = _filename("read_video", filename)
    start = _check_time("read_video", "start_pts", start_pts)
    end = _video_module().NO_END if end_pts is None else _check_time("read_video", "end_pts", end_pts)
    unit = _check_unit("read_video", pts_unit)
    if start < 0:
        raise ArgumentError(f"read_video: `start_pts` must be at least 0. Found: {start_pts}")
    if end < start:
        raise ArgumentError(
            f"read_video: `end_pts` must be at least `start_pts` ({start_pts}). Found: {end_pts}"
        )
    return _video_module().decode_video("read_video", path, start, end, unit)


def read_video_timestamps(
    filename: str | os.PathLike, pts_unit: str = "pts"
) -> tuple[list[int] | list[float], float]:
    """Every video frame's presentation time (in the stream's time-base units, or seconds with
    ``pts_unit="sec"``), and the video's average frame rate.

    Examples:
        >>> import os, tempfile
        >>> import av, numpy as np
        >>> from minddata import vision
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "v.avi")
        ...     with av.open(path, mode="w") as out:
        ...         stream = out.add_stream("mpeg4", rate=4)
        ...         stream.width, stream.height, stream.pix_fmt = 16, 16, "yuv420p"
        ...         for k in range(3):
        ...             out.mux(stream.encode(av.VideoFrame.from_ndarray(np.zeros((16, 16, 3), np.uint8), format="rgb24")))
        ...         out.mux(stream.encode())
        ...     vision.read_video_timestamps(path, "sec")
        ([0.0, 0.25, 0.5], 4.0)
    """
    path = _filename("read_video_timestamps", filename)
    return _video_module().video_timestamps(
        "read_video_timestamps", path, _check_unit("read_video_timestamps", pts_unit)
    )


class VideoDecoder:
    """A reader of one video file's stream: its :attr:`metadata` and the frames at chosen indices.

    MindSpore's VideoDecoder runs on Ascend only; this one decodes on the CPU with FFmpeg (PyAV), any
    codec FFmpeg reads.

    Args:
        source: the video file.

    Examples:
        >>> import os, tempfile
        >>> import av, numpy as np
        >>> from minddata import vision
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "v.avi")
        ...     with av.open(path, mode="w") as out:
        ...         stream = out.add_stream("mpeg4", rate=5)
        ...         stream.width, stream.height, stream.pix_fmt = 32, 16, "yuv420p"
        ...         for k in range(4):
        ...             frame = av.VideoFrame.from_ndarray(np.full((16, 32, 3), 50 * k, np.uint8), format="rgb24")
        ...             out.mux(stream.encode(frame))
        ...         out.mux(stream.encode())
        ...     reader = vision.VideoDecoder(path)
        ...     reader.metadata["num_frames"], reader.get_frames_at([3, 0]).shape
        (4, (2, 16, 32, 3))
    """

    def __init__(self, source: str) -> None:
        if not isinstance(source, (str, os.PathLike)):
            raise TypeError(
                f"VideoDecoder: `source` must be a str or a path. Found: {source!r} ({type(source).__name__})"
            )
        path = os.fspath(source)
        if not os.path.isfile(path) or not os.access(path, os.R_OK):
            raise ArgumentError(f"VideoDecoder: `source` {path!r} does not exist or cannot be read")
        self.source = path
        self._metadata = _video_module().video_metadata("VideoDecoder", path)

    @property
    def metadata(self) -> dict[str, Any]:
        """The stream's ``width``, ``height``, ``num_frames``, ``average_fps``, ``duration_seconds`` and
        ``codec``."""
        return dict(self._metadata)

    def get_frames_at(self, indices: list[int]) -> np.ndarray:
        """The frames at ``indices`` (each in ``[0, num_frames)``), as ``uint8`` ``<len(indices), H, W, 3>``."""
        if not isinstance(indices, list):
            raise TypeError(
                f"VideoDecoder.get_frames_at: `indices` must be a list. Found: {type(indices).__name__}"
            )
        count = self._metadata["num_frames"]
        for i in indices:
            if not is_int(i):
                raise TypeError(f"VideoDecoder.get_frames_at: every index must be an int. Found: {i!r}")
            if not 0 <= i < count:
                raise ArgumentError(
                    f"VideoDecoder.get_frames_at: indices must be in [0, {count}). Found: {i}"
                )
        if not indices:
            h, w = self._metadata["height"], self._metadata["width"]
            return np.zeros((0, h, w, 3), np.uint8)
        return _video_module().video_frames_at("VideoDecoder.get_frames_at", self.source, indices)

    def __repr__(self) -> str:
        return f"VideoDecoder(source={self.source!r})"
