"""The benchmark registry: name -> :class:`~stereoset_eval.analysis.benchmarks.base.Benchmark`.

Everything that used to be a string-keyed table (the loader's benchmark list, the study's
sources, families and default files, the CLI's default data files, the own methods) is a
question to this registry.
"""

from __future__ import annotations

from typing import Iterator, Mapping

from stereoset_eval.analysis.benchmarks.base import Benchmark, Source
from stereoset_eval.foundation.errors import UnknownNameError
from stereoset_eval.foundation.registry import Registry

BENCHMARKS: Registry[Benchmark] = Registry("benchmark")


def register(benchmark: Benchmark) -> Benchmark:
    """Add ``benchmark`` (an instance) under its name; its study sources must be new."""
    taken = {s.name: b.name for b in BENCHMARKS.values() if b.name != benchmark.name for s in b.sources}
    clash = [s.name for s in benchmark.sources if s.name in taken]
    if clash:
        raise ValueError(f"benchmark {benchmark.name!r}: source(s) {clash} already belong to {taken[clash[0]]!r}")
    return BENCHMARKS.add(benchmark.name, benchmark)


def get_benchmark(name: str) -> Benchmark:
    """The registered benchmark ``name``; the error lists the known ones."""
    return BENCHMARKS[name]


def benchmark_for_source(source: str) -> Benchmark:
    """The benchmark whose items a study ``source`` gives."""
    for b in BENCHMARKS.values():
        if any(s.name == source for s in b.sources):
            return b
    raise UnknownNameError("benchmark source", source, sorted(SOURCES))


def source(name: str) -> Source:
    """The :class:`Source` called ``name``."""
    return next(s for s in benchmark_for_source(name).sources if s.name == name)


class _SourceDescriptions(Mapping[str, str]):
    """Live view: study source name -> description, over every registered benchmark."""

    def _all(self) -> dict[str, str]:
        return {s.name: s.description for b in BENCHMARKS.values() for s in b.sources}

    def __getitem__(self, key: str) -> str:
        return self._all()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


#: study source -> description (a live view of the registry)
SOURCES: Mapping[str, str] = _SourceDescriptions()


def descriptions() -> dict[str, str]:
    """Benchmark name -> description (``stereoset-eval ls``)."""
    return {name: b.description for name, b in BENCHMARKS.items()}
