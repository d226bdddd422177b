"""report.md: the tables and notes as GitHub-flavoured Markdown (plots are in report.html)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from stereoset_eval.analysis.report_layout import answer, reading_order
from stereoset_eval.analysis.report_model import Report, Table


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Table) -> str:
    lines = [
        f"**{_cell(table.title)}**",
        "",
        "| " + " | ".join(_cell(c) for c in table.columns) + " |",
        "|" + "|".join("---" for _ in table.columns) + "|",
    ]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
    lines += [""] + [f"_{_cell(n)}_" for n in table.notes]
    return "\n".join(lines).rstrip() + "\n"


def _columns_note(path: str) -> str:
    """What of a multilingual StereoSet table is read: its English columns only (the loader's mapping)."""
    if "ptbr" not in Path(path).name:
        return ""
    from stereoset_eval.curation.loaders.stereoset_table import DEFAULT_COLUMNS

    cols = ", ".join(f"`{c}`" for c in DEFAULT_COLUMNS.values())
    return f" — only its English columns are read ({cols}); the Portuguese ones are not used"


def provenance_lines(prov: Mapping[str, Any]) -> list[str]:
    tool = prov.get("tool", {})
    model = prov.get("model", {})
    lines = [
        f"- tool: {tool.get('name', 'stereoset-eval')} {tool.get('version', '?')} (git {tool.get('git_commit') or 'n/a'})",
        f"- model: {model.get('id') or 'n/a'} (revision {model.get('revision') or 'n/a'}); method: {prov.get('method') or 'n/a'}",
    ]
    for f in list(prov.get("data_files", [])) + list(prov.get("score_files", [])):
        lines.append(f"- file: `{f['path']}` sha256 `{f['sha256']}`{_columns_note(str(f['path']))}")
    lines.append(f"- options: `{json.dumps(prov.get('options', {}), sort_keys=True, ensure_ascii=False)}`")
    libs = prov.get("libraries", {})
    lines.append("- libraries: " + ", ".join(f"{k} {v}" for k, v in sorted(libs.items()) if v))
    lines.append(f"- timestamp: {prov.get('timestamp', 'n/a')}")
    return lines


def render_markdown(report: Report) -> str:
    """The report in reading order (:mod:`stereoset_eval.analysis.report_layout`): title, the
    answer, the sections (findings first, bookkeeping last), provenance at the end."""
    out = [f"# {report.title}", ""]
    said = answer(report)
    if said:
        out += [f"**{said}**", ""]
    for section in reading_order(report.sections):
        out += [f"## {section.title}", ""]
        out += [markdown_table(t) for t in section.tables]
        out += [f"_{n}_\n" for n in section.notes]
        if section.figures:
            out.append(f"_Plots ({len(section.figures)}) are embedded in report.html._\n")
    out += ["## Provenance", "", *provenance_lines(report.provenance), ""]
    return "\n".join(out).rstrip() + "\n"
