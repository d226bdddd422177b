"""Study plots (PNG bytes, matplotlib's Agg canvas, the global pyplot state untouched).

:func:`category_distribution` draws the BMNE paper's Figure 2: the share of each stereotype
category (dimension) in each benchmark, side by side, with the item count on each bar.
"""

from __future__ import annotations

from typing import Mapping

from stereoset_eval.analysis.report_plots import new_figure, png_bytes

COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860")


def category_distribution(counts: Mapping[str, Mapping[str, int]], *, title: str, xlabel: str) -> bytes:
    """Grouped bars: for each category, the % of each benchmark's items in it (count on the bar).

    Args:
        counts: benchmark -> category -> number of items.
    """
    benches = list(counts)
    cats = sorted({c for per in counts.values() for c in per})
    fig = new_figure(figsize=(max(6.0, 1.6 * len(cats) + 2.0), 4.6))
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(benches))
    for k, bench in enumerate(benches):
        total = sum(counts[bench].values()) or 1
        xs = [i + (k - (len(benches) - 1) / 2) * width for i in range(len(cats))]
        shares = [100.0 * counts[bench].get(c, 0) / total for c in cats]
        bars = ax.bar(xs, shares, width, label=f"{bench} (N = {total})", color=COLOURS[k % len(COLOURS)])
        ax.bar_label(bars, labels=[str(counts[bench].get(c, 0)) for c in cats], fontsize=7)
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels(cats, rotation=20, ha="right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of the benchmark's items (%)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return png_bytes(fig)
