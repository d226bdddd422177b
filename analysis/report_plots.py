"""Plots for reports, rendered to compressed PNG bytes with matplotlib's Agg canvas.

The object-oriented API is used (``matplotlib.figure.Figure`` + ``FigureCanvasAgg``), so the
global pyplot backend is never touched. Each PNG is reduced to a palette of :data:`PALETTE`
colours (the plots use a handful of flat colours plus their anti-aliasing): about a quarter of
the RGBA file's size, which keeps a study's self-contained report.html small. PNG metadata is
fixed, so equal data gives equal bytes.
Every plot has a title, axis labels with units, and the ideal value drawn as a dashed line.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

#: resolution of the cross-model figures (Table 4 and 6 scatters, Figure 2)
DPI = 90
#: resolution of the per-job bar charts (25 of them in the demo, folded in the page); with
#: :data:`DPI` 90 it keeps the demo's report.html under 400 KB; their text is still ~11 px high
BAR_DPI = 80
#: colours of the PNG palette: enough for the plots' flat colours and smooth anti-aliased text
PALETTE = 32
#: a palette has lost a colour when more than this share of pixels is off by more than LOST_LEVEL
LOST_SHARE = 0.0005
LOST_LEVEL = 40
IDEAL_STYLE: dict[str, Any] = {"color": "black", "linestyle": "--", "linewidth": 1.2}


def new_figure(**kw: Any) -> "MplFigure":
    """A figure on its own Agg canvas (matplotlib is imported here, when a report draws: it costs
    ~0.4 s of every command's start otherwise)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(**kw)
    FigureCanvasAgg(fig)
    return fig


def png_bytes(fig: "MplFigure", dpi: int = DPI) -> bytes:
    """The figure as a palette PNG of :data:`PALETTE` colours (Pillow's fast octree, no
    dithering; fixed metadata: equal data gives equal bytes). A palette that loses a colour —
    a small marker or bar merged into a grey: more than :data:`LOST_SHARE` of the pixels off by
    more than :data:`LOST_LEVEL` in a channel — is redone with 256 colours."""
    import numpy as np
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    image = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    small = image.quantize(colors=PALETTE, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    off = np.abs(np.asarray(image, dtype=np.int16) - np.asarray(small.convert("RGB"), dtype=np.int16)).max(axis=2)
    if (off > LOST_LEVEL).mean() > LOST_SHARE:
        small = image.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    small.save(out, format="PNG", optimize=True)
    return out.getvalue()


#: half-widths an axis centred on its ideal may take: plots of similar data share one scale
SPANS: tuple[float, ...] = (10.0, 25.0, 50.0)


def _span_around(ideal: float, points: Sequence[float], *, limit: float | None = None) -> float:
    """Half-width of an axis centred on ``ideal``: the smallest of :data:`SPANS` (then whole
    multiples of 50) that shows every point — intervals included — with a margin, capped at
    ``limit`` (ss: 50, so 0–100). Fixed steps, not a zoom onto the points, so two plots of
    similar results have the same axes and a point's distance from the ideal reads the same."""
    reach = max([0.0] + [abs(p - ideal) * 1.05 for p in points])
    span = next((s for s in SPANS if reach <= s), 50.0 * -(-reach // 50.0))
    return min(span, limit) if limit is not None else span


def _whiskers(values: Sequence[float], cis: Sequence[tuple[float, float] | None]) -> list[list[float]]:
    """errorbar's [below, above] lengths; 0 where there is no interval (or it lies on one side)."""
    return [[max(0.0, v - ci[0]) if ci else 0.0 for v, ci in zip(values, cis)],
            [max(0.0, ci[1] - v) if ci else 0.0 for v, ci in zip(values, cis)]]


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
    fig = new_figure(figsize=(7.0, 1.2 + 0.38 * n))
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
    return png_bytes(fig, BAR_DPI)


def benchmark_scatter(
    x: Sequence[float],
    y: Sequence[float],
    labels: Sequence[str],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    ideal: float | None = 50.0,
    x_ci: Sequence[tuple[float, float] | None] | None = None,
    y_ci: Sequence[tuple[float, float] | None] | None = None,
) -> bytes:
    """One point per model, labelled, with its CIs as error bars; dashed lines at the ideal of each axis.

    ``x_ci`` / ``y_ci``: one ``(low, high)`` per point, or None where it has no interval. With an
    ideal, both axes are centred on it on one fixed span (:data:`SPANS`: ±10, ±25, ±50 around
    50), so the eye reads distance from the ideal and both benchmarks on the same scale.
    """
    fig = new_figure(figsize=(5.2, 4.8))
    ax = fig.add_subplot()
    xc = list(x_ci) if x_ci is not None else [None] * len(x)
    yc = list(y_ci) if y_ci is not None else [None] * len(y)
    if any(xc) or any(yc):
        ax.errorbar(list(x), list(y), xerr=_whiskers(x, xc), yerr=_whiskers(y, yc), fmt="none", ecolor="#777777",
                    elinewidth=1, capsize=3, zorder=2, label="CI")
    ax.scatter(x, y, color="#C44E52", zorder=3)
    for xi, yi, lab in zip(x, y, labels):
        ax.annotate(lab, (xi, yi), textcoords="offset points", xytext=(4, 3), fontsize=7)
    if ideal is not None:
        ax.axvline(ideal, label=f"ideal = {ideal:g}", **IDEAL_STYLE)
        ax.axhline(ideal, **IDEAL_STYLE)
        ax.legend(loc="best", fontsize=8)
        ends = [e for ci in xc + yc if ci for e in ci]
        half = _span_around(ideal, list(x) + list(y) + ends,
                            limit=max(ideal, 100.0 - ideal) if 0 < ideal < 100 else None)
        ax.set_xlim(ideal - half, ideal + half)
        ax.set_ylim(ideal - half, ideal + half)
        ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return png_bytes(fig)


def count_bars(counts: Mapping[str, int], *, title: str, xlabel: str, ylabel: str = "items (count)") -> bytes:
    """Vertical bars of counts per category, the count printed on each bar."""
    names = list(counts)
    fig = new_figure(figsize=(max(5.0, 0.9 * len(names) + 2.0), 4.2))
    ax = fig.add_subplot()
    bars = ax.bar(range(len(names)), [counts[n] for n in names], color="#55A868")
    ax.bar_label(bars, fontsize=8)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    return png_bytes(fig, BAR_DPI)
