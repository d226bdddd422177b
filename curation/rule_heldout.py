"""Per-rule held-out agreement, and what the pipeline would have done without the rule (issue 31, item 6).

:func:`held_out_rule_table` answers, for every judgement rule, two questions on reviewed items
with cross-fitting (the reviewed items in ``k`` hash folds, :func:`~stereoset_eval.curation.cross_fit.fold_of`):

* **how often is the rule right on items it was not estimated from?** Every decision of the rule on
  an item of fold ``f`` is graded against the person (:func:`~stereoset_eval.curation.grading.grade`)
  next to the rule's reliability estimate fitted on the other folds only (posterior mean). A
  ``hold`` proposes nothing: it is *right* when the alternative below is wrong (the item needed a
  person), wrong when the alternative agrees with the person (the hold only cost a review).
* **what would the alternative have scored on the same units?** For a rule that removes, drops or
  holds, the alternative is the pipeline's suggestion with that rule turned into evidence
  (:func:`~stereoset_eval.curation.rules.evidence_only`: the rule does not fire, the item or instance
  is kept as the other rules suggest), graded on the same unit (the item, or the instance slot) by
  :func:`unit_agrees`: keep/remove (drop) as the person decided, and for a kept unit the same
  direction and the same swap (the words the two sentences differ by).

The comparison is paired: ``rule_only`` units where the rule is right and the alternative wrong,
``alt_only`` the reverse; ``p_better`` is the one-sided exact sign test of ``rule_only`` against
``alt_only`` (McNemar), and a rule is ``supported`` when it is right more often than its alternative
with ``p_better`` at most ``alpha`` (0.05). A rule that is not supported is what the reviewed items
cannot support: rules 3.1 retire such fitted special cases (docs/curation.md).

:func:`measure` runs the pipeline once as it is and once per rule with that rule as evidence only,
and builds the table; ``python -m stereoset_eval.curation.rule_heldout`` is its command line.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from stereoset_eval.curation.cross_fit import fold_of
from stereoset_eval.curation.decision_record import ItemRecord
from stereoset_eval.curation.grading import grade, same_direction, same_swap
from stereoset_eval.curation.reliability import ReliabilityConfig, estimate, kind_of
from stereoset_eval.curation.reviewed import Review

#: effects whose alternative is measured (the rule does not fire: the unit is kept as the other rules suggest)
DECIDING_EFFECTS: tuple[str, ...] = ("remove", "drop", "hold")
TABLE_COLUMNS: tuple[str, ...] = (
    "rule", "kind", "registry_effect", "retired", "action", "datasets", "n", "agree", "agreement", "estimated",
    "alt_n", "alt_agree", "alt_agreement", "alt_undecided", "rule_only", "alt_only", "p_better", "supported",
)


def _slot_agrees(record: ItemRecord, slot: str, review: Review) -> bool:
    """Whether ``record``'s suggestion for instance ``slot`` agrees with the person's."""
    ours = record.kept.get(slot)
    gold_keeps = review.kept_slot(slot) is not None
    if ours is None or not gold_keeps:
        return ours is None and not gold_keeps
    return same_direction(ours, slot, review) and same_swap(ours, slot, review)


def unit_agrees(record: ItemRecord, slot: str, review: Review) -> bool | None:
    """Whether ``record``'s suggestion for one unit agrees with the person (None: the record holds it).

    ``slot`` ``""`` is the item: kept or removed as the person decided and, when both keep it, every
    instance slot agreeing (:func:`_slot_agrees`); any other slot is that instance alone.
    """
    held = {d.slot for d in record.holds}
    if "" in held or (slot and slot in held) or (not slot and held):
        return None
    if slot:
        return _slot_agrees(record, slot, review)
    if bool(record.kept) != review.keep:
        return False
    if not review.keep:
        return True
    slots = set(record.kept) | {s for s in review.instances if review.kept_slot(s) is not None}
    return all(_slot_agrees(record, s, review) for s in slots)


def _sign_test(wins: int, losses: int) -> float:
    """One-sided exact sign test: P(at least ``wins`` of ``wins + losses`` under p = 1/2) (scipy's binomial test)."""
    from scipy.stats import binomtest

    n = wins + losses
    if n == 0:
        return 1.0
    return round(float(binomtest(wins, n, 0.5, alternative="greater").pvalue), 4)


def held_out_rule_table(records: Sequence[ItemRecord], gold: Mapping[str, Review], *, k: int = 5,
                        alternatives: Mapping[str, Sequence[ItemRecord]] | None = None,
                        config: ReliabilityConfig = ReliabilityConfig(), alpha: float = 0.05,
                        rules: Iterable[str] | None = None, also: Iterable[str] = ()) -> pd.DataFrame:
    """One row per judgement rule (and per action it takes): held-out agreement vs its alternative.

    ``alternatives``: rule -> the records of the same items with that rule as evidence only
    (:func:`measure` builds them); a rule without one has no alternative columns. ``rules``: limit
    the table to these rules (default: every judgement rule that decided a reviewed item). ``also``:
    rules of any kind listed too (a mechanical-kind heuristic, such as ``inconsistent_gender``).
    """
    from stereoset_eval.curation.rules import RULES

    alternatives = alternatives or {}
    alt_by = {r: {x.source_id: x for x in recs} for r, recs in alternatives.items()}
    wanted = set(rules) if rules is not None else None
    also = set(also)
    reviewed = [r for r in records if r.source_id in gold]
    acc: dict[tuple[str, str], dict[str, Any]] = defaultdict(lambda: defaultdict(float))
    datasets: dict[tuple[str, str], set[str]] = defaultdict(set)
    for fold in range(k):
        est = estimate(records, {s: rv for s, rv in gold.items() if fold_of(s, k) != fold}, config)
        for rec in reviewed:
            if fold_of(rec.source_id, k) != fold:
                continue
            review = gold[rec.source_id]
            for d in rec.decided:
                if d.component not in ("item", "instance"):
                    continue
                if d.rule not in also and (kind_of(d.rule) != "judgement" or (wanted is not None and d.rule not in wanted)):
                    continue
                a = acc[(d.rule, d.action)]
                datasets[(d.rule, d.action)].add(rec.dataset)
                alt_rec = alt_by.get(d.rule, {}).get(rec.source_id)
                alt_ok = unit_agrees(alt_rec, d.slot, review) if alt_rec is not None else None
                if d.action == "hold":
                    ok = None if alt_ok is None else not alt_ok
                else:
                    ok = grade(d, rec, review)
                    e = est.get(d.key)
                    if e is not None and e.mean is not None and ok is not None:
                        a["est_sum"] += e.mean
                        a["est_n"] += 1
                if alt_rec is not None and alt_ok is None:
                    a["alt_undecided"] += 1
                if ok is None:
                    continue
                a["n"] += 1
                a["agree"] += int(ok)
                if alt_ok is not None:
                    a["alt_n"] += 1
                    a["alt_agree"] += int(alt_ok)
                    a["rule_only"] += int(ok and not alt_ok)
                    a["alt_only"] += int(alt_ok and not ok)
    rows = []
    for (rule, action), a in sorted(acc.items()):
        reg = RULES.get(rule)
        n, alt_n = int(a["n"]), int(a["alt_n"])
        has_alt = rule in alt_by
        agreement = round(a["agree"] / n, 4) if n else float("nan")
        alt_agreement = round(a["alt_agree"] / alt_n, 4) if alt_n else float("nan")
        p = _sign_test(int(a["rule_only"]), int(a["alt_only"])) if has_alt else float("nan")
        supported: Any = (bool(n) and agreement > alt_agreement and p <= alpha) if has_alt and alt_n else None
        rows.append({
            "rule": rule, "kind": reg.kind if reg else "judgement", "registry_effect": reg.effect if reg else "",
            "retired": reg.retired if reg else "", "action": action, "datasets": ";".join(sorted(datasets[(rule, action)])),
            "n": n, "agree": int(a["agree"]), "agreement": agreement,
            "estimated": round(a["est_sum"] / a["est_n"], 4) if a["est_n"] else float("nan"),
            "alt_n": alt_n if has_alt else None, "alt_agree": int(a["alt_agree"]) if has_alt else None,
            "alt_agreement": alt_agreement if has_alt else float("nan"),
            "alt_undecided": int(a["alt_undecided"]) if has_alt else None,
            "rule_only": int(a["rule_only"]) if has_alt else None, "alt_only": int(a["alt_only"]) if has_alt else None,
            "p_better": p, "supported": supported,
        })
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def deciding_judgement_rules(records: Sequence[ItemRecord], gold: Mapping[str, Review] | None = None) -> list[str]:
    """The judgement rules that removed, dropped or held an item (of ``gold``, when given) in ``records``."""
    out = {d.rule for r in records if gold is None or r.source_id in gold for d in r.decided
           if d.action in DECIDING_EFFECTS and kind_of(d.rule) == "judgement"}
    return sorted(out)


def measure(run: Callable[[], Sequence[ItemRecord]], gold: Mapping[str, Review], *, k: int = 5,
            rules: Iterable[str] | None = None, config: ReliabilityConfig = ReliabilityConfig(),
            extra: Iterable[str] = ()) -> pd.DataFrame:
    """The held-out table with alternatives: ``run()`` (the pipeline's records) once as it is, then once
    per rule with that rule as evidence only (:func:`~stereoset_eval.curation.rules.evidence_only`).

    ``rules``: the rules whose alternative is measured (default: every judgement rule that removed,
    dropped or held a gold item, plus ``extra``, e.g. a mechanical-kind heuristic such as
    ``inconsistent_gender``).
    """
    from stereoset_eval.curation.rules import decides, evidence_only

    base = list(run())
    chosen = sorted(set(rules) if rules is not None else set(deciding_judgement_rules(base, gold)) | set(extra))
    alternatives = {}
    for name in chosen:
        if not decides(name):
            continue  # retired already: it decides nothing, there is no alternative to measure
        with evidence_only(name):
            alternatives[name] = list(run())
    return held_out_rule_table(base, gold, k=k, alternatives=alternatives, config=config,
                               rules=None if rules is None else chosen, also=extra)


def markdown(table: pd.DataFrame) -> str:
    """The table as markdown: rule, action, held-out agreement (estimate; n), alternative, p, supported."""
    lines = ["| rule | action | held-out agreement (estimate; n) | alternative (n) | rule / alt only | p | supported |",
             "| --- | --- | --- | --- | --- | --- | --- |"]

    def f(x: Any) -> str:
        return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"

    for r in table.to_dict("records"):
        alt = "—" if r["alt_n"] is None or pd.isna(r["alt_n"]) else f"{f(r['alt_agreement'])} ({int(r['alt_n'])})"
        only = "—" if r["rule_only"] is None or pd.isna(r["rule_only"]) else f"{int(r['rule_only'])} / {int(r['alt_only'])}"
        sup = "—" if r["supported"] is None or (isinstance(r["supported"], float) and pd.isna(r["supported"])) else (
            "yes" if r["supported"] else "no")
        lines.append(f"| `{r['rule']}` | {r['action']} | {f(r['agreement'])} ({f(r['estimated'])}; {r['n']}) | {alt} | "
                     f"{only} | {f(r['p_better'])} | {sup} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m stereoset_eval.curation.rule_heldout --benchmark B --data F [...] --gold G [--write CSV]``."""
    import argparse

    from stereoset_eval.curation.pipeline import CurationConfig, curate_items
    from stereoset_eval.curation.loaders.registry import load_items
    from stereoset_eval.curation.reviewed import load_reviews

    p = argparse.ArgumentParser(prog="python -m stereoset_eval.curation.rule_heldout", description=__doc__.split("\n")[0])
    p.add_argument("--benchmark", action="append", required=True)
    p.add_argument("--data", action="append", required=True)
    p.add_argument("--gold", required=True, help="reviewed items (curation-gold CSV or annotate merge folder)")
    p.add_argument("--cross-fit", type=int, default=5, metavar="K")
    p.add_argument("--rules", nargs="*", help="rules whose alternative is measured (default: every deciding "
                   "judgement rule on the gold, and inconsistent_gender)")
    p.add_argument("--write", help="CSV file for the table")
    args = p.parse_args(argv)
    if len(args.benchmark) != len(args.data):
        p.error("give one --data per --benchmark")
    items = [it for b, d in zip(args.benchmark, args.data) for it in load_items(b, d)]
    gold = load_reviews([args.gold])
    config = CurationConfig()

    def run() -> list[ItemRecord]:
        return curate_items(items, config=config).records

    table = measure(run, gold, k=args.cross_fit, rules=args.rules,
                    extra=() if args.rules is not None else ("inconsistent_gender",))
    print(markdown(table))
    if args.write:
        from stereoset_eval.foundation.atomic import atomic_path

        with atomic_path(args.write, suffix=".csv") as tmp:  # a reader never sees half a table
            table.to_csv(tmp, index=False, lineterminator="\n")
    return 0


def _cli(argv: Sequence[str] | None = None) -> int:
    """:func:`main` behind the project's error boundary: a bad input is one ``error:`` line, exit 2."""
    import sys

    from stereoset_eval.foundation.errors import StereosetEvalError

    try:
        return main(argv)
    except (StereosetEvalError, OSError) as exc:
        where = f"{exc.filename}: " if isinstance(exc, OSError) and exc.filename else ""
        text = f"{where}{exc.strerror}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"error: {text}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(_cli())
