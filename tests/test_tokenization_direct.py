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


@pytest.mark.parametrize("model", sorted(KINDS))
def test_batched_encoding_equals_transformers(models_dir, texts, model):
    """``encode_many`` (one ``encode_batch`` / ``encode_batch_fast`` call) fills the memo with what
    transformers gives per text: ids with word ids, ids with special tokens only, ids without."""
    view = load_backend(str(models_dir / model), kind=KINDS[model], device="cpu").tokenizer
    tok = view.tokenizer
    for special, with_words in ((True, True), (True, False), (False, False)):
        memo: dict = {}
        with view.memoized(memo):
            view.encode_many(texts, special=special, with_words=with_words)
            assert len(memo) == len(set(texts))  # every text, once, before any single encode
            kind = "words" if with_words else special
            for text in texts:
                got = memo[(text, kind)]
                if with_words:
                    enc = tok(text, return_special_tokens_mask=True)
                    assert got == (tuple(enc["input_ids"]), tuple(enc.word_ids()), tuple(enc["special_tokens_mask"])), text
                    assert view.encode(text, special=True) == list(enc["input_ids"])  # served from the memo
                else:  # ids only: the Rust encode_batch_fast (no offsets)
                    assert list(got) == list(tok.encode(text, add_special_tokens=special)), text
                    assert view.encode(text, special=special) == list(got)  # served from the memo
            assert len(memo) == len(set(texts))  # nothing encoded again
    with pytest.raises(ValueError, match="word ids come with special tokens"), view.memoized({}):
        view.encode_many(texts[:1], special=False, with_words=True)


@pytest.mark.parametrize("model", sorted(KINDS))
def test_encoded_many_equals_encoded_text_by_text(models_dir, texts, model):
    """``encoded_many``: the memo's encodings in one map, the texts it lacks (some held with word ids
    only) encoded one by one, and without a memo every text on its own: always what ``encoded`` gives."""
    view = load_backend(str(models_dir / model), kind=KINDS[model], device="cpu").tokenizer
    expected = {special: [tuple(view.tokenizer.encode(t, add_special_tokens=special)) for t in texts] for special in (True, False)}
    for special in (True, False):
        assert view.encoded_many(texts, special=special) == expected[special]  # no memo
        with view.memoized({}):
            view.encode_many(texts[::3], special=True, with_words=True)  # held as "words": served for special=True
            view.encode_many(texts[1::3], special=special, with_words=False)
            assert view.encoded_many(texts, special=special) == expected[special]


@pytest.mark.parametrize("model", sorted(KINDS))
def test_encoded_unkept_equals_encoded_and_leaves_the_memo_as_it_was(models_dir, texts, model, monkeypatch):
    """``encoded_unkept``: one batched call, what ``encoded`` gives for each text (with and without a
    memo, with and without the direct path), and nothing added to the run's memo."""
    view = load_backend(str(models_dir / model), kind=KINDS[model], device="cpu").tokenizer
    distinct = list(dict.fromkeys(texts))
    for special in (True, False):
        expected = [tuple(view.tokenizer.encode(t, add_special_tokens=special)) for t in distinct]
        assert view.encoded_unkept(distinct, special=special) == expected  # no memo
        memo: dict = {}
        with view.memoized(memo):
            view.encode_many(distinct[:5], special=special)
            held = dict(memo)
            assert view.encoded_unkept(distinct, special=special) == expected
            assert memo == held
    monkeypatch.setitem(view._facts, "direct", None)  # a tokenizer without the Rust path: each text through encoded
    assert view.encoded_unkept(distinct[:20], special=True) == [tuple(view.tokenizer.encode(t)) for t in distinct[:20]]


def test_batched_encoding_without_a_memo_or_direct_path_does_nothing(models_dir):
    view = load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu").tokenizer
    view.encode_many(["one two"], special=True)  # no memo: nowhere to keep it, no error
    backend = view.direct_backend()
    backend.enable_truncation(4)
    memo: dict = {}
    try:
        with view.memoized(memo):
            view.encode_many(["one two three four five six"], special=True)
            assert memo == {}  # transformers' own path (per text) handles a user's truncation
    finally:
        backend.no_truncation()


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


CASES = [  # (method, model, options, items): every method with a warm, on real items
    ("pll", "tiny-bert", {}, "crows"), ("pll-word-l2r", "tiny-roberta", {}, "crows"),
    ("crows-nangia", "tiny-bert", {}, "crows"), ("crows-nangia", "tiny-roberta", {"lowercase": True}, "crows"),
    ("stereoset-mlm", "tiny-bert", {}, "intra"), ("stereoset-mlm", "tiny-roberta", {"leading_space": "bias-bench"}, "intra"),
    ("stereoset-causal", "tiny-gpt2", {}, "intra"), ("causal-ll", "tiny-gpt2", {}, "crows"),
    ("stereoset-inter-causal", "tiny-gpt2", {}, "inter"),
]


@pytest.mark.parametrize("method,model,options,data", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_warm_encodes_everything_prepare_encodes(models_dir, crows_items, stereoset_items, method, model, options, data):
    """After a method's ``warm``, its ``prepare`` finds every text in the memo (no tokenizer call of its
    own), and builds the same requests as without ``warm``."""
    from stereoset_eval.scoring.methods import get_method

    spec = get_method(method)
    items = {"crows": crows_items[:150], "intra": [it for it in stereoset_items if it.task == "intrasentence"][:150],
             "inter": [it for it in stereoset_items if it.task == "intersentence"][:100]}[data]
    view = load_backend(str(models_dir / model), kind=KINDS[model], device="cpu").tokenizer
    resolved = spec.resolve(view, spec.validate_options(options))
    units = spec.units(items, resolved)
    plain = [spec.prepare(u, view, resolved) for u in units]
    memo: dict = {}
    with view.memoized(memo):
        spec.warm(units, view, resolved)
        warmed = set(memo)
        again = [spec.prepare(u, view, resolved) for u in units]
    assert warmed and set(memo) == warmed
    assert [p.requests for p in again] == [p.requests for p in plain]
