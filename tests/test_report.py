"""Reports: library composition, the HTML page (opened and checked), determinism, the CLI."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from html.parser import HTMLParser

import matplotlib.image as mpimg
import pandas as pd
import pytest

from stereoset_eval.analysis.benchmarks import EvaluationOptions, get_benchmark
from stereoset_eval.analysis.bootstrap import BootstrapConfig, balanced_ss_with_ci
from stereoset_eval.cli.main import main
from stereoset_eval.analysis.correlation import balance_table, spearman
from stereoset_eval.foundation.provenance import build_provenance
from stereoset_eval.analysis.report_build import ModelResults, balance_table_section, build_report, correlation_section
from stereoset_eval.analysis.report_model import Report, Section
from stereoset_eval.analysis.report_sections import distribution_section
from stereoset_eval.analysis.report_writer import write_report
from stereoset_eval.analysis.toy_items import pair_item, pair_scores, stereoset_item, stereoset_scores
from conftest import load_golden

CFG = BootstrapConfig(n_resamples=200, seed=3, level=0.95)


class PageParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.sections, self.tags = [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "img":
            self.imgs.append(attrs)
        if tag == "section":
            self.sections.append(attrs.get("id"))


def toy_results(model="toy-model", seed=0):
    items, scores = [], {}
    for i in range(24):
        iid = f"{model}-e{i}"
        items.append(
            stereoset_item(
                iid,
                target=f"t{i % 4}",
                bias_type=["gender", "race"][i % 2],
                task=["intrasentence", "intersentence"][(i // 2) % 2],
            )
        )
        scores.update(stereoset_scores(iid, (i * 7 + seed) % 5, (i * 3) % 4, (i + seed) % 3 - 1))
    pairs, pscores = [], {}
    for i in range(20):
        pid = f"{model}-p{i}"
        pairs.append(
            pair_item(
                pid,
                direction="stereo" if i % 4 else "antistereo",
                bias_type=["age", "gender"][i % 2],
                dimension=["Roles and Behaviors", "Personality Traits", "Physical Characteristics"][i % 3],
            )
        )
        pscores.update(pair_scores(pid, -float((i + seed) % 5), -float(i % 3)))
    results = ModelResults(model=model, evaluations=(
        get_benchmark("stereoset").evaluate(items, scores, EvaluationOptions(bootstrap=CFG, micro=True)),
        get_benchmark("crows-pairs").evaluate(pairs, pscores, EvaluationOptions(bootstrap=CFG)),
        get_benchmark("pairs").evaluate(pairs, pscores, EvaluationOptions(bootstrap=CFG, pair_ss_section=False),
                                        title="toy pairs"),
    ))
    return results, items, pairs


def make_report(tmp_path, timestamp="2025-01-01T00:00:00+00:00"):
    data = tmp_path / "gold.csv"
    data.write_text("toy gold file\n")
    results, items, pairs = toy_results()
    prov = build_provenance(
        data_files=[data],
        model="toy-model",
        revision="abc123",
        method="pll",
        options={"bootstrap": CFG.to_dict()},
        n_per_slice=results.n_per_slice(),
        timestamp=timestamp,
    )
    extra = (
        distribution_section(items, by="bias_type", benchmark="StereoSet"),
        distribution_section(pairs, by="dimension", benchmark="toy pairs"),
    )
    return build_report(results, prov, extra=extra)


def test_html_report_is_self_contained_and_lists_provenance(tmp_path):
    report = make_report(tmp_path)
    paths = write_report(report, tmp_path / "out")
    page = paths["html"].read_text(encoding="utf-8")
    parser = PageParser()
    parser.feed(page)
    n_figures = sum(len(s.figures) for s in report.sections)
    assert n_figures == 6 and len(parser.imgs) == n_figures
    for img in parser.imgs:
        assert img["src"].startswith("data:image/png;base64,") and img["alt"]
        png = base64.b64decode(img["src"].split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        pixels = mpimg.imread(io.BytesIO(png), format="png")
        assert pixels.shape[0] > 200 and pixels.shape[1] > 300
    assert "script" not in parser.tags and not re.search(r"(src|href)=\"https?:", page)
    assert "provenance" in parser.sections and "stereoset-official/toy-model" in parser.sections
    sha = report.provenance["data_files"][0]["sha256"]
    for needle in (
        sha,
        "stereoset-eval 0.1.0",
        "toy-model",
        "abc123",
        "2025-01-01T00:00:00+00:00",
        "numpy",
        "BMNE-paper micro variant",
        "NOT the official metric",
        "ideal",
    ):
        assert needle in page, needle
    md = paths["markdown"].read_text()
    assert "| scope | n examples | n targets | lms (%) | ss (%) | icat |" in md and sha in md
    doc = json.loads(paths["json"].read_text())
    assert doc["provenance"]["model"] == {"id": "toy-model", "revision": "abc123"}
    keys = [s["key"] for s in doc["sections"]]
    assert keys[:3] == ["results", "stereoset-official/toy-model", "stereoset-micro/toy-model"]  # headline first
    assert [r["benchmark"] for r in doc["results"]][:9:3] == ["StereoSet intrasentence", "StereoSet intersentence",
                                                              "StereoSet intra+inter overall"]
    assert [(r["benchmark"], r["metric"]) for r in doc["results"]][-3:] == [
        ("CrowS-Pairs", "metric score"), ("toy pairs", "pair ss"), ("toy pairs", "balanced ss (dimension)")]
    official = doc["sections"][1]["data"]
    assert official["variant"] == "official" and official["scopes"]["overall"]["ss"]["ci"]["seed"] == 3
    assert doc["provenance"]["n_per_slice"]["stereoset/official/overall"] == 24


def _mask(text: str, stamp: str) -> str:
    return text.replace(stamp, "<timestamp>")


def test_two_runs_identical_except_timestamp(tmp_path):
    a = write_report(make_report(tmp_path, "2025-01-01T00:00:00+00:00"), tmp_path / "a")
    b = write_report(make_report(tmp_path, "2026-06-06T06:06:06+00:00"), tmp_path / "b")
    for kind in ("json", "markdown", "html"):
        ta, tb = a[kind].read_text(), b[kind].read_text()
        assert ta != tb
        assert _mask(ta, "2025-01-01T00:00:00+00:00") == _mask(tb, "2026-06-06T06:06:06+00:00"), kind
    ja, jb = json.loads(a["json"].read_text()), json.loads(b["json"].read_text())
    ja["provenance"].pop("timestamp"), jb["provenance"].pop("timestamp")
    assert ja == jb


def test_study_report_composes_models_and_correlations(tmp_path):
    models = [toy_results(f"m{i}", seed=i)[0] for i in range(4)]
    crows = [m.evaluations[1].parts["crows"].metric.value for m in models]
    ss = [m.evaluations[0].parts["official"]["overall"].ss.value for m in models]
    corr = {
        "overall ss": spearman(
            crows, ss, labels=[m.model for m in models], x_name="CrowS-Pairs", y_name="StereoSet", permutations=100
        )
    }
    bt = balance_table(
        pd.DataFrame(
            {
                "model": [m.model for m in models],
                "x_pre": crows,
                "y_pre": ss,
                "x_post": [m.evaluations[2].post.value for m in models],
                "y_post": ss,
            }
        )
    )
    report = Report("study", (*(s for m in models for s in m.sections()),
                              correlation_section(corr, key="correlation", title="Cross-benchmark Spearman ρ"),
                              balance_table_section(bt)), build_provenance(timestamp="t"))
    keys = [s.key for s in report.sections]
    assert "correlation" in keys and "balance-table" in keys and "crows/CrowS-Pairs/m3" in keys
    table6 = next(s for s in report.sections if s.key == "balance-table")
    assert table6.tables[0].rows[-1][0] == "Spearman ρ (p)" and len(table6.figures) == 2
    assert "perm." not in table6.tables[0].rows[-1][1]  # no permutation test was asked for
    with_perm = balance_table_section(balance_table(bt.rows, permutations=100))
    assert "perm." in with_perm.tables[0].rows[-1][1] and "perm." in with_perm.tables[0].rows[-1][3]
    page = write_report(report, tmp_path / "study")["html"].read_text()
    assert page.count("data:image/png;base64,") == sum(len(s.figures) for s in report.sections)
    more = report.with_sections(Section(key="extra", title="Extra"))
    assert isinstance(more, Report) and more.sections[-1].key == "extra"
    with pytest.raises(ValueError, match="duplicate section keys"):
        report.with_sections(Section(key="correlation", title="again"))


def test_cli_report_stereoset_predictions(ids_csv, data_dir, tmp_path, capsys):
    preds = data_dir / "reference-results" / "predictions_bert-base-cased_BertNextSentence_BertLM.json"
    args = [
        "report",
        "--benchmark",
        "stereoset",
        "--data",
        str(ids_csv),
        "--scores",
        str(preds),
        "--model",
        "bert-base-cased",
        "--bootstrap",
        "100",
    ]
    assert main(args + ["--out", str(tmp_path / "r1")]) == 0
    assert main(args + ["--out", str(tmp_path / "r2")]) == 0
    d1 = json.loads((tmp_path / "r1" / "report.json").read_text())
    d2 = json.loads((tmp_path / "r2" / "report.json").read_text())
    d1["provenance"].pop("timestamp"), d2["provenance"].pop("timestamp")
    assert d1 == d2
    official = d1["sections"][1]["data"]["official_format"]
    published = json.loads((data_dir / "reference-results" / "stereoset_dev_scores_nadeem2021.json").read_text())
    assert official["overall"]["SS Score"] == pytest.approx(
        published["bert-base-cased"]["overall"]["SS Score"], abs=1e-9
    )
    assert d1["provenance"]["score_files"][0]["sha256"].startswith("45b336fd")
    assert d1["provenance"]["options"]["score_format"] == "stereoset-predictions"


def test_cli_report_crows_from_csv_scores(crows_csv, golden_dir, tmp_path, capsys):
    g1 = load_golden(golden_dir, "g1_crows_metric__tiny-bert.json")
    scores = tmp_path / "scores.csv"
    with open(scores, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["sentence_id", "score"])
        for p in g1["pairs"]:
            w.writerow([f"crows:{p['id']}:more", repr(p["sent_more_score_unrounded"])])
            w.writerow([f"crows:{p['id']}:less", repr(p["sent_less_score_unrounded"])])
    out = tmp_path / "crows"
    assert (
        main(
            [
                "report",
                "--benchmark",
                "crows-pairs",
                "--data",
                str(crows_csv),
                "--scores",
                str(scores),
                "--out",
                str(out),
                "--model",
                "tiny-bert",
                "--bootstrap",
                "100",
                "--balance-by",
                "bias_type",
            ]
        )
        == 0
    )
    doc = json.loads((out / "report.json").read_text())
    crows = next(s for s in doc["sections"] if s["key"] == "crows/CrowS-Pairs/tiny-bert")["data"]
    assert crows["summary"]["metric_score"] == g1["summary"]["metric_score"]
    assert crows["metric"]["ci"]["n_resamples"] == 100
    assert any(s["key"].startswith("balanced/") for s in doc["sections"])
    assert "51.33" in (out / "report.md").read_text()


def test_cli_report_incomplete_scores_is_an_error(crows_csv, tmp_path, capsys):
    scores = tmp_path / "s.csv"
    scores.write_text("sentence_id,score\ncrows:0:more,-1.0\ncrows:0:less,-2.0\n")
    assert (
        main(
            [
                "report",
                "--benchmark",
                "crows-pairs",
                "--data",
                str(crows_csv),
                "--scores",
                str(scores),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "3014 sentence id(s)" in err and not (tmp_path / "o").exists()


def test_cli_report_takes_model_and_method_from_score_file_provenance(crows_csv, golden_dir, tmp_path, capsys):
    g1 = load_golden(golden_dir, "g1_crows_metric__tiny-bert.json")
    records = []
    for p in g1["pairs"]:
        records.append({"sentence_id": f"crows:{p['id']}:more", "score": p["sent_more_score"], "n_tokens": 1})
        records.append({"sentence_id": f"crows:{p['id']}:less", "score": p["sent_less_score"], "n_tokens": 1})
    scores = tmp_path / "scores.json"
    prov = {"model": {"id": "tiny-bert", "revision": "r1"}, "method": {"name": "crows-nangia"}}
    scores.write_text(json.dumps({"records": records, "provenance": prov}))
    out = tmp_path / "r"
    assert (
        main(
            [
                "report",
                "--benchmark",
                "crows-pairs",
                "--data",
                str(crows_csv),
                "--scores",
                str(scores),
                "--out",
                str(out),
                "--bootstrap",
                "50",
            ]
        )
        == 0
    )
    doc = json.loads((out / "report.json").read_text())
    assert doc["provenance"]["model"] == {"id": "tiny-bert", "revision": "r1"}
    assert doc["provenance"]["method"] == "crows-nangia" and doc["provenance"]["scores_provenance"] == prov
    assert [s["key"] for s in doc["sections"][:2]] == ["results", "crows/CrowS-Pairs/tiny-bert"]
    assert doc["results"][0]["method"] == "crows-nangia" and doc["results"][0]["model"] == "tiny-bert"


@pytest.mark.parametrize("opt, message", [(["--bootstrap", "0"], "n_resamples"), (["--ci-level", "95"], "level")])
def test_cli_report_bad_bootstrap_options(crows_csv, tmp_path, capsys, opt, message):
    assert (
        main(
            [
                "report",
                "--benchmark",
                "crows-pairs",
                "--data",
                str(crows_csv),
                "--scores",
                str(tmp_path / "none.csv"),
                "--out",
                str(tmp_path / "o"),
                *opt,
            ]
        )
        == 2
    )
    assert message in capsys.readouterr().err


def test_html_is_made_for_reading(tmp_path):
    """Contents, right-aligned numbers only, rendered code spans, the options as a table, folded details."""
    from stereoset_eval.analysis.report_model import Report, Section, Table

    report = make_report(tmp_path)
    page = write_report(report, tmp_path / "out")["html"].read_text(encoding="utf-8")
    assert '<nav class="toc">' in page and 'href="#stereoset-official/toy-model"' in page
    assert '<td class="num">' in page and '<td class="num">toy-model' not in page
    assert "<code>" in page and "`" not in page.split("<pre>")[0]  # code spans rendered above the raw JSON
    assert "<summary>options (" in page and "<code>bootstrap.seed</code>" in page  # one row per setting, dotted
    study = Report("a study", (Section("table4", "Table 4", tables=(Table("t", ("a",), (("1",),)),)),
                               Section("crows/CrowS-Pairs/m", "CrowS-Pairs — m")), report.provenance)
    folded = write_report(study, tmp_path / "study2")["html"].read_text(encoding="utf-8")
    assert '<details class="section" id="crows/CrowS-Pairs/m">' in folded and '<section id="table4">' in folded


def test_ss_bars_are_centred_on_the_ideal_and_survive_an_interval_without_its_point():
    import io

    import matplotlib.image as mpimg

    from stereoset_eval.analysis.report_plots import score_bars

    png = score_bars(["a", "b", "c"], [0.0, 50.0, 61.0], [2.0, 40.0, None], [5.0, 60.0, None],
                     ideal=50.0, title="ss", xlabel="ss (%)")  # a's interval lies above its value
    assert mpimg.imread(io.BytesIO(png), format="png").shape[0] > 100


def test_html_cells_align_by_kind_and_numeric_columns_head_right():
    """Numbers right (their heading too), text left, the missing-value dash centred — never right like a number."""
    from stereoset_eval.analysis.report_html import cell_class, html_table
    from stereoset_eval.analysis.report_model import Table

    assert [cell_class(c) for c in ("58.42 [49.47, 66.49]", "0 (perm. 0.33)", "12.5%", "–", "—", "", "tiny-bert",
                                    "undefined")] == ["num", "num", "num", "missing", "missing", "missing", "text",
                                                      "text"]
    page = html_table(Table("t", ("model", "ss", "note"), (("a", "50.00", "–"), ("b", "–", "undefined"))))
    assert '<th>model</th><th class="num">ss</th><th>note</th>' in page
    assert '<td>a</td><td class="num">50.00</td><td class="missing">–</td>' in page
    assert '<td class="missing">–</td><td>undefined</td>' in page


def test_fixed_axis_spans_around_the_ideal():
    from stereoset_eval.analysis.report_plots import _span_around

    assert _span_around(50.0, [45.0, 55.0]) == 10.0
    assert _span_around(50.0, [41.0, 62.0]) == 25.0  # not zoomed to 12.6: one of the fixed steps
    assert _span_around(50.0, [0.0, 99.0], limit=50.0) == 50.0
    assert _span_around(50.0, [50.0]) == 10.0


def test_scatter_draws_the_intervals():
    from stereoset_eval.analysis.report_plots import benchmark_scatter

    kw = dict(xlabel="x", ylabel="y", title="t")
    plain = benchmark_scatter([45.0, 55.0, 60.0], [40.0, 52.0, 58.0], ["a", "b", "c"], **kw)
    with_ci = benchmark_scatter([45.0, 55.0, 60.0], [40.0, 52.0, 58.0], ["a", "b", "c"],
                                x_ci=[(40.0, 50.0), None, (55.0, 66.0)], y_ci=[(35.0, 45.0), (50.0, 54.0), None], **kw)
    a = mpimg.imread(io.BytesIO(plain), format="png")
    b = mpimg.imread(io.BytesIO(with_ci), format="png")
    assert a.shape == b.shape and (abs(a - b) > 0.1).any()  # whiskers drawn, same fixed axes


def test_per_group_ss_has_its_own_interval_in_numbers_table_and_plot():
    from stereoset_eval.analysis.report_sections import balanced_section

    items = [pair_item(f"a{i}", dimension="A") for i in range(12)] + [pair_item(f"b{i}", dimension="B") for i in range(8)]
    scores = {}
    for k, it in enumerate(items):
        scores.update(pair_scores(it.id, 0.0, -1.0) if k % 3 else pair_scores(it.id, -1.0, 0.0))
    res = balanced_ss_with_ci(items, scores, config=BootstrapConfig(n_resamples=200, seed=1))
    for g, stat in res.groups.items():
        assert stat.ci is not None and stat.ci.low <= stat.ss <= stat.ci.high, g
        assert stat.ci.resample_unit == "pairs of the dimension group"
    assert res.groups["A"].ci != res.groups["B"].ci
    assert res.to_dict()["groups"]["A"]["ci"]["low"] == res.groups["A"].ci.low
    section = balanced_section(res, model="m", benchmark="pairs")
    row_a = next(r for r in section.tables[0].rows if r[0] == "A")
    assert row_a[3] == f"{res.groups['A'].ss:.2f} [{res.groups['A'].ci.low:.2f}, {res.groups['A'].ci.high:.2f}]"
    again = balanced_ss_with_ci(items, scores, config=BootstrapConfig(n_resamples=200, seed=1))
    assert again.groups == res.groups  # seeded


def test_balance_table_keeps_ci_columns_for_its_scatters():
    from stereoset_eval.analysis.report_build import _cis

    rows = pd.DataFrame({"model": ["a", "b", "c"], "x_pre": [40.0, 50.0, 60.0], "y_pre": [45.0, 52.0, 58.0],
                         "x_post": [41.0, 49.0, 61.0], "y_post": [44.0, 53.0, 57.0],
                         "x_pre_low": [35.0, 45.0, None], "x_pre_high": [45.0, 55.0, None]})
    bt = balance_table(rows)
    assert list(bt.rows.columns) == ["model", "x_pre", "y_pre", "x_post", "y_post", "x_pre_low", "x_pre_high"]
    assert _cis(bt.rows, "x_pre") == [(35.0, 45.0), (45.0, 55.0), None] and _cis(bt.rows, "y_pre") == [None] * 3
    assert len(balance_table_section(bt).figures) == 2


def test_provenance_says_only_the_english_columns_of_the_ptbr_file_are_read():
    from stereoset_eval.analysis.report_markdown import provenance_lines

    lines = provenance_lines({"data_files": [{"path": "d/stereoset_dev_ids_ptbr_llm.csv", "sha256": "x"},
                                             {"path": "d/crows.csv", "sha256": "y"}]})
    files = [line for line in lines if line.startswith("- file:")]
    assert "only its English columns are read" in files[0] and "`sentence_id`" in files[0]
    assert "English" not in files[1]
