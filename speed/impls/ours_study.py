"""``ours-study``: the BMNE protocol's masked-LM methods over one dataset in one run.

``pll``, ``pll-word-l2r`` and ``crows-nangia`` (:data:`speed.specs.STUDY_METHODS`) scored one after
another through :func:`stereoset_eval.scoring.api.score_items` with one
:class:`~stereoset_eval.scoring.shared_work.SharedWork` (cache off), as ``study`` runs them: each
distinct text is encoded once and each distinct masked input run once. Timed against ``ours``
running ``pll`` alone (the study row). Its comparable numbers are pll's; :meth:`StudyRunner.extra`
(untimed, at the end) also scores each method alone and reports the largest difference per
method, and the forward rows run and reused.
"""

from __future__ import annotations

from typing import Any, Sequence

from speed.impls import CellContext, Implementation, seconds_in_model
from speed.specs import STUDY_METHODS
from stereoset_eval.foundation.items import Item

STUDY = "study"


def _comparable(score_set: Any) -> dict[str, float]:
    if score_set.method == "crows-nangia":
        return {r.sentence_id: float(r.extra["unrounded"]) for r in score_set.records}
    return {r.sentence_id: float(r.score) for r in score_set.records}


class StudyRunner:
    def __init__(self, ctx: CellContext) -> None:
        from stereoset_eval.scoring.backends import load_backend

        self.ctx = ctx
        load_backend(str(ctx.model_path), kind=ctx.kind, device=ctx.device)  # cached for score_items
        self.items: Sequence[Item] = ()

    def prepare(self, items: Sequence[Item]) -> Sequence[Item]:
        self.items = items
        return items

    def _score(self, items: Sequence[Item], method: str, shared: Any) -> Any:
        from stereoset_eval.scoring.api import score_items

        from stereoset_eval.scoring.settings import RunSettings

        return score_items(items, model=str(self.ctx.model_path), method=method, device=self.ctx.device,
                           batch_tokens=self.ctx.batch_tokens, use_cache=False, shared=shared,
                           settings=RunSettings(share_masked_inputs="on"))

    def run(self, items: Sequence[Item]) -> dict[str, Any]:
        from stereoset_eval.scoring.shared_work import SharedWork

        shared = SharedWork()
        out = {m: self._score(items, m, shared) for m in STUDY_METHODS}
        out["_shared"] = shared.counts()
        out["_items"] = items  # the items of this run (prepare also sees the warm-up's)
        return out

    def scores(self, output: dict[str, Any]) -> dict[str, float]:
        return _comparable(output["pll"])

    def model_seconds(self, output: dict[str, Any]) -> float:
        """The run's seconds in the model over its three methods (:func:`~speed.impls.seconds_in_model`
        of each); the rest of its wall time is host work."""
        return sum(seconds_in_model(output[m]) for m in STUDY_METHODS)

    def scored_tokens(self, output: dict[str, Any]) -> int:
        return sum(r.n_tokens for r in output["pll"].records)

    def extra(self, output: dict[str, Any]) -> dict[str, Any]:
        """Each method alone (untimed): the largest |Δ| from the shared run, and the rows each ran."""
        diffs: dict[str, float | None] = {}
        rows = {}
        for m in STUDY_METHODS:
            alone = self._score(output["_items"], m, None)
            a, b = _comparable(alone), _comparable(output[m])
            diffs[m] = max((abs(a[k] - b[k]) for k in a), default=0.0) if a.keys() == b.keys() else None  # None: JSON-safe
            rows[m] = {"alone": alone.provenance["run"]["execution"]["rows_computed"],
                       "in_study": output[m].provenance["run"]["execution"]["rows_computed"],
                       "reused_in_study": output[m].provenance["run"]["execution"]["rows_reused"]}
        return {"max_abs_diff_vs_alone": diffs, "forward_rows": rows, "shared": output["_shared"]}


IMPLEMENTATION = Implementation(
    name="ours-study",
    description="pll + pll-word-l2r + crows-nangia through score_items with one SharedWork (as `study` runs them), "
                "cache off; timed against ours running pll alone",
    methods=frozenset({STUDY}),
    setup=StudyRunner,
)
