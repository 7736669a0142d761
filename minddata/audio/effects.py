"""Effect ops, named as in ``mindspore.dataset.audio``: :class:`Dither`, :class:`Flanger`,
:class:`Phaser`, :class:`Vad`.

Waveforms have shape ``<..., time>`` (:class:`Flanger`: ``<..., channel, time>``). Outputs are
float32, or float64 for float64 input. Specs only; the CPU kernels live in ``minddata.ops.cpu.effects``.
"""

from __future__ import annotations

from minddata.audio._checks import check_bool, check_enum, check_float, check_int, float_dtype, one_input
from minddata.audio.utils import DensityFunction, Interpolation, Modulation
from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec

__all__ = ["Dither", "Flanger", "Phaser", "Vad"]


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
    def random(self) -> bool:  # type: ignore[override]  # per instance, where Op has a class attribute
        return self.density_function != DensityFunction.TPDF


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
        self.delay = check_float(self.name, "delay", delay, low=0, high=30)
        self.depth = check_float(self.name, "depth", depth, low=0, high=10)
        self.regen = check_float(self.name, "regen", regen, low=-95, high=95)
        self.width = check_float(self.name, "width", width, low=0, high=100)
        self.speed = check_float(self.name, "speed", speed, low=0.1, high=10)
        self.phase = check_float(self.name, "phase", phase, low=0, high=100)
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
        self.gain_in = check_float(self.name, "gain_in", gain_in, low=0, high=1)
        self.gain_out = check_float(self.name, "gain_out", gain_out, low=0, high=1e9)
        self.delay_ms = check_float(self.name, "delay_ms", delay_ms, low=0, high=5.0)
        self.decay = check_float(self.name, "decay", decay, low=0, high=0.99)
        self.mod_speed = check_float(self.name, "mod_speed", mod_speed, low=0.1, high=2)
        self.sinusoidal = check_bool(self.name, "sinusoidal", sinusoidal)


class Vad(Op):
    """Trim the silence before the first speech of a waveform ``<..., time>`` (SoX's ``vad``, as
    torchaudio's ``vad``): every ``1 / measure_freq`` s a cepstral power measure of the last
    ``measure_duration`` s (after a noise estimate); once its smoothed level reaches ``trigger_level``
    the waveform is cut ``search_time`` (with gaps up to ``allowed_gap``) plus ``pre_trigger_time`` s
    before the trigger point (or kept from the start when the trigger comes sooner, as SoX does;
    torchaudio's slice would count that start from the end). Channels trigger together. Without a
    trigger the output is the last ``pre_trigger_time + search_time + measure_duration`` s, as in
    torchaudio and MindSpore.

    MindSpore 2.10's measure is always 0 (its cepstrum reads a buffer of zeros), so it never triggers
    above ``trigger_level`` 0; minddata computes SoX's measure, so it trims where speech starts.

    Args:
        sample_rate: the sample rate, > 0.
        trigger_level: the measure level that triggers.
        trigger_time, search_time, allowed_gap, pre_trigger_time, boot_time: seconds, >= 0.
        noise_up_time, noise_down_time: the noise estimate's time constants, >= 0, up >= down.
        noise_reduction_amount: >= 0.
        measure_freq: measures per second, > 0.
        measure_duration: each measure's span in seconds (None: ``2 / measure_freq``).
        measure_smooth_time: the spectrum's smoothing time constant, >= 0.
        hp_filter_freq, lp_filter_freq, hp_lifter_freq, lp_lifter_freq: the band edges, > 0.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.Vad(8000)(np.zeros(4000, np.float32)).shape
        (4000,)
    """

    def __init__(
        self, sample_rate: int, trigger_level: float = 7.0, trigger_time: float = 0.25, search_time: float = 1.0,
        allowed_gap: float = 0.25, pre_trigger_time: float = 0.0, boot_time: float = 0.35,
        noise_up_time: float = 0.1, noise_down_time: float = 0.01, noise_reduction_amount: float = 1.35,
        measure_freq: float = 20.0, measure_duration: float | None = None, measure_smooth_time: float = 0.4,
        hp_filter_freq: float = 50.0, lp_filter_freq: float = 6000.0, hp_lifter_freq: float = 150.0,
        lp_lifter_freq: float = 2000.0,
    ) -> None:
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate, low=1)
        self.trigger_level = check_float(self.name, "trigger_level", trigger_level)
        for arg, value in (("trigger_time", trigger_time), ("search_time", search_time), ("allowed_gap", allowed_gap),
                           ("pre_trigger_time", pre_trigger_time), ("boot_time", boot_time),
                           ("noise_up_time", noise_up_time), ("noise_down_time", noise_down_time),
                           ("noise_reduction_amount", noise_reduction_amount),
                           ("measure_smooth_time", measure_smooth_time)):
            setattr(self, arg, check_float(self.name, arg, value, low=0))
        if self.noise_up_time < self.noise_down_time:
            raise ArgumentError(f"{self.name}: `noise_up_time` must be at least `noise_down_time` "
                                f"({noise_down_time}). Found: {noise_up_time}")
        self.measure_freq = check_float(self.name, "measure_freq", measure_freq, low=0, low_open=True)
        self.measure_duration = (2.0 / self.measure_freq if not measure_duration
                                 else check_float(self.name, "measure_duration", measure_duration, low=0))
        for arg, value in (("hp_filter_freq", hp_filter_freq), ("lp_filter_freq", lp_filter_freq),
                           ("hp_lifter_freq", hp_lifter_freq), ("lp_lifter_freq", lp_lifter_freq)):
            setattr(self, arg, check_float(self.name, arg, value, low=0, low_open=True))

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        return TensorSpec((*spec.shape[:-1], None), float_dtype(spec.dtype))
