"""report.html: one self-contained page (inline CSS, plots embedded as base64 PNG, no scripts).

Made for reading: a table of contents, numbers right-aligned (with their column's heading), text
left-aligned, a missing value (the dash) centred, the
provenance rendered (Markdown code spans become ``<code>``, the options a table), and — when the
report has overview sections (a study) — every per-model detail section folded in a
``<details>`` element, so the page opens on the tables people compare.
"""

from __future__ import annotations

import base64
import html
import json
import re
from typing import Any, Mapping

from stereoset_eval.analysis.report_markdown import provenance_lines
from stereoset_eval.analysis.report_model import Figure, Report, Table

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0 1.2em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
td.num,th.num{text-align:right}td.num{font-variant-numeric:tabular-nums;white-space:nowrap}td.missing{text-align:center;color:#777}
th{background:#f2f2f2}caption{font-weight:600;text-align:left;padding:.3em 0}
.note{color:#555;font-size:.9em}figure{display:inline-block;vertical-align:top;margin:1em 1.5em 1em 0}figcaption{color:#555;font-size:.9em}img{max-width:100%}
pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.8em}code{background:#f3f3f3;padding:0 .2em}
nav.toc{background:#fafafa;border:1px solid #ddd;padding:.4em 1.2em;margin:1em 0}nav.toc ul{margin:.3em 0}
details.section{border-top:1px solid #ddd;padding:.3em 0}details.section>summary{cursor:pointer;font-size:1.2em;font-weight:600}
.limited{background:#fff3cd;border:1px solid #e0c36a;padding:.5em .8em;font-weight:600}
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


def _cell(value: object) -> str:
    text = str(value)
    css = cell_class(text)
    attr = "" if css == "text" else f' class="{css}"'
    return f"<td{attr}>{_code_spans(text)}</td>"


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
    return (
        f"<table><caption>{_e(table.title)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}"
    )


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


#: first part of the keys of per-job sections (a study's ``detail/…``, a report's per-model sections)
DETAIL_KINDS: frozenset[str] = frozenset({"detail", "crows", "balanced", "pair-ss", "distribution"})


def is_detail(key: str) -> bool:
    """Per-job sections (``detail/…``, ``stereoset-official/<model>``, ``crows/<benchmark>/<model>`` …)."""
    kind = key.split("/", 1)[0]
    return "/" in key and (kind in DETAIL_KINDS or kind.startswith("stereoset-"))


def _anchor(key: str) -> str:
    """The section's id: its key (HTML ids may hold any character but whitespace)."""
    return _e(re.sub(r"\s+", "_", key))


def render_html(report: Report) -> str:
    lines = [line for line in provenance_lines(report.provenance) if not line.startswith("- options:")]
    prov_items = "".join(f"<li>{_code_spans(line[2:])}</li>" for line in lines)
    prov_json = _e(json.dumps(report.provenance, indent=2, sort_keys=True, ensure_ascii=False))
    options = report.provenance.get("options") if isinstance(report.provenance, Mapping) else None
    fold = any(not is_detail(s.key) for s in report.sections)  # a study: overview open, details folded
    toc = "".join(
        f'<li><a href="#{_anchor(s.key)}">{_e(s.title)}</a></li>' for s in report.sections if not (fold and is_detail(s.key))
    )
    details = [s for s in report.sections if fold and is_detail(s.key)]
    if details:
        toc += f'<li><a href="#details">Details ({len(details)} sections, folded)</a></li>'
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(report.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(report.title)}</h1>",
    ]
    limit = options.get("limit") if isinstance(options, Mapping) else None
    if "LIMITED RUN" in report.title.upper() or limit:
        n = f"first {limit}" if limit else "the first N"
        parts.append(f'<p class="limited">LIMITED RUN ({n} items of each benchmark): a quick look, not a result.</p>')
    parts += [
        f'<nav class="toc"><strong>Contents</strong><ul><li><a href="#provenance">Provenance</a></li>{toc}</ul></nav>',
        f'<section id="provenance"><h2>Provenance</h2><ul>{prov_items}</ul>{_options_table(options or {})}'
        f"<details><summary>full provenance (JSON)</summary><pre>{prov_json}</pre></details></section>",
    ]
    def render(section) -> str:
        body = [html_table(t) for t in section.tables]
        body += [html_figure(f) for f in section.figures]
        body += [f'<p class="note">{_code_spans(n)}</p>' for n in section.notes]
        if fold and is_detail(section.key):
            return (f'<details class="section" id="{_anchor(section.key)}"><summary>{_e(section.title)}</summary>'
                    + "".join(body) + "</details>")
        return f'<section id="{_anchor(section.key)}"><h2>{_e(section.title)}</h2>' + "".join(body) + "</section>"

    parts += [render(s) for s in report.sections if not (fold and is_detail(s.key))]
    if details:
        parts.append('<h2 id="details">Details</h2>')
        parts += [render(s) for s in details]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
