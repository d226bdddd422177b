"""The items of each benchmark of a study: load the files, curate, filter, limit.

* ``stereoset``: the intrasentence examples of a StereoSet file (official JSON, ids CSV or
  JSONL, found in the data directory or downloaded and checksum-verified from the manifest);
* ``crows-pairs``: a CrowS-Pairs file (original or revised);
* ``curated``: the pairs that :func:`stereoset_eval.curation.pipeline.curate_items` derives from another
  benchmark of the study (harmonised, gender-normalised, dimension-tagged), curated from that
  benchmark's *full* item list so that ``limit`` never changes which pairs exist;
* ``pairs``: a curated pairs file (e.g. written by ``stereoset-eval curate`` after review);
* ``bmne-stereoset`` / ``bmne-crowspairs``: the BMNE release (``teias-ai/BMNE`` at the pinned
  revision, checksum-verified), its ``category`` a human dimension tag used as is.

A benchmark marked ``optional`` whose file can be neither found nor downloaded is left out by
:func:`drop_unavailable` with its reason (shown in the report) instead of failing the study.

Filters are explicit and counted: ``bias_types``, the ``untagged`` rule for pairs without a
dimension, and ``limit`` (the first N items in file order — a quick look, not a result).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from stereoset_eval.analysis.benchmarks import Benchmark, benchmark_for_source, get_benchmark, source
from stereoset_eval.study.config import BenchmarkSpec, StudyConfig
from stereoset_eval.curation.loaders.download import fetch, manifest
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.items import Item


class BenchmarkDataError(StereosetEvalError, ValueError):
    """A benchmark of the study cannot be built (no data file, no items left after filtering …)."""


@dataclass(frozen=True)
class BenchmarkData:
    """One benchmark, ready to score.

    Attributes:
        spec: its configuration.
        items: the items to score, in file order.
        files: the data files read (their sha256 goes into the provenance).
        counts: how many items were loaded and how many each filter removed.
        curation: the curation run's provenance (curated benchmarks only).
    """

    spec: BenchmarkSpec
    items: tuple[Item, ...]
    files: tuple[Path, ...]
    counts: Mapping[str, int] = field(default_factory=dict)
    curation: Mapping[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def benchmark(self) -> Benchmark:
        """The registered benchmark its source belongs to: its metrics, sections and methods."""
        return benchmark_for_source(self.spec.source)

    @property
    def family(self) -> str:
        """The format family of its items (``stereoset``, ``crows``, ``pairs``)."""
        return self.benchmark.loader_family


def resolve_file(spec: BenchmarkSpec, *, data_dir: str | None, download: bool) -> Path:
    """The data file of ``spec``: a manifest name (found or fetched), a path, or the default files."""
    if spec.data is not None:
        if spec.data in manifest():
            return fetch(spec.data, data_directory=data_dir, download=download)
        path = Path(spec.data).expanduser()
        if not path.is_file():
            raise BenchmarkDataError(f"benchmark {spec.name!r}: data file {path} does not exist "
                                     f"(`data` is a manifest name or a file path)")
        return path
    return resolve_benchmark_file(benchmark_for_source(spec.source).name, data_dir=data_dir, download=download,
                                  label=spec.name)


def resolve_benchmark_file(benchmark: str, *, data_dir: str | Path | None, download: bool,
                           label: str | None = None) -> Path:
    """The default data file of ``benchmark``: its manifest files tried in order, local copies first, then a
    download of the first (when ``download``). Studies and the single-benchmark commands share it, so the
    offline message is the same everywhere (``label``: the study's name for the benchmark)."""
    names = get_benchmark(benchmark).default_files
    errors = []
    for name in names:  # files already present first, without downloading
        try:
            return fetch(name, data_directory=data_dir, download=False)
        except StereosetEvalError as exc:
            errors.append(str(exc))
    if download and names:
        try:
            return fetch(names[0], data_directory=data_dir, download=True)
        except StereosetEvalError as exc:
            errors.append(str(exc))
    if not names:
        errors.append("it has no default file; give its data file (--data, or `data` in a study)")
    raise BenchmarkDataError(f"benchmark {label or benchmark!r}: no data file found; " + "; ".join(errors))


def limit_items(items: Sequence[Item], limit: int | None) -> list[Item]:
    """The first ``limit`` items in file order, per task (StereoSet: both tasks stay in).

    The same selection in ``score --limit`` and in ``report`` on its scores.
    """
    if not limit:
        return list(items)
    seen: dict[str | None, int] = {}
    out = []
    for it in items:
        if seen.get(it.task, 0) < limit:
            seen[it.task] = seen.get(it.task, 0) + 1
            out.append(it)
    return out


def load_benchmark_items(benchmark: str, data: Path | None, data_dir: Path | None, *,
                         download: bool = True) -> tuple[Path, list[Item]]:
    """The data file of ``benchmark`` (``data`` or its default file) and its items."""
    path = data if data is not None else resolve_benchmark_file(benchmark, data_dir=data_dir, download=download)
    return path, get_benchmark(benchmark).load(path)


def _load_file(spec: BenchmarkSpec, path: Path) -> list[Item]:
    items = benchmark_for_source(spec.source).load(path)
    keep = source(spec.source).item_source
    return [i for i in items if i.source == keep] if keep else items


def drop_unavailable(config: StudyConfig) -> StudyConfig:
    """``config`` without its ``optional`` benchmarks whose data file is unavailable.

    Each one left out is recorded in ``skipped`` with the reason, and the comparisons naming it
    are dropped; a benchmark curated from one left out is left out too.
    """
    skipped: list[tuple[str, str]] = []
    for spec in config.benchmarks:
        if spec.optional and source(spec.source).from_file:
            try:
                resolve_file(spec, data_dir=config.data_dir, download=config.download)
            except StereosetEvalError as exc:
                skipped.append((spec.name, str(exc)))
    gone = {name for name, _ in skipped}
    for spec in config.benchmarks:
        if not source(spec.source).from_file and spec.origin in gone:
            skipped.append((spec.name, f"its origin {spec.origin!r} was left out"))
            gone.add(spec.name)
    if not skipped:
        return config
    compare = tuple(p for p in config.analysis.compare if not set(p) & gone)
    return config.replace(benchmarks=tuple(b for b in config.benchmarks if b.name not in gone),
                          analysis=dataclasses.replace(config.analysis, compare=compare),
                          skipped=config.skipped + tuple(skipped))


def _filter_bias_types(spec: BenchmarkSpec, items: list[Item]) -> list[Item]:
    if not spec.bias_types:
        return items
    present = sorted({i.bias_type for i in items})
    unknown = [b for b in spec.bias_types if b not in present]
    if unknown:
        raise BenchmarkDataError(f"benchmark {spec.name!r}: bias_types {unknown} not in the data; present: {present}")
    return [i for i in items if i.bias_type in spec.bias_types]


def _curate(spec: BenchmarkSpec, origin: list[Item]) -> tuple[list[Item], dict[str, Any]]:
    from stereoset_eval.curation.pipeline import CurationConfig, curate_items

    if len(spec.bias_types) > 1:
        raise BenchmarkDataError(f"benchmark {spec.name!r}: a curated benchmark has one bias type, "
                                 f"got {list(spec.bias_types)}")
    config = CurationConfig(bias_type=spec.bias_types[0]) if spec.bias_types else CurationConfig()
    result = curate_items(origin, config=config)
    # a study scores what the rules suggest for every item (no person has reviewed them): said in provenance
    return result.suggested_items(), {**result.provenance, "scored_set": "rule suggestions for every item "
                                      f"({result.decided_counts()['review']} of them not decided automatically)"}


def load_benchmarks(config: StudyConfig) -> dict[str, BenchmarkData]:
    """Every benchmark of ``config``, in config order (curated ones from their origin's items)."""
    full: dict[str, list[Item]] = {}  # after bias-type filtering, before limit: what curation sees
    files: dict[str, tuple[Path, ...]] = {}
    out: dict[str, BenchmarkData] = {}
    ordered = sorted(config.benchmarks, key=lambda b: not source(b.source).from_file)  # origins first
    for spec in ordered:
        counts: dict[str, int] = {}
        curation = None
        if not source(spec.source).from_file:  # curated from its origin's items
            origin = spec.origin
            assert origin is not None  # config_validate.validate refused a curated benchmark without `from`
            items, curation = _curate(spec, full[origin])
            files[spec.name] = files[origin]
            counts["origin_items"] = len(full[origin])
        else:
            path = resolve_file(spec, data_dir=config.data_dir, download=config.download)
            files[spec.name] = (path,)
            items = _load_file(spec, path)
            counts["loaded"] = len(items)
            items = _filter_bias_types(spec, items)
        counts["after_bias_types" if source(spec.source).from_file else "curated"] = len(items)
        full[spec.name] = items
        if benchmark_for_source(spec.source).balanced_by_default:
            items = _apply_untagged(spec, items, config, counts)
        if config.limit is not None:
            items = items[: config.limit]
        counts["scored"] = len(items)
        if not items:
            raise BenchmarkDataError(f"benchmark {spec.name!r}: no items left to score (counts: {counts})")
        out[spec.name] = BenchmarkData(spec, tuple(items), files[spec.name], counts, curation)
    return {b.name: out[b.name] for b in config.benchmarks}


def _apply_untagged(spec: BenchmarkSpec, items: list[Item], config: StudyConfig, counts: dict[str, int]) -> list[Item]:
    by = config.analysis.balance_by
    untagged = [i for i in items if getattr(i, by, None) in (None, "")]
    counts["untagged"] = len(untagged)
    if config.analysis.untagged == "exclude":
        return [i for i in items if getattr(i, by, None) not in (None, "")]
    return items
