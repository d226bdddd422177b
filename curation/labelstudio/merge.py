"""Fold human review decisions back into a curated version of the items.

Human decisions override automatic ones: the adjudicated annotation of an item decides
whether it is kept, edited or removed, its dimension, and its pitfalls. Items nobody
reviewed follow the ``unreviewed`` policy (the automatic proposal by default). The result
keeps every input item somewhere: in ``items`` (kept or edited) or in ``removed`` (with
the reason), and ``decisions`` has one row per input item saying who decided what.

Provenance of a human decision travels with the item as an ``info`` flag
``human_review`` whose evidence names the annotator, the annotation id and time, the
adjudication rule, and for edits the old and new sentence of each edited role. A human
dimension replaces the automatic tag (:func:`stereoset_eval.curation.dimensions.with_tag`, source
``human``; ``unclear`` = a person found no dimension); a human edit made of token
substitutions is appended to ``provenance.edits`` (:mod:`~stereoset_eval.curation.labelstudio.human_edits`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

import pandas as pd

from stereoset_eval.foundation.errors import StereosetEvalError, UnknownNameError
from stereoset_eval.curation.dimensions import DimensionTag, with_tag
from stereoset_eval.foundation.items import PAIR_ROLES, Edit, Flag, Item, Sentence
from stereoset_eval.curation.labelstudio import config as cfg
from stereoset_eval.curation.labelstudio.annotations import Annotation, ParsedExport, time_key
from stereoset_eval.curation.labelstudio.human_edits import substitution_edits
from stereoset_eval.curation.labelstudio.pitfalls import Pitfall, catalogue_fingerprint, model_version
from stereoset_eval.curation.labelstudio.tasks import proposed_decision

ADJUDICATION_RULES: dict[str, str] = {
    "primary": "the primary annotator's annotation wins; items the primary annotator did not "
               "annotate fall back to 'latest'",
    "majority": "the most frequent decision wins (ties: the decision of the most recent annotation "
                "among the tied ones); the most recent annotation with that decision supplies "
                "dimension, pitfalls and edits",
    "latest": "the most recent annotation (updated_at, then annotation id) wins",
}
UNREVIEWED_POLICIES: dict[str, str] = {
    "automatic": "items without a usable human decision follow the automatic proposal",
    "remove": "items without a usable human decision are moved to the removed table",
}
REVIEW_FLAG = "human_review"
REMOVED_COLUMNS = ("item_id", "source", "bias_type", "sent_more", "sent_less", "reason", "pitfalls",
                   "comment", "decision_source", "annotator", "annotation_id", "time")
DECISION_COLUMNS = ("item_id", "decision", "decision_source", "annotator", "annotation_id", "time",
                    "n_annotations", "adjudication", "dimension", "dimension_source", "pitfalls",
                    "pitfalls_rejected", "edited_roles", "note")
DISAGREEMENT_COLUMNS = ("item_id", "field", "values", "rule", "winner", "winner_annotation_id", "resolved")


def adjudicate(anns: Sequence[Annotation], rule: str, primary: str | None = None) -> tuple[Annotation, str]:
    """The winning annotation among ``anns`` (all with a decision) and the rule applied."""
    latest = max(anns, key=time_key)
    if len(anns) == 1:
        return anns[0], "single annotation"
    if rule == "latest":
        return latest, "latest"
    if rule == "primary":
        mine = [a for a in anns if a.annotator == primary]
        return (max(mine, key=time_key), "primary") if mine else (latest, "primary absent -> latest")
    counts = Counter(a.decision for a in anns)
    top = max(counts.values())
    tied = {d for d, c in counts.items() if c == top}
    winner = max((a for a in anns if a.decision in tied), key=time_key)
    return winner, "majority" if len(tied) == 1 else "majority tie -> latest"


def _field_values(a: Annotation) -> dict[str, str | None]:
    """The compared fields of an annotation; None = not given (never a disagreement)."""
    values: dict[str, str | None] = {
        "decision": a.decision, "dimension": a.dimension, "pitfalls": ",".join(sorted(a.pitfalls)) or "-",
    }
    for r in PAIR_ROLES:
        values[f"edited_{r}"] = a.edited.get(r) if a.decision == "edit" else None
    return values


@dataclass(frozen=True)
class MergeResult:
    """Curated items, the removed table, per-item decisions, disagreements, provenance."""

    items: tuple[Item, ...]
    removed: pd.DataFrame
    decisions: pd.DataFrame
    disagreements: pd.DataFrame
    provenance: dict[str, Any] = field(default_factory=dict)


def _check_same_items(items: Sequence[Item], parsed: ParsedExport) -> None:
    """An export that shares no item id with ``items`` is another project's (or version's)."""
    ids = {it.id for it in items}
    if parsed.item_ids and not ids & set(parsed.item_ids):
        raise StereosetEvalError(
            f"the Label Studio export ({parsed.n_tasks} tasks, e.g. item {parsed.item_ids[0]!r}) shares no item id "
            f"with the {len(ids)} items to merge (e.g. {sorted(ids)[0]!r}): it is the export of another project or "
            "of another curated version; nothing was merged")


def merge_annotations(
    items: Sequence[Item],
    parsed: ParsedExport,
    *,
    pitfalls: Sequence[Pitfall],
    adjudication: str = "majority",
    primary_annotator: str | None = None,
    unreviewed: str = "automatic",
) -> MergeResult:
    """Merge parsed annotations into ``items`` (see the module docstring).

    Args:
        items: the pair items that were pushed (matched by ``data.item_id``).
        parsed: the parsed export.
        pitfalls: the catalogue the tasks were made with (automatic flags of pitfalls a
            human unchecked are dropped from the item and listed in ``pitfalls_rejected``).
        adjudication: a key of :data:`ADJUDICATION_RULES`.
        primary_annotator: annotator name (email or ``user:<id>``), required for ``primary``.
        unreviewed: a key of :data:`UNREVIEWED_POLICIES`.
    """
    if adjudication not in ADJUDICATION_RULES:
        raise UnknownNameError("adjudication rule", adjudication, list(ADJUDICATION_RULES))
    if unreviewed not in UNREVIEWED_POLICIES:
        raise UnknownNameError("unreviewed policy", unreviewed, list(UNREVIEWED_POLICIES))
    if adjudication == "primary" and not primary_annotator:
        raise StereosetEvalError("adjudication 'primary' needs primary_annotator (email or user:<id>)")
    _check_same_items(items, parsed)
    known_pitfalls = {p.name for p in pitfalls} | set(parsed.pitfall_names)
    severities = {p.name: p.severity for p in pitfalls}
    by_item: dict[str, list[Annotation]] = {}
    for a in parsed.annotations:
        by_item.setdefault(a.item_id, []).append(a)
    input_ids = {it.id for it in items}
    kept: list[Item] = []
    removed, decisions, disagreements = [], [], []
    for item in items:
        anns = by_item.get(item.id, [])
        voting = [a for a in anns if a.decision is not None]
        auto_pitfalls = sorted({f.rule for f in item.flags if f.rule in known_pitfalls})
        row: dict[str, Any] = {"item_id": item.id, "n_annotations": len(anns), "annotator": None,
                               "annotation_id": None, "time": None, "adjudication": None, "note": ""}
        if not voting:
            decision = proposed_decision(item, pitfalls) if unreviewed == "automatic" else "remove"
            row.update(decision=decision, decision_source=f"unreviewed:{unreviewed}", dimension=item.dimension,
                       dimension_source="automatic", pitfalls=",".join(auto_pitfalls), pitfalls_rejected="",
                       edited_roles="")
            if item.id not in parsed.item_ids:
                row["note"] = "item not in the export"
            decisions.append(row)
            if decision == "remove":
                reason = (f"automatic: {', '.join(auto_pitfalls)}" if unreviewed == "automatic"
                          else "not reviewed (policy unreviewed=remove)")
                removed.append(_removed_row(item, reason, auto_pitfalls, None, row["decision_source"], None))
            else:
                kept.append(item)
            continue
        winner, applied = adjudicate(voting, adjudication, primary_annotator)
        if len(voting) > 1:
            disagreements += _disagreements(item.id, voting, winner, applied)
        human = sorted(winner.pitfalls)
        rejected = sorted(set(auto_pitfalls) - set(human))
        if winner.dimension is None:
            dimension, dim_source = item.dimension, "automatic"
        else:
            dimension = winner.dimension if winner.dimension in cfg.DIMENSIONS else None
            dim_source = "human" if winner.dimension != cfg.UNCLEAR else "human:unclear"
        row.update(decision=winner.decision, decision_source="human", annotator=winner.annotator,
                   annotation_id=winner.annotation_id, time=winner.time, adjudication=applied,
                   dimension=dimension, dimension_source=dim_source, pitfalls=",".join(human),
                   pitfalls_rejected=",".join(rejected), edited_roles="")
        if winner.decision == "remove":
            reason = "; ".join(x for x in (f"pitfalls: {', '.join(human)}" if human else "",
                                           f"comment: {winner.comment}" if winner.comment else "") if x)
            removed.append(_removed_row(item, reason or "removed by annotator (no reason given)", human,
                                        winner.comment, "human", winner))
            decisions.append(row)
            continue
        sentences, edits = list(item.sentences), {}
        if winner.decision == "edit":
            for i, s in enumerate(sentences):
                new = winner.edited.get(s.role)
                if new is not None and new != s.text:
                    tokens = substitution_edits(s.text, new, s.role)
                    edits[s.role] = {"old": s.text, "new": new,
                                     "token_edits": None if tokens is None else [e.to_dict() for e in tokens]}
                    sentences[i] = Sentence(id=s.id, text=new, role=s.role)
            row["edited_roles"] = ",".join(sorted(edits))
            if not edits:
                row["note"] = "decision edit without a changed sentence: kept as proposed"
            rewritten = sorted(r for r, e in edits.items() if e["token_edits"] is None)
            if rewritten:
                row["note"] = (f"{', '.join(rewritten)} rewritten beyond token substitutions: provenance edits "
                               "rebuild the proposed sentence (human_review flag: old -> new)")
        elif any(winner.edited.get(s.role, s.text) != s.text for s in sentences):
            row["note"] = "text areas changed but the decision is keep: the changes were not applied"
        human_dimension: str | None | Literal[False] = False if dim_source == "automatic" else dimension
        kept.append(_reviewed_item(item, winner, applied, sentences, edits, human_dimension, human, known_pitfalls,
                                   severities))
        decisions.append(row)
    from stereoset_eval.foundation.provenance_records import labelstudio_merge_provenance

    provenance = labelstudio_merge_provenance(
        pitfall_catalogue=catalogue_fingerprint(pitfalls), model_version=model_version(pitfalls),
        adjudication=adjudication, adjudication_rule=ADJUDICATION_RULES[adjudication],
        primary_annotator=primary_annotator,
        unreviewed=unreviewed, unreviewed_policy=UNREVIEWED_POLICIES[unreviewed],
        n_input_items=len(items), n_kept=len(kept), n_removed=len(removed),
        n_edited=sum(1 for d in decisions if d["edited_roles"]),
        n_human_decisions=sum(1 for d in decisions if d["decision_source"] == "human"),
        n_disagreement_rows=len(disagreements),
        annotators=list(parsed.annotators()),
        issue_counts=parsed.issue_counts(),
        export_items_not_in_input=sorted(set(parsed.item_ids) - input_ids),
    ).to_dict()
    return MergeResult(
        items=tuple(kept),
        removed=_table(removed, REMOVED_COLUMNS),
        decisions=_table(decisions, DECISION_COLUMNS),
        disagreements=_table(disagreements, DISAGREEMENT_COLUMNS),
        provenance=provenance,
    )


def _table(rows: list[dict[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    """DataFrame with integer id columns kept integer (nullable) rather than float."""
    df = pd.DataFrame(rows, columns=list(columns))
    for col in ("annotation_id", "winner_annotation_id", "n_annotations"):
        if col in df.columns:
            df[col] = df[col].astype("Int64")
    return df


def _removed_row(item: Item, reason: str, pitfalls: Sequence[str], comment: str | None, source: str,
                 winner: Annotation | None) -> dict[str, Any]:
    return {
        "item_id": item.id, "source": item.source, "bias_type": item.bias_type,
        "sent_more": item.text("sent_more"), "sent_less": item.text("sent_less"), "reason": reason,
        "pitfalls": ",".join(pitfalls), "comment": comment, "decision_source": source,
        "annotator": winner.annotator if winner else None,
        "annotation_id": winner.annotation_id if winner else None, "time": winner.time if winner else None,
    }


def _disagreements(item_id: str, anns: Sequence[Annotation], winner: Annotation, applied: str) -> list[dict]:
    """One row per field on which the annotators who gave a value disagree."""
    rows = []
    per = {a.annotator: _field_values(a) for a in anns}
    won = _field_values(winner)
    for f in won:
        values = {who: v[f] for who, v in per.items() if v[f] is not None}
        if len(set(values.values())) > 1:
            rows.append({
                "item_id": item_id, "field": f,
                "values": "; ".join(f"{who}={val}" for who, val in sorted(values.items())),
                "rule": applied, "winner": winner.annotator, "winner_annotation_id": winner.annotation_id,
                "resolved": won[f],
            })
    return rows


def _reviewed_item(item: Item, winner: Annotation, applied: str, sentences: list[Sentence],
                   edits: dict[str, dict[str, Any]], human_dimension: str | None | Literal[False], human: Sequence[str],
                   known_pitfalls: set[str], severities: dict[str, str]) -> Item:
    """The item after the human decision: sentences, dimension tag, pitfall flags, review flag.

    ``human_dimension`` is the person's label (None = unclear), or False when the
    annotation gave none and the automatic tag stays.
    """
    flags = [f for f in item.flags if f.rule not in known_pitfalls or f.rule in human]
    have = {f.rule for f in flags}
    who = {"annotator": winner.annotator, "annotation_id": winner.annotation_id, "time": winner.time}
    for name in human:
        if name not in have:
            flags.append(Flag(name, item.id, severities.get(name, "warning"), f"marked by annotator {winner.annotator}",
                              {"source": "human", **who}))
    flags.append(Flag(
        REVIEW_FLAG, item.id, "info",
        f"{winner.decision} by {winner.annotator} (annotation {winner.annotation_id}, {winner.time})",
        {"decision": winner.decision, "adjudication": applied, **who, "edits": edits,
         "comment": winner.comment},
    ))
    note = f"human review: {winner.decision} by {winner.annotator}, annotation {winner.annotation_id} at {winner.time}"
    if item.provenance.note:
        note = f"{item.provenance.note}; {note}"
    token_edits = tuple(Edit(**e) for role in PAIR_ROLES if role in edits for e in edits[role]["token_edits"] or ())
    provenance = dataclasses.replace(item.provenance, note=note, edits=item.provenance.edits + token_edits)
    reviewed = item.replace(sentences=tuple(sentences), flags=tuple(flags), provenance=provenance)
    if human_dimension is False:
        return reviewed
    return with_tag(reviewed, DimensionTag(item.id, human_dimension, "human", (), winner.annotator))
