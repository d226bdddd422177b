"""Gendered terms and their counterparts: the data of the gender swap (lower case).

``PAIRS`` lists ``(male, female, kind)`` counterparts swapped in both directions; plurals
are derived (``-man`` → ``-men``, ``-y`` → ``-ies``, sibilants → ``-es``, else ``-s``)
unless ``IRREGULAR_PLURALS`` names them. ``ONE_WAY`` lists terms with no exact counterpart
that map one way only (``guy`` → ``girl``, while ``girl`` → ``boy``). ``AMBIGUOUS`` names
the two words whose counterpart depends on context (``her`` → ``his``/``him``, ``his`` →
``her``/``hers``); :mod:`stereoset_eval.curation.gender_swap` decides them and records how.

Left out on purpose (documented so nobody "fixes" it): gendered adjectives such as
``masculine``/``feminine``/``girly``/``manly`` are *attributes* of a stereotype, not
group terms, so they are never swapped; idioms with gendered words (``fireman's carry``)
and words that are mostly used in another sense or gender-neutrally (``host``, ``god``,
``bachelor`` (degree), ``miss`` (verb), ``hero``) are not in the lexicon; given names are
never swapped (see ``names``).
"""

from __future__ import annotations

PAIRS: tuple[tuple[str, str, str], ...] = (
    # pronouns (his/her handled through AMBIGUOUS)
    ("he", "she", "pronoun"),
    ("him", "her", "pronoun"),
    ("himself", "herself", "reflexive"),
    # group nouns and adjectives
    ("man", "woman", "group"),
    ("boy", "girl", "group"),
    ("male", "female", "group"),
    ("gentleman", "lady", "group"),
    ("lad", "lass", "group"),
    ("schoolboy", "schoolgirl", "role"),
    ("cowboy", "cowgirl", "role"),
    ("paperboy", "papergirl", "role"),
    ("boyhood", "girlhood", "group"),
    ("manhood", "womanhood", "group"),
    ("brotherhood", "sisterhood", "group"),
    ("fraternity", "sorority", "group"),
    # kinship
    ("father", "mother", "kinship"),
    ("dad", "mom", "kinship"),
    ("daddy", "mommy", "kinship"),
    ("papa", "mama", "kinship"),
    ("son", "daughter", "kinship"),
    ("brother", "sister", "kinship"),
    ("uncle", "aunt", "kinship"),
    ("nephew", "niece", "kinship"),
    ("grandfather", "grandmother", "kinship"),
    ("grandpa", "grandma", "kinship"),
    ("grandson", "granddaughter", "kinship"),
    ("stepfather", "stepmother", "kinship"),
    ("stepson", "stepdaughter", "kinship"),
    ("stepbrother", "stepsister", "kinship"),
    ("husband", "wife", "kinship"),
    ("boyfriend", "girlfriend", "kinship"),
    ("groom", "bride", "kinship"),
    ("fiance", "fiancee", "kinship"),
    ("widower", "widow", "kinship"),
    ("patriarch", "matriarch", "kinship"),
    # titles and forms of address
    ("mr", "mrs", "title"),
    ("sir", "ma'am", "title"),
    ("king", "queen", "title"),
    ("prince", "princess", "title"),
    ("duke", "duchess", "title"),
    ("emperor", "empress", "title"),
    # role nouns
    ("actor", "actress", "role"),
    ("waiter", "waitress", "role"),
    ("steward", "stewardess", "role"),
    ("heir", "heiress", "role"),
    ("monk", "nun", "role"),
    ("priest", "priestess", "role"),
    ("masseur", "masseuse", "role"),
    ("businessman", "businesswoman", "role"),
    ("chairman", "chairwoman", "role"),
    ("spokesman", "spokeswoman", "role"),
    ("salesman", "saleswoman", "role"),
    ("congressman", "congresswoman", "role"),
    ("sportsman", "sportswoman", "role"),
    ("spearman", "spearwoman", "role"),
    ("cameraman", "camerawoman", "role"),
    ("policeman", "policewoman", "role"),
    ("craftsman", "craftswoman", "role"),
    ("horseman", "horsewoman", "role"),
    ("nobleman", "noblewoman", "role"),
    ("mailman", "mailwoman", "role"),
)

IRREGULAR_PLURALS: dict[str, str] = {
    "wife": "wives",
    "patriarch": "patriarchs",
    "matriarch": "matriarchs",
    "widow": "widows",
    "mr": "",  # titles have no plural
    "mrs": "",
    "sir": "",
    "ma'am": "",
    "him": "",
    "her": "",
    "he": "",
    "she": "",
    "himself": "",
    "herself": "",
    "boyhood": "",
    "girlhood": "",
    "manhood": "",
    "womanhood": "",
    "brotherhood": "",
    "sisterhood": "",
}

# term -> counterpart, one direction only (no exact counterpart exists)
ONE_WAY: dict[str, str] = {
    "guy": "girl",
    "guys": "girls",
    "gal": "guy",
    "gals": "guys",
    "ms": "mr",
    "madam": "sir",
    "mum": "dad",
    "mums": "dads",
    "granny": "grandpa",
    "grannies": "grandpas",
    "granddad": "grandma",
    "grandad": "grandma",
    "bridegroom": "bride",
}

# gender of one-way terms (their counterparts are in PAIRS)
ONE_WAY_GENDER: dict[str, str] = {
    "guy": "male", "guys": "male", "gal": "female", "gals": "female", "ms": "female",
    "madam": "female", "mum": "female", "mums": "female", "granny": "female",
    "grannies": "female", "granddad": "male", "grandad": "male", "bridegroom": "male",
}

# words whose counterpart depends on context: word -> (determiner reading, pronoun reading)
AMBIGUOUS: dict[str, tuple[str, str]] = {
    "her": ("his", "him"),  # possessive determiner -> his; object pronoun -> him
    "his": ("her", "hers"),  # determiner -> her; independent possessive -> hers
}
AMBIGUOUS_GENDER: dict[str, str] = {"her": "female", "his": "male", "hers": "female"}
EXTRA_SWAPS: dict[str, str] = {"hers": "his"}


def plural(word: str) -> str:
    """English plural of a lexicon noun (``""`` when it has none).

    >>> [plural(w) for w in ("woman", "lady", "actress", "wife", "schoolgirl", "mr")]
    ['women', 'ladies', 'actresses', 'wives', 'schoolgirls', '']
    """
    if word in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[word]
    if word.endswith("man"):
        return word[:-3] + "men"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "sh", "ch", "x")):
        return word + "es"
    return word + "s"
