"""Report sections for one model's results: StereoSet, CrowS-Pairs, pair ss, balanced ss, distributions.

Each builder turns a result object into a :class:`~stereoset_eval.analysis.report_model.Section` holding a
display table, a plot and the full numbers (``data``). Official and micro StereoSet numbers
always go to separate sections.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from stereoset_eval.analysis.crows_metric import CrowsResult
from stereoset_eval.analysis.pair_metrics import NO_GROUP, BalancedSS
from stereoset_eval.analysis.report_model import Figure, Section, Table, fmt, fmt_ci
from stereoset_eval.analysis.report_plots import count_bars, score_bars
from stereoset_eval.analysis.results import IDEAL, MetricResult
from stereoset_eval.analysis.stereoset_metrics import OVERALL, StereoSetEvaluation
from stereoset_eval.foundation.items import Item

COUNT_NOTE = (
    "n = true number of examples. The official evaluation.py reports 3 × this for each bias type "
    "(it appends every example once per sentence); ratios are unaffected."
)
VARIANT_TITLES = {
    "official": "StereoSet — official evaluation.py (macro over target terms)",
    "micro": "StereoSet — BMNE-paper micro variant (over examples; NOT the official metric)",
}


def _ci_note(results: Iterable[MetricResult]) -> tuple[str, ...]:
    ci = next((r.ci for r in results if r.ci is not None), None)
    if ci is None:
        return ("No confidence intervals were computed.",)
    return (
        f"[low, high] = {ci.level:.0%} {ci.method} interval, {ci.n_resamples} resamples of {ci.resample_unit}, seed {ci.seed}.",
    )


def stereoset_section(evaluation: StereoSetEvaluation, *, model: str) -> Section:
    """lms / ss / icat for every scope of one variant, with CIs and the ss-per-bias-type plot."""
    rows = []
    for name, s in evaluation.scopes.items():
        rows.append(
            (
                name,
                str(s.n_examples),
                str(s.n_targets),
                fmt_ci(s.lms.value, s.lms.ci),
                fmt_ci(s.ss.value, s.ss.ci),
                fmt_ci(s.icat.value, s.icat.ci),
            )
        )
    table = Table(
        title=f"{model}: lms / ss / icat ({evaluation.variant})",
        columns=("scope", "n examples", "n targets", "lms (%)", "ss (%)", "icat"),
        rows=tuple(rows),
        notes=(f"Ideal: lms {IDEAL['lms']:g}, ss {IDEAL['ss']:g}, icat {IDEAL['icat']:g}.", COUNT_NOTE),
    )

    def order(name: str) -> int:  # bias types first, then each task's overall, then overall
        return 2 if name == OVERALL else 1 if name.endswith(f"/{OVERALL}") else 0

    plotted = sorted(evaluation.scopes.items(), key=lambda kv: order(kv[0]))
    share = "mean over target terms of % examples" if evaluation.variant == "official" else "% examples"
    png = score_bars(
        [n.replace("sentence", "") for n, _ in plotted],
        [s.ss.value for _, s in plotted],
        [s.ss.ci.low if s.ss.ci else None for _, s in plotted],
        [s.ss.ci.high if s.ss.ci else None for _, s in plotted],
        ideal=IDEAL["ss"],
        title=f"StereoSet ss by scope — {model} ({evaluation.variant})",
        xlabel=f"stereotype score ss (%): {share} preferring the stereotype",
    )
    metrics = [m for s in evaluation.scopes.values() for m in s.metrics]
    return Section(
        key=f"stereoset-{evaluation.variant}/{model}",
        title=f"{VARIANT_TITLES.get(evaluation.variant, evaluation.variant)}: {model}",
        tables=(table,),
        figures=(
            Figure(
                title="ss per bias type",
                png=png,
                alt=f"Bar chart of StereoSet ss per scope for {model} with confidence intervals and the ideal 50",
            ),
        ),
        notes=_ci_note(metrics),
        data={"model": model, **evaluation.to_dict(), "official_format": evaluation.to_official_dict(count="true")},
    )


def crows_section(result: CrowsResult, *, model: str, benchmark: str = "CrowS-Pairs") -> Section:
    """metric.py's summary and the metric per bias type, with CIs and a plot."""
    s = result
    summary = Table(
        title=f"{model}: {benchmark} summary (metric.py)",
        columns=("quantity", "value (%)", "n"),
        rows=(
            ("metric score", fmt_ci(s.metric.value, s.metric.ci), str(s.n_pairs)),
            (
                "stereotype score",
                fmt_ci(s.stereotype.value, s.stereotype.ci) if s.stereotype else "–",
                str(s.stereotype.n) if s.stereotype else "0",
            ),
            (
                "anti-stereotype score",
                fmt_ci(s.antistereotype.value, s.antistereotype.ci) if s.antistereotype else "–",
                str(s.antistereotype.n) if s.antistereotype else "0",
            ),
            ("neutral pairs", fmt(s.neutral_percent), str(s.neutral)),
        ),
        notes=(
            f"Ideal {IDEAL['crows_metric']:g}. Metric = % of all pairs (neutrals included, scoring 0) where "
            "sent_more scores higher; direction scores exclude neutral pairs from their denominators.",
            f"Scores rounded to {s.options.get('ndigits')} decimals before comparing (metric.py: 3).",
        ),
    )
    per_bias = Table(
        title=f"{model}: {benchmark} metric per bias type",
        columns=("bias type", "n pairs", "metric (%)"),
        rows=tuple((b, str(r.n), fmt_ci(r.value, r.ci)) for b, r in s.per_bias_type.items()),
    )
    names = list(s.per_bias_type) + ["all"]
    res = list(s.per_bias_type.values()) + [s.metric]
    png = score_bars(
        names,
        [r.value for r in res],
        [r.ci.low if r.ci else None for r in res],
        [r.ci.high if r.ci else None for r in res],
        ideal=IDEAL["crows_metric"],
        title=f"{benchmark} metric by bias type — {model}",
        xlabel="metric score (% pairs where sent_more scores higher)",
    )
    return Section(
        key=f"crows/{benchmark}/{model}",
        title=f"{benchmark} — metric.py: {model}",
        tables=(summary, per_bias),
        figures=(
            Figure(
                title="metric per bias type",
                png=png,
                alt=f"Bar chart of the {benchmark} metric per bias type for {model}, with the ideal 50",
            ),
        ),
        notes=_ci_note(res),
        data={"model": model, "benchmark": benchmark, **s.to_dict()},
    )


def balanced_section(result: BalancedSS, *, model: str, benchmark: str) -> Section:
    """Unbalanced vs balanced ss and the group sizes behind the weights."""
    r = result
    table = Table(
        title=f"{model}: {benchmark} ss unbalanced vs balanced by {r.group_by}",
        columns=("group", "n", "weight", "ss (%)"),
        rows=tuple((g, str(s.n), f"{s.weight:.4g}", fmt_ci(s.ss, s.ci)) for g, s in r.groups.items())
        + (
            ("unbalanced (all)", str(r.unbalanced.n), "1/N", fmt_ci(r.unbalanced.value, r.unbalanced.ci)),
            ("balanced", str(r.balanced.n), "1/n_group", fmt_ci(r.balanced.value, r.balanced.ci)),
        ),
        notes=(
            f"Balanced ss: each item weighs 1/(items in its {r.group_by} group); equals the mean of the group ss. "
            f"Ties: {r.options.get('tie_rule')}.",
        ) + ((f"{r.options['excluded_untagged']} pair(s) without a {r.group_by} value were left out of both "
              "rows (missing-group rule 'exclude'; 'own-group' weighs them as one group).",)
             if r.options.get("excluded_untagged") else ()),
    )
    png = score_bars(
        list(r.groups) + ["unbalanced", "balanced"],
        [s.ss for s in r.groups.values()] + [r.unbalanced.value, r.balanced.value],
        [s.ci.low if s.ci else None for s in r.groups.values()]
        + [r.unbalanced.ci.low if r.unbalanced.ci else None, r.balanced.ci.low if r.balanced.ci else None],
        [s.ci.high if s.ci else None for s in r.groups.values()]
        + [r.unbalanced.ci.high if r.unbalanced.ci else None, r.balanced.ci.high if r.balanced.ci else None],
        ideal=IDEAL["balanced_ss"],
        title=f"{benchmark} ss by {r.group_by} — {model}",
        xlabel="ss (% pairs where the stereotypical sentence scores higher)",
    )
    return Section(
        key=f"balanced/{benchmark}/{model}",
        title=f"{benchmark} — balanced ss by {r.group_by}: {model}",
        tables=(table,),
        figures=(Figure(title="ss per group", png=png, alt=f"Bar chart of ss per {r.group_by} group and balanced ss"),),
        notes=_ci_note([r.unbalanced, r.balanced])
        + (("Group rows: each group's ss with its own interval (that group's pairs resampled).",)
           if any(s.ci for s in r.groups.values()) else ()),
        data={"model": model, "benchmark": benchmark, **r.to_dict()},
    )


def pair_ss_section(result: MetricResult, *, model: str, benchmark: str) -> Section:
    table = Table(
        title=f"{model}: {benchmark} pair ss",
        columns=("metric", "n", "value (%)"),
        rows=(("pair ss", str(result.n), fmt_ci(result.value, result.ci)),),
        notes=(f"Ideal {result.ideal:g}. Ties: {result.options.get('tie_rule')}.",),
    )
    return Section(
        key=f"pair-ss/{benchmark}/{model}",
        title=f"{benchmark} — pair ss: {model}",
        tables=(table,),
        notes=_ci_note([result]),
        data={"model": model, "benchmark": benchmark, "pair_ss": result.to_dict()},
    )


def distribution_section(items: Iterable[Item], *, by: str, benchmark: str) -> Section:
    """Items per category (``bias_type``, ``dimension`` …): the distribution that balancing corrects."""
    counts = Counter(NO_GROUP if getattr(i, by) in (None, "") else str(getattr(i, by)) for i in items)
    ordered = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    total = sum(ordered.values())
    table = Table(
        title=f"{benchmark}: items per {by}",
        columns=(by, "items", "share (%)"),
        rows=tuple((k, str(v), fmt(100.0 * v / total)) for k, v in ordered.items()),
    )
    png = count_bars(ordered, title=f"{benchmark}: items per {by} (N = {total})", xlabel=by)
    return Section(
        key=f"distribution/{benchmark}/{by}",
        title=f"{benchmark} — distribution by {by}",
        tables=(table,),
        figures=(Figure(title=f"items per {by}", png=png, alt=f"Bar chart of {benchmark} items per {by}"),),
        data={"benchmark": benchmark, "by": by, "counts": ordered, "total": total},
    )
