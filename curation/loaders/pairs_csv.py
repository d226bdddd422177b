"""Read curated pair files (``pairs.csv`` / ``pairs.parquet``) back into curated Items.

The loader registry uses :func:`load_pairs` for format ``pairs-csv`` (a header with
``source_id``). Files with only the five BMNE columns (``sent_more, sent_less,
stereo_antistereo, bias_type, category``) load too: ids are then ``pairs:<row>``.

Each item's provenance points to the pairs file (path, sha256, 1-based row, format
``pairs-csv``); ``derived_from``, ``edits`` and ``sentence_origins`` come from the
provenance columns, the original source file is named in ``note``. Flags (including the
dimension tag and its source) are restored from the ``item_flags`` JSON column (``flags`` in
files written before 0.2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stereoset_eval.foundation.csv_safe import unsafe_frame
from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.foundation.limits import check_field
from stereoset_eval.curation.dimensions import DIMENSIONS
from stereoset_eval.foundation.items import DIRECTIONS, PAIR_ROLES, SEVERITIES, Edit, Flag, Item, Provenance, Sentence
from stereoset_eval.foundation.files import file_sha256
from stereoset_eval.curation.loaders.stereoset_table import read_table
from stereoset_eval.curation.pairs import sentence_ids

REQUIRED: tuple[str, ...] = ("sent_more", "sent_less", "stereo_antistereo", "bias_type")


def _parse_json(value: str, default: Any, *, path: Path, row: int, field: str) -> Any:
    if value is None or str(value).strip() == "":
        return default
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"invalid JSON ({exc.msg} at char {exc.pos})", row=row, field=field) from None


def _flags(raw: list[Any], item_id: str, *, path: Path, row: int) -> tuple[Flag, ...]:
    out = []
    for f in raw:
        if not isinstance(f, dict) or "rule" not in f or f.get("severity") not in SEVERITIES:
            raise DataFormatError(path, f"flag entry {f!r} needs 'rule' and a severity in {SEVERITIES}",
                                  row=row, field="item_flags")
        out.append(Flag(f["rule"], item_id, f["severity"], f.get("message", ""), f.get("evidence", {})))
    return tuple(out)


def _edits(raw: list[Any], *, path: Path, row: int) -> tuple[Edit, ...]:
    try:
        return tuple(Edit(e["sentence_role"], int(e["index"]), e["old"], e["new"]) for e in raw)
    except (KeyError, TypeError, ValueError):
        raise DataFormatError(path, "each edit needs sentence_role, index, old, new", row=row, field="edits") from None


def _origins(raw: dict[str, str]) -> tuple[tuple[str, str], ...]:
    order = {r: i for i, r in enumerate(PAIR_ROLES)}
    return tuple(sorted(((str(k), str(v)) for k, v in raw.items()), key=lambda kv: (order.get(kv[0], 99), kv[0])))


def load_pairs(path: str | Path) -> list[Item]:
    """Curated pairs from a CSV or parquet file written by ``stereoset-eval curate``."""
    path = Path(path)
    df = read_table(path)
    if path.suffix.lower() in (".csv", ".tsv") and "source_id" in df.columns:  # written by ``curate``: its
        df = unsafe_frame(df)  # formula-safe cells ('=… for =…) read back as the exact text
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise DataFormatError(path, f"missing required column(s) {missing}; found {list(df.columns)}")
    if df.empty:
        raise DataFormatError(path, "table has a header but no rows")
    sha = file_sha256(path)
    cols = set(df.columns)
    flags_column = "item_flags" if "item_flags" in cols else "flags"
    items: list[Item] = []
    seen: dict[str, int] = {}
    for row, rec in enumerate(df.to_dict("records"), start=1):
        get = (lambda c, d="": str(rec[c]) if c in cols and rec[c] is not None else d)
        item_id = get("id") or f"pairs:{row}"
        if item_id in seen:
            raise DataFormatError(path, f"duplicate id {item_id!r} (first at row {seen[item_id]})", row=row, field="id")
        seen[item_id] = row
        for c in ("sent_more", "sent_less"):
            check_field(path, get(c), row=row, field=c, table_sep="\t" if path.suffix.lower() == ".tsv" else ",")
            if not get(c).strip():
                raise DataFormatError(path, "empty or whitespace-only sentence", row=row, field=c)
        direction = get("stereo_antistereo").strip().lower()
        if direction not in DIRECTIONS:
            raise DataFormatError(path, f"unknown direction {direction!r}; expected stereo or antistereo",
                                  row=row, field="stereo_antistereo")
        category = get("category").strip() or None
        if category is not None and category not in DIMENSIONS:
            raise DataFormatError(path, f"unknown category {category!r}; expected one of {DIMENSIONS} or empty",
                                  row=row, field="category")
        more_id, less_id = sentence_ids(item_id)
        origin = get("source_file")
        note = (f"curated from {origin} (sha256 {get('source_sha256')}, row {get('source_row')}, "
                f"{get('source_format')})") if origin else None
        items.append(Item(
            id=item_id,
            source="curated",
            bias_type=get("bias_type").strip().lower(),
            sentences=(Sentence(more_id, get("sent_more"), "sent_more"), Sentence(less_id, get("sent_less"), "sent_less")),
            provenance=Provenance(
                source_file=str(path), sha256=sha, row=row, format="pairs-csv",
                derived_from=get("source_id") or None,
                edits=_edits(_parse_json(get("edits"), [], path=path, row=row, field="edits"), path=path, row=row),
                note=note,
                sentence_origins=_origins(_parse_json(get("sentence_origins"), {}, path=path, row=row,
                                                      field="sentence_origins")),
            ),
            target=get("target") or None,
            direction=direction,
            dimension=category,
            flags=_flags(_parse_json(get(flags_column), [], path=path, row=row, field=flags_column), item_id,
                         path=path, row=row),
        ))
    return [_flag_identical(it) for it in items]


def _flag_identical(item: Item) -> Item:
    """An ``identical_sentences`` error on a pair whose sides are equal in comparison form."""
    from stereoset_eval.curation.loaders.anomalies import identical_after_normalisation
    from stereoset_eval.foundation.text_compare import comparison_form

    from stereoset_eval.curation.loaders.anomalies import formula_flags

    if not any(f.rule == "formula_start" for f in item.flags):  # a file written before the flag existed
        item = item.with_flags(formula_flags(item)) if formula_flags(item) else item
    more, less = item.text("sent_more"), item.text("sent_less")
    if comparison_form(more) != comparison_form(less) or any(f.rule == "identical_sentences" for f in item.flags):
        return item
    return item.with_flags([identical_after_normalisation(item.id, "sent_more", more, "sent_less", less)])
