"""Sink mode's settings: config.set_sending_batches bounds the batches sent per pass, and
config.set_dynamic_shape decides whether batches may change shape."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the trainer needs it")

from trainer_nets import blob_dataset, make_model  # noqa: E402

import minddata as md  # noqa: E402
from minddata.errors import PipelineError  # noqa: E402
from minddata.trainer import LambdaCallback, Model  # noqa: E402


def _steps(seen: list) -> LambdaCallback:
    return LambdaCallback(on_train_step_end=lambda c: seen.append(c.original_args().cur_step_num))


def test_sending_batches_stops_the_sink_at_the_limit():
    md.config.set_sending_batches(2)
    seen: list[int] = []
    with pytest.raises(
        PipelineError, match=r"config.set_sending_batches\(2\) lets 2 batch\(es\) per pass be sent"
    ):
        make_model().train(1, blob_dataset(rows=48, batch=8), callbacks=_steps(seen))
    assert seen == [1, 2]


def test_sending_batches_raised_by_a_callback_lets_training_go_on():
    md.config.set_sending_batches(1)
    seen: list[int] = []
    raise_limit = LambdaCallback(
        on_train_step_end=lambda c: md.config.set_sending_batches(c.original_args().cur_step_in_epoch + 1)
    )
    make_model().train(2, blob_dataset(rows=48, batch=8), callbacks=[raise_limit, _steps(seen)])
    assert seen == list(range(1, 13))  # the count starts again with each pass


def test_sending_batches_applies_only_in_sink_mode():
    md.config.set_sending_batches(2)
    seen: list[int] = []
    make_model().train(1, blob_dataset(rows=48, batch=8), callbacks=_steps(seen), dataset_sink_mode=False)
    assert seen == [1, 2, 3, 4, 5, 6]


class MeanNet(torch.nn.Module):
    """Classifies a row by its mean, so it takes rows of any length."""

    def __init__(self) -> None:
        super().__init__()
        self.head = torch.nn.Linear(1, 3)

    def forward(self, x):
        return self.head(x.mean(dim=1, keepdim=True))


def _growing_batches():
    """Batches of 2 rows whose length grows: (2, 3), (2, 4), (2, 5)."""
    rows = [(np.full((2, 3 + i), i, np.float32), np.array([i, i], np.int32)) for i in range(3)]
    return md.GeneratorDataset(lambda: iter(rows), column_names=["x", "label"], shuffle=False)


def _mean_model() -> Model:
    torch.manual_seed(0)
    net = MeanNet()
    return Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1))


def test_static_shapes_are_required_in_sink_mode_by_default():
    seen: list[int] = []
    with pytest.raises(
        PipelineError, match=r"column 'x' of batch 2 has shape \(2, 4\) where the first batch had \(2, 3\)"
    ):
        _mean_model().train(1, _growing_batches(), callbacks=_steps(seen))
    assert seen == [1]


def test_dynamic_shape_lets_batches_change_shape():
    md.config.set_dynamic_shape(True)
    seen: list[int] = []
    _mean_model().train(1, _growing_batches(), callbacks=_steps(seen))
    assert seen == [1, 2, 3]


def test_a_shorter_remainder_batch_is_static_enough():
    seen: list[int] = []
    make_model().train(1, blob_dataset(rows=20, batch=8), callbacks=_steps(seen))  # batches of 8, 8, 4
    assert seen == [1, 2, 3]


def test_an_iterator_made_for_a_cuda_device_keeps_gpu_rows_on_the_gpu(monkeypatch):
    from minddata import vision
    from minddata.engine.optimizer import lower
    from minddata.ops import probe
    from minddata.trainer.sink import device_options

    monkeypatch.setattr(probe, "gpu_backend", lambda options=None: ("torch-cuda", "NVIDIA H200; PyTorch"))
    ds = md.NumpySlicesDataset({"image": [np.zeros((4, 4, 3), np.uint8)]}).map(
        [vision.HorizontalFlip().device("GPU")], input_columns="image").batch(1)

    def device_output(device: str) -> bool:
        tree = lower(ds._node, True, options=device_options(device))
        (gpu_map,) = [n for n in tree.walk() if getattr(n, "device_parts", ())]
        return gpu_map.device_output

    assert device_output("cuda:0")  # not GPU -> host -> GPU for Model.train without set_framework("torch")
    assert not device_output("cpu")
    assert md.config.get_framework() == "numpy"  # never changed: only the iterator's snapshot says torch


def test_a_feed_for_a_cuda_device_gives_its_iterator_torch_without_changing_the_settings():
    from minddata.trainer.sink import BatchFeed

    data = md.NumpySlicesDataset({"x": np.zeros((4, 2), np.float32), "y": np.zeros(4, np.int64)}).batch(2)
    feed = BatchFeed(data, "cuda:0", [0], [1], threaded=False)  # nothing runs until a batch is asked for
    try:
        assert feed._iterator._run.rt.options.framework == "torch"
        assert md.config.get_framework() == "numpy"
    finally:
        feed.close()
