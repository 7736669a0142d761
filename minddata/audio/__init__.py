"""Audio ops, enums and filter-bank functions, named as in ``mindspore.dataset.audio``.

Waveforms are arrays ``<..., time>``, spectrograms ``<..., freq, time>``, complex spectrograms
``<..., freq, time, 2>``; outputs are float32, or float64 for float64 input. A name of MindSpore's
module that minddata does not have yet raises an AttributeError saying so.

Examples:
    >>> import numpy as np
    >>> import minddata as md
    >>> from minddata import audio
    >>> waves = np.random.default_rng(0).standard_normal((4, 1600)).astype(np.float32)
    >>> ds = md.NumpySlicesDataset({"audio": waves}, shuffle=False)
    >>> ds = ds.map(operations=[audio.MelSpectrogram(n_fft=256, n_mels=32), audio.AmplitudeToDB()],
    ...             input_columns="audio")
    >>> row = next(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    >>> row["audio"].shape, row["audio"].dtype
    ((32, 13), dtype('float32'))
"""

from minddata._missing import module_getattr
from minddata.audio.biquad import (
    AllpassBiquad,
    BandBiquad,
    BandpassBiquad,
    BandrejectBiquad,
    BassBiquad,
    Biquad,
    Contrast,
    DeemphBiquad,
    EqualizerBiquad,
    Filtfilt,
    HighpassBiquad,
    LFilter,
    LowpassBiquad,
    Overdrive,
    RiaaBiquad,
    TrebleBiquad,
)
from minddata.audio.effects import Dither, Flanger, Phaser, Vad
from minddata.audio.features import DetectPitchFrequency, SlidingWindowCmn, SpectralCentroid
from minddata.audio.masking import FrequencyMasking, MaskAlongAxis, MaskAlongAxisIID, TimeMasking
from minddata.audio.phase import Angle, ComplexNorm, Magphase, PhaseVocoder, PitchShift, TimeStretch
from minddata.audio.reconstruct import GriffinLim, InverseMelScale
from minddata.audio.spectrogram import (
    LFCC,
    MFCC,
    AmplitudeToDB,
    ComputeDeltas,
    DBToAmplitude,
    InverseSpectrogram,
    MelScale,
    MelSpectrogram,
    Spectrogram,
)
from minddata.audio.utils import (
    BorderType,
    DensityFunction,
    FadeShape,
    GainType,
    Interpolation,
    MelType,
    Modulation,
    NormMode,
    NormType,
    ResampleMethod,
    ScaleType,
    WindowType,
    create_dct,
    linear_fbanks,
    melscale_fbanks,
)
from minddata.audio.waveform import DCShift, Fade, Gain, MuLawDecoding, MuLawEncoding, Resample, Vol

__all__ = [
    "AllpassBiquad",
    "AmplitudeToDB",
    "Angle",
    "BandBiquad",
    "BandpassBiquad",
    "BandrejectBiquad",
    "BassBiquad",
    "Biquad",
    "BorderType",
    "ComplexNorm",
    "ComputeDeltas",
    "Contrast",
    "DBToAmplitude",
    "DCShift",
    "DeemphBiquad",
    "DensityFunction",
    "DetectPitchFrequency",
    "Dither",
    "EqualizerBiquad",
    "Fade",
    "FadeShape",
    "Filtfilt",
    "Flanger",
    "FrequencyMasking",
    "Gain",
    "GainType",
    "GriffinLim",
    "HighpassBiquad",
    "Interpolation",
    "InverseMelScale",
    "InverseSpectrogram",
    "LFCC",
    "LFilter",
    "LowpassBiquad",
    "MFCC",
    "Magphase",
    "MaskAlongAxis",
    "MaskAlongAxisIID",
    "MelScale",
    "MelSpectrogram",
    "MelType",
    "Modulation",
    "MuLawDecoding",
    "MuLawEncoding",
    "NormMode",
    "NormType",
    "Overdrive",
    "PhaseVocoder",
    "Phaser",
    "PitchShift",
    "Resample",
    "ResampleMethod",
    "RiaaBiquad",
    "ScaleType",
    "SlidingWindowCmn",
    "SpectralCentroid",
    "Spectrogram",
    "TimeMasking",
    "TimeStretch",
    "TrebleBiquad",
    "Vad",
    "Vol",
    "WindowType",
    "create_dct",
    "linear_fbanks",
    "melscale_fbanks",
]

__getattr__ = module_getattr(__name__, lazy={"utils": "minddata.audio.utils"})
