"""Spliced encodings of StereoSet's masked contexts (issue 35): where ``mask_splice`` says a
splice holds, it equals encoding the whole text, on random texts built from the characters that
break such splices (and each of its conditions is needed: loosening one makes the same check
fail), and ``stereoset-mlm``'s batched preparation, which splices, gives ``prepare``'s requests on
every StereoSet dev item, for both leading-space options."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace
from typing import Any

import pytest

from stereoset_eval.scoring import mask_splice
from stereoset_eval.scoring.backends import load_backend
from stereoset_eval.scoring.mask_splice import BYTE_LEVEL, WORDPIECE, SpliceRule, splice_rule
from stereoset_eval.scoring.methods import get_method
from stereoset_eval.scoring.tokenization import TokenizerView

# what breaks a splice: spaces of several kinds, control characters, punctuation, accents and
# combining marks, CJK, contractions, added tokens' contents and pieces of them
ALPHABET = (list("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789") + [" "] * 12
            + list("\t\n.,'!?-()[]<>/\"#$%&*+:;=@^_`{|}~")
            + ["\x01", "\x0b", "\xa0", "é", "ß", "中", "\u3000", "\x1c", "\u0301", "'s", "[MASK]", "<mask>",
               "[CLS]", "<s>", "[MA", "SK]", "<ma", "sk>"])


def view(models_dir: Any, model: str) -> TokenizerView:
    return load_backend(str(models_dir / model), kind="masked", device="cpu").tokenizer


def mismatches(tok: TokenizerView, rule: SpliceRule, n: int, seed: int = 0) -> tuple[int, int]:
    """(spliced, wrong) over ``n`` random ``(before, prefix, after)``: a splice is wrong where it
    differs from the whole text's encoding."""
    rng = random.Random(seed)
    backend, mask, mask_id = tok.direct_backend(), tok.tokenizer.mask_token, tok.special_id("mask")

    def text(longest: int) -> str:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, longest)))

    spliced = wrong = 0
    for _ in range(n):
        before, prefix, after = text(8), text(4), text(6)
        if rng.random() < 0.5:
            before += " " * rng.randint(1, 2)
        (short,) = rule.splice_texts([(before, prefix)])
        first = backend.encode(before + mask + after).ids
        if short is None or mask_id not in first:
            continue
        spliced += 1
        at = first.index(mask_id)
        made = first[:at] + backend.encode(short, add_special_tokens=False).ids + first[at:]
        wrong += made != backend.encode(before + prefix + mask + after).ids
    return spliced, wrong


@pytest.mark.parametrize(("model", "kind"), [("tiny-bert", WORDPIECE), ("tiny-roberta", BYTE_LEVEL)])
def test_a_splice_equals_the_whole_encoding(models_dir, model, kind):
    tok = view(models_dir, model)
    rule = splice_rule(tok)
    assert rule is not None and rule.kind == kind
    spliced, wrong = mismatches(tok, rule, 6000)
    assert spliced > 1500 and wrong == 0


def _any_word_end(self: SpliceRule, before: str) -> str | None:
    return ""  # WordPiece: a prefix right after a letter (no word boundary)


def _non_ascii(self: SpliceRule, before: str) -> str | None:
    return "" if not before or before[-1] in mask_splice._WORD_ENDS or before[-1].isspace() else None


def _any_text_fits(self: SpliceRule, prefix: str) -> bool:
    return bool(prefix)


def _no_space_needed(self: SpliceRule, before: str) -> str | None:
    return before[len(before.rstrip(" ")):]  # byte-level: also where no space separates before and the prefix


@pytest.mark.parametrize(("model", "loosened"), [
    ("tiny-bert", {"_lead": _any_word_end}), ("tiny-bert", {"_lead": _non_ascii, "_fits": _any_text_fits}),
    ("tiny-roberta", {"_lead": _no_space_needed}), ("tiny-roberta", {"_fits": _any_text_fits}),
    ("tiny-bert", "added"), ("tiny-roberta", "added"),
])
def test_each_condition_is_needed(models_dir, monkeypatch, model, loosened):
    """The same check finds wrong splices once one condition is dropped: it can fail."""
    tok = view(models_dir, model)
    rule = splice_rule(tok)
    assert rule is not None
    if loosened == "added":  # no added-token check
        rule = SpliceRule(rule.kind, ())
    else:
        for name, loose in loosened.items():
            monkeypatch.setattr(SpliceRule, name, loose)
    assert mismatches(tok, rule, 3000)[1] > 0


def test_an_added_token_across_before_and_the_prefix_is_caught(models_dir):
    """``before`` ending in the start of an added token's content and the prefix holding the rest:
    no splice; without that check the splices would be wrong."""
    tok = view(models_dir, "tiny-bert")
    rule = splice_rule(tok)
    assert rule is not None
    backend, mask, mask_id = tok.direct_backend(), tok.tokenizer.mask_token, tok.special_id("mask")
    parts = [(f"the man {a}", f"{b}er") for content in ("[CLS]", "[SEP]", "[MASK]") for a, b in
             ((content[:k], content[k:]) for k in range(1, len(content))) if a[-1] in "[]"]
    assert parts and rule.splice_texts(parts) == [None] * len(parts)
    wrong = 0
    for before, prefix in parts:
        first = backend.encode(before + mask + " is here").ids
        at = first.index(mask_id)
        made = first[:at] + backend.encode(prefix, add_special_tokens=False).ids + first[at:]
        wrong += made != backend.encode(before + prefix + mask + " is here").ids
    assert wrong == len(parts)
    plain = [(before.replace("[", "( "), prefix.replace("]", ")")) for before, prefix in parts]
    assert all(short is not None for short in rule.splice_texts(plain))  # the same shapes without the token


def _stub(spec: dict[str, Any], mask: str | None) -> TokenizerView:
    """A view of a tokenizer whose Rust configuration is ``spec`` (the rule reads nothing else)."""
    backend = SimpleNamespace(to_str=lambda: json.dumps(spec))
    tok = TokenizerView(SimpleNamespace(backend_tokenizer=backend, mask_token=mask), "stub", 512)
    tok._facts["direct"] = backend
    backend.truncation = backend.padding = None
    backend.encode_special_tokens = False
    return tok


@pytest.mark.parametrize("change", [
    "mask lstrip off", "mask single word", "mask normalized", "mask plain content", "prefix space", "dropout",
    "split sequence", "other normaliser", "post-processor", "no mask", "token into the mask", "token around the mask",
])
def test_the_rule_is_read_from_the_configuration_and_refuses_any_other(models_dir, change):
    """The fixtures' own configurations get their rule; one change to any condition gets none."""
    for model, kind in (("tiny-bert", WORDPIECE), ("tiny-roberta", BYTE_LEVEL)):
        spec = json.loads(view(models_dir, model).tokenizer.backend_tokenizer.to_str())
        mask = next(t for t in spec["added_tokens"] if t["content"] in ("[MASK]", "<mask>"))
        assert mask_splice._rule_of(_stub(spec, mask["content"])).kind == kind
        content = mask["content"]
        if change == "mask lstrip off":
            if kind == WORDPIECE:  # BERT's pre-tokeniser drops whitespace: lstrip does not matter there
                continue
            mask["lstrip"] = False
        elif change == "mask single word":
            mask["single_word"] = True
        elif change == "mask normalized":
            mask["normalized"] = True
        elif change == "mask plain content":  # a content the pre-tokeniser could leave whole
            content = mask["content"] = "MASK"
        elif change == "prefix space":
            if kind == WORDPIECE:
                continue
            spec["pre_tokenizer"]["add_prefix_space"] = True
        elif change == "dropout":
            if kind == WORDPIECE:
                continue
            spec["model"]["dropout"] = 0.1
        elif change == "split sequence":
            spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [spec["pre_tokenizer"]]}
        elif change == "other normaliser":
            spec["normalizer"] = {"type": "NFKC"}
        elif change == "post-processor":
            spec["post_processor"] = {"type": "SomethingNew"}
        elif change == "no mask":
            content = None
        elif change in ("token into the mask", "token around the mask"):  # another added token overlaps the mask
            other = "ab" + content[:3] if change == "token into the mask" else "x" + content + "y"
            spec["added_tokens"].append({"id": 99, "content": other, "single_word": False, "lstrip": False,
                                         "rstrip": False, "normalized": False, "special": False})
        assert mask_splice._rule_of(_stub(spec, content)) is None, (model, change)


def test_no_rule_without_the_direct_rust_path(models_dir):
    shared = view(models_dir, "tiny-bert")
    tok = TokenizerView(shared.tokenizer, shared.name, shared.max_length)  # a fresh view, not the loaded model's
    assert splice_rule(tok) is not None
    tok = TokenizerView(shared.tokenizer, shared.name, shared.max_length)
    tok._facts["direct"] = None  # as for a tokenizer that overrides encode (TokenizerView.direct_backend)
    assert splice_rule(tok) is None


@pytest.mark.parametrize("model", ["tiny-bert", "tiny-roberta"])
@pytest.mark.parametrize("leading_space", ["none", "bias-bench"])
def test_the_batched_preparation_gives_prepare_s_requests_on_all_of_stereoset_dev(models_dir, stereoset_items,
                                                                                 monkeypatch, model, leading_space):
    spec = get_method("stereoset-mlm")
    tok = view(models_dir, model)
    options = spec.resolve(tok, spec.validate_options({"leading_space": leading_space}))
    units = spec.units([it for it in stereoset_items if it.task == "intrasentence"], options)
    with tok.memoized({}):
        one_by_one = [spec.prepare(u, tok, options) for u in units]
    whole: list[int] = []
    unkept = TokenizerView.encoded_unkept

    def counting(self: TokenizerView, texts: Any, *, special: bool) -> list[tuple[int, ...]]:
        if special:
            whole.append(len(texts))
        return unkept(self, texts, special=special)

    monkeypatch.setattr(TokenizerView, "encoded_unkept", counting)
    with tok.memoized({}):
        assert spec.prepare_table is not None
        table = spec.prepare_table(units, tok, options)
    assert table == one_by_one
    inputs = len({r.input_ids for p in one_by_one for r in p.requests})
    assert sum(whole) < inputs / 2  # most inputs were spliced, not encoded whole


def test_a_first_input_another_piece_also_makes_is_encoded_whole(models_dir):
    """``I am BLANK`` with the prefix ``un-`` makes the text that is ``I am un-BLANK``'s first input
    (whichever origin the text keeps): it is encoded whole, as a first input, and every input equals
    its whole encoding. (StereoSet's attribute words have no punctuation, so their prefixes cannot
    end in it; the order of the origins below is the one that needs this.)"""
    from stereoset_eval.scoring.methods.stereoset_mlm import _masked_encodings

    tok = view(models_dir, "tiny-bert")
    mask, mask_id = tok.tokenizer.mask_token, tok.special_id("mask")
    pieces = [("I am un-BLANK", ""), ("I am un-BLANK", "x"), ("I am BLANK", ""), ("I am BLANK", "un-")]
    origin = {context.replace("BLANK", prefix + mask): (context, prefix) for context, prefix in pieces}
    assert len(origin) == 3  # the shared text keeps the second origin, a later piece
    texts = list(origin)
    with tok.memoized({}):
        got = _masked_encodings(tok, texts, origin, mask, mask_id)
    assert got == [tuple(tok.direct_backend().encode(t).ids) for t in texts]


def test_a_tokenizer_with_a_token_running_into_the_mask_gets_no_rule(models_dir):
    """An added token ``un[MA`` written before ``[MASK]`` matches first: the splice would be wrong,
    and the rule refuses the tokenizer."""
    from tokenizers import AddedToken
    from transformers import AutoTokenizer

    fresh = AutoTokenizer.from_pretrained(str(models_dir / "tiny-bert"))  # not the loaded model's
    assert splice_rule(TokenizerView(fresh, "fresh", 512)) is not None
    fresh.backend_tokenizer.add_tokens([AddedToken("un[MA", normalized=False)])
    backend, mask_id = fresh.backend_tokenizer, fresh.mask_token_id
    first = backend.encode("I am [MASK] here").ids
    at = first.index(mask_id)
    made = first[:at] + backend.encode("un", add_special_tokens=False).ids + first[at:]
    assert made != backend.encode("I am un[MASK] here").ids
    assert splice_rule(TokenizerView(fresh, "fresh", 512)) is None  # a fresh view: facts are read once a view
