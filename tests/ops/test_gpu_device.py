"""GPU and Dvpp (nvjpg) on a real NVIDIA GPU: marked ``gpu``, skipped where none is visible.

Each test runs on every GPU driver this machine has: DALI, and PyTorch (``config.set_gpu_driver``).
What needs no GPU (the translations, the numerics on DALI's CPU backend and on torch CPU tensors,
placement, the CUDA graphs) is tested in tests/ops/test_gpu_dali.py, test_gpu_torch.py,
test_gpu_cuda_graph.py and tests/engine/test_placement.py; bench/device_check.sh runs this file on a
machine with a GPU, with ``MINDDATA_REQUIRE_GPU=1``: there a missing GPU fails the run instead of
skipping it. Tolerances here are for nvJPEG's decoder, whose IDCT and chroma upsampling differ from
libjpeg-turbo's by a few levels.
"""

from __future__ import annotations

import numpy as np
import pytest
from testkit import gpu_required

import minddata as md
from minddata import vision
from minddata.ops import probe

_gpus, _why = probe.visible_gpus()
if gpu_required() and not _gpus:
    raise RuntimeError(f"MINDDATA_REQUIRE_GPU is set but no GPU is visible: {_why}")
_dali_ok, _dali_why = probe.dali_status()
# torch is imported only where a GPU is there to use.
_torch_ok, _torch_cuda, _torch_why = probe.torch_status() if _gpus else (False, False, "no GPU")
_DRIVERS = {
    "dali": (_dali_ok, f"nvidia.dali not importable ({_dali_why})"),
    "torch": (_torch_ok and _torch_cuda, f"no CUDA PyTorch here ({_torch_why})"),
}
if gpu_required() and not any(ok for ok, _ in _DRIVERS.values()):
    raise RuntimeError(f"MINDDATA_REQUIRE_GPU is set but no GPU driver works: {_DRIVERS}")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not _gpus, reason=_why or "no NVIDIA GPU visible (nvidia-smi -L found none)"),
]


# The drivers this machine has (a machine without DALI, like the lent one, runs the torch driver only);
# with none, each is a parameter that skips naming what is missing.
_PRESENT = sorted(name for name, (ok, _) in _DRIVERS.items() if ok) or sorted(_DRIVERS)


@pytest.fixture(params=_PRESENT)
def driver(request):
    ok, why = _DRIVERS[request.param]
    if not ok:
        pytest.skip(why)
    md.config.set_gpu_driver(request.param)
    return request.param


MEAN, STD = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    from minddata.bench import images

    folder = tmp_path_factory.mktemp("gpu_photos")
    images.generate(folder, num_images=48, num_classes=2, seed=3, size=(640, 480))
    return folder


def _rows(folder, ops, batch=16, **config):
    for name, value in config.items():
        getattr(md.config, f"set_{name}")(value)
    ds = md.ImageFolderDataset(str(folder), shuffle=False, num_parallel_workers=4)
    ds = ds.map(ops, input_columns="image", num_parallel_workers=4).batch(batch)
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    out = np.concatenate([b["image"] for b in it])
    return out, it.device_stats


def test_decode_on_the_gpu_matches_the_cpu(photos, driver):
    ops = lambda: [vision.Decode(), vision.CenterCrop(256)]  # noqa: E731
    want, _ = _rows(photos, ops())
    got, stats = _rows(photos, [op.device("GPU") for op in ops()])
    diff = np.abs(got.astype(int) - want)
    assert diff.mean() <= 1.5, diff.mean()
    assert stats.transfers == {"CPU->GPU": 48, "GPU->CPU": 48}
    # Every row decoded on the GPU (nvJPEG), none on the CPU decoder the segment falls back to, which
    # would give the same pixels and the same transfer counts.
    assert stats.cpu_rows == {}, stats.cpu_rows


def test_standard_pipelines_on_the_gpu_draw_the_cpus_crops(photos, driver):
    md.config.set_seed(7)

    def train():
        return [vision.Decode(), vision.RandomResizedCrop(224), vision.RandomHorizontalFlip(),
                vision.Normalize(MEAN, STD), vision.HWC2CHW()]

    want, _ = _rows(photos, train(), enable_fusion=False)
    md.config.set_seed(7)
    got, _ = _rows(photos, [op.device("GPU") for op in train()])
    diff = np.abs(got - want) * np.asarray(STD, np.float32)[:, None, None]
    assert got.shape == want.shape == (48, 3, 224, 224)
    assert diff.mean() <= 2.0, diff.mean()  # a different crop or flip would be tens of levels off


def test_per_row_kernels_run_on_the_gpu(driver):
    from minddata.ops.gpu.kernels import row_backend

    md.config.set_gpu_emulation(False)
    assert row_backend() == {"dali": "cuda", "torch": "torch-cuda"}[driver]


@pytest.mark.gpu(needs="nvidia.dali")
def test_nvjpg_decodes_on_the_hardware_engine(photos):
    if not _dali_ok:
        pytest.skip(f"nvjpg runs through DALI here, and {_dali_why}")
    driver, why = probe.dvpp_driver()
    if driver != "nvjpg":
        pytest.skip(f"no NVJPG here: {why}")
    ops = lambda: [vision.Decode(), vision.Resize((416, 416))]  # noqa: E731
    md.config.set_enable_fusion(False)
    want, _ = _rows(photos, ops())
    md.config.set_enable_fusion(True)
    got, stats = _rows(photos, [op.device("Dvpp") for op in ops()])
    assert np.abs(got.astype(int) - want).mean() <= 2.0
    assert stats.transfers == {"CPU->Dvpp": 48, "Dvpp->CPU": 48}


def test_outputs_stay_on_the_gpu_for_torch(photos, driver):
    torch = pytest.importorskip("torch", reason="torch not installed: device outputs are torch CUDA tensors")
    md.config.set_framework("torch")
    ds = md.ImageFolderDataset(str(photos), shuffle=False).map(
        [op.device("GPU") for op in (vision.Decode(), vision.Resize((64, 64)), vision.HWC2CHW())], input_columns="image"
    ).batch(16)
    it = ds.create_dict_iterator(num_epochs=1)
    batch = next(iter(it))["image"]
    assert isinstance(batch, torch.Tensor) and batch.is_cuda and tuple(batch.shape) == (16, 3, 64, 64)
    assert "GPU->CPU" not in it.device_stats.transfers
    it.close()
