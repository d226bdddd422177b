"""Cross-field checks of a study configuration: unique names, known references, values in range.

Run on every parsed config and again after command-line overrides, before any data is read
or any model is loaded.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from stereoset_eval.study.config_model import BENCHMARK_METHOD, MODEL_KINDS, SOURCES, UNTAGGED_RULES, StudyConfig, StudyConfigError
from stereoset_eval.foundation.limits import MAX_RESAMPLES
from stereoset_eval.foundation.errors import StereosetEvalError

MAX_LIMIT = 10_000_000

def validate(c: StudyConfig) -> None:
    """Cross-field checks: names unique, references known, values in range."""
    from stereoset_eval.analysis.benchmarks import BENCHMARKS, benchmark_for_source, source
    from stereoset_eval.analysis.pair_metrics import TIE_RULES
    from stereoset_eval.scoring.methods import METHODS

    where = c.source
    if not c.models:
        raise StudyConfigError(where, "models", "the study needs at least one model ([[models]] id = ...)")
    if not c.benchmarks:
        raise StudyConfigError(where, "benchmarks", "the study needs at least one benchmark ([[benchmarks]])")
    for label, names in (("models", [m.name for m in c.models]), ("benchmarks", [b.name for b in c.benchmarks])):
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise StudyConfigError(where, label, f"duplicate name(s) {dup}; give each a distinct `name`")
    for i, m in enumerate(c.models):
        if m.kind is not None and m.kind not in MODEL_KINDS:
            raise StudyConfigError(where, f"models[{i}].kind", f"{m.kind!r} is not one of {list(MODEL_KINDS)}")
        _check_paths(where, f"models[{i}].paths", m.paths)
    names = [b.name for b in c.benchmarks]
    for i, b in enumerate(c.benchmarks):
        f = f"benchmarks[{i}]"
        if b.source not in SOURCES:
            raise StudyConfigError(where, f"{f}.source", f"{b.source!r} is not one of {sorted(SOURCES)}")
        src, family = source(b.source), benchmark_for_source(b.source)
        if not src.from_file:  # curated inside the study from another benchmark's items
            origin = c.benchmark(b.origin) if b.origin in names else None
            if origin is None or not benchmark_for_source(origin.source).curatable:
                kinds = " or ".join(s.name for x in BENCHMARKS.values() if x.curatable for s in x.sources)
                raise StudyConfigError(where, f"{f}.from", f"a {b.source} benchmark needs `from` = the name of a "
                                       f"{kinds} benchmark of this study; got {b.origin!r}")
        elif b.origin is not None:
            raise StudyConfigError(where, f"{f}.from", "only a curated benchmark has `from`")
        if src.from_file and not family.default_files and not b.data:
            raise StudyConfigError(where, f"{f}.data", f"a {b.source} benchmark needs `data` = its {b.source} "
                                                       "file (it has no default file)")
    method_lists = [("methods", c.methods)] + [
        (f"benchmarks[{i}].methods", b.methods) for i, b in enumerate(c.benchmarks) if b.methods is not None
    ]
    for label, kind_methods in method_lists:
        for kind, ms in kind_methods.items():
            for method in ms:
                if method not in METHODS:
                    raise StudyConfigError(where, f"{label}.{kind}", _unknown(method, METHODS))
                if METHODS[method].model_kind != kind:
                    raise StudyConfigError(where, f"{label}.{kind}", f"method {method!r} needs a "
                                           f"{METHODS[method].model_kind} model, not a {kind} one")
    for pname, protocol in c.protocols.items():
        for kind, method in protocol.items():
            if method != BENCHMARK_METHOD and method not in METHODS:
                raise StudyConfigError(where, f"protocols.{pname}.{kind}",
                                       _unknown(method, list(METHODS) + [BENCHMARK_METHOD]))
    for mname, opts in c.method_options.items():
        if mname not in METHODS:
            raise StudyConfigError(where, f"options.{mname}", _unknown(mname, METHODS))
        try:
            METHODS[mname].validate_options(opts)
        except StereosetEvalError as exc:
            raise StudyConfigError(where, f"options.{mname}", str(exc)) from None
    a = c.analysis
    checks = [
        ("bootstrap", a.bootstrap >= 1, "must be at least 1"),
        ("bootstrap", a.bootstrap <= MAX_RESAMPLES, f"must be at most {MAX_RESAMPLES:,} (resamples x items int64)"),
        ("seed", a.seed >= 0, "must be a non-negative integer"),
        ("ci_level", 0.0 < a.ci_level < 1.0, "must lie strictly between 0 and 1"),
        ("permutations", a.permutations >= 0, "must be 0 (none) or a positive number"),
        ("crows_ndigits", a.crows_ndigits is None or a.crows_ndigits >= 0, "must be >= 0 or \"none\""),
        ("ties", a.ties in TIE_RULES, f"must be one of {sorted(TIE_RULES)}"),
        ("untagged", a.untagged in UNTAGGED_RULES, f"must be one of {sorted(UNTAGGED_RULES)}"),
    ]
    for key, ok, problem in checks:
        if not ok:
            raise StudyConfigError(where, f"analysis.{key}", f"{problem}, got {getattr(a, key)!r}")
    for j, (x, y) in enumerate(a.compare):
        for bench in (x, y):
            if bench not in names:
                raise StudyConfigError(where, f"analysis.compare[{j}]", _unknown(bench, names, "benchmark"))
        if x == y:
            raise StudyConfigError(where, f"analysis.compare[{j}]", f"compares {x!r} with itself")
    for setting in c.run.problems():  # the scoring settings' own checks, named as [study] fields
        text = setting.text
        if setting.choices:
            *head, last = [repr(x) for x in setting.choices]
            text = f"must be {', '.join(head)} or {last}, got {setting.value!r}"
        raise StudyConfigError(where, f"study.{setting.field}", text)
    if not str(c.output).strip():
        raise StudyConfigError(where, "study.output", "is empty (it would write into the working directory); "
                                                      "give a folder such as \"runs/study\"")
    ids = [(m.id, m.revision) for m in c.models]
    dup_ids = sorted({f"{i}@{r}" if r else i for i, r in ids if ids.count((i, r)) > 1})
    if dup_ids:
        raise StudyConfigError(where, "models", f"the same model is listed twice under different names {dup_ids}; "
                                                "it would count twice in every correlation")
    if c.limit is not None and not 1 <= c.limit <= MAX_LIMIT:
        raise StudyConfigError(where, "study.limit", f"must be a positive number of items, got {c.limit}")


def _check_paths(where: str, label: str, paths: Mapping[str, str]) -> None:
    """Per-node model folders: a non-empty node name, an absolute path (a relative one would be
    relative to a worker's working folder, which nobody chooses)."""
    import posixpath

    for node, path in paths.items():
        if not str(node).strip():
            raise StudyConfigError(where, label, "has an empty node name; use a node's name "
                                   "($STEREOSET_EVAL_NODE_NAME), host name or IP address")
        if not str(path).strip():
            raise StudyConfigError(where, f"{label}.{node}", "is empty; give the model's folder on that node")
        if not posixpath.isabs(path):
            raise StudyConfigError(where, f"{label}.{node}", f"must be an absolute folder on that node, got {path!r}")


def _unknown(name: str, known: Iterable[str], kind: str = "method") -> str:
    import difflib

    names = list(known)
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {kind} {name!r}{hint}; known: {', '.join(sorted(names))}"
