"""``minddata serve`` start-up: bad input fails at once with one line and exit status 2; the web stack
is imported only when a server starts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from minddata.bench.serve_process import ServerProcess


def serve_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minddata.cli", "serve", *args, "--port", "0"],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("content, message", [
    ("def ops(:\n", "failed to load: SyntaxError"),
    ("x = 1\n", "defines no ops"),
    ("from minddata import vision\n\ndef ops():\n    return [vision.Resize((8, 8))]\n", "fails on a 97x61 test JPEG"),
])
def test_bad_pipeline_file_fails_with_one_line(tmp_path, content, message):
    path = tmp_path / "bad.py"
    path.write_text(content)
    result = serve_cli(str(path))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("minddata serve: error:"), result.stderr
    assert "listening" not in result.stdout


@pytest.mark.parametrize("name, content, message", [
    ("model.onnx", b"not a protobuf", "could not load"),
    ("model.pt", b"PK\x03\x04 broken zip", "not a TorchScript file"),
    ("model.bin", b"\x00\x01", "neither an ONNX file"),
])
def test_bad_model_fails_with_one_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    result = serve_cli("infer224", "--model", str(path))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


def test_unknown_pipeline_name_fails_with_one_line():
    result = serve_cli("no_such_pipeline")
    assert result.returncode == 2
    assert "unknown pipeline 'no_such_pipeline'" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "infer224, yolo416" in result.stderr  # the standard pipelines, by name


def test_import_minddata_does_not_import_the_web_stack():
    code = ("import sys, minddata, minddata.serve, minddata.cli; "
            "print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette', 'prometheus_client') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_missing_web_stack_names_the_extra():
    code = ("import sys; sys.modules['fastapi'] = None; from minddata.cli import main; "
            "sys.exit(main(['serve', 'infer224', '--port', '0']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "pip install 'minddata[serve]'" in out.stderr


def test_port_in_use_fails_with_one_line():
    with ServerProcess(["infer224"]) as server:
        port = server.url.rsplit(":", 1)[1]
        result = subprocess.run([sys.executable, "-m", "minddata.cli", "serve", "infer224", "--port", port],
                                capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr


def test_pipeline_nice_outside_0_to_19_fails_with_one_line():
    result = serve_cli("infer224", "--pipeline-nice", "20")
    assert result.returncode == 2
    assert "--pipeline-nice: expected a whole number from 0 to 19, found 20" in result.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="nice values are per thread only on Linux")
def test_pipeline_threads_run_nicer_than_the_request_handling():
    import os

    base = os.getpriority(os.PRIO_PROCESS, 0)  # the server inherits it
    with ServerProcess(["infer224", "--workers", "2", "--pipeline-nice", "7"]) as server:
        nice = {}
        for tid in os.listdir(f"/proc/{server.pid}/task"):
            with open(f"/proc/{server.pid}/task/{tid}/stat") as f:
                nice[int(tid)] = int(f.read().rsplit(")", 1)[1].split()[16])
    assert nice[server.pid] == base  # the event loop (the main thread) keeps its priority
    # Two map workers and the session's delivery thread, at least.
    assert sum(value == min(19, base + 7) for value in nice.values()) >= 3, nice
