"""Counts of items per source / split / task / bias type / direction, and of flags."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

import pandas as pd

from stereoset_eval.foundation.items import Item


def inventory_table(items: Iterable[Item]) -> pd.DataFrame:
    """One row per (source, split, bias_type, direction) with item and sentence counts.

    ``flagged`` counts items with at least one warning or error flag (info flags such as
    dimension tags are not problems).
    """
    rows = [
        {
            "source": it.source,
            "split": it.split or "",
            "bias_type": it.bias_type,
            "direction": it.direction or "",
            "items": 1,
            "sentences": len(it.sentences),
            "flagged": int(any(f.severity != "info" for f in it.flags)),
        }
        for it in items
    ]
    if not rows:
        return pd.DataFrame(columns=["source", "split", "bias_type", "direction", "items", "sentences", "flagged"])
    df = pd.DataFrame(rows)
    keys = ["source", "split", "bias_type", "direction"]
    out = df.groupby(keys, sort=True, dropna=False)[["items", "sentences", "flagged"]].sum().reset_index()
    totals = df.groupby(["source", "split"], sort=True)[["items", "sentences", "flagged"]].sum().reset_index()
    totals["bias_type"] = "(all)"
    totals["direction"] = ""
    return pd.concat([out, totals[out.columns]], ignore_index=True).sort_values(
        ["source", "split", "bias_type"], key=lambda s: s.map(lambda v: (v == "(all)", v)) if s.name == "bias_type" else s
    ).reset_index(drop=True)


def flag_counts(items: Iterable[Item]) -> pd.DataFrame:
    """How many items carry each flag rule, per source."""
    c: Counter[tuple[str, str, str]] = Counter()
    for it in items:
        for rule in sorted({(f.rule, f.severity) for f in it.flags}):
            c[(it.source, rule[0], rule[1])] += 1
    return pd.DataFrame(
        [{"source": s, "rule": r, "severity": sev, "items": n} for (s, r, sev), n in sorted(c.items())],
        columns=["source", "rule", "severity", "items"],
    )
