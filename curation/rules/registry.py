"""The one rule registry of curation: ``RULES`` (name -> :class:`Rule`).

Every decision a curation run makes is owned by a rule registered here, whatever stage makes it:

* **runner rules** (``stage="pair"``): a plain function ``(item, ctx) -> Flag | None`` run by
  :func:`~stereoset_eval.curation.rules.runner.run_rules` on the source pairs and again on the
  curated instances; the pipeline applies its declared ``effect`` (on a source pair) and
  ``instance_effect`` (on a curated instance) generically. A new rule of this kind is one module
  in this package (it is imported by the package, no list to edit) plus its tests.
* **stage rules** (``normalise``, ``validity``, ``repair``, ``dimension``): decisions made inside
  a pipeline stage (the target-only swap, validity and direction, repairs, dimension tags); the
  stage names the rule on every decision it makes (:mod:`stereoset_eval.curation.rules.stage_rules`).
* **judges** (``stage="judge"``): a model judge, registered under ``judge:<name>`` when a run uses it.
* **review pitfalls** (``stage="review"``): Blodgett et al.'s judgement pitfalls a person sets in review.

Each rule declares its ``kind`` (``mechanical``: a check of form that is right by construction;
``judgement``: a reading of meaning, reliable only as far as reviewed items show) and its
``effect``. Registering a name twice is an error, never a silent overwrite.

A **retired** rule (rules 3.1, issue 31) no longer decides: its ``effect`` is ``flag`` and its
``retired`` field says when and why (the held-out figures that could not support it). Its stage
still finds the cue and attaches it to the instance as evidence for the reviewer (a flag of the
rule's name, ``evidence_only: true``), then decides as the other rules suggest. :func:`decides`
is the one test every stage applies; :func:`evidence_only` turns rules into evidence for one
measurement (what the pipeline does without them: the held-out table's alternative).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Mapping

from stereoset_eval.foundation.errors import StereosetEvalError, UnknownNameError
from stereoset_eval.foundation.items import SEVERITIES, Flag, Item

RuleFn = Callable[[Item, Any], "Flag | None"]

KINDS: tuple[str, ...] = ("mechanical", "judgement")
#: what a rule's decision does: ``hold`` = it cannot decide, a person must (no automatic suggestion)
EFFECTS: tuple[str, ...] = ("flag", "remove", "drop_instance", "keep", "swap_labels", "repair", "tag_dimension", "hold")
STAGES: tuple[str, ...] = ("pair", "normalise", "validity", "repair", "dimension", "judge", "review")
#: the pairs a pair effect applies to: every pair, pairs without a target term (CrowS-Pairs-like: the
#: perturbed span is the target) or pairs with one (StereoSet-like)
SCOPES: tuple[str, ...] = ("all", "untargeted", "targeted")


class DuplicateRuleError(StereosetEvalError, ValueError):
    """Two rules with the same name (registered twice, or passed twice to the runner)."""


@dataclass(frozen=True)
class Rule:
    """A named curation rule: what it checks, its kind, its effect and what it needs.

    Attributes:
        name: registry name (also the flag name and the ``decided_by`` suffix ``rule:<name>``).
        description: one line for the card, the rules summary and Label Studio.
        kind: ``mechanical`` or ``judgement`` (:data:`KINDS`).
        effect: what a firing does to a source pair (:data:`EFFECTS`).
        stage: where it decides (:data:`STAGES`).
        severity: severity of its flags.
        fn: the check, for runner rules (``stage="pair"``); None otherwise.
        needs: what it reads besides the item (e.g. ``pair_analysis``, ``lexicon``, ``consensus``,
            ``dataset``, ``model``), for the card and the architecture notes.
        instance_effect: what a firing on a curated instance does (runner rules).
        order: precedence among the removals of one pair (lower decides first).
        scope: the pairs its pair ``effect`` applies to: ``all``, ``untargeted`` (pairs without a
            target term, as CrowS-Pairs') or ``targeted`` (as StereoSet's).
        retired: empty for a rule that decides; for a retired rule (``effect`` ``flag``: evidence only)
            the version and the reason ("3.1: held-out …"). A runner rule may keep its
            ``instance_effect`` (``inconsistent_gender`` still holds an instance whose *edited*
            sentence disagrees: a guard of the swap; only its hold of source pairs is retired).
    """

    name: str
    description: str
    kind: str = "mechanical"
    effect: str = "flag"
    stage: str = "pair"
    severity: str = "warning"
    fn: RuleFn | None = None
    needs: tuple[str, ...] = ()
    instance_effect: str = "flag"
    order: int = 100
    scope: str = "all"
    retired: str = ""

    def __post_init__(self) -> None:
        for what, value, allowed in (("severity", self.severity, SEVERITIES), ("kind", self.kind, KINDS),
                                     ("effect", self.effect, EFFECTS), ("instance effect", self.instance_effect, EFFECTS),
                                     ("stage", self.stage, STAGES), ("scope", self.scope, SCOPES)):
            if value not in allowed:
                raise ValueError(f"rule {self.name}: {what} must be one of {allowed}, got {value!r}")
        if self.stage == "pair" and self.fn is None:
            raise ValueError(f"runner rule {self.name} needs a function")
        if self.retired and self.effect != "flag":
            raise ValueError(f"retired rule {self.name} no longer decides: its effect must be 'flag'")

    @property
    def automatic(self) -> bool:
        """True when the tool finds it (False: a pitfall only a person sets, in review)."""
        return self.stage != "review"

    @property
    def needs_person(self) -> bool:
        return not self.automatic

    @property
    def runs_in_runner(self) -> bool:
        return self.fn is not None

    def applies_to(self, item: Item) -> bool:
        """Whether the pair ``effect`` applies to ``item`` (its :attr:`scope`)."""
        if self.scope == "all":
            return True
        return (item.target is None) == (self.scope == "untargeted")

    def flag(self, item: Item, message: str, evidence: Mapping[str, Any] | None = None,
             *, severity: str | None = None) -> Flag:
        """A :class:`Flag` of this rule on ``item``."""
        return Flag(self.name, item.id, severity or self.severity, message, dict(evidence or {}))

    def __call__(self, item: Item, ctx: Any) -> Flag | None:
        if self.fn is None:
            raise TypeError(f"rule {self.name} is decided in the {self.stage} stage, not by the runner")
        if hasattr(ctx, "rule"):
            ctx.rule = self  # the function builds its flags with ctx.rule.flag(...), no look-up by name
        return self.fn(item, ctx)


RULES: dict[str, Rule] = {}


def register(r: Rule, *, registry: dict[str, Rule] | None = None) -> Rule:
    """Add ``r`` to ``registry`` (default :data:`RULES`); a taken name raises."""
    reg = RULES if registry is None else registry
    if r.name in reg:
        raise DuplicateRuleError(f"rule name {r.name!r} is already registered")
    reg[r.name] = r
    return r


def rule(name: str, *, description: str, kind: str = "mechanical", effect: str = "flag",
         instance_effect: str = "flag", severity: str = "warning", needs: tuple[str, ...] = (),
         order: int = 100, scope: str = "all", retired: str = "",
         registry: dict[str, Rule] | None = None) -> Callable[[RuleFn], Rule]:
    """Decorator registering ``fn(item, ctx) -> Flag | None`` as runner rule ``name``.

    Inside, build flags with ``ctx.rule.flag(item, message, evidence)`` (the runner hands the
    rule object over in ``ctx.rule``) or return None; ``ctx.stage`` says whether the item is a
    source pair (``"pair"``) or a curated instance (``"instance"``).
    """
    def deco(fn: RuleFn) -> Rule:
        return register(Rule(name, description, kind, effect, "pair", severity, fn, needs, instance_effect, order,
                             scope, retired), registry=registry)

    return deco


def stage_rule(name: str, *, description: str, kind: str, effect: str, stage: str, severity: str = "info",
               needs: tuple[str, ...] = (), retired: str = "", registry: dict[str, Rule] | None = None) -> Rule:
    """Register a rule whose decisions a pipeline stage makes (no runner function).

    ``retired``: the rule is evidence only (``effect`` must then be ``flag``); the version and why.
    """
    return register(Rule(name, description, kind, effect, stage, severity, None, needs, retired=retired),
                    registry=registry)


def judgement_pitfall(name: str, *, description: str, severity: str = "warning",
                      registry: dict[str, Rule] | None = None) -> Rule:
    """Register a pitfall only a person can judge (set in review, e.g. in Label Studio)."""
    return register(Rule(name, description, "judgement", "flag", "review", severity, None), registry=registry)


def judge_rule(name: str, *, description: str) -> Rule:
    """The registry entry of model judge ``name`` (``judge:<name>``), registered once per process."""
    key = name if name.startswith("judge:") else f"judge:{name}"
    if key not in RULES:
        register(Rule(key, description, "judgement", "keep", "judge", "info", None, ("model",)))
    return RULES[key]


def listed_rules(used: frozenset[str] | set[str] = frozenset()) -> list[Rule]:
    """The rules a table or catalogue lists: every rule, and of the model judges only those in ``used``
    (a judge registers itself once per process when a run uses it; another run's judge is not this one's)."""
    return [r for r in RULES.values() if r.stage != "judge" or r.name in used]


def decides(name: str) -> bool:
    """Whether rule ``name`` makes its own (pair or stage) decision: False when it is retired, or turned
    into evidence by :func:`evidence_only` (its stage then only attaches the cue as evidence). An
    unknown name decides."""
    r = RULES.get(name)
    return r is None or r.effect != "flag"


def evidence_only_flag(name: str, item_id: str, message: str, evidence: Mapping[str, Any] | None = None) -> Flag:
    """The flag a stage attaches where rule ``name`` would have decided but is evidence only."""
    r = RULES.get(name)
    why = r.retired if r is not None and r.retired else "turned into evidence for this run"
    return Flag(name, item_id, "info", f"evidence only ({why}): {message}",
                {**dict(evidence or {}), "evidence_only": True})


@contextmanager
def evidence_only(*names: str) -> Iterator[None]:
    """Within the block, rules ``names`` make no pair or stage decision (effect ``flag``, as a retired
    rule; an instance effect stays): what the pipeline does without them. For measurements (the
    held-out table's alternative); the registry is restored after."""
    saved = {n: get_rule(n) for n in names}
    try:
        for n, r in saved.items():
            RULES[n] = replace(r, effect="flag")
        yield
    finally:
        RULES.update(saved)


def get_rule(name: str) -> Rule:
    """``RULES[name]``; an unknown name lists the known ones."""
    if name not in RULES:
        raise UnknownNameError("rule", name, list(RULES))
    return RULES[name]
