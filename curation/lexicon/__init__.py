"""The curation lexicons as look-up tables, and one checksum that versions them all.

Data lives in small Python modules (``gender_terms``, ``names``, ``group_terms``,
``function_words``, ``dimension_terms``); this module derives the tables the code uses:

* :data:`SWAPS` — lower-case gendered word → counterpart (plurals included; ``her`` and
  ``his`` are not here but in ``gender_terms.AMBIGUOUS``).
* :data:`GENDER_OF` — lower-case gendered word → ``"male"``/``"female"``.
* :func:`lexicon_sha256` — sha256 over a canonical JSON dump of every table; recorded in
  the provenance of every curated dataset so a lexicon change is never silent.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache

from stereoset_eval.curation.lexicon import dimension_terms, function_words, gender_terms, group_terms, names


def _build() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    swaps: dict[str, str] = {}
    gender: dict[str, str] = {}
    kind: dict[str, str] = {}
    for male, female, k in gender_terms.PAIRS:
        forms = [(male, female)]
        pm, pf = gender_terms.plural(male), gender_terms.plural(female)
        if pm and pf:
            forms.append((pm, pf))
        for m, f in forms:
            for word, other, g in ((m, f, "male"), (f, m, "female")):
                if word in gender_terms.AMBIGUOUS:
                    continue  # decided in context by gender_swap
                if word in swaps and swaps[word] != other:
                    raise ValueError(f"gender lexicon maps {word!r} to both {swaps[word]!r} and {other!r}")
                swaps[word] = other
                gender[word] = g
                kind[word] = k
    for word, other in gender_terms.ONE_WAY.items():
        swaps.setdefault(word, other)
        gender[word] = gender_terms.ONE_WAY_GENDER[word]
        kind[word] = "one-way"
    for word, other in gender_terms.EXTRA_SWAPS.items():
        swaps[word] = other
    for word, g in gender_terms.AMBIGUOUS_GENDER.items():
        gender[word] = g
        kind.setdefault(word, "possessive")
    return swaps, gender, kind


SWAPS, GENDER_OF, KIND_OF = _build()
NAME_GENDER: dict[str, str | None] = {
    **{n: None for n in names.UNISEX_NAMES},
    **{n: "female" for n in names.FEMALE_NAMES},
    **{n: "male" for n in names.MALE_NAMES},
}


def is_gender_term(word: str) -> bool:
    """True if lower-case ``word`` (clitic stripped by the caller) is a gendered term."""
    return word in GENDER_OF


def name_gender(token: str) -> tuple[bool, str | None]:
    """``(is_known_name, gender)`` of a capitalised token (``(False, None)`` otherwise).

    >>> name_gender("Melissa"), name_gender("Sam"), name_gender("mark")
    ((True, 'female'), (True, None), (False, None))
    """
    if not token[:1].isupper():
        return False, None
    low = token.lower()
    if low in NAME_GENDER:
        return True, NAME_GENDER[low]
    return False, None


@lru_cache(maxsize=1)
def lexicon_sha256() -> str:
    """sha256 of a canonical JSON dump of every lexicon table (the lexicon's version)."""
    def norm(v: object) -> object:
        if isinstance(v, (set, frozenset)):
            return sorted(v)
        if isinstance(v, dict):
            return {k: norm(x) for k, x in sorted(v.items())}
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        return v

    payload = {
        "swaps": SWAPS,
        "gender": GENDER_OF,
        "ambiguous": gender_terms.AMBIGUOUS,
        "names": NAME_GENDER,
        "other_groups": group_terms.OTHER_GROUP_TERMS,
        "function_words": {k: getattr(function_words, k) for k in sorted(dir(function_words)) if k.isupper()},
        "dimensions": dimension_terms.DIMENSION_WORDS,
        "dimension_patterns": dimension_terms.PATTERNS,
    }
    text = json.dumps(norm(payload), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
