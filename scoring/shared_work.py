"""Work shared by the methods of one run: encodings and masked-input log-probabilities.

The BMNE protocol scores the same sentences with several masked-LM methods: every
``crows-nangia`` masked copy is the ``pll`` masked copy of the same token, and ``pll-word-l2r``'s
copy of a one-piece word is ``pll``'s. A :class:`SharedWork` passed to every
:func:`~stereoset_eval.scoring.api.score_items` call of a run (``score`` and the local study
executor do this) makes those methods compute each distinct masked input once:

* **positions** — ``(input ids, token type ids, position, target) -> log p`` per model, where
  the model key is the backend's cache identity plus the scorer path (``last_layer``), so a value
  is reused only for the very same computation. A later method reads a row's values instead of
  running it when every gather of the row is there; the numbers equal that method run alone up
  to float32 batch noise (a row's values come from another batch composition, as they would
  with another ``batch_tokens``). Masked copies (:mod:`stereoset_eval.scoring.copies`) are
  kept by their int code instead, as arrays in the model's one
  :class:`~stereoset_eval.scoring.copies.CopyTable` (:meth:`SharedWork.copy_table`,
  :meth:`~stereoset_eval.scoring.copies.CopyTable.known_values`), so that a code means the same
  masked input to every method of the run.
* **encodings** — ``text -> token ids`` per tokenizer (see
  :meth:`~stereoset_eval.scoring.tokenization.TokenizerView.memoized`), so each distinct text is
  encoded once for the length check and every method (and each distinct id sequence decoded once).

Scoped to a run, never process-wide: the owner drops it when the run ends, so memory does not
grow with the number of runs, and entries of a model are dropped when the next model starts (a
study runs its models one after another). Counters say what was shared (``run.execution`` in
the provenance).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable

from stereoset_eval.scoring.copies import CopyTable
from stereoset_eval.scoring.tokenization import DECODED

PositionKey = tuple[Hashable, int, int] | int  # (BatchRow.key, position, target), or a masked copy's code


@dataclass
class SharedWork:
    """Per-run store of encodings and computed ``(masked input, position, target)`` values.

    Attributes:
        rows_computed / rows_reused: forward-pass rows run, and rows whose every value was found
            here instead (summed over the run's calls).
    """

    rows_computed: int = 0
    rows_reused: int = 0
    _model: Any = None
    _positions: dict[PositionKey, float] = field(default_factory=dict, repr=False)
    _copy_table: CopyTable | None = field(default=None, repr=False)
    _tokenizer: Any = None
    _encodings: dict[Any, Any] = field(default_factory=dict, repr=False)

    def positions(self, model_key: Any) -> dict[PositionKey, float]:
        """The value store of ``model_key``; another model's entries are dropped first."""
        if model_key != self._model:
            self._model, self._positions, self._copy_table = model_key, {}, None
        return self._positions

    def copy_table(self, model_key: Any) -> CopyTable:
        """The masked-copy table whose codes key ``model_key``'s values (dropped with them)."""
        self.positions(model_key)
        if self._copy_table is None:
            self._copy_table = CopyTable()
        return self._copy_table

    def encodings(self, tokenizer_key: Any) -> dict[Any, Any]:
        """The encoding memo of ``tokenizer_key``; another tokenizer's entries are dropped first."""
        if tokenizer_key != self._tokenizer:
            self._tokenizer, self._encodings = tokenizer_key, {}
        return self._encodings

    def counts(self) -> dict[str, int]:
        """Counters for the provenance."""
        copies = len(self._copy_table.known_values()[0]) if self._copy_table is not None else 0
        return {"rows_computed": self.rows_computed, "rows_reused": self.rows_reused,
                "values_held": len(self._positions) + copies,
                "texts_encoded": sum(1 for key in self._encodings if key[1] != DECODED)}
