"""Plots for reports, rendered to PNG bytes with matplotlib's Agg canvas.

The object-oriented API is used (``matplotlib.figure.Figure`` + ``FigureCanvasAgg``), so the
global pyplot backend is never touched. PNG metadata is fixed, so equal data gives equal bytes.
Every plot has a title, axis labels with units, and the ideal value drawn as a dashed line.
"""

from __future__ import annotations

import io
from typing import Mapping, Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as MplFigure

DPI = 100
IDEAL_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.2}


def _png(fig: MplFigure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


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
    """Horizontal bars with CI whiskers and the ideal value as a dashed vertical line."""
    n = len(labels)
    fig = MplFigure(figsize=(7.0, 1.2 + 0.38 * n))
    ax = fig.add_subplot()
    ypos = list(range(n))[::-1]
    ax.barh(ypos, values, color="#4C72B0", alpha=0.85)
    with_ci = [i for i in range(n) if lows[i] is not None and highs[i] is not None]
    if with_ci:  # whiskers only where an interval exists
        ax.errorbar(
            [values[i] for i in with_ci],
            [ypos[i] for i in with_ci],
            # max(0, ·): a CI equal to the value (every resample alike) can differ from it by float noise
            xerr=[[max(0.0, values[i] - lows[i]) for i in with_ci], [max(0.0, highs[i] - values[i]) for i in with_ci]],
            fmt="none",
            ecolor="#333333",
            elinewidth=1,
            capsize=3,
            label="CI",
        )
    ax.axvline(ideal, label=f"ideal = {ideal:g}", **IDEAL_STYLE)
    ax.set_yticks(ypos)
    ax.set_yticklabels(labels)
    top = max([100.0] + [h for h in highs if h is not None] + list(values))
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
    """One point per model, labelled; dashed lines at the ideal value of each axis."""
    fig = MplFigure(figsize=(6.5, 5.5))
    ax = fig.add_subplot()
    ax.scatter(x, y, color="#C44E52", zorder=3)
    for xi, yi, lab in zip(x, y, labels):
        ax.annotate(lab, (xi, yi), textcoords="offset points", xytext=(4, 3), fontsize=7)
    if ideal is not None:
        ax.axvline(ideal, label=f"ideal = {ideal:g}", **IDEAL_STYLE)
        ax.axhline(ideal, **IDEAL_STYLE)
        ax.legend(loc="best", fontsize=8)
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
