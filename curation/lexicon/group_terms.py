"""Group markers per social category (lower case word forms, plurals listed).

A pair of a bias type should differ by a group term *of that bias type*. These lists let
the rules tell (a) a gender pair perturbed on another group's marker (``young``/``old``
grandfather, ``trans``/``cis``, ``blacks``/``whites``) from (b) an attribute perturbation
(``caring``/``mean``). Gender terms themselves come from ``gender_terms`` and ``names``;
``gender-identity`` is separate from ``gender`` because a trans/cis pair is not a binary
gender swap and cannot be normalised into one.

Physical-appearance words (``thin``, ``chubby``, ``strong``) and class words (``wealthy``,
``homeless``) are deliberately NOT group markers here: in the gender items they are the
stereotyped attribute ("Those wealthy gentlemen"; dimension "Physical Characteristics"),
not the group.
"""

from __future__ import annotations

OTHER_GROUP_TERMS: dict[str, frozenset[str]] = {
    "gender-identity": frozenset("""
        trans transgender transgendered cis cisgender cisfemale cismale cis-gender
        nonbinary non-binary genderqueer transsexual
    """.split()),
    "sexual-orientation": frozenset("""
        gay gays lesbian lesbians bisexual bisexuals homosexual homosexuals heterosexual
        heterosexuals straight queer
    """.split()),
    "age": frozenset("""
        young younger youngest old older oldest elderly aged teen teens teenage teenager
        teenagers senior seniors youth millennial millennials boomer boomers middle-aged
    """.split()),
    "race-color": frozenset("""
        black blacks white whites asian asians african africans hispanic hispanics latino
        latina latinos latinas caucasian caucasians arab arabs
    """.split()),
    "religion": frozenset("""
        christian christians muslim muslims jewish jew jews hindu hindus buddhist
        buddhists catholic catholics atheist atheists mormon mormons
    """.split()),
    "disability": frozenset("""
        blind deaf disabled handicapped autistic wheelchair paralyzed
    """.split()),
}


def other_group_category(word: str) -> str | None:
    """The non-gender category whose marker ``word`` (lower case) is, or None.

    >>> other_group_category("old"), other_group_category("cis"), other_group_category("kind")
    ('age', 'gender-identity', None)
    """
    for category, terms in OTHER_GROUP_TERMS.items():
        if word in terms:
            return category
    return None
