#!/usr/bin/env bash
# GPU checks in one go: the CUDA test suites, then the benchmark on the GPU.
#
#   STEREOSET_EVAL_SHARED=/path/to/shared bash speed/gpu_check.sh OUT_DIR
#
# 1. tests/test_gpu.py (CPU vs CUDA for every method, bf16/fp16, TF32 guard, GPU memory) and the
#    golden / batch-invariance suites, which use device="auto" and so run on CUDA here, and the
#    engine's group-overlap checks;
# 2. python -m speed.run --device cuda on the base-sized models, with slices big enough
#    for a GPU (50 CrowS-Pairs pairs, 100 StereoSet examples).
# Logs, the benchmark JSON and its Markdown land in OUT_DIR. Needs a CUDA device; minicons is
# optional (its rows are skipped without it).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: speed/gpu_check.sh OUT_DIR}"
mkdir -p "$out"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
py="${PYTHON:-python3}"
"$py" -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
timeout "${TEST_TIMEOUT:-200}" "$py" -m pytest -q -p no:cacheprovider -o addopts="-ra" \
    tests/test_gpu.py tests/test_scoring_goldens.py tests/test_scoring_batching.py tests/test_engine_overlap.py 2>&1 | tee "$out/gpu_tests.log" | tail -25
tests_rc=${PIPESTATUS[0]}
timeout "${BENCH_TIMEOUT:-330}" "$py" -m speed.run --device cuda --models bert-base-random gpt2-small-random \
    --crows-pairs "${CROWS_PAIRS:-50}" --stereoset-examples "${STEREOSET_EXAMPLES:-100}" \
    --out "$out/bench_gpu.json" 2>&1 | tee "$out/bench_gpu.log" | tail -45
bench_rc=${PIPESTATUS[0]}
echo "gpu tests rc=$tests_rc benchmark rc=$bench_rc"
exit $(( tests_rc != 0 || bench_rc != 0 ))
