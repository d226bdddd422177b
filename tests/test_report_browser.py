"""report.html in a real headless browser (Chromium), when one is installed; skipped otherwise.

A study-shaped report (a long LIMITED-RUN title, Table 4 with five benchmark pairs, a leaderboard
and a ten-column scores table with intervals — the widest tables a study writes —, 25 folded
per-job sections with plots, flags, the overview and provenance) is rendered with
:func:`render_html` and opened by Chromium. A script added to a copy of the page measures the
layout and writes it into the DOM, which ``--dump-dom`` returns:

* the first screen (1280 × 900) shows the whole leaderboard;
* no table is wider than its box at 1280 px and at 1024 px (the width of an A4 landscape page,
  which the page asks for when printed), every folded section opened;
* at 800 px the page itself never scrolls sideways (a wide table scrolls in its own box);
* the page prints to PDF.

CI installs Chromium (``.ci/run``). The browser is started with the flags a closed network needs
(no first-run, background, component-update or sync connections) and a fresh profile.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from stereoset_eval.analysis.report_html import render_html
from stereoset_eval.analysis.report_model import Figure, Report, Section, Table
from stereoset_eval.analysis.report_plots import benchmark_scatter, score_bars

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--mute-audio")
MEASURE = """<script>
document.querySelectorAll('details').forEach(function (d) { d.open = false; });
var board = document.querySelector('#leaderboard table').getBoundingClientRect();
var first = {top: board.top, bottom: board.bottom, height: window.innerHeight};
document.querySelectorAll('details').forEach(function (d) { d.open = true; });
var wide = [];
document.querySelectorAll('table').forEach(function (t) {
  var box = t.parentElement, r = t.getBoundingClientRect();
  if (box.scrollWidth > box.clientWidth + 1 || r.right > document.documentElement.clientWidth + 1)
    wide.push(t.querySelector('caption') ? t.querySelector('caption').textContent : '?');
});
var page = document.documentElement;
var out = document.createElement('pre'); out.id = 'measured';
out.textContent = JSON.stringify({first: first, wide: wide, tables: document.querySelectorAll('table').length,
                                  page_overflows: page.scrollWidth > page.clientWidth + 1});
document.body.appendChild(out);
</script>"""
TITLE = ("LIMITED RUN (first 50 items per benchmark, not a result) — StereoSet vs CrowS-Pairs across models: "
         "agreement before and after balancing")
MODELS = ("tiny-bert", "tiny-roberta", "tiny-gpt2", "bert-large-cased-whole-word-masking")
BENCHES = ("StereoSet", "CrowS-Pairs", "curated-StereoSet", "curated-CrowS")


def _browser() -> str:
    found = next((b for b in map(shutil.which, BROWSERS) if b), None)
    if found is None:
        pytest.skip("no Chromium installed (apt-get install -y chromium; CI installs it)")
    return found


def _ci(k: int) -> str:
    v = 40.0 + 3.7 * k
    return f"{v:.2f} [{v - 9.5:.2f}, {v + 9.25:.2f}]"


def _cell(rho: float | None) -> dict:
    if rho is None:
        return {"correlation": None, "reason": "no balanced scores", "n": 4}
    return {"correlation": {"rho": rho, "p_value": 0.2, "permutation_p_value": 0.33, "n": 4}, "reason": None, "n": 4}


def _study() -> Report:
    """A report with a study's section keys, table shapes and figure count."""
    board = Table(TITLE.split(" — ")[0] + " — models ranked by distance from ss = 50",
                  ("rank", "model", "StereoSet ss", "StereoSet icat", "CrowS-Pairs metric", "curated-StereoSet pair ss",
                   "curated-CrowS pair ss", "mean distance from 50"),
                  tuple((str(i + 1), m, *(_ci(i + j) for j in range(5)), f"{5.2 + i:.2f}") for i, m in enumerate(MODELS)),
                  notes=("rank: by the mean distance of the ss columns from the ideal 50.",))
    t4_rows, t4_data = [], {}
    for protocol, pair, pre, post in (("benchmark", "CrowS-Pairs vs StereoSet", 1.0, None),
                                      ("pll", "CrowS-Pairs vs StereoSet", 1.0, None),
                                      ("pll", "curated-CrowS vs curated-StereoSet", 0.5, 1.0),
                                      ("pll-word-l2r", "CrowS-Pairs vs StereoSet", 0.5, None),
                                      ("pll-word-l2r", "curated-CrowS vs curated-StereoSet", 0.5, 0.5)):
        t4_rows.append((protocol, pair, "4", f"{pre:.3f}", "0.2 (perm. 0.33)", "–" if post is None else f"{post:.3f}",
                        "–" if post is None else "0.2 (perm. 0.33)"))
        t4_data.setdefault(protocol, {})[pair] = {"pre": _cell(pre), "post": _cell(post)}
    table4 = Table("Spearman ρ between benchmarks across models",
                   ("protocol", "benchmarks", "n models", "ρ pre-balance", "p pre", "ρ post-balance", "p post"),
                   tuple(t4_rows))
    scatter = benchmark_scatter([48.0, 52.0, 57.0, 44.0], [50.0, 55.0, 60.0, 41.0], MODELS, xlabel="x ss (%)",
                                ylabel="y ss (%)", title="pll: CrowS-Pairs vs StereoSet",
                                x_ci=[(40.0, 56.0)] * 4, y_ci=[(42.0, 58.0)] * 4)
    scores = Table("ss (%) per model with 95% bootstrap CIs — protocol pll",
                   ("model", "method(s)", *(f"{b} {s}" for b in BENCHES for s in ("ss", "balanced ss"))),
                   tuple((m, "pll, pll-word-l2r", *(_ci(i + j) for j in range(8))) for i, m in enumerate(MODELS)))
    bars = score_bars(["gender", "profession", "race", "religion", "overall"], [58.0, 49.0, 61.0, 47.0, 55.0],
                      [49.0, 40.0, 52.0, 30.0, 48.0], [66.0, 59.0, 69.0, 62.0, 62.0], ideal=50.0,
                      title="StereoSet ss by scope", xlabel="stereotype score ss (%)")
    details = tuple(Section(f"detail/StereoSet/{m}/method{k}", f"Details — StereoSet: {m} · method{k}",
                            tables=(Table(f"{m}: lms / ss / icat", ("scope", "n examples", "ss (%)"),
                                          (("overall", "50", _ci(k)),)),),
                            figures=(Figure("ss per bias type", bars, "Bar chart of ss per scope"),))
                    for m in MODELS for k in range(6))[:25]
    jobs = Table("scoring jobs", ("model", "benchmark", "method", "sentences", "cache hits", "computed", "seconds"),
                 tuple((m, b, "pll", "100", "0", "100", "1.2") for m in MODELS for b in BENCHES))
    sections = (
        Section("overview", "Study overview", tables=(jobs,)),
        Section("leaderboard", "Leaderboard", tables=(board,)),
        Section("table4", "Table 4 — cross-benchmark agreement", tables=(table4,),
                figures=(Figure("scatter", scatter, "Scatter of two benchmarks' ss across models"),), data=t4_data),
        Section("scores/pll", "Stereotype scores per model — protocol pll", tables=(scores,)),
        Section("flags/StereoSet", "StereoSet — items with error flags",
                tables=(Table("StereoSet: error flags", ("item", "rule", "message"),
                              (("a1b2c3", "identical-sentences", "the two sentences are identical " * 4),)),)),
        *details,
    )
    provenance = {"tool": {"name": "stereoset-eval", "version": "0.1.0"}, "options": {"limit": 50, "seed": 0},
                  "data_files": [{"path": "/data/" + "long-folder-name/" * 8 + "x.csv", "sha256": "ab" * 32}]}
    return Report(TITLE, sections, provenance)


def _run(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                          timeout=60)


def _measure(browser: str, page: Path, profile: Path, width: int) -> dict:
    res = _run(browser, profile, f"--window-size={width},900", "--dump-dom", page.as_uri())
    found = re.search(r'<pre id="measured">(.*?)</pre>', res.stdout, re.S)
    assert found, f"no measurement from {browser} (rc {res.returncode}): {res.stderr[-1500:]}"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def test_report_first_screen_tables_and_print(tmp_path: Path) -> None:
    browser = _browser()
    report = _study()
    html = render_html(report)
    (tmp_path / "report.html").write_text(html, encoding="utf-8")
    probe = tmp_path / "probe.html"
    probe.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")

    wide = _measure(browser, probe, tmp_path / "profile-1280", 1280)
    assert wide["tables"] == 4 + 25 + 1, wide  # every table laid out (the folded ones opened)
    first = wide["first"]
    assert 0 < first["top"] < first["bottom"] <= first["height"], f"the leaderboard is not on the first screen: {first}"
    assert wide["wide"] == [], f"tables wider than the page at 1280 px: {wide['wide']}"
    print_width = _measure(browser, probe, tmp_path / "profile-1024", 1024)
    assert print_width["wide"] == [], f"tables wider than the page at 1024 px: {print_width['wide']}"
    narrow = _measure(browser, probe, tmp_path / "profile-800", 800)
    assert not narrow["page_overflows"], "the page scrolls sideways at 800 px"

    pdf = tmp_path / "report.pdf"
    res = _run(browser, tmp_path / "profile-pdf", "--no-pdf-header-footer", f"--print-to-pdf={pdf}",
               (tmp_path / "report.html").as_uri())
    assert pdf.is_file(), f"no PDF from {browser} (rc {res.returncode}): {res.stderr[-1500:]}"
    data = pdf.read_bytes()
    pages = len(re.findall(rb"/Type\s*/Page\b", data))
    assert data[:5] == b"%PDF-" and pages >= 2, (len(data), pages)
