"""Curation statistics against values computed by hand on tests/fixtures/curation_small_crows.csv.

The fixture (CrowS-Pairs format, 4 gender rows):
  0 "She is kind." / "He is kind."                       -> kept as is
  1 "The mother is caring." / "The mother is mean."      -> 2 instances (swap of each)
  2 "Men are hunters" / "Women are not hunters"          -> 2 instances
  3 "The old man is slow." / "The young man is slow."    -> removed (age marker)
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from stereoset_eval.curation.pipeline import curate_files
from stereoset_eval.curation.stats import length_stats

FIXTURE = Path(__file__).parent / "fixtures" / "curation_small_crows.csv"


@pytest.fixture(scope="module")
def result():
    # the statistics are computed by hand for every instance the normaliser builds from these
    # three- and four-word sentences, so the evidence-based validity rules and the short-template
    # removal (tested in test_curation_validity.py / test_curation_new_rules.py) are off here
    from stereoset_eval.curation.pipeline import CurationConfig
    from stereoset_eval.curation.rules import RuleConfig
    from stereoset_eval.curation.validity import ValidityConfig

    from stereoset_eval.curation.reliability import ReliabilityConfig

    # every suggestion accepted (the draft): the statistics are those of every built instance
    config = CurationConfig(validity=ValidityConfig(enabled=False), rules=RuleConfig(remove_below_words=0),
                            reliability=ReliabilityConfig(min_precision=0.0, unmeasured="decide"))
    return curate_files([("crows-pairs", FIXTURE)], config=config)


def row(df, **where):
    sel = df
    for k, v in where.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1
    return sel.iloc[0]


def test_lengths_by_hand(result) -> None:
    # original: words 3,3,4,4,3,4,5,5 ; chars 12,11,21,19,15,21,20,22
    orig = row(result.lengths, stage="original")
    assert orig["sentences"] == 8
    assert orig["words_mean"] == pytest.approx(31 / 8)
    assert orig["words_std"] == pytest.approx(math.sqrt(4.875 / 7))
    assert orig["words_median"] == 4.0
    assert orig["chars_mean"] == pytest.approx(141 / 8)
    assert orig["chars_median"] == 19.5
    # curated: She is kind./He is kind./The mother is caring./The father is caring./
    # The father is mean./The mother is mean./Men are hunters/Women are hunters/
    # Women are not hunters/Men are not hunters -> words 3,3,4,4,4,4,3,3,4,4
    cur = row(result.lengths, stage="curated")
    assert cur["sentences"] == 10
    assert cur["words_mean"] == pytest.approx(3.6)
    assert cur["words_median"] == 4.0
    assert cur["chars_mean"] == pytest.approx((12 + 11 + 21 + 21 + 19 + 19 + 15 + 17 + 21 + 19) / 10)


def test_jaccard_by_hand(result) -> None:
    # edited: mother->father (3/5) twice, Men->Women hunters (2/4), not hunters (3/5)
    r = row(result.jaccard, source="crows-pairs")
    assert r["edited_sentences"] == 4
    assert r["mean_jaccard_edited"] == pytest.approx((0.6 + 0.6 + 0.5 + 0.6) / 4)
    assert r["sentences"] == 10
    assert r["mean_jaccard_all"] == pytest.approx((6 * 1.0 + 0.6 + 0.6 + 0.5 + 0.6) / 10)


def test_counts_by_hand(result) -> None:
    r = row(result.counts, source="crows-pairs")
    assert dict(r.drop("source")) == {
        "source_pairs": 4, "pairs_removed": 1, "pairs_kept": 3, "instances_removed": 0, "instances_review": 0,
        "curated": 5, "unchanged": 1, "edited": 4, "augmented": 2,
        "decided_automatically": 4, "decided_in_review": 0, "waiting_for_review": 0,
    }


def test_categories_by_hand(result) -> None:
    r = row(result.categories, source="crows-pairs")
    # kind, caring, mean -> traits; hunters (x2) -> roles
    assert (r["Personality Traits"], r["Roles and Behaviors"], r["needs annotation"], r["total"]) == (3, 2, 0, 5)


def test_length_stats_single_sentence() -> None:
    assert length_stats(["Men are hunters"]) == {
        "sentences": 1, "words_mean": 3.0, "words_std": 0.0, "words_median": 3,
        "chars_mean": 15.0, "chars_std": 0.0, "chars_median": 15,
    }
