"""The optional model judge: wiring and provenance with the fixture causal LM (its answers are random)."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def judge(shared_dir):
    from stereoset_eval.scoring.judge import CausalLMJudge

    path = shared_dir / "fixtures" / "models" / "tiny-gpt2"
    if not path.is_dir():
        pytest.skip(f"fixture model not found at {path}")
    return CausalLMJudge(str(path), min_margin=0.0)


def test_judge_returns_a_verdict_with_its_evidence(judge) -> None:
    v = judge(["caring"], "female", "m", ("My mother is caring.", "My father is caring."))
    assert v.action in ("keep", "swap") and v.rule in ("stereotype_validity", "wrong_direction")
    assert v.evidence["decider"] == judge.name and set(v.evidence["logprob"]) == {"female", "male"}
    again = judge(["caring"], "female", "m", ("My mother is caring.", "My father is caring."))
    assert again == v  # deterministic
    assert judge([], "female", "m", ("", "")) is None


def test_pipeline_records_the_judge_as_decider(judge, data_dir, tmp_path, curated_stereoset) -> None:
    from stereoset_eval.cli.main import main
    from stereoset_eval.curation.pipeline import curate_files

    path = data_dir / "stereoset" / "stereoset_dev_ids_ptbr_llm.csv"
    r = curate_files([("stereoset", path)], judge=judge)
    assert r.provenance["validity_decider"] == judge.name
    judged = [f for it in r.suggested_items() for f in it.flags if f.rule == "stereotype_validity"]
    assert judged and all(f.evidence.get("decider") == judge.name for f in judged)
    assert curated_stereoset.provenance["validity_decider"] == "evidence rules"  # no judge (conftest.py's shared run)
    out = tmp_path / "v"
    assert main(["curate", "--benchmark", "stereoset", "--data", str(path), "--output", str(out),
                 "--judge-model", judge.model_id]) == 0
    assert json.loads((out / "provenance.json").read_text())["validity_decider"].startswith("causal-lm:")
    # the judge owns its decisions: a judgement rule of the registry, with no measured reliability here,
    # so its items wait for review
    from stereoset_eval.curation.rules import RULES

    key = f"judge:{judge.name}"
    assert RULES[key].kind == "judgement" and any(d.rule == key for rec in r.records for d in rec.decided)
    assert all(r.routing[rec.source_id].status == "review" for rec in r.records
               if any(d.rule == key for d in rec.decided))
