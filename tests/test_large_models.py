"""Options for models larger than one device: ``device_map="auto"`` and ``dtype="auto"``.

Both are RunSettings fields (so CLI flags, study-config keys and provenance entries). On the
CPU ``device_map="auto"`` loads through accelerate with every layer on the CPU, so the path
runs here and must give the plain path's numbers; ``dtype="auto"`` is fp32 on the CPU.
"""

from __future__ import annotations

import pytest

from tests.conftest import float32_noise


def _score(items, model, method="pll", **kw):
    from stereoset_eval.scoring.api import score_items

    return score_items(items, model=str(model), method=method, device="cpu", use_cache=False, **kw)


@pytest.mark.parametrize("model_name, method", [("tiny-bert", "pll"), ("tiny-gpt2", "causal-ll")])
def test_device_map_auto_gives_the_plain_numbers_and_is_recorded(model_name, method, models_dir, crows_items):
    from stereoset_eval.scoring.settings import RunSettings

    pytest.importorskip("accelerate")
    items = crows_items[:6]
    plain = _score(items, models_dir / model_name, method)
    mapped = _score(items, models_dir / model_name, method, settings=RunSettings(device_map="auto"))
    assert plain.provenance["model"]["device_map"] is None
    placed = mapped.provenance["model"]["device_map"]
    assert placed and set(placed.values()) == {"cpu"}
    assert mapped.provenance["run"]["settings"]["device_map"] == "auto"
    a, b = plain.scores, mapped.scores
    assert a.keys() == b.keys() and max(float32_noise(a[k], b[k]) for k in a) <= 1e-5


def test_dtype_auto_is_fp32_on_the_cpu_and_says_why(models_dir, crows_items):
    scored = _score(crows_items[:2], models_dir / "tiny-bert", dtype="auto")
    assert scored.provenance["model"]["dtype"] == "float32"
    assert scored.provenance["model"]["dtype_choice"] == "auto: fp32 (not on CUDA)"
    assert scored.provenance["run"]["settings"]["dtype"] == "auto"


def test_dtype_auto_takes_a_bf16_checkpoint_to_bf16_on_cuda_only():
    import torch

    from stereoset_eval.scoring.backends import choose_dtype

    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    assert choose_dtype("auto", cuda, "bfloat16")[0] == "bf16"
    assert choose_dtype("auto", cuda, "float32")[0] == "fp32"
    assert choose_dtype("auto", cpu, "bfloat16")[0] == "fp32"
    assert choose_dtype(None, cuda, "bfloat16")[0] is None  # the default stays fp32


def test_bad_device_map_is_one_line_error():
    from stereoset_eval.scoring.records import ScoringError
    from stereoset_eval.scoring.settings import RunSettings

    with pytest.raises(ScoringError, match="device_map must be one of none, auto, got 'sharded'"):
        RunSettings(device_map="sharded").validate()


def test_cli_has_the_new_flags():
    import argparse

    from stereoset_eval.cli.run_settings import add_run_settings_args, run_settings_from_args

    p = argparse.ArgumentParser()
    add_run_settings_args(p)
    settings = run_settings_from_args(p.parse_args(["--device-map", "auto", "--dtype", "auto"]))
    assert (settings.device_map, settings.dtype) == ("auto", "auto")
