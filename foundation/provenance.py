"""Typed provenance: the blocks every report, score file and results file carries.

Everything that could change a number is recorded: tool version and git commit, sha256 of
every data and score file, model id and revision, method and every option, n per slice,
library versions. The wall-clock time lives in ONE field, ``timestamp``, so two runs on the
same inputs give byte-identical outputs apart from that field.

The blocks are dataclasses with a schema version and ``to_dict`` / ``from_dict``:

* :class:`ToolInfo` — which toolkit wrote a file; ONE shape everywhere
  (``{"name", "version", "git_commit", "command"}``); :func:`git_commit` is computed here only;
* :class:`ReportProvenance` — a report's or results file's block (:func:`build_provenance`);
* :class:`ScoreProvenance` — what ``stereoset-eval score`` records (embedded in its score file);
* curation runs and Label Studio merges: :mod:`stereoset_eval.foundation.provenance_records`.

Blocks written as JSON are :class:`Serialised`: typed fields, and read as a mapping they are the
dict they serialise to (``to_dict()``), so a reader of the written shape and a reader of the
typed fields see one object; ``from_dict`` reads a written block back typed.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import platform
import subprocess
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from stereoset_eval import __version__
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.files import file_sha256  # noqa: F401  (re-exported for report code)

LIBRARIES: tuple[str, ...] = ("numpy", "scipy", "pandas", "matplotlib", "torch", "transformers", "tokenizers")
TIMESTAMP_FIELD = "timestamp"
REPO_ROOT = Path(__file__).resolve().parent.parent
TOOL_NAME = "stereoset-eval"
#: version of the provenance blocks' layout; ``from_dict`` refuses a newer one
SCHEMA_VERSION = 1


@functools.lru_cache(maxsize=4)  # the code a process imported does not change: one subprocess per process
def git_commit(repo: Path = REPO_ROOT) -> str | None:
    """HEAD of the toolkit's git checkout (``+dirty`` with uncommitted changes), None outside git.

    The one place the commit is computed (reports, score runs and the speed benchmark record it).
    """
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def library_versions(names: Iterable[str] = LIBRARIES) -> dict[str, str | None]:
    """Installed versions (read from package metadata: nothing is imported, torch included)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def utc_timestamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


class ProvenanceError(StereosetEvalError, ValueError):
    """A provenance block cannot be read (wrong shape, newer schema)."""


def _check_schema(data: Mapping[str, Any], what: str) -> int:
    version = data.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ProvenanceError(f"{what}: schema_version {version!r} is newer than this stereoset-eval reads "
                              f"({SCHEMA_VERSION}); upgrade stereoset-eval")
    return version


class Serialised(Mapping[str, Any]):
    """A typed provenance block that reads as the mapping it serialises to (:meth:`to_dict`).

    Subclasses are frozen dataclasses (``eq=False``: equality is that of the serialised form, so
    a block equals the dict it was read from) with ``to_dict`` and ``from_dict``.
    """

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and self.to_dict() == dict(other.items())

    __hash__ = None  # type: ignore[assignment]  # equal to a dict, so not hashable


@dataclass(frozen=True)
class ToolInfo:
    """The toolkit that wrote a file: name, version, git commit and the subcommand (if any)."""

    name: str
    version: str
    git_commit: str | None
    command: str | None = None

    @classmethod
    def current(cls, command: str | None = None) -> "ToolInfo":
        """This process's toolkit (``command``: the subcommand writing, e.g. ``evaluate-predictions``)."""
        return cls(TOOL_NAME, __version__, git_commit(), command)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | str) -> "ToolInfo":
        """Read the dict shape; the strings older versions wrote (``"stereoset-eval 0.1.0 evaluate-predictions"``,
        ``"stereoset-eval"``) are read as name, version and command."""
        if isinstance(data, str):
            name, _, rest = data.partition(" ")
            version, _, command = rest.partition(" ")
            return cls(name, version or "unknown", None, command or None)
        if not isinstance(data, Mapping) or "name" not in data:
            raise ProvenanceError(f"tool block must be an object with a name, got {data!r:.80}")
        return cls(str(data["name"]), str(data.get("version") or "unknown"), data.get("git_commit"),
                   data.get("command"))


@dataclass(frozen=True)
class FileRef:
    """A file read, with its sha256."""

    path: str
    sha256: str | None

    @classmethod
    def of(cls, path: str | Path) -> "FileRef":
        return cls(str(path), file_sha256(path))

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "FileRef":
        return cls(str(data.get("path", data.get("file"))), data.get("sha256"))


@dataclass(frozen=True, eq=False)
class ReportProvenance(Serialised):
    """The provenance block of a report or a results file (see :func:`build_provenance`)."""

    tool: ToolInfo
    data_files: tuple[FileRef, ...] = ()
    score_files: tuple[FileRef, ...] = ()
    model: str | None = None
    revision: str | None = None
    method: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    n_per_slice: Mapping[str, int] = field(default_factory=dict)
    scores_provenance: Mapping[str, Any] = field(default_factory=dict)
    libraries: Mapping[str, str | None] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    timestamp: str = ""
    torch_num_threads: int | list[int] | None = None
    deterministic: bool = False
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def of(cls, data: "Mapping[str, Any] | ReportProvenance") -> "ReportProvenance":
        """``data`` typed: as it is when it is a block already, else read with :meth:`from_dict`."""
        return data if isinstance(data, ReportProvenance) else cls.from_dict(data)

    @property
    def scores(self) -> "ScoreProvenance | None":
        """The score file's own block, typed; None for a study (its ``scores_provenance`` is
        job -> run record) or a report on scores without provenance."""
        sp = self.scores_provenance
        if not sp or not any(k in sp for k in ("methods", "runs", "command")):
            return None
        try:
            return ScoreProvenance.from_dict(sp)
        except (ProvenanceError, KeyError, TypeError, AttributeError):
            return None

    @property
    def limit(self) -> int | None:
        """``--limit`` of the run behind the report: the study's or report's options, else the score command's."""
        limit = self.options.get("limit")
        if limit is None and self.scores is not None:
            limit = self.scores.command.get("limit")
        return int(limit) if limit else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "tool": self.tool.to_dict(),
            "data_files": [f.to_dict() for f in self.data_files],
            "score_files": [f.to_dict() for f in self.score_files],
            "model": {"id": self.model, "revision": self.revision},
            "method": self.method,
            "options": dict(self.options),
            "n_per_slice": dict(self.n_per_slice),
            "scores_provenance": dict(self.scores_provenance),
            "libraries": dict(self.libraries),
            "extra": dict(self.extra),
            "torch_num_threads": self.torch_num_threads,
            "deterministic": self.deterministic,
            TIMESTAMP_FIELD: self.timestamp,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ReportProvenance":
        version = _check_schema(data, "report provenance")
        model = data.get("model") or {}
        if not isinstance(model, Mapping):  # an older block's bare id
            model = {"id": model}
        return cls(
            tool=ToolInfo.from_dict(data["tool"]) if "tool" in data else ToolInfo(TOOL_NAME, "unknown", None),
            data_files=tuple(FileRef.from_dict(f) for f in data.get("data_files", ())),
            score_files=tuple(FileRef.from_dict(f) for f in data.get("score_files", ())),
            model=model.get("id"),
            revision=model.get("revision"),
            method=data.get("method"),
            options=dict(data.get("options") or {}),
            n_per_slice=dict(data.get("n_per_slice") or {}),
            scores_provenance=dict(data.get("scores_provenance") or {}),
            libraries=dict(data.get("libraries") or {}),
            extra=dict(data.get("extra") or {}),
            timestamp=str(data.get(TIMESTAMP_FIELD, "")),
            torch_num_threads=data.get("torch_num_threads"),
            deterministic=bool(data.get("deterministic", False)),
            schema_version=version,
        )


@dataclass(frozen=True)
class ScoreProvenance:
    """What produced a score file: the model, the method of each part, the data and every run's record.

    Attributes:
        tool: the toolkit that scored.
        model / revision: the scored model (hub id or folder) and its revision.
        methods: part (``intrasentence``, ``intersentence``, ``pairs`` …) -> method name.
        benchmark: the benchmark scored.
        command: the scoring command's options, verbatim.
        data: the data files scored.
        notes: what was skipped and why.
        runs: part -> the scorer's own record of that run (model hashes, method options, cache use …).
        torch_num_threads: torch's intra-op thread count the scoring ran with (float32 sums are split
            by it: numbers agree across counts within the tolerance of docs/scoring-settings.md, not
            bit for bit); None when the runs do not say.
        deterministic: the run asked for bit-reproducibility (``--deterministic``: one thread,
            deterministic algorithms).
    """

    tool: ToolInfo
    model: str | None = None
    revision: str | None = None
    methods: Mapping[str, str] = field(default_factory=dict)
    benchmark: str | None = None
    command: Mapping[str, Any] = field(default_factory=dict)
    data: tuple[FileRef, ...] = ()
    notes: tuple[str, ...] = ()
    runs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    torch_num_threads: int | list[int] | None = None
    deterministic: bool = False
    schema_version: int = SCHEMA_VERSION

    @property
    def method(self) -> str | None:
        """The method(s) as one label (``stereoset-mlm, stereoset-nsp``), None when unknown."""
        return ", ".join(sorted(set(self.methods.values()))) or None

    def stable(self) -> "ScoreProvenance":
        """A copy without each run's ``run`` block (time, cache use): the same command gives the same record."""
        return dataclasses.replace(self, runs={p: {k: v for k, v in r.items() if k != "run"} for p, r in self.runs.items()})

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "tool": self.tool.to_dict(),
            "model": {"id": self.model, "revision": self.revision},
            "methods": dict(self.methods),
            "benchmark": self.benchmark,
            "command": dict(self.command),
            "data": [{"file": f.path, "sha256": f.sha256} for f in self.data],
            "notes": list(self.notes),
            "runs": {p: dict(r) for p, r in self.runs.items()},
            "torch_num_threads": self.torch_num_threads,
            "deterministic": self.deterministic,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ScoreProvenance":
        version = _check_schema(data, "score provenance")
        model = data.get("model") or {}
        if not isinstance(model, Mapping):
            raise ProvenanceError(f"score provenance: model must be an object with id and revision, got {model!r:.80}")
        return cls(
            tool=ToolInfo.from_dict(data["tool"]) if "tool" in data else ToolInfo(TOOL_NAME, "unknown", None),
            model=model.get("id"),
            revision=model.get("revision"),
            methods=dict(data.get("methods") or {}),
            benchmark=data.get("benchmark"),
            command=dict(data.get("command") or {}),
            data=tuple(FileRef.from_dict(f) for f in data.get("data", ())),
            notes=tuple(data.get("notes") or ()),
            runs={p: dict(r) for p, r in (data.get("runs") or {}).items()},
            torch_num_threads=data.get("torch_num_threads"),
            deterministic=bool(data.get("deterministic", False)),
            schema_version=version,
        )

    @classmethod
    def of_runs(cls, runs: Mapping[str, Mapping[str, Any]], *, command: Mapping[str, Any] | None = None,
                benchmark: str | None = None, data: Iterable[FileRef] = (), notes: Iterable[str] = (),
                tool: ToolInfo | None = None) -> "ScoreProvenance":
        """The block of a scoring command from each part's run record (``ScoreSet.provenance``:
        ``model.id``, ``model.revision``, ``method.name``)."""
        models = {(r["model"]["id"], r["model"].get("revision")) for r in runs.values()}
        if len(models) > 1:
            raise ProvenanceError(f"one score file holds one model's scores, got {sorted(map(str, models))}")
        model, revision = next(iter(models)) if models else (None, None)
        return cls(tool=tool or ToolInfo.current("score"), model=model, revision=revision,
                   methods={p: r["method"]["name"] for p, r in runs.items()}, benchmark=benchmark,
                   command=dict(command or {}), data=tuple(data), notes=tuple(notes),
                   runs={p: dict(r) for p, r in runs.items()}, torch_num_threads=scoring_threads(runs),
                   deterministic=scoring_deterministic(runs))


def _run_records(runs: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    """The ``run`` blocks of a score provenance's runs, or of a study's job -> run-record mapping."""
    for record in runs.values():
        if isinstance(record, Mapping) and isinstance(record.get("run"), Mapping):
            yield record["run"]


def scoring_threads(runs: Mapping[str, Any]) -> int | list[int] | None:
    """torch's thread count the runs scored with (``run.torch_threads``): one int, the sorted distinct
    counts when they differ (a Ray study's nodes), None when no run says."""
    counts = sorted({r["torch_threads"] for r in _run_records(runs) if isinstance(r.get("torch_threads"), int)})
    return None if not counts else counts[0] if len(counts) == 1 else counts


def scoring_deterministic(runs: Mapping[str, Any]) -> bool:
    """True when every run asked for bit-reproducibility (``run.settings.deterministic``: ``on``)."""
    flags = [(r.get("settings") or {}).get("deterministic") in (True, "on") for r in _run_records(runs)]
    return bool(flags) and all(flags)


def _scores_threads(scores_provenance: Mapping[str, Any]) -> tuple[int | list[int] | None, bool]:
    """Thread count and determinism of the scores a report reads: the score file's own fields, else its
    runs' records (a study passes job -> run record)."""
    if "torch_num_threads" in scores_provenance:
        return scores_provenance.get("torch_num_threads"), bool(scores_provenance.get("deterministic", False))
    nested = scores_provenance.get("runs")
    runs: Mapping[str, Any] = nested if isinstance(nested, Mapping) else scores_provenance
    return scoring_threads(runs), scoring_deterministic(runs)


def build_provenance(
    *,
    data_files: Iterable[str | Path] = (),
    score_files: Iterable[str | Path] = (),
    model: str | None = None,
    revision: str | None = None,
    method: str | None = None,
    options: Mapping[str, Any] | None = None,
    n_per_slice: Mapping[str, int] | None = None,
    scores_provenance: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    timestamp: str | None = None,
) -> ReportProvenance:
    """The provenance block of a report or a results file, typed (serialised by ``to_dict``
    where it is written; read as a mapping it is that dict already).

    Args:
        data_files / score_files: files read; recorded with their sha256.
        model, revision, method: what produced the scores (from the score file's own
            provenance when it has one).
        options: every option of the metrics (bootstrap, tie rule, rounding, grouping …).
        n_per_slice: number of units per reported slice.
        scores_provenance: the scorer's own provenance block, kept verbatim.
        timestamp: fixed timestamp (tests); default now, UTC.

    The scoring run's torch thread count and ``deterministic`` are read from ``scores_provenance``.
    """
    threads, deterministic = _scores_threads(scores_provenance or {})
    return ReportProvenance(
        tool=ToolInfo.current(),
        data_files=tuple(FileRef.of(p) for p in data_files),
        score_files=tuple(FileRef.of(p) for p in score_files),
        model=model,
        revision=revision,
        method=method,
        options=dict(options or {}),
        n_per_slice=dict(n_per_slice or {}),
        scores_provenance=dict(scores_provenance or {}),
        libraries=library_versions(),
        extra=dict(extra or {}),
        timestamp=timestamp or utc_timestamp(),
        torch_num_threads=threads,
        deterministic=deterministic,
    )
