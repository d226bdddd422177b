"""Data anomalies surfaced at load time as flags on the items (never printed, never dropped).

StereoSet (intrasentence contexts):
  * ``blank_count``    — a context without ``BLANK`` or with more than one (dev: 2 with two).
  * ``blank_at_start`` — the context starts with ``BLANK`` (dev: 19); the filled-in word is
    then lower-case at a sentence start, which shifts masked-LM scores.
  * ``blank_glued``    — ``BLANK`` glued to letters/digits, e.g. ``BLANKed``,
    ``sometimes.BLANK`` (dev: 4); the reference takes the whole glued word as the attribute.
  * ``duplicate_example`` — the same (task, context, stereotype, anti-stereotype) appears in
    more than one example (dev: 5 such triples; every copy after the first is flagged).

CrowS-Pairs:
  * ``duplicate_pair`` — the same (sent_more, sent_less) in more than one row (original: 1).
  * ``identical_sentences`` — sent_more equals sent_less (the pair cannot discriminate), also
    when they differ only by whitespace, zero-width/control characters or NFKC forms
    (:mod:`stereoset_eval.foundation.text_compare`); StereoSet: two of an item's sentences so.
  * ``known_erratum`` — rows documented as invalid in the literature, looked up in
    ``data/known_errata.json`` by the file's sha256 (original: row 709, trunks/bikini).
  * ``label_normalised`` — a bias-type or direction label that had to be normalised
    (revised file: ``Race-color`` and the bias type ``stereo``).

Every benchmark (StereoSet, CrowS-Pairs, curated pair files):
  * ``formula_start`` — a sentence (or a StereoSet context) starts with a character a spreadsheet
    takes as a formula (``=``, ``+``, ``-``, ``@``, tab, CR; :mod:`stereoset_eval.foundation.csv_safe`).
    Scores are unaffected; CSV exports write the cell with a leading apostrophe, parquet, HF
    datasets and JSON keep the exact text. No sentence of the released benchmarks does.
"""

from __future__ import annotations

import json
import string
from collections import defaultdict
from functools import lru_cache
from importlib import resources
from typing import Any

from stereoset_eval.foundation.csv_safe import FORMULA_CHARS, starts_formula
from stereoset_eval.foundation.items import Flag, Item
from stereoset_eval.foundation.text_compare import comparison_form, how_they_differ

_PUNCT_TABLE = str.maketrans("", "", string.punctuation)


def blank_words(context: str) -> list[str]:
    """The space-separated words of ``context`` that contain ``BLANK``."""
    return [w for w in context.split(" ") if "BLANK" in w]


def stereoset_load_flags(items: list[Item]) -> list[Item]:
    """Return ``items`` with StereoSet load-time anomaly flags attached."""
    flags: dict[str, list[Flag]] = defaultdict(list)
    seen: dict[tuple[str, str, str, str], str] = {}
    for item in items:
        ctx = item.context or ""
        if item.source == "stereoset-intra":
            n = ctx.count("BLANK")
            if n != 1:
                flags[item.id].append(Flag(
                    "blank_count", item.id, "error" if n == 0 else "warning",
                    f"intrasentence context has {n} BLANKs (expected exactly one)",
                    {"context": ctx, "blank_count": n},
                ))
            if ctx.lstrip().startswith("BLANK"):
                flags[item.id].append(Flag(
                    "blank_at_start", item.id, "info", "context starts with BLANK",
                    {"context": ctx},
                ))
            glued = [w for w in blank_words(ctx) if w.translate(_PUNCT_TABLE) != "BLANK"]
            if glued:
                flags[item.id].append(Flag(
                    "blank_glued", item.id, "warning",
                    f"BLANK glued to other characters: {', '.join(glued)}",
                    {"words": glued},
                ))
        roles = [s.role for s in item.sentences]
        for i, r1 in enumerate(roles):
            for r2 in roles[i + 1:]:
                t1, t2 = item.text(r1), item.text(r2)
                if comparison_form(t1) == comparison_form(t2):
                    flags[item.id].append(identical_after_normalisation(item.id, r1, t1, r2, t2))
        key = (item.source, ctx, item.text("stereotype"), item.text("anti-stereotype"))
        if key in seen:
            flags[item.id].append(Flag(
                "duplicate_example", item.id, "warning",
                f"same context, stereotype and anti-stereotype as example {seen[key]}",
                {"first": seen[key]},
            ))
        else:
            seen[key] = item.id
        flags[item.id].extend(formula_flags(item))
    return [item.with_flags(flags[item.id]) if flags.get(item.id) else item for item in items]


def formula_flags(item: Item) -> list[Flag]:
    """One ``formula_start`` warning per sentence (or context) of ``item`` a spreadsheet would run as a formula."""
    texts = [("context", item.context)] if item.context else []
    texts += [(s.role, s.text) for s in item.sentences]
    return [Flag("formula_start", item.id, "warning",
                 f"{role} starts with {text[0]!r}, which a spreadsheet runs as a formula; CSV exports write it "
                 "with a leading apostrophe (parquet, HF datasets and JSON keep the exact text)",
                 {"role": role, "sentence": text, "character": text[0], "formula_characters": list(FORMULA_CHARS)})
            for role, text in texts if starts_formula(text)]


@lru_cache(maxsize=1)
def identical_after_normalisation(item_id: str, role1: str, text1: str, role2: str, text2: str) -> Flag:
    """The ``identical_sentences`` error of two sentences equal in :func:`comparison_form`."""
    how = how_they_differ(text1, text2)
    detail = f"differ only by {how}" if how else "are identical"
    return Flag(
        "identical_sentences", item_id, "error",
        f"{role1} and {role2} {detail} (identical after NFKC, zero-width/control removal and whitespace "
        "collapsing); they cannot be scored meaningfully",
        {"sentence": text1, "other": text2, "roles": [role1, role2], "normalised": bool(how)},
    )


@lru_cache(maxsize=1)
def known_errata() -> dict[str, Any]:
    """The errata table shipped in ``data/known_errata.json`` (keyed by file sha256)."""
    text = resources.files("stereoset_eval.data").joinpath("known_errata.json").read_text(encoding="utf-8")
    return json.loads(text)


def crows_load_flags(items: list[Item], *, sha256: str) -> list[Item]:
    """Return CrowS-Pairs ``items`` with duplicate / identical / erratum flags attached."""
    errata = {str(e["row"]): e for e in known_errata().get(sha256, {}).get("rows", [])}
    flags: dict[str, list[Flag]] = defaultdict(list)
    seen: dict[tuple[str, str], str] = {}
    for item in items:
        more, less = item.text("sent_more"), item.text("sent_less")
        if more.strip() == less.strip():
            flags[item.id].append(Flag(
                "identical_sentences", item.id, "error",
                "sent_more and sent_less are identical; the pair cannot be scored meaningfully",
                {"sentence": more},
            ))
        elif comparison_form(more) == comparison_form(less):
            flags[item.id].append(identical_after_normalisation(item.id, "sent_more", more, "sent_less", less))
        key = (more, less)
        if key in seen:
            flags[item.id].append(Flag(
                "duplicate_pair", item.id, "warning", f"exact duplicate of {seen[key]}",
                {"first": seen[key]},
            ))
        else:
            seen[key] = item.id
        flags[item.id].extend(formula_flags(item))
        row_key = item.id.rsplit(":", 1)[-1]
        if row_key in errata:
            e = errata[row_key]
            flags[item.id].append(Flag(
                "known_erratum", item.id, "error", e["problem"],
                {"reference": e.get("reference", ""), "row": e["row"]},
            ))
    return [item.with_flags(flags[item.id]) if flags.get(item.id) else item for item in items]
