"""Model: train/fit/eval/predict, columns, sink mode and sink_size, amp, clipping, accumulation, ONNX export."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the trainer needs it")

from trainer_nets import TinyNet, blob_dataset, blobs, make_model  # noqa: E402

import minddata as md  # noqa: E402
from minddata.errors import ArgumentError  # noqa: E402
from minddata.trainer import (  # noqa: E402
    ColumnMismatchError,
    History,
    InputDtypeError,
    LambdaCallback,
    Model,
    OnnxModel,
)


def _losses(model, epochs, ds, **kwargs):
    losses = []
    model.train(epochs, ds, callbacks=[LambdaCallback(on_train_step_end=lambda c: losses.append(
        c.original_args().net_outputs))], **kwargs)
    return losses


def test_train_learns_and_eval_reports_metrics():
    md.config.set_seed(1)
    model = make_model(metrics={"accuracy", "loss"})
    ds = blob_dataset()
    before = model.eval(ds)
    model.train(3, ds)
    after = model.eval(ds)
    assert after["accuracy"] >= 0.9 and after["loss"] < before["loss"]


def test_losses_are_the_same_with_and_without_sink_mode():
    md.config.set_seed(1)
    sink = _losses(make_model(), 2, blob_dataset(shuffle=True), dataset_sink_mode=True)
    plain = _losses(make_model(), 2, blob_dataset(shuffle=True), dataset_sink_mode=False)
    assert len(sink) == 24 and sink == plain


def test_step_and_epoch_numbers_seen_by_callbacks():
    seen = []
    cb = LambdaCallback(
        on_train_epoch_end=lambda c: seen.append(("epoch", c.original_args().cur_epoch_num)),
        on_train_step_end=lambda c: seen.append((c.original_args().cur_step_num, c.original_args().cur_step_in_epoch)),
    )
    make_model().train(2, blob_dataset(rows=24, batch=8), callbacks=cb)
    assert seen == [(1, 1), (2, 2), (3, 3), ("epoch", 1), (4, 1), (5, 2), (6, 3), ("epoch", 2)]


def test_sink_size_makes_epochs_of_that_many_steps_across_passes():
    per_epoch = []
    rows_seen = []
    cb = LambdaCallback(on_train_epoch_end=lambda c: per_epoch.append(c.original_args().cur_step_in_epoch),
                        on_train_step_end=lambda c: rows_seen.append(c.original_args().cur_step_num))
    make_model().train(3, blob_dataset(rows=24, batch=8), callbacks=cb, sink_size=5)  # 3 batches per pass
    assert per_epoch == [5, 5, 5] and rows_seen == list(range(1, 16))


def test_request_stop_ends_training_after_the_step():
    steps = []

    def stop_at_two(ctx):
        steps.append(ctx.original_args().cur_step_num)
        if ctx.original_args().cur_step_num == 2:
            ctx.request_stop()

    make_model().train(5, blob_dataset(), callbacks=LambdaCallback(on_train_step_end=stop_at_two))
    assert steps == [1, 2]


def test_fit_evaluates_each_valid_frequency_epochs():
    history = History()
    model = make_model(metrics={"accuracy"})
    model.fit(4, blob_dataset(), blob_dataset(rows=32, seed=1), valid_frequency=2, callbacks=[history])
    assert len(history.history["loss"]) == 4 and len(history.history["accuracy"]) == 2


def test_default_columns_last_is_the_label_and_int32_labels_work_with_cross_entropy():
    model = make_model()
    x, y = blobs(16)
    assert y.dtype == np.int32
    model.train(1, md.NumpySlicesDataset({"x": x, "label": y}, shuffle=False).batch(8))


def test_columns_that_do_not_fit_name_the_columns_and_forward():
    x, y = blobs(16)
    ds = md.NumpySlicesDataset({"x": x, "extra": x, "label": y}, shuffle=False).batch(8)
    with pytest.raises(ColumnMismatchError, match=r"columns \['x', 'extra', 'label'\] do not fit TinyNet\.forward\(x\)"):
        make_model().train(1, ds)


def test_input_and_label_columns_override_the_default():
    x, y = blobs(16)
    ds = md.NumpySlicesDataset({"label": y, "features": x, "unused": y}, shuffle=False).batch(8)
    model = make_model(input_columns="features", label_columns="label", metrics={"accuracy"})
    model.train(1, ds)
    assert 0 <= model.eval(ds)["accuracy"] <= 1


def test_predict_on_a_batch_and_streamed_over_a_dataset():
    model = make_model()
    x, _ = blobs(20)
    direct = model.predict(x)
    assert isinstance(direct, torch.Tensor) and direct.shape == (20, 3)
    stream = model.predict(blob_dataset(rows=20, batch=8))  # the label column is left out
    outs = list(stream)
    assert [tuple(o.shape) for o in outs] == [(8, 3), (8, 3), (4, 3)]
    torch.testing.assert_close(torch.cat(outs), direct)


def test_gradient_accumulation_matches_one_large_batch():
    def run(batch, accumulate):
        torch.manual_seed(0)
        net = TinyNet(dropout=0.0)
        model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.5), device="cpu",
                      grad_accumulation_steps=accumulate)
        model.train(1, blob_dataset(rows=32, batch=batch))
        return [p.detach().clone() for p in net.parameters()]

    for a, b in zip(run(16, 1), run(8, 2)):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_bounds_the_update():
    torch.manual_seed(0)
    net = TinyNet(dropout=0.0)
    start = [p.detach().clone() for p in net.parameters()]
    model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=1.0), device="cpu",
                  clip_grad_norm=0.01)
    model.train(1, blob_dataset(rows=8, batch=8))
    moved = torch.sqrt(sum(((p.detach() - s) ** 2).sum() for p, s in zip(net.parameters(), start)))
    assert moved <= 0.01 + 1e-6


@pytest.mark.parametrize("level", ["O1", "O2", "O3"])
def test_amp_levels_train_on_the_cpu(level):
    md.config.set_seed(1)
    model = make_model(amp_level=level, metrics={"accuracy"})
    model.train(2, blob_dataset())
    low = {p.dtype for p in model.network.parameters()}
    assert low == ({torch.bfloat16} if level == "O3" else {torch.float32})
    assert model.eval(blob_dataset())["accuracy"] > 0.5


def test_bad_arguments_are_named():
    with pytest.raises(ArgumentError, match="amp_level"):
        make_model(amp_level="O4")
    with pytest.raises(ArgumentError, match="sink_size"):
        make_model().train(1, blob_dataset(), sink_size=0)
    with pytest.raises(ArgumentError, match="needs loss_fn and optimizer"):
        Model(TinyNet(), device="cpu").train(1, blob_dataset())
    with pytest.raises(ArgumentError, match="torch.nn.Module"):
        Model(lambda x: x)


def test_a_pipeline_error_in_the_sink_reaches_the_training_loop():
    def explode(x):
        raise ValueError("bad row")

    ds = md.NumpySlicesDataset({"x": blobs(16)[0], "label": blobs(16)[1]}, shuffle=False).map(
        explode, input_columns="x").batch(8)
    with pytest.raises(Exception, match="bad row"):
        make_model().train(1, ds)


def test_export_onnx_then_onnx_model_predicts_the_same(tmp_path):
    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install 'minddata[infer]')")
    model = make_model(metrics={"accuracy"})
    model.train(1, blob_dataset())
    path = model.export_onnx(tmp_path / "net.onnx", blob_dataset(rows=8, batch=4))
    onnx_model = OnnxModel(path)
    assert [i.name for i in onnx_model.inputs] == ["x"] and onnx_model.inputs[0].shape == (-1, 4)
    x, y = blobs(10)
    np.testing.assert_allclose(onnx_model.predict(x), model.predict(x).numpy(), rtol=1e-4, atol=1e-5)
    assert onnx_model.eval(blob_dataset(), metrics={"accuracy"}) == pytest.approx(model.eval(blob_dataset()))


class _ConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.head = torch.nn.Linear(4 * 6 * 6, 2)

    def forward(self, image):
        return self.head(self.conv(image).flatten(1))


def _uint8_images(rows: int = 8):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(rows, 3, 8, 8), dtype=np.uint8)
    return md.NumpySlicesDataset({"image": images, "label": np.arange(rows, dtype=np.int32) % 2}, shuffle=False)


def _conv_model(**kwargs):
    torch.manual_seed(0)
    net = _ConvNet()
    return Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1), device="cpu", **kwargs)


def test_uint8_images_into_a_float_network_name_the_column_and_the_fix():
    with pytest.raises(InputDtypeError, match=r"Model\.train \(epoch 1, step 1\): _ConvNet\.forward failed on input column 'image', a "
                       r"uint8 tensor of shape \(4, 3, 8, 8\), because the network's parameters are float32") as info:
        _conv_model().train(1, _uint8_images().batch(4))
    message = str(info.value)
    assert "vision.Normalize" in message and "TypeCast(np.float32)" in message and "input_columns='image'" in message
    assert isinstance(info.value, RuntimeError) and "should be the same" in str(info.value.__cause__)


def test_uint8_images_are_not_cast_silently_in_eval_either():
    with pytest.raises(InputDtypeError, match=r"Model\.eval: .* input column 'image'"):
        _conv_model(metrics={"accuracy"}).eval(_uint8_images().batch(4))


def test_predict_on_a_uint8_array_says_to_pass_floats():
    with pytest.raises(InputDtypeError, match=r"Model\.predict: .*input 0, a uint8 tensor.*Pass it as float"):
        _conv_model().predict(np.zeros((2, 3, 8, 8), np.uint8))


def test_float32_images_from_the_pipeline_train():
    ds = _uint8_images().map(md.transforms.TypeCast(np.float32), input_columns="image").batch(4)
    losses: list[float] = []
    _conv_model().train(1, ds, callbacks=[_losses_into(losses)])
    assert len(losses) == 2 and all(np.isfinite(losses))


def test_a_network_that_takes_integers_on_purpose_is_not_affected():
    class Pixels(_ConvNet):
        def forward(self, image):
            return super().forward(image.float() / 255)

    torch.manual_seed(0)
    net = Pixels()
    model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1), device="cpu")
    losses: list[float] = []
    model.train(1, _uint8_images().batch(4), callbacks=[_losses_into(losses)])
    assert len(losses) == 2 and all(np.isfinite(losses))


def _losses_into(losses: list[float]) -> LambdaCallback:
    return LambdaCallback(on_train_step_end=lambda c: losses.append(float(c.original_args().net_outputs)))


def test_other_forward_errors_with_integer_inputs_pass_through_unchanged():
    class Broken(_ConvNet):
        def forward(self, image):
            raise RuntimeError("a bug in forward")

    torch.manual_seed(0)
    net = Broken()
    model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1), device="cpu")
    with pytest.raises(RuntimeError, match="^a bug in forward$") as info:
        model.train(1, _uint8_images().batch(4))
    assert not isinstance(info.value, InputDtypeError)
