"""Rules 3.1 (issue 31, item 6): retired fitted special cases are evidence only, and the per-rule
held-out table (curation/rule_heldout.py) that measured them."""

from __future__ import annotations

from pathlib import Path

import pytest

from stereoset_eval.curation.decision_record import Decided, ItemRecord
from stereoset_eval.curation.reviewed import Review, ReviewedInstance
from stereoset_eval.foundation.items import Item, Provenance, Sentence

#: the rules retired in 3.1 (docs/curation.md "3.1: retired")
RETIRED = {"generic_negativity", "generic_positivity", "conflicting_association", "negation_perturbation",
           "name_conflict", "ambiguous_name_swap", "inconsistent_gender"}


# --- the registry ------------------------------------------------------------------------------------------------

def test_retired_rules_are_evidence_only_in_the_registry():
    from stereoset_eval.curation.rules import RULES, RULES_VERSION, decides

    assert RULES_VERSION == "3.1"
    assert {r.name for r in RULES.values() if r.retired} == RETIRED
    for name in RETIRED:
        r = RULES[name]
        assert r.effect == "flag" and r.retired.startswith("3.1: ") and not decides(name), name
    # an edited sentence that disagrees still holds the instance: only the source-pair hold is retired
    assert RULES["inconsistent_gender"].instance_effect == "hold"
    # what carries over keeps deciding: mechanical rules, the target-only swap, repairs, the supported rules
    for name, effect in (("short_template", "remove"), ("other_group_marker", "remove"), ("no_group_term", "remove"),
                         ("mismatched_group_category", "remove"), ("age_stereotype", "drop_instance"),
                         ("weak_consensus", "hold"), ("no_gender_association", "drop_instance"),
                         ("name_left_alone", "hold"), ("target_swap", "repair"), ("repair_spelling", "repair"),
                         ("real_word_typo", "repair")):
        assert RULES[name].effect == effect and not RULES[name].retired and decides(name), name


def test_a_retired_rule_cannot_declare_a_deciding_effect():
    from stereoset_eval.curation.rules.registry import Rule

    with pytest.raises(ValueError, match="retired"):
        Rule("zz_retired", "probe", "judgement", "hold", "validity", retired="3.1: probe")
    assert Rule("zz_retired", "probe", "judgement", "flag", "validity", retired="3.1: probe").retired


def test_evidence_only_turns_a_rule_off_for_one_block_and_restores_the_registry():
    from stereoset_eval.curation.rules import RULES, decides, evidence_only
    from stereoset_eval.curation.validity import judge

    before = RULES["no_gender_association"]
    assert judge(["workbench"], "male", "l", consensus=None, exclude="").rule == "no_gender_association"
    with evidence_only("no_gender_association"):
        assert not decides("no_gender_association")
        v = judge(["workbench"], "male", "l", consensus=None, exclude="")
        assert (v.action, v.rule) == ("keep", "stereotype_validity")
        assert [p["rule"] for p in v.evidence["evidence_only"]] == ["no_gender_association"]
    assert RULES["no_gender_association"] is before and decides("no_gender_association")


# --- a retired rule no longer decides, on the real data --------------------------------------------------------

@pytest.fixture(scope="module")
def run(curated_real, tmp_path_factory):
    from stereoset_eval.curation.card import dataset_card
    from stereoset_eval.curation.export import write_curation

    result = curated_real  # StereoSet dev + CrowS-Pairs, default settings: the session's shared run (conftest.py)
    out = tmp_path_factory.mktemp("retired") / "out"
    write_curation(result, out, card=dataset_card(result, version="t"))
    return result, out


def test_a_retired_rule_no_longer_decides(run):
    result, _ = run
    # no removal, drop or hold is owned by a retired rule (but an instance whose *edited* sentence disagrees
    # in gender still waits: inconsistent_gender keeps that guard of the swap)
    owned = [d for d in result.decisions if d.rule in RETIRED and d.status in ("removed", "review")]
    assert all(d.rule == "inconsistent_gender" and d.reason.startswith("after editing") for d in owned)
    guard = {d.source_id for d in owned}
    assert not {d.rule for rec in result.records if rec.source_id not in guard for d in rec.decided} & RETIRED
    # yet their cues are still found: evidence-only flags on the instances
    cues = {f.rule for d in result.decisions if d.instance is not None for f in d.instance.flags
            if f.rule in RETIRED and f.evidence.get("evidence_only")}
    assert {"generic_negativity", "generic_positivity", "conflicting_association", "negation_perturbation",
            "name_conflict", "inconsistent_gender"} <= cues


def test_a_retired_cue_is_shown_to_the_reviewer(run):
    from stereoset_eval.curation.labelstudio.items_io import load_review_items

    result, out = run
    review = load_review_items(Path(out) / "review_items.jsonl")
    flags = [f for it in review for f in it.flags if f.rule in RETIRED]
    shown = [f for f in flags if f.evidence.get("evidence_only")]
    assert shown and all(f.message.startswith("evidence only (3.1: ") for f in shown)
    # the only deciding flag of a retired rule: inconsistent_gender's guard of an edited sentence
    assert {f.rule for f in flags if not f.evidence.get("evidence_only")} <= {"inconsistent_gender"}
    neg = next(f for f in shown if f.rule == "generic_negativity")
    assert neg.evidence["would"] == "drop" and neg.evidence["valence"] and neg.evidence["words"]


# --- the per-rule held-out table on synthetic records ----------------------------------------------------------

def _inst(source_id: str, slot: str, more: str, less: str) -> Item:
    iid = f"{source_id}#{slot}"
    return Item(iid, "crows-pairs", "gender", (Sentence(f"{iid}:more", more, "sent_more"),
                                                Sentence(f"{iid}:less", less, "sent_less")),
                Provenance("x.csv", "0" * 64, 1, "test"))


def _gold(source_id: str, *, keep_l: bool, remove: bool = False) -> Review:
    if remove:
        return Review(source_id, "crows", False, {}, "no_stereotype", "test")
    insts = {"l": ReviewedInstance("l", keep_l, "Men are kind.", "Women are kind.", "Personality Traits")}
    return Review(source_id, "crows", True, insts, "", "test")


def test_held_out_table_grades_the_rule_and_its_alternative_on_the_same_units():
    from stereoset_eval.curation.rule_heldout import held_out_rule_table, unit_agrees

    ids = [f"crows-pairs/crows:{i}" for i in range(6)]
    drop = Decided("generic_negativity", "instance", "l", "drop")
    base = [ItemRecord(s, "crows", (drop,)) for s in ids[:4]]
    base += [ItemRecord(s, "crows", (Decided("name_conflict", "item", "", "hold"),)) for s in ids[4:]]
    # without the rule the instance is kept as built (and the held items kept as they are)
    kept = {"l": _inst("x", "l", "Men are kind.", "Women are kind.")}
    alt = [ItemRecord(s, "crows", (Decided("stereotype_validity", "instance", "l", "keep"),), dict(kept)) for s in ids]
    gold = {ids[0]: _gold(ids[0], keep_l=False), ids[1]: _gold(ids[1], keep_l=False),
            ids[2]: _gold(ids[2], keep_l=False), ids[3]: _gold(ids[3], keep_l=True),
            ids[4]: _gold(ids[4], keep_l=False, remove=True), ids[5]: _gold(ids[5], keep_l=True)}
    assert unit_agrees(alt[3], "l", gold[ids[3]]) and not unit_agrees(alt[0], "l", gold[ids[0]])
    assert unit_agrees(base[0], "l", gold[ids[0]])  # the drop record keeps nothing, as the person
    assert unit_agrees(base[4], "", gold[ids[4]]) is None  # a held item proposes nothing
    table = held_out_rule_table(base, gold, k=2, alternatives={"generic_negativity": alt, "name_conflict": alt})
    by = table.set_index("rule")
    neg = by.loc["generic_negativity"]
    assert (neg["n"], neg["agree"], neg["alt_n"], neg["alt_agree"]) == (4, 3, 4, 1)
    assert (neg["rule_only"], neg["alt_only"]) == (3, 1) and neg["p_better"] == pytest.approx(5 / 16, abs=1e-4)
    assert not neg["supported"]  # right 3 of 4 against 1 of 4 is not clearly better on four units
    # a hold is right when the alternative would have been wrong (the item needed a person)
    hold = by.loc["name_conflict"]
    assert (hold["n"], hold["agree"], hold["alt_agree"]) == (2, 1, 1)
    # without alternatives the table still gives each rule's held-out agreement and estimate
    plain = held_out_rule_table(base, gold, k=2).set_index("rule")
    assert plain.loc["generic_negativity", "agreement"] == 0.75 and plain.loc["name_conflict", "n"] == 0


def test_sign_test_of_the_paired_comparison():
    from stereoset_eval.curation.rule_heldout import _sign_test

    assert _sign_test(5, 0) == pytest.approx(1 / 32, abs=1e-4)
    assert _sign_test(3, 3) == pytest.approx(0.6562, abs=1e-4)
    assert _sign_test(0, 0) == 1.0


def test_measure_runs_the_pipeline_once_per_rule_with_it_as_evidence(crows_csv):
    from stereoset_eval.curation.loaders.registry import load_items
    from stereoset_eval.curation.pipeline import curate_items
    from stereoset_eval.curation.rule_heldout import measure
    from stereoset_eval.curation.rules import RULES

    items = [it for it in load_items("crows-pairs", crows_csv) if it.bias_type == "gender"][:60]
    records = curate_items(items).records
    drops = [r for r in records if any(d.rule == "no_gender_association" for d in r.decided)]
    assert drops
    # a gold that keeps every instance the rule dropped: the rule is wrong, keeping (its alternative) right
    gold = {}
    for r in drops:
        insts = {s: ReviewedInstance(s, True, i.text("sent_more"), i.text("sent_less"), "Roles and Behaviors")
                 for s, i in r.candidates.items()}
        gold[r.source_id] = Review(r.source_id, "crows", True, insts, "", "test")
    calls = []

    def pipeline():
        calls.append(RULES["no_gender_association"].effect)
        return curate_items(items).records

    table = measure(pipeline, gold, k=2, rules=["no_gender_association"])
    row = table.set_index("rule").loc["no_gender_association"]
    assert calls == ["drop_instance", "flag"] and RULES["no_gender_association"].effect == "drop_instance"
    assert row["agree"] == 0 and row["alt_agreement"] > 0.5 and not row["supported"]


def test_held_out_command_ends_a_bad_input_in_one_error_line(tmp_path):
    """``python -m stereoset_eval.curation.rule_heldout`` with a missing data file: one ``error:`` line
    naming it, exit 2, no traceback."""
    import subprocess
    import sys

    gold = tmp_path / "gold.csv"
    gold.write_text("dataset,source_id,decision\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "stereoset_eval.curation.rule_heldout", "--benchmark", "crows-pairs",
                           "--data", str(tmp_path / "missing.csv"), "--gold", str(gold)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "missing.csv" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
