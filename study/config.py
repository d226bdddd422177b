"""The study configuration: a small TOML file naming models, benchmarks, methods and analyses.

:func:`load_config` reads a file, :func:`parse_config` a dict (what ``tomllib`` returns), and
:func:`default_config` the packaged ``data/default_study.toml`` that ``stereoset-eval demo``
runs. Every field is checked (:mod:`stereoset_eval.study.config_parse`: types and unknown fields;
:mod:`stereoset_eval.study.config_validate`: references and ranges) before any data is read or any
model is loaded; a bad field raises :class:`StudyConfigError` naming the file and the field. The resulting
:class:`StudyConfig` is frozen and its :meth:`~StudyConfig.to_dict` goes into the report's
provenance verbatim, so a report says exactly which study produced it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from stereoset_eval.foundation.errors import StereosetEvalError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

MODEL_KINDS: tuple[str, ...] = ("masked", "causal")
SOURCES: dict[str, str] = {
    "stereoset": "StereoSet intrasentence examples of a StereoSet data file",
    "crows-pairs": "CrowS-Pairs pairs (original or revised file)",
    "curated": "pairs curated from another benchmark of the study by the curation pipeline (dimension tags)",
    "pairs": "a curated pairs file written by `stereoset-eval curate` (e.g. after human review)",
    "bmne-stereoset": "the BMNE release's StereoSet subset (teias-ai/BMNE, config stereoset; human dimension tags)",
    "bmne-crowspairs": "the BMNE release's CrowS-Pairs subset (teias-ai/BMNE, config crowspairs; human dimension tags)",
}
#: protocol value meaning "the benchmark's own method for this model kind"
BENCHMARK_METHOD = "benchmark"
UNTAGGED_RULES: dict[str, str] = {
    "exclude": "curated pairs without a dimension tag are left out of the benchmark (counted in the report)",
    "own-group": "untagged pairs form one group '(none)' in the balanced ss",
    "error": "an untagged pair is an error",
}
DEFAULT_CONFIG = "default_study.toml"


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
    """

    id: str
    name: str
    revision: str | None = None
    kind: str | None = None


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark of the study.

    Attributes:
        name: display name, unique in the study (``StereoSet``, ``BMNE-CrowS``, ``curated-CrowS`` …).
        source: a key of :data:`SOURCES`.
        data: manifest name or file path (``stereoset``, ``crows-pairs``, ``pairs``, ``bmne-*``);
            None = the first manifest file of that benchmark found in the data directory.
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
    """A whole study: what to score with which models, and how to analyse it."""

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
    device: str = "auto"
    dtype: str | None = None
    batch_tokens: int = 8192
    last_layer: str = "scored"
    limit: int | None = None
    source: str = "<dict>"
    #: optional benchmarks left out because their data was unavailable: (name, reason)
    skipped: tuple[tuple[str, str], ...] = ()

    def benchmark(self, name: str) -> BenchmarkSpec:
        for b in self.benchmarks:
            if b.name == name:
                return b
        from stereoset_eval.foundation.errors import UnknownNameError

        raise UnknownNameError("benchmark of the study", name, [b.name for b in self.benchmarks])

    def replace(self, **changes: Any) -> "StudyConfig":
        """A copy with ``changes`` (command-line overrides), re-validated."""
        from stereoset_eval.study.config_validate import validate

        new = dataclasses.replace(self, **changes)
        validate(new)
        return new

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (tuples become lists), as recorded in the provenance."""
        return json.loads(json.dumps(dataclasses.asdict(self)))


def parse_config(raw: Mapping[str, Any], *, source: str = "<dict>", base_dir: Path | None = None) -> StudyConfig:
    """A validated :class:`StudyConfig` from parsed TOML (see :mod:`stereoset_eval.study.config_parse`).

    Args:
        raw: the parsed file.
        source: where it came from (named in errors and in the provenance).
        base_dir: folder that relative ``data`` paths of benchmarks are resolved against
            (the config file's folder); None keeps them as written.
    """
    from stereoset_eval.study.config_parse import parse

    return parse(raw, source=source, base_dir=base_dir)


def packaged_studies() -> list[str]:
    """File names of the studies shipped in ``stereoset_eval.data`` (``default_study.toml``, ``bmne_study.toml``)."""
    return sorted(p.name for p in resources.files("stereoset_eval.data").iterdir() if p.name.endswith("_study.toml"))


def load_config(path: str | Path) -> StudyConfig:
    """Read and validate a study TOML file.

    A bare name that is not a file but names a packaged study (``bmne_study.toml``) loads that
    one, so ``stereoset-eval study bmne_study.toml`` runs the BMNE paper's study as shipped.
    """
    path = Path(path)
    if not path.exists() and path.name == str(path) and path.name in packaged_studies():
        text = resources.files("stereoset_eval.data").joinpath(path.name).read_text(encoding="utf-8")
        return _parse_text(text, source=f"package data/{path.name}", base_dir=None)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StudyConfigError(str(path), "<file>", f"cannot read the study config ({exc.strerror or exc})") from None
    return _parse_text(text, source=str(path), base_dir=path.resolve().parent)


def _parse_text(text: str, *, source: str, base_dir: Path | None) -> StudyConfig:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyConfigError(source, "<toml>", f"not valid TOML ({exc})") from None
    return parse_config(raw, source=source, base_dir=base_dir)


def default_config_text() -> str:
    """The text of the packaged default study (``data/default_study.toml``)."""
    return resources.files("stereoset_eval.data").joinpath(DEFAULT_CONFIG).read_text(encoding="utf-8")


def default_config() -> StudyConfig:
    """The packaged default study: the one ``stereoset-eval demo`` runs."""
    return _parse_text(default_config_text(), source=f"package data/{DEFAULT_CONFIG}", base_dir=None)
