# Two commands do everything on a fresh machine:  make demo   and   make test
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
LS_VENV ?= .venv-labelstudio
# CPU wheel of torch, installed before the project so the dependency range never pulls CUDA
TORCH_SPEC ?= torch==2.13.0

.PHONY: venv demo test fuzz soak readme bench labelstudio clean

# One stamp per extra, each kept: `make test` then `make demo` adds the demo's extra once and never
# reinstalls the other's (extras only add packages). A newer pyproject.toml redoes a stamp.
$(VENV)/.stamp-%: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "$(TORCH_SPEC)"
	$(PIP) install -q -e ".[$*]"
	touch $@

venv: $(VENV)/.stamp-labelstudio

demo: $(VENV)/.stamp-labelstudio
	$(VENV)/bin/stereoset-eval demo $(DEMO_ARGS)

# One torch thread unless told otherwise: the fixture models are tiny, and on a 2-core box two
# threads contend with everything else (5-10x slower under load); numbers are unaffected.
# TEST_WORKERS pytest-xdist processes (default 2: one per core of the 2-core box; 0: one process, serial).
# --dist loadscope: each test module runs whole on one worker, the Ray tests together (tests/conftest.py).
TEST_WORKERS ?= 2
test: $(VENV)/.stamp-test
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(PY) -m pytest -n $(TEST_WORKERS) --dist loadscope $(PYTEST_ARGS)

# The readers' fuzzers run long (docs/reliability.md): many generated inputs per reader, failures kept in
# .cache/hypothesis and replayed first next time (FUZZ_EXAMPLES: examples per fuzzer, default 1500)
fuzz: $(VENV)/.stamp-test
	HYPOTHESIS_PROFILE=fuzz OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(PY) -m pytest tests/test_fuzz_readers.py tests/test_csv_safe.py -q $(PYTEST_ARGS)

# The full soak of studies under faults: 20 runs of 3 models x 4 benchmarks x 3 methods, each killed
# (SIGKILL / SIGTERM / SIGINT in scoring, the cache write, the report write, a Ray worker) and rerun
# (STEREOSET_EVAL_SOAK_RUNS, STEREOSET_EVAL_SOAK_SEED); prints the figures docs/reliability.md keeps
soak: $(VENV)/.stamp-test
	OMP_NUM_THREADS=1 STEREOSET_EVAL_SOAK=full $(PY) -m pytest tests/test_soak_study.py -q -s $(PYTEST_ARGS)

# docs/cli.md, the command-line reference, regenerated from every subcommand's --help
readme: $(VENV)/.stamp-labelstudio
	$(PY) -m stereoset_eval.cli.reference docs/cli.md

# Speed benchmark: ours vs the reference loop, minicons and the forward-pass floor (BENCH_ARGS: see
# `python -m speed.run --help`; e.g. BENCH_ARGS="--models bert-base-random --omp-wait-policy passive")
bench: $(VENV)/.stamp-bench
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(PY) -m speed.run $(BENCH_ARGS)

# Label Studio server in its own environment (it pins packages the toolkit must not share)
labelstudio: $(LS_VENV)/bin/label-studio

$(LS_VENV)/bin/label-studio:
	$(PYTHON) -m venv $(LS_VENV)
	$(LS_VENV)/bin/python -m pip install -q --upgrade pip
	$(LS_VENV)/bin/python -m pip install -q "label-studio==1.23.2"

clean:
	rm -rf $(VENV) $(LS_VENV) build *.egg-info
