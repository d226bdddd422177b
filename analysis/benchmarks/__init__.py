"""Benchmarks as objects: one file per benchmark, one registry (see :mod:`.base`).

Importing this package registers the built-in benchmarks: ``stereoset``, ``crows-pairs`` and
``pairs`` (curated pair files and pairs curated inside a study), and the BMNE release's
``bmne-stereoset`` and ``bmne-crowspairs``.
"""

from stereoset_eval.analysis.benchmarks.base import Benchmark, Evaluation, EvaluationOptions, HeadlineContext, Source
from stereoset_eval.analysis.benchmarks.registry import (
    BENCHMARKS,
    SOURCES,
    benchmark_for_source,
    descriptions,
    get_benchmark,
    register,
    source,
)
# registration order = listing order (ls, study sources)
from stereoset_eval.analysis.benchmarks import stereoset  # noqa: E402,F401,I001
from stereoset_eval.analysis.benchmarks import crows_pairs  # noqa: E402,F401,I001
from stereoset_eval.analysis.benchmarks import pairs  # noqa: E402,F401,I001
from stereoset_eval.analysis.benchmarks import bmne_release  # noqa: E402,F401,I001

__all__ = [
    "BENCHMARKS",
    "SOURCES",
    "Benchmark",
    "Evaluation",
    "EvaluationOptions",
    "HeadlineContext",
    "Source",
    "benchmark_for_source",
    "descriptions",
    "get_benchmark",
    "register",
    "source",
]
