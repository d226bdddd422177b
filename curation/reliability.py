"""How reliable each rule is, learned from reviewed items, and which items it may decide alone.

**Grading** (:mod:`stereoset_eval.curation.grading`). Every decision of an :class:`~stereoset_eval.curation.decision_record.ItemRecord`
whose item a person reviewed is graded against the person (:func:`grade`): a removal agrees
when the person removed the item; a drop when the person does not keep that instance; a keep or
swap when the person keeps the instance with the same direction; a text rule when the curated
pair is identical to the person's; a dimension tag when the labels are equal. A ``hold``
proposes nothing and is not graded.

**Estimation** (:func:`estimate`). Per reliability key (a rule; a dimension rule per label) the
agreements ``k`` of ``n`` graded decisions give a Beta posterior with partial pooling: the prior
is ``Beta(s·μ, s·(1−μ))``, ``μ`` the pooled agreement of the rule's *family* (same kind and
component; Jeffreys-smoothed) and ``s`` = ``prior_strength`` pseudo-observations. A rule that
never fired inherits its family's prior; a family with no graded decision has no measured
reliability. The lower bound is the posterior's ``1 − confidence`` quantile (one-sided).

**Routing** (:func:`route`). An item is decided automatically only when no rule holds it and
every decision on it has a lower bound at or above ``min_precision``; without a measurement a
mechanical rule decides (``unmeasured = "mechanical"``) and a judgement rule does not. Everything
else goes to review, with the suggestion.

**Cross-fitting** (:func:`stereoset_eval.curation.cross_fit.cross_fit`): the reviewed items are split into ``k`` hash folds; the
items of each fold are routed and graded with estimates fitted on the other folds only, so an
item never grades an estimate it took part in.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping, Sequence

from stereoset_eval.curation.decision_record import ItemRecord
from stereoset_eval.curation.grading import grade
from stereoset_eval.curation.reviewed import Review
from stereoset_eval.foundation.errors import StereosetEvalError

UNMEASURED_POLICIES: dict[str, str] = {
    "mechanical": "a rule with no measured reliability decides when it is mechanical; a judgement rule goes to review",
    "review": "a rule with no measured reliability never decides: its items go to review",
    "decide": "a rule with no measured reliability decides, judgement rules too (with min_precision 0: every "
              "suggestion is accepted, the draft of rules < 3.0)",
}


@dataclass(frozen=True)
class ReliabilityConfig:
    """Every parameter of estimation and routing (recorded in provenance).

    Attributes:
        min_precision: an automatic decision needs a reliability lower bound at least this high.
        confidence: one-sided level of the lower bound (the posterior's ``1 - confidence`` quantile).
        prior_strength: pseudo-observations of the family's pooled agreement in a judgement rule's prior.
        mechanical_prior: prior mean of a mechanical rule's agreement (a check of form is right by construction).
        mechanical_prior_strength: pseudo-observations of that prior (reviews outweigh it as they accumulate).
        unmeasured: policy for rules without a measurement (:data:`UNMEASURED_POLICIES`).
    """

    min_precision: float = 0.95
    confidence: float = 0.95
    prior_strength: float = 10.0
    mechanical_prior: float = 0.99
    mechanical_prior_strength: float = 20.0
    unmeasured: str = "mechanical"

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_precision <= 1.0:
            raise StereosetEvalError(f"min_precision must be within [0, 1], got {self.min_precision}")
        if not 0.5 <= self.confidence < 1.0:
            raise StereosetEvalError(f"confidence must be within [0.5, 1), got {self.confidence}")
        for name in ("prior_strength", "mechanical_prior_strength"):
            v = getattr(self, name)
            if v < 0 or not math.isfinite(v):
                raise StereosetEvalError(f"{name} must be a finite number >= 0, got {v}")
        if not 0.0 < self.mechanical_prior < 1.0:
            raise StereosetEvalError(f"mechanical_prior must be within (0, 1), got {self.mechanical_prior}")
        if self.unmeasured not in UNMEASURED_POLICIES:
            raise StereosetEvalError(f"unmeasured policy must be one of {sorted(UNMEASURED_POLICIES)}, got {self.unmeasured!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Estimate:
    """The measured reliability of one key: agreements, posterior mean and lower bound."""

    key: str
    rule: str
    kind: str
    component: str
    n: int
    agree: int
    mean: float | None
    lower: float | None
    family_n: int
    family_mean: float | None

    @property
    def measured(self) -> bool:
        return self.lower is not None

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Routing:
    """Where one item goes: ``automatic`` or ``review``, why, and the confidence of an automatic decision."""

    source_id: str
    status: str
    reason: str
    confidence: float | None
    decided_by: str


def kind_of(rule: str) -> str:
    """``mechanical`` or ``judgement`` from the registry (a judge, or an unknown name, is judgement)."""
    from stereoset_eval.curation.rules import RULES

    r = RULES.get(rule)
    return r.kind if r is not None else "judgement"


def graded_counts(records: Iterable[ItemRecord], reviews: Mapping[str, Review]) -> dict[str, list[Any]]:
    """Per key: ``[n, agree, rule, kind, component]`` over the reviewed records."""
    counts: dict[str, list[Any]] = {}
    for rec in records:
        review = reviews.get(rec.source_id)
        if review is None:
            continue
        for d in rec.decided:
            ok = grade(d, rec, review)
            if ok is None:
                continue
            c = counts.setdefault(d.key, [0, 0, d.rule, kind_of(d.rule), d.component])
            c[0] += 1
            c[1] += int(ok)
    return counts


def _lower(a: float, b: float, confidence: float) -> float:
    from scipy.stats import beta

    return float(beta.ppf(1.0 - confidence, a, b))


def estimate(records: Sequence[ItemRecord], reviews: Mapping[str, Review],
             config: ReliabilityConfig = ReliabilityConfig()) -> dict[str, Estimate]:
    """Reliability of every key that the records use (graded on ``reviews``; see module doc)."""
    counts = graded_counts(records, reviews)
    family: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for n, k, _rule, kind, comp in counts.values():
        family[(kind, comp)][0] += n
        family[(kind, comp)][1] += k
    keys: dict[str, tuple[str, str, str]] = {}
    for rec in records:
        for d in rec.decided:
            if d.action != "hold":
                keys.setdefault(d.key, (d.rule, kind_of(d.rule), d.component))
    for key, (n, k, rule, kind, comp) in counts.items():
        keys.setdefault(key, (rule, kind, comp))
    out = {}
    for key, (rule, kind, comp) in sorted(keys.items()):
        n, k = counts[key][:2] if key in counts else (0, 0)
        fn, fk = family.get((kind, comp), [0, 0])
        if fn == 0:  # nothing of this family was graded: no measured reliability
            out[key] = Estimate(key, rule, kind, comp, n, k, None, None, 0, None)
            continue
        if kind == "mechanical":
            mu, strength = config.mechanical_prior, config.mechanical_prior_strength
        else:  # partial pooling: the family's Jeffreys-smoothed agreement
            mu, strength = (fk + 0.5) / (fn + 1.0), config.prior_strength
        a = strength * mu + k + (0.5 if strength == 0 else 0.0)
        b = strength * (1.0 - mu) + (n - k) + (0.5 if strength == 0 else 0.0)
        out[key] = Estimate(key, rule, kind, comp, n, k, round(a / (a + b), 4),
                            round(_lower(a, b, config.confidence), 4), fn, round((fk + 0.5) / (fn + 1.0), 4))
    return out


def decided_by(record: ItemRecord) -> str:
    """``rule:<name>`` / ``judge:<name>`` of the decision that settles the item's outcome."""
    item_level = [d for d in record.decided if d.component == "item"]
    inst = [d for d in record.decided if d.component == "instance" and d.action != "hold"]
    chosen = item_level[0] if item_level else (inst[0] if inst else (record.decided[0] if record.decided else None))
    if chosen is None:
        return ""
    return chosen.rule if chosen.rule.startswith("judge:") else f"rule:{chosen.rule}"


def route(record: ItemRecord, estimates: Mapping[str, Estimate], config: ReliabilityConfig = ReliabilityConfig()) -> Routing:
    """Automatic or review for ``record`` (see module doc), with the reason."""
    if record.holds:
        h = record.holds[0]
        return Routing(record.source_id, "review", f"{h.rule} cannot decide it", None, "")
    lowers = []
    for d in record.decided:
        est = estimates.get(d.key)
        if est is None or not est.measured:
            if config.unmeasured == "decide" or (config.unmeasured == "mechanical" and kind_of(d.rule) == "mechanical"):
                continue
            return Routing(record.source_id, "review", f"{d.key}: no measured reliability ({kind_of(d.rule)} rule)",
                           None, "")
        assert est.lower is not None
        if est.lower < config.min_precision:
            return Routing(record.source_id, "review",
                           f"{d.key}: reliability lower bound {est.lower:.3f} < {config.min_precision}", None, "")
        lowers.append(est.lower)
    return Routing(record.source_id, "automatic", "every rule at or above min_precision",
                   round(min(lowers), 4) if lowers else None, decided_by(record))


