"""Inter-annotator agreement: Cohen's kappa per field between every pair of annotators.

Fields: ``decision``, ``dimension`` (``unclear`` is a category of its own) and one binary
field per pitfall (``pitfall:<name>``, checked or not). Two annotators are compared on
the items both annotated where both gave a value for the field; that number is ``n``.
Kappa is undefined (NaN) when ``n`` is 0 or when chance agreement is 1 (both annotators
used one and the same label throughout); observed agreement is reported beside it.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Callable, Hashable, Sequence

import pandas as pd

from stereoset_eval.curation.labelstudio.annotations import Annotation

AGREEMENT_COLUMNS: tuple[str, ...] = ("field", "annotator_a", "annotator_b", "n", "observed", "expected", "kappa")


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters' labels on the same items, (p_o - p_e) / (1 - p_e).

    p_o is the share of items with equal labels; p_e = sum over labels of the product of
    the two raters' marginal shares. Unweighted, as in Cohen (1960) and
    ``sklearn.metrics.cohen_kappa_score``. NaN when there are no items or p_e == 1.

    >>> cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"])
    0.5
    >>> cohen_kappa(["keep", "remove", "keep"], ["keep", "remove", "keep"])
    1.0
    >>> cohen_kappa(["keep", "keep"], ["keep", "keep"])
    nan
    """
    if len(a) != len(b):
        raise ValueError(f"rater label lists differ in length: {len(a)} vs {len(b)}")
    n = len(a)
    if n == 0:
        return math.nan
    p_o = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if p_e == 1:
        return math.nan
    return (p_o - p_e) / (1 - p_e)


def _expected(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    ca, cb = Counter(a), Counter(b)
    return sum(ca[k] * cb[k] for k in ca) / (len(a) ** 2) if a else math.nan


def field_getters(pitfall_names: Sequence[str]) -> dict[str, Callable[[Annotation], Hashable | None]]:
    """Field name -> function giving an annotation's value (None = not given)."""
    getters: dict[str, Callable[[Annotation], Hashable | None]] = {
        "decision": lambda a: a.decision,
        "dimension": lambda a: a.dimension,
    }
    for name in pitfall_names:
        getters[f"pitfall:{name}"] = _has_pitfall(name)
    return getters


def _has_pitfall(name: str) -> Callable[[Annotation], Hashable | None]:
    """The getter of one pitfall checkbox: whether the annotation ticked ``name``."""
    return lambda a: name in a.pitfalls


def pairwise_agreement(annotations: Sequence[Annotation], *, pitfall_names: Sequence[str]) -> pd.DataFrame:
    """Kappa per field for every pair of annotators (columns :data:`AGREEMENT_COLUMNS`).

    ``annotations`` must hold at most one annotation per (item, annotator), as
    :func:`stereoset_eval.curation.labelstudio.annotations.parse_export` returns them.
    """
    by_annotator: dict[str, dict[str, Annotation]] = {}
    for ann in annotations:
        per_item = by_annotator.setdefault(ann.annotator, {})
        if ann.item_id in per_item:
            raise ValueError(f"two annotations of {ann.item_id} by {ann.annotator}; de-duplicate first")
        per_item[ann.item_id] = ann
    rows = []
    for (name_a, items_a), (name_b, items_b) in itertools.combinations(sorted(by_annotator.items()), 2):
        shared = sorted(set(items_a) & set(items_b))
        for field, get in field_getters(pitfall_names).items():
            pairs = [(get(items_a[i]), get(items_b[i])) for i in shared]
            pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
            la, lb = [x for x, _ in pairs], [y for _, y in pairs]
            rows.append({
                "field": field, "annotator_a": name_a, "annotator_b": name_b, "n": len(pairs),
                "observed": sum(x == y for x, y in pairs) / len(pairs) if pairs else math.nan,
                "expected": _expected(la, lb), "kappa": cohen_kappa(la, lb),
            })
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
