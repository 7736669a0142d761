#!/usr/bin/env bash
# The device check: on a machine with an NVIDIA GPU, in under 5 minutes,
#   1. install minddata with the GPU extra (NVIDIA DALI) unless DALI already imports,
#   2. list the devices (`minddata devices -v`),
#   3. run the tests that need a GPU (marked `gpu`) and the GPU/Dvpp translation and contract tests,
#   4. run the YOLOv3 inference preprocessing and the three standard pipelines on CPU vs Dvpp vs GPU,
# and write the results table to $OUT/device_results.md (default: bench/device_results.md), ready
# to paste into bench/RESULTS.md.
#
# Usage (from anywhere):  bench/device_check.sh
# Environment:
#   OUT          where to write device_results.md, device_results.json and the test log (default: bench/)
#   DALI_WHEEL   a local nvidia-dali-cuda120 wheel to install when PyPI is out of reach
#   NUM_IMAGES   size of the generated COCO-like set (default 2000)
#   WORKERS      CPU workers per pipeline (default: min(8, cores))
# Exits non-zero when a test fails; the benchmark still runs so the table shows what works.
set -uo pipefail

cd "$(dirname "$0")/.."
OUT="${OUT:-bench}"
mkdir -p "$OUT"
NUM_IMAGES="${NUM_IMAGES:-2000}"
WORKERS="${WORKERS:-$(python -c 'import os; print(min(8, len(os.sched_getaffinity(0))))')}"
export MINDDATA_CACHE="${MINDDATA_CACHE:-${TMPDIR:-/tmp}/minddata-cache}"
status=0
started=$(date +%s)

echo "== machine"
nvidia-smi -L || echo "nvidia-smi: no GPU listed (the GPU rows will say why they were skipped)"
python --version

echo "== install"
if ! python -c "import minddata" 2>/dev/null; then
    pip install -q -e '.[dev]' || { echo "device_check: cannot install minddata"; exit 2; }
fi
if ! python -c "import nvidia.dali" 2>/dev/null; then
    if [ -n "${DALI_WHEEL:-}" ]; then
        pip install -q "$DALI_WHEEL"
    else
        pip install -q 'nvidia-dali-cuda120>=2.4,<3' || echo "device_check: DALI is not installable here (no PyPI?): set DALI_WHEEL"
    fi
fi
python -c "import nvidia.dali as d; print('DALI', d.__version__)" || echo "DALI missing: GPU and nvjpg rows will be skipped"

echo "== devices"
minddata devices -v

echo "== tests (gpu-marked, DALI translation, device contract)"
# -m 'gpu or not gpu': the gpu-marked tests run here; the contract runs its GPU kernels on the GPU.
if ! timeout 150 python -m pytest -q -p no:cacheprovider -ra \
        tests/ops/test_gpu_device.py tests/ops/test_gpu_dali.py tests/engine/test_placement.py \
        "tests/ops/test_contract.py" -k "GPU or Dvpp or gpu or dali or placement or device" \
        2>&1 | tee "$OUT/device_tests.log"; then
    status=1
fi

echo "== benchmark: YOLOv3 preprocessing and the standard pipelines, CPU vs Dvpp vs GPU"
timeout 150 python -m minddata.bench.devices \
    --num-images "$NUM_IMAGES" --workers "$WORKERS" --batch-size 32 \
    --pipelines yolov3,train,infer224,yolo416 --devices CPU,Dvpp,GPU \
    --json "$OUT/device_results.json" --markdown "$OUT/device_results.md" || status=1

echo "== done in $(( $(date +%s) - started )) s; table: $OUT/device_results.md"
exit $status
