"""Expand a study configuration into scoring jobs: one per (model, benchmark, method).

* A model's kind (``masked`` / ``causal``) is given in the config or read from its
  ``config.json`` by the scoring layer's one rule, so the right methods are chosen without loading it.
* Methods of a (model, benchmark): the benchmark's own ``methods`` table if it has one, else
  ``[methods]`` for the model's kind, plus — when ``benchmark_methods`` is on — the
  benchmark's own method (asked of the benchmark registry).
* A *protocol* names one method per model kind (e.g. ``pll`` for masked LMs with
  ``causal-ll`` for causal LMs); correlations across models are computed within a protocol,
  so every model contributes exactly one number per benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from stereoset_eval.analysis.benchmarks import benchmark_for_source
from stereoset_eval.study.config import BENCHMARK_METHOD, MODEL_KINDS, BenchmarkSpec, ModelSpec, StudyConfig
from stereoset_eval.foundation.errors import StereosetEvalError



class PlanError(StereosetEvalError, ValueError):
    """The study cannot be planned (a model's kind is unknown, a protocol has no method …)."""


@dataclass(frozen=True)
class Job:
    """One scoring run: every item of ``benchmark`` scored by ``method`` under ``model``."""

    model: ModelSpec
    kind: str
    benchmark: str
    method: str
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.model.name} | {self.benchmark} | {self.method}"


def model_kind(model: ModelSpec) -> str:
    """``masked`` or ``causal``: the config's ``kind``, else the scoring layer's one rule
    (:func:`stereoset_eval.scoring.model_info.detect_model_kind`, from config.json)."""
    if model.kind is not None:
        return model.kind
    from stereoset_eval.scoring.model_info import detect_model_kind

    try:
        return detect_model_kind(model.id, model.revision)
    except StereosetEvalError as exc:
        raise PlanError(f"{exc}; set `kind` (\"masked\" or \"causal\") for it in the study config") from None


def own_method(bench: BenchmarkSpec, kind: str) -> str | None:
    """The benchmark's own method for a model kind (None for curated pairs: they have none)."""
    return benchmark_for_source(bench.source).own_method(kind)


def methods_for(config: StudyConfig, bench: BenchmarkSpec, kind: str) -> tuple[str, ...]:
    """Methods run on ``bench`` for a model of ``kind``, own method first, no duplicates."""
    listed = bench.methods.get(kind, ()) if bench.methods is not None else config.methods.get(kind, ())
    own = own_method(bench, kind) if config.benchmark_methods and bench.methods is None else None
    return tuple(dict.fromkeys(([own] if own else []) + list(listed)))


def plan_jobs(config: StudyConfig, kinds: Mapping[str, str]) -> list[Job]:
    """All jobs, model by model (the order the local executor runs them in).

    Args:
        kinds: model name -> kind (see :func:`model_kinds`).
    """
    jobs = [
        Job(model, kinds[model.name], bench.name, method, dict(config.method_options.get(method, {})))
        for model in config.models
        for bench in config.benchmarks
        for method in methods_for(config, bench, kinds[model.name])
    ]
    missing = [m.name for m in config.models if not any(j.model.name == m.name for j in jobs)]
    if missing:
        raise PlanError(f"no method applies to model(s) {missing}: add methods for their kind under [methods]")
    return jobs


def model_kinds(config: StudyConfig) -> dict[str, str]:
    return {m.name: model_kind(m) for m in config.models}


def protocols(config: StudyConfig) -> dict[str, dict[str, str]]:
    """The study's protocols: the config's, else one per position in the method lists (+ ``benchmark``)."""
    if config.protocols:
        return {name: dict(p) for name, p in config.protocols.items()}
    out: dict[str, dict[str, str]] = {}
    if config.benchmark_methods:
        out[BENCHMARK_METHOD] = {kind: BENCHMARK_METHOD for kind in MODEL_KINDS}
    lists = {k: v for k, v in config.methods.items() if v}
    for i in range(max((len(v) for v in lists.values()), default=0)):
        proto = {k: v[min(i, len(v) - 1)] for k, v in lists.items()}
        out[" / ".join(dict.fromkeys(proto.values()))] = proto
    return out


def protocol_method(protocol: Mapping[str, str], bench: BenchmarkSpec, kind: str) -> str | None:
    """The method a protocol uses for ``bench`` and a model of ``kind`` (None: not covered)."""
    m = protocol.get(kind)
    if m == BENCHMARK_METHOD:
        return own_method(bench, kind)
    return m


def check_protocols(config: StudyConfig, kinds: Mapping[str, str], jobs: Sequence[Job]) -> list[str]:
    """Warnings for protocol methods that no job runs (those cells stay empty in the tables)."""
    run = {(j.model.name, j.benchmark, j.method) for j in jobs}
    warnings = []
    for pname, proto in protocols(config).items():
        for model in config.models:
            for bench in config.benchmarks:
                m = protocol_method(proto, bench, kinds[model.name])
                if m is not None and (model.name, bench.name, m) not in run:
                    warnings.append(f"protocol {pname!r}: {model.name} is not scored with {m} on {bench.name}")
    return warnings
