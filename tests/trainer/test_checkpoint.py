"""Checkpoints: exact resume after SIGKILL, atomic files, keep_checkpoint_max, key mismatch, SIGTERM, loading
with weights_only (a malicious file is refused without running its payload)."""

from __future__ import annotations

import os
import pickle
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
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
    UnsafeCheckpointError,
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


def test_resume_from_a_checkpoint_of_another_dataset_or_seed_is_refused(tmp_path):
    md.config.set_seed(2)
    saver = ModelCheckpoint("m", tmp_path, CheckpointConfig(save_checkpoint_steps=7, keep_checkpoint_max=0))
    make_model(seed=1).train(1, blob_dataset(shuffle=True), callbacks=[saver])
    checkpoint = tmp_path / "m-1_7.ckpt"
    for dataset, match in ((blob_dataset(rows=80, shuffle=True), "another pipeline"),
                           (blob_dataset(batch=4, shuffle=True), "another pipeline"),
                           (blob_dataset(shuffle=False), "shuffle")):
        md.config.set_seed(2)
        with pytest.raises(ValueError, match=match):
            make_model().train(1, dataset, resume_from=checkpoint)
    md.config.set_seed(9)
    with pytest.raises(ValueError, match="saved by a run with seed 2"):
        make_model().train(1, blob_dataset(shuffle=True), resume_from=checkpoint)


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
    state = torch.load(tmp_path / "term.ckpt", weights_only=True)
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


class _Payload:
    """Unpickling this creates ``marker`` (as ``os.system`` or anything else could run)."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _malicious_checkpoint(tmp_path: Path, marker: Path) -> Path:
    """A checkpoint of make_model()'s network whose data state is the payload."""
    control = tmp_path / "control-marker"
    pickle.loads(pickle.dumps(_Payload(control))).close()  # the payload is live: plain unpickling runs it
    assert control.exists()
    state = torch.load(make_model().save_checkpoint(tmp_path / "good.ckpt"), weights_only=True)
    state.update(epoch=0, step_in_epoch=1, global_step=1, data_state=_Payload(marker), callbacks=[])
    path = tmp_path / "evil.ckpt"
    torch.save(state, path)
    return path


def test_a_checkpoint_whose_unpickling_runs_code_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "pwned"
    path = _malicious_checkpoint(tmp_path, marker)
    with pytest.raises(UnsafeCheckpointError, match=r"refused to load .*evil\.ckpt.*io\.open.*weights_only=True"):
        make_model().load_checkpoint(path)
    assert not marker.exists()


def test_resume_from_a_malicious_checkpoint_is_refused_before_training(tmp_path):
    marker = tmp_path / "pwned"
    path = _malicious_checkpoint(tmp_path, marker)
    steps = []
    with pytest.raises(UnsafeCheckpointError):
        make_model().train(1, blob_dataset(), resume_from=path,
                           callbacks=[LambdaCallback(on_train_step_end=lambda c: steps.append(1))])
    assert not marker.exists() and steps == []


def test_a_plain_pickle_with_a_payload_is_refused_too(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "raw.ckpt"
    with open(path, "wb") as f:
        pickle.dump({"format": "minddata-checkpoint", "network": _Payload(marker)}, f, protocol=2)
    with pytest.raises(UnsafeCheckpointError, match="refused to load"):
        make_model().load_checkpoint(path)
    assert not marker.exists()


def test_a_damaged_file_is_named_as_unreadable(tmp_path):
    path = tmp_path / "broken.ckpt"
    path.write_bytes(Path(make_model().save_checkpoint(tmp_path / "good.ckpt")).read_bytes()[:300])
    with pytest.raises(md.errors.ArgumentError, match=r"broken\.ckpt.* is not a readable checkpoint"):
        make_model().load_checkpoint(path)


def test_a_mid_training_checkpoint_holds_only_tensors_and_plain_values(tmp_path):
    saver = ModelCheckpoint("p", tmp_path, CheckpointConfig(save_checkpoint_steps=5, keep_checkpoint_max=1))
    make_model().train(1, blob_dataset(shuffle=True), callbacks=[saver, History()])
    path = tmp_path / "p-1_10.ckpt"
    assert torch.serialization.get_unsafe_globals_in_checkpoint(path) == []
    state = torch.load(path, weights_only=True)  # no allowlist at all
    assert set(state["data_state"]) >= {"seed", "shard_seed", "epoch", "row"}
    assert isinstance(state["rng"]["numpy"]["key"], list)


def test_the_numpy_rng_state_is_restored_from_plain_values(tmp_path):
    model = make_model()
    np.random.seed(123)
    path = model.save_checkpoint(tmp_path / "r.ckpt")
    expected = np.random.random(3)
    np.random.seed(0)
    from minddata.trainer.model import _set_rng_state

    _set_rng_state(model.load_checkpoint(path)["rng"])
    np.testing.assert_array_equal(np.random.random(3), expected)


def test_a_version_1_checkpoint_with_numpy_arrays_still_loads(tmp_path):
    model = make_model()
    state = torch.load(model.save_checkpoint(tmp_path / "v2.ckpt"), weights_only=True)
    np.random.seed(7)
    state.update(version=1, rng={"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
                                 "python": random.getstate()})
    expected = np.random.random(3)
    torch.save(state, tmp_path / "v1.ckpt")
    before = set(torch.serialization.get_safe_globals())
    from minddata.trainer.model import _set_rng_state

    loaded = make_model(seed=5).load_checkpoint(tmp_path / "v1.ckpt")
    _set_rng_state(loaded["rng"])
    np.testing.assert_array_equal(np.random.random(3), expected)
    # the NumPy allowance ends with the load (torch keeps no order among its allowed globals)
    assert set(torch.serialization.get_safe_globals()) == before


class _CustomState:
    def __init__(self, value: int) -> None:
        self.value = value


class _CustomCallback(LambdaCallback):
    def __init__(self) -> None:
        super().__init__()
        self.value = 0

    def state_dict(self):
        return {"custom": _CustomState(41)}

    def load_state_dict(self, state):
        self.value = state["custom"].value


def test_a_callback_state_of_your_own_type_loads_inside_safe_globals(tmp_path):
    saver = ModelCheckpoint("c", tmp_path, CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=1))
    make_model().train(1, blob_dataset(rows=16), callbacks=[saver, _CustomCallback()])
    path = tmp_path / "c-1_2.ckpt"
    with pytest.raises(UnsafeCheckpointError, match=r"_CustomState.*safe_globals"):
        make_model().load_checkpoint(path)
    resumed = _CustomCallback()
    with torch.serialization.safe_globals([_CustomState]):
        make_model().train(1, blob_dataset(rows=16), callbacks=[resumed], resume_from=path)
    assert resumed.value == 41
