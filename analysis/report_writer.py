"""Write a report as report.json, report.md, report.html and results.json (each file atomically).

results.json (one flat row per model, benchmark and metric) is written with the report, so a
run that swaps its output folder in whole carries it in the same set.
"""

from __future__ import annotations

from pathlib import Path

from stereoset_eval.analysis.report_html import render_html
from stereoset_eval.analysis.report_json import report_to_json
from stereoset_eval.analysis.report_markdown import render_markdown
from stereoset_eval.analysis.report_model import Report
from stereoset_eval.analysis.results_table import result_rows, results_json
from stereoset_eval.foundation.atomic import atomic_write_text

FILES: dict[str, str] = {"json": "report.json", "markdown": "report.md", "html": "report.html"}
RESULTS_FILE = "results.json"


def write_report(report: Report, out_dir: str | Path) -> dict[str, Path]:
    """Render ``report`` into ``out_dir``; returns the written paths by kind."""
    out = Path(out_dir)
    text = report_to_json(report)
    written = {
        "json": atomic_write_text(out / FILES["json"], text),
        "markdown": atomic_write_text(out / FILES["markdown"], render_markdown(report)),
        "html": atomic_write_text(out / FILES["html"], render_html(report)),
    }
    return {**written, "results": atomic_write_text(out / RESULTS_FILE, results_json(result_rows(report)))}
