"""crows-nangia's lower-casing (metric.py, uncased models): a sentence that provably encodes as its
lower-cased form is encoded as it is (``TokenizerView.encodes_as_lowered``), so a study reuses the
encoding ``pll`` made; the ids are the lower-cased text's on every CrowS-Pairs sentence."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def tiny_bert(models_dir):
    from stereoset_eval.scoring.backends import load_backend

    return load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu").tokenizer


def _ids(tok, text: str) -> list[int]:
    return list(tok.tokenizer(text)["input_ids"])  # transformers' own call, not the direct path


def test_every_crows_sentence_the_shortcut_takes_encodes_as_its_lowered_form(tiny_bert, crows_items):
    texts = [s.text for item in crows_items for s in item.sentences]
    taken = [t for t in texts if tiny_bert.encodes_as_lowered(t)]
    assert len(taken) > 0.9 * len(texts)  # CrowS-Pairs is nearly all ASCII
    assert all(_ids(tiny_bert, t) == _ids(tiny_bert, t.lower()) for t in taken)
    assert any(t != t.lower() for t in taken)  # capitals are there: the shortcut is not vacuous


@pytest.mark.parametrize("text", ["The [MASK] was late.", "a [mask] here", "[cls] opened", "Ça va, Étienne.",
                                  "İstanbul is big", "Straße"])
def test_added_tokens_in_either_case_and_non_ascii_text_are_lowered_as_metric_py_does(tiny_bert, text):
    assert not tiny_bert.encodes_as_lowered(text)


def test_a_cased_or_non_bert_tokenizer_never_takes_it(models_dir):
    from stereoset_eval.scoring.backends import load_backend

    roberta = load_backend(str(models_dir / "tiny-roberta"), kind="masked", device="cpu").tokenizer
    assert not roberta.encodes_as_lowered("The doctor was here.")


def test_in_a_study_crows_nangia_encodes_no_sentence_pll_encoded(models_dir, crows_items, count_encoded,
                                                                   monkeypatch):
    """The study's third method finds every lower-cased CrowS sentence the shortcut takes in the
    run's memo (pll encoded it); its scores equal crows-nangia run alone."""
    from stereoset_eval.scoring import score_items
    from stereoset_eval.scoring.backends import load_backend
    from stereoset_eval.scoring.settings import RunSettings
    from stereoset_eval.scoring.shared_work import SharedWork

    model = str(models_dir / "tiny-bert")
    items = list(crows_items[:60])
    tok = load_backend(model, kind="masked", device="cpu").tokenizer
    shared = SharedWork()
    score_items(items, model=model, method="pll", use_cache=False, shared=shared, device="cpu",
                settings=RunSettings(share_masked_inputs="on"))
    encoded = count_encoded(tok)
    in_study = score_items(items, model=model, method="crows-nangia", use_cache=False, shared=shared, device="cpu",
                           settings=RunSettings(share_masked_inputs="on"))
    texts = [s.text for item in items for s in item.sentences]
    assert encoded == [t.lower() for t in texts if not tok.encodes_as_lowered(t)]  # only the others
    monkeypatch.undo()
    alone = score_items(items, model=model, method="crows-nangia", use_cache=False, device="cpu")
    assert {r.sentence_id: r.extra["unrounded"] for r in in_study.records} == pytest.approx(
        {r.sentence_id: r.extra["unrounded"] for r in alone.records}, abs=1e-4)
