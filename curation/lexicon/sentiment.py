"""VADER's valence lexicon (Hutto & Gilbert 2014, the ``vaderSentiment`` package), loaded once.

Two uses: the validity rules read a word's valence (generic praise or negativity), and the typo
repair treats a word VADER lists as a real word, not a misspelling ("naggy" is not "nagy").
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def vader_lexicon() -> dict[str, float]:
    """Word (lower case) -> mean valence, -4 to 4."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return dict(SentimentIntensityAnalyzer().lexicon)
