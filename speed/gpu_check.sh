#!/usr/bin/env bash
# GPU checks in one go (issue 35): the benchmark on whole datasets, then the CUDA test suites.
#
#   STEREOSET_EVAL_SHARED=/path/to/shared bash speed/gpu_check.sh OUT_DIR
#
# 1. python -m speed.run --device cuda on the base-sized models (BERT-base, GPT-2-small), whole
#    datasets: all 1,508 CrowS-Pairs pairs, all 2,106 StereoSet intrasentence dev examples;
# 2. the same on the fixture models (tiny-bert, tiny-roberta, tiny-gpt2), with the study rows;
#    issue 35's GPU targets: every fixture cell within 1.15x of the lowest reachable time (floor +
#    tokenizing), pll and pll-word-l2r at least 3x faster than minicons;
# 3. tests/test_gpu.py (CPU vs CUDA for every method, bf16/fp16, TF32 guard, GPU memory), the
#    golden / batch-invariance suites (device="auto", so CUDA here) and the engine's overlap checks.
#
# Settings (environment): IMPLS (default "ours floor minicons": the reference loop needs minutes a
# round on whole datasets; add reference-loop to time it), BASELINE_CROWS_PAIRS (the CrowS-Pairs
# slice minicons scores, compared per sentence; default 500: 1,000 sentences in 32-sentence calls,
# past any start-up effect, a third of the time of all 1,508), ISOLATION (default inline: every
# implementation in one process, as CUDA's start-up per child process would take much of the
# minutes a lent GPU has; peak RSS is then the process-wide maximum), REPEATS (3), TOKENIZERS
# (speed.run's --tokenizers-parallelism; default inherit: what users get, the Rust tokenizer on every
# core unless TOKENIZERS_PARALLELISM says otherwise; "false" measures one tokenizer thread, as the
# runs before fe3ee43 did, which on a 16-core machine makes the floor's tokenizing several times
# slower and the cells' ratios to the lowest reachable time smaller), and the
# timeouts BASE_TIMEOUT, FIXTURE_TIMEOUT, TEST_TIMEOUT (seconds). Logs, the benchmark JSON and its
# Markdown land in OUT_DIR. Needs a CUDA device, and stereoset_eval importable (pip install -e .);
# minicons is optional (its rows are skipped without it).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: speed/gpu_check.sh OUT_DIR}"
mkdir -p "$out"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 PYTHONUNBUFFERED=1
py="${PYTHON:-python3}"
shared="${STEREOSET_EVAL_SHARED:-../shared}"
read -r -a impls <<< "${IMPLS:-ours floor minicons}"
common=(--device cuda --impls "${impls[@]}" --isolation "${ISOLATION:-inline}" --repeats "${REPEATS:-3}"
        --tokenizers-parallelism "${TOKENIZERS:-inherit}"
        --baseline-crows-pairs "${BASELINE_CROWS_PAIRS:-500}" --no-memory
        --data-dir "$shared/data" --fixtures-dir "$shared/fixtures/models")
"$py" -c "import torch, transformers, stereoset_eval.scoring; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')" \
    || { echo "gpu_check: torch, transformers or stereoset_eval is not importable (pip install -e .)" >&2; exit 2; }
timeout "${BASE_TIMEOUT:-250}" "$py" -m speed.run "${common[@]}" --models bert-base-random gpt2-small-random \
    --crows-pairs 1508 --stereoset-examples 2106 --out "$out/bench_gpu_base.json" 2>&1 | tee "$out/bench_gpu_base.log" | tail -40
base_rc=${PIPESTATUS[0]}
timeout "${FIXTURE_TIMEOUT:-150}" "$py" -m speed.run "${common[@]}" --models tiny-bert tiny-roberta tiny-gpt2 \
    --out "$out/bench_gpu_fixtures.json" 2>&1 | tee "$out/bench_gpu_fixtures.log" | tail -40
fixture_rc=${PIPESTATUS[0]}
STEREOSET_EVAL_SHARED="$shared" timeout "${TEST_TIMEOUT:-150}" "$py" -m pytest -q -p no:cacheprovider -o addopts="-ra" \
    tests/test_gpu.py tests/test_scoring_goldens.py tests/test_scoring_batching.py tests/test_engine_overlap.py 2>&1 | tee "$out/gpu_tests.log" | tail -25
tests_rc=${PIPESTATUS[0]}
echo "benchmark rc: base-sized=$base_rc fixtures=$fixture_rc; gpu tests rc=$tests_rc"
exit $(( base_rc != 0 || fixture_rc != 0 || tests_rc != 0 ))
