#!/usr/bin/env bash
# The GPU check, one script for a machine lent for a few minutes (no network):
#
#     bash benchmarks/gpu_check.sh [gpu_models.py options, e.g. -k mlp]
#
# Run from anywhere; it works in the repository root with the venv at .venv
# (ember installed with its test extra; onnxruntime-gpu, torch and
# cuda-bindings used where that venv has them). Steps, each bounded so the
# whole stays under 8 minutes:
#   1. nvidia-smi: the GPU, its driver and the CUDA version the driver takes;
#   2. what the venv has: cuda-bindings (its major version must not exceed
#      the driver's CUDA major version), onnxruntime's providers, torch;
#   3. the runtime's own tests (tests/targets/cuda/test_runtime.py), which
#      run a two-kernel program on the GPU when it can be used;
#   4. benchmarks/gpu_models.py: outputs against onnxruntime and latencies,
#      or, without cuda-bindings or a usable GPU, its --dry-run (PTX, ptxas).
# Exit status: the worst of steps 3 and 4 (0 when both passed).
set -u
cd "$(dirname "$0")/.."
PY=.venv/bin/python
if [ ! -x "$PY" ]; then
    echo "error: no venv at $(pwd)/.venv (python3 -m venv .venv && .venv/bin/pip install -e '.[test,cuda]')"
    exit 2
fi

echo "== nvidia-smi"
if command -v nvidia-smi >/dev/null; then
    timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm \
        --format=csv || true
    timeout 30 nvidia-smi | sed -n '1,12p' || true
else
    echo "nvidia-smi not found: no NVIDIA driver on this machine"
fi

echo "== the venv"
timeout 60 "$PY" - <<'EOF'
import importlib.metadata as metadata

def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None

bindings = version("cuda-bindings")
if bindings is None:
    print("cuda-bindings: not installed (pip install -e '.[cuda]' where there is a network; "
          "12.x for a CUDA 12 driver, 13.x for 13): Ember cannot run on the GPU here")
else:
    from cuda.bindings import driver
    try:
        result, cuda = driver.cuDriverGetVersion()
        found = f"driver takes CUDA {cuda // 1000}.{cuda % 1000 // 10}" if cuda else str(result)
    except Exception as error:  # the driver library missing raises
        found = f"no driver library ({type(error).__name__})"
    print(f"cuda-bindings {bindings}; {found}")
from ember.targets.cuda.runtime import cuda_available
print("Ember on the GPU:", cuda_available() or "available")
try:
    import onnxruntime
    print(f"onnxruntime {onnxruntime.__version__}: {', '.join(onnxruntime.get_available_providers())}")
except ImportError:
    print("onnxruntime: not installed")
try:
    import torch
    print(f"torch {torch.__version__}: CUDA {torch.version.cuda}, GPU usable: {torch.cuda.is_available()}")
except ImportError:
    print("torch: not installed (no PyTorch or cuBLAS columns)")
print("onnx2torch:", version("onnx2torch") or "not installed (no PyTorch eager column for models)")
EOF

MODE=()
if ! "$PY" -c 'from ember.targets.cuda.runtime import cuda_available as a; raise SystemExit(a() is not None)' 2>/dev/null; then
    echo "Ember cannot use the GPU here (see above): the models get the --dry-run (PTX and ptxas) instead"
    MODE=(--dry-run)
fi

echo "== the CUDA runtime's tests"
timeout 150 "$PY" -m pytest -q -rs -p no:cacheprovider tests/targets/cuda/test_runtime.py
tests=$?

echo "== benchmarks/gpu_models.py ${MODE[*]} $*"
timeout 400 "$PY" benchmarks/gpu_models.py --budget-s 300 "${MODE[@]}" "$@"
models=$?
[ "$models" -eq 124 ] && echo "gpu_models.py ran past its 400 s limit"

echo "== exit: tests $tests, models $models"
[ "$tests" -ge "$models" ] && exit "$tests" || exit "$models"
