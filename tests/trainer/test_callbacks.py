"""Callbacks: monitors, History, LambdaCallback, EarlyStopping, ReduceLROnPlateau, LR schedules, progress bar."""

from __future__ import annotations

import io

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the trainer needs it")

from trainer_nets import blob_dataset, make_model  # noqa: E402

from minddata.errors import ArgumentError  # noqa: E402
from minddata.trainer import (  # noqa: E402
    Callback,
    CallbackParams,
    EarlyStopping,
    History,
    LambdaCallback,
    LearningRateScheduler,
    LossMonitor,
    ProgressBar,
    ReduceLROnPlateau,
    RunContext,
    TimeMonitor,
)


def _lrs(model):
    return [g["lr"] for g in model.optimizer.param_groups]


def test_loss_monitor_prints_mindspore_lines(capsys):
    make_model().train(1, blob_dataset(rows=16), callbacks=LossMonitor())
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("epoch: 1 step: 1, loss is ") and len(out) == 2


def test_time_monitor_prints_epoch_and_step_time(capsys):
    make_model().train(1, blob_dataset(rows=16), callbacks=TimeMonitor())
    assert "per step time:" in capsys.readouterr().out


def test_legacy_mindspore_hook_names_are_called():
    calls = []

    class Old(Callback):
        def begin(self, ctx):
            calls.append("begin")

        def step_end(self, ctx):
            calls.append("step_end")

        def end(self, ctx):
            calls.append("end")

    make_model().train(1, blob_dataset(rows=16), callbacks=[Old()])
    assert calls == ["begin", "step_end", "step_end", "end"]


def test_history_records_epoch_losses():
    history = History()
    make_model().train(3, blob_dataset(rows=16), callbacks=history)
    assert history.epoch == [1, 2, 3] and len(history.history["loss"]) == 3


def test_lambda_callback_rejects_unknown_hooks():
    with pytest.raises(ArgumentError, match="unknown hook 'on_traim_end'"):
        LambdaCallback(on_traim_end=print)


def test_early_stopping_stops_when_the_monitored_metric_stalls():
    model = make_model(lr=0.0, metrics={"accuracy"})  # nothing is learnt: accuracy never improves
    history = History()
    stopper = EarlyStopping(monitor="accuracy", patience=2)
    model.fit(10, blob_dataset(rows=16), blob_dataset(rows=16), callbacks=[stopper, history])
    assert history.epoch == [1, 2, 3] and stopper.stopped_epoch == 3


def test_reduce_lr_on_plateau_lowers_the_learning_rate():
    model = make_model(lr=0.0, metrics={"loss"})
    model.optimizer.param_groups[0]["lr"] = 1e-9
    reducer = ReduceLROnPlateau(monitor="eval_loss", factor=0.5, patience=1, min_delta=1.0)
    model.fit(3, blob_dataset(rows=16), blob_dataset(rows=16), callbacks=[reducer])
    assert _lrs(model) == [pytest.approx(1e-9 * 0.25)]  # epochs 2 and 3 did not improve by min_delta


def test_learning_rate_scheduler_with_a_mindspore_function():
    model = make_model(lr=1.0)
    model.train(1, blob_dataset(rows=24), callbacks=LearningRateScheduler(lambda lr, step: lr * 0.5))
    assert _lrs(model) == [pytest.approx(0.125)]  # halved after each of the 3 steps


def test_learning_rate_scheduler_with_a_torch_scheduler_steps_per_epoch():
    model = make_model(lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(model.optimizer, step_size=1, gamma=0.1)
    model.train(2, blob_dataset(rows=24), callbacks=LearningRateScheduler(scheduler))
    assert _lrs(model) == [pytest.approx(0.01)]


def test_progress_bar_counts_steps_with_tqdm():
    pytest.importorskip("tqdm", reason="tqdm is not installed")
    out = io.StringIO()
    make_model().train(1, blob_dataset(rows=24), callbacks=ProgressBar(file=out, mininterval=0))
    text = out.getvalue()
    assert "epoch 1/1" in text and "3/3" in text and "loss=" in text


def test_callback_params_read_unset_attributes_as_none():
    params = CallbackParams(cur_epoch_num=2)
    ctx = RunContext(params)
    assert ctx.original_args().cur_epoch_num == 2 and ctx.original_args().eval_results is None
    assert not ctx.get_stop_requested()
    ctx.request_stop()
    assert ctx.get_stop_requested()
