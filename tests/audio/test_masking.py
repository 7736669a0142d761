"""The masking ops: fixed bands exactly where asked, random bands from the row's RNG (the same for any
worker count, different per row), and the band-size rules."""

from __future__ import annotations

import numpy as np
import pytest

import minddata as md
from minddata import audio
from minddata.ops import KernelContext, get_kernel

SPEC = np.arange(6 * 10, dtype=np.float32).reshape(6, 10) + 1


def test_fixed_bands():
    out = audio.TimeMasking(time_mask_param=3, mask_start=2, mask_value=0.5)(SPEC)
    assert np.all(out[:, 2:5] == 0.5) and np.array_equal(np.delete(out, [2, 3, 4], axis=1), np.delete(SPEC, [2, 3, 4], 1))
    out = audio.FrequencyMasking(freq_mask_param=2, mask_start=4)(SPEC[None])
    assert out.shape == (1, 6, 10) and np.all(out[0, 4:] == 0) and np.array_equal(out[0, :4], SPEC[:4])
    out = audio.MaskAlongAxis(1, 2, -1.0, 1)(SPEC)
    assert np.all(out[1:3] == -1) and np.array_equal(out[3:], SPEC[3:])


def test_fixed_band_must_fit():
    with pytest.raises(ValueError, match="TimeMasking: `mask_start` \\+ `time_mask_param` \\(8 \\+ 3\\)"):
        audio.TimeMasking(time_mask_param=3, mask_start=8)(SPEC)
    with pytest.raises(ValueError, match="FrequencyMasking: `freq_mask_param` \\(7\\) must be at most"):
        audio.FrequencyMasking(True, 7)(SPEC)


def _masked_columns(out: np.ndarray) -> tuple[int, ...]:
    return tuple(np.flatnonzero(np.all(out == 0, axis=0)))


def test_random_bands_come_from_the_row_rng():
    op = audio.TimeMasking(iid_masks=True, time_mask_param=4)
    assert op.random and not audio.TimeMasking(time_mask_param=4).random
    kernel = get_kernel("TimeMasking", "CPU")
    bands = [_masked_columns(kernel(op, KernelContext(seed=1, row_index=r), SPEC)) for r in range(40)]
    assert bands[3] == _masked_columns(kernel(op, KernelContext(seed=1, row_index=3), SPEC))
    assert len(set(bands)) > 5 and all(len(b) <= 4 for b in bands)
    assert all(b == tuple(range(b[0], b[0] + len(b))) for b in bands if b)  # contiguous


@pytest.mark.parametrize("workers", [1, 3])
def test_pipeline_masks_do_not_depend_on_workers(workers):
    md.config.set_seed(7)
    ds = md.NumpySlicesDataset({"s": np.repeat(SPEC[None], 12, axis=0)}, shuffle=False)
    ds = ds.map(audio.FrequencyMasking(True, 3), input_columns="s", num_parallel_workers=workers)
    rows = [r["s"] for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    md.config.set_seed(7)
    ref = md.NumpySlicesDataset({"s": np.repeat(SPEC[None], 12, axis=0)}, shuffle=False)
    ref = ref.map(audio.FrequencyMasking(True, 3), input_columns="s")
    want = [r["s"] for r in ref.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert all(np.array_equal(a, b) for a, b in zip(rows, want, strict=True))


def test_argument_rules():
    with pytest.raises(ValueError, match="TimeMasking: `mask_value` must be non-negative. Found: -1"):
        audio.TimeMasking(mask_value=-1)
    with pytest.raises(ValueError, match="`axis` must be 1 \\(frequency\\) or 2 \\(time\\). Found: 3"):
        audio.MaskAlongAxis(0, 1, 0.0, 3)
