"""The trainer on a real CUDA GPU: the sink's pinned, stream-ordered staging and training on the device.

Skipped where torch sees no CUDA device; ``bench/device_check.sh`` runs this file with
``MINDDATA_REQUIRE_GPU=1`` on the GPU machine, where a missing GPU fails the run instead.
"""

from __future__ import annotations

import numpy as np
import pytest
from testkit import gpu_required

torch = pytest.importorskip("torch", reason="torch is not installed: the trainer needs it")

import minddata as md  # noqa: E402
from minddata.trainer import LambdaCallback, Model  # noqa: E402
from minddata.trainer.sink import EPOCH_END, BatchFeed  # noqa: E402

_cuda = torch.cuda.is_available()
if gpu_required() and not _cuda:
    raise RuntimeError("MINDDATA_REQUIRE_GPU is set but torch sees no CUDA device")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _cuda, reason="no CUDA device visible to torch")]

ROWS, BATCH = 256, 32


def _dataset() -> md.Dataset:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(ROWS, 16)).astype(np.float32)
    y = x[:, :4].argmax(axis=1).astype(np.int32)  # learnable: the loss must fall
    return md.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(BATCH, drop_remainder=True)


def test_the_sink_stages_every_batch_on_the_gpu_with_the_pipelines_values():
    expected = [(x, y) for x, y in _dataset().create_tuple_iterator(num_epochs=1, output_numpy=True)]
    feed = BatchFeed(_dataset(), "cuda", [0], [1], threaded=True, sink=True, num_epochs=1, int64_columns=["y"])
    staged = []
    try:
        while (item := feed.get()) is not EPOCH_END:
            assert item.inputs[0].is_cuda and item.labels[0].is_cuda
            assert item.ready is not None  # copied on the sink's own stream, ordered by an event
            staged.append((item.inputs[0].cpu().numpy(), item.labels[0].cpu().numpy()))
    finally:
        feed.close()
    assert len(staged) == len(expected) == ROWS // BATCH
    for (x, y), (ex, ey) in zip(staged, expected):
        np.testing.assert_array_equal(x, ex)
        np.testing.assert_array_equal(y, ey.astype(np.int64))


def _losses(device: str, amp_level: str = "O0") -> list[float]:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.05), device=device,
                  amp_level=amp_level)
    losses: list[float] = []
    model.train(2, _dataset(), callbacks=[LambdaCallback(
        on_train_step_end=lambda ctx: losses.append(ctx.original_args().net_outputs))])
    assert next(net.parameters()).device.type == torch.device(device).type
    return losses


def test_training_on_the_gpu_follows_the_cpu_run():
    gpu, cpu = _losses("cuda"), _losses("cpu")
    assert len(gpu) == len(cpu) == 2 * ROWS // BATCH
    np.testing.assert_allclose(gpu, cpu, rtol=1e-3, atol=1e-4)


def test_mixed_precision_on_the_gpu_trains():
    losses = _losses("cuda", amp_level="O2")
    assert all(np.isfinite(losses)) and np.mean(losses[-4:]) < np.mean(losses[:4])
