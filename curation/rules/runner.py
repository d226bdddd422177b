"""Run the automatic rules over items and summarise them (the shape of snorkel's ``lf_summary``).

:func:`run_rules` applies each rule to each item and returns the items with their flags;
a rule that raises is *counted and reported* (:class:`RuleFailure`), never fatal and never
silent. Re-running replaces the flags of the rules run, so the result is idempotent.
:func:`rule_summary` turns flagged items into one table: per rule its kind (automatic or
needs a person), items flagged, share of items, overlap with other rules, failures, and
flagged counts per source and per bias type.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

import pandas as pd

from stereoset_eval.foundation.items import Flag, Item
from stereoset_eval.curation.pairs import INSTANCE_SEPARATOR, origin_source
from stereoset_eval.curation.rules.registry import RULES, DuplicateRuleError, Rule
from stereoset_eval.curation.spans import PairAnalysis, analyse_pair
from stereoset_eval.curation.text import words


@dataclass(frozen=True)
class RuleConfig:
    """Parameters of the automatic rules (recorded in the curated dataset's provenance).

    Attributes:
        min_words: a sentence with fewer whitespace-separated words is ``too_short`` (informational).
        remove_below_words: a pair with a sentence of fewer words is removed by ``short_template``
            (the paper removes bare templates such as "The schoolboy is athletic/religious").
        near_duplicate_jaccard: two pairs whose word sets (both sentences, lower case,
            punctuation dropped) have at least this Jaccard similarity are near duplicates.
    """

    min_words: int = 4
    remove_below_words: int = 5
    near_duplicate_jaccard: float = 0.8

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RuleFailure:
    """A rule that raised (or returned something other than a Flag) on one item."""

    rule: str
    item_id: str
    error: str


class RuleContext:
    """What rules may read besides the item: config, cached analyses, dataset look-ups."""

    def __init__(self, items: Sequence[Item], config: RuleConfig, stage: str = "pair") -> None:
        self.config = config
        self.stage = stage  # "pair" (source pairs) or "instance" (curated instances)
        self.items = list(items)
        self.rule: Rule | None = None  # the rule being applied (set by Rule.__call__)
        self._analyses: dict[str, PairAnalysis] = {}
        self._exact: dict[str, tuple[str, bool]] | None = None
        self._near: dict[str, tuple[str, float]] | None = None

    def analysis(self, item: Item) -> PairAnalysis:
        if item.id not in self._analyses:
            self._analyses[item.id] = analyse_pair(item)
        return self._analyses[item.id]

    def exact_duplicates(self) -> dict[str, tuple[str, bool]]:
        """item id -> (id of the first item with the same pair, whether roles are reversed)."""
        if self._exact is None:
            seen: dict[tuple[tuple[str, ...], tuple[str, ...]], str] = {}
            out: dict[str, tuple[str, bool]] = {}
            for it in self.items:
                if not it.is_pair:
                    continue
                key = (tuple(words(it.text("sent_more"))), tuple(words(it.text("sent_less"))))
                if key in seen:
                    out[it.id] = (seen[key], False)
                elif key[::-1] in seen:
                    out[it.id] = (seen[key[::-1]], True)
                else:
                    seen[key] = it.id
            self._exact = out
        return self._exact

    def near_duplicates(self) -> dict[str, tuple[str, float]]:
        """item id -> (most similar earlier item, Jaccard) for near (not exact) duplicates."""
        if self._near is None:
            exact = self.exact_duplicates()
            bags: list[tuple[str, frozenset[str]]] = []
            out: dict[str, tuple[str, float]] = {}
            thr = self.config.near_duplicate_jaccard
            for it in self.items:
                if not it.is_pair:
                    continue
                bag = frozenset(words(it.text("sent_more") + " " + it.text("sent_less")))
                if it.id not in exact:
                    best: tuple[str, float] | None = None
                    family = it.id.split(INSTANCE_SEPARATOR, 1)[0]
                    for other_id, other in bags:
                        if other_id.split(INSTANCE_SEPARATOR, 1)[0] == family:
                            continue  # the two instances of one source pair share their words by design
                        if min(len(bag), len(other)) < thr * max(len(bag), len(other)):
                            continue  # Jaccard <= |small| / |large| < threshold
                        sim = len(bag & other) / len(bag | other) if bag | other else 1.0
                        if sim >= thr and (best is None or sim > best[1]):
                            best = (other_id, sim)
                    if best:
                        out[it.id] = best
                    bags.append((it.id, bag))
            self._near = out
        return self._near


@dataclass(frozen=True)
class RuleRun:
    """Items with the rules' flags, the names of the rules run, failures, config."""

    items: list[Item]
    rules: tuple[str, ...]
    failures: tuple[RuleFailure, ...] = field(default_factory=tuple)
    config: RuleConfig = field(default_factory=RuleConfig)

    def failure_counts(self) -> dict[str, int]:
        return dict(Counter(f.rule for f in self.failures))


def _select(rules: Iterable[Rule | str] | None) -> list[Rule]:
    chosen = [r for r in RULES.values() if r.runs_in_runner] if rules is None else [
        RULES[r] if isinstance(r, str) else r for r in rules
    ]
    names = [r.name for r in chosen]
    dup = sorted(n for n, c in Counter(names).items() if c > 1)
    if dup:
        raise DuplicateRuleError(f"rules passed more than once: {', '.join(dup)}")
    manual = [r.name for r in chosen if not r.runs_in_runner]
    if manual:
        raise ValueError(f"rules decided outside the runner (a stage or a person) cannot be run: {', '.join(manual)}")
    return chosen


def run_rules(items: Sequence[Item], *, rules: Iterable[Rule | str] | None = None,
              config: RuleConfig | None = None, stage: str = "pair") -> RuleRun:
    """Apply ``rules`` (default: every runner rule in :data:`RULES`) to ``items``.

    ``stage``: ``"pair"`` for source pairs, ``"instance"`` for curated instances (rules read it
    from ``ctx.stage``).
    """
    config = config or RuleConfig()
    chosen = _select(rules)
    names = {r.name for r in chosen}
    ctx = RuleContext(items, config, stage)
    failures: list[RuleFailure] = []
    out: list[Item] = []
    for item in items:
        flags = [f for f in item.flags if f.rule not in names]
        for r in chosen:
            try:
                result = r(item, ctx)
            except Exception as exc:  # counted and reported, by design (see module docstring)
                failures.append(RuleFailure(r.name, item.id, f"{type(exc).__name__}: {exc}"))
                continue
            if result is None:
                continue
            if not isinstance(result, Flag) or result.rule != r.name:
                failures.append(RuleFailure(r.name, item.id, f"returned {result!r}, expected a Flag of rule {r.name}"))
                continue
            flags.append(result)
        out.append(item.replace(flags=tuple(flags)))
    return RuleRun(out, tuple(r.name for r in chosen), tuple(failures), config)


def rule_summary(items: Sequence[Item], *, rules: Iterable[Rule] | None = None,
                 failures: Sequence[RuleFailure] = ()) -> pd.DataFrame:
    """One row per rule: kind, flagged items, share, overlap with other rules, failures,
    and flagged counts per source (``flagged[<source>]``) and bias type (``flagged[<bias>]``).

    Judgement pitfalls count the flags people have set (zero before review).
    """
    rules = list(RULES.values()) if rules is None else list(rules)
    rule_names = {r.name for r in rules}
    by_item: dict[str, set[str]] = {}
    meta: dict[str, tuple[str, str]] = {}
    for it in items:
        by_item[it.id] = {f.rule for f in it.flags if f.rule in rule_names}
        meta[it.id] = (origin_source(it), it.bias_type)
    sources = sorted({s for s, _ in meta.values()})
    biases = sorted({b for _, b in meta.values()})
    fails = Counter(f.rule for f in failures)
    n = len(by_item)
    rows = []
    for r in rules:
        hit = [i for i, fl in by_item.items() if r.name in fl]
        overlap = sum(1 for i in hit if len(by_item[i]) > 1)
        per: defaultdict[str, int] = defaultdict(int)
        for i in hit:
            per[f"flagged[{meta[i][0]}]"] += 1
            per[f"flagged[{meta[i][1]}]"] += 1
        row: dict[str, Any] = {
            "rule": r.name,
            "kind": r.kind,
            "effect": r.effect,
            "stage": r.stage,
            "severity": r.severity,
            "retired": r.retired,
            "flagged": len(hit),
            "share": round(len(hit) / n, 4) if n else 0.0,
            "overlap": overlap,
            "overlap_share": round(overlap / len(hit), 4) if hit else 0.0,
            "failures": fails.get(r.name, 0),
        }
        for s in sources:
            row[f"flagged[{s}]"] = per.get(f"flagged[{s}]", 0)
        for b in biases:
            row[f"flagged[{b}]"] = per.get(f"flagged[{b}]", 0)
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs["items"] = n
    df.attrs["flagged_any"] = sum(1 for fl in by_item.values() if fl)
    return df
