"""The report's reading order: the answer, the findings open, the bookkeeping folded at the end.

Sections are given in the order a study builds them (overview first) and must come out as the
issue asks: title, answer, leaderboard, Tables 4–6, Figure 2, scores, then the per-job details,
error flags, the overview and provenance folded — in report.html and report.md alike.
"""

from __future__ import annotations

from stereoset_eval.analysis.report_html import render_html
from stereoset_eval.analysis.report_layout import answer, reading_order, strength
from stereoset_eval.analysis.report_markdown import render_markdown
from stereoset_eval.analysis.report_model import Report, Section, Table

T = (Table("t", ("a",), (("1",),)),)


def _corr(rho: float, perm_p: float | None, n: int = 3) -> dict:
    return {"correlation": {"rho": rho, "p_value": 0.0, "permutation_p_value": perm_p, "n": n}, "reason": None, "n": n}


def _study() -> Report:
    table4 = {"benchmark": {"CrowS-Pairs vs StereoSet": {"pre": _corr(1.0, 0.33)}},
              "pll": {"curated-CrowS vs curated-StereoSet": {"pre": _corr(0.5, 1.0), "post": _corr(-0.5, 1.0)}}}
    keys = [("overview", "Study overview"), ("leaderboard", "Leaderboard"), ("table4", "Table 4 — agreement"),
            ("table5", "Table 5 — per category"), ("table6/pll/x-vs-y", "Table 6 — x vs y"),
            ("figure2", "Figure 2 — distribution"), ("scores/pll", "Stereotype scores per model — protocol pll"),
            ("flags/StereoSet", "StereoSet — items with error flags"),
            ("detail/StereoSet/m/pll", "Details — StereoSet: m · pll")]
    sections = tuple(Section(k, t, tables=T, data=table4 if k == "table4" else {}) for k, t in keys)
    return Report("A study", sections, {"options": {"seed": 0}, "timestamp": "t"})


def test_sections_come_findings_first_and_bookkeeping_last():
    order = [s.key for s in reading_order(_study().sections)]
    assert order == ["leaderboard", "table4", "table5", "table6/pll/x-vs-y", "figure2", "scores/pll",
                     "detail/StereoSet/m/pll", "flags/StereoSet", "overview"]


def test_html_opens_on_the_answer_and_folds_the_bookkeeping():
    page = render_html(_study())
    at = {k: page.index(f'id="{k}"') for k in ("answer", "leaderboard", "table4", "figure2", "scores/pll",
                                                "detail/StereoSet/m/pll", "flags/StereoSet", "overview", "provenance")}
    assert list(at) == sorted(at, key=at.get), at
    assert page.index("<h1>") < at["answer"] < page.index('<nav class="toc">') < at["leaderboard"]
    for key in ("leaderboard", "table4", "figure2", "scores/pll"):
        assert f'<section id="{key}">' in page
    for key in ("detail/StereoSet/m/pll", "flags/StereoSet", "overview"):
        assert f'<details class="section" id="{key}">' in page
    assert '<section id="provenance"><details class="section">' in page and page.rstrip().endswith("</html>")


def test_markdown_follows_the_same_order_with_provenance_last():
    md = render_markdown(_study())
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads[0] == "## Leaderboard" and heads[-2:] == ["## Study overview", "## Provenance"]
    assert md.index("Do the benchmarks rank") < md.index("## Leaderboard")


def test_the_answer_says_rho_before_and_after_balancing_in_words():
    text = answer(_study())
    assert text is not None
    assert "CrowS-Pairs vs StereoSet: ρ 1.00 strong (benchmark) before balancing; no balanced scores" in text
    assert ("curated-CrowS vs curated-StereoSet: ρ 0.50 moderate (pll) before balancing; -0.50 moderate (pll) "
            "after") in text
    assert "No ρ reaches p < 0.05 (smallest p 0.33)" in text
    assert strength(-0.8) == "strong disagreement" and strength(0.1) == "no agreement"
    assert answer(Report("one model", (Section("results", "Headline results", tables=T),), {})) is None


def test_a_one_model_report_keeps_its_sections_open():
    report = Report("one model", (Section("stereoset-official/m", "StereoSet — official: m", tables=T),
                                  Section("results", "Headline results", tables=T)), {})
    page = render_html(report)
    assert '<section id="stereoset-official/m">' in page and page.index('id="results"') < page.index('id="stereoset')


def test_plots_are_small_palette_pngs_that_keep_their_colours(monkeypatch):
    """Palette PNGs (a fraction of the RGBA size); a palette too small for the figure's colours
    (forced here: 2) is redone with 256, so a red marker stays red."""
    import io

    import numpy as np
    from PIL import Image

    from stereoset_eval.analysis import report_plots

    def red_pixels(png: bytes) -> int:
        rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
        return int(((rgb[..., 0] > 150) & (rgb[..., 1] < 110) & (rgb[..., 2] < 120)).sum())

    def scatter() -> bytes:
        return report_plots.benchmark_scatter([40.0, 44.0, 64.0], [48.0, 51.0, 58.0], ["a", "b", "c"], xlabel="x",
                                              ylabel="y", title="t")

    png = scatter()
    image = Image.open(io.BytesIO(png))
    assert image.mode == "P" and len(image.getpalette()) // 3 <= report_plots.PALETTE and red_pixels(png) > 20
    monkeypatch.setattr(report_plots, "PALETTE", 2)
    redone = scatter()
    assert len(Image.open(io.BytesIO(redone)).getpalette()) // 3 > 2 and red_pixels(redone) > 20
