"""How reliable each rule is, learned from reviewed items, and which items it may decide alone.

**Grading.** Every decision of an :class:`~stereoset_eval.curation.decision_record.ItemRecord`
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

**Cross-fitting** (:func:`cross_fit`): the reviewed items are split into ``k`` hash folds; the
items of each fold are routed and graded with estimates fitted on the other folds only, so an
item never grades an estimate it took part in.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping, Sequence

from stereoset_eval.curation.decision_record import Decided, ItemRecord
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


_WORD = re.compile(r"[a-z0-9']+")


def _loose(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.lower()))


def _same_direction(ours: Any, slot: str, review: Review) -> bool:
    g = review.instances[slot]
    om, ol, gm, gl = (_loose(ours.text("sent_more")), _loose(ours.text("sent_less")), _loose(g.sent_more),
                      _loose(g.sent_less))
    if om == gm or ol == gl:
        return True
    return not (om == gl or ol == gm)  # crossed: the person reads the other direction


#: text rules that make the gender swap: graded on the words the two sentences differ by, not on the
#: rest of the wording (a typo the person fixed elsewhere is not the swap's fault)
SWAP_RULES: frozenset[str] = frozenset({"target_swap", "name_swap", "swap_completion", "incomplete_swap_repaired"})


def swap_diff(more: str, less: str) -> tuple[tuple[str, str], ...]:
    """The (sent_more words, sent_less words) of every differing span, lower case, punctuation aside.

    >>> swap_diff("Her mother was kind.", "Her father was kind")
    (('mother', 'father'),)
    """
    import difflib

    a, b = _loose(more), _loose(less)
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    return tuple((" ".join(a[i1:i2]), " ".join(b[j1:j2])) for tag, i1, i2, j1, j2 in ops if tag != "equal")


def grade(d: Decided, record: ItemRecord, review: Review) -> bool | None:
    """Whether decision ``d`` agrees with the person's ``review`` (None: not gradable)."""
    if d.action == "hold":
        return None
    if d.component == "item":
        return (not review.keep) if d.action == "remove" else review.keep
    gk = review.kept_slot(d.slot) is not None
    if d.component == "instance":
        if d.action == "drop":
            return not gk
        if not gk:
            return False
        ours = record.kept.get(d.slot)
        return True if ours is None else _same_direction(ours, d.slot, review)
    ours = record.kept.get(d.slot)
    if not gk or ours is None:
        return None
    g = review.instances[d.slot]
    if d.component == "text":
        if d.rule in SWAP_RULES:  # the swap itself: the words that differ between the two sentences
            return swap_diff(ours.text("sent_more"), ours.text("sent_less")) == swap_diff(g.sent_more, g.sent_less)
        return (ours.text("sent_more").strip(), ours.text("sent_less").strip()) == (g.sent_more.strip(), g.sent_less.strip())
    if d.component == "dimension":
        return d.action == g.dimension
    return None


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


def _component_estimates(record: ItemRecord, estimates: Mapping[str, Estimate]) -> dict[str, float | None]:
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


def measured_agreement(record: ItemRecord, review: Review) -> dict[str, tuple[int, int]]:
    """Per component, (agreeing, compared) of the item's outcome with the person's, as curate-eval counts them."""
    out: dict[str, tuple[int, int]] = {}
    ours_keep = bool(record.kept)
    out["item"] = (int(ours_keep == review.keep), 1)
    if ours_keep and review.keep:
        slots = set(record.kept) | {s for s, i in review.instances.items()} | {
            d.slot for d in record.decided if d.component == "instance" and d.slot}
        agree = sum(int((s in record.kept) == (review.kept_slot(s) is not None)) for s in slots)
        out["instance"] = (agree, len(slots))
        both = [s for s in record.kept if review.kept_slot(s) is not None]
        text = [int((record.kept[s].text("sent_more").strip(), record.kept[s].text("sent_less").strip())
                    == (review.instances[s].sent_more.strip(), review.instances[s].sent_less.strip())) for s in both]
        dims = [int((record.kept[s].dimension or "") == review.instances[s].dimension) for s in both]
        out["text"] = (sum(text), len(text))
        out["dimension"] = (sum(dims), len(dims))
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
                                   _component_estimates(rec, est) if auto else {},
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
            vals = [e for e in (_component_estimates(r, estimates).get(comp) for r in auto) if e is not None]
            row[f"estimated_{comp}"] = round(sum(vals) / len(vals), 4) if vals else float("nan")
        out[ds] = row
    return out
