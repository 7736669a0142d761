#!/usr/bin/env bash
# The device check, for a machine with an NVIDIA GPU and no network (the lent H200: python3 with
# PyTorch, torchvision, CuPy and JAX; no DALI, too large to carry; nothing can be installed from an index).
#
#   bench/device_check.sh OUT            # on the GPU machine: results under OUT
#   bench/device_check.sh --dry-run      # here, without a GPU: the same steps on emulated devices
#
# Steps and their time limits (they add up to 8 minutes, so one call fits the device budget with
# time to run it again):
#   1. machine (15 s): GPUs, Python, torch and its CUDA. Without a GPU that torch can use, a real run
#      stops here and FAILS (exit 3); --dry-run goes on with emulated devices;
#   2. wheels and the checkout (30 s + 60 s): wheels carried in .whl/ installed with
#      `pip install --no-index --target`; the checkout on PYTHONPATH (it imports like the installed
#      package), its Cython kernels built in place when Cython and a compiler are there;
#   3. `minddata devices -v` (20 s);
#   4. the GPU tests (215 s) with MINDDATA_REQUIRE_GPU=1 and the require_gpu plugin, so a GPU test that
#      skips fails: the torch driver op by op against the CPU kernels with emulation off, nvJPEG
#      decoding with no CPU fallback, rows reaching torch, CuPy and JAX without a host copy, the sink
#      with AMP on rows made on the GPU, automatic placement, decoding while training kernels run
#      (tests/ops/test_gpu_torch_cuda.py), the drivers' GPU tests, placement, the trainer on the GPU;
#   5. the benchmark (140 s): the three standard pipelines on the GPU against the CPU in the same run
#      (python -m minddata.bench.devices).
# Under OUT (never in the checkout): device_check.json (each step: status, seconds), device_tests.xml,
# device_results.json/.md (the table for bench/RESULTS.md), the logs.
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
NUM_IMAGES="${NUM_IMAGES:-$([ $dry_run = 1 ] && echo 32 || echo 1000)}"
WORKERS="${WORKERS:-$($PY -c 'import os; print(min(8, len(os.sched_getaffinity(0))))')}"
export MINDDATA_CACHE="${MINDDATA_CACHE:-${TMPDIR:-/tmp}/minddata-cache}"
export PYTHONUNBUFFERED=1
status=0
started=$(date +%s)
step() { echo; echo "== $1 ($(( $(date +%s) - started )) s)"; }

results=()
record() {  # name, status, seconds
    results+=("{\"step\": \"$1\", \"status\": $2, \"seconds\": $3}")
    [ "$2" = 0 ] || status=1
}
write_json() {
    local IFS=,
    echo "{\"dry_run\": $dry_run, \"status\": $status, \"seconds\": $(( $(date +%s) - started )), \"steps\": [${results[*]}]}" \
        >"$OUT/device_check.json"
}
timed() {  # name, limit, command...: runs it under the limit, records its status and time
    local name="$1" limit="$2" t0 rc
    shift 2
    t0=$(date +%s)
    timeout "$limit" "$@"
    rc=$?
    [ $rc = 124 ] && echo "device_check: step '$name' ran past its ${limit} s limit"
    record "$name" "$rc" "$(( $(date +%s) - t0 ))"
    write_json
    return $rc
}

step "machine"
nvidia-smi -L || echo "nvidia-smi: no GPU listed"
$PY --version
timed machine 15 $PY -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, 'GPU visible to torch:', torch.cuda.is_available()); raise SystemExit(0 if torch.cuda.is_available() else 3)"
gpu_rc=$?
if [ $gpu_rc != 0 ] && [ $dry_run = 0 ]; then
    echo
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    echo "device_check: FAILED: torch sees no CUDA GPU here (exit $gpu_rc), so nothing of the GPU can be checked."
    echo "Run it on the GPU machine, or use --dry-run for the emulated steps."
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    write_json
    exit 3
fi
[ $dry_run = 1 ] && results=() && status=0  # a dry run has no GPU by definition

step "wheels and the checkout"
if compgen -G ".whl/*.whl" >/dev/null; then
    timed wheels 30 $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}" || echo "device_check: carried wheels failed to install"
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
if $PY -c "import Cython" 2>/dev/null; then
    timeout 60 $PY setup.py -q build_ext --inplace >"$OUT/build_ext.log" 2>&1 \
        || echo "device_check: the Cython kernels did not build (see build_ext.log): pure-Python fallbacks run"
fi
$PY -c "import minddata, minddata.ops.cpu.jpeg as j; print('minddata', minddata.__version__, 'from', minddata.__file__); print('JPEG extension:', 'built' if j.AVAILABLE else j.WHY_UNAVAILABLE)" \
    || { echo "device_check: minddata does not import from the checkout"; exit 2; }

step "devices"
timed devices 20 $PY -m minddata.cli devices -v >"$OUT/devices.txt" 2>&1
cat "$OUT/devices.txt"

step "tests (the torch driver on the GPU, the drivers' GPU tests, placement, the trainer on the GPU)"
tests=(tests/ops/test_gpu_torch_cuda.py tests/ops/test_gpu_device.py tests/ops/test_gpu_torch.py
       tests/engine/test_placement.py tests/trainer/test_trainer_gpu.py tests/trainer/test_sink.py)
if [ $dry_run = 1 ]; then
    require=""
else
    require=1
fi
MINDDATA_REQUIRE_GPU=$require timed tests 215 $PY -m pytest -q -n0 -p no:cacheprovider -p no:randomly \
    -p minddata.bench.require_gpu -ra --junitxml="$OUT/device_tests.xml" "${tests[@]}" >"$OUT/device_tests.log" 2>&1
tail -n 40 "$OUT/device_tests.log"

step "benchmark: the three standard pipelines, GPU against the CPU in the same run"
extra=()
if [ $dry_run = 1 ]; then
    extra=(--gpu-emulation)
fi
timed bench 140 $PY -m minddata.bench.devices \
    --num-images "$NUM_IMAGES" --workers "$WORKERS" --batch-size 32 \
    --pipelines train,infer224,yolo416 --devices CPU,GPU "${extra[@]}" \
    --json "$OUT/device_results.json" --markdown "$OUT/device_results.md" >"$OUT/device_bench.log" 2>&1
tail -n 12 "$OUT/device_bench.log"

write_json
step "done: status $status; steps in $OUT/device_check.json, table in $OUT/device_results.md"
exit $status
