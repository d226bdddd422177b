"""The scoring run's torch thread count and ``deterministic`` reach the stable provenance (issue 33).

The thread count splits float32 sums, so a reader of a score file or a report must see it; it
lives outside the ``run`` block, which the score file drops.
"""

from __future__ import annotations

from stereoset_eval.foundation.provenance import ReportProvenance, ScoreProvenance, build_provenance


def _runs(threads: dict[str, int], deterministic: bool = False) -> dict:
    return {part: {"model": {"id": "tiny-bert", "revision": None}, "method": {"name": "pll"},
                   "run": {"torch_threads": n, "settings": {"deterministic": "on" if deterministic else "off"}}}
            for part, n in threads.items()}


def test_score_provenance_keeps_threads_and_deterministic_in_the_stable_block():
    prov = ScoreProvenance.of_runs(_runs({"intrasentence": 4, "intersentence": 4}, deterministic=True))
    stable = prov.stable().to_dict()
    assert stable["torch_num_threads"] == 4 and stable["deterministic"] is True
    assert ScoreProvenance.from_dict(stable).torch_num_threads == 4


def test_distinct_counts_are_listed_and_unknown_is_none():
    assert ScoreProvenance.of_runs(_runs({"a": 2, "b": 1})).torch_num_threads == [1, 2]
    assert ScoreProvenance.of_runs({"a": {"model": {"id": "m"}, "method": {"name": "pll"}}}).torch_num_threads is None
    assert ScoreProvenance.of_runs(_runs({"a": 1, "b": 1}, deterministic=False)).deterministic is False


def test_a_report_reads_them_from_a_score_file_or_a_study_s_job_records():
    from_file = build_provenance(scores_provenance=ScoreProvenance.of_runs(_runs({"p": 3})).stable().to_dict(),
                                 timestamp="t")
    assert from_file["torch_num_threads"] == 3 and from_file["deterministic"] is False
    study = build_provenance(scores_provenance=_runs({"job-a": 1, "job-b": 2}, deterministic=True), timestamp="t")
    assert study["torch_num_threads"] == [1, 2] and study["deterministic"] is True
    assert ReportProvenance.from_dict(study).to_dict() == study
