"""Comparing two executions of one scoring as the tool promises (docs/scoring-settings.md).

Any two executions (thread counts, executors, batch sizes, ``share_masked_inputs``) agree per
sentence within :func:`~stereoset_eval.scoring.settings.within_tolerance`; two executions on the
same number of torch threads (or both ``deterministic="on"``) agree bit for bit.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Mapping

from stereoset_eval.scoring.settings import within_tolerance


def scores_agree(ours: Mapping[str, float], theirs: Mapping[str, float], *, exact: bool, what: str = "") -> None:
    """Same sentence ids; every score equal (``exact``: ``repr``-equal) or within the tolerance."""
    assert list(ours) == list(theirs), f"{what}: other sentence ids"
    if exact:
        bad = {k: (repr(ours[k]), repr(theirs[k])) for k in ours if repr(ours[k]) != repr(theirs[k])}
        assert not bad, f"{what}: same thread count, yet {len(bad)} scores differ, e.g. {next(iter(bad.items()))}"
    bad = {k: (ours[k], theirs[k]) for k in ours if not within_tolerance(ours[k], theirs[k])}
    assert not bad, f"{what}: {len(bad)} scores outside the float32 tolerance, e.g. {next(iter(bad.items()))}"


def _score_rows(path: Path) -> dict[tuple[str, ...], float]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert rows[0] == ["model", "benchmark", "method", "sentence_id", "score"], rows[0]
    return {tuple(r[:4]): float(r[4]) if r[4] else float("nan") for r in rows[1:]}


def score_files_agree(ours: Path, theirs: Path, *, exact: bool) -> None:
    """A study's ``scores.csv`` pair: byte-identical when ``exact``, else row for row within the tolerance."""
    if exact:
        assert ours.read_bytes() == theirs.read_bytes(), f"{ours} and {theirs} differ on the same thread count"
    a, b = _score_rows(ours), _score_rows(theirs)
    scores_agree({"|".join(k): v for k, v in a.items()}, {"|".join(k): v for k, v in b.items()}, exact=False,
                 what=f"{ours.name}")


def job_threads(provenance: Mapping) -> int | None:
    """The torch thread count a job scored with (its run record)."""
    return (provenance.get("run") or {}).get("torch_threads")


def values_agree(ours: object, theirs: object, *, exact: bool) -> bool:
    """Two cached values (numbers, or lists / dicts of them) equal, or within the tolerance unless ``exact``."""
    if isinstance(ours, float) and isinstance(theirs, float):
        return repr(ours) == repr(theirs) if exact else within_tolerance(ours, theirs)
    if isinstance(ours, (list, tuple)) and isinstance(theirs, (list, tuple)):
        return len(ours) == len(theirs) and all(values_agree(a, b, exact=exact) for a, b in zip(ours, theirs))
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(values_agree(ours[k], theirs[k], exact=exact) for k in ours)
    return ours == theirs


def rows_agree(ours: Mapping[str, object], theirs: Mapping[str, object], *, exact: bool) -> None:
    """Two score caches' rows: the same keys, every value agreeing (see :func:`values_agree`)."""
    assert ours.keys() == theirs.keys(), f"{len(set(ours) ^ set(theirs))} cache keys differ"
    bad = [k for k in ours if not values_agree(ours[k], theirs[k], exact=exact)]
    assert not bad, f"{len(bad)} cached values differ, e.g. {ours[bad[0]]!r} vs {theirs[bad[0]]!r}"


def execution_counts(score_set: Any) -> dict[str, Any]:
    """A run's ``run.execution`` provenance without its wall times (the engine's ``TIMING_FIELDS``):
    the counts two executions of the same batches share."""
    from stereoset_eval.scoring.engine import TIMING_FIELDS

    return {k: v for k, v in score_set.provenance["run"]["execution"].items() if k not in TIMING_FIELDS}
