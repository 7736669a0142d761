"""Video decoding over PyAV (FFmpeg): the DecodeVideo kernel and the work behind ``read_video``,
``read_video_timestamps`` and ``VideoDecoder``. PyAV is optional (``pip install 'minddata[video]'``);
it is imported on first use.

Frames come out RGB ``uint8`` ``<T, H, W, 3>``; audio as planar ``float32`` ``<channels, samples>``
(FFmpeg's resampler converts any sample format), empty ``<0, 0>`` for a video without sound.
"""

from __future__ import annotations

import io
import os
from fractions import Fraction
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.registry import register_kernel

__all__ = ["decode_video", "open_video", "video_frames_at", "video_metadata", "video_timestamps"]

# MindSpore's "no end": read_video's end_pts default.
NO_END = 2147483647


def _av(what: str) -> Any:
    try:
        import av
    except ImportError as e:
        raise ImportError(
            f"{what} decodes video with PyAV, which is not installed: pip install 'minddata[video]' ({e})"
        ) from None
    return av


def open_video(what: str, source: str | bytes) -> Any:
    """A PyAV container over a file path or encoded bytes; a file that is no video fails naming ``what``."""
    av = _av(what)
    try:
        return av.open(io.BytesIO(source) if isinstance(source, bytes) else os.fspath(source))
    except (av.error.FFmpegError, OSError, ValueError) as e:
        name = "the input bytes" if isinstance(source, bytes) else repr(os.fspath(source))
        raise ValueError(
            f"{what}: cannot decode {name} as a video (AVI, MP4, MOV, MKV, H264, H265, WMV, ...): {e}"
        ) from None


def _rgb(frame: Any) -> np.ndarray:
    return frame.to_ndarray(format="rgb24")


def _audio_planes(frames: list[Any]) -> np.ndarray:
    if not frames:
        return np.zeros((0, 0), np.float32)
    av = _av("audio")
    resampler = av.AudioResampler(format="fltp", layout=frames[0].layout.name, rate=frames[0].sample_rate)
    planes = [out.to_ndarray() for frame in frames for out in resampler.resample(frame)]
    planes += [out.to_ndarray() for out in resampler.resample(None)]
    return np.concatenate(planes, axis=1).astype(np.float32) if planes else np.zeros((0, 0), np.float32)


def decode_video(
    what: str, source: str | bytes, start: float = 0, end: float = NO_END, unit: str = "pts"
) -> tuple[np.ndarray, np.ndarray, dict[str, float | int]]:
    """(frames, audio, {"video_fps", "audio_fps"}) of the frames and audio whose presentation time is in
    ``[start, end]`` (in stream time-base units, or seconds with ``unit="sec"``)."""
    av = _av(what)
    with open_video(what, source) as container:
        if not container.streams.video:
            raise ValueError(f"{what}: the input has no video stream")
        video = container.streams.video[0]
        audio = container.streams.audio[0] if container.streams.audio else None
        streams = [s for s in (video, audio) if s is not None]
        frames: list[np.ndarray] = []
        sound: list[Any] = []
        try:
            for packet in container.demux(*streams):
                for frame in packet.decode():
                    if frame.pts is None:
                        continue
                    t = float(frame.pts * frame.time_base) if unit == "sec" else frame.pts
                    if unit == "pts" and packet.stream is audio:
                        # Audio pts count in the audio stream's time base: compare on the video's.
                        t = float(frame.pts * frame.time_base / video.time_base)
                    if not start <= t <= end:
                        continue
                    if packet.stream is video:
                        frames.append(_rgb(frame))
                    else:
                        sound.append(frame)
        except av.error.FFmpegError as e:
            raise ValueError(f"{what}: the video stream is corrupt: {e}") from None
        width, height = video.codec_context.width, video.codec_context.height
        meta: dict[str, float | int] = {
            "video_fps": float(video.average_rate) if video.average_rate else 0.0,
            "audio_fps": int(audio.sample_rate) if audio is not None else 0,
        }
    out = np.stack(frames) if frames else np.zeros((0, height, width, 3), np.uint8)
    return out, _audio_planes(sound), meta


def video_timestamps(what: str, path: str, unit: str = "pts") -> tuple[list[int] | list[float], float]:
    """(every video frame's presentation time, in stream units or seconds; the average frame rate)."""
    with open_video(what, path) as container:
        if not container.streams.video:
            raise ValueError(f"{what}: {path!r} has no video stream")
        video = container.streams.video[0]
        pts = sorted(p.pts for p in container.demux(video) if p.pts is not None)
        fps = float(video.average_rate) if video.average_rate else 0.0
        if unit == "sec":
            return [float(Fraction(p) * video.time_base) for p in pts], fps
        return pts, fps


def video_metadata(what: str, path: str) -> dict[str, Any]:
    """The video stream's width, height, frame count, average frame rate, duration and codec."""
    with open_video(what, path) as container:
        if not container.streams.video:
            raise ValueError(f"{what}: {path!r} has no video stream")
        video = container.streams.video[0]
        count = video.frames or sum(1 for p in container.demux(video) if p.pts is not None)
        duration = (
            float(video.duration * video.time_base)
            if video.duration
            else (float(container.duration) / 1_000_000 if container.duration else 0.0)
        )
        return {
            "width": video.codec_context.width,
            "height": video.codec_context.height,
            "num_frames": int(count),
            "average_fps": float(video.average_rate) if video.average_rate else 0.0,
            "duration_seconds": duration,
            "codec": video.codec_context.name,
        }


def video_frames_at(what: str, path: str, indices: list[int]) -> np.ndarray:
    """The frames at ``indices`` (in decoding order of presentation), as ``<len(indices), H, W, 3>``."""
    wanted = set(indices)
    found: dict[int, np.ndarray] = {}
    last = max(indices)
    with open_video(what, path) as container:
        for k, frame in enumerate(container.decode(video=0)):
            if k in wanted:
                found[k] = _rgb(frame)
            if k >= last:
                break
    missing = sorted(wanted - set(found))
    if missing:
        raise ValueError(
            f"{what}: frame index {missing[0]} is past the video's {len(found)} decodable frames"
        )
    return np.stack([found[i] for i in indices])


@register_kernel("DecodeVideo", "CPU")
def decode_video_kernel(op: KernelOp, ctx: KernelContext, data: Any) -> tuple[np.ndarray, np.ndarray]:
    arr = np.asarray(data)
    if arr.dtype.kind == "S" and arr.ndim == 0:
        raw = arr.item()
    elif arr.ndim == 1 and arr.dtype in (np.dtype(np.uint8), np.dtype(np.int8)):
        raw = arr.tobytes()
    else:
        raise TypeError(
            f"DecodeVideo: expected encoded video bytes (a 1-D uint8 array). Found shape {arr.shape}, dtype {arr.dtype}"
        )
    if not raw:
        raise ValueError("DecodeVideo: the input is empty (0 bytes)")
    frames, audio, _ = decode_video("DecodeVideo", raw)
    return frames, audio
