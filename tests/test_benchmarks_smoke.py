"""Smoke run of the speed benchmark (``speed/``): every implementation on the fixture models.

A few sentences, one timed run, in-process: checks the machinery (the JSON document's shape,
the Markdown tables) and — the part that matters — that every implementation computes the same
numbers as ours (max |Δ| within the float32 tolerance). Timings themselves are not asserted.
The minicons parts skip with a reason when the optional ``bench`` extra is not installed.
"""

from __future__ import annotations

import doctest
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("torch")

from speed import inputs, report, specs  # noqa: E402
from speed.impls import floor, reference_loop  # noqa: E402
from speed.cell import CellSpec, InlineWorker, ProcessWorker  # noqa: E402
from speed.impls.minicons_pll import unavailable as minicons_unavailable  # noqa: E402
from speed.models import model_path  # noqa: E402
from speed import run as bench_run  # noqa: E402
from speed import process_modes  # noqa: E402
from speed.run import apply_environment, main, parse_args  # noqa: E402

MODELS = ("tiny-bert", "tiny-gpt2")
IMPL_FIELDS = {"wall_s_median", "wall_s_runs", "cpu_s_median", "cpu_s_runs", "sentences_per_s", "tokens_per_s",
               "peak_rss_mb", "load_s", "n_sentences", "threads"}


@pytest.fixture(scope="module")
def bench(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict, Path]:
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    rc = main(["--smoke", "--isolation", "inline", "--threads", "1", "--models", *MODELS, "--out", str(out),
               "--data-dir", str(shared_dir / "data"), "--fixtures-dir", str(shared_dir / "fixtures" / "models")])
    return rc, json.loads(out.read_text(encoding="utf-8")), out


def test_exit_code_and_files(bench: tuple[int, dict, Path]) -> None:
    rc, doc, out = bench
    assert rc == 0
    md = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "| model | method | data | ours wall s" in md and "random weights" in md


def test_document_shape(bench: tuple[int, dict, Path]) -> None:
    _, doc, _ = bench
    assert doc["schema"] == "stereoset-eval-benchmark/1"
    assert {"machine", "versions", "settings", "implementations", "results", "targets", "notes"} <= set(doc)
    assert doc["settings"]["repeats"] == 1 and doc["settings"]["smoke"] is True
    got = {(r["model"], r["method"]) for r in doc["results"]}
    want = {(m, meth) for m in MODELS for meth in specs.MODELS[m].methods}
    assert got == want | {("tiny-bert", "study")}  # the study row: masked fixture models
    for r in doc["results"]:
        if r["method"] == "study":
            continue
        assert r["n_sentences"] > 0 and r["scored_tokens"] > 0
        for name in ("ours", "reference-loop", "floor"):
            entry = r["implementations"][name]
            assert entry["status"] == "ok", (r["model"], r["method"], name, entry)
            assert IMPL_FIELDS <= set(entry)
            assert entry["n_sentences"] == r["n_sentences"]
        assert {"speedup_vs_reference_loop", "ours_over_floor"} <= set(r["ratios"])


def test_study_row_equals_separate_runs_and_shares_rows(bench: tuple[int, dict, Path]) -> None:
    _, doc, _ = bench
    (row,) = [r for r in doc["results"] if r["method"] == "study"]
    assert row["numbers_agree"] is True and row["ratios"]["study_over_pll"] > 0
    extra = row["implementations"]["ours-study"]["extra"]
    assert set(extra["max_abs_diff_vs_alone"]) == set(specs.STUDY_METHODS)
    assert all(d <= 1e-4 for d in extra["max_abs_diff_vs_alone"].values())
    rows = extra["forward_rows"]
    assert rows["crows-nangia"]["in_study"] == 0 < rows["crows-nangia"]["alone"]  # all read from pll's rows
    assert sum(v["in_study"] for v in rows.values()) < sum(v["alone"] for v in rows.values())
    # the study's rounds are split like ours' (its three methods' time in the model, then host work)
    study, alone_pll = row["implementations"]["ours-study"], row["implementations"]["ours"]
    assert len(study["model_s_runs"]) == len(study["host_s_runs"]) == study["rounds"]
    assert row["ratios"]["study_model_over_pll_model"] == pytest.approx(
        study["model_s_median"] / alone_pll["model_s_median"])


def test_study_floor_runs_the_studys_distinct_inputs_once(bench: tuple[int, dict, Path]) -> None:
    """The study row's floor runs the three methods' distinct inputs together, the rows ours' study
    runs (each masked input once), and gives pll's numbers; the study's lowest reachable time over
    pll alone is reported, and is the target's best reachable value."""
    _, doc, out = bench
    (row,) = [r for r in doc["results"] if r["method"] == "study"]
    floor_entry = row["implementations"]["study-floor"]
    assert floor_entry["status"] == "ok" and floor_entry["agrees"] is True and floor_entry["max_abs_diff"] <= 1e-4
    in_study = row["implementations"]["ours-study"]["extra"]["forward_rows"]
    assert floor_entry["extra"]["forward_rows"] == sum(v["in_study"] for v in in_study.values())
    # one memo for the three methods, as ours' study shares one: each sentence is encoded once (with
    # word ids, for pll), and the other two methods read their ids from it
    (pll_cell,) = [r for r in doc["results"] if r["model"] == row["model"] and r["method"] == "pll"]
    assert floor_entry["extra"]["tokenized_texts"] == pll_cell["implementations"]["floor"]["extra"]["tokenized_texts"]
    q, alone = row["ratios"], row["implementations"]["ours"]["wall_s_median"]
    lowest = floor_entry["wall_s_median"] + floor_entry["extra"]["tokenize_wall_s_median"]
    assert q["study_lowest_reachable_over_pll"] == pytest.approx(lowest / alone)
    assert q["study_over_lowest_reachable"] == pytest.approx(row["implementations"]["ours-study"]["wall_s_median"] / lowest)
    (target,) = [t for t in doc["targets"] if t["target"].startswith(f"{row['model']} study")]
    assert target["lowest_reachable"] == q["study_lowest_reachable_over_pll"]
    md = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "| lowest reachable / pll | study / lowest reachable |" in md


def test_ours_rounds_are_split_into_the_model_and_host_work(bench: tuple[int, dict, Path]) -> None:
    """Each of ours' rounds is split into its seconds in the model (the run's ``launch_s`` + ``read_s``)
    and the rest, its host work; the split is compared with the floor, cell by cell, in its own table."""
    _, doc, out = bench
    md = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "| ours in the model / floor |" in md
    for r in doc["results"]:
        if r["method"] == "study":
            continue
        ours = r["implementations"]["ours"]
        assert len(ours["model_s_runs"]) == len(ours["host_s_runs"]) == ours["rounds"]
        for wall, model, host in zip(ours["wall_s_runs"], ours["model_s_runs"], ours["host_s_runs"]):
            assert 0 < model < wall and host == pytest.approx(wall - model, abs=1e-6)
        assert r["ratios"]["ours_model_over_floor"] == pytest.approx(
            ours["model_s_median"] / r["implementations"]["floor"]["wall_s_median"])
        assert f"| {r['model']} | {r['method']} | {ours['wall_s_median']:.3g} |" in md
        assert "model_s_runs" not in r["implementations"]["floor"]  # only ours reports its run's split


def test_floor_times_the_tokenizing_of_every_distinct_text_apart(bench: tuple[int, dict, Path], shared_dir: Path) -> None:
    _, doc, out = bench
    by = {(r["model"], r["method"]): r for r in doc["results"]}
    for (model, method), r in by.items():
        if method == "study":
            continue
        floor_entry = r["implementations"]["floor"]
        extra = floor_entry["extra"]
        assert extra["tokenize_rounds"] == floor_entry["rounds"] and extra["tokenize_wall_s_median"] > 0
        bound = r["ratios"]["floor_with_tokenizing_over_floor"]
        assert bound == pytest.approx((floor_entry["wall_s_median"] + extra["tokenize_wall_s_median"])
                                      / floor_entry["wall_s_median"])
    # pll encodes each distinct sentence once, with word ids; stereoset-causal without special tokens
    slices = doc["settings"]["slices"]["fixture"]
    for model, method, dataset, kind in (("tiny-bert", "pll", "crows-pairs", "words"),
                                         ("tiny-gpt2", "stereoset-causal", "stereoset-intra", "False")):
        items = inputs.load_slice(shared_dir / "data", dataset, slices[dataset])
        texts = {s.text for item in items for s in item.sentences}
        assert by[(model, method)]["implementations"]["floor"]["extra"]["tokenized_texts"] == {kind: len(texts)}
    md = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "(floor + tokenizing) / floor" in md and "lowest reachable" in md


def test_a_target_below_its_lowest_reachable_value_says_so() -> None:
    rows = report.targets_table([report._target("x within 1.3x", 2.9, "<=", 1.3, True, lowest=1.4),
                                 report._target("y within 1.3x", 1.2, "<=", 1.3, True, lowest=1.05),
                                 report._target("z", 1.0, "<=", 1.3, None)]).splitlines()
    assert rows[2].endswith("| NO | 1.40 (threshold below it) | — |")
    assert rows[3].endswith("| yes | 1.05 | — |") and rows[4].endswith("| yes | — | — |")


def test_all_implementations_agree_with_ours(bench: tuple[int, dict, Path]) -> None:
    _, doc, _ = bench
    for r in doc["results"]:
        assert r["numbers_agree"] is True, (r["model"], r["method"], r["implementations"])
        atol, rtol = specs.TOLERANCE[r["method"]]
        for name, entry in r["implementations"].items():
            if name != "ours" and entry["status"] == "ok":
                assert entry["missing"] == 0 and entry["n_compared"] == r["n_sentences"]
                assert entry["max_abs_diff"] <= atol + rtol * 1e3, (r["method"], name, entry["max_abs_diff"])


def test_minicons_agrees_with_ours(bench: tuple[int, dict, Path]) -> None:
    reason = minicons_unavailable()
    _, doc, _ = bench
    pll = [r for r in doc["results"] if r["method"] in ("pll", "pll-word-l2r")]
    assert pll
    if reason is not None:
        assert all(r["implementations"]["minicons"]["status"] == "skipped" for r in pll)
        pytest.skip(reason)
    for r in pll:
        entry = r["implementations"]["minicons"]
        assert entry["status"] == "ok" and entry["agrees"], entry
        assert entry["max_abs_diff"] <= 1e-4
        assert "speedup_vs_minicons" in r["ratios"]


def test_random_init_model_is_built_deterministically_and_agrees(shared_dir: Path, tmp_path: Path) -> None:
    """The random-init builder on a tiny config (same weights twice), and both worker kinds on it."""
    spec = specs.ModelSpec("tiny-random-bert", "masked", "random-init", "fixture", "tiny-bert", seed=3,
                           config=("BertConfig", {"vocab_size": 2000, "hidden_size": 32, "num_hidden_layers": 1,
                                                  "num_attention_heads": 2, "intermediate_size": 64,
                                                  "max_position_embeddings": 128,
                                                  "architectures": ["BertForMaskedLM"]}))
    fixtures = shared_dir / "fixtures" / "models"
    first = model_path(spec, fixtures_dir=fixtures, cache_dir=tmp_path / "a")
    second = model_path(spec, fixtures_dir=fixtures, cache_dir=tmp_path / "b")
    marker = json.loads((first / "BENCH_MODEL.json").read_text(encoding="utf-8"))
    assert marker["weights"].startswith("random-init")
    assert (first / "model.safetensors").read_bytes() == (second / "model.safetensors").read_bytes()
    cells = {}
    for impl, worker_cls in (("ours", InlineWorker), ("reference-loop", InlineWorker), ("floor", ProcessWorker)):
        worker = worker_cls(CellSpec(impl=impl, model=spec.name, model_path=str(first), kind="masked",
                                     method="crows-nangia", dataset="crows-pairs", data_dir=str(shared_dir / "data"),
                                     n_items=2, warmup_items=1, threads=1, batch_tokens=8192,
                                     minicons_batch_size=32))
        assert worker.wait_ready()["status"] == "ready", worker.state
        assert [worker.run_once()["status"] for _ in range(2)] == ["ok", "ok"]
        cells[impl] = worker.finish()
        assert cells[impl]["status"] == "ok", cells[impl]
        assert len(cells[impl]["timing"]["wall_s_runs"]) == 2 and len(cells[impl]["timing"]["warmup_wall_s"]) == 1
    # the worker process tokenizes under the parent's TOKENIZERS_PARALLELISM (what users get), not a fixed one
    assert cells["floor"]["tokenizers_parallelism"] == os.environ.get("TOKENIZERS_PARALLELISM")
    result = report.combine({"name": spec.name, "origin": spec.origin, "note": "", "kind": "masked"},
                            "crows-nangia", "crows-pairs[:2]", cells, cells["ours"]["scored_tokens"])
    assert result["numbers_agree"] is True
    assert result["implementations"]["floor"]["tokenizers_parallelism"] == os.environ.get("TOKENIZERS_PARALLELISM")
    assert result["implementations"]["floor"]["peak_rss_mb"] > 0  # measured in its own process


@pytest.mark.parametrize(("given", "inherited", "expected"), [
    ([], None, None), ([], "true", "true"),  # inherit (default): unset stays unset, the user's value stays
    (["--tokenizers-parallelism", "false"], None, "false"), (["--tokenizers-parallelism", "true"], "false", "true"),
])
def test_tokenizers_parallelism_option_sets_what_workers_inherit(given: list[str], inherited: str | None,
                                                                 expected: str | None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TOKENIZERS_PARALLELISM", "OMP_WAIT_POLICY", "ONEDNN_PRIMITIVE_CACHE_CAPACITY",
                 "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
        monkeypatch.setenv(name, "")  # recorded, so monkeypatch restores each after the test
        monkeypatch.delenv(name)
    if inherited is not None:
        monkeypatch.setenv("TOKENIZERS_PARALLELISM", inherited)
    apply_environment(parse_args(given))
    assert os.environ.get("TOKENIZERS_PARALLELISM") == expected


def test_a_failing_worker_is_reported_not_raised(tmp_path: Path) -> None:
    spec = CellSpec(impl="ours", model="missing", model_path=str(tmp_path / "no-model"), kind="masked",
                    method="pll", dataset="crows-pairs", data_dir=str(tmp_path), n_items=1, warmup_items=0,
                    threads=1, batch_tokens=64, minicons_batch_size=1)
    worker = InlineWorker(spec)
    assert worker.wait_ready()["status"] == "error"
    assert worker.finish()["status"] == "error"


@pytest.mark.parametrize(("method", "value", "ours", "ok"), [
    ("pll", -40.0, -40.0, True),
    ("pll", -40.00009, -40.0, True),         # within atol
    ("pll", -400.003, -400.0, True),         # within rtol * |ours|
    ("pll", -40.01, -40.0, False),
    ("crows-nangia", -12.3456, -12.3457, True),
    ("stereoset-mlm", 1.000005e-3, 1e-3, True),
    ("stereoset-mlm", 1.0001e-3, 1e-3, False),
    ("stereoset-causal", 2.0e-5, 2.1e-5, False),
])
def test_tolerance_table(method: str, value: float, ours: float, ok: bool) -> None:
    assert specs.within_tolerance(method, value, ours) is ok


def test_agreement_counts_missing_and_extra_sentences() -> None:
    got = report.agreement("pll", {"a": -1.0, "x": -2.0}, {"a": -1.0, "b": -3.0})
    assert got["missing"] == 2 and got["agrees"] is False and got["n_compared"] == 1


def test_reference_loop_autograd_modes_compute_the_same_numbers(shared_dir: Path) -> None:
    """metric.py's autograd-on loop (the default) and the inference-mode loop give identical scores."""
    got = {}
    for mode in reference_loop.REFERENCE_AUTOGRAD_MODES:
        worker = InlineWorker(CellSpec(impl="reference-loop", model="tiny-bert",
                                       model_path=str(shared_dir / "fixtures" / "models" / "tiny-bert"), kind="masked",
                                       method="crows-nangia", dataset="crows-pairs", data_dir=str(shared_dir / "data"),
                                       n_items=3, warmup_items=0, threads=1, batch_tokens=8192,
                                       minicons_batch_size=32, device="cpu", reference_autograd=mode))
        assert worker.wait_ready()["status"] == "ready", worker.state
        assert worker.session is not None and worker.session.runner.autograd is (mode == "as-reference")
        assert worker.run_once()["status"] == "ok"
        got[mode] = worker.finish()["scores"]
    assert len(got["off"]) == 6 and got["off"] == got["as-reference"]


def test_bad_reference_autograd_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="reference_autograd"):
        reference_loop.uses_autograd("crows-nangia", "sometimes")


@pytest.mark.parametrize("module", [specs, report, inputs, reference_loop, floor, bench_run, process_modes])
def test_benchmark_doctests(module: object) -> None:
    # pytest collects doctests with --ignore=benchmarks, so the benchmark's doctests run here
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0


@pytest.mark.parametrize("make_bad", ["under-a-file", "md-is-a-folder"])
def test_an_unwritable_out_is_refused_before_measuring(tmp_path: Path, make_bad: str, capsys, monkeypatch) -> None:
    """A full run takes half an hour: a --out it cannot write is refused at once, in one line, not at the end."""
    monkeypatch.setattr(bench_run, "run", lambda args: pytest.fail("measured although --out cannot be written"))
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    if make_bad == "under-a-file":
        out, named = tmp_path / "a-file" / "bench.json", f"{tmp_path / 'a-file'} is a file, not a folder"
    else:
        (tmp_path / "bench.md").mkdir()
        out, named = tmp_path / "bench.json", f"{tmp_path / 'bench.md'} is a folder"
    with pytest.raises(SystemExit) as exc:
        main(["--smoke", "--out", str(out)])
    assert exc.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and ": error: --out " in error and named in error


def test_an_out_folder_gets_a_named_file_in_it(tmp_path: Path, monkeypatch, capsys) -> None:
    """--out DIR (existing, or ending in /) writes bench-<UTC time>.json and .md in it; the tables are printed first."""
    doc = {"created_at": "2026-12-02T13:00:00+0000", "results": []}
    monkeypatch.setattr(bench_run, "run", lambda args: doc)
    monkeypatch.setattr(bench_run, "markdown", lambda d: "TABLES")
    for given, folder in ((str(tmp_path), tmp_path), (str(tmp_path / "new") + "/", tmp_path / "new")):
        assert main(["--smoke", "--out", given]) == 0
        written = folder / "bench-2026-12-02T130000Z.json"
        assert json.loads(written.read_text(encoding="utf-8")) == doc
        assert written.with_suffix(".md").read_text(encoding="utf-8") == "TABLES"
    assert capsys.readouterr().out.count("TABLES") == 2


def test_a_failed_write_after_measuring_is_one_error_line_and_the_tables_stay(tmp_path: Path, monkeypatch, capsys) -> None:
    """The disk fills during the run: the printed tables survive, and the failure is one ``error:`` line naming the file."""
    import errno

    def disk_full(path, obj):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(bench_run, "run", lambda args: {"created_at": "2026-12-02T13:00:00+0000", "results": []})
    monkeypatch.setattr(bench_run, "markdown", lambda d: "TABLES")
    monkeypatch.setattr(bench_run, "atomic_write_json", disk_full)
    assert main(["--smoke", "--out", str(tmp_path / "bench.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out.strip() == "TABLES"
    assert captured.err.count("\n") == 1 and captured.err.startswith(f"error: cannot write the results to {tmp_path / 'bench.json'}: ")
    assert "no space left" in captured.err and not (tmp_path / "bench.md").exists()


def _tiny_gpt2_rounds(shared_dir: Path, out: Path, capsys, *rounds_args: str) -> tuple[dict, dict[str, int], list[list[str]]]:
    """An inline smoke run of tiny-gpt2 with ``rounds_args``: its JSON, the timed runs per implementation
    and, from the log, each round's implementations in run order."""
    rc = main(["--smoke", "--isolation", "inline", "--threads", "1", "--models", "tiny-gpt2", "--repeats", "1",
               *rounds_args, "--out", str(out), "--data-dir", str(shared_dir / "data"),
               "--fixtures-dir", str(shared_dir / "fixtures" / "models")])
    assert rc == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    (row,) = doc["results"]
    runs = {name: len(e["wall_s_runs"]) for name, e in row["implementations"].items()}
    rounds = [line.split(": ", 1)[1] for line in capsys.readouterr().err.splitlines() if "] round " in line]
    return doc, runs, [[part.split(" ")[0] for part in line.split("; ")] for line in rounds]


def test_fixture_repeats_and_paired_order(shared_dir: Path, tmp_path: Path, capsys) -> None:
    """--fixture-repeats sets the fixture cells' rounds; each round runs ours and the floor back to back,
    in alternating order, before the slow baselines (the log lists each round's times in run order)."""
    out = tmp_path / "bench.json"
    doc, runs, order = _tiny_gpt2_rounds(shared_dir, out, capsys, "--fixture-repeats", "2")
    assert doc["settings"]["fixture_repeats"] == 2 and doc["settings"]["round_order"] == "paired"
    assert runs == {"ours": 2, "reference-loop": 2, "floor": 2}
    assert order == [["ours", "floor", "reference-loop"], ["floor", "ours", "reference-loop"]]
    assert "2 (fixture models) / 1 timed rounds" in out.with_suffix(".md").read_text(encoding="utf-8")


def test_fixture_baseline_repeats_runs_the_slow_baselines_in_the_first_rounds_only(shared_dir: Path, tmp_path: Path,
                                                                                  capsys) -> None:
    """--fixture-baseline-repeats: the reference loop runs in the first N rounds of a fixture cell, ours and
    the floor in every round; the settings and the header say so."""
    out = tmp_path / "bench.json"
    doc, runs, order = _tiny_gpt2_rounds(shared_dir, out, capsys, "--fixture-repeats", "3",
                                         "--fixture-baseline-repeats", "1")
    assert doc["settings"]["fixture_baseline_repeats"] == 1
    assert runs == {"ours": 3, "reference-loop": 1, "floor": 3}
    assert order == [["ours", "floor", "reference-loop"], ["floor", "ours"], ["ours", "floor"]]
    assert "3 (fixture models; their slow baselines 1) / 1 timed rounds" in out.with_suffix(".md").read_text(encoding="utf-8")


@pytest.mark.parametrize("argv", [["--fixture-baseline-repeats", "0"],
                                  ["--fixture-repeats", "2", "--fixture-baseline-repeats", "3"]])
def test_bad_fixture_baseline_repeats_is_refused(argv, capsys) -> None:
    with pytest.raises(SystemExit):
        parse_args(argv)
    err = capsys.readouterr().err
    assert err.splitlines()[-1].endswith("error: --fixture-baseline-repeats must be between 1 and --fixture-repeats")


def test_bad_fixture_repeats_is_refused(capsys) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--fixture-repeats", "0"])
    assert "--fixture-repeats must be >= 1" in capsys.readouterr().err


def test_bad_memory_repeats_is_refused(capsys) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--memory-repeats", "0"])
    assert capsys.readouterr().err.splitlines()[-1].endswith("error: --memory-repeats must be >= 1")
    assert parse_args([]).memory_repeats == 3


def test_process_modes_runs_every_process_in_rotating_turns(shared_dir: Path, capsys) -> None:
    """``speed.process_modes``: each implementation in its own processes, a round of each per turn,
    every process's rounds and median printed as one table."""
    rc = process_modes.main(["--model", "tiny-bert", "--method", "pll", "--processes", "1", "--rounds", "2",
                             "--items", "3", "--data-dir", str(shared_dir / "data"),
                             "--fixtures-dir", str(shared_dir / "fixtures" / "models")])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "| round | ours 1 | floor 1 |" in out and "| 2 |" in out and "| median |" in out
    assert "round 1: ours 1 " in err and "round 2: floor 1 " in err  # turn 2 starts with the floor


@pytest.mark.parametrize(("argv", "problem"), [(["--processes", "0"], "--processes must be at least 1"),
                                               (["--rounds", "0"], "--rounds must be at least 1"),
                                               (["--items", "0"], "--items must be at least 1"),
                                               (["--model", "tiny-gpt2", "--method", "pll"], "tiny-gpt2 has no method pll")])
def test_process_modes_refuses_bad_arguments_in_one_line(argv: list[str], problem: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        process_modes.parse_args(argv)
    assert exit_info.value.code == 2 and problem in capsys.readouterr().err


def test_process_modes_reports_a_worker_that_cannot_start_in_one_error_line(shared_dir: Path, tmp_path: Path,
                                                                           capsys) -> None:
    rc = process_modes.main(["--impls", "ours", "--processes", "1", "--rounds", "1", "--data-dir", str(tmp_path),
                             "--fixtures-dir", str(shared_dir / "fixtures" / "models")])
    err = capsys.readouterr().err
    assert rc == 1
    assert [line for line in err.splitlines() if line.startswith("error:")] == err.strip().splitlines()[-1:]
    assert err.strip().splitlines()[-1].startswith("error: speed.process_modes: ours 1 did not start: setup failed")


def test_a_second_timing_run_is_refused_while_one_holds_the_machine(tmp_path: Path, monkeypatch, capsys) -> None:
    """Two runs on one machine share its cores and both runs' numbers would be wrong: while one holds
    the lock, a second ``speed.run`` measures nothing and says who holds it in one ``error:`` line."""
    from speed.machine_lock import machine_lock

    lock = tmp_path / "speed.lock"
    monkeypatch.setattr(bench_run, "run", lambda args: pytest.fail("measured while another run held the machine"))
    with machine_lock(lock):  # flock: a second open file of the same path conflicts, also in this process
        assert main(["--out", str(tmp_path / "bench.json"), "--lock", str(lock)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("error: another speed.run is measuring on this machine (pid ")
    assert str(lock) in error and not (tmp_path / "bench.json").exists()


def test_a_timing_run_holds_the_lock_while_it_measures_and_frees_it_after(tmp_path: Path, monkeypatch) -> None:
    from speed.machine_lock import MachineLockError, machine_lock

    lock = tmp_path / "speed.lock"
    seen = []

    def measuring(args):
        with pytest.raises(MachineLockError, match="another speed.run is measuring"):
            with machine_lock(lock):
                pass
        seen.append(lock.read_text(encoding="utf-8"))
        return {"created_at": "2026-12-06T09:00:00+0000", "results": []}

    monkeypatch.setattr(bench_run, "run", measuring)
    monkeypatch.setattr(bench_run, "markdown", lambda d: "TABLES")
    assert main(["--out", str(tmp_path / "bench.json"), "--lock", str(lock)]) == 0
    assert len(seen) == 1 and seen[0].startswith(f"pid {os.getpid()}, started 20") and seen[0].endswith("\n")
    with machine_lock(lock):  # free again once the run is over
        pass


def test_smoke_runs_take_no_lock_and_an_unopenable_lock_is_one_error_line(tmp_path: Path, monkeypatch, capsys) -> None:
    from speed.machine_lock import machine_lock

    lock = tmp_path / "speed.lock"
    monkeypatch.setattr(bench_run, "run", lambda args: {"created_at": "2026-12-06T09:00:00+0000", "results": []})
    monkeypatch.setattr(bench_run, "markdown", lambda d: "TABLES")
    with machine_lock(lock):  # --smoke checks the machinery only: its numbers are no measurement
        assert main(["--smoke", "--out", str(tmp_path / "a.json"), "--lock", str(lock)]) == 0
    capsys.readouterr()
    assert main(["--out", str(tmp_path / "b.json"), "--lock", str(tmp_path)]) == 2  # a folder
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith(f"error: cannot open the lock file {tmp_path}: ")
    assert not (tmp_path / "b.json").exists()
