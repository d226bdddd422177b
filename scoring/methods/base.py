"""The shape every scoring method has: options, units, request building, reduction.

A method is four small functions over one scorer interface:

1. ``units(items, options)`` — what is scored and cached together (a sentence, or a CrowS pair
   whose two sentences are aligned with each other), with the texts it reads (the cache key);
2. ``prepare(unit, tokenizer, options)`` — the forward-pass :class:`~stereoset_eval.scoring.requests.Request`
   objects it needs, and any state the reduction needs;
3. the engine runs the requests (batched, deduplicated) and hands back, per request, the
   natural-log probabilities of its gathers;
4. ``reduce(unit, prepared, outputs, options)`` — the method's number per sentence.

An optional fifth, ``warm(units, tokenizer, options)``, encodes the texts ``prepare`` will encode
in batched tokenizer calls first (speed only: ``prepare`` then reads them from the run's memo).

Methods know tokenizers and texts, never torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence, overload

from stereoset_eval.foundation.items import Item
from stereoset_eval.scoring.records import ScoringError, SentenceResult  # noqa: F401 - SentenceResult re-exported
from stereoset_eval.scoring.records import _new, _set  # a frozen dataclass made with its fields' dict at once
from stereoset_eval.scoring.copies import MaskedCopies
from stereoset_eval.scoring.requests import Request
from stereoset_eval.scoring.table import RequestTable
from stereoset_eval.scoring.tokenization import TokenizerView

MODEL_KINDS: dict[str, str] = {
    "masked": "AutoModelForMaskedLM",
    "causal": "AutoModelForCausalLM",
    "nsp": "AutoModelForNextSentencePrediction",
}


@dataclass(frozen=True)
class Option:
    """A named method option.

    Attributes:
        name: option name (keyword in ``options=``).
        default: the faithful default.
        choices: allowed values, or None for free values checked by ``check``.
        description: what it changes and why.
        in_key: False only for options that select *which* items are scored without changing
            any sentence's number (they stay out of the cache key, but in the provenance).
    """

    name: str
    default: Any
    description: str
    choices: tuple[Any, ...] | None = None
    in_key: bool = True
    check: Callable[[Any], bool] | None = None


@dataclass(frozen=True)
class UnitSpec:
    """What is computed and cached as one piece.

    Attributes:
        item_id: the item.
        sentence_ids / roles: the sentences the unit scores, in the order ``reduce`` returns them.
        inputs: every text the method reads for these sentences (part of the cache key).
    """

    item_id: str
    sentence_ids: tuple[str, ...]
    roles: tuple[str, ...]
    inputs: Mapping[str, Any]

    @classmethod
    def of(cls, item_id: str, sentence_ids: tuple[str, ...], roles: tuple[str, ...], inputs: Mapping[str, Any]) -> "UnitSpec":
        """``UnitSpec(item_id, sentence_ids, roles, inputs)`` with its fields' dict set at once, as
        :meth:`SentenceResult.of` makes results: the same, equal object (one per sentence of a run)."""
        obj = _new(cls)
        _set(obj, "__dict__", {"item_id": item_id, "sentence_ids": sentence_ids, "roles": roles, "inputs": inputs})
        return obj


class Prepared:
    """A unit's forward inputs plus whatever ``reduce`` needs (token ids, template word …).

    The inputs are either ``requests`` (:class:`~stereoset_eval.scoring.requests.Request`, any
    method) or ``copies``: one :class:`~stereoset_eval.scoring.copies.MaskedCopies` per sentence,
    the masked-LM methods' copies in array form, which the engine runs as int codes (issue 35).
    ``requests`` of a unit prepared as copies are made from them when asked, one per copy in
    order: what ``reduce`` receives is the same in both forms. A third form, ``table`` and
    ``index``: the unit is row ``index`` of a :class:`~stereoset_eval.scoring.table.RequestTable`
    holding every unit's requests as arrays (``Method.prepare_table``); its ``requests`` are made
    from the table when asked.
    """

    __slots__ = ("_requests", "copies", "state", "table", "index")

    def __init__(self, requests: list[Request] | None = None, state: dict[str, Any] | None = None, *,
                 copies: tuple[MaskedCopies, ...] | None = None, table: RequestTable | None = None,
                 index: int = 0) -> None:
        if (requests is not None) + (copies is not None) + (table is not None) > 1:
            raise ValueError("a unit is prepared as requests, as masked copies or as a table row, one of them")
        self._requests = requests if requests is not None or copies is not None or table is not None else []
        self.copies = copies
        self.state = state if state is not None else {}
        self.table = table
        self.index = index

    @property
    def requests(self) -> list[Request]:
        if self._requests is None:
            if self.table is not None:
                self._requests = self.table.requests(self.index)
            else:
                assert self.copies is not None
                self._requests = [r for c in self.copies for r in c.requests()]
        return self._requests

    @property
    def longest(self) -> int:
        """Tokens of the unit's longest input (0 for none)."""
        if self.copies is not None:
            return max((len(c.input_ids) for c in self.copies), default=0)
        if self.table is not None:
            return int(self.table.unit_longest()[self.index])
        return max((len(r.input_ids) for r in self.requests), default=0)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Prepared):
            return NotImplemented
        if (self.copies, self.state) != (other.copies, other.state):
            return False
        return self.copies is not None or self.requests == other.requests

    __hash__ = None  # type: ignore[assignment]  # mutable state: not hashable, as the dataclass was

    def __repr__(self) -> str:
        inputs = f"copies={self.copies!r}" if self.copies is not None else f"requests={self._requests!r}"
        return f"Prepared({inputs}, state={self.state!r})"


class TableRowsPrepared(Sequence[Prepared]):
    """Every unit of a run prepared as row ``i`` of one :class:`~stereoset_eval.scoring.table.RequestTable`,
    its state held as columns (``columns[name][i]``: unit ``i``'s ``state[name]``).

    What ``Method.prepare_table`` returns: a sequence of :class:`Prepared` made when asked, each
    equal to what ``prepare`` makes for its unit (lists in the state are made from the columns'
    tuples). The engine reads the table and the columns as they are, so a run makes no object per
    unit until its records (issue 35: 6,318 ``Prepared`` and their state dicts for StereoSet dev).
    """

    __slots__ = ("table", "columns")

    def __init__(self, table: RequestTable, columns: Mapping[str, Sequence[Any]]) -> None:
        self.table = table
        self.columns = dict(columns)

    def __len__(self) -> int:
        return self.table.n_units

    def state(self, i: int) -> dict[str, Any]:
        """Unit ``i``'s state as ``prepare`` gives it (a tuple column's value as a list)."""
        return {name: list(col[i]) if type(col[i]) is tuple else col[i] for name, col in self.columns.items()}

    @overload
    def __getitem__(self, index: int) -> Prepared: ...

    @overload
    def __getitem__(self, index: slice) -> list[Prepared]: ...

    def __getitem__(self, index: int | slice) -> Prepared | list[Prepared]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = range(len(self))[index]  # IndexError past the end, as a list
        return Prepared(state=self.state(i), table=self.table, index=i)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TableRowsPrepared):
            return self.table is other.table and self.columns == other.columns or list(self) == list(other)
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TableRowsPrepared({len(self)} units, columns {sorted(self.columns)})"


@dataclass(frozen=True)
class Method:
    """A named scoring method (see :data:`stereoset_eval.scoring.methods.METHODS`).

    Attributes:
        name: registry name.
        description: one line: what number it produces.
        model_kind: ``masked``, ``causal`` or ``nsp`` (which model class is loaded).
        reference: the implementation it reproduces.
        version: bump when the computation changes (it is part of the cache key).
        options: the method's named options.
        accepts: returns None if the method can score the item, else the reason it cannot.
        units / resolve / prepare / reduce: see the module docstring; ``resolve`` turns
            ``auto`` option values into concrete ones using the tokenizer.
        warm: optional; encodes in batches (:meth:`TokenizerView.encode_many`) the texts
            ``prepare`` is about to encode, so a run makes one tokenizer call per batch instead of
            one per text. ``prepare`` then finds them in the run's memo; numbers are unchanged.
        prepare_many: optional; ``[prepare(u, ...) for u in units]`` in one pass (the same
            requests, state and first error), which the run then uses instead of ``warm`` and ``prepare``.
        prepare_table: optional; what :func:`prepare_many` returns, as rows of one
            :class:`~stereoset_eval.scoring.table.RequestTable` with the states as columns (a
            :class:`TableRowsPrepared`: the same requests and state, the same first error), which
            the engine runs as arrays (:class:`~stereoset_eval.scoring.engine_rows.TableRows`).
        reduce_rows: optional; ``reduce`` of many units at once: the units' states as columns
            (:attr:`TableRowsPrepared.columns`, or made from each unit's state), the units'
            indices, and each one's gathers' log-probabilities as one list in request order
            (``outputs`` flattened). Units prepared as one request table (``prepare_table``) or
            as masked copies (``Prepared.copies``) are handed over a commit group at a time (the
            whole run at once where nothing is committed), in one call, without an object per
            unit or a cut of its values per request. Must return, per unit, what ``reduce`` returns.
        fresh_lists: ``reduce`` and ``reduce_rows`` make every list they put in a result's ``extra``
            anew, for that result alone (crows-nangia's ``positions``), so the read-back that makes
            a computed result equal to a cached one need not copy them (~10 ms a CrowS-Pairs run).
        plain_rows: ``reduce_rows``, handed each unit's values as Python floats (the engine's
            flats are), returns results already in the form the cache reads back (float scores, int
            counts, tuples of Python ints and floats, ``extra`` a dict of str keys and JSON scalars,
            and lists only where ``fresh_lists`` says they are each result's own), so the engine
            does not check each result's form (:meth:`SentenceResult.through_json_units`: 5-8 ms a
            fixture model's StereoSet run). tests/test_sentence_result.py checks every method that
            says so on real runs.
        item_shares_inputs: the units of one item share forward inputs (StereoSet's three options
            share their first masked context), so the engine keeps them in one commit group and
            runs a shared input once (:func:`~stereoset_eval.scoring.requests.plan_groups`'s
            ``items``; a request table's batches are planned over the whole run, where a shared
            input runs once in any case). Off where units of an item share nothing worth it: visiting a CrowS pair's two
            ``pll`` sentences together widens each group's lengths (tiny-bert over CrowS-Pairs:
            padded batches 40 -> 199) for no shared input.
    """

    name: str
    description: str
    model_kind: str
    reference: str
    version: int
    options: tuple[Option, ...]
    accepts: Callable[[Item], str | None]
    units: Callable[[Sequence[Item], Mapping[str, Any]], list[UnitSpec]]
    prepare: Callable[[UnitSpec, TokenizerView, Mapping[str, Any]], Prepared]
    reduce: Callable[[UnitSpec, Prepared, list[list[float]], Mapping[str, Any]], list[SentenceResult]]
    resolve: Callable[[TokenizerView, Mapping[str, Any]], dict[str, Any]] = lambda tok, opts: dict(opts)
    warm: Callable[[Sequence[UnitSpec], TokenizerView, Mapping[str, Any]], None] | None = None
    prepare_many: Callable[[Sequence[UnitSpec], TokenizerView, Mapping[str, Any]], list[Prepared]] | None = None
    item_shares_inputs: bool = False
    prepare_table: Callable[[Sequence[UnitSpec], TokenizerView, Mapping[str, Any]], Sequence[Prepared]] | None = None
    reduce_rows: Callable[[Mapping[str, Sequence[Any]], Sequence[int], Sequence[list[float]], Mapping[str, Any]],
                          list[list[SentenceResult]]] | None = None
    fresh_lists: bool = False
    plain_rows: bool = False

    def validate_options(self, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """Defaults filled in; unknown names and bad values raise :class:`ScoringError`."""
        options = dict(options or {})
        known = {o.name: o for o in self.options}
        unknown = sorted(set(options) - set(known))
        if unknown:
            listed = ", ".join(known) or "none"
            raise ScoringError(f"method {self.name} has no option(s) {', '.join(unknown)}; its options: {listed}")
        out: dict[str, Any] = {}
        for name, opt in known.items():
            value = options.get(name, opt.default)
            if opt.choices is not None and value not in opt.choices:
                raise ScoringError(f"method {self.name}: option {name}={value!r} is not one of {list(opt.choices)}")
            if opt.check is not None and not opt.check(value):
                raise ScoringError(f"method {self.name}: option {name}={value!r} is invalid ({opt.description})")
            out[name] = value
        return out

    def key_options(self, resolved: Mapping[str, Any]) -> dict[str, Any]:
        """The resolved options that change numbers (the cache key part)."""
        skip = {o.name for o in self.options if not o.in_key}
        return {k: v for k, v in sorted(resolved.items()) if k not in skip}


def unit_error(method: str, unit: UnitSpec, problem: str) -> ScoringError:
    return ScoringError(f"method {method}, item {unit.item_id} (sentences {', '.join(unit.sentence_ids)}): {problem}")


def sentence_units(items: Sequence[Item], text_inputs: Callable[[Item, str], Mapping[str, Any]]) -> list[UnitSpec]:
    """One unit per sentence of every item, in item order."""
    of = UnitSpec.of
    return [of(item.id, (s.id,), (s.role,), text_inputs(item, s.text)) for item in items for s in item.sentences]


def accepts_any_sentences(item: Item) -> str | None:
    """``accepts`` of the methods that score each sentence on its own (any item with sentences)."""
    return None if item.sentences else "has no sentences"


def single_sentence_units(items: Sequence[Item], options: Mapping[str, Any]) -> list[UnitSpec]:
    """``units`` of the methods that score each sentence on its own: input ``{"sentence": text}``."""
    return sentence_units(items, lambda item, text: {"sentence": text})


def warm_inputs(*names: str, special: bool) -> Callable[[Sequence[UnitSpec], TokenizerView, Mapping[str, Any]], None]:
    """A ``warm`` for methods whose ``prepare`` encodes unit inputs ``names`` as they are."""
    def warm(units: Sequence[UnitSpec], tok: TokenizerView, options: Mapping[str, Any]) -> None:
        tok.encode_many((u.inputs[n] for u in units for n in names), special=special)
    return warm


def is_int_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)
