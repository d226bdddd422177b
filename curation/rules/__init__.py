"""Curation rules: the one registry, the runner and the rules themselves.

Interface used by other parts (the pipeline, the card, the Label Studio catalogue):

* :data:`RULES` — name -> :class:`Rule` (``name``, ``description``, ``kind``, ``effect``,
  ``stage``, ``needs``, ``severity``); importing this package registers every rule: each module
  of this package is imported (a new rule is one module here plus its tests), and
  :mod:`.stage_rules` names the decisions the pipeline stages make.
* :data:`JUDGEMENT_PITFALLS` — names of the pitfalls a person sets in review, in display order.
* :func:`run_rules`, :func:`rule_summary`, :class:`RuleConfig`, :func:`rule` (decorator).
* :func:`decides` — whether a rule makes its decision (a retired rule, effect ``flag``, is evidence
  only); :func:`evidence_only` — a block in which the named rules are evidence only (measurements).
* :data:`RULES_VERSION` — bumped whenever a rule's behaviour changes; recorded in every
  curated dataset's provenance together with the lexicon checksum.
"""

import importlib
import pkgutil

from stereoset_eval.curation.rules.registry import (
    EFFECTS, KINDS, RULES, DuplicateRuleError, Rule, decides, evidence_only, evidence_only_flag, get_rule, judge_rule,
    judgement_pitfall, register, rule, stage_rule,
)
from stereoset_eval.curation.rules.judgement import JUDGEMENT_PITFALLS
from stereoset_eval.curation.rules.runner import RuleConfig, RuleContext, RuleFailure, RuleRun, rule_summary, run_rules

_INFRASTRUCTURE = frozenset({"registry", "runner", "judgement"})
for _mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _mod not in _INFRASTRUCTURE:
        importlib.import_module(f"{__name__}.{_mod}")  # registers the module's rules

RULES_VERSION = "3.1"

__all__ = [
    "EFFECTS", "KINDS", "RULES", "RULES_VERSION", "JUDGEMENT_PITFALLS", "Rule", "RuleConfig", "RuleContext",
    "RuleFailure", "RuleRun", "DuplicateRuleError", "decides", "evidence_only", "evidence_only_flag", "get_rule",
    "judge_rule", "judgement_pitfall", "register", "rule",
    "rule_summary", "run_rules", "stage_rule",
]
