"""DecodeVideo, read_video, read_video_timestamps and VideoDecoder on real files written here with PyAV:
a lossless FFV1/PCM Matroska file (frames and sound compared exactly with what was written) and an
H.264 MP4 (frames compared with OpenCV's own FFmpeg build, within 3 grey levels on average: the two
builds convert YUV to RGB with different rounding)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import cv2
import numpy as np
import pytest

av = pytest.importorskip("av", reason="PyAV is the `video` extra (in `dev`)")

import minddata as md  # noqa: E402
from minddata import vision  # noqa: E402
from minddata.errors import ArgumentError  # noqa: E402

H, W, FPS, RATE = 24, 32, 10, 8000


def frames(n: int = 6) -> np.ndarray:
    y, x = np.mgrid[0:H, 0:W]
    return np.stack(
        [np.stack([(x * 5 + k * 20) % 256, (y * 7) % 256, np.full_like(x, k * 30)], -1) for k in range(n)]
    ).astype(np.uint8)


def sound(seconds: float = 0.6) -> np.ndarray:
    t = np.arange(int(RATE * seconds))
    return (np.sin(t * 2 * np.pi * 440 / RATE) * 12000).astype(np.int16)


def write_lossless(path: Path, images: np.ndarray, samples: np.ndarray | None) -> None:
    with av.open(str(path), mode="w", format="matroska") as out:
        video = out.add_stream("ffv1", rate=FPS)
        video.width, video.height, video.pix_fmt = W, H, "bgr0"
        audio = out.add_stream("pcm_s16le", rate=RATE, layout="mono") if samples is not None else None
        for img in images:
            out.mux(video.encode(av.VideoFrame.from_ndarray(img, format="rgb24")))
        out.mux(video.encode())
        if audio is not None:
            frame = av.AudioFrame.from_ndarray(samples[None], format="s16", layout="mono")
            frame.sample_rate = RATE
            out.mux(audio.encode(frame))
            out.mux(audio.encode())


@pytest.fixture
def lossless(tmp_path: Path) -> Path:
    path = tmp_path / "clip.mkv"
    write_lossless(path, frames(), sound())
    return path


@pytest.fixture
def h264(tmp_path: Path) -> Path:
    path = tmp_path / "clip.mp4"
    with av.open(str(path), mode="w") as out:
        video = out.add_stream("libx264", rate=FPS)
        video.width, video.height, video.pix_fmt = W, H, "yuv420p"
        for img in frames():
            out.mux(video.encode(av.VideoFrame.from_ndarray(img, format="rgb24")))
        out.mux(video.encode())
    return path


def test_read_video_gives_the_written_frames_and_sound(lossless: Path) -> None:
    video, audio, meta = vision.read_video(str(lossless))
    np.testing.assert_array_equal(video, frames())
    assert audio.dtype == np.float32 and audio.shape == (1, len(sound()))
    np.testing.assert_array_equal(audio[0], sound() / 32768.0)
    assert meta == {"video_fps": float(FPS), "audio_fps": RATE}


def test_read_video_keeps_the_frames_between_two_times(lossless: Path) -> None:
    stamps, _ = vision.read_video_timestamps(str(lossless))
    video, _, _ = vision.read_video(str(lossless), stamps[2], stamps[4])
    np.testing.assert_array_equal(video, frames()[2:5])
    video, _, _ = vision.read_video(str(lossless), Fraction(1, 10), 0.35, pts_unit="sec")
    np.testing.assert_array_equal(video, frames()[1:4])


def test_timestamps_in_seconds_follow_the_frame_rate(lossless: Path) -> None:
    stamps, fps = vision.read_video_timestamps(str(lossless), pts_unit="sec")
    assert fps == FPS
    np.testing.assert_allclose(stamps, np.arange(6) / FPS, atol=1e-3)


def test_h264_frames_match_opencv(h264: Path) -> None:
    video, audio, meta = vision.read_video(str(h264))
    capture = cv2.VideoCapture(str(h264))
    want = []
    while True:
        ok, bgr = capture.read()
        if not ok:
            break
        want.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    capture.release()
    assert video.shape == (len(want), H, W, 3) == (6, H, W, 3)
    assert np.abs(video.astype(int) - np.stack(want).astype(int)).mean() < 3.0
    assert audio.shape == (0, 0) and meta["audio_fps"] == 0


def test_decode_video_op_decodes_bytes_into_two_outputs(lossless: Path) -> None:
    video, audio = vision.DecodeVideo()(np.fromfile(lossless, np.uint8))
    np.testing.assert_array_equal(video, frames())
    assert audio.shape == (1, len(sound()))


def test_decode_video_in_a_pipeline(lossless: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.mkv"
    write_lossless(other, frames(3)[::-1], None)

    def rows():
        for path in (lossless, other):
            yield (np.fromfile(path, np.uint8),)

    ds = md.GeneratorDataset(rows, column_names=["data"], shuffle=False)
    ds = ds.map(vision.DecodeVideo(), input_columns="data", output_columns=["video", "audio"])
    got = list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert [r["video"].shape[0] for r in got] == [6, 3]
    np.testing.assert_array_equal(got[1]["video"], frames(3)[::-1])
    assert got[1]["audio"].shape == (0, 0)


def test_video_decoder_metadata_and_frames_at(lossless: Path) -> None:
    reader = vision.VideoDecoder(str(lossless))
    meta = reader.metadata
    assert (meta["width"], meta["height"], meta["num_frames"], meta["average_fps"], meta["codec"]) == (
        W,
        H,
        6,
        FPS,
        "ffv1",
    )
    np.testing.assert_array_equal(reader.get_frames_at([5, 0, 2]), frames()[[5, 0, 2]])


def test_video_decoder_rejects_indices_out_of_range(lossless: Path) -> None:
    reader = vision.VideoDecoder(str(lossless))
    with pytest.raises(
        ArgumentError, match=r"VideoDecoder.get_frames_at: indices must be in \[0, 6\). Found: 6"
    ):
        reader.get_frames_at([6])
    with pytest.raises(TypeError, match="must be a list"):
        reader.get_frames_at((1,))


def test_a_file_that_is_no_video_fails_naming_the_function(tmp_path: Path) -> None:
    (tmp_path / "x.mp4").write_bytes(b"not a video at all" * 10)
    with pytest.raises(ValueError, match="read_video: cannot decode"):
        vision.read_video(str(tmp_path / "x.mp4"))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda p: vision.read_video(p, -1), ArgumentError, r"read_video: `start_pts` must be at least 0"),
        (
            lambda p: vision.read_video(p, 5, 2),
            ArgumentError,
            r"read_video: `end_pts` must be at least `start_pts`",
        ),
        (
            lambda p: vision.read_video(p, "0"),
            TypeError,
            r"read_video: `start_pts` must be an int, a float or a Fraction",
        ),
        (lambda p: vision.read_video(p, pts_unit="ms"), ArgumentError, r"`pts_unit` must be 'pts' or 'sec'"),
        (lambda p: vision.read_video_timestamps(p, pts_unit=1), TypeError, r"`pts_unit` must be a str"),
        (lambda p: vision.read_video(p + ".missing"), FileNotFoundError, r"read_video: .* does not exist"),
        (
            lambda p: vision.VideoDecoder(p + ".missing"),
            ArgumentError,
            r"VideoDecoder: `source` .* does not exist",
        ),
        (lambda p: vision.VideoDecoder(3), TypeError, r"VideoDecoder: `source` must be a str"),
    ],
)
def test_bad_arguments_are_rejected(lossless: Path, call, error, message) -> None:  # noqa: ANN001
    with pytest.raises(error, match=message):
        call(str(lossless))
