"""The ``minddata`` command and the benchmark package behind ``minddata bench``.

Runs ``main()`` in-process (fast, sees the output) and the installed console script once. Tests that
iterate a real pipeline need the dataset API (``minddata.ImageFolderDataset``,
``minddata.NumpySlicesDataset``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, JpegImagePlugin

from minddata import _devices
from minddata._version import __version__
from minddata.bench import images, overhead, pipelines, runner
from minddata.cli import main

TINY = (64, 48)


@pytest.fixture(scope="module")
def tiny_images(tmp_path_factory) -> Path:
    """8 small JPEGs in 2 classes."""
    folder = tmp_path_factory.mktemp("tiny")
    images.generate(folder, num_images=8, num_classes=2, seed=3, size=TINY)
    return folder


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


# --- minddata --version ---------------------------------------------------------------------------


def test_version_prints_every_library(capsys):
    rc, out, err = _run(capsys, "--version")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == f"minddata {__version__}"
    for name in ("Python", "numpy", "Pillow", "OpenCV"):
        assert any(line.startswith(name + " ") for line in lines), f"{name} missing from:\n{out}"
    assert "JPEG: libjpeg" in out


def test_console_script_is_installed(tmp_path):
    # Outside the checkout, so the bare minddata/ folder cannot stand in for the installed package.
    script = shutil.which("minddata", path=str(Path(sys.executable).parent)) or shutil.which("minddata")
    assert script, "the 'minddata' console script is not installed: pip install ."
    proc = subprocess.run([script, "--version"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"minddata {__version__}\n")


def test_no_command_prints_help_and_fails(capsys):
    rc, out, err = _run(capsys)
    assert rc == 2
    assert "bench" in err and "devices" in err


# --- commands found through the entry-point group ----------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
ABOVE = {"bench": "minddata.bench.command:main", "parity": "minddata.bench.parity:main"}


def test_pyproject_declares_bench_and_parity_as_command_entry_points():
    from minddata.cli import checkout_commands

    assert checkout_commands(ROOT / "pyproject.toml") == ABOVE


def test_installed_metadata_declares_the_commands_pyproject_does():
    from importlib.metadata import entry_points

    from minddata.cli import COMMAND_GROUP

    installed = {ep.name: ep.value for ep in entry_points(group=COMMAND_GROUP)}
    assert installed == ABOVE, "the installed package metadata is stale: pip install --no-deps ."


def test_commands_resolve_to_the_benchmarks_own_functions():
    from minddata.bench import command, parity
    from minddata.cli import declared_commands, load_command

    assert load_command("bench", declared_commands()) is command.main
    assert load_command("parity", declared_commands()) is parity.main


def test_a_pyproject_without_the_group_declares_no_commands(tmp_path):
    from minddata.cli import checkout_commands

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert checkout_commands(tmp_path / "pyproject.toml") == {}
    assert checkout_commands(tmp_path / "missing.toml") == {}


def test_an_undeclared_command_names_the_group_and_the_fix():
    from minddata.cli import load_command
    from minddata.errors import UsageError

    with pytest.raises(UsageError, match=r"declares no 'bench' command .*minddata\.commands.*Reinstall minddata"):
        load_command("bench", {})


def test_a_command_that_does_not_load_names_its_entry_point():
    from minddata.cli import load_command
    from minddata.errors import UsageError

    with pytest.raises(UsageError, match=r"entry point minddata\.bench\.gone:main does not load"):
        load_command("bench", {"bench": "minddata.bench.gone:main"})


@pytest.mark.parametrize(
    "argv, message",
    [
        (("cache", "destroy-session", "-1"), "expected a session id >= 0, found -1"),
        (("cache", "destroy-session", "one"), "expected a session id >= 0, found 'one'"),
        (("serve", "infer224", "--pipeline-nice", "20"), "--pipeline-nice: expected a whole number from 0 to 19, found 20"),
        (("serve", "infer224", "--port", "70000"), "--port: expected a port number from 0 to 65535, found 70000"),
        (("convert", "a", "b", "--shards", "0"), "--shards: expected a whole number >= 1, found 0"),
    ],
)
def test_whole_number_arguments_name_their_range_in_one_line(capsys, argv, message):
    _assert_one_line_error(*_run(capsys, *argv), message)


# --- minddata devices -----------------------------------------------------------------------------


def test_devices_lists_cpu_present_and_others_with_reason(capsys):
    rc, out, err = _run(capsys, "devices")
    assert rc == 0, err
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["CPU", "GPU", "Dvpp"]
    assert lines[0].split()[1] == "present"
    assert "cores" in lines[0] and "Pillow" in lines[0]
    for line in lines[1:]:
        name, state, *rest = line.split()
        assert state in ("present", "absent")
        assert len(" ".join(rest)) > 20, f"{name}: no detail or reason given: {line!r}"


def test_devices_verbose_lists_ops_and_drivers(capsys):
    rc, out, _ = _run(capsys, "devices", "-v")
    assert rc == 0
    assert out.count("ops: ") == 3
    for driver in ("nvjpg", "ascend", "reference"):
        assert f"driver {driver}: " in out


def test_devices_function_matches_registry():
    from minddata.ops import ops_on

    found = {d.name: d for d in _devices.devices()}
    assert list(found) == ["CPU", "GPU", "Dvpp"]
    assert found["CPU"].present
    assert found["CPU"].ops == ops_on("CPU")
    ref = [d for d in found["Dvpp"].drivers if d.name == "reference"]
    assert ref and ref[0].available


def test_gpu_absent_without_dali_names_the_extra(monkeypatch):
    from minddata.ops import probe

    monkeypatch.setattr(probe, "visible_gpus", lambda: (["NVIDIA H200"], ""))
    monkeypatch.setattr(probe, "dali_status", lambda: (False, probe.GPU_INSTALL_HINT))
    # Without DALI the GPU falls back to the torch driver: a CUDA build of torch here would take it.
    monkeypatch.setattr(probe, "torch_status", lambda: (False, False, "PyTorch not installed"))
    cpu, gpu, dvpp = _devices.devices()
    assert not gpu.present
    # Neither driver: the report says both, as the probe pipelines use does, then the fix.
    assert gpu.detail.startswith("PyTorch not installed; nvidia-dali-cuda120 not installed: pip install 'minddata[gpu]'; fix: ")
    nvjpg = next(d for d in dvpp.drivers if d.name == "nvjpg")
    assert not nvjpg.available and "pip install 'minddata[gpu]'" in nvjpg.detail


def test_gpu_absent_without_gpu(monkeypatch):
    from minddata.ops import probe

    monkeypatch.setattr(probe, "visible_gpus", lambda: ([], "no NVIDIA GPU visible"))
    monkeypatch.setattr(probe, "dali_status", lambda: (True, "DALI 1.50"))
    _, gpu, dvpp = _devices.devices()
    assert not gpu.present and gpu.detail.startswith("no NVIDIA GPU visible; fix: run on a machine with an NVIDIA GPU")
    assert not dvpp.present


def test_gpu_and_nvjpg_present_on_h200_with_dali(monkeypatch):
    from minddata.ops import probe

    monkeypatch.setattr(probe, "visible_gpus", lambda: (["NVIDIA H200"], ""))
    monkeypatch.setattr(probe, "dali_status", lambda: (True, "DALI 1.50"))
    _, gpu, dvpp = _devices.devices()
    assert gpu.present and "NVIDIA H200" in gpu.detail
    assert dvpp.present and "nvjpg" in dvpp.detail


def test_the_gpu_report_agrees_with_the_probe_on_the_chosen_gpu(monkeypatch):
    from minddata.ops import probe

    monkeypatch.setattr(probe, "visible_gpus", lambda: (["NVIDIA H200"], ""))
    monkeypatch.setattr(probe, "dali_status", lambda: (True, "DALI 1.50"))
    from minddata import config

    before = config.get_gpu_device_id()
    config.set_gpu_device_id(3)
    try:
        _, gpu, _ = _devices.devices()
    finally:
        config.set_gpu_device_id(before)
    assert not gpu.present and "set_gpu_device_id(3) names GPU 3" in gpu.detail


def test_a_device_whose_report_raises_is_listed_absent_with_the_reason():
    from minddata.ops.devices import Device

    class Broken(Device):
        name = "Broken"

        def probe(self, options=None):
            raise RuntimeError("driver library crashed")

        def backends(self):
            return ("broken",)

    (info,) = [_devices._report(Broken())]
    assert not info.present and "RuntimeError: driver library crashed" in info.detail and "Device.probe" in info.detail


def test_nvjpg_needs_a_gpu_with_the_engine(monkeypatch):
    from minddata.ops import probe

    monkeypatch.setattr(probe, "visible_gpus", lambda: (["Tesla T4"], ""))
    monkeypatch.setattr(probe, "dali_status", lambda: (True, "DALI 1.50"))
    _, gpu, dvpp = _devices.devices()
    assert gpu.present
    nvjpg = next(d for d in dvpp.drivers if d.name == "nvjpg")
    assert not nvjpg.available and "A100/H100/H200" in nvjpg.detail


@pytest.fixture
def fake_nvidia_smi(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(
        "#!/bin/sh\n"
        "echo 'GPU 0: NVIDIA H200 (UUID: GPU-aaaa-0000)'\n"
        "echo 'GPU 1: NVIDIA A10 (UUID: GPU-bbbb-1111)'\n"
    )
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


def test_visible_gpus_parses_nvidia_smi(fake_nvidia_smi):
    assert _devices.visible_gpus() == (["NVIDIA H200", "NVIDIA A10"], "")


@pytest.mark.parametrize(
    "spec, expected",
    [("1", ["NVIDIA A10"]), ("GPU-aaaa", ["NVIDIA H200"]), ("1,0", ["NVIDIA A10", "NVIDIA H200"]),
     ("0,7,1", ["NVIDIA H200"]), ("", []), ("-1", [])],
)
def test_visible_gpus_honours_cuda_visible_devices(fake_nvidia_smi, monkeypatch, spec, expected):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", spec)
    names, why = _devices.visible_gpus()
    assert names == expected
    assert bool(why) == (not expected)


# --- minddata bench: argument errors --------------------------------------------------------------


def _assert_one_line_error(rc: int, out: str, err: str, *needles: str) -> None:
    assert rc == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"


def test_bench_missing_folder(capsys, tmp_path):
    missing = tmp_path / "nope"
    _assert_one_line_error(*_run(capsys, "bench", "--data", str(missing)), str(missing), "no such folder")


def test_bench_empty_folder(capsys, tmp_path):
    _assert_one_line_error(*_run(capsys, "bench", "--data", str(tmp_path)), "no images found", "<class>")


def test_bench_folder_with_images_but_no_classes(capsys, tmp_path):
    Image.new("RGB", (8, 8)).save(tmp_path / "a.jpg")
    _assert_one_line_error(*_run(capsys, "bench", "--data", str(tmp_path)), "no images found")


def test_bench_data_is_a_file(capsys, tmp_path):
    f = tmp_path / "x.jpg"
    f.write_bytes(b"")
    _assert_one_line_error(*_run(capsys, "bench", "--data", str(f)), "not a folder")


def test_bench_unknown_pipeline(capsys, tiny_images):
    _assert_one_line_error(
        *_run(capsys, "bench", "--data", str(tiny_images), "--pipeline", "resnet"), "resnet", "infer224"
    )


def test_bench_json_into_a_missing_folder(capsys, tiny_images, tmp_path):
    target = tmp_path / "no" / "r.json"
    _assert_one_line_error(
        *_run(capsys, "bench", "--data", str(tiny_images), "--json", str(target)), "--json", "does not exist"
    )


@pytest.mark.parametrize("flag", ["--workers", "--batch-size", "--epochs", "--num-images"])
def test_bench_rejects_non_positive_numbers(capsys, flag):
    _assert_one_line_error(*_run(capsys, "bench", flag, "0"), flag, ">= 1")


# --- minddata bench: runs -------------------------------------------------------------------------


def test_bench_tiny_run(capsys, tiny_images, tmp_path):
    out_json = tmp_path / "r.json"
    rc, out, err = _run(
        capsys, "bench", "--data", str(tiny_images), "--pipeline", "infer224", "--batch-size", "4",
        "--json", str(out_json),
    )
    assert rc == 0, err
    assert "images/s" in out and "infer224" in out
    payload = json.loads(out_json.read_text())
    (result,) = payload["results"]
    assert result["pipeline"] == "infer224"
    assert result["images"] == 8 and result["batches"] == 2
    assert result["output_shape"] == [4, 3, 224, 224]
    assert result["images_per_s"] > 0 and result["cpu_seconds"] > 0 and result["peak_rss_mb"] > 0
    assert payload["decode_reference"]["images"] == 8


def test_bench_generates_and_caches_default_images(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("MINDDATA_CACHE", str(tmp_path / "cache"))
    out_json = tmp_path / "r.json"
    argv = ("bench", "--num-images", "6", "--pipeline", "yolo416", "--batch-size", "4", "--epochs", "2",
            "--json", str(out_json))
    rc, out, err = _run(capsys, *argv)
    assert rc == 0, err
    assert "(generated now)" in out
    assert list((tmp_path / "cache" / "bench").glob("images-6-*"))
    rc, out, err = _run(capsys, *argv)
    assert rc == 0, err
    assert "(cached)" in out
    (result,) = json.loads(out_json.read_text())["results"]
    assert (result["images"], result["batches"], result["epochs"]) == (12, 4, 2)  # 6 images = 2 batches, x 2 epochs
    assert result["output_shape"] == [4, 3, 416, 416]


# --- bench/images.py ------------------------------------------------------------------------------


def _tree_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*.jpg"))}


def test_images_same_seed_same_bytes(tmp_path):
    images.generate(tmp_path / "a", num_images=12, num_classes=3, seed=7, size=TINY, threads=1)
    images.generate(tmp_path / "b", num_images=12, num_classes=3, seed=7, size=TINY, threads=2)
    images.generate(tmp_path / "c", num_images=12, num_classes=3, seed=8, size=TINY)
    a, b, c = (_tree_bytes(tmp_path / x) for x in "abc")
    assert len(a) == 12
    assert a == b
    assert a.keys() == c.keys() and a != c


def test_images_layout_and_marker(tiny_images):
    assert sorted(p.name for p in tiny_images.iterdir() if p.is_dir()) == ["class_00", "class_01"]
    assert len(images.list_images(tiny_images)) == 8
    marker = json.loads((tiny_images / images.MARKER_NAME).read_text())
    assert marker["num_images"] == 8 and marker["seed"] == 3 and marker["size"] == list(TINY)


def test_images_look_like_imagenet(tmp_path):
    # Full size: about 500x375, q90, 4:2:0, some grayscale and progressive, photo-like file sizes.
    images.generate(tmp_path, num_images=60, num_classes=6, seed=0)
    files = images.list_images(tmp_path)
    sizes = np.array([f.stat().st_size for f in files]) / 1e3
    opened = [Image.open(f) for f in files]
    assert 50 <= sizes.mean() <= 150, f"mean JPEG size {sizes.mean():.0f} KB"
    assert all(300 <= min(im.size) and max(im.size) <= 600 for im in opened)
    assert len({im.size for im in opened}) > 10, "sizes should vary"
    rgb = [im for im in opened if im.mode == "RGB"]
    gray = [im for im in opened if im.mode == "L"]
    assert 1 <= len(gray) <= 15
    assert all(JpegImagePlugin.get_sampling(im) == 2 for im in rgb)  # 4:2:0
    assert 1 <= sum(bool(im.info.get("progressive")) for im in opened) <= 15


def test_ensure_images_reuses_only_a_matching_cache(tmp_path):
    folder, made = images.ensure_images(num_images=4, num_classes=2, seed=1, size=TINY, cache_dir=tmp_path)
    assert made and len(images.list_images(folder)) == 4
    stamp = (folder / images.MARKER_NAME).stat().st_mtime_ns
    again, made = images.ensure_images(num_images=4, num_classes=2, seed=1, size=TINY, cache_dir=tmp_path)
    assert again == folder and not made
    assert (folder / images.MARKER_NAME).stat().st_mtime_ns == stamp
    # A marker with other parameters (e.g. from an older generator) is not trusted: regenerate.
    marker = json.loads((folder / images.MARKER_NAME).read_text())
    (folder / images.MARKER_NAME).write_text(json.dumps(marker | {"generator_version": 0}))
    _, made = images.ensure_images(num_images=4, num_classes=2, seed=1, size=TINY, cache_dir=tmp_path)
    assert made
    assert not list(tmp_path.glob("*.tmp-*")), "temporary folders left behind"


def test_ensure_images_refuses_a_foreign_folder(tmp_path):
    folder, _ = images.ensure_images(num_images=2, num_classes=1, seed=0, size=TINY, cache_dir=tmp_path)
    (folder / images.MARKER_NAME).unlink()
    with pytest.raises(FileExistsError, match="not made by this generator"):
        images.ensure_images(num_images=2, num_classes=1, seed=0, size=TINY, cache_dir=tmp_path)
    assert folder.exists()


def test_images_reject_bad_parameters(tmp_path):
    with pytest.raises(ValueError, match="num_images"):
        images.generate(tmp_path, num_images=0)
    with pytest.raises(ValueError, match="num_classes"):
        images.generate(tmp_path, num_images=2, num_classes=3)


def test_default_cache_dir_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("MINDDATA_CACHE", str(tmp_path))
    assert images.default_cache_dir() == tmp_path / "bench"
    monkeypatch.delenv("MINDDATA_CACHE")
    assert images.default_cache_dir() == Path.home() / ".cache" / "minddata" / "bench"


# --- bench/pipelines.py and bench/runner.py -------------------------------------------------------


def test_pipeline_ops_match_their_description():
    for name, spec in pipelines.PIPELINES.items():
        ops = pipelines.make_ops(name)
        assert [op.name for op in ops] == [step.split("(")[0] for step in spec.steps], name
    with pytest.raises(ValueError, match="unknown pipeline 'nope'; choose one of train, infer224, yolo416"):
        pipelines.describe("nope")


@pytest.mark.parametrize("name", list(pipelines.PIPELINES))
def test_pipeline_ops_give_the_declared_shape(name, tiny_images):
    # Eager calls, no engine: every image, colour and grayscale, comes out as the spec says.
    for path in images.list_images(tiny_images):
        x = np.frombuffer(path.read_bytes(), dtype=np.uint8)
        for op in pipelines.make_ops(name):
            x = op(x)
        assert x.shape == pipelines.PIPELINES[name].image_shape and x.dtype == np.float32, path


class _FakeIterator:
    """MindSpore's iterator contract: each pass over it is one epoch; ``close`` stops it."""

    def __init__(self, batches, num_epochs):
        self.batches, self.epochs_left, self.closed = batches, num_epochs, False

    def __iter__(self):
        if self.epochs_left == 0:
            raise RuntimeError("read past num_epochs")
        self.epochs_left -= 1
        return iter(self.batches)

    def close(self):
        self.closed = True


class _FakeDataset:
    def __init__(self, batches):
        self.batches, self.iterators = batches, []

    def create_dict_iterator(self, num_epochs, output_numpy):
        assert output_numpy
        it = _FakeIterator(self.batches, num_epochs)
        self.iterators.append(it)
        return it


def _batch(n: int, shape=(3, 224, 224)) -> dict:
    return {"image": np.zeros((n, *shape), np.float32), "label": np.zeros(n, np.int32)}


def test_runner_counts_epochs_and_closes(monkeypatch):
    ds = _FakeDataset([_batch(4), _batch(4), _batch(2)])
    monkeypatch.setattr(pipelines, "build", lambda *a, **k: ds)
    r = runner.run("infer224", "unused", workers=2, batch_size=4, epochs=3)
    assert (r.images, r.batches, r.epochs) == (30, 9, 3)
    assert r.output_shape == [4, 3, 224, 224] and r.output_dtype == "float32"
    assert r.images_per_s == pytest.approx(r.images / r.seconds)
    assert 0 < r.first_batch_s <= r.seconds and r.peak_rss_mb > 0
    assert ds.iterators[0].closed


def test_runner_times_the_steady_state_from_the_first_batch_to_the_last(monkeypatch):
    # A clock the batches move: 1 s of start-up before the first batch, then 0.1 s per batch.
    clock = [100.0]
    fake_time = types.SimpleNamespace(**{name: getattr(time, name) for name in dir(time) if not name.startswith("_")})
    fake_time.perf_counter = lambda: clock[0]
    monkeypatch.setattr(runner, "time", fake_time)  # the runner's clock only, not the process's

    class Timed(_FakeDataset):
        def create_dict_iterator(self, num_epochs, output_numpy):
            def batches():
                for k, batch in enumerate(self.batches):
                    clock[0] += 1.0 if k == 0 else 0.1
                    yield batch
            return _FakeIterator(batches(), num_epochs)

    monkeypatch.setattr(pipelines, "build", lambda *a, **k: Timed([_batch(4)] * runner.STEADY_MIN_BATCHES))
    r = runner.run("infer224", "unused", batch_size=4, epochs=1)
    later = runner.STEADY_MIN_BATCHES - 1  # batches after the first, 0.1 s each
    assert r.steady_images_per_s == pytest.approx(4 * later / (0.1 * later))


@pytest.mark.parametrize(
    "batch, match",
    [(_batch(4, (3, 416, 416)), "shape"), ({"image": np.zeros((4, 3, 224, 224), np.float32)}, "columns"),
     ({"image": np.zeros((4, 3, 224, 224), np.float64), "label": np.zeros(4)}, "float32"),
     (_batch(8), "batch_size")],
)
def test_runner_rejects_wrong_output(monkeypatch, batch, match):
    ds = _FakeDataset([batch])
    monkeypatch.setattr(pipelines, "build", lambda *a, **k: ds)
    with pytest.raises(RuntimeError, match=match):
        runner.run("infer224", "unused", batch_size=4)
    assert ds.iterators[0].closed


def test_decode_reference(tiny_images):
    r = runner.decode_reference(tiny_images, workers=2)
    assert r.pipeline == "decode-only" and r.images == 8
    assert r.images_per_s > 0 and r.cpu_seconds > 0


_BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass\n"


def test_meter_counts_reaped_worker_processes():
    meter = runner._Meter()
    meter.start()
    subprocess.run([sys.executable, "-c", _BURN], check=True)
    meter.stop()
    assert meter.cpu_seconds >= 0.35


def test_meter_counts_live_worker_processes():
    code = _BURN + "print('done', flush=True)\nimport sys\nsys.stdin.read()\n"
    meter = runner._Meter()
    meter.start()
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "done\n"
        meter.stop()
        assert meter.worker_processes >= 1 and meter.worker_peak_rss_mb > 0
        assert meter.cpu_seconds >= 0.35
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


# --- bench/overhead.py ----------------------------------------------------------------------------


def test_overhead_python_loop_reference():
    r = overhead.run_python_loop(1000, repeats=2)
    assert r.rows == 1000 and len(r.seconds) == 2 and r.rows_per_s > 0


def test_overhead_rejects_a_missing_interpreter(capsys, tmp_path):
    rc = overhead.main(["--rows", "10", "--mindspore", str(tmp_path / "python")])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--mindspore" in err


def test_overhead_bad_argument_is_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        overhead.main(["--rows", "0"])
    assert exc.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def _fake_python(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fakepython"
    script.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    script.chmod(0o755)
    return str(script)


def test_overhead_reads_the_peer_result(tmp_path):
    python = _fake_python(tmp_path, f"""
        import json, sys
        print("some log line")
        times = {{w: [0.5, 0.25, 1.0] for w in json.loads(sys.argv[5])}}  # argv: -c SCRIPT rows repeats workers tag
        print({overhead.RESULT_TAG!r} + json.dumps({{"version": "2.9", "numpy": "1.26", "times": times}}))
    """)
    version, results = overhead.run_mindspore(python, rows=100, workers_list=[1, 2], repeats=3)
    assert version == "2.9 (numpy 1.26)"
    assert [(r.impl, r.workers, r.rows_per_s) for r in results] == [("mindspore", 1, 200.0), ("mindspore", 2, 200.0)]


def test_overhead_reports_a_failing_peer(tmp_path):
    python = _fake_python(tmp_path, """
        import sys
        sys.exit("ModuleNotFoundError: No module named 'mindspore'")
    """)
    with pytest.raises(RuntimeError, match="No module named 'mindspore'"):
        overhead.run_mindspore(python, rows=100, workers_list=[1], repeats=1)


def test_overhead_minddata_pipeline(capsys, tmp_path):
    out_json = tmp_path / "o.json"
    rc = overhead.main(["--rows", "2000", "--repeats", "1", "--json", str(out_json)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "minddata" in out and "python loop" in out
    results = json.loads(out_json.read_text())["results"]
    assert [(r["impl"], r["workers"]) for r in results] == [("minddata", 1), ("minddata", 2)]


def test_first_batch_clock_starts_before_build(monkeypatch):
    # Start-up work done while building counts in first-batch latency and total time.
    def slow_build(*a, **k):
        time.sleep(0.2)
        return _FakeDataset([_batch(4)])

    monkeypatch.setattr(pipelines, "build", slow_build)
    r = runner.run("train", "unused", batch_size=4)
    assert r.first_batch_s >= 0.2 and r.seconds >= 0.2


# --- minddata bench: profiler verdicts, pipeline files, devices, plots, peers ---------------------


def test_bench_names_each_pipelines_bottleneck(capsys, tiny_images, tmp_path):
    out_json = tmp_path / "r.json"
    rc, out, err = _run(capsys, "bench", "--data", str(tiny_images), "--pipeline", "train", "--batch-size", "4",
                        "--rounds", "1", "--json", str(out_json))
    assert rc == 0, err
    header = next(line for line in out.splitlines() if line.startswith("pipeline ") and "images/s" in line)
    assert header.endswith("limit")
    assert "\nverdicts (what limits each pipeline, checked against the machine's load; the evidence below each):\n" \
           "  train: " in out
    (result,) = json.loads(out_json.read_text())["results"]
    assert result["verdict"]["line"] and result["verdict"]["label"] in header + out
    # One round (--rounds 1), so the verdict is that round's: a stage (or an op in it), or the consumer.
    names = ("Map[Decode, RandomResizedCrop, RandomHorizontalFlip]", "Batch(4)", "the pipeline is not the bottleneck")
    assert any(name in result["bottleneck"] for name in names), result["bottleneck"]


_PIPELINE_FILE = '''"""Decode and resize to 32x32."""
import minddata as md
from minddata import vision


def build(data_dir, workers, batch_size):
    ds = md.ImageFolderDataset(data_dir, shuffle=False, num_parallel_workers=workers)
    ds = ds.map([vision.Decode(), vision.Resize((32, 32))], input_columns="image", num_parallel_workers=workers)
    return ds.batch(batch_size)
'''


def test_bench_runs_a_pipeline_file(capsys, tiny_images, tmp_path):
    path = tmp_path / "small32.py"
    path.write_text(_PIPELINE_FILE)
    out_json = tmp_path / "r.json"
    rc, out, err = _run(capsys, "bench", "--data", str(tiny_images), "--pipeline", str(path), "--batch-size", "4",
                        "--json", str(out_json))
    assert rc == 0, err
    assert "small32   Decode and resize to 32x32." in out
    (result,) = json.loads(out_json.read_text())["results"]
    assert (result["pipeline"], result["images"], result["output_shape"]) == ("small32", 8, [4, 32, 32, 3])


def test_bench_pipeline_file_without_build(capsys, tiny_images, tmp_path):
    path = tmp_path / "empty.py"
    path.write_text("x = 1\n")
    _assert_one_line_error(*_run(capsys, "bench", "--data", str(tiny_images), "--pipeline", str(path)),
                           "empty.py", "defines no build(data_dir, workers, batch_size)")


def test_bench_missing_pipeline_file(capsys, tiny_images, tmp_path):
    _assert_one_line_error(*_run(capsys, "bench", "--data", str(tiny_images), "--pipeline", str(tmp_path / "p.py")),
                           "p.py", "no such file")


def test_bench_device_that_is_absent(capsys, tiny_images, monkeypatch):
    from minddata.ops import probe

    monkeypatch.setattr(probe, "visible_gpus", lambda: ([], "no NVIDIA GPU visible"))
    _assert_one_line_error(*_run(capsys, "bench", "--data", str(tiny_images), "--device", "gpu"),
                           "--device gpu", "GPU is absent here", "minddata devices")


def test_bench_unknown_device(capsys):
    _assert_one_line_error(*_run(capsys, "bench", "--device", "tpu"), "--device", "tpu")


def test_bench_workers_auto(capsys, tiny_images, tmp_path):
    out_json = tmp_path / "r.json"
    rc, out, err = _run(capsys, "bench", "--data", str(tiny_images), "--pipeline", "infer224", "--batch-size", "4",
                        "--workers", "auto", "--json", str(out_json))
    assert rc == 0, err
    assert "autotuned workers (starting at 1)" in out
    (result,) = json.loads(out_json.read_text())["results"]
    assert result["workers_setting"] == "auto" and result["images"] == 8


def test_bench_plot(capsys, tiny_images, tmp_path):
    png = tmp_path / "b.png"
    rc, out, err = _run(capsys, "bench", "--data", str(tiny_images), "--pipeline", "infer224", "--batch-size", "4",
                        "--plot", str(png))
    assert rc == 0, err
    with Image.open(png) as im:
        assert im.format == "PNG" and im.size[0] > 500


def test_bench_plot_without_matplotlib(capsys, tiny_images, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an environment without it looks like
    _assert_one_line_error(*_run(capsys, "bench", "--data", str(tiny_images), "--plot", str(tmp_path / "b.png")),
                           "--plot needs matplotlib", "pip install 'minddata[plot]'")


def test_bench_unknown_peer(capsys):
    _assert_one_line_error(*_run(capsys, "bench", "--compare", "mindspore,tensorflow"), "tensorflow",
                           "mindspore, dali, torch")


def test_bench_reports_a_peer_that_is_not_installed(capsys, tiny_images, tmp_path, monkeypatch):
    monkeypatch.setenv("MINDDATA_TORCH_PYTHON", str(tmp_path / "no-python"))
    rc, out, err = _run(capsys, "bench", "--data", str(tiny_images), "--pipeline", "infer224", "--batch-size", "4",
                        "--compare", "torch")
    assert rc == 0, err
    assert "torch: not installed" in out and "pip install torch torchvision" in out and "MINDDATA_TORCH_PYTHON" in out


def test_bench_compares_with_a_peer(capsys, tiny_images, tmp_path, monkeypatch):
    # A stand-in interpreter that answers like a peer: its version when probed, a result when run.
    python = _fake_python(tmp_path, """
        import json, sys
        if "_report(" not in sys.argv[2]:
            print("9.9")
        else:
            print("RESULT " + json.dumps(dict(images=8, seconds=0.5, cpu_seconds=1.0, peak_rss_mb=100.0)))
    """)
    monkeypatch.setenv("MINDDATA_MINDSPORE_PYTHON", python)
    rc, out, err = _run(capsys, "bench", "--data", str(tiny_images), "--pipeline", "infer224", "--batch-size", "4",
                        "--compare", "mindspore")
    assert rc == 0, err
    assert f"peer:      mindspore: 9.9 ({python})" in out
    row = next(line for line in out.splitlines() if line.startswith("infer224") and "mindspore" in line)
    assert row.split()[2] == "16" and row.split()[-1].endswith("x")  # 8 images in 0.5 s; minddata / peer


def test_bench_progress_bar_only_on_a_terminal(monkeypatch):
    import io

    from minddata._progress import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("CI", raising=False)
    term, log = Terminal(), io.StringIO()
    for stream in (term, log):
        bar = ProgressBar("train", 100, unit="images", stream=stream, in_logs=False)
        bar(50)
        bar.close()
    assert "\rtrain [##############..............] 50/100 images" in term.getvalue()
    assert log.getvalue() == ""
    monkeypatch.setenv("CI", "true")
    ci = Terminal()
    ProgressBar("train", 100, stream=ci, in_logs=False)(50)
    assert ci.getvalue() == ""


def test_progress_bar_shows_rate_and_time_left():
    import io

    from minddata._progress import ProgressBar

    bar = ProgressBar("preparing", 2000, unit="images", stream=io.StringIO())
    line = bar.line(500, now=bar.start + 2.0)
    assert line.endswith("500/2,000 images  250 images/s  6 s left")


def test_progress_bar_in_a_log_writes_a_line_per_tenth():
    import io

    from minddata._progress import ProgressBar

    log = io.StringIO()
    bar = ProgressBar("converting", 100, unit="images", stream=log)
    for done in range(1, 101):
        bar(done)
    bar.close()
    lines = log.getvalue().splitlines()
    assert len(lines) == 11 and lines[-1].startswith("converting [############################] 100/100 images")


# --- bench/profiler_overhead.py and bench/autotune.py ---------------------------------------------


def test_profiler_overhead_runs_both_pipelines(capsys, tiny_images, tmp_path):
    from minddata.bench import profiler_overhead

    out_json = tmp_path / "o.json"
    rc = profiler_overhead.main(["--data", str(tiny_images), "--rounds", "1", "--rows", "2000", "--batch-size", "4",
                                 "--json", str(out_json)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    results = json.loads(out_json.read_text())["results"]
    assert list(results) == ["train", "engine overhead (map lambda, batch 32)"]
    assert all(len(r["off"]) == len(r["on"]) == 1 and r["median_off"] > 0 for r in results.values())
    assert "target (train: under 3% lower throughput with profiling on): " in out


def test_autotune_benchmark_runs_and_reports_decisions(capsys, tiny_images, tmp_path):
    from minddata.bench import autotune as autotune_bench

    out_json = tmp_path / "a.json"
    rc = autotune_bench.main(["--data", str(tiny_images), "--grid", "1", "--repeats", "1", "--batch-size", "4",
                              "--json", str(out_json)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    (round_,) = json.loads(out_json.read_text())["rounds"]
    assert set(round_["fixed"]) == {"map 1, batch inline", "map 1, batch 2"}
    assert round_["images_per_epoch"] == 8 and isinstance(round_["decisions"], list)
    assert "target (first epoch's second half >= 90% of the best by hand): " in out


def test_autotune_benchmark_window_rate():
    from minddata.bench.autotune import Timeline

    # 100 images per 0.1 s for 1 s, then 200 per 0.1 s.
    marks, n = [], 0
    for i in range(1, 21):
        n += 100 if i <= 10 else 200
        marks.append((i * 0.1, n))
    timeline = Timeline([marks])
    assert timeline.first_reaching(0, 1500, window=256) == 1400
    assert timeline.first_reaching(0, 5000, window=256) is None
    assert timeline.rate(0, 1000) == pytest.approx(2000)


@pytest.fixture
def fake_mig_nvidia_smi(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(
        "#!/bin/sh\n"
        "echo 'GPU 0: NVIDIA H200 (UUID: GPU-aaaa-0000)'\n"
        "echo '  MIG 1g.18gb     Device  0: (UUID: MIG-1111-aaaa)'\n"
        "echo '  MIG 1g.18gb+me  Device  1: (UUID: MIG-2222-bbbb)'\n"
    )
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


def test_mig_instances_are_the_visible_devices(fake_mig_nvidia_smi, monkeypatch):
    assert _devices.visible_gpus() == (["NVIDIA H200 MIG 1g.18gb", "NVIDIA H200 MIG 1g.18gb+me"], "")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "MIG-2222-bbbb")
    assert _devices.visible_gpus() == (["NVIDIA H200 MIG 1g.18gb+me"], "")


@pytest.mark.parametrize("name, engine", [
    ("NVIDIA H200", True), ("NVIDIA H200 MIG 1g.18gb", False), ("NVIDIA H200 MIG 1g.18gb+me", True),
    ("NVIDIA H200 MIG 7g.141gb", True), ("NVIDIA B200", True), ("NVIDIA A10", False), ("Tesla T4", False),
])
def test_nvjpg_is_found_only_where_the_engines_are(name, engine):
    from minddata.ops import probe

    assert probe.has_nvjpg(name) is engine
    assert probe.nvjpg_driver([name], True, "DALI 2.4").available is engine
