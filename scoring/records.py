"""Score records: what a scoring run returns, kept separate from the items it scored.

A :class:`SentenceScore` is one sentence's number under one method (plus what it was computed
from: token ids, per-token log-probabilities, method-specific extras); a :class:`ScoreSet`
is one run: the records, the ``sentence id -> score`` mapping the metrics consume, the
provenance that makes the numbers reproducible, and cache statistics.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from stereoset_eval.foundation.errors import StereosetEvalError


class ScoringError(StereosetEvalError, ValueError):
    """Scoring cannot proceed: bad options, unusable model, or items a method cannot score.

    Messages name the model, method, item and sentence ids involved.
    """


@dataclass(frozen=True)
class SentenceResult:
    """What a method's ``reduce`` returns for one sentence: what the cache stores for it.

    The cache holds a unit's results as a JSON list of :meth:`to_json` objects (the shape the
    toolkit has always written: ``score``, ``n_tokens``, ``token_ids``, ``token_logprobs``,
    ``extra``), so entries written before this class existed read back unchanged
    (:meth:`from_json`).

    Attributes:
        score: the method's number (NaN if undefined).
        n_tokens: how many token predictions went into ``score``.
        token_ids / token_logprobs: the scored tokens and their natural-log probabilities.
        extra: method-specific details (JSON values).
    """

    score: float
    n_tokens: int
    token_ids: tuple[int, ...] | None = None
    token_logprobs: tuple[float, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, score: float, n_tokens: int, token_ids: tuple[int, ...] | None = None,
           token_logprobs: tuple[float, ...] | None = None, extra: Mapping[str, Any] | None = None) -> "SentenceResult":
        """``SentenceResult(score, n_tokens, token_ids, token_logprobs, extra)`` (``extra`` None: an
        empty dict), made without the frozen dataclass's one ``object.__setattr__`` per field: its
        fields' dict set at once, the same, equal object at a third of the cost (a reduction makes
        one per sentence; issue 35)."""
        obj = _new(cls)
        _set(obj, "__dict__", {"score": score, "n_tokens": n_tokens, "token_ids": token_ids,
                               "token_logprobs": token_logprobs, "extra": {} if extra is None else extra})
        return obj

    def to_json(self) -> dict[str, Any]:
        """The cache's JSON object for this result."""
        return {
            "score": self.score,
            "n_tokens": self.n_tokens,
            "token_ids": list(self.token_ids) if self.token_ids is not None else None,
            "token_logprobs": list(self.token_logprobs) if self.token_logprobs is not None else None,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "SentenceResult":
        """A result from its cache object (also those written by earlier versions, the same shape)."""
        ids, lps = data.get("token_ids"), data.get("token_logprobs")
        return cls(
            score=data["score"],
            n_tokens=data["n_tokens"],
            token_ids=tuple(ids) if ids is not None else None,
            token_logprobs=tuple(lps) if lps is not None else None,
            extra=dict(data.get("extra") or {}),
        )

    @staticmethod
    def through_json(results: list["SentenceResult"]) -> list["SentenceResult"]:
        """``results`` as they read back from the cache (JSON's types), so computed == cached.

        A result made only of plain JSON values (``float``, ``int``, ``str``, ``bool``, ``None``,
        lists, tuples, dicts with string keys, all of exactly those types) reads back equal to
        itself with its tuples turned into lists, so it is rebuilt that way directly
        (:func:`_as_read_back`): the text round trip cost 15 % of a fixture model's StereoSet run,
        mostly in the repr of every per-token log-probability. Anything else (numpy numbers, other
        key types, float subclasses) takes the real round trip through ``json``.
        """
        out = []
        for result in results:
            try:
                out.append(_as_read_back(result))
            except _NotPlain:
                out.append(SentenceResult.from_json(json.loads(json.dumps(result.to_json()))))
        return out

    @staticmethod
    def through_json_units(units: list[list["SentenceResult"]], *,
                           fresh_lists: bool = False) -> list[list["SentenceResult"]]:
        """:meth:`through_json` of each unit's results: where every result of every unit already is
        what the cache reads back (:func:`_read_back_form`, checked with C-level loops over all of
        them at once) the units' lists as they are, else each unit's through :meth:`through_json`
        (issue 35: the per-result checks cost 15 ms of a fixture model's StereoSet run). Where the
        only lists are flat lists of scalars in ``extra`` (``crows-nangia``'s positions), each result
        is rebuilt with copies of those lists, as :func:`_as_read_back` rebuilds it, without its
        per-result checks (issue 35: 21 ms of a CrowS-Pairs run); where the method made those lists
        for these results alone (``fresh_lists``: :attr:`~stereoset_eval.scoring.methods.base.Method.fresh_lists`), as they are."""
        flat = [r for results in units for r in results]
        form = _read_back_form(flat)
        if form == "as is" or (form == "copy lists" and fresh_lists):
            return units
        if form == "copy lists":
            return [[_with_list_copies(r) for r in results] for results in units]
        return [SentenceResult.through_json(results) for results in units]


# an instance of a frozen dataclass with its fields' dict set at once (the generated ``__init__``
# sets them one by one through ``object.__setattr__``): what ``of`` does, at a third of the cost
_new, _set = object.__new__, object.__setattr__


class _NotPlain(Exception):
    """A value whose JSON round trip is more than turning tuples into lists."""


_SCALARS = (float, int, str, bool, type(None))


def _plain(value: Any) -> Any:
    """``value`` as ``json.loads(json.dumps(value))`` returns it, for plain JSON values (else _NotPlain)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list or kind is tuple:
        return [_plain(v) for v in value]
    if kind is dict:
        out = {}
        for key, v in value.items():
            if type(key) is not str:
                raise _NotPlain
            out[key] = _plain(v)
        return out
    raise _NotPlain


def _plain_tuple(values: tuple[Any, ...] | None, kind: type) -> tuple[Any, ...] | None:
    """A token field as :meth:`SentenceResult.from_json` rebuilds it: a tuple of ``kind`` values."""
    if values is None:
        return None
    if type(values) is not tuple or (values and set(map(type, values)) != {kind}):  # map/set: C loops
        values = tuple(_plain(list(values)))
        if values and set(map(type, values)) != {kind}:
            raise _NotPlain
    return values


def _plain_list(value: Any) -> bool:
    """True for a list of plain scalars (JSON reads it back as an equal list: ``crows-nangia``'s
    positions), checked with C-level loops instead of :func:`_plain`'s recursion."""
    return type(value) is list and set(map(type, value)) <= _SCALAR_SET


_SCALAR_SET = frozenset(_SCALARS)


def _read_back_form(results: list[SentenceResult]) -> str:
    """How :func:`_as_read_back` treats every one of ``results``, checked with C-level loops over all
    of them at once: ``"as is"`` (a float or int score, an int ``n_tokens``, token fields None or
    tuples of exact ints / floats, ``extra`` a dict of string keys and scalar values); ``"copy
    lists"`` (the same, but some ``extra`` values are lists of scalars: rebuilt with copies of them);
    else ``"each"`` (every result through :meth:`SentenceResult.through_json`)."""
    from itertools import chain
    from operator import attrgetter

    def types(values: Any) -> set[type]:
        return set(map(type, values))

    token_ids = list(map(attrgetter("token_ids"), results))
    token_logprobs = list(map(attrgetter("token_logprobs"), results))
    extras = list(map(attrgetter("extra"), results))
    if not (types(map(attrgetter("score"), results)) <= {float, int}
            and types(map(attrgetter("n_tokens"), results)) <= {int}
            and types(token_ids) <= {tuple, type(None)} and types(chain.from_iterable(filter(None, token_ids))) <= {int}
            and types(token_logprobs) <= {tuple, type(None)}
            and types(chain.from_iterable(filter(None, token_logprobs))) <= {float}
            and types(extras) <= {dict} and types(chain.from_iterable(extras)) <= {str}):
        return "each"
    values = list(chain.from_iterable(map(dict.values, extras)))
    value_types = types(values)
    if value_types <= _SCALAR_SET:
        return "as is"
    if value_types <= _SCALAR_SET | {list} and types(chain.from_iterable(v for v in values if type(v) is list)) <= _SCALAR_SET:
        return "copy lists"
    return "each"


def _list_copies(extra: Mapping[str, Any]) -> dict[str, Any]:
    """``extra`` with a copy of each of its lists (reduce may still hold them)."""
    return {k: list(v) if type(v) is list else v for k, v in extra.items()}


def _with_list_copies(result: SentenceResult) -> SentenceResult:
    """``result`` with a copy of each list in its ``extra`` (what :func:`_as_read_back` returns for a
    result :func:`_read_back_form` found ``"copy lists"``)."""
    return SentenceResult.of(result.score, result.n_tokens, result.token_ids, result.token_logprobs,
                             _list_copies(result.extra))


def _as_read_back(result: SentenceResult) -> SentenceResult:
    if type(result.score) not in (float, int) or type(result.n_tokens) is not int:
        raise _NotPlain
    extra = result.extra
    token_ids = _plain_tuple(result.token_ids, int)
    token_logprobs = _plain_tuple(result.token_logprobs, float)
    if type(extra) is dict and all(type(k) is str and type(v) in _SCALARS for k, v in extra.items()):
        if token_ids is result.token_ids and token_logprobs is result.token_logprobs:
            return result  # already what the cache reads back (tuples of exact ints / floats, a flat dict of scalars)
        extra = dict(extra)
    elif type(extra) is dict and all(type(k) is str and (type(v) in _SCALARS or _plain_list(v)) for k, v in extra.items()):
        extra = _list_copies(extra)  # copies: reduce may still hold the lists
    else:
        extra = _plain(dict(extra))
    return SentenceResult(score=result.score, n_tokens=result.n_tokens, token_ids=token_ids,
                          token_logprobs=token_logprobs, extra=extra)


@dataclass(frozen=True)
class SentenceScore:
    """One sentence's score under one method.

    Attributes:
        item_id: the item the sentence belongs to.
        sentence_id: the sentence id (official StereoSet id, ``crows:<row>:more`` …).
        role: the sentence's gold role inside its item.
        score: the method's documented number (see the method's docstring).
        n_tokens: how many token predictions went into ``score``.
        token_ids: the scored token ids, in order (None when not meaningful, e.g. NSP).
        token_logprobs: natural-log probability of each scored token, aligned with ``token_ids``.
        extra: method-specific details (e.g. ``unrounded`` for crows-nangia, ``template_word``).
    """

    item_id: str
    sentence_id: str
    role: str
    score: float
    n_tokens: int
    token_ids: tuple[int, ...] | None = None
    token_logprobs: tuple[float, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, item_id: str, sentence_id: str, role: str, score: float, n_tokens: int,
           token_ids: tuple[int, ...] | None, token_logprobs: tuple[float, ...] | None,
           extra: Mapping[str, Any]) -> "SentenceScore":
        """``SentenceScore(...)`` with every field given, made as :meth:`SentenceResult.of` makes results."""
        obj = _new(cls)
        _set(obj, "__dict__", {"item_id": item_id, "sentence_id": sentence_id, "role": role, "score": score,
                               "n_tokens": n_tokens, "token_ids": token_ids, "token_logprobs": token_logprobs,
                               "extra": extra})
        return obj

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "sentence_id": self.sentence_id,
            "role": self.role,
            "score": _json_float(self.score),
            "n_tokens": self.n_tokens,
            "token_ids": list(self.token_ids) if self.token_ids is not None else None,
            "token_logprobs": [_json_float(x) for x in self.token_logprobs] if self.token_logprobs is not None else None,
            "extra": {k: _json_float(v) if isinstance(v, float) else v for k, v in self.extra.items()},
        }


def _json_float(x: float) -> float | None:
    """JSON has no NaN/inf; they become null (the metrics reject them with a named error)."""
    return x if math.isfinite(x) else None


@dataclass
class ScoreSet:
    """The result of one :func:`stereoset_eval.scoring.score_items` call.

    Attributes:
        method: the method name.
        records: one :class:`SentenceScore` per scored sentence, in item order.
        provenance: model id, revision, weights sha256, method, every option, library versions.
        cache_stats: ``{"hits": sentences read from the cache, "computed": sentences computed}``.
    """

    method: str
    records: list[SentenceScore]
    provenance: dict[str, Any]
    cache_stats: dict[str, int]
    scores: dict[str, float] = field(init=False)
    _by_id: dict[str, SentenceScore] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.scores = {r.sentence_id: r.score for r in self.records}
        self._by_id = {r.sentence_id: r for r in self.records}

    def __len__(self) -> int:
        return len(self.records)

    def record(self, sentence_id: str) -> SentenceScore:
        """The record of ``sentence_id`` (KeyError naming the method if it was not scored)."""
        if sentence_id in self._by_id:
            return self._by_id[sentence_id]
        raise KeyError(f"no score for sentence {sentence_id!r} in this {self.method} score set")
