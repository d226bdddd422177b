"""A given name of the other gender and the same origin (issue 14, item 2).

The paper swaps a name with "a common name of the other gender with the same cultural origin"
(GUIDELINES §1). The origin evidence is Jörg Michael's first-name dictionary as shipped by the
``gender-guesser`` package (``nam_dict.txt``: ~48,000 names, their gender and a frequency from 1
(rare) to 13 (extremely common) in each of 55 countries or regions). A name's *origin profile* is
its frequency vector over those countries; a counterpart must

* be of the other gender only (``male`` / ``female``, not ``mostly_*`` or ``andy``),
* be common where the name is common (frequency ≥ :data:`MIN_FREQUENCY` in a country where the
  name has that frequency), have a similar profile (cosine ≥ :data:`MIN_COSINE`) and a close
  spelling (Levenshtein distance ≤ :func:`max_distance`: a name of another stem is no counterpart),

and among those the closest spelling wins (Levenshtein distance, then the longest shared
prefix, then the more similar profile, then the more common, then alphabetical: Timmy → Tammy,
Mattie → Matt, Paula → Paul). The confidence is the gender share times the profile cosine; the
curation swaps automatically only at :data:`MIN_CONFIDENCE` or more. The swap is held for review (``None``) when the name is
unknown, of mixed gender (its frequency mass is under :data:`MIN_GENDER_SHARE` one gender) or has
no counterpart. Without the package installed (optional extra ``names``; GPLv3 code, GFDL data)
every name is held for review, as before rules 2.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

MIN_FREQUENCY = 3
MIN_COSINE = 0.5
MIN_GENDER_SHARE = 0.9
MIN_CONFIDENCE = 0.7


def max_distance(name: str) -> int:
    """The largest spelling distance a counterpart may have (a name of another stem is no counterpart)."""
    return max(2, len(name) // 2)
GENDER_KEYS = {"female": ("female", "mostly_female"), "male": ("male", "mostly_male")}


@dataclass(frozen=True)
class NameCounterpart:
    """The counterpart of one name, with the evidence for it."""

    name: str
    counterpart: str
    gender: str
    origin: str
    cosine: float
    distance: int
    confidence: float

    def evidence(self) -> dict[str, object]:
        return {"name": self.name, "counterpart": self.counterpart, "gender": self.gender,
                "origin": self.origin, "cosine": self.cosine, "edit_distance": self.distance,
                "confidence": self.confidence, "source": "gender-guesser nam_dict (J. Michael)"}


def _freqs(code: str) -> list[int]:
    return [int(c, 16) if c.strip() else 0 for c in code.ljust(55)[:55]]


@lru_cache(maxsize=1)
def _table() -> tuple[tuple[str, ...], dict[str, dict[str, list[int]]]] | None:
    """``(countries, name -> gender key -> frequencies)``, or None without the package."""
    try:
        from gender_guesser.detector import Detector
    except ImportError:
        return None
    d = Detector(case_sensitive=False)
    table = {n: {g: _freqs(code) for g, code in genders.items()} for n, genders in d.names.items()
             if n.isalpha() and n.isascii()}
    return tuple(d.COUNTRIES), table


def available() -> bool:
    """True when the name dictionary can be read (the ``gender-guesser`` package is installed)."""
    return _table() is not None


def settings() -> dict[str, object]:
    """What decided the name swaps, for provenance: the dictionary (or its absence) and the thresholds."""
    version = None
    if available():
        from importlib.metadata import PackageNotFoundError, version as pkg_version

        try:
            version = pkg_version("gender-guesser")
        except PackageNotFoundError:
            version = "unknown"
    return {"dictionary": f"gender-guesser {version} nam_dict.txt" if version else None,
            "min_frequency": MIN_FREQUENCY, "min_cosine": MIN_COSINE, "min_gender_share": MIN_GENDER_SHARE,
            "min_confidence": MIN_CONFIDENCE}


def _cosine(a: list[int], b: list[int]) -> float:
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(x * x for x in b))
    return sum(x * y for x, y in zip(a, b)) / (na * nb) if na and nb else 0.0


def _levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def name_gender_share(name: str) -> tuple[str | None, float]:
    """``(dominant gender, its share of the name's frequency mass)``; ``(None, 0.0)`` if unknown."""
    t = _table()
    if t is None or name.lower() not in t[1]:
        return None, 0.0
    entry = t[1][name.lower()]
    mass = {g: sum(sum(entry.get(k, [])) for k in keys) for g, keys in GENDER_KEYS.items()}
    total = sum(mass.values()) + sum(entry.get("andy", []))  # unisex uses count against both
    if not total:
        return None, 0.0
    g = max(mass, key=lambda k: (mass[k], k))
    return g, round(mass[g] / total, 3)


@lru_cache(maxsize=4096)
def counterpart(name: str, gender: str | None = None) -> NameCounterpart | None:
    """The other-gender, same-origin counterpart of ``name`` (None: hold for review).

    ``gender``: the gender the sentence reads the name as (``female``/``male``); when given and
    the dictionary disagrees, there is no counterpart.
    """
    t = _table()
    low = name.lower()
    if t is None or low not in t[1]:
        return None
    countries, table = t
    dominant, share = name_gender_share(low)
    if dominant is None or share < MIN_GENDER_SHARE or (gender and gender != dominant):
        return None
    prof = [sum(x) for x in zip(*(table[low].get(k, [0] * 55) for k in GENDER_KEYS[dominant]))]
    top = max(range(55), key=lambda i: (prof[i], -i))
    common = [i for i in range(55) if prof[i] >= MIN_FREQUENCY] or [top]
    other = "male" if dominant == "female" else "female"
    best: tuple | None = None
    for cand, entry in table.items():
        if set(entry) != {other} or max(entry[other][i] for i in common) < MIN_FREQUENCY:
            continue
        dist = _levenshtein(low, cand)
        if dist > max_distance(low):
            continue
        cos = _cosine(prof, entry[other])
        if cos < MIN_COSINE:
            continue
        key = (dist, -_prefix(low, cand), -round(cos, 3), -sum(entry[other]), cand)
        if best is None or key < best[0]:
            best = (key, cand, cos)
    if best is None:
        return None
    (dist, *_), cand, cos = best
    confidence = round(share * min(1.0, cos), 3)
    return NameCounterpart(name, cand.capitalize() if name[:1].isupper() else cand, dominant,
                           countries[top], round(cos, 3), dist, confidence)
