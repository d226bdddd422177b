"""The headline results of a report as flat rows: an lm-eval-style terminal table and ``results.json``.

Read from the report's data model (``Report.to_dict()`` or a parsed ``report.json``), never
re-computed: one row per (model, method, benchmark, metric) with its value, CI, n and ideal —
StereoSet lms / ss / icat per task (intrasentence, intersentence) and their combination when
reported, the CrowS-Pairs metric, and pair ss / balanced ss of curated pairs. The published
StereoSet dev numbers (Nadeem et al. 2021, ``data/bundled/stereoset_dev_scores_nadeem2021.json``)
are shown beside ours when the model id, the official method and the full dev split match.
A limited run (``--limit``) is marked in the table title and in every row.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable, Mapping, Sequence

#: StereoSet scopes shown, in order, and their benchmark label
STEREOSET_SCOPES: dict[str, str] = {
    "intrasentence/overall": "intrasentence",
    "intersentence/overall": "intersentence",
    "overall": "intra+inter overall",
}
STEREOSET_METRICS: tuple[str, ...] = ("lms", "ss", "icat")
#: methods that follow StereoSet's own code, per task (the published numbers are theirs)
OFFICIAL_METHODS: dict[str, frozenset[str]] = {
    "intrasentence": frozenset({"stereoset-mlm", "stereoset-causal"}),
    "intersentence": frozenset({"stereoset-nsp", "stereoset-inter-causal"}),
}
REFERENCE_FILE = "bundled/stereoset_dev_scores_nadeem2021.json"
REFERENCE_KEYS = {"lms": "LM Score", "ss": "SS Score", "icat": "ICAT Score"}
STEREOSET_DEV_EXAMPLES = {"intrasentence": 2106, "intersentence": 2123}


@dataclass(frozen=True)
class ResultRow:
    """One headline number of one model (a row of ``results.json``)."""

    model: str
    method: str | None
    benchmark: str
    metric: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    ideal: float | None
    limit: int | None = None
    reference: float | None = None
    reference_source: str | None = None


@lru_cache(maxsize=1)
def reference_scores() -> dict[str, Any]:
    """The official StereoSet dev scores per model (empty when the file is not installed)."""
    path = resources.files("stereoset_eval.data").joinpath(REFERENCE_FILE)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, OSError):
        return {}


def report_limit(report: Mapping[str, Any]) -> int | None:
    """``--limit`` of the run behind a report (study options, or the score file's command)."""
    prov = report.get("provenance") or {}
    limit = (prov.get("options") or {}).get("limit")
    if limit is None:
        command = (prov.get("scores_provenance") or {}).get("command") or {}
        limit = command.get("limit") if isinstance(command, Mapping) else None
    return int(limit) if limit else None


def _model_ids(report: Mapping[str, Any]) -> dict[str, str]:
    """Model name -> model id (a study names models; a one-model report uses the id)."""
    prov = report.get("provenance") or {}
    models = (prov.get("extra") or {}).get("models") or []
    return {m["name"]: m["id"] for m in models if isinstance(m, Mapping) and "name" in m and "id" in m}


def _who(section: Mapping[str, Any], report: Mapping[str, Any]) -> tuple[str, str | None]:
    """(model, method) of a section: ``model · method`` in a study, the provenance's method otherwise."""
    label = str(section["data"].get("model", ""))
    if " · " in label:
        model, method = label.rsplit(" · ", 1)
        return model, method
    prov_method = (report.get("provenance") or {}).get("method")
    return label, str(prov_method) if prov_method else None


def _bench_name(section: Mapping[str, Any], default: str) -> str:
    key = str(section.get("key", ""))
    return key.split("/")[1] if key.startswith("detail/") and key.count("/") >= 3 else default


def _metric_row(model: str, method: str | None, benchmark: str, metric: str, m: Mapping[str, Any],
                limit: int | None) -> ResultRow:
    ci = m.get("ci") or {}
    return ResultRow(model=model, method=method, benchmark=benchmark, metric=metric, value=m.get("value"),
                     ci_low=ci.get("low"), ci_high=ci.get("high"), n=m.get("n"), ideal=m.get("ideal"), limit=limit)


def _reference(model_id: str, method: str | None, task: str, metric: str, n: int | None,
               variant: str) -> float | None:
    """The published number for this model, task (``overall``: both) and metric; None unless all match."""
    ref = reference_scores().get(model_id)
    tasks = tuple(OFFICIAL_METHODS) if task == "overall" else (task,)
    if ref is None or variant != "official" or any(t not in OFFICIAL_METHODS for t in tasks):
        return None
    if n != sum(STEREOSET_DEV_EXAMPLES[t] for t in tasks):  # the full dev split only
        return None
    used = set((method or "").split(", "))
    if not all(used & OFFICIAL_METHODS[t] for t in tasks):
        return None
    block = ref.get("overall") if task == "overall" else (ref.get(task) or {}).get("overall")
    value = (block or {}).get(REFERENCE_KEYS[metric])
    return float(value) if value is not None else None


def _task_method(report: Mapping[str, Any], task: str) -> str | None:
    """The method that scored ``task`` in a one-model report on ``stereoset-eval score`` output."""
    runs = ((report.get("provenance") or {}).get("scores_provenance") or {}).get("runs") or {}
    method = (runs.get(task) or {}).get("method") if isinstance(runs, Mapping) else None
    name = method.get("name") if isinstance(method, Mapping) else None
    return str(name) if name else None


def _stereoset_rows(section, report, limit, ids) -> list[ResultRow]:
    data = section["data"]
    model, method = _who(section, report)
    bench = _bench_name(section, "StereoSet")
    variant = data.get("variant", "official")
    suffix = "" if variant == "official" else f" ({variant})"
    scopes = data.get("scopes") or {}
    both_tasks = all(f"{t}/overall" in scopes for t in OFFICIAL_METHODS)
    rows = []
    for scope, label in STEREOSET_SCOPES.items():
        s = scopes.get(scope)
        if not s or (scope == "overall" and not both_tasks):  # one task only: "overall" is that task
            continue
        task = scope.split("/")[0]
        task_method = _task_method(report, task) or method
        for metric in STEREOSET_METRICS:
            if metric not in s:
                continue
            row = _metric_row(model, task_method, f"{bench} {label}{suffix}", metric, s[metric], limit)
            ref = None if limit else _reference(ids.get(model, model), task_method, task, metric, row.n, variant)
            if ref is not None:
                row = ResultRow(**{**asdict(row), "reference": ref, "reference_source": "Nadeem et al. 2021 (dev)"})
            rows.append(row)
    return rows


def result_rows(report: Mapping[str, Any], *, limit: int | None = None) -> list[ResultRow]:
    """Every headline number of ``report`` (a ``Report.to_dict()`` or parsed report.json).

    Args:
        limit: the run's ``--limit`` (default: read from the report's provenance).
    """
    limit = limit if limit is not None else report_limit(report)
    ids = _model_ids(report)
    rows: list[ResultRow] = []
    for section in report.get("sections", []):
        data = section.get("data") or {}
        if "scopes" in data and "variant" in data:
            rows += _stereoset_rows(section, report, limit, ids)
        elif "metric" in data and "summary" in data:
            model, method = _who(section, report)
            rows.append(_metric_row(model, method, str(data.get("benchmark", "CrowS-Pairs")), "metric score",
                                    data["metric"], limit))
        elif "balanced" in data and "unbalanced" in data:
            model, method = _who(section, report)
            bench = str(data.get("benchmark", "pairs"))
            rows.append(_metric_row(model, method, bench, "pair ss", data["unbalanced"], limit))
            rows.append(_metric_row(model, method, bench, f"balanced ss ({data.get('group_by', 'group')})",
                                    data["balanced"], limit))
        elif "pair_ss" in data:
            model, method = _who(section, report)
            rows.append(_metric_row(model, method, str(data.get("benchmark", "pairs")), "pair ss", data["pair_ss"],
                                    limit))
    return _unique(rows)


def _unique(rows: Iterable[ResultRow]) -> list[ResultRow]:
    """Drop repeats (a one-model report lists pair ss in both its pair and balanced sections)."""
    seen, out = set(), []
    for r in rows:
        key = (r.model, r.method, r.benchmark, r.metric)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def results_json(rows: Sequence[ResultRow]) -> str:
    """``results.json``: a flat list of rows (model, benchmark, metric, value, ci_low, ci_high, n, ideal …)."""
    return json.dumps([asdict(r) for r in rows], indent=2, ensure_ascii=False) + "\n"


def table_title(title: str, limit: int | None) -> str:
    """A table title, marked when the run scored only the first ``limit`` items."""
    return f"LIMITED RUN (first {limit} items per benchmark, not a result) — {title}" if limit else title


def _cell(r: ResultRow | None) -> str:
    if r is None or r.value is None:
        return "–"
    return f"{r.value:.2f}" + ("" if r.ci_low is None else f" [{r.ci_low:.2f}, {r.ci_high:.2f}]")


#: terminal columns: heading -> metric names that fill it (CrowS-Pairs' metric and pair ss are ss-like)
COLUMNS: dict[str, tuple[str, ...]] = {
    "ss / metric (ideal 50)": ("ss", "metric score", "pair ss"),
    "lms (ideal 100)": ("lms",),
    "icat (ideal 100)": ("icat",),
    "balanced ss (ideal 50)": ("balanced ss",),
}


def _column(metric: str) -> str | None:
    base = metric.split(" (")[0]
    return next((c for c, names in COLUMNS.items() if base in names), None)


def format_table(rows: Sequence[ResultRow], *, title: str = "Results", limit: int | None = None) -> str:
    """The rows as a Markdown pipe table (lm-eval style): one line per model, method and benchmark."""
    limit = limit if limit is not None else next((r.limit for r in rows if r.limit), None)
    groups: dict[tuple[str, str | None, str], dict[str, ResultRow]] = {}
    for r in rows:
        col = _column(r.metric)
        if col is not None:
            groups.setdefault((r.model, r.method, r.benchmark), {})[col] = r
    used = [c for c in COLUMNS if any(c in g for g in groups.values())]
    show_ref = any(r.reference is not None for r in rows)
    header = ["model", "method", "benchmark", "n"] + used + (["published ss · lms · icat"] if show_ref else [])
    body = []
    for (model, method, bench), cells in groups.items():
        n = next((r.n for r in cells.values() if r.n is not None), None)
        shown = model.rstrip("/").rsplit("/", 1)[-1] if model.startswith(("/", ".", "~")) else model  # a folder
        line = [shown, method or "–", bench, "–" if n is None else str(n)] + [_cell(cells.get(c)) for c in used]
        if show_ref:
            refs = [cells.get(c) for c in ("ss / metric (ideal 50)", "lms (ideal 100)", "icat (ideal 100)")]
            line.append(" · ".join(f"{r.reference:.2f}" for r in refs if r is not None and r.reference is not None)
                        or "–")
        body.append(line)
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(header)]
    left = {"model", "method", "benchmark"}

    def fmt(cells: Sequence[str]) -> str:
        return "|" + "|".join(f" {c.ljust(w) if h in left else c.rjust(w)} " for c, w, h in zip(cells, widths, header)) + "|"

    rule = "|" + "|".join("-" * (w + 2) if h in left else "-" * (w + 1) + ":" for w, h in zip(widths, header)) + "|"
    out = [table_title(title, limit), "", fmt(header), rule] + [fmt(b) for b in body]
    if not body:
        out.append("(no results)")
    notes = ["values in percent with 95% bootstrap CIs; CrowS-Pairs: metric.py's metric score; curated pairs: pair ss"]
    if show_ref:
        notes.append("published: official StereoSet dev scores (Nadeem et al. 2021, evaluation.py) for the same "
                     "model id and method on the full dev split")
    return "\n".join(out + [""] + notes)


def mark_limited(report: Any, limit: int | None) -> Any:
    """A copy of a :class:`~stereoset_eval.analysis.report_model.Report` whose every table title says LIMITED RUN."""
    if not limit:
        return report
    import dataclasses

    sections = tuple(
        dataclasses.replace(s, tables=tuple(dataclasses.replace(t, title=table_title(t.title, limit)) for t in s.tables))
        for s in report.sections
    )
    return dataclasses.replace(report, title=table_title(report.title, limit), sections=sections)


#: methods that are a benchmark's own reference scoring code (preferred for the leaderboard)
OWN_METHODS: frozenset[str] = frozenset({"stereoset-mlm", "stereoset-causal", "crows-nangia"})
#: metrics that are a stereotype score (ideal 50), as the leaderboard labels them
SS_LIKE: dict[str, str] = {"ss": "ss", "metric score": "metric", "pair ss": "pair ss"}
#: StereoSet scopes in order of preference for the leaderboard's one StereoSet column
STEREOSET_PREFERENCE: tuple[str, ...] = ("intra+inter overall", "intrasentence", "intersentence")


@dataclass(frozen=True)
class LeaderRow:
    """One model on the leaderboard: its headline numbers, mean distance from 50 and rank."""

    model: str
    cells: Mapping[str, ResultRow]
    bias: float | None  # mean |ss - 50| over the ss-like columns (None when a column is missing)
    rank: int | None


def _own_first(rows: Sequence[ResultRow]) -> ResultRow:
    """The row scored by the benchmark's own code if there is one, else the first."""
    return next((r for r in rows if set((r.method or "").split(", ")) & OWN_METHODS), rows[0])


def leaderboard(rows: Sequence[ResultRow]) -> tuple[list[str], list[LeaderRow]]:
    """(columns, one row per model): each benchmark's headline score, StereoSet icat, and the rank.

    Per model and benchmark the headline (StereoSet: ss and icat of intra+inter overall, else
    intrasentence; CrowS-Pairs: metric.py's metric; curated pairs: pair ss) of the benchmark's own
    scoring method where the model has it, else of its first method. Rank: by the mean distance
    of the ss-like columns from the ideal 50 (smaller = less stereotyped; equal distances at two
    decimals share a rank), among the models that have every column. The official StereoSet
    leaderboard ranks by icat, which is shown beside it.
    """
    stereo = [r for r in rows if r.benchmark.startswith("StereoSet ") and not r.benchmark.endswith(")")]
    scope = next((s for s in STEREOSET_PREFERENCE if any(r.benchmark == f"StereoSet {s}" for r in stereo)), None)
    picked: dict[str, dict[str, list[ResultRow]]] = {}
    for r in rows:
        if r.value is None:
            continue
        if r.benchmark.startswith("StereoSet "):
            if scope is None or r.benchmark != f"StereoSet {scope}" or r.metric not in ("ss", "icat"):
                continue
            col = f"StereoSet {r.metric}"
        elif r.metric in SS_LIKE:
            col = f"{r.benchmark} {SS_LIKE[r.metric]}"
        else:
            continue
        picked.setdefault(r.model, {}).setdefault(col, []).append(r)
    columns = list(dict.fromkeys(c for per in picked.values() for c in per))
    ss_cols = [c for c in columns if not c.endswith(" icat")]
    out = []
    for model, per in picked.items():
        cells = {c: _own_first(rs) for c, rs in per.items()}
        values = [cells[c].value for c in ss_cols if c in cells]
        bias = (sum(abs(v - 50.0) for v in values if v is not None) / len(values)
                if len(values) == len(ss_cols) and values else None)
        out.append(LeaderRow(model, cells, bias, None))
    ranked = sorted({round(r.bias, 2) for r in out if r.bias is not None})
    ranks = {}
    for b in ranked:  # competition ranking: 1, 2, 2, 4
        ranks[b] = 1 + sum(1 for r in out if r.bias is not None and round(r.bias, 2) < b)
    out = [LeaderRow(r.model, r.cells, r.bias, ranks.get(round(r.bias, 2)) if r.bias is not None else None)
           for r in out]
    out.sort(key=lambda r: (r.rank is None, r.rank or 0, r.model))
    return columns, out


LEADERBOARD_NOTE = ("rank: by the mean distance of the ss columns from the ideal 50 (smaller = less stereotyped), "
                    "among models with every column; per benchmark the method of its own reference code where "
                    "the model has it, else its first method; StereoSet's official leaderboard ranks by icat. A rank ignores "
                    "the intervals: where they overlap, the order is not established")


def leaderboard_table(rows: Sequence[ResultRow]) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The leaderboard as (header, rows) of display strings (shared by the terminal and the report)."""
    columns, board = leaderboard(rows)
    header = ("rank", "model", *columns, "mean distance from 50")
    body = tuple(
        ("–" if r.rank is None else str(r.rank), _shown(r.model), *(_cell(r.cells.get(c)) for c in columns),
         "–" if r.bias is None else f"{r.bias:.2f}")
        for r in board
    )
    return header, body


def _shown(model: str) -> str:
    """A local folder by its last part, a hub id as it is."""
    return model.rstrip("/").rsplit("/", 1)[-1] if model.startswith(("/", ".", "~")) else model


def format_leaderboard(rows: Sequence[ResultRow], *, limit: int | None = None) -> str:
    """The leaderboard as a Markdown pipe table ('' for fewer than two models)."""
    header, body = leaderboard_table(rows)
    if len(body) < 2:
        return ""
    limit = limit if limit is not None else next((r.limit for r in rows if r.limit), None)
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "|" + "|".join(f" {c.ljust(w) if i == 1 else c.rjust(w)} " for i, (c, w) in
                              enumerate(zip(cells, widths))) + "|"

    rule = "|" + "|".join("-" * (w + 2) if i == 1 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return "\n".join([table_title("Leaderboard", limit), "", line(header), rule, *(line(b) for b in body), "",
                      LEADERBOARD_NOTE])
