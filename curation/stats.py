"""Curation statistics (BMNE paper Tables 1 and 3, Figure 2), as plain DataFrames.

Definitions (stated in every dataset card):

* **words** per sentence: ``len(text.split())`` (whitespace-separated, punctuation attached);
  **characters**: ``len(text)``. Mean, standard deviation (sample, ``ddof=1``) and median
  over sentences; "original" = both sentences of every in-scope source pair (StereoSet: the
  stereotype and anti-stereotype options), "curated" = both sentences of every curated pair.
* **Jaccard** between a curated sentence and the source sentence it was made from: word
  sets of :func:`stereoset_eval.curation.text.words` (lower-cased word tokens, punctuation dropped),
  ``|A ∩ B| / |A ∪ B|``; averaged over edited sentences and over all curated sentences
  (unedited ones count 1.0). The BMNE paper reports 83.45% without saying which.
* **counts**: source pairs → removed / review / kept; kept → curated instances, of which
  unchanged (no edit), edited, and augmented (instances beyond one per kept pair).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

from stereoset_eval.foundation.atomic import atomic_path
from stereoset_eval.curation.gender_swap import original_text
from stereoset_eval.foundation.items import Item
from stereoset_eval.curation.normalise import Decision
from stereoset_eval.curation.pairs import INSTANCE_SEPARATOR, origin_source
from stereoset_eval.curation.text import jaccard, whitespace_words

NEEDS_ANNOTATION_LABEL = "needs annotation"


def length_stats(texts: Sequence[str]) -> dict[str, float]:
    """Words and characters per sentence: n, mean, std (ddof=1), median.

    >>> length_stats(["A mother is kind.", "Men are hunters"])["words_mean"]
    3.5
    """
    w = [len(whitespace_words(t)) for t in texts]
    c = [len(t) for t in texts]
    sd = (lambda xs: statistics.stdev(xs) if len(xs) > 1 else 0.0)
    return {
        "sentences": len(texts),
        "words_mean": statistics.fmean(w) if w else 0.0, "words_std": sd(w), "words_median": statistics.median(w) if w else 0.0,
        "chars_mean": statistics.fmean(c) if c else 0.0, "chars_std": sd(c), "chars_median": statistics.median(c) if c else 0.0,
    }


def length_table(pairs: Sequence[Item], curated: Sequence[Item]) -> pd.DataFrame:
    """One row per (source, stage) with :func:`length_stats`; stage is original or curated."""
    rows = []
    for stage, items in (("original", pairs), ("curated", curated)):
        by_src: dict[str, list[str]] = defaultdict(list)
        for it in items:
            by_src[origin_source(it)].extend(s.text for s in it.sentences)
        for src in sorted(by_src):
            rows.append({"source": src, "stage": stage, **length_stats(by_src[src])})
    return pd.DataFrame(rows)


def edited_pairs(items: Iterable[Item]) -> list[tuple[str, str, str]]:
    """``(source, original sentence, edited sentence)`` for every edited sentence."""
    out = []
    for it in items:
        edited_roles = sorted({e.sentence_role for e in it.provenance.edits})
        for role in edited_roles:
            _, orig = original_text(it, role)
            out.append((origin_source(it), orig, it.text(role)))
    return out


def jaccard_table(items: Sequence[Item]) -> pd.DataFrame:
    """Per source (and ``all``): mean Jaccard(source sentence, curated sentence).

    ``mean_jaccard_edited`` averages over edited sentences only; ``mean_jaccard_all`` over
    every curated sentence (an unedited sentence equals its source: 1.0), i.e. how much of
    the source text the curated version keeps.
    """
    edited: dict[str, list[float]] = defaultdict(list)
    every: dict[str, list[float]] = defaultdict(list)
    for it in items:
        src = origin_source(it)
        edited_roles = {e.sentence_role for e in it.provenance.edits}
        for s in it.sentences:
            _, orig = original_text(it, s.role)
            value = jaccard(orig, s.text)
            every[src].append(value)
            if s.role in edited_roles:
                edited[src].append(value)
    return jaccard_summary(every, edited)


def jaccard_summary(every: Mapping[str, list[float]], edited: Mapping[str, list[float]]) -> pd.DataFrame:
    """Mean Jaccard per source and over ``all``: over edited sentences and over every sentence."""
    mean = (lambda xs: statistics.fmean(xs) if xs else float("nan"))
    rows = []
    for src in [*sorted(every), "all"]:
        e = [v for k in sorted(edited) for v in edited[k]] if src == "all" else edited.get(src, [])
        a = [v for k in sorted(every) for v in every[k]] if src == "all" else every[src]
        rows.append({"source": src, "edited_sentences": len(e), "mean_jaccard_edited": mean(e),
                     "sentences": len(a), "mean_jaccard_all": mean(a)})
    return pd.DataFrame(rows, columns=["source", "edited_sentences", "mean_jaccard_edited", "sentences", "mean_jaccard_all"])


def counts_table(pairs: Sequence[Item], decisions: Sequence[Decision], curated: Sequence[Item]) -> pd.DataFrame:
    """Per source: pairs in, pair/instance decisions, curated instances (unchanged/edited/augmented)."""
    src_of = {p.id: origin_source(p) for p in pairs}
    rows = []
    for src in sorted(set(src_of.values())):
        ds = [d for d in decisions if src_of.get(d.source_id) == src]
        items = [it for it in curated if origin_source(it) == src]
        kept_pairs = {it.id.split(INSTANCE_SEPARATOR, 1)[0] for it in items}
        pair_removed = {d.source_id for d in ds if d.item_id == d.source_id and d.status == "removed"}
        rows.append({
            "source": src,
            "source_pairs": sum(1 for s in src_of.values() if s == src),
            "pairs_removed": len(pair_removed),
            "pairs_kept": len(kept_pairs),
            "instances_removed": sum(1 for d in ds if d.status == "removed" and d.item_id != d.source_id),
            "instances_review": sum(1 for d in ds if d.status == "review"),
            "curated": len(items),
            "unchanged": sum(1 for it in items if not it.provenance.edits),
            "edited": sum(1 for it in items if it.provenance.edits),
            "augmented": len(items) - len(kept_pairs),
        })
    return pd.DataFrame(rows)


def category_table(items: Sequence[Item], dimensions: Sequence[str]) -> pd.DataFrame:
    """Items per source and dimension (seed Figure 2), with ``needs annotation`` and total."""
    labels = list(dimensions) + [NEEDS_ANNOTATION_LABEL]
    rows = []
    for src in sorted({origin_source(it) for it in items}):
        c = Counter(it.dimension or NEEDS_ANNOTATION_LABEL for it in items if origin_source(it) == src)
        rows.append({"source": src, **{lab: c.get(lab, 0) for lab in labels}, "total": sum(c.values())})
    return pd.DataFrame(rows, columns=["source", *labels, "total"])


def category_chart(table: pd.DataFrame, dest: str | Path, *, title: str = "Stereotype dimensions per source") -> Path:
    """Grouped bar chart of :func:`category_table` written atomically as PNG (Agg backend)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    labels = [c for c in table.columns if c not in ("source", "total")]
    fig, ax = plt.subplots(figsize=(8, 4), dpi=100)
    width = 0.8 / max(len(table), 1)
    for k, (_, row) in enumerate(table.iterrows()):
        xs = [i + k * width for i in range(len(labels))]
        ax.bar(xs, [row[lab] for lab in labels], width=width, label=row["source"])
    ax.set_xticks([i + width * (len(table) - 1) / 2 for i in range(len(labels))])
    ax.set_xticklabels([lab.replace(" and ", " &\n") for lab in labels], fontsize=8)
    ax.set_ylabel("curated pairs")
    ax.set_title(title)
    if len(table):  # no curated pair yet (everything waits for review): no legend to draw
        ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(dest, suffix=".png") as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    plt.close(fig)
    return Path(dest)
