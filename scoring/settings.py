"""``RunSettings``: the options of a scoring run that are not a method's, in one frozen object.

Where a model runs (``device``), in what precision (``dtype``), how inputs are packed
(``batch_tokens``), which last-layer path BERT-family models take (``last_layer``) and how
glibc serves the activation buffers (``allocator``) are set here once and travel as one value:
the ``score`` / ``study`` / ``demo`` commands build it with one helper
(:mod:`stereoset_eval.cli.run_settings`), the study config's ``[study]`` table parses into it
(same field names), :func:`stereoset_eval.scoring.api.score_items` takes it as ``settings=``, and
the provenance records it (``run.settings``). A new option is one field here (with its help
text and check) plus the code that uses it.

Only ``device`` and ``dtype`` can move numbers (``dtype`` is part of the cache key); the others
change speed and memory, or float32 rounding (``last_layer``: ~1e-7), never a result. So does
torch's thread count, which is no setting: any two executions (thread counts, executors, batch
sizes, ``share_masked_inputs``) agree within :data:`SCORE_ATOL` + :data:`SCORE_RTOL` x |score|
(docs/scoring-settings.md); ``deterministic="on"`` asks for the same bits every time
(:func:`execution`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal, Mapping, NamedTuple, get_args

from stereoset_eval.scoring.records import ScoringError
from stereoset_eval.scoring.length_check import MAX_BATCH_TOKENS

DEFAULT_BATCH_TOKENS = 8192
LastLayer = Literal["scored", "all"]
Allocator = Literal["bounded", "fast", "off"]
DType = Literal["fp32", "float32", "bf16", "bfloat16", "fp16", "float16", "auto"]
DeviceMap = Literal["none", "auto"]
ShareMaskedInputs = Literal["off", "on"]
Deterministic = Literal["off", "on"]
#: the tolerance promised between any two executions of one scoring (thread counts, executors,
#: batch sizes, share_masked_inputs): |a - b| <= SCORE_ATOL + SCORE_RTOL * |a| per sentence score
#: (natural-log units; float32 sums of log-probabilities); decisions equal except where the two
#: compared scores are themselves that close (ties and near-ties). docs/scoring-settings.md.
SCORE_ATOL = 1e-5
SCORE_RTOL = 1e-5
ALLOCATOR_ENV = "STEREOSET_EVAL_MALLOC_TUNING"
_DEVICE = re.compile(r"(auto|cpu|cuda(:\d+)?)", re.IGNORECASE)


def allocator_from_environment() -> str:
    """The allocator policy ``$STEREOSET_EVAL_MALLOC_TUNING`` asks for (``fast`` when unset).

    The one place the variable is read: it supplies :attr:`RunSettings.allocator`'s default.
    """
    raw = os.environ.get(ALLOCATOR_ENV, "fast")
    value = raw.strip().lower()
    value = {"1": "bounded", "": "fast", "0": "off", "none": "off"}.get(value, value)  # "1": the old "tuning on"
    if value not in get_args(Allocator):
        raise ScoringError(f"{ALLOCATOR_ENV}={raw!r}: expected one of {', '.join(get_args(Allocator))} (or 0)")
    return value


def _option(default: Any = None, *, help: str, kind: type = str, choices: tuple[str, ...] | None = None,
            factory: Any = None, shown_default: str | None = None) -> Any:
    """A settings field with what the CLI helper and the study-config reader need to know."""
    meta = {"help": help, "kind": kind, "choices": choices,
            "shown_default": shown_default if shown_default is not None else str(default)}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


class Problem(NamedTuple):
    """One invalid setting: the field, its value, what is wrong, and the allowed values if a choice."""

    field: str
    value: Any
    text: str
    choices: tuple[str, ...] | None = None

    def line(self) -> str:
        """The message of :meth:`RunSettings.validate` (``last_layer must be one of scored, all, got 'x'``)."""
        if self.choices:
            return f"{self.field} must be one of {', '.join(self.choices)}, got {self.value!r}"
        return f"{self.field}: {self.text}"


@dataclass(frozen=True)
class RunSettings:
    """The scoring options of a run (see the module docstring); immutable, JSON round-trip.

    Attributes:
        device: ``auto`` (CUDA if available, else CPU), ``cpu``, ``cuda`` or ``cuda:N``.
        dtype: None (= ``fp32``, as the references ran), ``bf16`` or ``fp16`` (CUDA only), or
            ``auto``: the checkpoint's own dtype when it is bf16 and the model runs on CUDA, else fp32
            (so CPU runs and reference comparisons stay fp32); what was chosen is in the
            provenance (``model.dtype``, ``model.dtype_choice``).
        device_map: ``none`` (default): the whole model on ``device``; ``auto``: accelerate
            spreads the layers over the visible GPUs (then CPU memory), for models larger than one
            device (masked and causal LMs; needs the ``large`` extra). Numbers do not depend on it.
        batch_tokens: padded tokens per forward batch; results do not depend on it beyond
            float32 noise (~1e-7).
        last_layer: ``scored``: BERT-family masked LMs run their last encoder layer at the
            scored positions only (probe-verified); ``all``: at every position.
        allocator: glibc allocator policy (:mod:`stereoset_eval.scoring.memory`); default from
            ``$STEREOSET_EVAL_MALLOC_TUNING``, else ``fast``.
        share_masked_inputs: ``off`` (default): every method runs its own masked inputs, so each
            number equals that method run alone, bit for bit, in any executor; ``on``: the methods
            of one ``score`` run or one local study run read a masked input another method already
            ran on the same model (:mod:`stereoset_eval.scoring.shared_work`): fewer forward rows,
            numbers equal to float32 batch noise (~1e-6), not bit for bit.
        deterministic: ``off`` (default): torch's own thread count (all cores) and algorithms;
            numbers agree with any other execution within :data:`SCORE_ATOL` / :data:`SCORE_RTOL`,
            not bit for bit. ``on``: the scoring runs on one torch thread with
            ``torch.use_deterministic_algorithms`` (and cuDNN's deterministic kernels), so the same
            command gives the same bits in any executor; it costs the other cores (docs/scoring-settings.md).
    """

    device: str = _option("auto", help="auto, cpu, cuda or cuda:N")
    dtype: DType | None = _option(None, help="fp32, bf16, fp16 (CUDA only), or auto (the checkpoint's bf16 on CUDA, "
                                             "else fp32)", shown_default="fp32")
    batch_tokens: int = _option(DEFAULT_BATCH_TOKENS, kind=int, help="padded tokens per forward batch")
    last_layer: LastLayer = _option(
        "scored", choices=get_args(LastLayer),
        help="scored: BERT-family masked LMs run their last layer at the scored positions only (~7%% less "
             "compute, float32-rounding differences); all: at every position, a plain forward pass")
    device_map: DeviceMap = _option(
        "none", choices=get_args(DeviceMap),
        help="none: the whole model on --device; auto: accelerate spreads a model larger than one GPU over "
             "the GPUs (then CPU memory); masked and causal LMs")
    allocator: Allocator = _option(
        factory=allocator_from_environment, choices=get_args(Allocator),
        help="host allocator policy: fast (freed buffers reused; a free heap over 256 MiB trimmed when the run "
             "ends; with oneDNN's primitive cache off its peak follows batch_tokens), bounded (large buffers re-mapped every "
             "forward pass: the lowest peak, slower) or off (glibc's own)",
        shown_default="$STEREOSET_EVAL_MALLOC_TUNING, else fast")
    share_masked_inputs: ShareMaskedInputs = _option(
        "off", choices=get_args(ShareMaskedInputs),
        help="on: methods of one run (score, local study) reuse masked inputs another method ran on the same "
             "model (fewer forward passes; equal to float32 noise, not bit for bit); off: each method alone")
    deterministic: Deterministic = _option(
        "off", choices=get_args(Deterministic),
        help="on: one torch thread and deterministic algorithms, the same bits in any executor (slower: the "
             "other cores idle); off: all cores, numbers equal within float32 tolerance (1e-5 + 1e-6 x |score|)")

    def problems(self) -> list[Problem]:
        """Every invalid field (empty when the settings are valid)."""
        out = []
        for f in dataclasses.fields(self):
            value, choices = getattr(self, f.name), f.metadata.get("choices")
            if choices is not None and value not in choices:
                out.append(Problem(f.name, value, "", tuple(choices)))
        if not (isinstance(self.device, str) and _DEVICE.fullmatch(self.device)):
            out.append(Problem("device", self.device, f"unknown device {self.device!r}; use auto, cpu, cuda or cuda:N"))
        if self.dtype is not None and (not isinstance(self.dtype, str) or self.dtype.lower() not in get_args(DType)):
            out.append(Problem("dtype", self.dtype, f"unknown dtype {self.dtype!r}; use one of {sorted(get_args(DType))}"))
        if not isinstance(self.batch_tokens, int) or isinstance(self.batch_tokens, bool) or self.batch_tokens < 1:
            out.append(Problem("batch_tokens", self.batch_tokens, f"must be a positive integer, got {self.batch_tokens!r}"))
        elif self.batch_tokens > MAX_BATCH_TOKENS:  # one batch alone would need tens of GB
            out.append(Problem("batch_tokens", self.batch_tokens,
                               f"must be a positive integer of at most {MAX_BATCH_TOKENS:,}, got {self.batch_tokens:,}"))
        return out

    def validate(self) -> "RunSettings":
        """``self`` if valid, else a :class:`ScoringError` with one line naming the first bad field."""
        problems = self.problems()
        if problems:
            raise ScoringError(problems[0].line())
        return self

    def replace(self, **changes: Any) -> "RunSettings":
        """A copy with ``changes`` (unknown names are a :class:`ScoringError`), not yet validated."""
        known = [f.name for f in dataclasses.fields(self)]
        unknown = sorted(set(changes) - set(known))
        if unknown:
            raise ScoringError(f"no run setting(s) {', '.join(unknown)}; known: {', '.join(known)}")
        return dataclasses.replace(self, **changes)

    def run_settings(self) -> "RunSettings":
        """These settings as a plain :class:`RunSettings` (drops the fields a subclass adds)."""
        return RunSettings(**{name: getattr(self, name) for name in field_names()})

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data, every field (as recorded in the provenance)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RunSettings":
        """The settings of :meth:`to_dict` (missing fields take their defaults), validated."""
        return cls().replace(**dict(data)).validate() if data else cls().validate()


def within_tolerance(a: float, b: float) -> bool:
    """True when two executions' scores of one sentence agree as promised (NaN only with NaN)."""
    if a != a or b != b:  # NaN: a score that could not be computed must be so in both
        return a != a and b != b
    return abs(a - b) <= SCORE_ATOL + SCORE_RTOL * max(abs(a), abs(b))


def is_deterministic(value: Any) -> bool:
    """True for the setting's ``on`` (and a JSON ``true``); the one reading of the recorded value."""
    return value is True or value == "on"


@contextlib.contextmanager
def execution(settings: RunSettings) -> Iterator[None]:
    """The scoring's torch execution mode: with ``deterministic="on"``, one intra-op thread and
    deterministic algorithms (cuDNN included) while the block runs, restored after; else nothing.

    One thread fixes the order of every float32 sum (a matrix product split over N threads adds in
    another order); the deterministic algorithms rule out the atomic-add kernels of CUDA. On CUDA,
    cuBLAS also needs ``CUBLAS_WORKSPACE_CONFIG`` set before the process first uses the device
    (set here when absent; a device already in use keeps its workspace).
    """
    if not is_deterministic(settings.deterministic):
        yield
        return
    import torch

    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    threads, algorithms = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    cudnn = (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(algorithms)
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = cudnn


def field_names() -> tuple[str, ...]:
    """The names of :class:`RunSettings`' fields, in order."""
    return tuple(f.name for f in dataclasses.fields(RunSettings))
