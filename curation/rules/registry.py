"""The pitfall-rule registry: ``RULES`` (name -> :class:`Rule`), filled by ``@rule``.

A rule is a plain function ``(item, ctx) -> Flag | None`` (``ctx`` is the runner's
:class:`~stereoset_eval.curation.rules.runner.RuleContext`: configuration, cached pair analyses,
dataset-wide duplicate look-ups). Automatic rules run in :func:`~stereoset_eval.curation.rules.runner.run_rules`;
non-automatic entries (judgement pitfalls) have no function: a person decides them, e.g.
in the Label Studio round trip, and their flags arrive on the items from there.
Registering a name twice is an error, never a silent overwrite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from stereoset_eval.foundation.errors import StereosetEvalError, UnknownNameError
from stereoset_eval.foundation.items import SEVERITIES, Flag, Item

RuleFn = Callable[[Item, Any], "Flag | None"]


class DuplicateRuleError(StereosetEvalError, ValueError):
    """Two rules with the same name (registered twice, or passed twice to the runner)."""


@dataclass(frozen=True)
class Rule:
    """A named pitfall check: automatic (a function) or a judgement a person makes."""

    name: str
    description: str
    automatic: bool
    severity: str = "warning"
    fn: RuleFn | None = None

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"rule {self.name}: severity must be one of {SEVERITIES}")
        if self.automatic and self.fn is None:
            raise ValueError(f"automatic rule {self.name} needs a function")

    @property
    def needs_person(self) -> bool:
        return not self.automatic

    def flag(self, item: Item, message: str, evidence: Mapping[str, Any] | None = None,
             *, severity: str | None = None) -> Flag:
        """A :class:`Flag` of this rule on ``item``."""
        return Flag(self.name, item.id, severity or self.severity, message, dict(evidence or {}))

    def __call__(self, item: Item, ctx: Any) -> Flag | None:
        if self.fn is None:
            raise TypeError(f"rule {self.name} is a judgement pitfall: a person decides it")
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


def rule(name: str, *, automatic: bool = True, description: str, severity: str = "warning",
         registry: dict[str, Rule] | None = None) -> Callable[[RuleFn], Rule]:
    """Decorator registering ``fn(item, ctx) -> Flag | None`` as rule ``name``.

    The decorated name becomes the :class:`Rule`; inside, build flags with
    ``ctx.rule.flag(item, message, evidence)`` (the runner hands the rule object over in
    ``ctx.rule``) or return None.
    """
    def deco(fn: RuleFn) -> Rule:
        return register(Rule(name, description, automatic, severity, fn), registry=registry)

    return deco


def judgement_pitfall(name: str, *, description: str, severity: str = "warning",
                      registry: dict[str, Rule] | None = None) -> Rule:
    """Register a non-automatic entry: a pitfall only a person can judge."""
    return register(Rule(name, description, False, severity, None), registry=registry)


def get_rule(name: str) -> Rule:
    """``RULES[name]``; an unknown name lists the known ones."""
    if name not in RULES:
        raise UnknownNameError("rule", name, list(RULES))
    return RULES[name]
