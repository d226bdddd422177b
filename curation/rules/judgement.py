"""Judgement pitfalls (Blodgett et al. 2021, "Stereotyping Norwegian Salmon"): a person decides.

They are registered as non-automatic entries so the rule table lists them next to the
automatic ones and the Label Studio round trip can offer them as annotation choices; flags
with these names arrive on items from human review, never from the runner.
"""

from __future__ import annotations

from stereoset_eval.curation.rules.registry import judgement_pitfall

JUDGEMENT_PITFALLS: list[str] = [
    judgement_pitfall(
        "not_meaningful_stereotype",
        description="The pair does not express a meaningful stereotype (e.g. a neutral fact, or an "
                    "attribute with no social meaning for the group).",
    ).name,
    judgement_pitfall(
        "not_real_stereotype",
        description="The stereotype is not one held in the target culture (invented, or a descriptive true "
                    "statement rather than a stereotype).",
    ).name,
    judgement_pitfall(
        "misaligned_stereotype",
        description="The sentence targets a stereotype about another group than the perturbed one, or the "
                    "attribute does not fit the group it is paired with.",
    ).name,
    judgement_pitfall(
        "power_dynamics",
        description="The pair ignores power dynamics between the groups (e.g. treats an anti-stereotype about "
                    "a dominant group as equivalent to a stereotype about a marginalised one).",
    ).name,
    judgement_pitfall(
        "swap_stereotype_labels",
        description="Stereotype and anti-stereotype should be swapped: sent_less is the more stereotypical "
                    "sentence.",
    ).name,
]
