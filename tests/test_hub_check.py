"""Start-up knows where it is: one hub probe, no retry storm, clear messages offline and for bad paths."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from stereoset_eval.scoring import hub
from stereoset_eval.scoring.hub import ModelUnavailableError, check_models, looks_like_path


@pytest.fixture
def online(monkeypatch):
    """Hub access allowed in this process (the test environment sets HF_HUB_OFFLINE=1)."""
    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    return constants


@pytest.mark.parametrize("text,expected", [
    ("bert-base-uncased", False), ("org/name", False), ("./models/bert", True), ("/abs/model", True),
    ("~/m", True), ("a/b/c", True), ("models/", True),
])
def test_looks_like_path(text, expected):
    assert looks_like_path(text) is expected


def test_a_mistyped_local_path_names_the_folder(tmp_path):
    with pytest.raises(ModelUnavailableError, match=r"model \./nope/bret: no such local folder"):
        check_models([("./nope/bret", None)])


def test_a_folder_without_config_json(tmp_path):
    with pytest.raises(ModelUnavailableError, match="no config.json"):
        check_models([(str(tmp_path), None)])


def test_an_invalid_hub_id_is_one_line_not_hfvalidationerror():
    with pytest.raises(ModelUnavailableError, match="not a valid hub id") as err:
        check_models([("bad..id", None)])
    assert "\n" not in str(err.value)


def test_local_fixture_folders_need_no_hub(models_dir, monkeypatch):
    monkeypatch.setattr(hub, "probe_hub", lambda *a, **k: pytest.fail("probed the hub for a local folder"))
    check_models([(str(models_dir / "tiny-bert"), None), (str(models_dir / "tiny-gpt2"), None)])


def test_offline_and_not_cached_names_hf_hub_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub, "cached", lambda m, r: False)
    monkeypatch.setattr(hub, "probe_hub", lambda *a, **k: pytest.fail("probed the hub while offline"))
    with pytest.raises(ModelUnavailableError, match="HF_HUB_OFFLINE is set and some-model is not in the local"):
        check_models([("some-model", None)])


def test_unreachable_hub_and_not_cached_gives_the_offline_form(online, monkeypatch):
    monkeypatch.setattr(hub, "cached", lambda m, r: False)
    monkeypatch.setattr(hub, "probe_hub", lambda *a, **k: "https://huggingface.co: Name or service not known")
    with pytest.raises(ModelUnavailableError, match="cannot reach the Hugging Face hub .*HF_HUB_OFFLINE=1"):
        check_models([("bert-base-uncased", None)])


def test_unreachable_hub_with_cached_models_switches_offline(online, monkeypatch):
    monkeypatch.setattr(hub, "cached", lambda m, r: True)
    monkeypatch.setattr(hub, "probe_hub", lambda *a, **k: "no route")
    said = []
    check_models([("bert-base-uncased", None)], say=said.append)
    assert os.environ["HF_HUB_OFFLINE"] == "1" and online.HF_HUB_OFFLINE is True
    assert "using the cached copies of bert-base-uncased" in said[0]


def test_probe_is_one_quick_request():
    hub.probe_hub.cache_clear()
    started = time.perf_counter()
    assert hub.probe_hub("http://127.0.0.1:9", timeout=2.0) is not None  # nothing listens on port 9
    assert time.perf_counter() - started < 2.5


def test_demo_without_hub_ends_fast_in_one_clear_message(tmp_path):
    """No HF_HUB_OFFLINE, no cache, no hub: the default demo stops in seconds, without retries."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_ENDPOINT="http://127.0.0.1:9", STEREOSET_EVAL_CACHE=str(tmp_path / "c"))
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "stereoset_eval", "demo", "--output", str(tmp_path / "run")],
                         capture_output=True, text=True, env=env, timeout=120)
    elapsed = time.perf_counter() - started
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot reach the Hugging Face hub"), out.stderr
    assert "HF_HUB_OFFLINE=1" in lines[0] and "Retry" not in out.stderr
    assert elapsed < 20, elapsed
    assert not (tmp_path / "run").exists()
