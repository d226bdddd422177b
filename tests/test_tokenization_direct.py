"""The direct Rust tokenizer path (``TokenizerView.direct_backend``) gives exactly what transformers gives.

Every CrowS-Pairs sentence and StereoSet intrasentence sentence / context, and every word of
them, through both paths for each fixture tokenizer (WordPiece uncased, byte-level BPE with and
without BOS/EOS handling): ids with and without special tokens, word ids and special-token masks.
"""

from __future__ import annotations

import pytest

from stereoset_eval.scoring.backends import load_backend

KINDS = {"tiny-bert": "masked", "tiny-roberta": "masked", "tiny-gpt2": "causal"}


@pytest.fixture(scope="module")
def texts(crows_items, stereoset_items) -> list[str]:
    out = [s.text for it in crows_items for s in it.sentences]
    intra = [it for it in stereoset_items if it.task == "intrasentence"]
    out += [s.text for it in intra for s in it.sentences] + [it.context for it in intra if it.context]
    out += sorted({w for t in out for w in t.split(" ")})
    out += ["", " ", "The chess player was [MASK].", "<mask> and <s> and </s>", "ÇA VA? naïve café", "a\tb\nc"]
    return out


@pytest.mark.parametrize("model", sorted(KINDS))
def test_direct_path_equals_transformers(models_dir, texts, model):
    view = load_backend(str(models_dir / model), kind=KINDS[model], device="cpu").tokenizer
    assert view.direct_backend() is not None  # the stock fast tokenizers take the direct path
    tok = view.tokenizer
    for text in texts:
        for special in (True, False):
            assert view.encode(text, special=special) == list(tok.encode(text, add_special_tokens=special)), text
        enc = tok(text, return_special_tokens_mask=True)
        assert view.encode_with_words(text) == (list(enc["input_ids"]), list(enc.word_ids()),
                                                list(enc["special_tokens_mask"])), text


def test_truncation_set_by_a_user_falls_back_to_transformers(models_dir):
    view = load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu").tokenizer
    backend = view.direct_backend()
    backend.enable_truncation(4)
    try:
        assert view.direct_backend() is None  # we defer to transformers, which resets it per call
        ids = view.encode("one two three four five six", special=True)
        assert len(ids) > 4 and ids == list(view.tokenizer.encode("one two three four five six"))
    finally:
        backend.no_truncation()
    assert view.direct_backend() is backend
