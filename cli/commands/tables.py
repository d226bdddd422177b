"""``stereoset-eval tables --scores per_model.csv``: Tables 4 and 6 of the BMNE paper from any per-model scores.

The BMNE paper (Zakizadeh & Pilehvar 2025) correlates two benchmarks across models: Table 4 is
Spearman ρ pre- and post-balance, Table 6 lists each model's pre/post scores with the ρ of each
stage. This command renders both from a CSV of per-model numbers, in one of two layouts:

* **wide**: a ``model`` column and ``<benchmark>_pre`` / ``<benchmark>_post`` columns (the
  paper's Table 6 as transcribed in ``shared/data/bmne/bmne_paper_table6.csv``);
* **long**: columns ``model, benchmark, value`` and optionally ``stage`` (pre/post, default
  pre), ``category`` (only ``all`` rows are used) and ``protocol`` (one table per protocol) —
  the ``study_scores.csv`` a study writes.

Every ρ comes from :func:`stereoset_eval.analysis.correlation.spearman`: scipy's p (t
approximation) and a permutation p, exact when n! ≤ ``--permutations`` (up to 7 models at the
default 10,000), Monte Carlo with ``--random-seed`` otherwise; the table says which.
"""

from __future__ import annotations

import argparse
import re
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd

from stereoset_eval.analysis.correlation import (
    BalanceTable,
    Correlation,
    CorrelationInputError,
    balance_table,
    spearman,
)
from stereoset_eval.analysis.report_markdown import markdown_table
from stereoset_eval.analysis.report_model import Table, fmt
from stereoset_eval.foundation.atomic import atomic_write_json
from stereoset_eval.foundation.errors import DataFormatError

WIDE_COLUMN = re.compile(r"^(?P<bench>.+)_(?P<stage>pre|post)$")
STAGES = ("pre", "post")
NO_PROTOCOL = "-"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tables", help="Tables 4 and 6 (Spearman across models, pre/post balance) from a "
                                      "CSV of per-model scores",
                       description="Render the BMNE paper's Tables 4 and 6 from per-model scores: wide "
                                   "(model, <bench>_pre, <bench>_post …) or long (model, benchmark, "
                                   "[stage], [category], [protocol], value, e.g. a study's study_scores.csv).")
    p.add_argument("--scores", type=Path, required=True, help="CSV of per-model scores (wide or long)")
    p.add_argument("--compare", nargs=2, action="append", metavar=("X", "Y"),
                   help="benchmark pair to correlate (repeatable; default: every pair in the file)")
    p.add_argument("--permutations", type=int, default=10000,
                   help="permutation resamples of each ρ; exact when n! ≤ this (default 10000; 0 = none)")
    p.add_argument("--random-seed", type=int, default=0,
                   help="random seed of the Monte Carlo permutations (used only when not exact; default 0)")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write every ρ and p (with options) as JSON")
    p.set_defaults(func=run)


def read_scores(path: Path) -> pd.DataFrame:
    """Long table ``protocol, model, benchmark, stage, value`` (overall scores only) from ``path``."""
    try:
        df = pd.read_csv(path, comment="#")
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataFormatError(path, f"cannot read as CSV ({exc})") from None
    if "model" not in df.columns:
        raise DataFormatError(path, f"needs a 'model' column; found {list(df.columns)}")
    wide = [c for c in df.columns if WIDE_COLUMN.match(str(c))]
    if "benchmark" in df.columns and "value" in df.columns:
        long = df.copy()
        long["stage"] = long["stage"].astype(str) if "stage" in long.columns else "pre"
        if "category" in long.columns:
            long = long[long["category"].astype(str) == "all"]
        long["protocol"] = long["protocol"].astype(str) if "protocol" in long.columns else NO_PROTOCOL
        bad = sorted(set(long["stage"]) - set(STAGES))
        if bad:
            raise DataFormatError(path, f"unknown stage(s) {bad}; expected pre or post", field="stage")
    elif wide:
        long = df.melt(id_vars=["model"], value_vars=wide, var_name="column", value_name="value")
        parts = long["column"].str.extract(WIDE_COLUMN)
        long = long.assign(benchmark=parts["bench"], stage=parts["stage"], protocol=NO_PROTOCOL)
    else:
        raise DataFormatError(path, "neither long (model, benchmark, value …) nor wide (model, <bench>_pre, "
                                    f"<bench>_post …) columns; found {list(df.columns)}")
    long = long[["protocol", "model", "benchmark", "stage", "value"]].copy()
    long["model"] = long["model"].astype(str)
    values = pd.to_numeric(long["value"], errors="coerce")
    bad_rows = long.index[values.isna()].tolist()
    if bad_rows:
        raise DataFormatError(path, f"value is not a number in {len(bad_rows)} row(s), first data row "
                                    f"{bad_rows[0] + 1}", field="value")
    long["value"] = values.astype(float)
    dup = long.duplicated(["protocol", "model", "benchmark", "stage"])
    if dup.any():
        r = long[dup].iloc[0]
        raise DataFormatError(path, f"more than one {r.stage} value for model {r.model!r} on {r.benchmark!r}"
                                    + ("" if r.protocol == NO_PROTOCOL else f" (protocol {r.protocol!r})"))
    return long


def _values(table: pd.DataFrame, bench: str, stage: str) -> dict[str, float]:
    rows = table[(table.benchmark == bench) & (table.stage == stage)]
    return dict(zip(rows.model, rows.value))


def _rho(x: dict[str, float], y: dict[str, float], xn: str, yn: str, opts: dict[str, Any]) -> Correlation | str:
    common = sorted(set(x) & set(y))
    only = sorted(set(x) ^ set(y))
    if only:
        return f"model(s) scored on one side only: {only[:5]}"
    try:
        return spearman([x[m] for m in common], [y[m] for m in common], labels=common, x_name=xn, y_name=yn, **opts)
    except CorrelationInputError as exc:
        return str(exc)


def _p_cells(c: Correlation | str | None) -> tuple[str, str, str]:
    if c is None:
        return "–", "–", "–"
    if isinstance(c, str):
        return "undefined", "–", "–"
    if c.permutation_p_value is None:
        perm = "–"
    else:
        kind = "exact" if c.permutation_exact else f"Monte Carlo, {c.n_permutations}, seed {c.seed}"
        perm = f"{c.permutation_p_value:.2g} ({kind})"
    return f"{c.rho:.3f}", f"{c.p_value:.2g}", perm


def build_tables(long: pd.DataFrame, *, compare: list[tuple[str, str]] | None, permutations: int,
                 random_seed: int, source: Path | None = None) -> tuple[list[Table], dict[str, Any]]:
    """Table 4 (one row per protocol and pair) and one Table 6 per protocol and balanced pair."""
    opts = {"permutations": permutations or None, "seed": random_seed}
    t4_rows, t6, notes = [], [], []
    data: dict[str, Any] = {"options": {"permutations": permutations, "random_seed": random_seed}, "protocols": {}}
    for protocol, table in long.groupby("protocol", sort=False):
        benches = list(dict.fromkeys(table.benchmark))
        pairs = [tuple(p) for p in compare] if compare else list(combinations(benches, 2))
        for x, y in pairs:
            missing = [b for b in (x, y) if b not in benches]
            if missing:
                where = "" if protocol == NO_PROTOCOL else f" in protocol {protocol!r}"
                raise DataFormatError(source, f"no scores for benchmark(s) {missing}{where}; the file has {benches}")
            cells = {s: (_rho(_values(table, x, s), _values(table, y, s), x, y, opts)
                         if _values(table, x, s) and _values(table, y, s) else None) for s in STAGES}
            n = max((c.n for c in cells.values() if isinstance(c, Correlation)), default=0)
            t4_rows.append((protocol, f"{x} vs {y}", str(n), *_p_cells(cells["pre"]), *_p_cells(cells["post"])))
            notes += [f"{protocol}, {x} vs {y}, {s}: undefined — {c}" for s, c in cells.items() if isinstance(c, str)]
            data["protocols"].setdefault(protocol, {})[f"{x} vs {y}"] = {
                s: (c.to_dict() if isinstance(c, Correlation) else {"reason": c}) for s, c in cells.items() if c}
            if all(isinstance(c, Correlation) for c in cells.values()):
                bt = _table6(table, x, y, opts)
                t6.append(_table6_view(bt, protocol))
                data["protocols"][protocol][f"{x} vs {y}"]["table6"] = bt.to_dict()
    t4 = Table("Table 4 — Spearman ρ between benchmarks across models",
               ("protocol", "benchmarks", "n models", "ρ pre", "p pre (scipy)", "perm. p pre",
                "ρ post", "p post (scipy)", "perm. p post"), tuple(t4_rows),
               notes=("p (scipy): scipy.stats.spearmanr, t approximation; perm. p: scipy.stats.permutation_test, "
                      "two-sided, exact when n! ≤ --permutations, else Monte Carlo.", *notes))
    return [t4, *t6], data


def _table6(table: pd.DataFrame, x: str, y: str, opts: dict[str, Any]) -> BalanceTable:
    cols = {"x_pre": (x, "pre"), "y_pre": (y, "pre"), "x_post": (x, "post"), "y_post": (y, "post")}
    values = {k: _values(table, *c) for k, c in cols.items()}
    models = [m for m in dict.fromkeys(table.model) if all(m in v for v in values.values())]
    wide = pd.DataFrame({"model": models, **{k: [v[m] for m in models] for k, v in values.items()}})
    return balance_table(wide, x_name=x, y_name=y, **opts)


def _table6_view(bt: BalanceTable, protocol: str) -> Table:
    x, y = bt.x_name, bt.y_name
    rows = [(str(r.model), fmt(r.x_pre), fmt(r.y_pre), fmt(r.x_post), fmt(r.y_post)) for r in bt.rows.itertuples()]
    pre, post = _p_cells(bt.pre), _p_cells(bt.post)
    rows.append(("Spearman ρ (p; perm. p)", f"{pre[0]} ({pre[1]}; {pre[2]})", "", f"{post[0]} ({post[1]}; {post[2]})", ""))
    where = "" if protocol == NO_PROTOCOL else f" (protocol {protocol})"
    return Table(f"Table 6 — {x} vs {y}, pre/post balance per model{where}",
                 ("model", f"{x} pre", f"{y} pre", f"{x} post", f"{y} post"), tuple(rows),
                 notes=("ρ pre: the two pre columns; ρ post: the two post columns, across the models above.",))


def run(args: argparse.Namespace) -> int:
    if args.permutations < 0:
        raise DataFormatError(None, f"--permutations must be 0 or more, got {args.permutations}")
    long = read_scores(args.scores)
    tables, data = build_tables(long, compare=args.compare, permutations=args.permutations,
                                random_seed=args.random_seed, source=args.scores)
    print("\n".join(markdown_table(t) for t in tables))
    if args.json is not None:
        atomic_write_json(args.json, {"scores": str(args.scores), **data})
        print(f"wrote {args.json}")
    return 0
