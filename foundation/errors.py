"""Errors that name the file, the row and the problem, so users can fix their input."""

from __future__ import annotations

from pathlib import Path


class StereosetEvalError(Exception):
    """Base class of every error this toolkit raises on purpose."""


class DataFormatError(StereosetEvalError, ValueError):
    """A data file cannot be read as the benchmark format it claims to be.

    The message always reads ``<file>[, row N][, field F]: <problem>``.
    """

    def __init__(
        self,
        path: str | Path | None,
        problem: str,
        *,
        row: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.row = row
        self.field = field
        self.problem = problem
        where = self.path or "<input>"
        if row is not None:
            where += f", row {row}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {problem}")


class UnknownNameError(StereosetEvalError, KeyError):
    """An unknown registry name; the message lists the known ones."""

    def __init__(self, kind: str, name: str, known: list[str] | tuple[str, ...]) -> None:
        import difflib

        close = difflib.get_close_matches(name, list(known), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        self.kind, self.name, self.known = kind, name, list(known)
        super().__init__(f"unknown {kind} {name!r}.{hint} Known: {', '.join(sorted(known))}")

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return str(self.args[0])


class ChecksumError(StereosetEvalError):
    """A downloaded or local file does not match the checksum in the manifest."""
