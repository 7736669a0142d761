"""Masking ops, named as in ``mindspore.dataset.audio``: :class:`FrequencyMasking`, :class:`TimeMasking`,
:class:`MaskAlongAxis`, :class:`MaskAlongAxisIID` (SpecAugment).

A spectrogram ``<..., freq, time>`` gets a band of rows (frequency) or columns (time) set to
``mask_value``. The random forms (``iid_masks=True``, :class:`MaskAlongAxisIID`) draw the band's width
and start from the row's RNG (``minddata.ops.plans.masking``), so a pipeline's masks are the same for
any number of workers and on resume. Specs only; the CPU kernels live in ``minddata.ops.cpu.masking``.
"""

from __future__ import annotations

from minddata.audio._checks import check_bool, check_float, check_int, float_dtype, one_input
from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec

__all__ = ["FrequencyMasking", "MaskAlongAxis", "MaskAlongAxisIID", "TimeMasking"]


class _Masking(Op):
    axis_name = ""

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs, 2, "<..., freq, time>")
        return TensorSpec(tuple(spec.shape), float_dtype(spec.dtype))


class _SpecAugment(_Masking):
    def __init__(self, iid_masks: bool, mask_param: int, param_name: str, mask_start: int, mask_value: float) -> None:
        self.iid_masks = check_bool(self.name, "iid_masks", iid_masks)
        setattr(self, param_name, check_int(self.name, param_name, mask_param, low=0))
        self.mask_start = check_int(self.name, "mask_start", mask_start, low=0)
        self.mask_value = check_float(self.name, "mask_value", mask_value, low=0)

    @property
    def random(self) -> bool:  # type: ignore[override]  # per instance, where Op has a class attribute
        return self.iid_masks


class FrequencyMasking(_SpecAugment):
    """Mask a band of frequency rows of a spectrogram ``<..., freq, time>``.

    With ``iid_masks`` False the band is rows ``[mask_start, mask_start + freq_mask_param)``; with
    ``iid_masks`` True its width is drawn uniformly from ``[0, freq_mask_param]`` and its start
    uniformly from the positions where it fits (``mask_start`` is not used), from the row's RNG.

    Args:
        iid_masks: draw the band at random.
        freq_mask_param: the band's width (or its largest width), at most the number of rows.
        mask_start: the band's first row (fixed bands).
        mask_value: the value of the masked rows, >= 0.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.FrequencyMasking(freq_mask_param=2, mask_start=1)(np.ones((4, 2))).tolist()
        [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    """

    axis_name = "freq"

    def __init__(
        self, iid_masks: bool = False, freq_mask_param: int = 0, mask_start: int = 0, mask_value: float = 0.0
    ) -> None:
        super().__init__(iid_masks, freq_mask_param, "freq_mask_param", mask_start, mask_value)

    @property
    def mask_param(self) -> int:
        return self.freq_mask_param


class TimeMasking(_SpecAugment):
    """Mask a band of time columns of a spectrogram ``<..., freq, time>``; as :class:`FrequencyMasking`
    along time.

    Args:
        iid_masks: draw the band at random.
        time_mask_param: the band's width (or its largest width), at most the number of columns.
        mask_start: the band's first column (fixed bands).
        mask_value: the value of the masked columns, >= 0.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.TimeMasking(time_mask_param=1, mask_start=2)(np.ones((2, 4))).tolist()
        [[1.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 1.0]]
    """

    axis_name = "time"

    def __init__(
        self, iid_masks: bool = False, time_mask_param: int = 0, mask_start: int = 0, mask_value: float = 0.0
    ) -> None:
        super().__init__(iid_masks, time_mask_param, "time_mask_param", mask_start, mask_value)

    @property
    def mask_param(self) -> int:
        return self.time_mask_param


def _check_axis(op: str, axis: object) -> int:
    value = check_int(op, "axis", axis)
    if value not in (1, 2):
        raise ArgumentError(f"{op}: `axis` must be 1 (frequency) or 2 (time). Found: {value}")
    return value


class MaskAlongAxis(_Masking):
    """Set ``mask_width`` rows (``axis=1``) or columns (``axis=2``) of a spectrogram ``<..., freq, time>``,
    from ``mask_start`` on, to ``mask_value``.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.MaskAlongAxis(0, 1, 5.0, 2)(np.ones((2, 3))).tolist()
        [[5.0, 1.0, 1.0], [5.0, 1.0, 1.0]]
    """

    def __init__(self, mask_start: int, mask_width: int, mask_value: float, axis: int) -> None:
        self.mask_start = check_int(self.name, "mask_start", mask_start, low=0)
        self.mask_width = check_int(self.name, "mask_width", mask_width, low=1)
        self.mask_value = check_float(self.name, "mask_value", mask_value)
        self.axis = _check_axis(self.name, axis)


class MaskAlongAxisIID(_Masking):
    """Mask a band of rows (``axis=1``) or columns (``axis=2``) of a spectrogram ``<..., freq, time>``
    whose width is drawn from ``[0, mask_param]`` and start from where it fits, from the row's RNG.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.MaskAlongAxisIID(2, 0.0, 2)(np.ones((2, 6))).shape
        (2, 6)
    """

    random = True

    def __init__(self, mask_param: int, mask_value: float, axis: int) -> None:
        self.mask_param = check_int(self.name, "mask_param", mask_param, low=0)
        self.mask_value = check_float(self.name, "mask_value", mask_value)
        self.axis = _check_axis(self.name, axis)
