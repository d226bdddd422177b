"""report.html: one self-contained page (inline CSS, plots embedded as compressed base64 PNG, no scripts).

Made for reading, results first (:mod:`stereoset_eval.analysis.report_layout`): the title, the
one-paragraph answer, a one-line table of contents, then the leaderboard and the paper's tables
open; per-job details, error flags, the study overview and the provenance folded in
``<details>`` elements at the end. Numbers right-aligned (with their column's heading; a value and
its interval may wrap apart, so a table of many intervals fits the page), text left-aligned, a missing value (the
dash) centred, Markdown code spans rendered as ``<code>``, the options a table.
"""

from __future__ import annotations

import base64
import html
import json
import re
from typing import Any, Mapping

from stereoset_eval.analysis.report_layout import (  # noqa: F401 - DETAIL_KINDS, is_detail: re-exported
    DETAIL_KINDS, FINDINGS, answer, contents, is_back_matter, is_detail, kind, reading_order,
)
from stereoset_eval.analysis.report_markdown import provenance_lines
from stereoset_eval.analysis.report_model import Figure, Report, Section, Table

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:1.2em auto;padding:0 1em;color:#222;line-height:1.35}
h1{font-size:1.5em;margin:.3em 0}h2{font-size:1.25em;margin:1.2em 0 .3em}
.wrap{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:.4em 0 1em;font-size:.9em}th,td{border:1px solid #ccc;padding:.2em .45em;text-align:left}
td.num,th.num{text-align:right}td.num i{font-style:normal;display:inline-block}td.num{font-variant-numeric:tabular-nums}td.missing{text-align:center;color:#777}
th{background:#f2f2f2}caption{font-weight:600;text-align:left;padding:.3em 0}
.note{color:#555;font-size:.9em}figure{display:inline-block;vertical-align:top;margin:1em 1.5em 1em 0}figcaption{color:#555;font-size:.9em}img{max-width:100%;height:auto}
pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.8em}pre.json{white-space:pre-wrap;word-break:break-all}code{background:#f3f3f3;padding:0 .2em}
.answer{font-size:1.05em;background:#eef4fb;border-left:4px solid #4C72B0;padding:.6em .9em;margin:.6em 0}
nav.toc{font-size:.9em;color:#555;margin:.4em 0 .8em}
details.section{border-top:1px solid #ddd;padding:.3em 0}details.section>summary{cursor:pointer;font-size:1.05em;font-weight:600}
.limited{background:#fff3cd;border:1px solid #e0c36a;padding:.4em .8em;font-weight:600;margin:.4em 0}
@page{size:A4 landscape;margin:12mm}
@media print{body{max-width:none;margin:0;padding:0;font-size:10pt}.wrap{overflow:visible}figure{break-inside:avoid}}
"""
#: a cell that holds a number, a number with its interval, or a percentage
NUMBER = re.compile(r"^[-+−]?(\d[\d,]*\.?\d*|\.\d+)(e[-+]?\d+)?%?( \[[^\]]*\])?( \([^)]*\))?$|^[-+−]?inf$|^nan$")
#: a missing value: the dash the tables write (en dash, em dash or hyphen) or nothing
MISSING = frozenset({"–", "—", "-", ""})


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _code_spans(text: str) -> str:
    """Escaped ``text`` with Markdown code spans (`x`) rendered as <code>x</code>."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick: show it as it is
        return _e(text)
    return "".join(f"<code>{_e(p)}</code>" if i % 2 else _e(p) for i, p in enumerate(parts))


def cell_class(text: str) -> str:
    """``num`` (right-aligned), ``missing`` (centred) or ``text`` (left-aligned)."""
    t = text.strip()
    return "missing" if t in MISSING else "num" if NUMBER.match(t) else "text"


def _number(text: str) -> str:
    """A number cell: its interval in an inline block (``<i>``, styled upright), so a narrow
    column wraps between the value and its interval (``58.42`` / ``[49.47, 66.49]``) first and
    inside the interval only when even that does not fit."""
    head, sep, tail = text.partition(" [")
    return f"{_e(head)} <i>[{_e(tail)}</i>" if sep else _e(text)


def _cell(value: object) -> str:
    text = str(value)
    css = cell_class(text)
    attr = "" if css == "text" else f' class="{css}"'
    return f"<td{attr}>{_number(text) if css == 'num' else _code_spans(text)}</td>"


def _numeric_columns(table: Table) -> set[int]:
    """Columns whose every cell is a number or missing (and at least one a number): right-aligned headings."""
    out = set()
    for i in range(len(table.columns)):
        kinds = {cell_class(str(row[i])) for row in table.rows}
        if "num" in kinds and kinds <= {"num", "missing"}:
            out.add(i)
    return out


def html_table(table: Table) -> str:
    numeric = _numeric_columns(table)
    head = "".join(f'<th class="num">{_e(c)}</th>' if i in numeric else f"<th>{_e(c)}</th>"
                   for i, c in enumerate(table.columns))
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in table.rows)
    notes = "".join(f'<p class="note">{_code_spans(n)}</p>' for n in table.notes)
    return (f'<div class="wrap"><table><caption>{_e(table.title)}</caption><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>{notes}")


def html_figure(fig: Figure) -> str:
    data = base64.b64encode(fig.png).decode("ascii")
    caption = _e(fig.caption or fig.title)
    return f'<figure><img src="data:image/png;base64,{data}" alt="{_e(fig.alt)}"><figcaption>{caption}</figcaption></figure>'


def _flat_options(options: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``{"analysis": {"seed": 0}}`` -> ``[("analysis.seed", 0)]``: one row per setting, nested tables dotted."""
    rows: list[tuple[str, Any]] = []
    for k, v in sorted(options.items()):
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and v:
            rows += _flat_options(v, f"{key}.")
        else:
            rows.append((key, v))
    return rows


def _options_table(options: Mapping[str, Any]) -> str:
    """The options as a two-column table, one row per setting (nested settings dotted, lists as
    compact JSON) instead of one JSON blob."""
    if not options:
        return ""
    rows = "".join(
        f"<tr><td><code>{_e(k)}</code></td><td><code>{_e(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))}</code></td></tr>"
        for k, v in _flat_options(options)
    )
    n = len(_flat_options(options))
    return (f"<details><summary>options ({n} settings)</summary><table><thead><tr><th>option</th><th>value</th></tr>"
            f"</thead><tbody>{rows}</tbody></table></details>")


def _anchor(key: str) -> str:
    """The section's id: its key (HTML ids may hold any character but whitespace)."""
    return _e(re.sub(r"\s+", "_", key))


def _render_section(section: Section, *, folded: bool) -> str:
    body = [html_table(t) for t in section.tables]
    body += [html_figure(f) for f in section.figures]
    body += [f'<p class="note">{_code_spans(n)}</p>' for n in section.notes]
    if folded:
        return (f'<details class="section" id="{_anchor(section.key)}"><summary>{_e(section.title)}</summary>'
                + "".join(body) + "</details>")
    return f'<section id="{_anchor(section.key)}"><h2>{_e(section.title)}</h2>' + "".join(body) + "</section>"


#: where the provenance this page summarises is written in full
FULL_PROVENANCE = ("The full provenance (every scoring job's model, data files, method options and run "
                   "settings) is the <code>provenance</code> object of report.json, written beside this page.")


def _provenance(report: Report) -> str:
    """The provenance, folded: the summary list and every option (one row each). The full object
    (per-job provenance, ~60 KB for a small study) is report.json's, not repeated here."""
    lines = [line for line in provenance_lines(report.provenance) if not line.startswith("- options:")]
    items = "".join(f"<li>{_code_spans(line[2:])}</li>" for line in lines)
    options = report.provenance.get("options") if isinstance(report.provenance, Mapping) else None
    return (f'<section id="provenance"><details class="section"><summary>Provenance</summary><ul>{items}</ul>'
            f'{_options_table(options or {})}<p class="note">{FULL_PROVENANCE}</p></details></section>')


#: headings of the folded groups after the findings, by layout group
GROUP_TITLES: dict[str, str] = {"details": "Per-job details", "flags": "Error flags",
                                "overview": "Models, benchmarks and scoring jobs"}


def render_html(report: Report) -> str:
    """The page in reading order (:mod:`stereoset_eval.analysis.report_layout`): title, the answer,
    the findings open, then per-job details, error flags, the study overview and provenance folded.
    A report without a study's findings (one model: its headline results and details) shows every
    section open."""
    options = report.provenance.get("options") if isinstance(report.provenance, Mapping) else None
    study = any(kind(s.key) in FINDINGS for s in report.sections)
    ordered = reading_order(report.sections)
    findings = [s for s in ordered if not (study and (is_detail(s.key) or is_back_matter(s.key)))]
    groups = {name: [s for s in ordered if s not in findings and
                     (kind(s.key) == name if name != "details" else is_detail(s.key) and not is_back_matter(s.key))]
              for name in GROUP_TITLES}
    links = [(label, key) for label, key in contents(findings)]
    links += [(GROUP_TITLES[g], f"group-{g}") for g, secs in groups.items() if secs]
    links.append(("Provenance", "provenance"))
    toc = " · ".join(f'<a href="#{_anchor(key)}">{_e(label)}</a>' for label, key in links)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(report.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(report.title)}</h1>",
    ]
    limit = options.get("limit") if isinstance(options, Mapping) else None
    if "LIMITED RUN" in report.title.upper() or limit:
        n = f"first {limit}" if limit else "the first N"
        parts.append(f'<p class="limited">LIMITED RUN ({n} items of each benchmark): a quick look, not a result.</p>')
    said = answer(report)
    if said:
        parts.append(f'<p class="answer" id="answer">{_e(said)}</p>')
    parts.append(f'<nav class="toc">{toc}</nav>')
    parts += [_render_section(s, folded=False) for s in findings]
    for name, secs in groups.items():
        if secs:
            parts.append(f'<h2 id="group-{name}">{_e(GROUP_TITLES[name])}</h2>')
            parts += [_render_section(s, folded=True) for s in secs]
    parts.append(_provenance(report))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
