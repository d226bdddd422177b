"""The report as data: sections of tables, figures and machine-readable results, plus provenance.

Builders (:mod:`stereoset_eval.analysis.report_sections`, :mod:`stereoset_eval.analysis.report_build`,
:mod:`stereoset_eval.study.report`) make sections;
writers (:mod:`stereoset_eval.analysis.report_json`, :mod:`stereoset_eval.analysis.report_markdown`,
:mod:`stereoset_eval.analysis.report_html`) render a :class:`Report`. A one-model report and a study of many
models are the same type: a study just holds more sections, so sections compose freely.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from stereoset_eval.analysis.results import HeadlineResult


@dataclass(frozen=True)
class Table:
    """A display table: cells are pre-formatted strings (the numbers live in ``Section.data``)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(
                    f"table {self.title!r}: row {row} has {len(row)} cells for {len(self.columns)} columns"
                )

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Figure:
    """A rendered plot (PNG bytes) with its alternative text."""

    title: str
    png: bytes
    alt: str
    caption: str = ""

    def to_dict(self) -> dict[str, Any]:
        # the image itself is embedded in the HTML page only
        return {"title": self.title, "alt": self.alt, "caption": self.caption, "png_bytes": len(self.png)}


@dataclass(frozen=True)
class Section:
    """One block of a report.

    Attributes:
        key: machine name, unique within a report (``stereoset-official/bert-base-cased``).
        title: heading.
        tables, figures, notes: what a reader sees.
        data: the full results behind the tables (JSON-serialisable), written to report.json.
    """

    key: str
    title: str
    tables: tuple[Table, ...] = ()
    figures: tuple[Figure, ...] = ()
    notes: tuple[str, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "notes": list(self.notes),
            "data": dict(self.data),
            "tables": [t.to_dict() for t in self.tables],
            "figures": [f.to_dict() for f in self.figures],
        }


@dataclass(frozen=True)
class Report:
    """A titled list of sections with one provenance block and the headline results.

    ``results`` are the benchmarks' own headline numbers
    (:meth:`~stereoset_eval.analysis.benchmarks.base.Benchmark.headline_results`): the terminal
    table, ``results.json`` and the leaderboard read them (written to report.json as ``results``).
    """

    title: str
    sections: tuple[Section, ...]
    provenance: Mapping[str, Any]
    results: tuple[HeadlineResult, ...] = ()

    def __post_init__(self) -> None:
        keys = [s.key for s in self.sections]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise ValueError(f"report {self.title!r} has duplicate section keys {dup}")

    def with_sections(self, *sections: Section) -> "Report":
        """A copy with ``sections`` appended (reports compose by concatenating sections)."""
        return dataclasses.replace(self, sections=self.sections + tuple(sections))

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "provenance": dict(self.provenance),
            "sections": [s.to_dict() for s in self.sections],
            "results": [r.to_dict() for r in self.results],
        }


def fmt(x: float | None, digits: int = 2) -> str:
    """A number for a table cell; ``–`` for a missing value."""
    return "–" if x is None else f"{x:.{digits}f}"


def fmt_ci(value: float, ci: Any, digits: int = 2) -> str:
    """``58.68 [56.52, 60.86]``, or just the value without a CI."""
    return fmt(value, digits) + ("" if ci is None else f" [{ci.low:.{digits}f}, {ci.high:.{digits}f}]")
