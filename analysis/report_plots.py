"""Plots for reports, rendered to PNG bytes with matplotlib's Agg canvas.

The object-oriented API is used (``matplotlib.figure.Figure`` + ``FigureCanvasAgg``), so the
global pyplot backend is never touched. PNG metadata is fixed, so equal data gives equal bytes.
Every plot has a title, axis labels with units, and the ideal value drawn as a dashed line.
"""

from __future__ import annotations

import io
from typing import Any, Mapping, Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as MplFigure

DPI = 100
IDEAL_STYLE: dict[str, Any] = {"color": "black", "linestyle": "--", "linewidth": 1.2}


def _png(fig: MplFigure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def _span_around(ideal: float, points: Sequence[float], *, floor: float = 10.0, limit: float | None = None) -> float:
    """Half-width of an axis centred on ``ideal`` that shows every point with a margin."""
    reach = max([floor] + [abs(p - ideal) * 1.1 for p in points])
    return min(reach, limit) if limit is not None else reach


def score_bars(
    labels: Sequence[str],
    values: Sequence[float],
    lows: Sequence[float | None],
    highs: Sequence[float | None],
    *,
    ideal: float,
    title: str,
    xlabel: str,
) -> bytes:
    """Horizontal bars with CI whiskers and the ideal value as a dashed vertical line.

    A score whose ideal lies inside the scale (ss: 50) is drawn as a bar from the ideal to the
    value on an axis centred on the ideal, so the deviation is what the eye compares and a score
    of 0 is a full bar, not an invisible one; other scores (lms, icat: ideal 100) are bars from 0.
    Every value also gets a marker, and a whisker never points inwards when an interval does not
    contain its value (a small bootstrap can give one).
    """
    n = len(labels)
    fig = MplFigure(figsize=(7.0, 1.2 + 0.38 * n))
    ax = fig.add_subplot()
    ypos = list(range(n))[::-1]
    centred = 0.0 < ideal < 100.0
    base = ideal if centred else 0.0
    ax.barh(ypos, [v - base for v in values], left=base, color="#4C72B0", alpha=0.85)
    ax.plot(values, ypos, "o", color="#1f3b66", markersize=3, zorder=3)
    with_ci = [(i, lo, hi) for i, (lo, hi) in enumerate(zip(lows, highs)) if lo is not None and hi is not None]
    if with_ci:  # whiskers only where an interval exists
        ax.errorbar(
            [values[i] for i, _, _ in with_ci],
            [ypos[i] for i, _, _ in with_ci],
            xerr=[[max(0.0, values[i] - lo) for i, lo, _ in with_ci], [max(0.0, hi - values[i]) for i, _, hi in with_ci]],
            fmt="none",
            ecolor="#333333",
            elinewidth=1,
            capsize=3,
            label="CI",
        )
    ax.axvline(ideal, label=f"ideal = {ideal:g}", **IDEAL_STYLE)
    ax.set_yticks(ypos)
    ax.set_yticklabels(labels)
    points = list(values) + [x for x in list(lows) + list(highs) if x is not None]
    if centred:
        half = _span_around(ideal, points, limit=max(ideal, 100.0 - ideal))
        ax.set_xlim(ideal - half, ideal + half)
    else:
        top = max([100.0] + points)
        ax.set_xlim(0, top * 1.02)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def benchmark_scatter(
    x: Sequence[float],
    y: Sequence[float],
    labels: Sequence[str],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    ideal: float | None = 50.0,
) -> bytes:
    """One point per model, labelled; dashed lines at the ideal value of each axis.

    With an ideal, both axes are centred on it and share one span, so the eye reads distance
    from the ideal and the two benchmarks on the same scale (no auto-zoom onto the points).
    """
    fig = MplFigure(figsize=(6.5, 5.5))
    ax = fig.add_subplot()
    ax.scatter(x, y, color="#C44E52", zorder=3)
    for xi, yi, lab in zip(x, y, labels):
        ax.annotate(lab, (xi, yi), textcoords="offset points", xytext=(4, 3), fontsize=7)
    if ideal is not None:
        ax.axvline(ideal, label=f"ideal = {ideal:g}", **IDEAL_STYLE)
        ax.axhline(ideal, **IDEAL_STYLE)
        ax.legend(loc="best", fontsize=8)
        half = _span_around(ideal, list(x) + list(y), limit=max(ideal, 100.0 - ideal) if 0 < ideal < 100 else None)
        ax.set_xlim(ideal - half, ideal + half)
        ax.set_ylim(ideal - half, ideal + half)
        ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return _png(fig)


def count_bars(counts: Mapping[str, int], *, title: str, xlabel: str, ylabel: str = "items (count)") -> bytes:
    """Vertical bars of counts per category, the count printed on each bar."""
    names = list(counts)
    fig = MplFigure(figsize=(max(5.0, 0.9 * len(names) + 2.0), 4.2))
    ax = fig.add_subplot()
    bars = ax.bar(range(len(names)), [counts[n] for n in names], color="#55A868")
    ax.bar_label(bars, fontsize=8)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)
