"""The report section that lists every error-severity load flag and how those items were counted.

Loaders never drop an item: a pair whose sentences are identical, a context without
``BLANK``, a documented erratum … keep their place in the data with an ``error`` flag. The
metrics do not read flags, so such items are in every number of the report; readers must be
told which they are and how they counted, or a published figure hides them.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from stereoset_eval.analysis.report_model import Section, Table
from stereoset_eval.foundation.items import Item

HOW_COUNTED = ("Items with error-severity flags are included in every number above, scored and counted like "
               "any other item (flags never drop an item); a pair whose sentences are identical scores as an "
               "exact (or float-noise) tie and counts under the metric's tie rule.")
MAX_ROWS = 200  # the table lists at most this many; report.json lists them all


def flags_section(items: Iterable[Item], *, benchmark: str) -> Section:
    """Every error flag on ``items`` (item, rule, message), a count per rule, and how they were counted."""
    rows = [(it.id, f.rule, f.message) for it in items for f in it.flags if f.severity == "error"]
    per_rule = dict(sorted(Counter(rule for _, rule, _ in rows).items()))
    n_items = len({item_id for item_id, _, _ in rows})
    key = f"flags/{benchmark}"
    title = f"{benchmark} — items with error flags"
    if not rows:
        return Section(key=key, title=title, notes=("No item carries an error-severity flag.",),
                       data={"benchmark": benchmark, "n_items": 0, "per_rule": {}, "flags": []})
    shown = rows[:MAX_ROWS]
    notes = [f"{n_items} item(s) carry {len(rows)} error flag(s): "
             + ", ".join(f"{rule} {n}" for rule, n in per_rule.items()) + ".", HOW_COUNTED]
    if len(rows) > MAX_ROWS:
        notes.append(f"The table shows the first {MAX_ROWS}; report.json lists all {len(rows)}.")
    table = Table(title=f"{benchmark}: error flags", columns=("item", "rule", "message"), rows=tuple(shown))
    return Section(key=key, title=title, tables=(table,), notes=tuple(notes),
                   data={"benchmark": benchmark, "n_items": n_items, "per_rule": per_rule, "how_counted": HOW_COUNTED,
                         "flags": [{"item": i, "rule": r, "message": m} for i, r, m in rows]})
