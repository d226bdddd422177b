"""Errors raised by the analysis layer; all are :class:`StereosetEvalError`, so the CLI prints one line."""

from __future__ import annotations

from typing import Iterable

from stereoset_eval.foundation.errors import StereosetEvalError


def preview(ids: Iterable[str], *, limit: int = 5) -> str:
    """``'a', 'b', 'c' … (+N more)``: the first few of ``ids`` and how many were left out."""
    ids = list(ids)
    shown = ", ".join(repr(i) for i in ids[:limit])
    more = f" … (+{len(ids) - limit} more)" if len(ids) > limit else ""
    return shown + more


class EmptyScopeError(StereosetEvalError, ValueError):
    """A metric was asked for a slice that holds no items (its value would be undefined)."""

    def __init__(self, scope: str, what: str = "items") -> None:
        self.scope = scope
        super().__init__(f"no {what} in scope {scope!r}: the metric is undefined for an empty slice")


class MissingScoresError(StereosetEvalError, KeyError):
    """Sentences of the evaluated items have no score; lists the first few ids and the count."""

    def __init__(self, missing: list[str], *, where: str = "scores") -> None:
        self.missing = missing
        super().__init__(f"{where}: no score for {len(missing)} sentence id(s): {preview(missing)}")

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return str(self.args[0])


class InvalidScoreError(StereosetEvalError, ValueError):
    """A score is not a finite number (NaN, inf, or not numeric)."""

    def __init__(self, sentence_id: str, value: object, *, where: str = "scores") -> None:
        self.sentence_id = sentence_id
        super().__init__(f"{where}: score of sentence id {sentence_id!r} is {value!r}, not a finite number")


class ItemShapeError(StereosetEvalError, ValueError):
    """An item lacks the roles or fields a metric needs (e.g. a CrowS pair given to a StereoSet metric)."""


class OptionError(StereosetEvalError, ValueError):
    """An option of a metric or report is out of range (a bootstrap level of 1.5, 0 resamples …)."""
