"""Effect ops, named as in ``mindspore.dataset.audio``: :class:`Dither`, :class:`Flanger`,
:class:`Phaser`.

Waveforms have shape ``<..., time>`` (:class:`Flanger`: ``<..., channel, time>``). Outputs are
float32, or float64 for float64 input. Specs only; the CPU kernels live in ``minddata.ops.cpu.effects``.
"""

from __future__ import annotations

from minddata.audio._checks import check_bool, check_enum, check_float, check_int, float_dtype, one_input
from minddata.audio.utils import DensityFunction, Interpolation, Modulation
from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec

__all__ = ["Dither", "Flanger", "Phaser"]


class _SameShape(Op):
    min_rank = 1

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs, self.min_rank, "<..., channel, time>" if self.min_rank == 2 else "<..., time>")
        return TensorSpec(tuple(spec.shape), float_dtype(spec.dtype))


class Dither(_SameShape):
    """Quantise a waveform in [-1, 1] to 16 bits with dither (torchaudio's ``dither``): the samples are
    scaled by ``2**15 - 2``, offset and rounded, then divided by ``2**15``.

    The offset is the triangular ``TPDF`` ramp (a Bartlett window over the waveform; deterministic), or
    for ``RPDF`` one sample of the waveform less 0.5, for ``GPDF`` the sum of seven samples: those
    samples are picked from the row's RNG, so a pipeline's output depends only on the seed, the epoch
    and the row. ``noise_shaping`` adds each sample's quantisation error to the next sample.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.Dither()(np.zeros(4, np.float32)).tolist()
        [0.0, 0.0, 3.0517578125e-05, 0.0]
    """

    def __init__(self, density_function: DensityFunction = DensityFunction.TPDF, noise_shaping: bool = False) -> None:
        self.density_function = check_enum(self.name, "density_function", density_function, DensityFunction)
        self.noise_shaping = check_bool(self.name, "noise_shaping", noise_shaping)

    @property
    def random(self) -> bool:  # type: ignore[override]
        return self.density_function != DensityFunction.TPDF


def _in_range(op: str, arg: str, value: object, low: float, high: float) -> float:
    return check_float(op, arg, value, low=low, high=high)


class Flanger(_SameShape):
    """A flanger effect on a waveform ``<..., channel, time>`` (torchaudio's ``flanger``, after SoX):
    the signal plus a copy delayed by a low-frequency oscillator, with feedback.

    Args:
        sample_rate: the sample rate, not 0.
        delay: the base delay in ms, in [0, 30].
        depth: the added swept delay in ms, in [0, 10].
        regen: the feedback in percent, in [-95, 95].
        width: the delayed signal's share in percent, in [0, 100].
        speed: the sweep's frequency in Hz, in [0.1, 10].
        phase: the sweep's phase shift between channels in percent, in [0, 100].
        modulation: the sweep's shape, sinusoidal or triangular.
        interpolation: the delay line's interpolation, linear or quadratic.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.Flanger(8000)(np.zeros((2, 100), np.float32)).shape
        (2, 100)
    """

    min_rank = 2

    def __init__(
        self, sample_rate: int, delay: float = 0.0, depth: float = 2.0, regen: float = 0.0, width: float = 71.0,
        speed: float = 0.5, phase: float = 25.0, modulation: Modulation = Modulation.SINUSOIDAL,
        interpolation: Interpolation = Interpolation.LINEAR,
    ) -> None:
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate)
        if self.sample_rate == 0:
            raise ArgumentError(f"{self.name}: `sample_rate` must not be 0. Found: 0")
        self.delay = _in_range(self.name, "delay", delay, 0, 30)
        self.depth = _in_range(self.name, "depth", depth, 0, 10)
        self.regen = _in_range(self.name, "regen", regen, -95, 95)
        self.width = _in_range(self.name, "width", width, 0, 100)
        self.speed = _in_range(self.name, "speed", speed, 0.1, 10)
        self.phase = _in_range(self.name, "phase", phase, 0, 100)
        self.modulation = check_enum(self.name, "modulation", modulation, Modulation)
        self.interpolation = check_enum(self.name, "interpolation", interpolation, Interpolation)


class Phaser(_SameShape):
    """A phaser effect on a waveform ``<..., time>`` (torchaudio's ``phaser``, after SoX): the signal
    plus a decaying copy through a delay swept by a low-frequency oscillator.

    Args:
        sample_rate: the sample rate.
        gain_in: the input gain, in [0, 1].
        gain_out: the output gain, in [0, 1e9].
        delay_ms: the delay in ms, in [0, 5].
        decay: the feedback's decay, in [0, 0.99].
        mod_speed: the sweep's frequency in Hz, in [0.1, 2].
        sinusoidal: a sinusoidal sweep (else triangular).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.Phaser(8000)(np.zeros(100, np.float32)).shape
        (100,)
    """

    def __init__(
        self, sample_rate: int, gain_in: float = 0.4, gain_out: float = 0.74, delay_ms: float = 3.0,
        decay: float = 0.4, mod_speed: float = 0.5, sinusoidal: bool = True,
    ) -> None:
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate)
        self.gain_in = _in_range(self.name, "gain_in", gain_in, 0, 1)
        self.gain_out = _in_range(self.name, "gain_out", gain_out, 0, 1e9)
        self.delay_ms = _in_range(self.name, "delay_ms", delay_ms, 0, 5.0)
        self.decay = _in_range(self.name, "decay", decay, 0, 0.99)
        self.mod_speed = _in_range(self.name, "mod_speed", mod_speed, 0.1, 2)
        self.sinusoidal = check_bool(self.name, "sinusoidal", sinusoidal)
