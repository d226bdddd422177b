"""The one item model shared by every stage of the toolkit.

Loaders turn raw benchmark files into :class:`Item` objects; curation rules, swaps and
taggers return *new* items (items are frozen); scorers and metrics key their records by
``Item.id`` and ``Sentence.id``. Only the loaders know raw file formats.

Roles of sentences:

* StereoSet items carry three sentences with roles ``stereotype``, ``anti-stereotype`` and
  ``unrelated`` plus the ``context`` (with ``BLANK`` for intrasentence items).
* CrowS-Pairs and harmonised pair items carry ``sent_more`` and ``sent_less`` and a
  ``direction`` (``stereo`` or ``antistereo``) telling whether ``sent_more`` is the
  stereotype of a disadvantaged group or the anti-stereotype of an advantaged one.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

STEREOSET_ROLES: tuple[str, ...] = ("stereotype", "anti-stereotype", "unrelated")
PAIR_ROLES: tuple[str, ...] = ("sent_more", "sent_less")
DIRECTIONS: tuple[str, ...] = ("stereo", "antistereo")
STEREOSET_TASKS: tuple[str, ...] = ("intrasentence", "intersentence")

SOURCES: dict[str, str] = {
    "stereoset-intra": "StereoSet intrasentence (fill-in-the-BLANK) examples",
    "stereoset-inter": "StereoSet intersentence (context + continuation) examples",
    "crows-pairs": "CrowS-Pairs, original 1,508 pairs (Nangia et al. 2020)",
    "crows-pairs-revised": "CrowS-Pairs, revised English file (Neveol et al. 2022)",
    "curated": "Harmonised gender-swap pairs produced by stereoset-eval curation",
    "bmne-stereoset": "The BMNE release (Zakizadeh & Pilehvar 2025), StereoSet subset, human dimension tags",
    "bmne-crowspairs": "The BMNE release (Zakizadeh & Pilehvar 2025), CrowS-Pairs subset, human dimension tags",
}

SEVERITIES: tuple[str, ...] = ("info", "warning", "error")


@dataclass(frozen=True)
class Edit:
    """One token edit made by a transform: token ``index`` changed from ``old`` to ``new``.

    ``sentence_role`` names which sentence of the item was edited.
    """

    sentence_role: str
    index: int
    old: str
    new: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Provenance:
    """Where an item came from: file, checksum, row and format; plus derivation history.

    ``row`` is the 1-based data row (or line for JSONL, or list index for JSON) in
    ``source_file``; for derived items ``derived_from`` is the parent item id and ``edits``
    the list of edits that turn the parent's sentences into this item's sentences.
    ``sentence_origins`` pairs each sentence role of a derived item with the role of the
    parent sentence it was made from (the one its ``edits`` apply to): a curated pair may
    take its ``sent_less`` from the parent's ``sent_more``.
    """

    source_file: str
    sha256: str
    row: int | None
    format: str
    format_version: str = "1"
    derived_from: str | None = None
    edits: tuple[Edit, ...] = ()
    note: str | None = None
    sentence_origins: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["edits"] = [e.to_dict() for e in self.edits]
        out["sentence_origins"] = [list(o) for o in self.sentence_origins]
        return out


@dataclass(frozen=True)
class Flag:
    """A finding about an item: a data anomaly seen at load time or a curation pitfall.

    ``evidence`` holds the machine-readable reason (tokens, lexicon entries, positions).
    Flags never remove an item; they travel with it so a report can count them.
    """

    rule: str
    item_id: str
    severity: str
    message: str
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"Flag severity must be one of {SEVERITIES}, got {self.severity!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "item_id": self.item_id,
            "severity": self.severity,
            "message": self.message,
            "evidence": dict(self.evidence),
        }


@dataclass(frozen=True)
class Sentence:
    """One scorable sentence with its gold role inside its item."""

    id: str
    text: str
    role: str


@dataclass(frozen=True)
class Item:
    """A benchmark item: StereoSet example, CrowS-Pairs pair or harmonised pair.

    Attributes:
        id: stable id (official StereoSet example id, ``crows:<row>``, or a documented hash).
        source: one of :data:`SOURCES`.
        bias_type: the benchmark's bias type label (normalised, lower case).
        sentences: the item's sentences with their gold roles.
        provenance: file, checksum, row, format and derivation history.
        target: StereoSet target term (None for CrowS-Pairs).
        context: StereoSet context (intrasentence contexts contain ``BLANK``).
        direction: ``stereo``/``antistereo`` for pair items, None for StereoSet.
        split: data split (``dev``, ``test``) when known.
        dimension: stereotype dimension tag, when tagged.
        flags: anomalies and pitfalls found for this item.
    """

    id: str
    source: str
    bias_type: str
    sentences: tuple[Sentence, ...]
    provenance: Provenance
    target: str | None = None
    context: str | None = None
    direction: str | None = None
    split: str | None = None
    dimension: str | None = None
    flags: tuple[Flag, ...] = ()

    @property
    def task(self) -> str | None:
        """``intrasentence``/``intersentence`` for StereoSet items, else None."""
        return {"stereoset-intra": "intrasentence", "stereoset-inter": "intersentence"}.get(
            self.source
        )

    @property
    def is_pair(self) -> bool:
        return self.direction is not None

    def sentence(self, role: str) -> Sentence:
        """The sentence with gold ``role``; KeyError naming the item if absent."""
        for s in self.sentences:
            if s.role == role:
                return s
        raise KeyError(f"item {self.id} has no sentence with role {role!r}")

    def text(self, role: str) -> str:
        return self.sentence(role).text

    def with_flags(self, flags: Iterable[Flag]) -> "Item":
        """A copy with ``flags`` appended (items are immutable)."""
        return dataclasses.replace(self, flags=self.flags + tuple(flags))

    def replace(self, **changes: Any) -> "Item":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "bias_type": self.bias_type,
            "target": self.target,
            "context": self.context,
            "direction": self.direction,
            "split": self.split,
            "dimension": self.dimension,
            "sentences": [dataclasses.asdict(s) for s in self.sentences],
            "flags": [f.to_dict() for f in self.flags],
            "provenance": self.provenance.to_dict(),
        }


def stable_id(*parts: str, prefix: str = "", length: int = 32) -> str:
    """Deterministic id for sources without official ids.

    sha1 over the parts joined by the unit separator ``\\x1f`` (so ("ab", "c") and
    ("a", "bc") differ), first ``length`` hex digits, with an optional prefix. Documented
    in the README; changing it changes every cache key, so it never changes silently.
    """
    digest = hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:length]
    return f"{prefix}{digest}"
