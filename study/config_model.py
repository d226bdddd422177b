"""The study configuration's data model: frozen dataclasses, constants and the error type.

Pure data, importing nothing of the study package: :mod:`stereoset_eval.study.config_parse`
builds these objects from TOML, :mod:`stereoset_eval.study.config_validate` checks them, and
:mod:`stereoset_eval.study.config` (the facade users import) ties the two together, so no
import runs in a circle.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.scoring.settings import RunSettings
from stereoset_eval.analysis.benchmarks import SOURCES as BENCHMARK_SOURCES

MODEL_KINDS: tuple[str, ...] = ("masked", "causal")
#: study source -> description: asked of the benchmark registry (each benchmark declares its sources)
SOURCES = BENCHMARK_SOURCES
#: protocol value meaning "the benchmark's own method for this model kind"
BENCHMARK_METHOD = "benchmark"
UNTAGGED_RULES: dict[str, str] = {
    "exclude": "curated pairs without a dimension tag are left out of the benchmark (counted in the report)",
    "own-group": "untagged pairs form one group '(none)' in the balanced ss",
    "error": "an untagged pair is an error",
}


class StudyConfigError(StereosetEvalError, ValueError):
    """A study configuration is invalid; the message names the file and the field."""

    def __init__(self, where: str, field_name: str, problem: str) -> None:
        self.where, self.field, self.problem = where, field_name, problem
        super().__init__(f"{where}: {field_name}: {problem}")


@dataclass(frozen=True)
class ModelSpec:
    """One model of the study.

    Attributes:
        id: hub id or local folder.
        name: display name in tables (default: the folder name or the hub id).
        revision: hub revision (branch, tag or commit); None = the default branch.
        kind: ``masked`` or ``causal``; None = read from the model's config.json.
        paths: node -> absolute folder of the model's files on that node (``[models.paths]``):
            a Ray worker whose node name (``$STEREOSET_EVAL_NODE_NAME``), host name or IP is a key
            loads from that folder instead of ``id`` (docs/ray.md); empty = every node loads ``id``.
    """

    id: str
    name: str
    revision: str | None = None
    kind: str | None = None
    paths: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark of the study.

    Attributes:
        name: display name, unique in the study (``StereoSet``, ``BMNE-CrowS``, ``curated-CrowS`` …).
        source: a key of :data:`SOURCES`.
        data: manifest name or file path (``stereoset``, ``crows-pairs``, ``pairs``); None =
            the first manifest file of that benchmark found in the data directory.
        origin: for ``curated``: the name of the benchmark whose items are curated.
        bias_types: keep only these bias types (empty = all).
        methods: per model kind, the methods to run on this benchmark (overrides ``[methods]``).
        optional: when its data file can be neither found nor downloaded, the study skips it
            with a note in the report (and drops the comparisons naming it) instead of failing.
    """

    name: str
    source: str
    data: str | None = None
    origin: str | None = None
    bias_types: tuple[str, ...] = ()
    methods: Mapping[str, tuple[str, ...]] | None = None
    optional: bool = False


@dataclass(frozen=True)
class AnalysisSpec:
    """Every option of the analyses (all recorded in the report's provenance).

    Attributes:
        bootstrap / seed / ci_level: percentile-bootstrap intervals on every ss.
        ties: tie rule of pair ss and balanced ss (:data:`stereoset_eval.analysis.pair_metrics.TIE_RULES`).
        crows_ndigits: CrowS-Pairs metric: round sentence scores before comparing (metric.py: 3;
            None = compare unrounded).
        balance_by: item attribute that balanced ss weighs by (``dimension``).
        untagged: what happens to curated pairs without a tag (:data:`UNTAGGED_RULES`).
        permutations: permutation-test resamples for every Spearman ρ (exact when n! ≤ this, so
            for up to 7 models at 10,000; 0 = none). With few models the t-approximation p of
            scipy is misleading (|ρ| = 1 gets p = 0 even for three models).
        compare: pairs of benchmark names to correlate (empty = every pair).
    """

    bootstrap: int = 1000
    seed: int = 0
    ci_level: float = 0.95
    ties: str = "anti"
    crows_ndigits: int | None = 3
    balance_by: str = "dimension"
    untagged: str = "exclude"
    permutations: int = 10000
    compare: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class StudyConfig:
    """A whole study: what to score with which models, and how to analyse it.

    ``run`` holds the scoring settings (:class:`~stereoset_eval.scoring.settings.RunSettings`),
    read from the ``[study]`` fields of the same names; ``device``, ``dtype``, ``batch_tokens``
    and ``last_layer`` stay readable as attributes.
    """

    title: str
    models: tuple[ModelSpec, ...]
    benchmarks: tuple[BenchmarkSpec, ...]
    methods: Mapping[str, tuple[str, ...]]
    benchmark_methods: bool
    protocols: Mapping[str, Mapping[str, str]]
    analysis: AnalysisSpec = field(default_factory=AnalysisSpec)
    method_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    output: str = "runs/study"
    data_dir: str | None = None
    download: bool = True
    cache_dir: str | None = None
    use_cache: bool = True
    run: RunSettings = field(default_factory=RunSettings)  # [study] device, dtype, batch_tokens, last_layer, allocator
    limit: int | None = None
    source: str = "<dict>"
    #: optional benchmarks left out because their data was unavailable: (name, reason)
    skipped: tuple[tuple[str, str], ...] = ()

    device = property(lambda self: self.run.device, doc="run.device")
    dtype = property(lambda self: self.run.dtype, doc="run.dtype")
    batch_tokens = property(lambda self: self.run.batch_tokens, doc="run.batch_tokens")
    last_layer = property(lambda self: self.run.last_layer, doc="run.last_layer")

    def benchmark(self, name: str) -> BenchmarkSpec:
        for b in self.benchmarks:
            if b.name == name:
                return b
        from stereoset_eval.foundation.errors import UnknownNameError

        raise UnknownNameError("benchmark of the study", name, [b.name for b in self.benchmarks])

    def replace(self, **changes: Any) -> "StudyConfig":
        """A copy with ``changes``, not re-checked here (this module imports no checks):
        :func:`stereoset_eval.study.config.replace_config` re-validates (the CLI's overrides use
        it) and :func:`stereoset_eval.study.run.run_study` validates every config it runs."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (tuples become lists), as recorded in the provenance; the run settings
        sit at the top level, as in the file's ``[study]`` table."""
        data = dataclasses.asdict(self)
        data.update(data.pop("run"))
        return json.loads(json.dumps(data))
