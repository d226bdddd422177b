"""The implementations the benchmark times, behind one three-step interface.

Each implementation's :class:`Runner` splits a measurement into ``prepare`` (untimed: e.g. the
floor builds its tensors), ``run`` (timed) and ``scores`` (untimed: sentence id -> the
method's comparable number, see :data:`speed.specs.COMPARED`). Model loading happens in
``setup`` and is timed separately (``load_s``), never inside ``run``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from stereoset_eval.foundation.items import Item


@dataclass(frozen=True)
class CellContext:
    """What an implementation needs to know to set itself up."""

    model_path: Path
    kind: str
    method: str
    batch_tokens: int
    minicons_batch_size: int
    device: str = "cpu"                         # torch device every implementation runs on
    reference_autograd: str = "as-reference"    # reference loop: autograd as the reference has it, or "off"


class Runner(Protocol):
    def prepare(self, items: Sequence[Item]) -> Any: ...
    def run(self, prepared: Any) -> Any: ...
    def scores(self, output: Any) -> dict[str, float]: ...


@dataclass(frozen=True)
class Implementation:
    """A named implementation.

    Attributes:
        name: ``ours``, ``reference-loop``, ``minicons`` or ``floor``.
        description: one line for the JSON and the README.
        methods: the methods it implements.
        setup: loads what it needs (untimed) and returns a :class:`Runner`.
        unavailable: None if it can run here, else why not (a missing optional package).
    """

    name: str
    description: str
    methods: frozenset[str]
    setup: Callable[[CellContext], Runner]
    unavailable: Callable[[], str | None] = lambda: None


def seconds_in_model(score_set: Any) -> float:
    """A score set's seconds in the model: launching its batches and reading their values back
    (``run.execution``'s ``launch_s`` + ``read_s``; on the CPU, the forward passes). The rest of its
    run's wall time is host work."""
    execution = score_set.provenance["run"]["execution"]
    return execution["launch_s"] + execution["read_s"]


def _registry() -> dict[str, Implementation]:
    from speed.impls import floor, minicons_pll, ours, ours_study, reference_loop

    return {impl.name: impl for impl in (ours.IMPLEMENTATION, reference_loop.IMPLEMENTATION,
                                         minicons_pll.IMPLEMENTATION, floor.IMPLEMENTATION,
                                         ours_study.IMPLEMENTATION, floor.STUDY_FLOOR)}


IMPLEMENTATION_NAMES: tuple[str, ...] = ("ours", "reference-loop", "minicons", "floor")
STUDY_IMPLEMENTATION = "ours-study"  # runs in the study row only (speed.run plans it there)
STUDY_FLOOR_IMPLEMENTATION = "study-floor"  # the study row's floor (speed.impls.floor.StudyFloorRunner)


def get_implementation(name: str) -> Implementation:
    registry = _registry()
    if name not in registry:
        from stereoset_eval.foundation.errors import UnknownNameError

        raise UnknownNameError("benchmark implementation", name, list(registry))
    return registry[name]
