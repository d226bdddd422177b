"""Parsing a study file's tables into a :class:`~stereoset_eval.study.config.StudyConfig`.

Each TOML table is read through a :class:`_Reader` that checks every value's type, rejects
unknown fields (a typo never silently falls back to a default) and names the offending field
as a dotted path (``speed[2].from``) in the :class:`StudyConfigError`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping, Sequence

from stereoset_eval.study.config_model import (
    MODEL_KINDS,
    AnalysisSpec,
    BenchmarkSpec,
    ModelSpec,
    StudyConfig,
    StudyConfigError,
)
from stereoset_eval.study.config_validate import validate
from stereoset_eval.scoring.settings import RunSettings


_TYPE_NAMES: dict[type, str] = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
                                list: "a list", dict: "a table"}


class _Reader:
    """Typed access to one TOML table, with errors that name the file and the dotted field."""

    def __init__(self, table: Mapping[str, Any], where: str, prefix: str) -> None:
        if not isinstance(table, Mapping):
            raise StudyConfigError(where, prefix or "<top>", f"must be a table, got {type(table).__name__}")
        self.table, self.where, self.prefix = table, where, prefix
        self.used: set[str] = set()

    def name(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def error(self, key: str, problem: str) -> StudyConfigError:
        return StudyConfigError(self.where, self.name(key), problem)

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None, *, required: bool = False) -> Any:
        self.used.add(key)
        if key not in self.table:
            if required:
                raise self.error(key, "is required")
            return default
        value = self.table[key]
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            raise self.error(key, f"must be a number, got {value!r}")
        if not isinstance(value, kind):
            kinds = kind if isinstance(kind, tuple) else (kind,)
            raise self.error(key, f"must be {' or '.join(_TYPE_NAMES[k] for k in kinds)}, got {value!r}")
        return value

    def strings(self, key: str, default: Sequence[str] = ()) -> tuple[str, ...]:
        value = self.get(key, (list, str), list(default))
        value = [value] if isinstance(value, str) else value
        bad = [v for v in value if not isinstance(v, str) or not v]
        if bad:
            raise self.error(key, f"must be a list of non-empty strings, got {bad[0]!r}")
        return tuple(value)

    def done(self) -> None:
        unknown = sorted(set(self.table) - self.used)
        if unknown:
            known = ", ".join(sorted(self.used))
            raise self.error(unknown[0], f"unknown field (known here: {known})")


def _model_name(model_id: str) -> str:
    p = Path(model_id)
    return p.name if (model_id.startswith((".", "/", "~")) or p.exists()) and p.name else model_id


def _methods_table(r: _Reader, key: str) -> dict[str, tuple[str, ...]]:
    table = _Reader(r.get(key, dict, {}), r.where, r.name(key))
    out = {kind: table.strings(kind) for kind in MODEL_KINDS if kind in table.table}
    table.done()
    return out


def _model(raw: Any, where: str, i: int) -> ModelSpec:
    r = _Reader(raw, where, f"models[{i}]")
    model_id = r.get("id", str, required=True)
    spec = ModelSpec(
        id=model_id,
        name=r.get("name", str) or _model_name(model_id),
        revision=r.get("revision", str),
        kind=r.get("kind", str),
        paths=_paths(r),
    )
    r.done()
    return spec


def _paths(r: _Reader) -> dict[str, str]:
    """``paths`` = a table of node -> folder (strings); the values are checked by validate."""
    table = r.get("paths", dict, {})
    bad = [(k, v) for k, v in table.items() if not isinstance(v, str)]
    if bad:
        raise StudyConfigError(r.where, f"{r.name('paths')}.{bad[0][0]}",
                               f"must be a folder on that node (a string), got {bad[0][1]!r}")
    return dict(table)


def _benchmark(raw: Any, where: str, i: int) -> BenchmarkSpec:
    r = _Reader(raw, where, f"benchmarks[{i}]")
    spec = BenchmarkSpec(
        name=r.get("name", str, required=True),
        source=r.get("source", str, required=True),
        data=r.get("data", str),
        origin=r.get("from", str),
        bias_types=r.strings("bias_types"),
        methods=_methods_table(r, "methods") if "methods" in r.table else None,
        optional=r.get("optional", bool, False),
    )
    r.done()
    return spec


def _analysis(raw: Any, where: str) -> AnalysisSpec:
    r = _Reader(raw, where, "analysis")
    ndigits = r.get("crows_ndigits", (int, str), 3)
    if isinstance(ndigits, str):
        if ndigits != "none":
            raise r.error("crows_ndigits", f"must be an integer or \"none\", got {ndigits!r}")
        ndigits = None
    compare = r.get("compare", list, [])
    pairs = []
    for j, pair in enumerate(compare):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            raise r.error(f"compare[{j}]", f"must be a pair of benchmark names, got {pair!r}")
        pairs.append((pair[0], pair[1]))
    spec = AnalysisSpec(
        bootstrap=r.get("bootstrap", int, 1000),
        seed=r.get("seed", int, 0),
        ci_level=float(r.get("ci_level", (int, float), 0.95)),
        ties=r.get("ties", str, "anti"),
        crows_ndigits=ndigits,
        balance_by=r.get("balance_by", str, "dimension"),
        untagged=r.get("untagged", str, "exclude"),
        permutations=r.get("permutations", int, 10000),
        compare=tuple(pairs),
    )
    r.done()
    return spec


def parse(raw: Mapping[str, Any], *, source: str, base_dir: Path | None) -> StudyConfig:
    """Read every table of ``raw`` into a :class:`StudyConfig`, then validate it."""
    top = _Reader(raw, source, "")
    study = _Reader(top.get("study", dict, {}), source, "study")
    data = _Reader(top.get("data", dict, {}), source, "data")
    methods = _Reader(top.get("methods", dict, {}), source, "methods")
    models = [_model(m, source, i) for i, m in enumerate(top.get("models", list, []))]
    benchmarks = [_benchmark(b, source, i) for i, b in enumerate(top.get("benchmarks", list, []))]
    if base_dir is not None:
        benchmarks = [_resolve_data_path(b, base_dir) for b in benchmarks]
    protocols_raw = top.get("protocols", dict, {})
    protocols = {}
    for pname, value in protocols_raw.items():
        pr = _Reader(value, source, f"protocols.{pname}")
        protocols[pname] = {kind: pr.get(kind, str) for kind in MODEL_KINDS if kind in pr.table}
        pr.done()
    options_raw = top.get("options", dict, {})
    method_options = {}
    for mname, value in options_raw.items():
        if not isinstance(value, dict):
            raise StudyConfigError(source, f"options.{mname}", f"must be a table of option = value, got {value!r}")
        method_options[mname] = dict(value)
    limit = study.get("limit", int, 0)
    config = StudyConfig(
        title=study.get("title", str, "stereoset-eval study"),
        output=_relative_to(study.get("output", str, "runs/study"), base_dir if "output" in study.table else None),
        cache_dir=study.get("cache_dir", str),
        use_cache=study.get("use_cache", bool, True),
        run=_run_settings(study),
        limit=limit or None,
        data_dir=data.get("dir", str),
        download=data.get("download", bool, True),
        models=tuple(models),
        benchmarks=tuple(benchmarks),
        methods={kind: methods.strings(kind) for kind in MODEL_KINDS},
        benchmark_methods=methods.get("benchmark_methods", bool, True),
        protocols=protocols,
        method_options=method_options,
        analysis=_analysis(top.get("analysis", dict, {}), source),
        source=source,
    )
    for r in (study, data, methods, top):
        r.done()
    validate(config)
    return config


def _run_settings(study: _Reader) -> RunSettings:
    """The ``[study]`` fields named like :class:`RunSettings`' fields (type-checked; values are
    checked by :func:`~stereoset_eval.study.config_validate.validate`)."""
    values = {f.name: study.get(f.name, f.metadata["kind"]) for f in dataclasses.fields(RunSettings)}
    return RunSettings().replace(**{k: v for k, v in values.items() if v is not None})


def _resolve_data_path(spec: BenchmarkSpec, base_dir: Path) -> BenchmarkSpec:
    """Relative file paths in ``data`` are relative to the config file (manifest names stay)."""
    if spec.data is None or not any(sep in spec.data for sep in ("/", "\\", ".")):
        return spec
    path = Path(spec.data).expanduser()
    return dataclasses.replace(spec, data=str(path if path.is_absolute() else base_dir / path))


def _relative_to(path: str, base_dir: Path | None) -> str:
    """A relative ``study.output`` is relative to the config file, like ``data`` (None: as written)."""
    if not str(path).strip():
        return path  # empty stays empty: validation refuses it instead of writing into the config's folder
    p = Path(path).expanduser()
    return str(p if base_dir is None or p.is_absolute() else base_dir / p)
