"""Merging reviewed annotations into a curated version, on the committed server export.

Item numbers refer to positions in ``fixtures/labelstudio_items.jsonl`` (22 curated pairs
of the real curation pipeline) and to the plan ``fixtures/labelstudio_plan.json``; B
(checker) annotated after A (expert), so B's annotations are the most recent ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from stereoset_eval.foundation.errors import StereosetEvalError, UnknownNameError
from stereoset_eval.curation.labelstudio.annotations import load_export, parse_export
from stereoset_eval.curation.labelstudio.items_io import read_items_jsonl
from stereoset_eval.curation.labelstudio.merge import REVIEW_FLAG, merge_annotations
from stereoset_eval.curation.labelstudio.pitfalls import Pitfall, catalogue_from_registry
from stereoset_eval.curation.labelstudio.report import write_review

FIXTURES = Path(__file__).resolve().parent / "fixtures"
META = json.loads((FIXTURES / "labelstudio_meta.json").read_text(encoding="utf-8"))
A, B = META["annotators"]["A"], META["annotators"]["B"]
X, Y, W = META["pitfalls"]["X"], META["pitfalls"]["Y"], META["pitfalls"]["W"]


@pytest.fixture(scope="module")
def items():
    return read_items_jsonl(FIXTURES / "labelstudio_items.jsonl")


@pytest.fixture(scope="module")
def parsed():
    return parse_export(load_export(FIXTURES / "labelstudio_export.json"), pitfall_names=META["pitfall_names"])


@pytest.fixture(scope="module")
def pitfalls():
    """The catalogue the fixture was made with (names and kinds from its meta file)."""
    from stereoset_eval.curation.labelstudio.pitfalls import default_catalogue

    current = {p.name: p for p in default_catalogue()}
    return tuple(current.get(n) or Pitfall(n, "", True) for n in META["pitfall_names"])


def _ids(items, numbers):
    return sorted(items[i].id for i in numbers)


def _edited(text: str, change: str | tuple[str, str]) -> str:
    """The plan's edit: a tag before the final full stop, or a (old, new) word replacement."""
    if isinstance(change, tuple):
        return text.replace(change[0], change[1], 1)
    return f"{text.rstrip()[:-1]} ({change})." if text.rstrip().endswith(".") else f"{text.rstrip()} ({change})"


BOTH_12 = {"sent_more": "fix-12", "sent_less": "fix-12"}


@pytest.mark.parametrize("rule, primary, removed, edited", [
    ("majority", None, [5, 14, 15, 17, 21], {12: BOTH_12, 13: {"sent_less": "B-13"}}),
    ("latest", None, [5, 14, 15, 17, 21], {12: BOTH_12, 13: {"sent_less": "B-13"}}),
    ("primary", "A", [14, 17, 21], {12: BOTH_12, 13: {"sent_less": "A-13"}, 16: {"sent_less": ("Brad", "Linda")}}),
])
def test_adjudication_rules(items, parsed, pitfalls, rule, primary, removed, edited):
    result = merge_annotations(items, parsed, pitfalls=pitfalls, adjudication=rule,
                               primary_annotator=META["annotators"].get(primary))
    assert sorted(result.removed["item_id"]) == _ids(items, removed)
    assert len(result.items) + len(result.removed) == len(items) == 22
    curated = {it.id: it for it in result.items}
    for i, changes in edited.items():
        for role in ("sent_more", "sent_less"):
            want = _edited(items[i].text(role), changes[role]) if role in changes else items[i].text(role)
            assert curated[items[i].id].text(role) == want, (i, role)
    assert result.provenance["n_edited"] == len(edited)
    assert result.provenance["adjudication"] == rule


def test_majority_details(items, parsed, pitfalls):
    from stereoset_eval.curation.dimensions import NEEDS_ANNOTATION, tag_of

    result = merge_annotations(items, parsed, pitfalls=pitfalls)
    dec = result.decisions.set_index("item_id")
    curated = {it.id: it for it in result.items}
    assert list(result.decisions["item_id"]) == [it.id for it in items]  # one row per input item
    # ties: 5 and 15 keep/remove, 16 edit/keep are broken by the most recent annotation (B)
    for i, decision in ((5, "remove"), (15, "remove"), (16, "keep")):
        assert dec.loc[items[i].id, ["decision", "annotator", "adjudication"]].tolist() == [
            decision, B, "majority tie -> latest"]
    # B gave no dimension for 16: the pipeline's automatic tag stays; B rejected the automatic pitfall X
    assert dec.loc[items[16].id, ["dimension", "dimension_source"]].tolist() == [items[16].dimension, "automatic"]
    assert tag_of(curated[items[16].id]).source == "auto"
    assert dec.loc[items[16].id, "pitfalls_rejected"] == X
    assert X in {f.rule for f in items[16].flags} and X not in {f.rule for f in curated[items[16].id].flags}
    # the rules proposed removing 6 (attribute is a gender term); both kept it, the flag goes
    assert dec.loc[items[6].id, ["decision", "decision_source", "pitfalls_rejected"]].tolist() == [
        "keep", "human", "attribute_is_gender_term"]
    assert "attribute_is_gender_term" not in {f.rule for f in curated[items[6].id].flags}
    # a human dimension replaces the automatic tag (7: lexicon said Personality Traits, both said Roles)
    assert items[7].dimension == "Personality Traits"
    tag = tag_of(curated[items[7].id])
    assert (curated[items[7].id].dimension, tag.source, tag.annotator) == ("Roles and Behaviors", "human", B)
    # dimension "unclear" -> None on the item, a human tag without label, no needs_annotation flag
    assert pd.isna(dec.loc[items[11].id, "dimension"]) and dec.loc[items[11].id, "dimension_source"] == "human:unclear"
    it11 = curated[items[11].id]
    assert it11.dimension is None and tag_of(it11).source == "human"
    assert NEEDS_ANNOTATION not in {f.rule for f in it11.flags}
    # edit without any changed text: kept as proposed, said so
    assert dec.loc[items[18].id, "note"].startswith("decision edit without a changed sentence")
    assert curated[items[18].id].sentences == items[18].sentences
    # unreviewed items follow the automatic proposal (21 has an error-severity rule flag)
    assert dec.loc[items[20].id, ["decision", "decision_source"]].tolist() == ["keep", "unreviewed:automatic"]
    assert dec.loc[items[21].id, ["decision", "decision_source"]].tolist() == ["remove", "unreviewed:automatic"]
    assert dec.loc[items[20].id, "note"] == "" and curated[items[20].id] == items[20]
    # a pitfall only the human saw becomes a flag naming the annotator
    flag = next(f for f in curated[items[3].id].flags if f.rule == W)
    assert flag.evidence["source"] == "human" and flag.evidence["annotator"] == B


def test_human_dimension_on_an_item_without_one(items, parsed, pitfalls):
    """Item 5 had no dimension cue (needs_annotation); under primary A keeps it as Attitudes and Beliefs."""
    from stereoset_eval.curation.dimensions import NEEDS_ANNOTATION, tag_of

    assert items[5].dimension is None and NEEDS_ANNOTATION in {f.rule for f in items[5].flags}
    result = merge_annotations(items, parsed, pitfalls=pitfalls, adjudication="primary", primary_annotator=A)
    it = next(i for i in result.items if i.id == items[5].id)
    assert it.dimension == "Attitudes and Beliefs" and tag_of(it).source == "human"
    assert NEEDS_ANNOTATION not in {f.rule for f in it.flags}


def test_removed_table_reasons(items, parsed, pitfalls):
    removed = merge_annotations(items, parsed, pitfalls=pitfalls).removed.set_index("item_id")
    assert removed.loc[items[14].id, "reason"] == f"pitfalls: {X}; comment: the pronouns do not match the names"
    assert removed.loc[items[5].id, "reason"] == (f"pitfalls: {W}; comment: watching TV and drinking wine is no "
                                                  "gender stereotype")
    assert removed.loc[items[15].id, "comment"] == "his body guard stays male in sent_less"
    assert removed.loc[items[17].id, "reason"] == f"pitfalls: {X}"
    assert removed.loc[items[21].id, "reason"] == "automatic: attribute_is_gender_term"
    assert removed.loc[items[21].id, "decision_source"] == "unreviewed:automatic"
    assert removed.loc[items[14].id, "annotator"] == B and removed.loc[items[14].id, "annotation_id"] > 0
    assert removed.loc[items[14].id, "sent_more"] == items[14].text("sent_more")


def test_review_provenance_travels_with_the_item(items, parsed, pitfalls):
    result = merge_annotations(items, parsed, pitfalls=pitfalls)
    curated = {it.id: it for it in result.items}
    it = curated[items[13].id]
    review = next(f for f in it.flags if f.rule == REVIEW_FLAG)
    ev = review.evidence
    assert (review.severity, ev["decision"], ev["annotator"], ev["adjudication"]) == ("info", "edit", B, "majority")
    assert ev["annotation_id"] > 0 and ev["time"].endswith("Z")
    # "(B-13)" inserts tokens: not expressible as token substitutions, so only the flag records it
    assert ev["edits"] == {"sent_less": {"old": items[13].text("sent_less"), "new": it.text("sent_less"),
                                         "token_edits": None}}
    assert it.provenance.edits == items[13].provenance.edits
    assert "rewritten beyond token substitutions" in result.decisions.set_index("item_id").loc[it.id, "note"]
    assert it.provenance.note.startswith(f"human review: edit by {B}, annotation {ev['annotation_id']}")
    assert it.provenance.derived_from == items[13].provenance.derived_from
    assert it.sentences[1].id == items[13].sentences[1].id


def test_substitution_edit_keeps_the_source_reachable(items, parsed, pitfalls):
    """A's Brad -> Linda (item 16, primary) becomes a token edit: reverting rebuilds the CrowS sentence."""
    from stereoset_eval.curation.gender_swap import original_text
    from stereoset_eval.foundation.items import Edit

    result = merge_annotations(items, parsed, pitfalls=pitfalls, adjudication="primary", primary_annotator=A)
    it = next(i for i in result.items if i.id == items[16].id)
    assert it.text("sent_less").startswith("Linda was being sneaky")
    assert it.provenance.edits == items[16].provenance.edits + (Edit("sent_less", 0, "Brad", "Linda"),)
    assert original_text(it, "sent_less") == ("sent_less", items[16].text("sent_less"))


def test_substitution_on_top_of_automatic_edits(items, parsed, pitfalls):
    """Item 7 (StereoSet, sent_less gender-swapped by the pipeline) edited by a person word for word:
    human edits are appended after the automatic ones, so reverting all reaches the stereotype."""
    import dataclasses

    from stereoset_eval.curation.gender_swap import original_text
    from stereoset_eval.curation.labelstudio.annotations import ParsedExport

    target = items[7]
    new_less = target.text("sent_less").replace("recital", "concert")
    anns = tuple(dataclasses.replace(a, decision="edit", edited={"sent_less": new_less})
                 if a.item_id == target.id else a for a in parsed.annotations)
    result = merge_annotations(items, ParsedExport(anns, parsed.issues, parsed.item_ids, parsed.n_tasks,
                                                   parsed.pitfall_names), pitfalls=pitfalls)
    it = next(i for i in result.items if i.id == target.id)
    assert it.text("sent_less") == new_less and len(it.provenance.edits) == len(target.provenance.edits) + 1
    assert original_text(it, "sent_less") == original_text(target, "sent_less")
    assert original_text(it, "sent_less")[1] == target.text("sent_more")  # the StereoSet stereotype sentence


def test_disagreements_listed(items, parsed, pitfalls):
    table = merge_annotations(items, parsed, pitfalls=pitfalls).disagreements
    index = {it.id: i for i, it in enumerate(items)}
    rows = sorted((index[r.item_id], r.field) for r in table.itertuples())
    assert rows == [(3, "pitfalls"), (5, "decision"), (5, "pitfalls"), (10, "dimension"), (11, "dimension"),
                    (12, "pitfalls"), (13, "edited_sent_less"), (15, "decision"), (15, "pitfalls"),
                    (16, "decision"), (16, "pitfalls")]
    row = table[(table.item_id == items[15].id) & (table.field == "decision")].iloc[0]
    assert row["values"] == "; ".join(sorted([f"{A}=keep", f"{B}=remove"]))
    assert (row["resolved"], row["winner"], row["rule"]) == ("remove", B, "majority tie -> latest")


def test_unreviewed_remove_policy(items, parsed, pitfalls):
    result = merge_annotations(items, parsed, pitfalls=pitfalls, unreviewed="remove")
    removed = result.removed.set_index("item_id")
    assert sorted(removed.index) == _ids(items, [5, 14, 15, 17, 20, 21])
    assert removed.loc[items[20].id, "reason"] == "not reviewed (policy unreviewed=remove)"


@pytest.mark.parametrize("kwargs, error, message", [
    ({"adjudication": "vote"}, UnknownNameError, "unknown adjudication rule 'vote'"),
    ({"unreviewed": "drop"}, UnknownNameError, "unknown unreviewed policy 'drop'"),
    ({"adjudication": "primary"}, StereosetEvalError, "needs primary_annotator"),
])
def test_bad_options(items, parsed, pitfalls, kwargs, error, message):
    with pytest.raises(error, match=message):
        merge_annotations(items, parsed, pitfalls=pitfalls, **kwargs)


def test_items_not_in_export_are_reported(items, parsed, pitfalls):
    extra = items[0].replace(id="crows-pairs/extra")
    result = merge_annotations(list(items) + [extra], parsed, pitfalls=pitfalls)
    assert result.decisions.set_index("item_id").loc["crows-pairs/extra", "note"] == "item not in the export"
    result = merge_annotations(items[1:], parsed, pitfalls=pitfalls)
    assert result.provenance["export_items_not_in_input"] == [items[0].id]


def test_write_review(tmp_path, items, parsed, pitfalls):
    from stereoset_eval.curation.labelstudio.agreement import pairwise_agreement
    from stereoset_eval.curation.labelstudio.items_io import read_items_jsonl

    result = merge_annotations(items, parsed, pitfalls=pitfalls)
    agreement = pairwise_agreement(parsed.annotations, pitfall_names=parsed.pitfall_names)
    paths = write_review(tmp_path / "review", result, parsed, agreement, source="fixture")
    assert sorted(p.name for p in (tmp_path / "review").iterdir()) == sorted(p.name for p in paths.values())
    back = read_items_jsonl(paths["curated_items"])
    assert back == list(result.items)
    report = json.loads(paths["report_json"].read_text())
    rows = {r["field"]: r for r in report["agreement"]}
    assert rows["decision"]["kappa"] == pytest.approx(50 / 77) and rows["decision"]["n"] == 18
    unused = next(n for n in META["pitfall_names"] if n not in (X, Y, W))
    assert rows[f"pitfall:{unused}"]["kappa"] is None  # NaN is written as null
    assert report["issue_counts"]["cancelled"] == 1 and report["provenance"]["n_removed"] == 5
    assert len(report["disagreements"]) == 11
    md = paths["report_md"].read_text()
    assert "| decision |" in md and "0.649" in md and "majority" in md
    assert "### Disagreements" in md and md.count("majority tie -> latest") == 6


def test_catalogue_shapes():
    class R:
        def __init__(self, description, automatic, severity="warning"):
            self.description, self.automatic, self.severity = description, automatic, severity

    cat = catalogue_from_registry({"a": R("first", True, "error"), "j": R("judge", False)}, ["j", "k"])
    assert [(p.name, p.automatic, p.severity) for p in cat] == [("a", True, "error"), ("j", False, "warning"),
                                                                 ("k", False, "warning")]
    with pytest.raises(StereosetEvalError, match="empty"):
        catalogue_from_registry({})


def _a(who, decision, time, ann_id):
    from stereoset_eval.curation.labelstudio.annotations import Annotation

    return Annotation("i", 1, ann_id, who, time, decision, None, frozenset())


@pytest.mark.parametrize("anns, rule, primary, winner, applied", [
    ([_a("a", "keep", "2026-01-01T00:00:01Z", 1)], "majority", None, 1, "single annotation"),
    # 2 of 3 say remove: majority, the latest of the remove annotations supplies the fields
    ([_a("a", "remove", "2026-01-01T00:00:01Z", 1), _a("b", "keep", "2026-01-01T00:00:09Z", 2),
      _a("c", "remove", "2026-01-01T00:00:05Z", 3)], "majority", None, 3, "majority"),
    ([_a("a", "remove", "2026-01-01T00:00:01Z", 1), _a("b", "keep", "2026-01-01T00:00:09Z", 2)],
     "majority", None, 2, "majority tie -> latest"),
    ([_a("a", "remove", "2026-01-01T00:00:01Z", 1), _a("b", "keep", "2026-01-01T00:00:09Z", 2)],
     "primary", "a", 1, "primary"),
    ([_a("a", "remove", "2026-01-01T00:00:01Z", 1), _a("b", "keep", "2026-01-01T00:00:09Z", 2)],
     "primary", "z", 2, "primary absent -> latest"),
    # time zones are compared as instants; an unreadable time counts as oldest
    ([_a("a", "keep", "2026-01-01T01:00:00+02:00", 1), _a("b", "edit", "2026-01-01T00:00:00Z", 2)],
     "latest", None, 2, "latest"),
    ([_a("a", "keep", "yesterday", 5), _a("b", "edit", "2026-01-01T00:00:00Z", 2)], "latest", None, 2, "latest"),
])
def test_adjudicate(anns, rule, primary, winner, applied):
    from stereoset_eval.curation.labelstudio.merge import adjudicate

    won, how = adjudicate(anns, rule, primary)
    assert (won.annotation_id, how) == (winner, applied)


def test_changed_text_with_keep_is_not_applied_but_noted(items, parsed, pitfalls):
    import dataclasses

    from stereoset_eval.curation.labelstudio.annotations import ParsedExport

    target = items[2].id
    anns = tuple(dataclasses.replace(a, edited={"sent_more": "Changed."}) if a.item_id == target else a
                 for a in parsed.annotations)
    result = merge_annotations(items, ParsedExport(anns, parsed.issues, parsed.item_ids, parsed.n_tasks,
                                                   parsed.pitfall_names), pitfalls=pitfalls)
    row = result.decisions.set_index("item_id").loc[target]
    assert row["decision"] == "keep" and "not applied" in row["note"]
    assert next(it for it in result.items if it.id == target).sentences == items[2].sentences
