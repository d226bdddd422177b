"""The review section of the curation report, and the files of a merged review.

``write_review`` writes, each atomically, into one folder:

* ``curated_items.jsonl`` — the curated items (``Item.to_dict`` per line);
* ``removed.csv`` — removed items with the reason and who decided;
* ``decisions.csv`` — one row per input item: decision, source, annotator, annotation;
* ``disagreements.csv`` — per item and field, each annotator's value and the resolution;
* ``agreement.csv`` — Cohen's kappa per field and annotator pair, with ``n``;
* ``issues.csv`` — everything in the export that did not become a usable annotation;
* ``review_report.json`` / ``review_report.md`` — the summary with provenance.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from stereoset_eval.foundation.atomic import atomic_path, atomic_write_json, atomic_write_text
from stereoset_eval.curation.labelstudio.annotations import ParsedExport
from stereoset_eval.curation.labelstudio.items_io import write_items_jsonl
from stereoset_eval.curation.labelstudio.merge import MergeResult


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and pandas NA -> None, numpy scalars -> Python."""
    if value is pd.NA:
        return None
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _clean(v) for k, v in row.items()} for row in df.astype(object).to_dict("records")]


def review_report(result: MergeResult, parsed: ParsedExport, agreement: pd.DataFrame, *, source: str,
                  run: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON-able summary: provenance, counts, issues, agreement and disagreement rows.

    ``run`` is the caller's provenance block (tool, git commit, input sha256, libraries),
    kept verbatim.
    """
    return {
        "source": source,
        "run": dict(run or {}),
        "provenance": result.provenance,
        "n_tasks": parsed.n_tasks,
        "n_usable_annotations": len(parsed.annotations),
        "issue_counts": parsed.issue_counts(),
        "decision_counts": {k: int(v) for k, v in result.decisions["decision"].value_counts().sort_index().items()},
        "decision_sources": {k: int(v) for k, v in result.decisions["decision_source"].value_counts().sort_index().items()},
        "agreement": _records(agreement),
        "disagreements": _records(result.disagreements),
    }


MAX_DISAGREEMENT_ROWS = 50


def _fmt(v: Any) -> str:
    return "n/a" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def report_markdown(report: dict[str, Any]) -> str:
    """Markdown rendering of :func:`review_report` (the curation report's review section)."""
    prov = report["provenance"]
    lines = [
        "## Human review (Label Studio)", "",
        f"Source: `{report['source']}`; {report['n_tasks']} tasks, {report['n_usable_annotations']} usable annotations "
        f"by {len(prov['annotators'])} annotators.", "",
        f"Adjudication: **{prov['adjudication']}** — {prov['adjudication_rule']}"
        + (f" (primary annotator: {prov['primary_annotator']})" if prov.get("primary_annotator") else "") + ".",
        f"Unreviewed items: **{prov['unreviewed']}** — {prov['unreviewed_policy']}.", "",
        f"Result: {prov['n_kept']} kept ({prov['n_edited']} edited), {prov['n_removed']} removed, "
        f"{prov['n_human_decisions']} decided by a person.", "",
        "Export issues: " + ", ".join(f"{k} {v}" for k, v in report["issue_counts"].items()) + ".", "",
        "### Agreement (Cohen's kappa)", "",
        "| field | annotator A | annotator B | n | observed | kappa |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    for row in report["agreement"]:
        lines.append(f"| {row['field']} | {row['annotator_a']} | {row['annotator_b']} | {row['n']} | "
                     f"{_fmt(row['observed'])} | {_fmt(row['kappa'])} |")
    lines += ["", "kappa n/a: no shared items, or both annotators used a single identical label.", ""]
    rows = report.get("disagreements", [])
    lines += ["### Disagreements", "",
              f"{len(rows)} (item, field) pairs on which the annotators who gave a value differ, each resolved by the "
              "adjudication rule" + (f"; the first {MAX_DISAGREEMENT_ROWS} are shown, all are in "
                                     "`disagreements.csv`" if len(rows) > MAX_DISAGREEMENT_ROWS else "") + ".", ""]
    if rows:
        lines += ["| item | field | values | rule | resolved |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {_cell(r['item_id'])} | {r['field']} | {_cell(r['values'])} | {r['rule']} | {_cell(r['resolved'])} |"
                  for r in rows[:MAX_DISAGREEMENT_ROWS]]
        lines.append("")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _write_csv(path: Path, df: pd.DataFrame) -> Path:
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)
    return path


def write_review(out_dir: str | Path, result: MergeResult, parsed: ParsedExport, agreement: pd.DataFrame,
                 *, source: str, run: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """Write the merged review into ``out_dir`` (see the module docstring); returns the paths."""
    out = Path(out_dir)
    report = review_report(result, parsed, agreement, source=source, run=run)
    return {
        "curated_items": write_items_jsonl(out / "curated_items.jsonl", result.items),
        "removed": _write_csv(out / "removed.csv", result.removed),
        "decisions": _write_csv(out / "decisions.csv", result.decisions),
        "disagreements": _write_csv(out / "disagreements.csv", result.disagreements),
        "agreement": _write_csv(out / "agreement.csv", agreement),
        "issues": _write_csv(out / "issues.csv", parsed.issues_table()),
        "report_json": atomic_write_json(out / "review_report.json", report),
        "report_md": atomic_write_text(out / "review_report.md", report_markdown(report)),
    }
