#!/usr/bin/env bash
# The device check, for a machine with an NVIDIA GPU and no network (the lent H200: python3 with
# PyTorch, torchvision, CuPy and JAX; no DALI; nothing can be installed from an index there).
#
#   bench/device_check.sh OUT            # on the GPU machine: results under OUT
#   bench/device_check.sh --dry-run      # here, without a GPU: the same steps on emulated devices
#
# Steps, all inside about 8 minutes:
#   1. the machine: GPUs, Python, torch and its CUDA;
#   2. wheels carried in .whl/ (e.g. nvidia-nvimgcodec-cu13, nvidia-nvjpeg) installed with
#      `pip install --no-index --target`; the project itself is NOT installed: the checkout is put on
#      PYTHONPATH (it imports like the installed package) and its Cython kernels are built in place
#      when Cython and a compiler are there (else the pure-Python fallbacks run, and say so);
#   3. `minddata devices -v`;
#   4. the GPU and Dvpp tests with MINDDATA_REQUIRE_GPU=1, so a GPU test that would skip fails;
#   5. the benchmark: YOLOv3 preprocessing and the three standard pipelines on CPU vs Dvpp vs GPU,
#      images/s and CPU-ms per image (python -m minddata.bench.devices).
# Everything is written under OUT (never into the checkout): device_results.md/.json, the logs.
# Exits non-zero when a step fails; later steps still run so the table shows what works.
set -uo pipefail

dry_run=0
if [ "${1:-}" = "--dry-run" ]; then
    dry_run=1
    shift
fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
if [ $# -ge 1 ]; then
    OUT="$1"
elif [ $dry_run = 1 ]; then
    OUT="$(mktemp -d "${TMPDIR:-/tmp}/device-check.XXXXXX")"
else
    OUT="${OUT:?usage: bench/device_check.sh [--dry-run] OUT (a folder for the results, outside the checkout)}"
fi
mkdir -p "$OUT"
case "$(cd "$OUT" && pwd)/" in
    "$ROOT"/*) echo "device_check: OUT must be outside the checkout ($OUT)"; exit 2 ;;
esac
PY="${PYTHON:-python3}"
NUM_IMAGES="${NUM_IMAGES:-$([ $dry_run = 1 ] && echo 64 || echo 2000)}"
WORKERS="${WORKERS:-$($PY -c 'import os; print(min(8, len(os.sched_getaffinity(0))))')}"
export MINDDATA_CACHE="${MINDDATA_CACHE:-${TMPDIR:-/tmp}/minddata-cache}"
export PYTHONUNBUFFERED=1
status=0
started=$(date +%s)
step() { echo; echo "== $1 ($(( $(date +%s) - started )) s)"; }

step "machine"
nvidia-smi -L || echo "nvidia-smi: no GPU listed"
$PY --version
$PY -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, 'GPU visible to torch:', torch.cuda.is_available())" \
    || echo "torch: not importable"

step "wheels and the checkout"
if compgen -G ".whl/*.whl" >/dev/null; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}" || { echo "device_check: carried wheels failed to install"; status=1; }
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
if $PY -c "import Cython" 2>/dev/null; then
    timeout 180 $PY setup.py -q build_ext --inplace >"$OUT/build_ext.log" 2>&1 \
        || echo "device_check: the Cython kernels did not build (see build_ext.log): pure-Python fallbacks run"
fi
$PY -c "import minddata, minddata.ops.cpu.jpeg as j; print('minddata', minddata.__version__, 'from', minddata.__file__); print('JPEG extension:', 'built' if j.AVAILABLE else j.WHY_UNAVAILABLE)" \
    || { echo "device_check: minddata does not import from the checkout"; exit 2; }

step "devices"
$PY -m minddata.cli devices -v 2>&1 | tee "$OUT/devices.txt"

step "tests (GPU, Dvpp, drivers, placement, the trainer on the GPU)"
tests=(tests/ops/test_gpu_device.py tests/ops/test_gpu_torch.py tests/ops/test_gpu_cuda_graph.py
       tests/ops/test_gpu_dali.py tests/engine/test_placement.py tests/ops/test_dvpp.py
       tests/trainer/test_trainer_gpu.py)
if [ $dry_run = 1 ]; then
    require=""
else
    require=1
fi
if ! MINDDATA_REQUIRE_GPU=$require timeout 240 $PY -m pytest -q -p no:cacheprovider -p no:randomly -ra "${tests[@]}" \
        2>&1 | tee "$OUT/device_tests.log"; then
    status=1
fi

step "benchmark: YOLOv3 preprocessing and the standard pipelines, CPU vs Dvpp vs GPU"
extra=()
if [ $dry_run = 1 ]; then
    extra=(--gpu-emulation --dvpp-driver reference)
fi
timeout 300 $PY -m minddata.bench.devices \
    --num-images "$NUM_IMAGES" --workers "$WORKERS" --batch-size 32 \
    --pipelines yolov3,train,infer224,yolo416 --devices CPU,Dvpp,GPU "${extra[@]}" \
    --json "$OUT/device_results.json" --markdown "$OUT/device_results.md" 2>&1 | tee "$OUT/device_bench.log" || status=1

step "done: status $status; table in $OUT/device_results.md"
exit $status
