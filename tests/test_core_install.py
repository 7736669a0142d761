"""``pip install . && minddata bench`` (the README's first command) needs only the core dependencies:
the optional packages of the extras (SciPy, torch, DALI, Ray, the web stack...) are imported where
they are used, never when minddata, its kernels or its bench load. The bench runs here in a child
process (and its own per-round children) in which importing any of them fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import minddata

# The top-level modules of every extra (and of the test tools), none of them a core dependency.
OPTIONAL = (
    "scipy", "torch", "torchvision", "jax", "jaxlib", "ray", "nvidia", "cupy", "av", "fastapi", "uvicorn",
    "starlette", "prometheus_client", "httptools", "onnx", "onnxruntime", "jieba", "sentencepiece", "regex",
    "fontTools", "matplotlib", "tqdm", "sklearn", "psutil", "webdataset", "hypothesis", "pytest",
)

BLOCKER = f"""
import sys

_OPTIONAL = frozenset({OPTIONAL!r})


class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _OPTIONAL:
            raise ModuleNotFoundError(f"No module named {{name!r}} (not a core dependency)", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
"""


def test_bench_runs_with_only_the_core_dependencies(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    package_root = Path(minddata.__file__).resolve().parents[1]  # the checkout, or site-packages
    env = dict(os.environ, MINDDATA_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(site), str(package_root)]))
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from minddata.cli import main; sys.exit(main(sys.argv[1:]))",
         "bench", "--num-images", "24", "--rounds", "1", "--batch-size", "8"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    for pipeline in ("train", "infer224", "yolo416"):
        assert any(line.startswith(pipeline) for line in done.stdout.splitlines()), done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-4000:]
