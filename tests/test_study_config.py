"""Study configuration and planning: parsing, validation errors, model kinds, jobs, protocols."""

from __future__ import annotations

import argparse
import pytest

from stereoset_eval.cli.commands.study import apply_overrides, parse_model
from stereoset_eval.study.config import (
    ModelSpec,
    StudyConfigError,
    default_config,
    default_config_text,
    load_config,
    parse_config,
)
from stereoset_eval.study.plan import (
    Job,
    PlanError,
    check_protocols,
    methods_for,
    model_kind,
    plan_jobs,
    protocol_method,
    protocols,
)

MINIMAL = {
    "models": [{"id": "bert-base-uncased"}, {"id": "gpt2", "kind": "causal"}],
    "benchmarks": [
        {"name": "StereoSet", "source": "stereoset"},
        {"name": "CrowS-Pairs", "source": "crows-pairs"},
        {"name": "curated-CrowS", "source": "curated", "from": "CrowS-Pairs"},
    ],
    "methods": {"masked": ["pll"], "causal": ["causal-ll"]},
}
KINDS = {"bert-base-uncased": "masked", "gpt2": "causal"}


def _with(**changes):
    raw = {k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v) for k, v in MINIMAL.items()}
    raw.update(changes)
    return raw


def test_default_config_is_the_documented_study():
    c = default_config()
    assert [m.id for m in c.models] == ["bert-base-uncased", "roberta-base", "gpt2"]
    assert [(b.name, b.source) for b in c.benchmarks] == [
        ("StereoSet", "stereoset"), ("CrowS-Pairs", "crows-pairs"),
        ("BMNE-StereoSet", "bmne-stereoset"), ("BMNE-CrowS", "bmne-crowspairs"),
        ("curated-StereoSet", "curated"), ("curated-CrowS", "curated"),
    ]
    assert c.methods == {"masked": ("pll", "pll-word-l2r"), "causal": ("causal-ll",)}
    assert set(c.protocols) == {"benchmark", "pll", "pll-word-l2r"}
    assert c.analysis.crows_ndigits == 3 and c.analysis.balance_by == "dimension"
    assert "[[models]]" in default_config_text()


def test_to_dict_round_trips_the_settings():
    d = default_config().to_dict()
    assert d["methods"]["masked"] == ["pll", "pll-word-l2r"]
    assert d["analysis"]["compare"] == [["CrowS-Pairs", "StereoSet"], ["BMNE-CrowS", "BMNE-StereoSet"],
                                        ["curated-CrowS", "curated-StereoSet"]]
    assert d["models"][0] == {"id": "bert-base-uncased", "name": "BERT-base-uncased", "revision": None, "kind": None,
                            "paths": {}}


@pytest.mark.parametrize(
    "raw, field, words",
    [
        (_with(models=[]), "models", "at least one model"),
        (_with(benchmarks=[]), "benchmarks", "at least one benchmark"),
        (_with(models=[{"name": "x"}]), "models[0].id", "is required"),
        (_with(models=[{"id": "a", "kind": "seq2seq"}]), "models[0].kind", "not one of"),
        (_with(models=[{"id": "a", "colour": "red"}]), "models[0].colour", "unknown field"),
        (_with(models=[{"id": "a"}, {"id": "b", "name": "a"}]), "models", "duplicate"),
        (_with(benchmarks=[{"name": "S", "source": "winobias"}]), "benchmarks[0].source", "not one of"),
        (_with(benchmarks=[{"name": "C", "source": "curated", "from": "nope"}]), "benchmarks[0].from", "curated"),
        (_with(benchmarks=[{"name": "P", "source": "pairs"}]), "benchmarks[0].data", "pairs file"),
        (_with(methods={"masked": ["pl"]}), "methods.masked", "did you mean 'pll'"),
        (_with(methods={"causal": ["pll"]}), "methods.causal", "needs a masked model"),
        (_with(methods={"masked": "pll", "encoder": []}), "methods.encoder", "unknown field"),
        (_with(protocols={"p": {"masked": "plll"}}), "protocols.p.masked", "unknown method"),
        (_with(analysis={"bootstrap": 0}), "analysis.bootstrap", "at least 1"),
        (_with(analysis={"ci_level": 1.5}), "analysis.ci_level", "between 0 and 1"),
        (_with(analysis={"ties": "coin"}), "analysis.ties", "one of"),
        (_with(analysis={"untagged": "drop"}), "analysis.untagged", "one of"),
        (_with(analysis={"crows_ndigits": "three"}), "analysis.crows_ndigits", "integer"),
        (_with(analysis={"compare": [["StereoSet"]]}), "analysis.compare[0]", "pair of benchmark"),
        (_with(analysis={"compare": [["StereoSet", "Winogender"]]}), "analysis.compare[0]", "unknown benchmark"),
        (_with(analysis={"bootstrap": True}), "analysis.bootstrap", "must be a number"),
        (_with(study={"limit": -3}), "study.limit", "positive"),
        (_with(study={"batch_tokens": "big"}), "study.batch_tokens", "must be an integer"),
        (_with(study={"last_layer": "some"}), "study.last_layer", "must be 'scored' or 'all'"),
        (_with(options={"stereoset-mlm": {"leading_space": "always"}}), "options.stereoset-mlm", "not one of"),
        (_with(options={"pll-word": {}}), "options.pll-word", "did you mean"),
        (_with(models=[{"id": "a", "paths": "/x"}]), "models[0].paths", "must be a table"),
        (_with(models=[{"id": "a", "paths": {"n2": 3}}]), "models[0].paths.n2", "must be a folder on that node"),
        (_with(models=[{"id": "a", "paths": {"n2": "models/a"}}]), "models[0].paths.n2", "must be an absolute folder"),
        (_with(models=[{"id": "a", "paths": {"n2": " "}}]), "models[0].paths.n2", "is empty"),
        (_with(models=[{"id": "a"}, {"id": "b", "paths": {"": "/m/b"}}]), "models[1].paths", "empty node name"),
    ],
)
def test_bad_configs_name_the_field(raw, field, words):
    with pytest.raises(StudyConfigError) as err:
        parse_config(raw, source="study.toml")
    assert err.value.field == field
    assert str(err.value).startswith(f"study.toml: {field}: ")
    assert words in str(err.value)


def test_load_config_reads_toml_and_resolves_relative_data_paths(tmp_path):
    (tmp_path / "cfg").mkdir()
    path = tmp_path / "cfg" / "s.toml"
    path.write_text(
        '[[models]]\nid = "gpt2"\nkind = "causal"\n'
        '[[benchmarks]]\nname = "C"\nsource = "crows-pairs"\ndata = "data/crows.csv"\n'
        '[[benchmarks]]\nname = "R"\nsource = "crows-pairs"\ndata = "crows-pairs-revised"\n',
        encoding="utf-8",
    )
    c = load_config(path)
    assert c.benchmark("C").data == str(tmp_path / "cfg" / "data" / "crows.csv")
    assert c.benchmark("R").data == "crows-pairs-revised"  # manifest names stay names
    assert c.source == str(path)


def test_per_node_model_paths_are_read_from_a_models_paths_table(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        '[[models]]\nid = "bert-base-uncased"\n[models.paths]\n"gpu-3" = "/scratch/bert"\n"10.0.0.2" = "/data/bert"\n'
        '[[models]]\nid = "gpt2"\nkind = "causal"\n'
        '[[benchmarks]]\nname = "C"\nsource = "crows-pairs"\n', encoding="utf-8")
    c = load_config(path)
    assert dict(c.models[0].paths) == {"gpu-3": "/scratch/bert", "10.0.0.2": "/data/bert"} and not c.models[1].paths
    assert c.to_dict()["models"][0]["paths"] == {"gpu-3": "/scratch/bert", "10.0.0.2": "/data/bert"}  # provenance


@pytest.mark.parametrize("text, problem", [("[[models]\nid=1", "not valid TOML"), (None, "cannot read")])
def test_unreadable_configs(tmp_path, text, problem):
    path = tmp_path / "s.toml"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(StudyConfigError, match=problem):
        load_config(path)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("gpt2", ModelSpec("gpt2", "gpt2")),
        ("gpt2@abc123", ModelSpec("gpt2", "gpt2", revision="abc123")),
        ("GPT=gpt2@v1", ModelSpec("gpt2", "GPT", revision="v1")),
        ("org/model-x", ModelSpec("org/model-x", "org/model-x")),
    ],
)
def test_parse_model(text, expected):
    assert parse_model(text) == expected


def test_parse_model_uses_the_folder_name_of_a_local_model(tmp_path):
    folder = tmp_path / "my@model"
    folder.mkdir()
    assert parse_model(str(folder)) == ModelSpec(str(folder), "my@model")


def test_command_line_overrides_replace_config_values(tmp_path):
    args = argparse.Namespace(models=["gpt2"], output=tmp_path / "o", data_dir=tmp_path, no_download=True, limit=5,
                              cache_dir=None, no_cache=True, device="cpu")
    c = apply_overrides(default_config(), args)
    assert [m.id for m in c.models] == ["gpt2"] and c.limit == 5 and not c.download and not c.use_cache
    assert c.output == str(tmp_path / "o") and c.device == "cpu" and "overrides" in c.source


def test_override_is_validated():
    args = argparse.Namespace(models=None, output=None, data_dir=None, no_download=False, limit=0,
                              cache_dir=None, no_cache=False, device=None)
    with pytest.raises(StudyConfigError, match="study.limit"):
        apply_overrides(default_config(), args)


@pytest.mark.parametrize("name, kind", [("tiny-bert", "masked"), ("tiny-roberta", "masked"), ("tiny-gpt2", "causal")])
def test_model_kind_from_config_json(models_dir, name, kind):
    assert model_kind(ModelSpec(str(models_dir / name), name)) == kind


def test_model_kind_errors(tmp_path):
    with pytest.raises(PlanError, match="no config.json"):
        model_kind(ModelSpec(str(tmp_path), "empty"))
    (tmp_path / "config.json").write_text('{"architectures": ["T5ForConditionalGeneration"]}', encoding="utf-8")
    with pytest.raises(PlanError, match="set `kind`"):
        model_kind(ModelSpec(str(tmp_path), "t5"))
    assert model_kind(ModelSpec(str(tmp_path), "t5", kind="causal")) == "causal"


@pytest.mark.parametrize(
    "bench, kind, own, expected",
    [
        ("StereoSet", "masked", True, ("stereoset-mlm", "pll")),
        ("StereoSet", "causal", True, ("stereoset-causal", "causal-ll")),
        ("CrowS-Pairs", "masked", True, ("crows-nangia", "pll")),
        ("CrowS-Pairs", "causal", True, ("causal-ll",)),  # own method = the listed one: no duplicate
        ("curated-CrowS", "masked", True, ("pll",)),  # curated pairs have no own method
        ("StereoSet", "masked", False, ("pll",)),
    ],
)
def test_methods_for(bench, kind, own, expected):
    c = parse_config(_with(methods={**MINIMAL["methods"], "benchmark_methods": own}))
    assert methods_for(c, c.benchmark(bench), kind) == expected


def test_benchmark_methods_table_overrides_the_global_lists():
    benches = [{"name": "CrowS-Pairs", "source": "crows-pairs", "methods": {"masked": ["pll-word-l2r"]}}]
    c = parse_config(_with(benchmarks=benches))
    assert methods_for(c, c.benchmark("CrowS-Pairs"), "masked") == ("pll-word-l2r",)
    assert methods_for(c, c.benchmark("CrowS-Pairs"), "causal") == ()


def test_plan_jobs_model_by_model_with_options():
    c = parse_config(_with(options={"stereoset-mlm": {"leading_space": "bias-bench"}}))
    jobs = plan_jobs(c, KINDS)
    assert [j.key for j in jobs] == [
        "bert-base-uncased | StereoSet | stereoset-mlm", "bert-base-uncased | StereoSet | pll",
        "bert-base-uncased | CrowS-Pairs | crows-nangia", "bert-base-uncased | CrowS-Pairs | pll",
        "bert-base-uncased | curated-CrowS | pll",
        "gpt2 | StereoSet | stereoset-causal", "gpt2 | StereoSet | causal-ll",
        "gpt2 | CrowS-Pairs | causal-ll", "gpt2 | curated-CrowS | causal-ll",
    ]
    assert jobs[0].options == {"leading_space": "bias-bench"} and jobs[1].options == {}
    assert isinstance(jobs[0], Job)


def test_a_model_without_methods_is_an_error():
    c = parse_config(_with(methods={"masked": ["pll"], "benchmark_methods": False},
                           benchmarks=[{"name": "C", "source": "crows-pairs"}]))
    with pytest.raises(PlanError, match=r"no method applies to model\(s\) \['gpt2'\]"):
        plan_jobs(c, KINDS)


def test_default_protocols_pair_methods_by_position():
    c = parse_config(_with(methods={"masked": ["pll", "pll-word-l2r"], "causal": ["causal-ll"]}))
    assert protocols(c) == {
        "benchmark": {"masked": "benchmark", "causal": "benchmark"},
        "pll / causal-ll": {"masked": "pll", "causal": "causal-ll"},
        "pll-word-l2r / causal-ll": {"masked": "pll-word-l2r", "causal": "causal-ll"},
    }


def test_protocol_methods_and_warnings():
    c = parse_config(_with(protocols={"w": {"masked": "pll-word-l2r", "causal": "causal-ll"},
                                      "own": {"masked": "benchmark"}}))
    assert protocol_method(c.protocols["own"], c.benchmark("StereoSet"), "masked") == "stereoset-mlm"
    assert protocol_method(c.protocols["own"], c.benchmark("curated-CrowS"), "masked") is None
    assert protocol_method(c.protocols["own"], c.benchmark("StereoSet"), "causal") is None
    warnings = check_protocols(c, KINDS, plan_jobs(c, KINDS))
    assert "protocol 'w': bert-base-uncased is not scored with pll-word-l2r on StereoSet" in warnings
    assert not any("gpt2" in w for w in warnings)


def test_study_modules_import_without_torch_or_ray():
    import subprocess
    import sys

    code = ("import sys\nimport stereoset_eval.study.run, stereoset_eval.cli.commands.study, stereoset_eval.cli.commands.demo\n"
            "from stereoset_eval.study import default_config\ndefault_config()\n"
            "bad = [m for m in ('torch', 'transformers', 'ray') if m in sys.modules]\nassert not bad, bad\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_study_package_loads_the_pipeline_on_first_use():
    import subprocess
    import sys

    code = ("import sys\nimport stereoset_eval.study\nassert 'stereoset_eval.study.run' not in sys.modules\n"
            "from stereoset_eval.study import run_study, StudyRun\nassert 'stereoset_eval.study.run' in sys.modules\n"
            "import stereoset_eval.study.run as r\nassert run_study is r.run_study and StudyRun is r.StudyRun\n"
            "try:\n    stereoset_eval.study.nothing\nexcept AttributeError as e:\n    assert 'nothing' in str(e)\n"
            "else:\n    raise SystemExit('no AttributeError')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_last_layer_is_read_from_the_study_table():
    assert parse_config(_with(), source="study.toml").last_layer == "scored"
    assert parse_config(_with(study={"last_layer": "all"}), source="study.toml").last_layer == "all"
