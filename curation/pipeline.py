"""The curation pipeline: load → scope → harmonise → rules → normalise → rules → tag → stats.

:func:`curate_items` is pure (items in, :class:`CurationResult` out); :func:`curate_files`
adds loading; :func:`stereoset_eval.curation.export.write_curation` writes the versioned dataset. Every
parameter that changes the output is in :class:`CurationConfig` and in the provenance.

After normalisation the automatic rules run again on the instances: an instance whose
*edited* sentence is gender-inconsistent goes to review, an exact duplicate of an earlier
instance is removed; everything else is kept with its flags.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from stereoset_eval.curation.dimensions import DEFAULT_PRIORITY, DIMENSIONS, tag_items
from stereoset_eval.foundation.errors import UnknownNameError
from stereoset_eval.foundation.items import Item
from stereoset_eval.curation.lexicon import lexicon_sha256
from stereoset_eval.foundation.files import file_sha256
from stereoset_eval.curation.normalise import Decision, normalise_pair
from stereoset_eval.curation.pairs import HARMONISABLE, INSTANCE_SEPARATOR, harmonise_all
from stereoset_eval.curation.rules import RULES, RULES_VERSION, RuleConfig, RuleFailure, rule_summary, run_rules
from stereoset_eval.curation.spans import analyse_pair
from stereoset_eval.curation.stats import category_table, counts_table, jaccard_table, length_table
from stereoset_eval.curation.consensus import build_consensus
from stereoset_eval.curation.lexicon import name_counterparts
from stereoset_eval.curation.validity import ValidityConfig, apply_validity
from stereoset_eval.curation.repair import RepairConfig, repair_item
from stereoset_eval.curation.apply_decisions import Applied, apply_routing
from stereoset_eval.curation.decision_record import ItemRecord, build_records
from stereoset_eval.curation.cross_fit import coverage_summary
from stereoset_eval.curation.reliability import Estimate, ReliabilityConfig, Routing, estimate, route
from stereoset_eval.curation.reviewed import check_known
from stereoset_eval.curation.reviewed import Review

SUPPORTED_BIAS_TYPES: tuple[str, ...] = ("gender",)
REMOVED_COLUMNS: tuple[str, ...] = ("item_id", "source_id", "status", "rule", "reason", "decided_by", "confidence")
ESTIMATE_COLUMNS: tuple[str, ...] = ("key", "rule", "kind", "component", "n", "agree", "mean", "lower", "family_n",
                                     "family_mean")


@dataclass(frozen=True)
class CurationConfig:
    """Every parameter of a curation run (recorded in the dataset's provenance)."""

    bias_type: str = "gender"
    rules: RuleConfig = field(default_factory=RuleConfig)
    dimension_priority: tuple[str, ...] = DEFAULT_PRIORITY
    dimension_strength_first: bool = True  # rules 2.2: a physical-strength cue decides Physical first
    validity: ValidityConfig = field(default_factory=ValidityConfig)
    repair: RepairConfig = field(default_factory=RepairConfig)
    partners: str = "swap"  # target-only swap: the target's partner is swapped with it ("keep": left alone)
    reliability: ReliabilityConfig = field(default_factory=ReliabilityConfig)  # issue 31: routing

    def __post_init__(self) -> None:
        from stereoset_eval.curation.target_swap import PARTNER_POLICIES

        if self.partners not in PARTNER_POLICIES:
            raise UnknownNameError("partner policy of the target-only swap", self.partners, PARTNER_POLICIES)
        if self.bias_type not in SUPPORTED_BIAS_TYPES:
            raise UnknownNameError("bias type for curation (gender-swap lexicon)", self.bias_type, SUPPORTED_BIAS_TYPES)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["dimension_priority"] = list(self.dimension_priority)
        return d


@dataclass
class CurationResult:
    """Everything a curation run produced; :mod:`stereoset_eval.curation.export` writes it."""

    items: list[Item]
    pairs: list[Item]
    decisions: list[Decision]
    rule_summary: pd.DataFrame
    instance_rule_summary: pd.DataFrame
    failures: tuple[RuleFailure, ...]
    lengths: pd.DataFrame
    jaccard: pd.DataFrame
    counts: pd.DataFrame
    categories: pd.DataFrame
    provenance: dict[str, Any]
    records: list[ItemRecord] = field(default_factory=list)
    routing: dict[str, Routing] = field(default_factory=dict)
    estimates: dict[str, Estimate] = field(default_factory=dict)
    applied: Applied = field(default_factory=Applied)
    reviewed: tuple[str, ...] = ()

    def suggested_items(self) -> list[Item]:
        """Every item's suggested instances, decided or not (reviewed items as the person decided them).

        This is what the rules propose before anyone reviews: a study scores it to compare models
        (its provenance says so); the curated *version* is :attr:`items`.
        """
        reviewed = set(self.reviewed)
        by_source: dict[str, list[Item]] = {}
        for it in self.applied.items:
            by_source.setdefault(it.id.split(INSTANCE_SEPARATOR, 1)[0], []).append(it)
        out: list[Item] = []
        for rec in self.records:
            if rec.source_id in reviewed or (rec.source_id in self.routing and self.routing[rec.source_id].status == "automatic"):
                out += by_source.get(rec.source_id, [])
            else:
                out += list(rec.kept.values())
        return out

    def review_items(self) -> list[Item]:
        """The review queue: every candidate of the items a person must decide, with the suggestion,
        ordered by what a decision would change (Label Studio tasks are pushed in this order)."""
        return list(self.applied.queue)

    def decided_counts(self) -> dict[str, int]:
        """Source items decided automatically, decided in review (reviewed items given), and waiting for a person."""
        c = Counter(r.status for r in self.routing.values())
        return {"automatic": c.get("automatic", 0), "reviewed": len(self.reviewed), "review": c.get("review", 0)}

    def coverage(self) -> dict[str, dict[str, Any]]:
        """Per dataset: items, decided automatically, reviewed, waiting; coverage and estimated precision."""
        return coverage_summary(self.records, self.routing, self.estimates, set(self.reviewed))

    def removed_table(self) -> pd.DataFrame:
        """Every pair or instance left out by a decision (automatic or in review), with who decided."""
        return pd.DataFrame(self.applied.removed, columns=list(REMOVED_COLUMNS))

    def reliability_table(self) -> pd.DataFrame:
        """The reliability estimate of every rule (key) the run used."""
        rows = [e.to_row() for e in self.estimates.values()]
        return pd.DataFrame(rows, columns=list(ESTIMATE_COLUMNS))


def _listed_rules(records: Sequence[ItemRecord]) -> list[Any]:
    """The registry's rules for this run's table: every rule, and of the model judges only those it used
    (a judge registers itself once per process; another run's judge is not this run's rule)."""
    from stereoset_eval.curation.rules.registry import listed_rules

    return listed_rules({d.rule for r in records for d in r.decided})


def with_reliability(summary: pd.DataFrame, records: Sequence[ItemRecord], estimates: Mapping[str, Estimate]) -> pd.DataFrame:
    """The rule table with each rule's decisions in this run and its measured reliability (all keys of the rule)."""
    out = summary.copy()
    made = Counter(d.rule for r in records for d in r.decided)
    n: Counter[str] = Counter()
    agree: Counter[str] = Counter()
    lower: dict[str, float] = {}
    for e in estimates.values():
        n[e.rule] += e.n
        agree[e.rule] += e.agree
        if e.lower is not None:
            lower[e.rule] = min(lower.get(e.rule, 1.0), e.lower)
    out["decisions"] = [made.get(r, 0) for r in out["rule"]]
    out["reliability_n"] = [n.get(r, 0) for r in out["rule"]]
    out["reliability_agree"] = [agree.get(r, 0) for r in out["rule"]]
    out["reliability_lower"] = [lower.get(r, float("nan")) for r in out["rule"]]
    return out


def routed_counts(counts: pd.DataFrame, records: Sequence[ItemRecord], routing: Mapping[str, Routing],
                  reviews: Mapping[str, Review]) -> pd.DataFrame:
    """The counts table with, per source, the items decided automatically, in review, and waiting."""
    out = counts.copy()
    src_of = {r.source_id: r.source_id.split("/", 1)[0] for r in records}
    for col, pick in (("decided_automatically", lambda s: s in routing and routing[s].status == "automatic"),
                      ("decided_in_review", lambda s: s in reviews),
                      ("waiting_for_review", lambda s: s in routing and routing[s].status == "review")):
        out[col] = [sum(1 for s, src in src_of.items() if src == source and pick(s)) for source in out["source"]]
    return out


def in_scope(items: Sequence[Item], bias_type: str) -> tuple[list[Item], dict[str, int]]:
    """Items to curate (harmonisable source, ``bias_type``) and counts of the others per source."""
    ok = [it.source in HARMONISABLE and it.bias_type == bias_type for it in items]
    keep = [it for it, good in zip(items, ok) if good]
    skipped = Counter(f"{it.source}/{it.bias_type}" for it, good in zip(items, ok) if not good)
    return keep, dict(sorted(skipped.items()))


def _post_decisions(decisions: list[Decision], flagged: dict[str, Item]) -> list[Decision]:
    """Apply the runner rules' declared ``instance_effect`` to every kept instance, generically.

    A rule whose instance effect is ``drop_instance`` removes the instance ("exact_duplicate"), one
    whose effect is ``hold`` sends it to a person ("inconsistent_gender" in an edited sentence);
    the first by precedence decides. A flag marked ``evidence_only`` (a retired cue, rules 3.1)
    decides nothing. Every other instance is kept with its flags.
    """
    out = []
    for d in decisions:
        if d.status != "kept" or d.instance is None:
            out.append(d)
            continue
        inst = flagged[d.item_id]
        fired = sorted(((RULES[f.rule], f) for f in inst.flags  # an evidence-only flag never decides
                        if f.rule in RULES and RULES[f.rule].instance_effect in ("drop_instance", "hold")
                        and not f.evidence.get("evidence_only")),
                       key=lambda rf: (rf[0].order, rf[0].name))
        if fired:
            r, f = fired[0]
            status = "removed" if r.instance_effect == "drop_instance" else "review"
            why = f.message if status == "removed" else f"after editing: {f.message}"
            out.append(Decision(d.source_id, d.item_id, status, why, r.name, inst, d.attribute_words))
        else:
            out.append(Decision(d.source_id, d.item_id, "kept", d.reason, d.rule, inst, d.attribute_words))
    return out


def _complete(d: Decision) -> Item:
    """An as-is pair with its incomplete swap completed (:mod:`stereoset_eval.curation.swap_completion`)."""
    from stereoset_eval.curation.swap_completion import complete_swap

    if d.instance is None:
        raise ValueError(f"decision {d.item_id}: a kept decision without its instance")
    return complete_swap(d.instance) if INSTANCE_SEPARATOR not in d.item_id else d.instance


def _judge_dimension(inst: Item) -> Item:
    """A model judge that answered the dimension question tags the instance (its rule owns the tag)."""
    from stereoset_eval.curation.dimensions import DimensionTag, with_tag

    for f in inst.flags:
        if f.rule == "stereotype_validity" and f.evidence.get("decider") and isinstance(f.evidence.get("answer"), dict):
            label = f.evidence["answer"].get("dimension")
            if label in DIMENSIONS:
                return with_tag(inst, DimensionTag(inst.id, label, "auto",
                                                   ({"dimension": label, "where": "judge",
                                                     "decider": str(f.evidence["decider"])},)))
    return inst


def curate_items(items: Sequence[Item], *, config: CurationConfig | None = None,
                 inputs: Sequence[dict[str, Any]] = (), judge: Any = None,
                 reviews: Mapping[str, Review] | None = None,
                 reviewed_inputs: Sequence[dict[str, Any]] = ()) -> CurationResult:
    """Curate ``items`` (any benchmark mix); ``inputs`` describes the files for provenance.

    ``judge`` (a :class:`~stereoset_eval.curation.validity.Judge`, e.g.
    :class:`stereoset_eval.scoring.judge.CausalLMJudge`) decides validity and direction before the
    evidence rules; its ``name`` is recorded in provenance as the decider and its decisions are
    owned by the rule ``judge:<name>``.

    ``reviews`` (:func:`stereoset_eval.curation.reviewed.load_reviews`) are items a person decided:
    applied as they are, and the reliability of every rule is estimated from them
    (:mod:`stereoset_eval.curation.reliability`); an item is decided automatically only where every
    rule on it reaches ``config.reliability.min_precision``, and goes to the review queue otherwise.
    """
    config = config or CurationConfig()
    scoped, skipped = in_scope(items, config.bias_type)
    pairs_run = run_rules(harmonise_all(scoped), config=config.rules)
    pairs = pairs_run.items
    decisions: list[Decision] = []
    for pair in pairs:
        decisions.extend(normalise_pair(pair, analyse_pair(pair), partners=config.partners))
    consensus = build_consensus(items) if config.validity.enabled else None
    decisions = apply_validity(decisions, {p.id: p for p in pairs}, consensus, config.validity, judge_with=judge)
    decisions = [replace(d, instance=repair_item(_complete(d), config.repair)) if d.status == "kept" and d.instance else d
                 for d in decisions]
    candidates = [d.instance for d in decisions if d.status == "kept" and d.instance is not None]
    inst_run = run_rules(candidates, config=config.rules, stage="instance")
    decisions = _post_decisions(decisions, {it.id: it for it in inst_run.items})
    kept = [d.instance for d in decisions if d.status == "kept" and d.instance is not None]
    curated = tag_items(kept, attribute_words={d.item_id: d.attribute_words for d in decisions if d.attribute_words},
                        priority=config.dimension_priority, strength_first=config.dimension_strength_first)
    curated = [_judge_dimension(it) for it in curated]
    reviews = dict(reviews or {})
    records = build_records(decisions, curated, {p.id: p for p in pairs})
    check_known(reviews, [r.source_id for r in records], curated_datasets={r.dataset for r in records})
    estimates = estimate(records, reviews, config.reliability)
    routing = {r.source_id: route(r, estimates, config.reliability) for r in records if r.source_id not in reviews}
    applied = apply_routing(records, routing, reviews)
    curated = applied.items
    from stereoset_eval.foundation.provenance_records import curation_provenance

    # one typed block (foundation.provenance_records: tool version, git commit, libraries), written as its dict
    provenance = curation_provenance(
        rules_version=RULES_VERSION, lexicon_sha256=lexicon_sha256(), config=config.to_dict(), inputs=inputs,
        out_of_scope=skipped, rule_failures=len(pairs_run.failures) + len(inst_run.failures),
        validity_decider=getattr(judge, "name", None) or "evidence rules",
        judge_settings=judge.settings() if hasattr(judge, "settings") else None,
        name_counterparts=name_counterparts.settings(), reviewed_inputs=list(reviewed_inputs),
        reviewed_items=sum(1 for r in records if r.source_id in reviews), routing=config.reliability.to_dict(),
        output_kind="human-reviewed curation" if reviews and not any(
            r.status == "review" for r in routing.values()) else "automatic curation",
    ).to_dict()
    return CurationResult(
        items=curated,
        pairs=pairs,
        decisions=decisions,
        rule_summary=with_reliability(rule_summary(pairs, rules=_listed_rules(records), failures=pairs_run.failures),
                                      records, estimates),
        instance_rule_summary=rule_summary(curated, rules=_listed_rules(records), failures=inst_run.failures),
        failures=pairs_run.failures + inst_run.failures,
        lengths=length_table(pairs, curated),
        jaccard=jaccard_table(curated),
        counts=routed_counts(counts_table(pairs, decisions, curated), records, routing, reviews),
        categories=category_table(curated, DIMENSIONS),
        provenance=provenance,
        records=records,
        routing=routing,
        estimates=estimates,
        applied=applied,
        reviewed=tuple(sorted(r.source_id for r in records if r.source_id in reviews)),
    )


def curate_files(inputs: Sequence[tuple[str, str | Path]], *, config: CurationConfig | None = None,
                 judge: Any = None, reviewed: Sequence[str | Path] = ()) -> CurationResult:
    """Load each ``(benchmark, path)`` with the loader registry and curate them together.

    ``reviewed``: files of items a person decided (curation-gold CSV or ``annotate merge`` folders).
    """
    from stereoset_eval.curation.loaders.registry import load_items

    items: list[Item] = []
    described = []
    for benchmark, path in inputs:
        loaded = load_items(benchmark, path)
        items.extend(loaded)
        described.append({"benchmark": benchmark, "file": Path(path).name, "sha256": file_sha256(path),
                          "items_loaded": len(loaded)})
    from stereoset_eval.curation.reviewed import load_reviews

    reviews = load_reviews(reviewed) if reviewed else {}
    reviewed_inputs = [{"file": Path(p).name, "sha256": file_sha256(p) if Path(p).is_file() else "",
                        "kind": "merged Label Studio version" if Path(p).is_dir() else "curation-gold schema"}
                       for p in reviewed]
    return curate_items(items, config=config, inputs=described, judge=judge, reviews=reviews,
                        reviewed_inputs=reviewed_inputs)
