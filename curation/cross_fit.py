"""Cross-fitting, coverage and the estimated precision of automatic decisions.

:func:`cross_fit` splits the reviewed items into ``k`` hash folds and routes and grades the items
of each fold with estimates fitted on the other folds only, so an item never grades an estimate
it took part in; :func:`risk_coverage` sums a set of routed items into coverage and measured vs
estimated agreement per component; :func:`coverage_summary` is the card's coverage table.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from stereoset_eval.curation.decision_record import Decided, ItemRecord
from stereoset_eval.curation.grading import measured_agreement
from stereoset_eval.curation.reliability import Estimate, ReliabilityConfig, Routing, estimate, route
from stereoset_eval.curation.reviewed import Review
from stereoset_eval.foundation.errors import StereosetEvalError


def fold_of(source_id: str, k: int) -> int:
    """A stable hash fold (0..k-1) of a source item."""
    return int(hashlib.sha256(source_id.encode("utf-8")).hexdigest(), 16) % k


@dataclass(frozen=True)
class CrossFitRow:
    """One reviewed item routed and graded with estimates fitted without it."""

    source_id: str
    dataset: str
    fold: int
    status: str
    reason: str
    estimated: Mapping[str, float | None]   # component -> estimated agreement of the automatic decision
    measured: Mapping[str, tuple[int, int]]  # component -> (agree, graded)


def component_estimates(record: ItemRecord, estimates: Mapping[str, Estimate]) -> dict[str, float | None]:
    """Estimated agreement per component of an automatic item (posterior means; None when unmeasured)."""
    def mean(d: Decided) -> float | None:
        e = estimates.get(d.key)
        return e.mean if e is not None and e.measured else None

    out: dict[str, float | None] = {}
    item = [d for d in record.decided if d.component == "item"]
    keeps = [mean(d) for d in record.decided if d.component == "instance" and d.action in ("keep", "swap")]
    if item:
        out["item"] = mean(item[0])
    elif keeps:
        known = [m for m in keeps if m is not None]
        out["item"] = max(known) if known else None  # one right keep makes the item right
    else:
        drops = [mean(d) for d in record.decided if d.component == "instance"]
        known = [m for m in drops if m is not None]
        out["item"] = min(known) if known else None
    for comp in ("instance", "text", "dimension"):
        vals = [mean(d) for d in record.decided if d.component == comp]
        known = [v for v in vals if v is not None]
        if not vals:
            continue
        if comp == "text":  # every text rule of one instance must be right: product per slot
            per_slot: dict[str, float] = defaultdict(lambda: 1.0)
            for d in record.decided:
                m = mean(d) if d.component == "text" else None
                if m is not None:
                    per_slot[d.slot] *= m
            out[comp] = sum(per_slot.values()) / len(per_slot) if per_slot else None
        else:
            out[comp] = sum(known) / len(known) if known else None
    return out


def cross_fit(records: Sequence[ItemRecord], reviews: Mapping[str, Review], *, k: int = 5,
              config: ReliabilityConfig = ReliabilityConfig()) -> list[CrossFitRow]:
    """Route and grade every reviewed record with estimates fitted on the other ``k - 1`` folds."""
    if k < 2:
        raise StereosetEvalError(f"cross-fitting needs at least 2 folds, got {k}")
    reviewed = [r for r in records if r.source_id in reviews]
    out = []
    for fold in range(k):
        train = {s: rv for s, rv in reviews.items() if fold_of(s, k) != fold}
        est = estimate(records, train, config)
        for rec in reviewed:
            if fold_of(rec.source_id, k) != fold:
                continue
            r = route(rec, est, config)
            auto = r.status == "automatic"
            out.append(CrossFitRow(rec.source_id, rec.dataset, fold, r.status, r.reason,
                                   component_estimates(rec, est) if auto else {},
                                   measured_agreement(rec, reviews[rec.source_id])))
    return out


def risk_coverage(rows: Sequence[CrossFitRow]) -> dict[str, Any]:
    """Coverage and, over the automatic items, measured vs estimated agreement per component."""
    auto = [r for r in rows if r.status == "automatic"]
    out: dict[str, Any] = {"items": len(rows), "automatic": len(auto),
                           "coverage": round(len(auto) / len(rows), 4) if rows else float("nan"),
                           "review": len(rows) - len(auto)}
    for comp in ("item", "instance", "text", "dimension"):
        agree = sum(r.measured.get(comp, (0, 0))[0] for r in auto)
        n = sum(r.measured.get(comp, (0, 0))[1] for r in auto)
        out[f"{comp}_n"] = n
        out[f"{comp}_measured"] = round(agree / n, 4) if n else float("nan")
        est = [(r.estimated.get(comp), r.measured.get(comp, (0, 0))[1]) for r in auto]
        wn = sum(w for e, w in est if e is not None)
        out[f"{comp}_estimated"] = round(sum(e * w for e, w in est if e is not None) / wn, 4) if wn else float("nan")
    return out


def coverage_summary(records: Sequence[ItemRecord], routing: Mapping[str, Routing], estimates: Mapping[str, Estimate],
                     reviewed: set[str]) -> dict[str, dict[str, Any]]:
    """Per dataset: items, reviewed, decided automatically, waiting for a person, coverage (automatic
    share of the items no person reviewed) and the estimated agreement of the automatic decisions."""
    out: dict[str, dict[str, Any]] = {}
    for ds in sorted({r.dataset for r in records}):
        recs = [r for r in records if r.dataset == ds]
        todo = [r for r in recs if r.source_id not in reviewed]
        auto = [r for r in todo if routing.get(r.source_id) is not None and routing[r.source_id].status == "automatic"]
        row: dict[str, Any] = {"items": len(recs), "reviewed": len(recs) - len(todo), "automatic": len(auto),
                               "needs_review": len(todo) - len(auto),
                               "coverage": round(len(auto) / len(todo), 4) if todo else float("nan")}
        for comp in ("item", "instance", "text", "dimension"):
            vals = [e for e in (component_estimates(r, estimates).get(comp) for r in auto) if e is not None]
            row[f"estimated_{comp}"] = round(sum(vals) / len(vals), 4) if vals else float("nan")
        out[ds] = row
    return out
