"""Rule-owned decisions, reliability from reviewed items, routing, and the review round trip (issue 31)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from stereoset_eval.curation.decision_record import Decided, ItemRecord
from stereoset_eval.curation.cross_fit import cross_fit, fold_of
from stereoset_eval.curation.grading import grade, swap_diff
from stereoset_eval.curation.reliability import ReliabilityConfig, estimate, route
from stereoset_eval.curation.reviewed import Review, ReviewedInstance

REPO = Path(__file__).resolve().parents[1]


# --- the registry ---------------------------------------------------------------------------------------------

def test_every_rule_declares_its_kind_effect_and_stage():
    from stereoset_eval.curation.rules import EFFECTS, KINDS, RULES
    from stereoset_eval.curation.rules.registry import STAGES

    assert len(RULES) > 40
    for r in RULES.values():
        assert r.kind in KINDS and r.effect in EFFECTS and r.stage in STAGES, r.name
        assert r.description.strip(), r.name
        assert (r.fn is not None) == (r.stage == "pair"), r.name
    # the decisions of every stage are owned by registered rules: no second table
    assert {"stereotype_validity", "wrong_direction", "generic_negativity", "target_swap", "as_is_pair",
            "repair_capitalisation", "dimension_attribute_cue", "name_left_alone"} <= set(RULES)
    assert RULES["short_template"].effect == "remove" and RULES["short_template"].kind == "mechanical"
    assert RULES["no_gender_association"].effect == "drop_instance" and RULES["no_gender_association"].kind == "judgement"


def test_every_decision_of_a_real_run_names_a_registered_rule(curated):
    from stereoset_eval.curation.rules import RULES

    result, _ = curated
    used = {d.rule for rec in result.records for d in rec.decided}
    assert used and used <= set(RULES)


PROBE_RULE = '''"""A probe rule written by tests/test_curation_reliability.py (into a temporary folder of the test)."""
from stereoset_eval.curation.rules.registry import rule


@rule("zz_probe_cook", effect="remove", description="Probe: a pair about cooks is removed.")
def zz_probe_cook(item, ctx):
    if any("cook" in s.text.lower() for s in item.sentences):
        return ctx.rule.flag(item, "mentions cooking")
    return None
'''


def test_a_new_rule_is_one_file(tmp_path, crows_csv):
    """A module added to the rules package is registered, applied by its declared effect and listed in
    the rules summary, the card and the Label Studio catalogue, with no other file touched.

    The package imports every module of its ``__path__`` (``curation/rules/``); the child process here
    sees one more folder on that path, holding only the probe module, so the probe is a module of the
    package as if it were dropped into ``curation/rules/`` while the source tree itself is never
    written (tests running beside this one, in other processes, must not see a rule that is not there).
    """
    rules_dir = REPO / "curation" / "rules"
    before = sorted(p.name for p in rules_dir.glob("*.py"))
    assert "zz_probe_rule.py" not in before
    extra = tmp_path / "more_rules"
    extra.mkdir()
    (extra / "zz_probe_rule.py").write_text(PROBE_RULE, encoding="utf-8")
    code = f"""
import importlib.abc, json, sys

class AlsoThere(importlib.abc.MetaPathFinder):
    # the rules package as found, with the probe's folder appended to its search path (its __path__)
    def find_spec(self, name, path=None, target=None):
        if name != "stereoset_eval.curation.rules":
            return None
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    spec.submodule_search_locations.append({str(extra)!r})
                    return spec
        return None

sys.meta_path.insert(0, AlsoThere())
from stereoset_eval.curation import rules
assert rules.__path__[-1] == {str(extra)!r} and "zz_probe_cook" in rules.RULES, rules.__path__
from stereoset_eval.curation.card import dataset_card
from stereoset_eval.curation.labelstudio.pitfalls import default_catalogue
from stereoset_eval.curation.pipeline import curate_files
r = curate_files([("crows-pairs", {str(crows_csv)!r})])
removed = r.removed_table()
print(json.dumps({{
    "catalogue": "zz_probe_cook" in {{p.name for p in default_catalogue()}},
    "summary": "zz_probe_cook" in set(r.rule_summary["rule"]),
    "card": "zz_probe_cook" in dataset_card(r, version="v"),
    "removed_by": sorted(set(removed[removed["rule"] == "zz_probe_cook"]["decided_by"])),
    "kept_with_cook": sum("cook" in it.text("sent_more").lower() for it in r.suggested_items()),
}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert sorted(p.name for p in rules_dir.glob("*.py")) == before  # the source tree was not written
    assert got["catalogue"] and got["summary"] and got["card"]
    assert got["removed_by"] == ["rule:zz_probe_cook"]  # mechanical: it decides without reviewed items
    assert got["kept_with_cook"] == 0


# --- reliability and routing on synthetic records --------------------------------------------------------------

def _rec(source_id: str, *decided: Decided) -> ItemRecord:
    return ItemRecord(source_id, "crows", decided)


def _removed(source_id: str) -> Review:
    return Review(source_id, "crows", False, {}, "not_gender", "test")


def _kept(source_id: str, slot: str = "as_is") -> Review:
    return Review(source_id, "crows", True, {slot: ReviewedInstance(slot, True, "A", "B", "Roles and Behaviors")},
                  "", "test")


def test_without_reviewed_items_mechanical_rules_decide_and_judgement_rules_wait():
    mech = _rec("c/1", Decided("short_template", "item", "", "remove"))
    judg = _rec("c/2", Decided("generic_negativity", "instance", "m", "drop"))
    est = estimate([mech, judg], {})
    assert not est["short_template"].measured and not est["generic_negativity"].measured
    assert route(mech, est).status == "automatic"
    r = route(judg, est)
    assert r.status == "review" and "no measured reliability" in r.reason
    assert route(mech, est, ReliabilityConfig(unmeasured="review")).status == "review"


def test_a_hold_always_goes_to_review():
    rec = _rec("c/3", Decided("name_left_alone", "instance", "m", "hold"))
    assert route(rec, estimate([rec], {})).status == "review"


def test_estimates_are_beta_posteriors_with_their_lower_bound():
    from scipy.stats import beta

    recs = [_rec(f"c/{i}", Decided("short_template", "item", "", "remove")) for i in range(12)]
    reviews = {f"c/{i}": _removed(f"c/{i}") for i in range(12)}
    e = estimate(recs, reviews)["short_template"]
    a, b = 20 * 0.99 + 12, 20 * 0.01
    assert (e.n, e.agree) == (12, 12)
    assert e.mean == pytest.approx(a / (a + b), abs=1e-4)
    assert e.lower == pytest.approx(beta.ppf(0.05, a, b), abs=1e-4)
    assert route(recs[0], {"short_template": e}).status == "automatic"
    # one disagreement in twelve sends the rule's items to review at 0.95
    reviews["c/0"] = _kept("c/0")
    e2 = estimate(recs, reviews)["short_template"]
    assert e2.lower < 0.95 and route(recs[1], {"short_template": e2}).status == "review"


def test_a_rule_that_never_fired_inherits_its_family():
    fired = [_rec(f"c/{i}", Decided("generic_negativity", "instance", "m", "drop")) for i in range(30)]
    silent = _rec("c/x", Decided("generic_positivity", "instance", "m", "drop"))
    reviews = {f"c/{i}": _removed(f"c/{i}") for i in range(30)}
    est = estimate([*fired, silent], reviews)
    e = est["generic_positivity"]
    assert e.n == 0 and e.measured and e.family_n == 30
    assert e.mean == pytest.approx(est["generic_negativity"].family_mean, abs=1e-4)  # the family's prior alone
    assert e.lower < est["generic_negativity"].lower  # no evidence of its own: a wider interval


def test_grading_follows_the_person():
    rm = Decided("short_template", "item", "", "remove")
    assert grade(rm, _rec("c/1", rm), _removed("c/1")) is True
    assert grade(rm, _rec("c/1", rm), _kept("c/1")) is False
    drop = Decided("generic_negativity", "instance", "l", "drop")
    assert grade(drop, _rec("c/1", drop), _kept("c/1", "m")) is True   # the person keeps only m
    assert grade(drop, _rec("c/1", drop), _kept("c/1", "l")) is False
    assert grade(Decided("name_left_alone", "instance", "m", "hold"), _rec("c/1"), _kept("c/1")) is None
    assert swap_diff("He was strong.", "She was strong") == (("he", "she"),)


def test_cross_fitting_never_grades_an_item_with_an_estimate_it_took_part_in():
    # 60 agreeing removals and one item the person kept: in-sample, the rule looks the same for every item;
    # cross-fitted, the kept item is routed with estimates fitted without it
    recs = [_rec(f"c/{i}", Decided("short_template", "item", "", "remove")) for i in range(61)]
    reviews = {f"c/{i}": _removed(f"c/{i}") for i in range(60)} | {"c/60": _kept("c/60")}
    rows = {r.source_id: r for r in cross_fit(recs, reviews, k=5)}
    assert len(rows) == 61 and {r.fold for r in rows.values()} == set(range(5))
    bad = rows["c/60"]
    assert bad.status == "automatic" and bad.measured["item"] == (0, 1)  # graded against the person it never saw
    assert all(fold_of(s, 5) == r.fold for s, r in rows.items())
    with pytest.raises(Exception, match="at least 2 folds"):
        cross_fit(recs, reviews, k=1)


def test_routing_parameters_are_checked():
    with pytest.raises(Exception, match="min_precision"):
        ReliabilityConfig(min_precision=1.5)
    with pytest.raises(Exception, match="unmeasured policy"):
        ReliabilityConfig(unmeasured="maybe")


# --- the real data ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gold_path(data_dir) -> Path:
    p = data_dir / "curation-gold" / "gold_dev.csv"
    if not p.is_file():
        pytest.skip(f"expert gold not found at {p}")
    return p


@pytest.fixture(scope="module")
def curated(ids_csv, crows_csv, gold_path):
    from stereoset_eval.curation.pipeline import curate_files

    inputs = [("stereoset", ids_csv), ("crows-pairs", crows_csv)]
    return curate_files(inputs, reviewed=[gold_path]), curate_files(inputs, reviewed=[gold_path])


def test_reviewed_decisions_are_applied_as_they_are(curated, gold_path):
    from stereoset_eval.curation.export import pairs_frame
    from stereoset_eval.curation.gold_eval import load_gold

    result, _ = curated
    gold = load_gold(gold_path)
    frame = pairs_frame(result.items, result.applied.decided)
    reviewed = frame[frame["decided_by"] == "review"]
    kept = gold[gold["instance_status"] == "kept"]
    assert len(reviewed) == len(kept)
    by_id = {(r["item"] + ("" if r["instance"] == "as_is" else "#" + r["instance"])): r for r in kept.to_dict("records")}
    for row in reviewed.to_dict("records"):
        g = by_id[row["id"]]
        assert (row["sent_more"], row["sent_less"], row["category"]) == (g["sent_more"], g["sent_less"], g["dimension"])
        assert pd.isna(row["confidence"])
    removed = result.removed_table()
    gone = set(gold[gold["decision"] == "remove"]["item"])
    assert gone <= set(removed[removed["decided_by"] == "review"]["source_id"])
    # what no person reviewed is automatic (with its rule and confidence) or waits in the review queue
    auto = frame[frame["decided_by"] != "review"]
    assert auto["decided_by"].str.startswith(("rule:", "judge:")).all() and auto["confidence"].notna().all()
    queued = {it.id.split("#", 1)[0] for it in result.review_items()}
    assert not queued & set(frame["id"].str.split("#").str[0]) and not queued & set(gold["item"])
    cov = result.coverage()
    assert set(cov) == {"stereoset", "crows"} and all(0 <= c["coverage"] <= 1 for c in cov.values())
    assert cov["stereoset"]["reviewed"] == gold[gold["dataset"] == "stereoset"]["item"].nunique()


def test_review_queue_is_prepared_and_ordered_by_impact(curated):
    result, _ = curated
    queue = result.review_items()
    assert queue
    impacts = []
    for it in queue:
        [flag] = [f for f in it.flags if f.rule == "review_suggestion"]
        ev = flag.evidence
        assert ev["why_review"] and ev["suggestion"] in ("keep", "remove", "undecided") and ev["decisions"]
        impacts.append(ev["impact"])
    assert impacts == sorted(impacts, reverse=True)
    # an instance the rules would drop travels with the kept one: both readings are in front of the person
    dropped = [it for it in queue if next(f for f in it.flags if f.rule == "review_suggestion").evidence["slot_suggestion"] == "drop"]
    assert dropped


def test_two_runs_are_identical(curated):
    from stereoset_eval.curation.export import pairs_frame

    a, b = curated
    pd.testing.assert_frame_equal(pairs_frame(a.items, a.applied.decided), pairs_frame(b.items, b.applied.decided))
    pd.testing.assert_frame_equal(a.removed_table(), b.removed_table())
    pd.testing.assert_frame_equal(a.reliability_table(), b.reliability_table())
    assert [it.to_dict() for it in a.review_items()] == [it.to_dict() for it in b.review_items()]


def test_a_reviewed_item_the_data_lacks_is_one_clear_line(tmp_path, crows_csv, capsys):
    from stereoset_eval.cli.main import main
    from stereoset_eval.curation.gold_eval import GOLD_COLUMNS

    row = dict.fromkeys(GOLD_COLUMNS, "") | {"dataset": "crows", "source_id": "crows:99999", "decision": "remove",
                                              "remove_reason": "unclear"}
    gold = tmp_path / "reviewed.csv"
    pd.DataFrame([row], columns=list(GOLD_COLUMNS)).to_csv(gold, index=False)
    code = main(["curate", "--benchmark", "crows-pairs", "--data", str(crows_csv), "--output", str(tmp_path / "o"),
                 "--reviewed", str(gold)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "reviewed.csv" in err[0] and "crows:99999" in err[0]
    assert not (tmp_path / "o").exists()


class KeepJudge:
    """A deterministic stand-in model judge: every attribute is a stereotype of the claimed gender."""

    name = "test-always-keep"

    def settings(self):
        return {"judge": "test"}

    def __call__(self, words, claimed, side, sentences):
        from stereoset_eval.curation.validity import Verdict

        return Verdict("keep", "stereotype_validity", 0.5, f"{self.name}: kept",
                       {"answer": {"stereotype": True, "gender": claimed, "dimension": "Personality Traits"}})


def test_a_model_judge_is_one_more_rule_with_a_measured_reliability(ids_csv, gold_path):
    from stereoset_eval.curation.pipeline import curate_files

    r = curate_files([("stereoset", ids_csv)], judge=KeepJudge(), reviewed=[gold_path])
    key = "judge:test-always-keep"
    e = r.estimates[key]
    assert e.kind == "judgement" and e.n > 50 and 0 < e.agree < e.n  # graded against the expert like any rule
    dims = r.estimates[f"{key}[Personality Traits]"]
    assert dims.component == "dimension" and dims.n > 0
    assert r.provenance["judge_settings"] == {"judge": "test"}
    # it keeps every instance, the expert drops many: its reliability is far below 0.95, so nothing it
    # decided is automatic
    assert e.lower < 0.95
    assert all(r.routing[rec.source_id].status == "review" for rec in r.records
               if any(d.rule == key for d in rec.decided) and rec.source_id in r.routing)


def test_label_studio_round_trip_makes_reviewed_items(tmp_path, crows_csv, capsys):
    """curate -> push the review queue -> (a person annotates) -> pull -> merge -> curate --reviewed: the
    annotated items are decided by the person (decided_by = review) and grade the rules."""
    pytest.importorskip("label_studio_sdk")
    from stereoset_eval.cli.main import main

    out = tmp_path / "auto"
    assert main(["curate", "--benchmark", "crows-pairs", "--data", str(crows_csv), "--output", str(out)]) == 0
    tasks_file = tmp_path / "tasks.json"
    assert main(["annotate", "push", "--items", str(out / "review_items.jsonl"), "--tasks-out", str(tasks_file)]) == 0
    tasks = json.loads(tasks_file.read_text())
    impacts = [t["data"]["review_impact"] for t in tasks]
    assert impacts == sorted(impacts, reverse=True)  # the queue is pushed in the order of what a decision changes
    # a person answers the first twelve tasks: the suggestion accepted, except two removals
    answered = {}
    for n, task in enumerate(tasks[:12], start=1):
        keep = n not in (3, 7)
        result = [{"from_name": "decision", "to_name": "sent_more", "type": "choices",
                   "value": {"choices": ["keep" if keep else "remove"]}},
                  {"from_name": "dimension", "to_name": "sent_more", "type": "choices",
                   "value": {"choices": ["Roles and Behaviors"]}}]
        task.update(id=n, annotations=[{"id": n, "completed_by": {"email": "expert@example.org", "id": 1},
                                        "created_at": f"2026-12-01T10:{n:02d}:00Z",
                                        "updated_at": f"2026-12-01T10:{n:02d}:00Z",
                                        "was_cancelled": False, "result": result}])
        answered[task["data"]["item_id"]] = keep
    for n, task in enumerate(tasks[12:], start=13):
        task.update(id=n, annotations=[])
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks), encoding="utf-8")
    merged = tmp_path / "merged"
    assert main(["annotate", "merge", "--items", str(out / "review_items.jsonl"), "--export", str(export),
                 "--out", str(merged)]) == 0
    again = tmp_path / "with-review"
    assert main(["curate", "--benchmark", "crows-pairs", "--data", str(crows_csv), "--output", str(again),
                 "--reviewed", str(merged)]) == 0
    capsys.readouterr()
    pairs = pd.read_csv(again / "pairs.csv", dtype=str, keep_default_na=False)
    removed = pd.read_csv(again / "removed.csv", dtype=str, keep_default_na=False)
    by_review = set(pairs[pairs["decided_by"] == "review"]["id"])
    kept_ids = {i for i, keep in answered.items() if keep}
    assert by_review == kept_ids
    assert (pairs.set_index("id").loc[sorted(kept_ids), "category"] == "Roles and Behaviors").all()
    gone = {i.split("#", 1)[0] for i, keep in answered.items() if not keep} - {i.split("#", 1)[0] for i in kept_ids}
    assert gone <= set(removed[removed["decided_by"] == "review"]["source_id"])
    prov = json.loads((again / "provenance.json").read_text())
    assert prov["reviewed_inputs"][0]["kind"] == "merged Label Studio version"
    assert prov["reviewed_items"] == len({i.split("#", 1)[0] for i in answered})
    queued = {json.loads(line)["id"].split("#", 1)[0] for line in (again / "review_items.jsonl").read_text().splitlines()}
    assert not queued & {i.split("#", 1)[0] for i in answered}
