"""report.html: one self-contained page (inline CSS, plots embedded as base64 PNG, no scripts)."""

from __future__ import annotations

import base64
import html
import json

from stereoset_eval.analysis.report_markdown import provenance_lines
from stereoset_eval.analysis.report_model import Figure, Report, Table

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0 1.2em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}caption{font-weight:600;text-align:left;padding:.3em 0}
.note{color:#555;font-size:.9em}figure{margin:1em 0}figcaption{color:#555;font-size:.9em}
pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.8em}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def html_table(table: Table) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in table.rows)
    notes = "".join(f'<p class="note">{_e(n)}</p>' for n in table.notes)
    return (
        f"<table><caption>{_e(table.title)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}"
    )


def html_figure(fig: Figure) -> str:
    data = base64.b64encode(fig.png).decode("ascii")
    caption = _e(fig.caption or fig.title)
    return f'<figure><img src="data:image/png;base64,{data}" alt="{_e(fig.alt)}"><figcaption>{caption}</figcaption></figure>'


def render_html(report: Report) -> str:
    prov_items = "".join(f"<li>{_e(line[2:])}</li>" for line in provenance_lines(report.provenance))
    prov_json = _e(json.dumps(report.provenance, indent=2, sort_keys=True, ensure_ascii=False))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(report.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(report.title)}</h1>",
        f'<section id="provenance"><h2>Provenance</h2><ul>{prov_items}</ul>'
        f"<details><summary>full provenance (JSON)</summary><pre>{prov_json}</pre></details></section>",
    ]
    for section in report.sections:
        parts.append(f'<section id="{_e(section.key)}"><h2>{_e(section.title)}</h2>')
        parts += [html_table(t) for t in section.tables]
        parts += [html_figure(f) for f in section.figures]
        parts += [f'<p class="note">{_e(n)}</p>' for n in section.notes]
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
