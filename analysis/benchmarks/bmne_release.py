"""The BMNE release (the BMNE paper: Zakizadeh & Pilehvar 2025; ``teias-ai/BMNE``) as two benchmarks.

``bmne-stereoset`` and ``bmne-crowspairs`` are the release's two configs, each a study source of
the same name with its pinned manifest file as default. They are pair benchmarks like curated
pairs (pair ss before balancing, balanced ss after), but their items come from the release: the
release's ``category`` is a human dimension tag used as is
(:func:`stereoset_eval.curation.loaders.bmne_release.load_bmne_release`).
"""

from __future__ import annotations

from pathlib import Path

from stereoset_eval.analysis.benchmarks.base import Source
from stereoset_eval.analysis.benchmarks.pairs import CuratedPairs
from stereoset_eval.analysis.benchmarks.registry import register
from stereoset_eval.foundation.items import Item


class BmneReleaseStereoSet(CuratedPairs):
    name = "bmne-stereoset"
    subset = "stereoset"
    title = "BMNE release (StereoSet subset)"
    description = "the BMNE release's StereoSet subset (teias-ai/BMNE, config stereoset; 223 pairs, human tags)"
    loader_family = "pairs"
    sources = (Source("bmne-stereoset", "the BMNE release's StereoSet subset (teias-ai/BMNE, config stereoset; "
                                        "human dimension tags)"),)
    default_files = ("bmne-stereoset",)

    def load(self, path: str | Path) -> list[Item]:
        from stereoset_eval.curation.loaders.bmne_release import load_bmne_release

        return load_bmne_release(path, subset=self.subset)


class BmneReleaseCrowS(BmneReleaseStereoSet):
    name = "bmne-crowspairs"
    subset = "crowspairs"
    title = "BMNE release (CrowS-Pairs subset)"
    description = "the BMNE release's CrowS-Pairs subset (teias-ai/BMNE, config crowspairs; 186 pairs, human tags)"
    sources = (Source("bmne-crowspairs", "the BMNE release's CrowS-Pairs subset (teias-ai/BMNE, config crowspairs; "
                                         "human dimension tags)"),)
    default_files = ("bmne-crowspairs",)


BMNE_STEREOSET = register(BmneReleaseStereoSet())
BMNE_CROWS = register(BmneReleaseCrowS())
