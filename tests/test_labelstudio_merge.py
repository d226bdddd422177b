"""Merging reviewed annotations into a curated version, on the committed server export.

Item numbers refer to positions in ``fixtures/labelstudio_items.jsonl`` and to the plan
``fixtures/labelstudio_plan.json``; B (checker) annotated after A (expert), so B's
annotations are the most recent ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from curation.errors import StereosetEvalError, UnknownNameError
from curation.labelstudio.annotations import load_export, parse_export
from curation.labelstudio.items_io import read_items_jsonl
from curation.labelstudio.merge import REVIEW_FLAG, merge_annotations
from curation.labelstudio.pitfalls import Pitfall, catalogue_from_registry
from curation.labelstudio.report import write_review

FIXTURES = Path(__file__).resolve().parent / "fixtures"
META = json.loads((FIXTURES / "labelstudio_meta.json").read_text(encoding="utf-8"))
A, B = META["annotators"]["A"], META["annotators"]["B"]
X, Y = META["pitfalls"]["X"], META["pitfalls"]["Y"]


@pytest.fixture(scope="module")
def items():
    return read_items_jsonl(FIXTURES / "labelstudio_items.jsonl")


@pytest.fixture(scope="module")
def parsed():
    return parse_export(load_export(FIXTURES / "labelstudio_export.json"), pitfall_names=META["pitfall_names"])


@pytest.fixture(scope="module")
def pitfalls():
    """The catalogue the fixture was made with (names and kinds from its meta file)."""
    from curation.labelstudio.pitfalls import default_catalogue

    current = {p.name: p for p in default_catalogue()}
    return tuple(current.get(n) or Pitfall(n, "", True) for n in META["pitfall_names"])


def _ids(items, numbers):
    return sorted(items[i].id for i in numbers)


def _edited(text: str, tag: str) -> str:
    return f"{text.rstrip()[:-1]} ({tag})." if text.rstrip().endswith(".") else f"{text.rstrip()} ({tag})"


@pytest.mark.parametrize("rule, primary, removed, edited", [
    ("majority", None, [14, 15, 17, 21], {12: "fix-12", 13: "B-13"}),
    ("latest", None, [14, 15, 17, 21], {12: "fix-12", 13: "B-13"}),
    ("primary", "A", [14, 17, 21], {12: "fix-12", 13: "A-13", 16: "A-16"}),
])
def test_adjudication_rules(items, parsed, pitfalls, rule, primary, removed, edited):
    result = merge_annotations(items, parsed, pitfalls=pitfalls, adjudication=rule,
                               primary_annotator=META["annotators"].get(primary))
    assert sorted(result.removed["item_id"]) == _ids(items, removed)
    assert len(result.items) + len(result.removed) == len(items) == 22
    curated = {it.id: it for it in result.items}
    for i, tag in edited.items():
        role = "sent_more" if i == 16 else "sent_less"
        assert curated[items[i].id].text(role) == _edited(items[i].text(role), tag)
        other = "sent_less" if role == "sent_more" else "sent_more"
        assert curated[items[i].id].text(other) == items[i].text(other)
    assert result.provenance["n_edited"] == len(edited)
    assert result.provenance["adjudication"] == rule


def test_majority_details(items, parsed, pitfalls):
    result = merge_annotations(items, parsed, pitfalls=pitfalls)
    dec = result.decisions.set_index("item_id")
    assert list(result.decisions["item_id"]) == [it.id for it in items]  # one row per input item
    # ties: 15 keep/remove and 16 edit/keep are broken by the most recent annotation (B)
    assert dec.loc[items[15].id, "adjudication"] == "majority tie -> latest"
    assert dec.loc[items[15].id, ["decision", "annotator"]].tolist() == ["remove", B]
    assert dec.loc[items[16].id, ["decision", "annotator"]].tolist() == ["keep", B]
    # B gave no dimension for 16: the automatic tag stays; B rejected the automatic pitfall X
    assert dec.loc[items[16].id, ["dimension", "dimension_source"]].tolist() == ["Attitudes and Beliefs", "automatic"]
    assert X in dec.loc[items[16].id, "pitfalls_rejected"].split(",")
    curated = {it.id: it for it in result.items}
    assert X not in {f.rule for f in curated[items[16].id].flags}
    # dimension "unclear" -> None on the item, recorded as such
    assert pd.isna(dec.loc[items[11].id, "dimension"]) and dec.loc[items[11].id, "dimension_source"] == "human:unclear"
    assert curated[items[11].id].dimension is None
    # edit without any changed text: kept as proposed, said so
    assert dec.loc[items[18].id, "note"].startswith("decision edit without a changed sentence")
    assert curated[items[18].id].sentences == items[18].sentences
    # unreviewed items follow the automatic proposal (21 has an error-severity rule flag)
    assert dec.loc[items[20].id, ["decision", "decision_source"]].tolist() == ["keep", "unreviewed:automatic"]
    assert dec.loc[items[21].id, ["decision", "decision_source"]].tolist() == ["remove", "unreviewed:automatic"]
    assert dec.loc[items[20].id, "note"] == ""
    # a pitfall only the human saw becomes a flag naming the annotator
    flag = next(f for f in curated[items[3].id].flags if f.rule == X)
    assert flag.evidence["source"] == "human" and flag.evidence["annotator"] == B


def test_removed_table_reasons(items, parsed, pitfalls):
    removed = merge_annotations(items, parsed, pitfalls=pitfalls).removed.set_index("item_id")
    assert removed.loc[items[14].id, "reason"] == f"pitfalls: {X}; comment: no stereotype about gender"
    assert removed.loc[items[15].id, "comment"] == "the sentences differ in more than the group"
    assert removed.loc[items[17].id, "reason"] == f"pitfalls: {X}"
    assert removed.loc[items[21].id, "reason"].startswith("automatic: ")
    assert removed.loc[items[21].id, "decision_source"] == "unreviewed:automatic"
    assert removed.loc[items[14].id, "annotator"] == B and removed.loc[items[14].id, "annotation_id"] > 0
    assert removed.loc[items[14].id, "sent_more"] == items[14].text("sent_more")


def test_review_provenance_travels_with_the_item(items, parsed, pitfalls):
    curated = {it.id: it for it in merge_annotations(items, parsed, pitfalls=pitfalls).items}
    it = curated[items[13].id]
    review = next(f for f in it.flags if f.rule == REVIEW_FLAG)
    ev = review.evidence
    assert (review.severity, ev["decision"], ev["annotator"], ev["adjudication"]) == ("info", "edit", B, "majority")
    assert ev["annotation_id"] > 0 and ev["time"].endswith("Z")
    assert ev["edits"] == {"sent_less": {"old": items[13].text("sent_less"), "new": it.text("sent_less")}}
    assert it.provenance.note.startswith(f"human review: edit by {B}, annotation {ev['annotation_id']}")
    assert it.provenance.derived_from == items[13].provenance.derived_from
    assert it.provenance.edits == items[13].provenance.edits
    assert it.sentences[1].id == items[13].sentences[1].id


def test_disagreements_listed(items, parsed, pitfalls):
    table = merge_annotations(items, parsed, pitfalls=pitfalls).disagreements
    index = {it.id: i for i, it in enumerate(items)}
    rows = sorted((index[r.item_id], r.field) for r in table.itertuples())
    assert rows == [(3, "pitfalls"), (10, "dimension"), (11, "dimension"), (12, "pitfalls"), (13, "edited_sent_less"),
                    (13, "pitfalls"), (15, "decision"), (16, "decision")]
    row = table[(table.item_id == items[15].id) & (table.field == "decision")].iloc[0]
    assert row["values"] == "; ".join(sorted([f"{A}=keep", f"{B}=remove"]))
    assert (row["resolved"], row["winner"], row["rule"]) == ("remove", B, "majority tie -> latest")


def test_unreviewed_remove_policy(items, parsed, pitfalls):
    result = merge_annotations(items, parsed, pitfalls=pitfalls, unreviewed="remove")
    removed = result.removed.set_index("item_id")
    assert sorted(removed.index) == _ids(items, [14, 15, 17, 20, 21])
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
    from curation.labelstudio.agreement import pairwise_agreement
    from curation.labelstudio.items_io import read_items_jsonl

    result = merge_annotations(items, parsed, pitfalls=pitfalls)
    agreement = pairwise_agreement(parsed.annotations, pitfall_names=parsed.pitfall_names)
    paths = write_review(tmp_path / "review", result, parsed, agreement, source="fixture")
    assert sorted(p.name for p in (tmp_path / "review").iterdir()) == sorted(p.name for p in paths.values())
    back = read_items_jsonl(paths["curated_items"])
    assert back == list(result.items)
    report = json.loads(paths["report_json"].read_text())
    rows = {r["field"]: r for r in report["agreement"]}
    assert rows["decision"]["kappa"] == pytest.approx(107 / 143) and rows["decision"]["n"] == 18
    unused = next(n for n in META["pitfall_names"] if n not in (X, Y))
    assert rows[f"pitfall:{unused}"]["kappa"] is None  # NaN is written as null
    assert report["issue_counts"]["cancelled"] == 1 and report["provenance"]["n_removed"] == 4
    md = paths["report_md"].read_text()
    assert "| decision |" in md and "0.748" in md and "majority" in md


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
    from curation.labelstudio.annotations import Annotation

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
    from curation.labelstudio.merge import adjudicate

    won, how = adjudicate(anns, rule, primary)
    assert (won.annotation_id, how) == (winner, applied)


def test_changed_text_with_keep_is_not_applied_but_noted(items, parsed, pitfalls):
    import dataclasses

    from curation.labelstudio.annotations import ParsedExport

    target = items[2].id
    anns = tuple(dataclasses.replace(a, edited={"sent_more": "Changed."}) if a.item_id == target else a
                 for a in parsed.annotations)
    result = merge_annotations(items, ParsedExport(anns, parsed.issues, parsed.item_ids, parsed.n_tasks,
                                                   parsed.pitfall_names), pitfalls=pitfalls)
    row = result.decisions.set_index("item_id").loc[target]
    assert row["decision"] == "keep" and "not applied" in row["note"]
    assert next(it for it in result.items if it.id == target).sentences == items[2].sentences
