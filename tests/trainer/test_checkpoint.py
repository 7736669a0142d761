"""Checkpoints: exact resume after SIGKILL, atomic files, keep_checkpoint_max, key mismatch, SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the trainer needs it")

from trainer_nets import TinyNet, blob_dataset, child_env, make_model  # noqa: E402

import minddata as md  # noqa: E402
from minddata.trainer import (  # noqa: E402
    BackupAndRestore,
    CheckpointConfig,
    CheckpointMismatchError,
    History,
    LambdaCallback,
    LearningRateScheduler,
    Model,
    ModelCheckpoint,
)

HERE = Path(__file__).resolve().parent
CHILD = HERE / "resume_child.py"


def _losses(path: Path) -> list[tuple[int, str]]:
    return [(int(a), b) for a, b in (line.split() for line in path.read_text().splitlines())]


def test_sigkilled_run_resumes_with_bit_identical_losses(tmp_path):
    full, killed = tmp_path / "full.txt", tmp_path / "killed.txt"
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    # The uninterrupted run and the one to be killed run side by side.
    full_run = subprocess.Popen([sys.executable, str(CHILD), str(full), str(ckpt), "full"], env=child_env(), cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    child = subprocess.Popen([sys.executable, str(CHILD), str(killed), str(ckpt), "hang-at", "18"], env=child_env(),
                             cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while not (ckpt / "ready").exists():
            assert child.poll() is None, child.stderr.read()
            assert time.monotonic() < deadline, "the training child never reached the step to kill it at"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        _, full_errors = full_run.communicate(timeout=180)
    finally:
        for proc in (child, full_run):
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
    assert full_run.returncode == 0, full_errors
    assert child.returncode == -signal.SIGKILL
    latest = ckpt / "run-2_3.ckpt"  # step 15 = epoch 2, step 3 of 12: mid-epoch
    assert latest.exists() and sorted(p.name for p in ckpt.glob("*.ckpt")) == ["run-1_10.ckpt", "run-2_3.ckpt"]
    assert not list(ckpt.glob(".*tmp"))
    resumed = subprocess.run([sys.executable, str(CHILD), str(killed), str(ckpt), "resume", str(latest)], env=child_env(),
                             cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    uninterrupted = _losses(full)
    interrupted = _losses(killed)
    assert [s for s, _ in uninterrupted] == list(range(1, 25))
    # Steps 1..17 ran before the kill; the resumed run repeats 16 and 17 and goes on to the end.
    before = interrupted[:17]
    after = interrupted[17:]
    assert [s for s, _ in after] == list(range(16, 25))
    assert before == uninterrupted[:17]
    assert after == uninterrupted[15:]


def test_in_process_resume_mid_epoch_repeats_the_losses(tmp_path):
    md.config.set_seed(2)
    losses = []
    record = LambdaCallback(on_train_step_end=lambda c: losses.append(c.original_args().net_outputs))
    saver = ModelCheckpoint("m", tmp_path, CheckpointConfig(save_checkpoint_steps=7, keep_checkpoint_max=0))
    make_model(seed=1).train(2, blob_dataset(shuffle=True, augment=True), callbacks=[record, saver])
    full = list(losses)
    assert [Path(p).name for p in saver.saved] == ["m-1_7.ckpt", "m-2_2.ckpt", "m-2_9.ckpt"]
    for path, done in (("m-1_7.ckpt", 7), ("m-2_2.ckpt", 14)):
        losses.clear()
        make_model(seed=99).train(2, blob_dataset(shuffle=True, augment=True), callbacks=[record],
                                  resume_from=tmp_path / path)
        assert losses == full[done:], path


def test_keep_checkpoint_max_and_atomic_writes(tmp_path):
    saver = ModelCheckpoint("k", tmp_path, CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=3))
    make_model().train(2, blob_dataset(rows=48, batch=8), callbacks=[saver])  # 12 steps: saves at 2,4,..,12
    assert sorted(os.listdir(tmp_path)) == ["k-2_2.ckpt", "k-2_4.ckpt", "k-2_6.ckpt"]


def test_loading_another_networks_checkpoint_names_the_keys(tmp_path):
    model = make_model()
    path = model.save_checkpoint(tmp_path / "a.ckpt")

    class Other(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Linear(4, 16))
            self.tail = torch.nn.Linear(16, 3)

        def forward(self, x):
            return self.tail(self.body(x))

    other = Model(Other(), device="cpu")
    with pytest.raises(CheckpointMismatchError) as info:
        other.load_checkpoint(path)
    message = str(info.value)
    assert "missing keys (in the network, not the checkpoint): tail.bias, tail.weight" in message
    assert "unexpected keys (in the checkpoint, not the network): head.bias, head.weight" in message


def test_shape_mismatch_is_named(tmp_path):
    path = make_model().save_checkpoint(tmp_path / "a.ckpt")
    with pytest.raises(CheckpointMismatchError, match=r"head.weight: checkpoint \(3, 16\) vs network \(5, 16\)"):
        Model(TinyNet(classes=5), device="cpu").load_checkpoint(path)


def test_backup_and_restore_resumes_automatically_and_cleans_up(tmp_path):
    md.config.set_seed(4)
    epochs_run = []
    count = LambdaCallback(on_train_epoch_begin=lambda c: epochs_run.append(c.original_args().cur_epoch_num))

    def crash_in_epoch_2(ctx):
        if ctx.original_args().cur_epoch_num == 2 and ctx.original_args().cur_step_in_epoch == 2:
            raise KeyboardInterrupt

    backup = BackupAndRestore(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        make_model().train(3, blob_dataset(rows=32), callbacks=[count, backup,
                                                               LambdaCallback(on_train_step_end=crash_in_epoch_2)])
    assert (tmp_path / "backup.ckpt").exists()
    make_model().train(3, blob_dataset(rows=32), callbacks=[count, BackupAndRestore(tmp_path)])
    assert epochs_run == [1, 2, 2, 3]
    assert not (tmp_path / "backup.ckpt").exists()


def test_sigterm_checkpoints_and_stops_cleanly(tmp_path):
    script = (
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "from trainer_nets import blob_dataset, make_model\n"
        "from minddata.trainer import LambdaCallback, OnRequestExit\n"
        "steps = []\n"
        "def term(ctx):\n"
        "    steps.append(ctx.original_args().cur_step_num)\n"
        "    if len(steps) == 3: os.kill(os.getpid(), signal.SIGTERM)\n"
        f"exit_cb = OnRequestExit(directory={str(tmp_path)!r}, file_name='term')\n"
        "make_model().train(5, blob_dataset(), callbacks=[LambdaCallback(on_train_step_end=term), exit_cb])\n"
        "print('steps', steps)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=child_env(), cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "steps [1, 2, 3]" in done.stdout
    assert "signal 15 received" in done.stderr
    state = torch.load(tmp_path / "term.ckpt", weights_only=False)
    assert state["global_step"] == 3


def test_resume_restores_the_learning_rate_schedule(tmp_path):
    def run(resume=None):
        model = make_model(lr=1.0)
        schedule = torch.optim.lr_scheduler.StepLR(model.optimizer, step_size=1, gamma=0.5)
        saver = ModelCheckpoint("lr", tmp_path, CheckpointConfig(save_checkpoint_steps=4, keep_checkpoint_max=0))
        # The resumed run lists its callbacks differently: states go to callbacks by class, not position.
        callbacks = [saver] if resume is None else [History()]
        callbacks.append(LearningRateScheduler(schedule, interval="step"))
        model.train(2, blob_dataset(rows=48), callbacks=callbacks, resume_from=resume)
        return model.optimizer.param_groups[0]["lr"], schedule.last_epoch

    full = run()
    assert full == (pytest.approx(0.5**12), 12)
    assert run(resume=tmp_path / "lr-1_4.ckpt") == full  # the scheduler continues from step 4, not from 0
