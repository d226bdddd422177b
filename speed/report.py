"""From cell measurements to results: ratios, agreement, targets, Markdown tables.

A speed-up only counts at equal numbers: every implementation's per-sentence numbers are
compared with ours (:data:`speed.specs.TOLERANCE`) and a ratio whose numbers disagree is
flagged, not reported as a win.
"""

from __future__ import annotations

from typing import Any, Mapping

from speed.specs import COMPARED, TOLERANCE, within_tolerance

IMPL_ORDER = ("ours", "reference-loop", "minicons", "floor")

# the issue's targets: BERT-base-sized model over the CrowS-Pairs slice
TARGET_MODEL = "bert-base-random"
TARGETS: tuple[tuple[str, str, str, str, float], ...] = (
    # (name, method, ratio key, comparison, threshold)
    ("crows-nangia >= 30x faster than the reference loop", "crows-nangia", "speedup_vs_reference_loop", ">=", 30.0),
    ("crows-nangia within 1.25x of the floor", "crows-nangia", "ours_over_floor", "<=", 1.25),
    ("pll >= 2x faster than minicons", "pll", "speedup_vs_minicons", ">=", 2.0),
    ("pll-word-l2r >= 2x faster than minicons", "pll-word-l2r", "speedup_vs_minicons", ">=", 2.0),
)
RSS_LIMIT_MB = 2048.0


def agreement(method: str, scores: Mapping[str, float], ours: Mapping[str, float]) -> dict[str, Any]:
    """Max absolute / relative difference from ours, and whether all are within tolerance.

    >>> agreement("pll", {"a": -10.00001, "b": -3.0}, {"a": -10.0, "b": -3.0})["agrees"]
    True
    >>> agreement("pll", {"a": -10.0}, {"a": -10.0, "b": -3.0})["missing"]
    1
    """
    common = [k for k in ours if k in scores]
    diffs = [abs(scores[k] - ours[k]) for k in common]
    rels = [abs(scores[k] - ours[k]) / abs(ours[k]) for k in common if ours[k] != 0]
    missing = len(ours) - len(common) + len(set(scores) - set(ours))
    return {
        "max_abs_diff": max(diffs, default=0.0),
        "max_rel_diff": max(rels, default=0.0),
        "n_compared": len(common),
        "missing": missing,
        "agrees": missing == 0 and all(within_tolerance(method, scores[k], ours[k]) for k in common),
    }


def combine(model: Mapping[str, Any], method: str, dataset: str, cells: Mapping[str, dict[str, Any]],
            scored_tokens: int | None) -> dict[str, Any]:
    """One result record for (model, method): per-implementation numbers, ratios, agreement."""
    ours = cells.get("ours", {})
    ours_scores = ours.get("scores") if ours.get("status") == "ok" else None
    impls: dict[str, Any] = {}
    for name in IMPL_ORDER:
        cell = cells.get(name)
        if cell is None:
            continue
        if cell.get("status") != "ok":
            impls[name] = {"status": cell.get("status", "error"), "reason": cell.get("reason", "")}
            continue
        t = cell["timing"]
        wall = t["wall_s_median"]
        entry = {"status": "ok", **t, "load_s": cell["load_s"], "peak_rss_mb": cell["peak_rss_mb"],
                 "peak_gpu_mb": cell.get("peak_gpu_mb"),
                 "rss_after_load_mb": cell.get("rss_after_load_mb"), "threads": cell["threads"],
                 "rounds": cell.get("rounds", 1), "max_abs_diff_between_runs": cell.get("max_abs_diff_between_runs"),
                 "n_sentences": cell["n_sentences"], "sentences_per_s": cell["n_sentences"] / wall if wall else None,
                 "tokens_per_s": scored_tokens / wall if scored_tokens and wall else None}
        if cell.get("forward_tokens") is not None:
            entry["forward_tokens"] = cell["forward_tokens"]
        if ours_scores is not None and name != "ours":
            entry.update(agreement(method, cell["scores"], ours_scores))
        impls[name] = entry
    ratios = _ratios(impls)
    compared = [v for k, v in impls.items() if k != "ours" and v.get("status") == "ok" and "agrees" in v]
    atol, rtol = TOLERANCE[method]
    return {
        "model": model["name"], "model_origin": model["origin"], "model_note": model["note"],
        "kind": model["kind"], "method": method, "dataset": dataset,
        "n_sentences": ours.get("n_sentences"), "scored_tokens": scored_tokens,
        "compared_number": COMPARED[method], "tolerance": {"atol": atol, "rtol": rtol},
        "implementations": impls, "ratios": ratios,
        "max_abs_diff": max((v["max_abs_diff"] for v in compared), default=None),
        "numbers_agree": all(v["agrees"] for v in compared) if compared else None,
    }


def _ratios(impls: Mapping[str, Any]) -> dict[str, Any]:
    ours = impls.get("ours", {})
    if ours.get("status") != "ok":
        return {}
    out: dict[str, Any] = {}
    for name, key in (("reference-loop", "reference_loop"), ("minicons", "minicons")):
        other = impls.get(name, {})
        if other.get("status") == "ok":
            out[f"speedup_vs_{key}"] = other["wall_s_median"] / ours["wall_s_median"]
            out[f"speedup_vs_{key}_cpu"] = other["cpu_s_median"] / ours["cpu_s_median"]
            out[f"ours_over_{key}"] = ours["wall_s_median"] / other["wall_s_median"]
            out[f"speedup_vs_{key}_counts"] = bool(other.get("agrees"))
    floor = impls.get("floor", {})
    if floor.get("status") == "ok":
        out["ours_over_floor"] = ours["wall_s_median"] / floor["wall_s_median"]
        out["ours_over_floor_cpu"] = ours["cpu_s_median"] / floor["cpu_s_median"]
    return out


def check_targets(results: list[dict[str, Any]], *, dataset_prefix: str = "crows-pairs") -> list[dict[str, Any]]:
    """The issue's targets, evaluated on the BERT-base-sized model's CrowS-Pairs results (if run)."""
    by_method = {r["method"]: r for r in results
                 if r["model"] == TARGET_MODEL and r["dataset"].startswith(dataset_prefix)}
    out = []
    for name, method, key, op, threshold in TARGETS:
        r = by_method.get(method)
        value = r["ratios"].get(key) if r else None
        agree = bool(r and r["numbers_agree"])
        ok = value is not None and agree and (value >= threshold if op == ">=" else value <= threshold)
        out.append({"target": name, "value": value, "threshold": f"{op} {threshold}", "numbers_agree": agree,
                    "met": ok if value is not None else None})
    peaks = [r["implementations"]["ours"].get("peak_rss_mb") for r in results
             if r["model"] == TARGET_MODEL and r["implementations"].get("ours", {}).get("status") == "ok"]
    peak = max((p for p in peaks if p is not None), default=None)
    out.append({"target": "ours peak RSS <= 2 GB (BERT-base-sized)", "value": peak,
                "threshold": f"<= {RSS_LIMIT_MB:.0f} MiB", "numbers_agree": None,
                "met": None if peak is None else peak <= RSS_LIMIT_MB})
    return out


def _fmt(x: float | None, spec: str = ".3g") -> str:
    return "—" if x is None else format(x, spec)


def summary_table(results: list[dict[str, Any]]) -> str:
    """One row per (model, method): ours' time and throughput, the three ratios, agreement."""
    lines = ["| model | method | data | ours wall s | ours sent/s | ours tok/s | ours peak RSS MiB "
             "| ours peak GPU MiB | speed-up vs reference loop | speed-up vs minicons | ours / floor "
             "| ours / floor (CPU) | max \\|Δ\\| | agree |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        o = r["implementations"].get("ours", {})
        q = r["ratios"]
        lines.append(
            f"| {r['model']} | {r['method']} | {r['dataset']} | {_fmt(o.get('wall_s_median'))} "
            f"| {_fmt(o.get('sentences_per_s'), '.1f')} | {_fmt(o.get('tokens_per_s'), '.0f')} "
            f"| {_fmt(o.get('peak_rss_mb'), '.0f')} | {_fmt(o.get('peak_gpu_mb'), '.0f')} "
            f"| {_ratio(q, 'reference_loop')} | {_ratio(q, 'minicons')} "
            f"| {_fmt(q.get('ours_over_floor'), '.2f')} | {_fmt(q.get('ours_over_floor_cpu'), '.2f')} "
            f"| {_fmt(r['max_abs_diff'], '.1e')} "
            f"| {'yes' if r['numbers_agree'] else ('—' if r['numbers_agree'] is None else 'NO')} |")
    return "\n".join(lines)


def _ratio(q: Mapping[str, Any], key: str) -> str:
    value = q.get(f"speedup_vs_{key}")
    if value is None:
        return "—"
    return f"{value:.1f}×" + ("" if q.get(f"speedup_vs_{key}_counts") else " (numbers differ: does not count)")


def detail_table(results: list[dict[str, Any]]) -> str:
    """One row per implementation: wall and CPU medians, throughput, peak RSS, time ÷ ours, max |Δ|."""
    lines = ["| model | method | implementation | wall s (median) | CPU s (median) | sent/s | tok/s "
             "| peak RSS MiB | peak GPU MiB | time ÷ ours | max \\|Δ\\| vs ours |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        ours_wall = r["implementations"].get("ours", {}).get("wall_s_median")
        for name, v in r["implementations"].items():
            if v.get("status") != "ok":
                lines.append(f"| {r['model']} | {r['method']} | {name} | {v['status']}: {v.get('reason', '')} "
                             "| | | | | | | |")
                continue
            rel = v["wall_s_median"] / ours_wall if ours_wall else None
            lines.append(
                f"| {r['model']} | {r['method']} | {name} | {_fmt(v['wall_s_median'])} | {_fmt(v['cpu_s_median'])} "
                f"| {_fmt(v['sentences_per_s'], '.1f')} | {_fmt(v['tokens_per_s'], '.0f')} "
                f"| {_fmt(v['peak_rss_mb'], '.0f')} | {_fmt(v.get('peak_gpu_mb'), '.0f')} | {_fmt(rel, '.2f')} "
                f"| {_fmt(v.get('max_abs_diff'), '.1e') if name != 'ours' else ''} |")
    return "\n".join(lines)


def targets_table(targets: list[dict[str, Any]]) -> str:
    lines = ["| target | value | threshold | met |", "|---|---:|---|---|"]
    for t in targets:
        met = {True: "yes", False: "NO", None: "not run"}[t["met"]]
        lines.append(f"| {t['target']} | {_fmt(t['value'], '.2f')} | {t['threshold']} | {met} |")
    return "\n".join(lines)
