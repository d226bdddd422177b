"""Pitfall rules: registry, runner and the rules themselves.

Interface used by other parts (the Label Studio round trip builds its choices from it):

* :data:`RULES` — name -> :class:`Rule` (``name``, ``description``, ``automatic``,
  ``severity``, ``needs_person``); importing this package registers every rule.
* :data:`JUDGEMENT_PITFALLS` — names (``list[str]``) of the non-automatic entries, in
  display order; look them up in :data:`RULES` for their descriptions.
* :func:`run_rules`, :func:`rule_summary`, :class:`RuleConfig`, :func:`rule` (decorator).
* :data:`RULES_VERSION` — bumped whenever a rule's behaviour changes; recorded in every
  curated dataset's provenance together with the lexicon checksum.
"""

from stereoset_eval.curation.rules.registry import RULES, DuplicateRuleError, Rule, get_rule, judgement_pitfall, register, rule
from stereoset_eval.curation.rules import pair_rules, text_rules  # noqa: F401  (registers the automatic rules)
from stereoset_eval.curation.rules.judgement import JUDGEMENT_PITFALLS
from stereoset_eval.curation.rules.runner import RuleConfig, RuleContext, RuleFailure, RuleRun, rule_summary, run_rules

RULES_VERSION = "2.2"

__all__ = [
    "RULES", "RULES_VERSION", "JUDGEMENT_PITFALLS", "Rule", "RuleConfig", "RuleContext", "RuleFailure",
    "RuleRun", "DuplicateRuleError", "get_rule", "judgement_pitfall", "register", "rule", "rule_summary",
    "run_rules",
]
