"""Precision and coverage of automatic curation, measured the honest way (``curate-eval``).

Two tables, both at several ``min_precision`` values (a risk–coverage table):

* **calibration** (:func:`calibration_table`): the run's own reliability estimates (fitted on the
  reviewed items it was given, ``reliability.csv``) route the gold items the run did *not* review;
  the estimated agreement of the automatic decisions stands next to the agreement measured on
  that gold. This is the check on a gold file the estimate did not see.
* **cross-fitted** (:func:`cross_fit_table`): the gold itself is the reviewed set, split into ``k``
  hash folds; each fold is routed and graded with estimates fitted on the other folds only, so an
  item never grades an estimate it took part in. In-sample figures are never reported.

Per dataset and threshold: items, automatic, coverage, and for item keep/remove, instance
keep/drop, the curated pair text and the dimension: measured agreement, estimated agreement, n.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from stereoset_eval.curation.decision_record import ItemRecord
from stereoset_eval.curation.cross_fit import CrossFitRow, component_estimates, cross_fit, risk_coverage
from stereoset_eval.curation.grading import measured_agreement
from stereoset_eval.curation.reliability import Estimate, ReliabilityConfig, route
from stereoset_eval.curation.reviewed import Review

DEFAULT_THRESHOLDS: tuple[float, ...] = (0.80, 0.90, 0.95, 0.99)


def read_estimates(path: str | Path) -> dict[str, Estimate]:
    """``reliability.csv`` of a curate output back into :class:`Estimate` objects."""
    df = pd.read_csv(path, keep_default_na=True)
    out = {}
    for r in df.to_dict("records"):
        def num(v: Any) -> float | None:
            return None if pd.isna(v) else float(v)
        out[str(r["key"])] = Estimate(str(r["key"]), str(r["rule"]), str(r["kind"]), str(r["component"]), int(r["n"]),
                                      int(r["agree"]), num(r["mean"]), num(r["lower"]), int(r["family_n"]),
                                      num(r["family_mean"]))
    return out


def _table(rows_by: Mapping[tuple[str, float], Sequence[CrossFitRow]], mode: str) -> pd.DataFrame:
    out = []
    for (dataset, threshold), rows in sorted(rows_by.items()):
        out.append({"mode": mode, "dataset": dataset, "min_precision": threshold, **risk_coverage(rows)})
    return pd.DataFrame(out)


def cross_fit_table(records: Sequence[ItemRecord], gold: Mapping[str, Review], *, k: int = 5,
                    config: ReliabilityConfig = ReliabilityConfig(),
                    thresholds: Sequence[float] = DEFAULT_THRESHOLDS) -> pd.DataFrame:
    """The risk–coverage table of ``k``-fold cross-fitting on ``gold`` (see module doc)."""
    rows_by: dict[tuple[str, float], list[CrossFitRow]] = {}
    for t in thresholds:
        for row in cross_fit(records, gold, k=k, config=replace(config, min_precision=t)):
            rows_by.setdefault((row.dataset, t), []).append(row)
    return _table(rows_by, f"cross-fitted ({k} folds)")


def calibration_table(records: Sequence[ItemRecord], estimates: Mapping[str, Estimate], gold: Mapping[str, Review],
                      *, reviewed: set[str], config: ReliabilityConfig = ReliabilityConfig(),
                      thresholds: Sequence[float] = DEFAULT_THRESHOLDS) -> pd.DataFrame:
    """Route the gold items the run did not review with the run's estimates; estimated vs measured."""
    unseen = [r for r in records if r.source_id in gold and r.source_id not in reviewed]
    rows_by: dict[tuple[str, float], list[CrossFitRow]] = {}
    for t in thresholds:
        cfg = replace(config, min_precision=t)
        for rec in unseen:
            r = route(rec, estimates, cfg)
            auto = r.status == "automatic"
            rows_by.setdefault((rec.dataset, t), []).append(CrossFitRow(
                rec.source_id, rec.dataset, -1, r.status, r.reason,
                component_estimates(rec, estimates) if auto else {}, measured_agreement(rec, gold[rec.source_id])))
    return _table(rows_by, "estimates from the run's reviewed items, gold items it did not review")


def summary_markdown(table: pd.DataFrame) -> str:
    """A compact markdown view: coverage, measured (estimated) agreement per component."""
    if table.empty:
        return "(no rows)"
    lines = ["| mode | dataset | min_precision | coverage | item | instance | pair text | dimension |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]

    def cell(r: Mapping[str, Any], comp: str) -> str:
        if not r[f"{comp}_n"]:
            return "—"
        est = r[f"{comp}_estimated"]
        est_s = "n/a" if pd.isna(est) else f"{est:.3f}"
        return f"{r[f'{comp}_measured']:.3f} ({est_s}; n={r[f'{comp}_n']})"

    for r in table.to_dict("records"):
        lines.append(f"| {r['mode']} | {r['dataset']} | {r['min_precision']} | {r['coverage']:.3f} "
                     f"({r['automatic']}/{r['items']}) | {cell(r, 'item')} | {cell(r, 'instance')} | "
                     f"{cell(r, 'text')} | {cell(r, 'dimension')} |")
    return "\n".join(lines)
