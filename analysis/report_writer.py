"""Write a report as report.json, report.md and report.html (each file atomically)."""

from __future__ import annotations

from pathlib import Path

from stereoset_eval.analysis.report_html import render_html
from stereoset_eval.analysis.report_json import report_to_json
from stereoset_eval.analysis.report_markdown import render_markdown
from stereoset_eval.analysis.report_model import Report
from stereoset_eval.foundation.atomic import atomic_write_text

FILES: dict[str, str] = {"json": "report.json", "markdown": "report.md", "html": "report.html"}


def write_report(report: Report, out_dir: str | Path) -> dict[str, Path]:
    """Render ``report`` into ``out_dir``; returns the written paths by kind."""
    out = Path(out_dir)
    return {
        "json": atomic_write_text(out / FILES["json"], report_to_json(report)),
        "markdown": atomic_write_text(out / FILES["markdown"], render_markdown(report)),
        "html": atomic_write_text(out / FILES["html"], render_html(report)),
    }
