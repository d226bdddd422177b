"""Tiny hand-made items for doctests and hand-computed tests.

Real items come from the loaders; these builders make the few-item examples that metric
docstrings and tests compute by hand, with readable sentence ids (``<item>:stereotype`` …).
"""

from __future__ import annotations

from stereoset_eval.foundation.items import Item, Provenance, Sentence

_PROV = Provenance(source_file="<toy>", sha256="", row=None, format="toy")


def stereoset_item(item_id: str, *, target: str = "t", bias_type: str = "gender", task: str = "intrasentence") -> Item:
    """A StereoSet item whose sentence ids are ``<item_id>:stereotype|anti-stereotype|unrelated``."""
    source = {"intrasentence": "stereoset-intra", "intersentence": "stereoset-inter"}[task]
    roles = ("stereotype", "anti-stereotype", "unrelated")
    return Item(
        id=item_id,
        source=source,
        bias_type=bias_type,
        target=target,
        context="BLANK" if task == "intrasentence" else "context",
        sentences=tuple(Sentence(id=f"{item_id}:{r}", text=r, role=r) for r in roles),
        provenance=_PROV,
    )


def pair_item(
    item_id: str,
    *,
    bias_type: str = "gender",
    direction: str = "stereo",
    dimension: str | None = None,
    source: str = "crows-pairs",
) -> Item:
    """A pair item whose sentence ids are ``<item_id>:more`` / ``<item_id>:less``."""
    return Item(
        id=item_id,
        source=source,
        bias_type=bias_type,
        direction=direction,
        dimension=dimension,
        sentences=(
            Sentence(id=f"{item_id}:more", text="more", role="sent_more"),
            Sentence(id=f"{item_id}:less", text="less", role="sent_less"),
        ),
        provenance=_PROV,
    )


def stereoset_scores(item_id: str, stereotype: float, anti: float, unrelated: float) -> dict[str, float]:
    """Scores of one :func:`stereoset_item` keyed by its sentence ids."""
    return {
        f"{item_id}:stereotype": stereotype,
        f"{item_id}:anti-stereotype": anti,
        f"{item_id}:unrelated": unrelated,
    }


def pair_scores(item_id: str, more: float, less: float) -> dict[str, float]:
    """Scores of one :func:`pair_item` keyed by its sentence ids."""
    return {f"{item_id}:more": more, f"{item_id}:less": less}
