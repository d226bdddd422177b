"""CrowS-Pairs: the original CSV (1,508 pairs) and the revised English file (1,467 pairs).

Item ids are ``crows:<row>`` (original) and ``crows-revised:<row>`` (revised), where
``<row>`` is the file's first, unnamed index column; sentence ids append ``:more`` and
``:less``. The revised file is TAB-separated despite its ``.csv`` name and has two bad
labels (``Race-color``; bias type ``stereo``): they are normalised and flagged, never dropped.
"""

from __future__ import annotations

from pathlib import Path

from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.foundation.items import DIRECTIONS, Flag, Item, Provenance, Sentence
from stereoset_eval.foundation.files import file_sha256, read_text_strict
from stereoset_eval.foundation.limits import check_field, multiline_hint
from stereoset_eval.curation.loaders.anomalies import crows_load_flags
from stereoset_eval.curation.loaders.stereoset_table import read_table

CROWS_BIAS_TYPES: tuple[str, ...] = (
    "race-color", "gender", "socioeconomic", "nationality", "religion", "age",
    "sexual-orientation", "physical-appearance", "disability",
)
REQUIRED_COLUMNS: tuple[str, ...] = ("sent_more", "sent_less", "stereo_antistereo", "bias_type")
UNKNOWN_BIAS_TYPE = "unknown"


def sniff_separator(path: Path) -> str:
    """TAB if the header line has tabs and no ``sent_more,`` comma layout, else comma."""
    first = read_text_strict(path).split("\n", 1)[0]
    return "\t" if first.count("\t") > first.count(",") else ","


def load_crows_pairs(path: str | Path, *, revised: bool | None = None, sep: str | None = None) -> list[Item]:
    """Load a CrowS-Pairs file; ``revised`` defaults to "TAB-separated file"."""
    path = Path(path)
    sep = sep or sniff_separator(path)
    if revised is None:
        revised = sep == "\t"
    source = "crows-pairs-revised" if revised else "crows-pairs"
    prefix = "crows-revised" if revised else "crows"
    df = read_table(path, sep=sep)
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        hint = " — the whole header is one column: wrong delimiter?" if len(df.columns) == 1 else ""
        raise DataFormatError(path, f"missing required column(s) {missing}; found {list(df.columns)}{hint}")
    if df.empty:
        raise DataFormatError(path, "table has a header but no rows")
    index_col = df.columns[0] if df.columns[0] in ("", "Unnamed: 0") else None
    sha = file_sha256(path)
    items: list[Item] = []
    seen_ids: dict[str, int] = {}
    for i, rec in enumerate(df.to_dict("records"), start=1):
        row_key = str(rec[index_col]).strip() if index_col else str(i - 1)
        item_id = f"{prefix}:{row_key}"
        if item_id in seen_ids:
            raise DataFormatError(path, f"duplicate row index {row_key!r} (first at row {seen_ids[item_id]})", row=i)
        seen_ids[item_id] = i
        for col in ("sent_more", "sent_less"):
            check_field(path, rec[col], row=i, field=col, table_sep=sep)
            if not str(rec[col]).strip():
                raise DataFormatError(path, "empty or whitespace-only sentence", row=i, field=col)
        flags: list[Flag] = []
        direction = str(rec["stereo_antistereo"]).strip().lower()
        if direction not in DIRECTIONS:
            raise DataFormatError(
                path, f"unknown direction {rec['stereo_antistereo']!r}; expected stereo or antistereo"
                      f"{multiline_hint(rec.values(), shifted=direction in CROWS_BIAS_TYPES)}",
                row=i, field="stereo_antistereo",
            )
        raw_bias = str(rec["bias_type"])
        bias = raw_bias.strip().lower()
        if bias not in CROWS_BIAS_TYPES:
            flags.append(Flag(
                "label_normalised", item_id, "error",
                f"bias type {raw_bias!r} is not a CrowS-Pairs bias type; set to {UNKNOWN_BIAS_TYPE!r}",
                {"field": "bias_type", "raw": raw_bias, "normalised": UNKNOWN_BIAS_TYPE},
            ))
            bias = UNKNOWN_BIAS_TYPE
        elif bias != raw_bias:
            flags.append(Flag(
                "label_normalised", item_id, "warning",
                f"bias type {raw_bias!r} normalised to {bias!r}",
                {"field": "bias_type", "raw": raw_bias, "normalised": bias},
            ))
        if direction != rec["stereo_antistereo"]:
            flags.append(Flag(
                "label_normalised", item_id, "warning",
                f"direction {rec['stereo_antistereo']!r} normalised to {direction!r}",
                {"field": "stereo_antistereo", "raw": rec["stereo_antistereo"], "normalised": direction},
            ))
        items.append(Item(
            id=item_id,
            source=source,
            bias_type=bias,
            direction=direction,
            sentences=(
                Sentence(id=f"{item_id}:more", text=str(rec["sent_more"]), role="sent_more"),
                Sentence(id=f"{item_id}:less", text=str(rec["sent_less"]), role="sent_less"),
            ),
            flags=tuple(flags),
            provenance=Provenance(
                source_file=str(path), sha256=sha, row=i, format="crows-revised-tsv" if revised else "crows-csv",
            ),
        ))
    return crows_load_flags(items, sha256=sha)
