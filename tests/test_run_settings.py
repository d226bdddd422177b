"""RunSettings: one object for the scoring options, built by one CLI helper, read from [study]."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from stereoset_eval.cli.main import build_parser
from stereoset_eval.cli.run_settings import add_run_settings_args, run_settings_from_args
from stereoset_eval.scoring.memory import POLICIES
from stereoset_eval.scoring.records import ScoringError
from stereoset_eval.scoring.settings import ALLOCATOR_ENV, DEFAULT_BATCH_TOKENS, RunSettings, field_names
from stereoset_eval.study.config import StudyConfigError, default_config, parse_config

MINIMAL = {"models": [{"id": "m", "kind": "masked"}], "benchmarks": [{"name": "S", "source": "stereoset"}]}


def test_defaults_and_json_round_trip(monkeypatch):
    monkeypatch.delenv(ALLOCATOR_ENV, raising=False)
    s = RunSettings()
    assert s.to_dict() == {"device": "auto", "dtype": None, "batch_tokens": DEFAULT_BATCH_TOKENS,
                           "last_layer": "scored", "allocator": "fast", "device_map": "none",
                           "share_masked_inputs": "off", "deterministic": "off"}
    other = RunSettings(device="cuda:1", dtype="bf16", batch_tokens=512, last_layer="all", allocator="fast")
    assert RunSettings.from_dict(other.to_dict()) == other
    assert RunSettings.from_dict({}) == s
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.device = "cpu"  # type: ignore[misc]


@pytest.mark.parametrize("changes, message", [
    ({"batch_tokens": 0}, "batch_tokens: must be a positive integer, got 0"),
    ({"batch_tokens": True}, "batch_tokens: must be a positive integer"),
    ({"last_layer": "some"}, "last_layer must be one of scored, all, got 'some'"),
    ({"allocator": "quick"}, "allocator must be one of bounded, fast, off, got 'quick'"),
    ({"device": "tpu"}, "device: unknown device 'tpu'"),
    ({"dtype": "int8"}, "dtype: unknown dtype 'int8'"),
])
def test_validate_gives_one_line_naming_the_field(changes, message):
    with pytest.raises(ScoringError) as info:
        RunSettings().replace(**changes).validate()
    assert message in str(info.value) and "\n" not in str(info.value)


def test_unknown_setting_is_named():
    with pytest.raises(ScoringError, match="no run setting.*batch_size"):
        RunSettings().replace(batch_size=3)
    with pytest.raises(ScoringError, match="no run setting"):
        RunSettings.from_dict({"batch_size": 3})


def test_allocator_default_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(ALLOCATOR_ENV, "fast")
    assert RunSettings().allocator == "fast"
    monkeypatch.setenv(ALLOCATOR_ENV, "0")
    assert RunSettings().allocator == "off"
    monkeypatch.setenv(ALLOCATOR_ENV, "quick")
    with pytest.raises(ScoringError, match=f"{ALLOCATOR_ENV}='quick': expected one of bounded, fast, off"):
        RunSettings()
    allocator = next(f for f in dataclasses.fields(RunSettings) if f.name == "allocator")
    assert set(POLICIES) == set(allocator.metadata["choices"])


@pytest.mark.parametrize("command", ["score", "study", "demo"])
def test_every_field_is_a_flag_of_every_scoring_command(command):
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    flags = {o for a in sub._actions for o in a.option_strings}
    assert {"--" + n.replace("_", "-") for n in field_names()} <= flags


def test_the_helper_keeps_the_base_for_flags_left_out():
    p = argparse.ArgumentParser()
    add_run_settings_args(p)
    base = RunSettings(device="cpu", batch_tokens=100, allocator="off")
    assert run_settings_from_args(p.parse_args([]), base) == base
    got = run_settings_from_args(p.parse_args(["--batch-tokens", "64", "--last-layer", "all", "--dtype", "bf16"]), base)
    assert got == base.replace(batch_tokens=64, last_layer="all", dtype="bf16")
    with pytest.raises(ScoringError, match="batch_tokens: must be a positive integer"):
        run_settings_from_args(p.parse_args(["--batch-tokens", "0"]))


def test_study_fields_parse_into_run_settings():
    c = parse_config({**MINIMAL, "study": {"device": "cpu", "batch_tokens": 256, "last_layer": "all",
                                           "allocator": "fast", "dtype": "bf16"}})
    assert c.run == RunSettings(device="cpu", dtype="bf16", batch_tokens=256, last_layer="all", allocator="fast")
    assert (c.device, c.dtype, c.batch_tokens, c.last_layer) == ("cpu", "bf16", 256, "all")
    recorded = c.to_dict()
    assert {k: recorded[k] for k in field_names()} == c.run.to_dict() and "run" not in recorded
    assert default_config().run.batch_tokens == DEFAULT_BATCH_TOKENS


@pytest.mark.parametrize("study, field, problem", [
    ({"allocator": "quick"}, "study.allocator", "must be 'bounded', 'fast' or 'off', got 'quick'"),
    ({"batch_tokens": 0}, "study.batch_tokens", "must be a positive integer, got 0"),
    ({"device": "tpu"}, "study.device", "unknown device 'tpu'"),
    ({"allocator": 3}, "study.allocator", "must be a string"),
])
def test_bad_study_settings_name_the_field(study, field, problem):
    with pytest.raises(StudyConfigError) as info:
        parse_config({**MINIMAL, "study": study}, source="s.toml")
    assert str(info.value).startswith(f"s.toml: {field}: ") and problem in str(info.value)


def test_study_overrides_change_only_the_flags_given():
    from stereoset_eval.cli.commands.study import apply_overrides

    parser = build_parser()
    args = parser.parse_args(["study", "x.toml", "--batch-tokens", "128", "--allocator", "off"])
    base = default_config()
    c = apply_overrides(base, args)
    assert c.run == base.run.replace(batch_tokens=128, allocator="off")
    assert "study.batch_tokens" in c.source and "study.allocator" in c.source and "study.device" not in c.source
