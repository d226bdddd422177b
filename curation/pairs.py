"""Harmonise benchmark items into one pair format (BMNE paper §4.1).

Every item becomes a pair item (``source="curated"``) with ``sent_more`` = the
stereotypical sentence, ``sent_less`` = the anti-stereotypical one, a ``direction``, the
bias type and a link to its source item:

* StereoSet intrasentence: ``sent_more`` = the stereotype option, ``sent_less`` = the
  anti-stereotype option, direction ``stereo``; the unrelated option is set aside (it has no
  place in a minimal pair); ``target`` is kept.
* CrowS-Pairs: the sentences as they are. ``antistereo`` rows keep their meaning: their
  ``sent_more`` is still the more stereotypical sentence (about the advantaged group), as in
  the reference ``metric.py``, which counts ``sent_more`` > ``sent_less`` for both directions.

Ids are ``<origin source>/<origin id>`` (``crows-pairs/crows:709``,
``stereoset-intra/15af6c44…``); derived instances append ``#m`` / ``#l``. Provenance keeps
the source file, checksum and row; ``derived_from`` is the source item id and
``sentence_origins`` maps each pair role to the source role (``sent_more`` ← ``stereotype``).
"""

from __future__ import annotations

from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.items import Flag, Item, Provenance, Sentence

HARMONISABLE: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    # source -> ((pair role, source role) for sent_more, for sent_less)
    "stereoset-intra": (("sent_more", "stereotype"), ("sent_less", "anti-stereotype")),
    "crows-pairs": (("sent_more", "sent_more"), ("sent_less", "sent_less")),
    "crows-pairs-revised": (("sent_more", "sent_more"), ("sent_less", "sent_less")),
}
INSTANCE_SEPARATOR = "#"


def pair_id(origin_source: str, origin_id: str) -> str:
    return f"{origin_source}/{origin_id}"


def origin_of(item: Item) -> tuple[str, str]:
    """``(origin source, origin item id)`` of a curated item; ``(source, id)`` otherwise.

    >>> from stereoset_eval.foundation.items import Provenance
    >>> it = Item("crows-pairs/crows:9#l", "curated", "gender", (), Provenance("f", "0", 1, "crows-csv"))
    >>> origin_of(it)
    ('crows-pairs', 'crows:9')
    """
    if item.source != "curated" or "/" not in item.id:
        return item.source, item.id
    src, _, rest = item.id.partition("/")
    return src, rest.split(INSTANCE_SEPARATOR, 1)[0]


def origin_source(item: Item) -> str:
    return origin_of(item)[0]


def sentence_ids(item_id: str) -> tuple[str, str]:
    return f"{item_id}:more", f"{item_id}:less"


def rehome_flags(flags: tuple[Flag, ...], item_id: str) -> tuple[Flag, ...]:
    """Copies of ``flags`` addressed to ``item_id`` (a derived item keeps its source's load flags)."""
    return tuple(Flag(f.rule, item_id, f.severity, f.message, f.evidence) for f in flags)


def harmonise(item: Item) -> Item:
    """The pair form of one StereoSet intrasentence or CrowS-Pairs item."""
    if item.source not in HARMONISABLE:
        raise StereosetEvalError(
            f"item {item.id}: cannot harmonise source {item.source!r} into a pair; "
            f"supported: {', '.join(sorted(HARMONISABLE))}"
        )
    (more_role, more_src), (less_role, less_src) = HARMONISABLE[item.source]
    new_id = pair_id(item.source, item.id)
    more_id, less_id = sentence_ids(new_id)
    p = item.provenance
    return Item(
        id=new_id,
        source="curated",
        bias_type=item.bias_type,
        sentences=(
            Sentence(id=more_id, text=item.text(more_src), role=more_role),
            Sentence(id=less_id, text=item.text(less_src), role=less_role),
        ),
        provenance=Provenance(
            source_file=p.source_file, sha256=p.sha256, row=p.row, format=p.format,
            format_version=p.format_version, derived_from=item.id,
            sentence_origins=((more_role, more_src), (less_role, less_src)),
        ),
        target=item.target,
        direction=item.direction or "stereo",
        split=item.split,
        flags=rehome_flags(item.flags, new_id),
    )


def harmonise_all(items: list[Item]) -> list[Item]:
    """:func:`harmonise` over ``items`` (every item must be of a harmonisable source)."""
    return [harmonise(it) for it in items]
