"""Registry entries of the decisions the pipeline stages make (no runner function).

Each stage names one of these rules on every decision it makes, so the reliability of the
decision can be measured per rule, the card and Label Studio list it, and ``decided_by`` says
``rule:<name>``. Kinds follow one test: a *mechanical* rule checks form (which words differ,
which are gendered, which tokens an edit touches) and is right by construction; a *judgement*
rule reads meaning (is this a stereotype, of whom, about what, which name is the counterpart)
and is trusted only as far as reviewed items show.
"""

from __future__ import annotations

from stereoset_eval.curation.rules.registry import stage_rule

# --- normalisation (stereoset_eval.curation.normalise): the gender-swap minimal pair
stage_rule("as_is_pair", kind="judgement", effect="keep", stage="normalise", needs=("pair_analysis",),
           description="The pair already differs only by the target's gendered words: kept as one instance "
                       "(whether it states a real stereotype is a judgement).")
stage_rule("target_swap", kind="mechanical", effect="repair", stage="normalise", needs=("pair_analysis", "lexicon"),
           description="The target-only gender swap that builds the other sentence of an attribute instance "
                       "(possessors and other people stay; her -> his/him by grammar).")
# rules 3.1 (issue 31): fitted special cases the reviewed items cannot support are retired to evidence
# only (effect "flag", ``retired`` says why): the cue is attached to the instance for the reviewer and
# the other rules decide. Figures: cross-fitted on gold_dev.csv (curation/rule_heldout.py), the rule's
# held-out agreement vs the pipeline's without it, on the same units; docs/curation.md "3.1: retired".
stage_rule("name_left_alone", kind="judgement", effect="hold", stage="normalise", severity="warning",
           needs=("names",),
           description="A given name would stay unswapped while its pronouns change, or no swappable term is left: "
                       "a person writes the swap.")
stage_rule("name_conflict", kind="judgement", effect="flag", stage="normalise", severity="warning",
           needs=("names",),
           retired="3.1: held-out 3/3 holds needed vs 0/3 without it, p 0.12, too few to support it",
           description="An as-is pair whose unchanged names contradict the swapped pronoun ('Denny took his/her "
                       "wedding ring off'): evidence for the reviewer.")
stage_rule("ambiguous_name_swap", kind="judgement", effect="flag", stage="normalise", severity="warning",
           needs=("names",),
           retired="3.1: held-out 1 hold (p 0.5), too few to support it; right 0-33 % on the expert gold's other half",
           description="A name swapped for a name read as either gender ('Jenny'/'Alex'): evidence for the reviewer.")
stage_rule("name_swap", kind="judgement", effect="repair", stage="normalise", needs=("names",),
           description="A given name swapped for the source pair's own counterpart or a same-origin name of the "
                       "other gender (name dictionary).")
stage_rule("incomplete_swap_repaired", kind="mechanical", effect="repair", stage="normalise",
           needs=("pair_analysis",),
           description="An as-is pair whose sent_less also changed closed-class words or the kin relation is "
                       "rebuilt as the target-only swap of sent_more.")
stage_rule("real_word_typo", kind="judgement", effect="repair", stage="normalise", needs=("dictionary",),
           description="A CrowS-Pairs pair that otherwise differs by one near-edit of a dictionary word: repaired "
                       "as a slip, or held for a person when the spelling cannot be decided.")
stage_rule("swap_completion", kind="mechanical", effect="repair", stage="normalise", needs=("pair_analysis",),
           description="An as-is pair whose writer swapped the noun but not the pronouns tied to it is completed.")
stage_rule("source_text", kind="judgement", effect="keep", stage="normalise",
           description="The source sentences are taken as they are: that they need no fix (typos, agreement, an "
                       "incomplete swap) is a judgement.")
stage_rule("keep_unjudged", kind="judgement", effect="keep", stage="validity",
           description="Validity is off (--no-validity): the attribute instance is kept without a judgement.")
# --- validity and direction of attribute instances (stereoset_eval.curation.validity)
stage_rule("stereotype_validity", kind="judgement", effect="keep", stage="validity", needs=("lexicon", "consensus"),
           description="Evidence (published lists, the datasets' consensus) that the attribute is a stereotype of "
                       "sent_more's gender: the instance is kept.")
stage_rule("wrong_direction", kind="judgement", effect="swap_labels", stage="validity", needs=("lexicon", "consensus"),
           description="The attribute is associated with the other gender: sent_more/sent_less swapped.")
stage_rule("age_stereotype", kind="judgement", effect="drop_instance", stage="validity", needs=("lexicon",),
           description="The attribute is an old-age stereotype (Hummert 1990), not a gender one: instance dropped.")
stage_rule("generic_negativity", kind="judgement", effect="flag", stage="validity", needs=("lexicon",),
           retired="3.1: held-out 0.85 vs 0.85 without it (n 26; right alone 3, wrong alone 3): no better than "
                   "the other rules' suggestion",
           description="The attribute is generic negativity (VADER) with no gender association: evidence for the "
                       "reviewer (dropped the instance before 3.1).")
stage_rule("generic_positivity", kind="judgement", effect="flag", stage="validity", needs=("lexicon",),
           retired="3.1: held-out 0.61 vs 0.50 without it (n 18; 6 vs 4, p 0.38): near chance",
           description="The attribute is generic praise (VADER) with no gender association: evidence for the "
                       "reviewer (dropped the instance before 3.1).")
stage_rule("no_gender_association", kind="judgement", effect="drop_instance", stage="validity",
           needs=("lexicon", "consensus"),
           description="No gender association for the anti-stereotype attribute: instance dropped.")
stage_rule("conflicting_association", kind="judgement", effect="flag", stage="validity", severity="warning",
           needs=("lexicon", "consensus"),
           retired="3.1: held-out 7 of 13 holds needed (without it 6 of 13 right, p 0.5): near chance",
           description="Strong evidence for both genders: evidence for the reviewer.")
stage_rule("negation_perturbation", kind="judgement", effect="flag", stage="validity", severity="warning",
           needs=("lexicon", "consensus"),
           retired="3.1: held-out 1 of 2 holds needed (p 0.75), fitted to the three gold_dev negation pairs",
           description="The options differ only by a negation and the negated mirror has no direct evidence: "
                       "evidence for the reviewer (both instances are still judged on the plain predicate).")
stage_rule("weak_consensus", kind="judgement", effect="hold", stage="validity", severity="warning",
           needs=("consensus",),
           description="An anti-stereotype attribute, or a swap of the source's label, rests on context uses only: "
                       "a person decides.")
# --- repairs (stereoset_eval.curation.repair): one rule per kind of edit
stage_rule("repair_capitalisation", kind="mechanical", effect="repair", stage="repair",
           description="Repair: a lower-case 'i', first word or given name capitalised.")
stage_rule("repair_punctuation", kind="mechanical", effect="repair", stage="repair",
           description="Repair: '..' -> '.', runs of spaces, a plural's apostrophe, the missing final mark of one "
                       "sentence of a pair.")
stage_rule("repair_article", kind="mechanical", effect="repair", stage="repair",
           description="Repair: 'a' -> 'an' before a vowel sound.")
stage_rule("repair_spelling", kind="judgement", effect="repair", stage="repair", needs=("dictionary",),
           description="Repair: an out-of-vocabulary typo with one clear correction one edit away (pyspellchecker).")
# --- stereotype dimensions (stereoset_eval.curation.dimensions): one rule per kind of cue
stage_rule("dimension_frame", kind="judgement", effect="tag_dimension", stage="dimension", needs=("lexicon",),
           description="Dimension from a sentence frame ('too X to', a preference or value frame).")
stage_rule("dimension_attribute_cue", kind="judgement", effect="tag_dimension", stage="dimension", needs=("lexicon",),
           description="Dimension from cue words of the attribute (tie rule Roles > Attitudes > Personality > Physical).")
stage_rule("dimension_sentence_cue", kind="judgement", effect="tag_dimension", stage="dimension", needs=("lexicon",),
           description="Dimension from cue words of the rest of sent_more (same tie rule).")
stage_rule("dimension_grammar", kind="judgement", effect="tag_dimension", stage="dimension",
           description="Dimension from grammar: an action verb and no cue word -> Roles and Behaviors.")
stage_rule("dimension_none", kind="judgement", effect="tag_dimension", stage="dimension", severity="warning",
           description="No dimension cue found: the instance stays untagged (needs annotation) unless a person tags it.")

#: repair kinds of :mod:`stereoset_eval.curation.repair` -> the rule that owns them
REPAIR_RULE: dict[str, str] = {
    "lowercase_i": "repair_capitalisation", "sentence_case": "repair_capitalisation", "name_case": "repair_capitalisation",
    "double_period": "repair_punctuation", "whitespace": "repair_punctuation", "final_punctuation": "repair_punctuation",
    "plural_apostrophe": "repair_punctuation", "article": "repair_article", "typo": "repair_spelling",
}
#: where a dimension cue was found -> the rule that owns the tag
DIMENSION_RULE: dict[str, str] = {
    "frame": "dimension_frame", "attribute": "dimension_attribute_cue", "sentence": "dimension_sentence_cue",
    "grammar": "dimension_grammar",
}
