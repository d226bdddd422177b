"""Checked access to per-sentence scores (``Mapping[sentence id, float]``) for the metrics.

Every metric looks its scores up through :func:`score_table`, so a missing id or a NaN is
always an error that names the ids — never a silently dropped item.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Iterable, Mapping

from stereoset_eval.analysis.errors import InvalidScoreError, ItemShapeError, MissingScoresError
from stereoset_eval.foundation.items import Item


def checked_score(sentence_id: str, value: object, *, where: str = "scores") -> float:
    """``value`` as a float; :class:`InvalidScoreError` for NaN, inf, booleans and non-numbers."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidScoreError(sentence_id, value, where=where)
    x = float(value)
    if not math.isfinite(x):
        raise InvalidScoreError(sentence_id, value, where=where)
    return x


def score_table(
    items: Iterable[Item], scores: Mapping[str, float], roles: tuple[str, ...], *, where: str = "scores"
) -> list[tuple[float, ...]]:
    """Per item, the scores of its sentences with ``roles`` (in that order).

    Raises:
        ItemShapeError: an item lacks one of ``roles``.
        MissingScoresError: some sentence ids have no score (all of them are listed).
        InvalidScoreError: a score is NaN, inf or not a number.
    """
    rows: list[tuple[float, ...]] = []
    missing: list[str] = []
    for item in items:
        row = []
        for role in roles:
            try:
                sid = item.sentence(role).id
            except KeyError:
                raise ItemShapeError(
                    f"item {item.id} (source {item.source}) has no {role!r} sentence; this metric needs roles {roles}"
                ) from None
            if sid not in scores:
                missing.append(sid)
                row.append(math.nan)
            else:
                row.append(checked_score(sid, scores[sid], where=where))
        rows.append(tuple(row))
    if missing:
        raise MissingScoresError(missing, where=where)
    return rows
