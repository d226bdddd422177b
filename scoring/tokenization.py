"""Facts about a tokenizer that decide how a method builds its inputs, found from the tokenizer.

Methods never branch on model names: whether a tokenizer lowercases, whether it is a
byte-level BPE (space-sensitive) tokenizer, which ids are special — all are read from the
tokenizer itself here, so a new model of a known family behaves like its relatives.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from stereoset_eval.scoring.records import ScoringError

# probe for lowercasing: words a cased vocabulary keeps cased and an uncased one folds
_CASE_PROBE = "The Quick Brown Fox A I"
DECODED = "decoded"  # the memo's key kind for decodes, ``(ids, DECODED)``: not an encoding (SharedWork counts those)


@dataclass
class TokenizerView:
    """A Hugging Face tokenizer plus the derived facts methods need.

    Attributes:
        tokenizer: the underlying tokenizer (a transformers 5 tokenizer).
        name: the model id it was loaded for (for error messages).
        max_length: the longest input the model accepts (``model_max_length``, set from the
            model config when the tokenizer lacks it).
    """

    tokenizer: Any
    name: str
    max_length: int
    _facts: dict[str, Any] = field(default_factory=dict, repr=False)
    _memo: dict[Any, Any] | None = field(default=None, repr=False)

    @contextlib.contextmanager
    def memoized(self, store: dict[Any, Any]) -> Iterator["TokenizerView"]:
        """Within the block, :meth:`encode` and :meth:`encode_with_words` remember their results in
        ``store`` (a :class:`~stereoset_eval.scoring.shared_work.SharedWork` encoding memo): each
        distinct text is encoded once for the length check and every method of a run."""
        saved, self._memo = self._memo, store
        try:
            yield self
        finally:
            self._memo = saved

    # --- special tokens -------------------------------------------------------------------
    def special_id(self, attr: str) -> int | None:
        """The tokenizer's ``<attr>_token_id`` (None if it has none), looked up once per view: a
        transformers tokenizer answers through a slow ``__getattr__`` (issue 35: 12,072 look-ups,
        0.2 s of a 1.6 s host run of ``pll`` over CrowS-Pairs)."""
        key = f"special_id:{attr}"
        if key not in self._facts:
            self._facts[key] = getattr(self.tokenizer, f"{attr}_token_id", None)
        return self._facts[key]

    def require_id(self, attr: str, *, method: str) -> int:
        tid = self.special_id(attr)
        if tid is None:
            raise ScoringError(f"method {method} needs a {attr} token, but the tokenizer of {self.name} has none")
        return int(tid)

    def start_token_id(self, *, method: str) -> int:
        """The unconditional start token of causal LMs: ``bos_token``, else ``eos_token``.

        GPT-2's ``<|endoftext|>`` is both, which is what the StereoSet and lm-eval code use.
        """
        for attr in ("bos", "eos"):
            tid = self.special_id(attr)
            if tid is not None:
                return int(tid)
        raise ScoringError(f"method {method} needs a BOS or EOS token, but the tokenizer of {self.name} has neither")

    def token_str(self, tid: int) -> str:
        return str(self.tokenizer.convert_ids_to_tokens(int(tid)))

    # --- derived facts ----------------------------------------------------------------------
    def fact(self, key: str, compute: Callable[[], Any]) -> Any:
        """A fact about the tokenizer worked out by ``compute`` once per view (a module's own facts,
        such as :func:`~stereoset_eval.scoring.mask_splice.splice_rule`)."""
        if key not in self._facts:
            self._facts[key] = compute()
        return self._facts[key]

    @property
    def lowercases(self) -> bool:
        """True if the tokenizer folds case (an "uncased" model): probed, not read from a name."""
        if "lowercases" not in self._facts:
            tok = self.tokenizer
            self._facts["lowercases"] = tok.tokenize(_CASE_PROBE) == tok.tokenize(_CASE_PROBE.lower())
        return self._facts["lowercases"]

    def encodes_as_lowered(self, text: str) -> bool:
        """True if ``text`` encodes to exactly the ids of ``text.lower()``, by construction: the Rust
        pipeline is what runs (:meth:`direct_backend`), its normalizer is a ``BertNormalizer`` that
        lower-cases, ``text`` is ASCII and no added token's content occurs in it in either case.

        Then both texts split alike on added tokens (none occurs), normalise to the same string
        (for ASCII, clean-up, accent stripping and Chinese-character padding do not depend on case,
        and Python's ``lower`` is the normaliser's), and so pre-tokenise and encode alike. A method
        that lower-cases for an uncased model (``crows-nangia``, as metric.py) can then reuse the
        text's own encoding, which another method of the run may have made already (issue 35: the
        study re-encoded 3,016 CrowS-Pairs texts). False whenever that is not certain.
        """
        if "lowering_folded" not in self._facts:
            self._facts["lowering_folded"] = _bert_lowercasing_added_contents(self.tokenizer)
        added = self._facts["lowering_folded"]
        if added is None or not text.isascii() or self.direct_backend() is None:
            return False
        lowered = text.lower()
        return not any(content in lowered for content in added)

    @property
    def byte_level(self) -> bool:
        """True for byte-level BPE without an automatic prefix space (GPT-2, RoBERTa).

        For these tokenizers a word-initial token differs from the same word without its
        leading space (``Ġfox`` vs ``fox``), which is what the StereoSet leading-space option is about.
        """
        if "byte_level" not in self._facts:
            self._facts["byte_level"] = _is_byte_level_without_prefix_space(self.tokenizer)
        return self._facts["byte_level"]

    # --- encoding ---------------------------------------------------------------------------
    def direct_backend(self) -> Any | None:
        """The Rust ``tokenizers.Tokenizer`` to call directly, when that is exactly what transformers does.

        For a stock fast tokenizer, ``encode(text)`` / ``tokenizer(text)`` are a Python wrapper
        (option handling, truncation/padding reset, output conversion: ~50 µs a call, a large share
        of scoring time on a GPU) around the Rust ``encode``. We call it directly only when the class
        overrides neither ``encode`` nor ``_encode_plus`` and the Rust side has no truncation, no
        padding and transformers' special-token splitting — the state transformers itself would set;
        otherwise (slow tokenizers, custom subclasses, a user's truncation) the wrapper is used.
        ``tests/test_tokenization_direct.py`` checks both paths agree on every benchmark text.
        """
        if "direct" not in self._facts:
            self._facts["direct"] = _plain_fast_backend(self.tokenizer)
        backend = self._facts["direct"]
        if backend is None or backend.truncation is not None or backend.padding is not None:
            return None
        if backend.encode_special_tokens != bool(getattr(self.tokenizer, "split_special_tokens", False)):
            return None
        return backend

    def encode(self, text: str, *, special: bool) -> list[int]:
        return list(self.encoded(text, special=special))

    def encoded(self, text: str, *, special: bool) -> tuple[int, ...]:
        """:meth:`encode` as a tuple: the memo's own when it holds the text (no list copy and back
        where a request's input, a tuple, is built from it)."""
        memo = self._memo
        if memo is not None:
            hit = memo.get((text, special))
            if hit is None and special:
                words = memo.get((text, "words"))
                hit = words[0] if words is not None else None
            if hit is not None:
                return tuple(hit)
        backend = self.direct_backend()
        if backend is not None:
            if memo is not None and special:  # one Rust call serves encode and encode_with_words
                return tuple(self._encode_words_direct(backend, text)[0])
            ids = tuple(backend.encode(text, add_special_tokens=special).ids)
        else:
            ids = tuple(self.tokenizer.encode(text, add_special_tokens=special))
        if memo is not None:
            memo[(text, special)] = ids
        return ids

    def encoded_many(self, texts: Sequence[str], *, special: bool) -> list[tuple[int, ...]]:
        """:meth:`encoded` of each of ``texts``, in order: those the memo holds (:meth:`encode_many`
        put them there) looked up with one C-level map, the others through :meth:`encoded`."""
        memo = self._memo
        if memo is None:
            return [self.encoded(t, special=special) for t in texts]
        found: list[Any] = list(map(memo.get, zip(texts, itertools.repeat(special))))
        if None in found:
            found = [hit if hit is not None else self.encoded(t, special=special) for t, hit in zip(texts, found)]
        return found

    def encoded_unkept(self, texts: Sequence[str], *, special: bool) -> list[tuple[int, ...]]:
        """:meth:`encoded` of each of ``texts``, in order, in one batched Rust call (ids only, as
        :meth:`encode_many` with ``with_words=False`` encodes them), kept out of the run's memo.

        For texts one method of a run reads once each (StereoSet's masked contexts, which the
        caller dedupes): the memo could never serve them again, and storing 9,186 entries, then
        freeing them, cost ~10 ms of a fixture model's 0.25 s ``stereoset-mlm`` run (issue 35).
        Without the direct path, each text through :meth:`encoded`.
        """
        backend = self.direct_backend()
        if backend is None:
            return [self.encoded(t, special=special) for t in texts]
        encodings = rust_encode_batch(backend, list(texts), words=False, special=special)
        return list(_ids_of(encodings))

    def _encode_words_direct(self, backend: Any, text: str) -> tuple[tuple[int, ...], tuple[int | None, ...], tuple[int, ...]]:
        out = _with_words(backend.encode(text, add_special_tokens=True))
        if self._memo is not None:
            self._memo[(text, "words")] = out
        return out

    def encode_many(self, texts: Iterable[str], *, special: bool, with_words: bool | None = None) -> None:
        """Encode, in one batched call, every text of ``texts`` the memo does not hold yet.

        What :meth:`encode` (``special=False``) or :meth:`encode_with_words` (``special=True``,
        which also serves ``encode(..., special=True)``) then return for these texts comes from
        the memo: the same encodings (the Rust ``encode_batch`` runs the same pipeline per text;
        ``tests/test_tokenization_direct.py`` checks it), at 60 % of the time of one call per text
        (8,384 StereoSet texts on 2 cores: one Python call instead of thousands, spread over the
        cores). Outside :meth:`memoized`, or for a tokenizer without the direct path, this does nothing.

        ``with_words=False`` (with ``special=True``): only ``encode(..., special=True)`` will be
        asked, so only ids are kept. Texts kept as ids only are encoded with the Rust
        ``encode_batch_fast``, which skips the character offsets that word ids need: the same ids,
        15-20 % faster (StereoSet's 9,186 / 14,683 masked contexts, tiny-bert / tiny-roberta).
        """
        memo = self._memo
        backend = self.direct_backend() if memo is not None else None
        if memo is None or backend is None:
            return
        words = special if with_words is None else with_words
        if words and not special:
            raise ValueError("word ids come with special tokens only (encode_with_words)")
        kind: Any = "words" if words else special
        distinct = dict.fromkeys(texts)  # each text looked up once (StereoSet's three options share a context)
        if kind is True:  # an encoding with word ids serves encode(..., special=True) too (encoded)
            todo = [t for t in distinct if (t, True) not in memo and (t, "words") not in memo]
        else:
            todo = [t for t in distinct if (t, kind) not in memo]
        if not todo:
            return
        encodings = rust_encode_batch(backend, todo, words=words, special=special)
        if words:
            for text, encoding in zip(todo, encodings):
                memo[(text, "words")] = _with_words(encoding)
            return
        # C-level maps: ~1 µs a text less than a loop (issue 35: 9,186 masked contexts of StereoSet dev)
        memo.update(zip(zip(todo, itertools.repeat(special)), _ids_of(encodings)))

    def encode_with_words(self, text: str) -> tuple[list[int], list[int | None], list[int]]:
        """Ids with special tokens, ``word_ids()`` and the special-tokens mask of ``text``."""
        ids, word_ids, special = self.encoded_with_words(text)
        return list(ids), list(word_ids), list(special)

    def encoded_with_words(self, text: str) -> tuple[tuple[int, ...], tuple[int | None, ...], tuple[int, ...]]:
        """:meth:`encode_with_words` as tuples: the memo's own where it holds them (no list copies)."""
        if self._memo is not None and (hit := self._memo.get((text, "words"))) is not None:
            return hit
        backend = self.direct_backend()
        if backend is not None:
            return self._encode_words_direct(backend, text)
        enc = self.tokenizer(text, return_special_tokens_mask=True)
        try:
            word_ids = enc.word_ids()
        except (ValueError, AttributeError) as exc:
            raise ScoringError(f"the tokenizer of {self.name} gives no word_ids() (a fast tokenizer is needed): {exc}") from None
        out = (tuple(enc["input_ids"]), tuple(word_ids), tuple(enc["special_tokens_mask"]))
        if self._memo is not None:
            self._memo[(text, "words")] = out
        return out

    def tokenize_to_ids(self, text: str) -> list[int]:
        """``convert_tokens_to_ids(tokenize(text))``: how the StereoSet NSP loader encodes."""
        return [int(i) for i in self.tokenizer.convert_tokens_to_ids(self.tokenizer.tokenize(text))]

    def decode(self, ids: Sequence[int]) -> str:
        if not ids:  # StereoSet's first piece of every attribute word: the tokenizer's own answer, asked once
            if "decoded_empty" not in self._facts:
                self._facts["decoded_empty"] = str(self.tokenizer.decode([]))
            return self._facts["decoded_empty"]
        memo = self._memo
        if memo is None:
            return str(self.tokenizer.decode(list(ids)))
        key = (tuple(ids), DECODED)
        if (text := memo.get(key)) is None:
            text = memo[key] = str(self.tokenizer.decode(list(ids)))
        return text

    def decode_many(self, id_seqs: Iterable[Sequence[int]]) -> None:
        """Decode, in one batched Rust call, every non-empty id sequence the memo does not hold yet.

        What :meth:`decode` then returns for them comes from the memo: the same text as
        ``tokenizer.decode(ids)`` (transformers 5: the Rust ``decode`` without skipping special
        tokens, then its ``clean_up_tokenization`` where it would apply it), at a fraction of one
        Python call per sequence (StereoSet's 2,684 attribute-word prefixes of tiny-bert).
        Outside :meth:`memoized`, or for a tokenizer whose decoding is not the stock one, this does nothing.
        """
        memo = self._memo
        backend = self.direct_backend() if memo is not None else None
        if memo is None or backend is None or not _stock_decode(self.tokenizer):
            return
        todo = list(dict.fromkeys(key for ids in id_seqs if ids and (key := (tuple(ids), DECODED)) not in memo))
        if not todo:
            return
        texts = backend.decode_batch([list(ids) for ids, _ in todo], skip_special_tokens=False)
        if _cleans_up(self.tokenizer):
            texts = [self.tokenizer.clean_up_tokenization(t) for t in texts]
        for key, text in zip(todo, texts):
            memo[key] = str(text)

    def describe(self) -> dict[str, Any]:
        """Tokenizer facts for provenance."""
        tok = self.tokenizer
        return {
            "class": type(tok).__name__,
            "max_length": self.max_length,
            "lowercases": self.lowercases,
            "byte_level_bpe": self.byte_level,
            "special_tokens": {a: getattr(tok, f"{a}_token", None) for a in ("bos", "eos", "cls", "sep", "pad", "mask", "unk")},
        }


def rust_encode_batch(backend: Any, texts: list[str], *, words: bool, special: bool) -> list[Any]:
    """``texts`` through the Rust tokenizer ``backend`` in one batched call: with character offsets
    (``encode_batch``, which word ids need, always with special tokens) when ``words``, else ids only
    (``encode_batch_fast``, or ``encode_batch`` in a tokenizers release without it: the same ids)."""
    if words:
        return backend.encode_batch(texts, add_special_tokens=True)
    return getattr(backend, "encode_batch_fast", backend.encode_batch)(texts, add_special_tokens=special)


def _ids_of(encodings: Iterable[Any]) -> Iterator[tuple[int, ...]]:
    """Each Rust encoding's ids as a tuple."""
    return map(tuple, map(operator.attrgetter("ids"), encodings))


def _with_words(encoding: Any) -> tuple[tuple[int, ...], tuple[int | None, ...], tuple[int, ...]]:
    """A Rust ``Encoding`` as the memo keeps it: ids, word ids, special-tokens mask."""
    return tuple(encoding.ids), tuple(encoding.word_ids), tuple(encoding.special_tokens_mask)


def _plain_fast_backend(tokenizer: Any) -> Any | None:
    """``tokenizer._tokenizer`` if ``tokenizer`` is a stock transformers fast tokenizer, else None."""
    try:
        from transformers.tokenization_utils_base import PreTrainedTokenizerBase
        from transformers.tokenization_utils_tokenizers import TokenizersBackend
    except ImportError:  # another transformers layout: always use the public API
        return None
    cls = type(tokenizer)
    if not isinstance(tokenizer, TokenizersBackend):
        return None
    if cls._encode_plus is not TokenizersBackend._encode_plus or cls.encode is not PreTrainedTokenizerBase.encode:
        return None
    return getattr(tokenizer, "_tokenizer", None)


def _stock_decode(tokenizer: Any) -> bool:
    """True if ``tokenizer.decode`` is transformers' own (``PreTrainedTokenizerBase.decode`` over
    ``TokenizersBackend._decode``), the code :meth:`TokenizerView.decode_many` reproduces."""
    try:
        from transformers.tokenization_utils_base import PreTrainedTokenizerBase
        from transformers.tokenization_utils_tokenizers import TokenizersBackend
    except ImportError:
        return False
    cls = type(tokenizer)
    return cls.decode is PreTrainedTokenizerBase.decode and cls._decode is TokenizersBackend._decode \
        and cls.clean_up_tokenization is PreTrainedTokenizerBase.clean_up_tokenization


def _cleans_up(tokenizer: Any) -> bool:
    """Whether transformers' ``_decode`` applies ``clean_up_tokenization`` for ``tokenizer``
    (its flag, except for BPE models without the flag that forces it)."""
    if not getattr(tokenizer, "clean_up_tokenization_spaces", False):
        return False
    model_kind = type(tokenizer.backend_tokenizer.model).__name__
    forced = getattr(tokenizer, "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output", False)
    return not (model_kind == "BPE" and not forced)


def _bert_lowercasing_added_contents(tokenizer: Any) -> tuple[str, ...] | None:
    """The added tokens' contents, lower-cased, if ``tokenizer``'s Rust normalizer is a
    ``BertNormalizer`` with ``lowercase`` on (:meth:`TokenizerView.encodes_as_lowered`); else None."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    spec = json.loads(backend.to_str())
    normalizer = spec.get("normalizer") or {}
    if normalizer.get("type") != "BertNormalizer" or normalizer.get("lowercase") is not True:
        return None
    return tuple(str(token["content"]).lower() for token in spec.get("added_tokens") or ())


def _is_byte_level_without_prefix_space(tokenizer: Any) -> bool:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:  # python-only tokenizer: fall back to observing the behaviour
        return tokenizer.tokenize(" a") != tokenizer.tokenize("a")
    spec = json.loads(backend.to_str()).get("pre_tokenizer") or {}
    nodes = spec.get("pretokenizers", [spec]) if spec.get("type") == "Sequence" else [spec]
    for node in nodes:
        if node.get("type") == "ByteLevel":
            return not node.get("add_prefix_space", False)
    return False
