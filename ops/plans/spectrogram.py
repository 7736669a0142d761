"""What the spectral audio ops compute before touching samples: windows, filter banks, DCT matrices and
frame counts (torchaudio's and MindSpore's definitions). Device-free: NumPy only.

Enum arguments arrive as their string values (``"hann"``, ``"htk"``, ``"slaney"``, ``"ortho"``): the
audio enums are ``str`` enums, so either form works.

Windows, filter banks and DCT matrices depend only on an op's arguments, so they are cached and returned
read-only: a kernel builds each once per op, not once per row (copy one before changing it).
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "create_dct",
    "frame_count",
    "linear_fbanks",
    "melscale_fbanks",
    "padded_window",
    "window",
]


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


@functools.lru_cache(maxsize=64)
def window(kind: str, length: int) -> np.ndarray:
    """A periodic window of ``length`` samples (float64), as ``torch.<kind>_window(length)``; Kaiser
    with beta 12."""
    return _frozen(_window(str(getattr(kind, "value", kind)), length))


def _window(kind: str, length: int) -> np.ndarray:
    if length <= 0:
        return np.zeros(0)
    if length == 1:
        return np.ones(1)
    n = np.arange(length, dtype=np.float64)
    if kind == "hann":
        return 0.5 - 0.5 * np.cos(2 * np.pi * n / length)
    if kind == "hamming":
        return 0.54 - 0.46 * np.cos(2 * np.pi * n / length)
    if kind == "blackman":
        return 0.42 - 0.5 * np.cos(2 * np.pi * n / length) + 0.08 * np.cos(4 * np.pi * n / length)
    if kind == "bartlett":
        return 1 - np.abs(2 * n / length - 1)
    if kind == "kaiser":
        return np.kaiser(length + 1, 12.0)[:-1]
    raise ValueError(f"unknown window {kind!r}")


@functools.lru_cache(maxsize=64)
def padded_window(kind: str, win_length: int, n_fft: int) -> np.ndarray:
    """The window of ``win_length`` centred in ``n_fft`` zeros (as torch.stft pads it)."""
    w = window(kind, win_length)
    left = (n_fft - win_length) // 2
    return _frozen(np.pad(w, (left, n_fft - win_length - left)))


def frame_count(length: int | None, n_fft: int, hop_length: int, pad: int, center: bool) -> int | None:
    """How many STFT frames a waveform of ``length`` samples gives (None when unknown)."""
    if length is None:
        return None
    total = length + 2 * pad + (2 * (n_fft // 2) if center else 0)
    if total < n_fft:
        return 0
    return 1 + (total - n_fft) // hop_length


def _hz_to_mel(freq: np.ndarray | float, mel_type: str) -> np.ndarray:
    freq = np.asarray(freq, dtype=np.float64)
    if mel_type == "htk":
        return 2595.0 * np.log10(1.0 + freq / 700.0)
    f_sp = 200.0 / 3
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    mels = freq / f_sp
    return np.where(freq >= min_log_hz, min_log_mel + np.log(np.maximum(freq, 1e-30) / min_log_hz) / logstep, mels)


def _mel_to_hz(mels: np.ndarray, mel_type: str) -> np.ndarray:
    if mel_type == "htk":
        return 700.0 * (10.0 ** (mels / 2595.0) - 1.0)
    f_sp = 200.0 / 3
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    return np.where(mels >= min_log_mel, min_log_hz * np.exp(logstep * (mels - min_log_mel)), f_sp * mels)


def _triangles(all_freqs: np.ndarray, f_pts: np.ndarray) -> np.ndarray:
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        down = -slopes[:, :-2] / f_diff[:-1]
        up = slopes[:, 2:] / f_diff[1:]
    return np.nan_to_num(np.maximum(0.0, np.minimum(down, up)))


@functools.lru_cache(maxsize=64)
def melscale_fbanks(
    n_freqs: int, f_min: float, f_max: float, n_mels: int, sample_rate: int, norm: str = "none",
    mel_type: str = "htk",
) -> np.ndarray:
    """The triangular mel filter bank, shape ``(n_freqs, n_mels)``, float32 (torchaudio's
    ``melscale_fbanks``)."""
    norm, mel_type = str(getattr(norm, "value", norm)), str(getattr(mel_type, "value", mel_type))
    all_freqs = np.linspace(0, sample_rate // 2, n_freqs)
    m_pts = np.linspace(_hz_to_mel(f_min, mel_type), _hz_to_mel(f_max, mel_type), n_mels + 2)
    f_pts = _mel_to_hz(m_pts, mel_type)
    fb = _triangles(all_freqs, f_pts) + 0.0
    if norm == "slaney":
        fb *= (2.0 / (f_pts[2 : n_mels + 2] - f_pts[:n_mels]))[None, :]
    return _frozen(fb.astype(np.float32))


@functools.lru_cache(maxsize=64)
def linear_fbanks(n_freqs: int, f_min: float, f_max: float, n_filter: int, sample_rate: int) -> np.ndarray:
    """The triangular filter bank with linearly spaced centres, shape ``(n_freqs, n_filter)``, float32."""
    all_freqs = np.linspace(0, sample_rate // 2, n_freqs)
    f_pts = np.linspace(f_min, f_max, n_filter + 2)
    return _frozen((_triangles(all_freqs, f_pts) + 0.0).astype(np.float32))


@functools.lru_cache(maxsize=64)
def create_dct(n_mfcc: int, n_mels: int, norm: str = "none") -> np.ndarray:
    """The DCT-II matrix, shape ``(n_mels, n_mfcc)``, float32; ``norm="ortho"`` makes it orthonormal."""
    norm = str(getattr(norm, "value", norm))
    n = np.arange(n_mels, dtype=np.float64)
    k = np.arange(n_mfcc, dtype=np.float64)[:, None]
    dct = np.cos(np.pi / n_mels * (n + 0.5) * k)
    if norm == "ortho":
        dct[0] *= 1.0 / np.sqrt(2.0)
        dct *= np.sqrt(2.0 / n_mels)
    else:
        dct *= 2.0
    return _frozen(dct.T.astype(np.float32))
