"""The GPU's torch driver on a real CUDA GPU (the lent machine has torch, torchvision, CuPy and JAX; no
DALI): op by op against the CPU kernels with emulation off, nvJPEG decoding, rows handed to torch,
CuPy and JAX without a host copy, the trainer's sink with mixed precision, automatic placement, and
decoding while training kernels run. Marked ``gpu``; skipped where torch sees no CUDA device, and
under ``MINDDATA_REQUIRE_GPU=1`` (bench/device_check.sh) that is an error instead.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from testkit import gpu_required
from vision_testing import noise_photo

import minddata as md
from minddata import transforms, vision
from minddata.ops import KernelContext, get_kernel

torch = pytest.importorskip("torch", reason="PyTorch is not installed: the torch GPU driver needs it")

_cuda = torch.cuda.is_available()
if gpu_required() and not _cuda:
    raise RuntimeError("MINDDATA_REQUIRE_GPU is set but torch sees no CUDA device (a CPU-only build, or no GPU)")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _cuda, reason="no CUDA device visible to torch")]

MEAN, STD = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]


@pytest.fixture(autouse=True)
def _torch_on_the_gpu(monkeypatch):
    from minddata.ops.gpu import kernels

    md.config.set_gpu_driver("torch")
    md.config.set_gpu_emulation(False)
    monkeypatch.setattr(kernels, "_backends", {})
    yield
    kernels.close_cached_segments()


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    from minddata.bench import images

    folder = tmp_path_factory.mktemp("torch_cuda_photos")
    images.generate(folder, num_images=64, num_classes=2, seed=5, size=(640, 480))
    return folder


# op -> (factory, largest difference from the CPU kernel, in levels), as the torch driver's docstring states.
OPS = {
    "Resize-bilinear": (lambda: vision.Resize((41, 57)), 2),
    "Resize-nearest": (lambda: vision.Resize((41, 57), vision.Inter.NEAREST), 255),  # edge picks; mean checked
    "CenterCrop": (lambda: vision.CenterCrop(30), 0),
    "Crop": (lambda: vision.Crop((3, 4), (20, 30)), 0),
    "RandomResizedCrop": (lambda: vision.RandomResizedCrop(24), 2),
    "HorizontalFlip": (vision.HorizontalFlip, 0),
    "RandomVerticalFlip": (lambda: vision.RandomVerticalFlip(0.5), 0),
    "Pad": (lambda: vision.Pad((1, 2, 3, 4), fill_value=(9, 8, 7)), 0),
    "Rotate": (lambda: vision.Rotate(25), 255),  # edges; mean checked
    "Normalize": (lambda: vision.Normalize(MEAN, STD), 1e-5),
    "Rescale": (lambda: vision.Rescale(1 / 255, 0.1), 1e-6),
    "HWC2CHW": (vision.HWC2CHW, 0),
    "TypeCast": (lambda: transforms.TypeCast(np.float16), 0),
    "Invert": (vision.Invert, 0),
    "Posterize": (lambda: vision.Posterize(3), 0),
    "Solarize": (lambda: vision.Solarize((50, 200)), 0),
    "AdjustBrightness": (lambda: vision.AdjustBrightness(1.3), 0),
    "AdjustGamma": (lambda: vision.AdjustGamma(2.2, gain=1.1), 0),
    "RandomLighting": (lambda: vision.RandomLighting(0.5), 0),
    "ToTensor": (vision.ToTensor, 0),
    "PadToSize": (lambda: vision.PadToSize((70, 80), fill_value=3), 0),
    "Erase": (lambda: vision.Erase(2, 3, 5, 6, value=(10, 20, 30)), 0),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_each_op_on_the_gpu_matches_the_cpu_kernel(name):
    make, largest = OPS[name]
    op = make()
    image = noise_photo(60, 80, 3)
    for row in range(3):
        ctx = dict(seed=8, pass_index=0, row_index=row, op_position=1)
        got = get_kernel(op.name, "GPU")(op, KernelContext(**ctx), image)
        want = get_kernel(op.name, "CPU")(op, KernelContext(**ctx), image)
        assert got.dtype == want.dtype and got.shape == want.shape, (name, row)
        diff = np.abs(got.astype(np.float64) - want)
        assert diff.max() <= largest and diff.mean() <= 1.0, (name, row, diff.max(), diff.mean())


def test_per_row_kernels_use_the_gpu_not_emulation():
    from minddata.ops.gpu.kernels import row_backend

    assert row_backend() == "torch-cuda"


def _gpu_rows(folder, framework: str, batch: int = 16):
    md.config.set_framework(framework)
    ds = md.ImageFolderDataset(str(folder), shuffle=False, num_parallel_workers=4).map(
        [op.device("GPU") for op in (vision.Decode(), vision.Resize((64, 64)), vision.HWC2CHW())],
        input_columns="image", num_parallel_workers=4).batch(batch)
    return ds.create_dict_iterator(num_epochs=1, output_numpy=False)


def test_rows_reach_torch_on_the_gpu_with_nvjpeg_and_no_host_copy(photos):
    it = _gpu_rows(photos, "torch")
    batches = [b["image"] for b in it]
    assert all(isinstance(b, torch.Tensor) and b.is_cuda for b in batches)
    assert sum(b.shape[0] for b in batches) == 64
    assert "GPU->CPU" not in it.device_stats.transfers and it.device_stats.cpu_rows == {}


def test_rows_reach_cupy_through_dlpack_without_a_host_copy(photos):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    it = _gpu_rows(photos, "cupy")
    batch = next(iter(it))["image"]
    assert isinstance(batch, cupy.ndarray) and batch.shape == (16, 3, 64, 64)
    assert "GPU->CPU" not in it.device_stats.transfers
    it.close()


def test_rows_reach_jax_on_the_gpu_without_a_host_copy(photos):
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    it = _gpu_rows(photos, "jax")
    batch = next(iter(it))["image"]
    assert isinstance(batch, jax.Array) and batch.shape == (16, 3, 64, 64)
    assert {d.platform for d in batch.devices()} == {"gpu"}
    assert "GPU->CPU" not in it.device_stats.transfers
    it.close()


def test_automatic_placement_chooses_the_torch_driver_on_the_gpu(photos):
    md.config.set_gpu_driver("auto")  # no DALI here: the torch driver
    ds = md.ImageFolderDataset(str(photos), shuffle=False).map(
        [vision.Decode(), vision.RandomResizedCrop(224), vision.RandomHorizontalFlip(),
         vision.Normalize(MEAN, STD), vision.HWC2CHW()], input_columns="image", device="auto")
    text = ds.explain()
    assert "one torch segment on the GPU" in text or "one DALI pipeline on the GPU" in text, text


def test_devices_reports_the_gpu_and_its_driver():
    gpu = next(d for d in md.devices() if d.name == "GPU")
    assert gpu.present and gpu.driver in ("torch", "DALI"), gpu


def test_decoding_while_training_kernels_run_gives_the_quiet_runs_pixels(photos):
    # pytorch/vision#9606: decode_jpeg on a stream whose memory the allocator still has in flight. The
    # segment decodes on its own stream; here the main thread allocates, computes and frees on the
    # default stream the whole time, as a training step does.
    quiet = [b["image"].cpu() for b in _gpu_rows(photos, "torch", batch=8)]
    it = _gpu_rows(photos, "torch", batch=8)
    busy = []
    a = torch.randn(2048, 2048, device="cuda")
    for batch in it:
        for _ in range(4):
            b = a @ a
            a = torch.tanh(b) * 0.5
            del b
        busy.append((batch["image"].float() * 1).to(torch.uint8).cpu())
    torch.cuda.synchronize()
    assert len(busy) == len(quiet) and all(torch.equal(x, y) for x, y in zip(busy, quiet, strict=True))


def test_the_sink_trains_with_amp_on_rows_made_on_the_gpu(photos):
    from minddata.trainer import LambdaCallback, Model

    md.config.set_seed(1)
    ds = md.ImageFolderDataset(str(photos), shuffle=False, num_parallel_workers=4).map(
        [op.device("GPU") for op in (vision.Decode(), vision.Resize((32, 32)), vision.Normalize(MEAN, STD),
                                     vision.HWC2CHW())], input_columns="image", num_parallel_workers=4
    ).batch(16, drop_remainder=True)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                              torch.nn.Flatten(), torch.nn.Linear(8, 2))
    model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.05), device="cuda",
                  amp_level="O2")
    losses: list[float] = []
    model.train(3, ds, callbacks=[LambdaCallback(on_train_step_end=lambda c: losses.append(
        float(c.original_args().net_outputs)))])
    assert len(losses) == 3 * 4 and all(np.isfinite(losses))


def test_a_cmyk_jpeg_falls_back_to_the_cpu_and_is_counted(tmp_path):
    folder = tmp_path / "cmyk" / "c"
    folder.mkdir(parents=True)
    files = []
    for i in range(4):
        image = Image.fromarray(noise_photo(48, 64, i))
        buf = io.BytesIO()
        (image.convert("CMYK") if i == 1 else image).save(buf, "JPEG", quality=90)
        (folder / f"{i}.jpg").write_bytes(buf.getvalue())
        files.append(buf.getvalue())
    ds = md.ImageFolderDataset(str(tmp_path / "cmyk"), shuffle=False).map(
        [vision.Decode().device("GPU")], input_columns="image")
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    rows = [r["image"] for r in it]
    assert len(rows) == 4 and all(r.shape == (48, 64, 3) for r in rows)
    # nvJPEG may or may not take CMYK: exactly the rows it refuses on its own are counted as CPU rows.
    refused = sum(not _nvjpeg_decodes(data) for data in files)
    assert (it.device_stats.cpu_rows or {}).get("Decode", 0) == refused, it.device_stats


def _nvjpeg_decodes(data: bytes) -> bool:
    try:
        from torchvision.io import ImageReadMode, decode_jpeg

        decode_jpeg([torch.frombuffer(bytearray(data), dtype=torch.uint8)], device="cuda", mode=ImageReadMode.RGB)
    except Exception:  # noqa: BLE001 - no torchvision, or nvJPEG refuses the file: the segment decodes it on the CPU
        return False
    return True
