"""The BMNE paper's study as shipped (data/bmne_study.toml): it parses, plans the paper's jobs, and runs
with one command (here on fixture models, the release fixture standing in for the hub)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import stereoset_eval.curation.loaders.download as dl
from stereoset_eval.cli.main import main
from stereoset_eval.foundation.files import file_sha256
from stereoset_eval.study.config import load_config, packaged_studies
from stereoset_eval.study.plan import plan_jobs, protocols

FIXTURE = Path(__file__).parent / "fixtures" / "bmne"
PAPER_MODELS = ["bert-base-uncased", "bert-large-uncased", "roberta-base", "albert-large-v2"]


def test_paper_study_parses_and_plans():
    assert packaged_studies() == ["bmne_study.toml", "default_study.toml"]
    c = load_config("bmne_study.toml")
    assert c.source == "package data/bmne_study.toml" and c.download
    assert [m.id for m in c.models] == PAPER_MODELS
    assert [m.name for m in c.models] == ["BERT-base Vanilla", "BERT-large Vanilla", "RoBERTa-base Vanilla",
                                          "ALBERT-large Vanilla"]  # the paper's Table 6 row labels
    assert [(b.name, b.source, b.bias_types, b.optional) for b in c.benchmarks] == [
        ("StereoSet-gender", "stereoset", ("gender",), False), ("CrowS-gender", "crows-pairs", ("gender",), False),
        ("BMNE-StereoSet", "bmne-stereoset", (), False), ("BMNE-CrowS", "bmne-crowspairs", (), False)]
    assert protocols(c) == {"pll": {"masked": "pll"}, "pll-word-l2r": {"masked": "pll-word-l2r"}}
    assert c.analysis.compare == (("CrowS-gender", "StereoSet-gender"), ("BMNE-CrowS", "BMNE-StereoSet"))
    assert (c.analysis.balance_by, c.analysis.untagged) == ("dimension", "error")
    jobs = plan_jobs(c, {m.name: "masked" for m in c.models})
    assert len(jobs) == 4 * 4 * 2 and {j.method for j in jobs} == {"pll", "pll-word-l2r"}
    assert jobs[0].key == "BERT-base Vanilla | StereoSet-gender | pll"


def test_placeholders_for_the_debiased_checkpoints_name_table6_rows(data_dir):
    import csv

    text = (Path(__file__).resolve().parent.parent / "data" / "bmne_study.toml").read_text(encoding="utf-8")
    with open(data_dir / "bmne" / "bmne_paper_table6.csv", newline="", encoding="utf-8") as fh:
        rows = [r["model"] for r in csv.DictReader(fh)]
    for model in rows:  # every Table 6 row: a public model or a commented placeholder with that name
        assert f'name = "{model}"' in text, model
    assert text.count('# id = "/path/to/') == len(rows) - len(PAPER_MODELS)


def test_a_local_file_wins_over_the_packaged_name(tmp_path, monkeypatch):
    (tmp_path / "bmne_study.toml").write_text('[[models]]\nid = "m"\n[[benchmarks]]\nname = "C"\n'
                                             'source = "crows-pairs"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert [b.name for b in load_config("bmne_study.toml").benchmarks] == ["C"]


@pytest.mark.slow
def test_paper_study_runs_with_one_command(models_dir, data_dir, tmp_path, monkeypatch, capsys):
    import datasets
    import huggingface_hub

    data = tmp_path / "data"  # the originals from the shared folder, the release fetched into it
    data.mkdir()
    for sub in ("stereoset", "crows-pairs"):
        (data / sub).symlink_to(data_dir / sub)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda repo_id, filename, **kw: str(FIXTURE / filename))
    monkeypatch.setattr(datasets, "load_dataset",
                        lambda repo, config, **kw: datasets.Dataset.from_csv(str(FIXTURE / f"{config}_subset.csv")))
    monkeypatch.setitem(dl.manifest()["bmne-stereoset"], "sha256", file_sha256(FIXTURE / "stereoset_subset.csv"))
    out = tmp_path / "out"
    rc = main(["study", "bmne_study.toml", "--models", *(str(models_dir / m) for m in ("tiny-bert", "tiny-roberta")),
               "--data-dir", str(data), "--limit", "6", "--output", str(out), "--cache-dir", str(tmp_path / "c"),
               "--quiet"])
    assert rc == 0, capsys.readouterr().err
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    keys = {s["key"] for s in doc["sections"]}
    assert {"table4", "table5", "figure2", "table6/pll/BMNE-CrowS-vs-BMNE-StereoSet",
            "table6/pll-word-l2r/BMNE-CrowS-vs-BMNE-StereoSet"} <= keys
    counts = doc["provenance"]["extra"]["benchmarks"]
    assert counts["StereoSet-gender"]["counts"]["after_bias_types"] == 255
    assert counts["CrowS-gender"]["counts"]["after_bias_types"] == 262
    assert doc["provenance"]["extra"]["study"]["source"].startswith("package data/bmne_study.toml")
