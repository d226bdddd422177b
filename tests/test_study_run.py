"""A study end to end on the three fixture models (a subset of the real data): the report, its
numbers recomputed independently from the score file, the cache on rerun, and Ray vs local."""

from __future__ import annotations

import base64
import csv
import hashlib
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from scipy import stats

from stereoset_eval.study import parse_config, run_study
from stereoset_eval.study.executors import LocalExecutor, RayExecutor
from score_tolerance import job_threads, score_files_agree, scores_agree  # tests/score_tolerance.py

# `make test` (pytest-xdist): its local Ray instance never runs beside test_study_ray_cluster.py's cluster
# (both modules on one worker: tests/conftest.py XDIST_UNITS)
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::UserWarning")]

MODELS = ("tiny-bert", "tiny-roberta", "tiny-gpt2")
LIMIT = 12


def study_config(models_dir: Path, data_dir: Path, tmp: Path, *, name: str, cache: str = "cache"):
    return parse_config({
        "study": {"title": "fixture study", "output": str(tmp / name), "cache_dir": str(tmp / cache), "limit": LIMIT},
        "data": {"dir": str(data_dir), "download": False},
        "models": [{"id": str(models_dir / m)} for m in MODELS],
        "benchmarks": [
            {"name": "StereoSet", "source": "stereoset"},
            {"name": "CrowS-Pairs", "source": "crows-pairs"},
            {"name": "curated-StereoSet", "source": "curated", "from": "StereoSet"},
            {"name": "curated-CrowS", "source": "curated", "from": "CrowS-Pairs"},
        ],
        "methods": {"masked": ["pll"], "causal": ["causal-ll"], "benchmark_methods": True},
        "protocols": {"benchmark": {"masked": "benchmark", "causal": "benchmark"},
                      "pll": {"masked": "pll", "causal": "causal-ll"}},
        "analysis": {"bootstrap": 200, "compare": [["CrowS-Pairs", "StereoSet"], ["curated-CrowS", "curated-StereoSet"]]},
    }, source="test")


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("study")


@pytest.fixture(scope="module")
def local_run(models_dir, data_dir, tmp):
    return run_study(study_config(models_dir, data_dir, tmp, name="local"), executor=LocalExecutor())


@pytest.fixture(scope="module")
def report(local_run):
    return json.loads(local_run.paths["json"].read_text(encoding="utf-8"))


def _sections(report: dict) -> dict[str, dict]:
    return {s["key"]: s for s in report["sections"]}


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_jobs_and_scores_file(local_run):
    assert len(local_run.jobs) == 17  # masked: own + pll on 2 originals, pll on 2 curated; causal: 1 + 4
    rows = _read_csv(local_run.paths["scores"])
    assert len(rows) == sum(len(r.scores) for r in local_run.results)
    assert local_run.cache_stats["hits"] + local_run.cache_stats["computed"] == len(rows)
    assert local_run.cache_stats["computed"] > 0  # a fresh cache


def test_report_has_the_bmne_paper_layout(report, local_run):
    keys = set(_sections(report))
    expected = {"overview", "table4", "table5", "figure2", "scores/benchmark", "scores/pll",
                "table6/pll/curated-CrowS-vs-curated-StereoSet"}
    assert expected <= keys
    details = {k for k in keys if k.startswith("detail/")}
    assert details == {f"detail/{j.benchmark}/{j.model.name}/{j.method}" for j in local_run.jobs}
    t4 = _sections(report)["table4"]
    assert [r[:2] for r in t4["tables"][0]["rows"]] == [
        ["benchmark", "CrowS-Pairs vs StereoSet"],
        ["pll", "CrowS-Pairs vs StereoSet"], ["pll", "curated-CrowS vs curated-StereoSet"],
    ]
    fig2 = _sections(report)["figure2"]["data"]["counts"]
    assert set(fig2) == {"curated-StereoSet", "curated-CrowS"} and all(sum(c.values()) == LIMIT for c in fig2.values())


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.images: list[dict[str, str]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" or (tag == "details" and a.get("class") == "section"):  # details: folded sections
            self.sections.append(a.get("id", ""))
        if tag == "img":
            self.images.append(a)


def test_html_report_sections_and_embedded_images(report, local_run):
    page = _Html()
    page.feed(local_run.paths["html"].read_text(encoding="utf-8"))
    from types import SimpleNamespace

    from stereoset_eval.analysis.report_layout import reading_order

    # findings first, bookkeeping folded at the end, provenance last (issue 34's reading order)
    expected = [s.key for s in reading_order(SimpleNamespace(key=s["key"]) for s in report["sections"])]
    assert [x for x in page.sections if x] == expected + ["provenance"]
    assert page.sections[0] == "leaderboard"
    n_figures = sum(len(s["figures"]) for s in report["sections"])
    # Table 6 scatters (where its ρ is defined: an undefined ρ is a table with the reason), Figure 2,
    # one plot per job
    scatters = sum(1 for s in report["sections"] if s["key"].startswith("table6") and "reason" not in s["data"])
    assert n_figures >= 1 + scatters + len(local_run.jobs)
    assert all(s["figures"] or "reason" in s["data"] for s in report["sections"] if s["key"].startswith("table6"))
    assert len(page.images) == n_figures
    for img in page.images:
        assert img["src"].startswith("data:image/png;base64,") and img["alt"]
        assert base64.b64decode(img["src"].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    md = local_run.paths["markdown"].read_text(encoding="utf-8")
    assert "## Table 4" in md and "## Figure 2" in md and "## Provenance" in md


def test_provenance_is_complete(report, local_run, models_dir, ids_csv, crows_csv):
    prov = report["provenance"]
    assert prov["tool"]["version"] and "git_commit" in prov["tool"] and prov["timestamp"]
    assert {f["path"]: f["sha256"] for f in prov["data_files"]} == {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in (ids_csv, crows_csv)}
    assert prov["score_files"][0]["sha256"] == hashlib.sha256(local_run.paths["scores"].read_bytes()).hexdigest()
    assert all(prov["libraries"][k] for k in ("python", "numpy", "scipy", "torch", "transformers"))
    extra = prov["extra"]
    for m in extra["models"]:
        weights = Path(m["id"]) / "model.safetensors"
        assert m["weight_files"] == {"model.safetensors": hashlib.sha256(weights.read_bytes()).hexdigest()}
        assert m["weights_sha256"] and m["config_sha256"]
        assert m["kind"] in ("masked", "causal") and m["tokenizer_sha256"]
    assert extra["study"]["analysis"]["bootstrap"] == 200 and extra["study"]["limit"] == LIMIT
    assert extra["benchmarks"]["curated-CrowS"]["curation"]["rules_version"]
    assert extra["executor"]["name"] == "local"
    assert set(prov["scores_provenance"]) == {j.key for j in local_run.jobs}
    for job_prov in prov["scores_provenance"].values():
        assert job_prov["method"]["options"] is not None and job_prov["method"]["reference"]
        assert job_prov["model"]["weights_sha256"] and "cache_hits" in job_prov["run"]
    assert prov["options"]["analysis"]["crows_ndigits"] == 3 and prov["options"]["protocols"]["pll"]
    assert prov["n_per_slice"]["curated-CrowS"] == LIMIT


def _scores(path: Path) -> dict[tuple[str, str, str], dict[str, float]]:
    out: dict[tuple[str, str, str], dict[str, float]] = {}
    for r in _read_csv(path):
        out.setdefault((r["model"], r["benchmark"], r["method"]), {})[r["sentence_id"]] = float(r["score"])
    return out


def _study_value(path: Path, protocol: str, model: str, bench: str, stage: str, category: str = "all") -> float:
    (row,) = [r for r in _read_csv(path) if (r["protocol"], r["model"], r["benchmark"], r["stage"], r["category"])
              == (protocol, model, bench, stage, category)]
    return float(row["value"])


def test_numbers_recomputed_independently_from_the_score_file(local_run):
    """Pair ss, balanced ss, the CrowS metric and Spearman ρ, from scores.csv and the items alone."""
    scores = _scores(local_run.paths["scores"])
    table = local_run.paths["study_scores"]
    method = {"tiny-bert": "pll", "tiny-roberta": "pll", "tiny-gpt2": "causal-ll"}
    pre, post = {}, {}
    for bench in ("curated-CrowS", "curated-StereoSet"):
        items = local_run.benchmarks[bench].items
        for model in MODELS:
            s = scores[(model, bench, method[model])]
            wins = {i.id: s[f"{i.id}:more"] > s[f"{i.id}:less"] for i in items}
            pre[(bench, model)] = 100.0 * sum(wins.values()) / len(wins)
            groups = {i.dimension for i in items}
            post[(bench, model)] = sum(100.0 * sum(wins[i.id] for i in items if i.dimension == g)
                                       / sum(1 for i in items if i.dimension == g) for g in groups) / len(groups)
            assert _study_value(table, "pll", model, bench, "pre") == pytest.approx(pre[(bench, model)], abs=1e-9)
            assert _study_value(table, "pll", model, bench, "post") == pytest.approx(post[(bench, model)], abs=1e-9)
    crows = local_run.benchmarks["CrowS-Pairs"].items
    s = scores[("tiny-bert", "CrowS-Pairs", "crows-nangia")]
    hits = sum(round(s[f"{i.id}:more"], 3) > round(s[f"{i.id}:less"], 3) for i in crows)
    assert _study_value(table, "benchmark", "tiny-bert", "CrowS-Pairs", "pre") == pytest.approx(100 * hits / len(crows))
    t4 = _sections(json.loads(local_run.paths["json"].read_text()))["table4"]["data"]["pll"]
    for stage, values in (("pre", pre), ("post", post)):
        cell = t4["curated-CrowS vs curated-StereoSet"][stage]
        xs, ys = ([values[(b, m)] for m in sorted(MODELS)] for b in ("curated-CrowS", "curated-StereoSet"))
        if cell["correlation"] is None:  # three tiny models can tie; then ρ must be reported undefined
            assert len(set(xs)) == 1 or len(set(ys)) == 1, cell["reason"]
        else:
            assert cell["correlation"]["rho"] == pytest.approx(stats.spearmanr(xs, ys).statistic, abs=1e-12)


def test_rerun_scores_nothing_and_reproduces_the_numbers(local_run, models_dir, data_dir, tmp):
    again = run_study(study_config(models_dir, data_dir, tmp, name="rerun"))
    assert again.cache_stats == {"hits": sum(len(r.scores) for r in again.results), "computed": 0}
    assert all(r.cache_stats["computed"] == 0 for r in again.results)
    assert again.paths["study_scores"].read_bytes() == local_run.paths["study_scores"].read_bytes()
    assert again.paths["scores"].read_bytes() == local_run.paths["scores"].read_bytes()
    overview = _sections(json.loads(again.paths["json"].read_text()))["overview"]
    assert overview["data"]["cache"]["computed"] == 0 and "0 computed" in overview["notes"][0]


def test_ray_executor_gives_the_same_numbers(local_run, models_dir, data_dir, tmp):
    pytest.importorskip("ray")
    config = study_config(models_dir, data_dir, tmp, name="ray", cache="ray-cache")  # fresh cache: Ray computes
    ray_run = run_study(config, executor=RayExecutor(num_cpus=2))
    assert ray_run.cache_stats["hits"] < ray_run.cache_stats["computed"]
    assert [r.job for r in ray_run.results] == [r.job for r in local_run.results]
    # the decisions behind every table: identical (no pair of the fixture is a near-tie)
    assert ray_run.paths["study_scores"].read_bytes() == local_run.paths["study_scores"].read_bytes()
    # Ray's workers run one torch thread unless OMP_NUM_THREADS says otherwise; this process runs
    # torch's default: the same bits on the same thread count, else within the float32 tolerance
    threads = {job_threads(r.provenance) for r in [*ray_run.results, *local_run.results]}
    for ours, theirs in zip(ray_run.results, local_run.results):
        # jobs of one (model, method) run in the local order, each sent the scores before it
        scores_agree(ours.scores, theirs.scores, exact=len(threads) == 1, what=ours.job.key)
    score_files_agree(ray_run.paths["scores"], local_run.paths["scores"], exact=len(threads) == 1)
    prov = json.loads(ray_run.paths["json"].read_text())["provenance"]
    assert prov["extra"]["executor"]["name"] == "ray" and prov["extra"]["executor"]["resources"]["CPU"] == 2.0


def test_scatters_carry_the_intervals(report):
    """Table 4 draws the pairs without a Table 6 (CrowS-Pairs vs StereoSet), Table 6 rows carry the CI bounds."""
    sections = _sections(report)
    t4 = sections["table4"]
    defined = [pname for pname, pairs in t4["data"].items()
               if (pairs.get("CrowS-Pairs vs StereoSet", {}).get("pre") or {}).get("correlation")]
    assert defined and [f["title"] for f in t4["figures"]] == [f"{p}: CrowS-Pairs vs StereoSet" for p in defined]
    assert all("confidence intervals" in f["alt"] for f in t4["figures"])
    t6 = [s for k, s in sections.items() if k.startswith("table6")]
    assert t6 and all(s["data"]["rows"] for s in t6)
    for s in t6:
        for row in s["data"]["rows"]:
            assert row["x_pre_low"] <= row["x_pre"] <= row["x_pre_high"]
            assert row["y_post_low"] <= row["y_post"] <= row["y_post_high"]
    scores = sections["scores/pll"]["data"]["scores"]
    groups = [r for r in scores if r["category"] != "all"]
    assert groups and all(r["low"] is not None and r["low"] <= r["value"] <= r["high"] for r in groups)


def test_leaderboard_ranks_every_model_once(report):
    board = _sections(report)["leaderboard"]
    rows = board["data"]["rows"]
    assert sorted(r["model"] for r in rows) == sorted({m["name"] for m in report["provenance"]["extra"]["models"]})
    ranked = [r for r in rows if r["rank"] is not None]
    assert ranked and [r["rank"] for r in ranked] == sorted(r["rank"] for r in ranked)
    for r in ranked:
        ss = [c["value"] for name, c in r["cells"].items() if not name.endswith(" icat")]
        assert r["mean_abs_ss_minus_50"] == pytest.approx(sum(abs(v - 50) for v in ss) / len(ss))
    assert board["tables"][0]["columns"][:2] == ["rank", "model"]
