"""The order a report is read in, and the one-paragraph answer it opens on.

Papers and lm-eval put the results first and the bookkeeping last, so the renderers
(:mod:`stereoset_eval.analysis.report_html`, :mod:`stereoset_eval.analysis.report_markdown`) lay a
study out as: the answer (which benchmarks agree across models, how strongly, before and after
balancing), the leaderboard, Tables 4–6 and Figure 2, the per-model scores, then the per-job
details, the error flags and the study overview (models, benchmarks, scoring jobs); provenance
comes last. The sections themselves are unchanged: only their order is.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from stereoset_eval.analysis.report_model import Report, Section

#: reading order of a section by the first part of its key; unknown kinds sit after the findings
FINDINGS: tuple[str, ...] = ("leaderboard", "table4", "correlation", "table5", "table6", "balance-table",
                             "figure2", "scores")
#: bookkeeping kinds, shown last and folded (after the per-job details)
BACK_MATTER: tuple[str, ...] = ("flags", "overview")
#: |ρ| from which agreement is called strong, moderate, weak (below: none); said in the paragraph
STRENGTH: tuple[tuple[float, str], ...] = ((0.7, "strong"), (0.4, "moderate"), (0.2, "weak"))
#: significance level the paragraph names
ALPHA = 0.05


def kind(key: str) -> str:
    """The first part of a section key (``table6/pll/x-vs-y`` -> ``table6``)."""
    return key.split("/", 1)[0]


#: first part of the keys of per-job sections (a study's ``detail/…``, a report's per-model sections)
DETAIL_KINDS: frozenset[str] = frozenset({"detail", "crows", "balanced", "pair-ss", "distribution"})


def is_detail(key: str) -> bool:
    """Per-job sections (``detail/…``, ``stereoset-official/<model>``, ``crows/<benchmark>/<model>`` …)."""
    k = kind(key)
    return "/" in key and (k in DETAIL_KINDS or k.startswith("stereoset-"))


def is_back_matter(key: str) -> bool:
    return kind(key) in BACK_MATTER


def reading_order(sections: Iterable[Section]) -> list[Section]:
    """Findings (in :data:`FINDINGS` order), other overview sections, per-job details, then
    :data:`BACK_MATTER`; a stable sort, so equal kinds keep their order."""
    def rank(s: Section) -> tuple[int, int]:
        k = kind(s.key)
        if k in BACK_MATTER:
            return 3, BACK_MATTER.index(k)
        if is_detail(s.key):
            return 2, 0
        return (0, FINDINGS.index(k)) if k in FINDINGS else (1, 0)

    return sorted(sections, key=rank)


def strength(rho: float) -> str:
    """``strong agreement`` … ``no agreement``, or ``… disagreement`` for a negative ρ."""
    word = next((w for t, w in STRENGTH if abs(rho) >= t), "no")
    return "no agreement" if word == "no" else f"{word} {'agreement' if rho >= 0 else 'disagreement'}"


def _p(corr: Mapping[str, Any]) -> tuple[float | None, str]:
    """The p the paragraph weighs: the exact permutation p when computed, else scipy's."""
    if corr.get("permutation_p_value") is not None:
        return float(corr["permutation_p_value"]), "permutation p"
    p = corr.get("p_value")
    return (None, "p") if p is None else (float(p), "p")


def _rho_text(cell: Mapping[str, Any] | None, protocol: str) -> tuple[str, Mapping[str, Any] | None]:
    """``1.00 strong (pll)``, ``undefined (pll: <reason>)`` or "" without a cell."""
    if not cell:
        return "", None
    corr = cell.get("correlation")
    if not corr:
        return f"undefined ({protocol}: {cell.get('reason') or 'no scores'})", None
    rho = float(corr["rho"])
    return f"{rho:.2f} {strength(rho).split()[0]} ({protocol})", corr


def answer(report: Report) -> str | None:
    """One paragraph from Table 4: per benchmark pair, Spearman ρ across models before and after
    balancing under each protocol, its strength in words (:data:`STRENGTH`), and whether any ρ
    reaches p < :data:`ALPHA` (the exact permutation p where computed). None without Table 4."""
    table4 = next((s for s in report.sections if s.key == "table4"), None)
    if table4 is None or not table4.data:
        return None
    per_pair: dict[str, dict[str, list[str]]] = {}
    ps: list[float] = []
    n_models: set[int] = set()
    for protocol, pairs in table4.data.items():
        for pair, stages in pairs.items():
            for stage in ("pre", "post"):
                text, corr = _rho_text(stages.get(stage), protocol)
                if text:
                    per_pair.setdefault(pair, {}).setdefault(stage, []).append(text)
                if corr is not None:
                    n_models.add(int(corr["n"]))
                    p, _ = _p(corr)
                    if p is not None:
                        ps.append(p)
    if not per_pair:
        return None
    clauses = []
    for pair, stages in per_pair.items():
        pre, post = ", ".join(stages.get("pre", [])), ", ".join(stages.get("post", []))
        clauses.append(f"{pair}: ρ {pre} before balancing; " + (f"{post} after" if post else "no balanced scores"))
    models = "/".join(str(n) for n in sorted(n_models))
    if ps and min(ps) >= ALPHA:
        sig = f"No ρ reaches p < {ALPHA:g} (smallest p {min(ps):.2g}), so no agreement is established."
    elif ps:
        sig = f"{sum(p < ALPHA for p in ps)} of {len(ps)} ρ reach p < {ALPHA:g}."
    else:
        sig = ""
    words = ", ".join(f"{w} |ρ| ≥ {t:g}" for t, w in STRENGTH)
    head = f"Do the benchmarks rank the {models} models alike (Spearman ρ of their stereotype scores)? "
    return (head + ". ".join(clauses) + f". {sig} ({words}; p: exact permutation p where computed.)").strip()


def section_label(title: str) -> str:
    """A short link label: the title up to its first dash (``Table 4 — …`` -> ``Table 4``)."""
    return title.split(" — ", 1)[0].strip()


def contents(sections: Sequence[Section]) -> list[tuple[str, str]]:
    """(label, key) of the first section of each label, in order: a one-line table of contents."""
    seen: set[str] = set()
    out = []
    for s in sections:
        label = section_label(s.title)
        if label not in seen:
            seen.add(label)
            out.append((label, s.key))
    return out
