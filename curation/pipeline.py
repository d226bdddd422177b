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
from typing import Any, Sequence

import pandas as pd

from stereoset_eval import __version__
from stereoset_eval.curation.dimensions import DEFAULT_PRIORITY, DIMENSIONS, tag_items
from stereoset_eval.foundation.errors import UnknownNameError
from stereoset_eval.foundation.items import Item
from stereoset_eval.curation.lexicon import lexicon_sha256
from stereoset_eval.foundation.files import file_sha256
from stereoset_eval.curation.normalise import Decision, normalise_pair
from stereoset_eval.curation.pairs import HARMONISABLE, INSTANCE_SEPARATOR, harmonise_all
from stereoset_eval.curation.rules import RULES_VERSION, RuleConfig, RuleFailure, rule_summary, run_rules
from stereoset_eval.curation.spans import analyse_pair
from stereoset_eval.curation.stats import category_table, counts_table, jaccard_table, length_table
from stereoset_eval.curation.consensus import build_consensus
from stereoset_eval.curation.lexicon import name_counterparts
from stereoset_eval.curation.validity import ValidityConfig, apply_validity
from stereoset_eval.curation.repair import RepairConfig, repair_item

SUPPORTED_BIAS_TYPES: tuple[str, ...] = ("gender",)


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

    def review_items(self) -> list[Item]:
        """Instances sent to review that carry a suggestion (Label Studio tasks pre-filled with it)."""
        return [d.instance for d in self.decisions if d.status == "review" and d.instance is not None]

    def decided_counts(self) -> dict[str, int]:
        """Decisions made automatically (kept or removed by a rule) and left to a person (review)."""
        c = Counter(d.status for d in self.decisions)
        return {"automatic": c.get("kept", 0) + c.get("removed", 0), "review": c.get("review", 0)}

    def removed_table(self) -> pd.DataFrame:
        """Every pair or instance not in the dataset, with status (removed/review) and reason."""
        rows = [d.to_row() for d in self.decisions if d.status != "kept"]
        return pd.DataFrame(rows, columns=["item_id", "source_id", "status", "rule", "reason"])


def in_scope(items: Sequence[Item], bias_type: str) -> tuple[list[Item], dict[str, int]]:
    """Items to curate (harmonisable source, ``bias_type``) and counts of the others per source."""
    ok = [it.source in HARMONISABLE and it.bias_type == bias_type for it in items]
    keep = [it for it, good in zip(items, ok) if good]
    skipped = Counter(f"{it.source}/{it.bias_type}" for it, good in zip(items, ok) if not good)
    return keep, dict(sorted(skipped.items()))


def _post_decisions(decisions: list[Decision], flagged: dict[str, Item]) -> list[Decision]:
    out = []
    for d in decisions:
        if d.status != "kept" or d.instance is None:
            out.append(d)
            continue
        inst = flagged[d.item_id]
        fl = {f.rule: f for f in inst.flags}
        edited_roles = {e.sentence_role for e in inst.provenance.edits}
        if "exact_duplicate" in fl:
            out.append(Decision(d.source_id, d.item_id, "removed", fl["exact_duplicate"].message, "exact_duplicate",
                                inst, d.attribute_words))
        elif "inconsistent_gender" in fl and edited_roles & set(fl["inconsistent_gender"].evidence.get("roles", ())):
            out.append(Decision(d.source_id, d.item_id, "review",
                                "gender inconsistent after editing: " + fl["inconsistent_gender"].message,
                                "inconsistent_gender", inst, d.attribute_words))
        else:
            out.append(Decision(d.source_id, d.item_id, "kept", d.reason, d.rule, inst, d.attribute_words))
    return out


def _complete(d: Decision) -> Item:
    """An as-is pair with its incomplete swap completed (:mod:`stereoset_eval.curation.swap_completion`)."""
    from stereoset_eval.curation.swap_completion import complete_swap

    if d.instance is None:
        raise ValueError(f"decision {d.item_id}: a kept decision without its instance")
    return complete_swap(d.instance) if INSTANCE_SEPARATOR not in d.item_id else d.instance


def curate_items(items: Sequence[Item], *, config: CurationConfig | None = None,
                 inputs: Sequence[dict[str, Any]] = (), judge: Any = None) -> CurationResult:
    """Curate ``items`` (any benchmark mix); ``inputs`` describes the files for provenance.

    ``judge`` (a :class:`~stereoset_eval.curation.validity.Judge`, e.g.
    :class:`stereoset_eval.scoring.judge.CausalLMJudge`) decides validity and direction before the
    evidence rules; its ``name`` is recorded in provenance as the decider.
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
    inst_run = run_rules(candidates, config=config.rules)
    decisions = _post_decisions(decisions, {it.id: it for it in inst_run.items})
    kept = [d.instance for d in decisions if d.status == "kept" and d.instance is not None]
    curated = tag_items(kept, attribute_words={d.item_id: d.attribute_words for d in decisions if d.attribute_words},
                        priority=config.dimension_priority, strength_first=config.dimension_strength_first)
    provenance = {
        "tool": "stereoset-eval",
        "tool_version": __version__,
        "rules_version": RULES_VERSION,
        "lexicon_sha256": lexicon_sha256(),
        "config": config.to_dict(),
        "inputs": list(inputs),
        "out_of_scope": skipped,
        "rule_failures": len(pairs_run.failures) + len(inst_run.failures),
        "validity_decider": getattr(judge, "name", None) or "evidence rules",
        "name_counterparts": name_counterparts.settings(),
    }
    return CurationResult(
        items=curated,
        pairs=pairs,
        decisions=decisions,
        rule_summary=rule_summary(pairs, failures=pairs_run.failures),
        instance_rule_summary=rule_summary(curated, failures=inst_run.failures),
        failures=pairs_run.failures + inst_run.failures,
        lengths=length_table(pairs, curated),
        jaccard=jaccard_table(curated),
        counts=counts_table(pairs, decisions, curated),
        categories=category_table(curated, DIMENSIONS),
        provenance=provenance,
    )


def curate_files(inputs: Sequence[tuple[str, str | Path]], *, config: CurationConfig | None = None,
                 judge: Any = None) -> CurationResult:
    """Load each ``(benchmark, path)`` with the loader registry and curate them together."""
    from stereoset_eval.curation.loaders.registry import load_items

    items: list[Item] = []
    described = []
    for benchmark, path in inputs:
        loaded = load_items(benchmark, path)
        items.extend(loaded)
        described.append({"benchmark": benchmark, "file": Path(path).name, "sha256": file_sha256(path),
                          "items_loaded": len(loaded)})
    return curate_items(items, config=config, inputs=described, judge=judge)
