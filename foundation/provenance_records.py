"""Typed provenance of curation runs and Label Studio merges (the rest of the tree: :mod:`.provenance`).

Every block carries :class:`~stereoset_eval.foundation.provenance.ToolInfo` (name, package
version, git commit, subcommand), is serialised in one place (``to_dict``) and read back typed
(``from_dict``, which also reads the shapes written before these blocks existed: ``"tool":
"stereoset-eval"`` with ``"tool_version"``, or ``"tool": "stereoset-eval 0.1.0"``). Read as a
mapping a block is its serialised dict, so code reading ``result.provenance["n_kept"]`` keeps working.

The curation pipeline builds its block with :func:`curation_provenance` and the Label Studio merge
with :func:`labelstudio_merge_provenance`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from stereoset_eval.foundation.provenance import (
    SCHEMA_VERSION,
    Serialised,
    ToolInfo,
    _check_schema,
    library_versions,
)


def _tool(data: Mapping[str, Any]) -> ToolInfo:
    """The tool of a block: the dict shape, or the older string with a separate ``tool_version``."""
    tool = data.get("tool", "stereoset-eval")
    info = ToolInfo.from_dict(tool)
    if isinstance(tool, str) and data.get("tool_version") and info.version == "unknown":
        info = dataclasses.replace(info, version=str(data["tool_version"]))
    return info


@dataclass(frozen=True, eq=False)
class CurationProvenance(Serialised):
    """What produced a curated dataset (``stereoset-eval curate``, a study's ``curated`` source).

    Attributes:
        tool: the toolkit (version and git commit) that curated.
        rules_version / lexicon_sha256: the pitfall rules and the swap lexicon used.
        config: every parameter of the run (``CurationConfig.to_dict()``).
        inputs: the input files (path, sha256, counts) as the pipeline describes them.
        out_of_scope: items left out of curation and why.
        rule_failures: rules that raised on an item (counted, not fatal).
        validity_decider: who decided validity (a judge's name, or ``evidence rules``).
        name_counterparts: the given-name counterpart settings.
        reviewed_inputs / reviewed_items: human reviews read, and how many items they decided.
        routing: the reliability routing settings.
        output_kind: ``automatic curation`` or ``human-reviewed curation``.
        libraries: library versions.
        extra: anything else the caller records (kept verbatim).
    """

    tool: ToolInfo
    rules_version: str | None = None
    lexicon_sha256: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    inputs: tuple[Mapping[str, Any], ...] = ()
    out_of_scope: Any = None
    rule_failures: int = 0
    validity_decider: str = "evidence rules"
    name_counterparts: Mapping[str, Any] = field(default_factory=dict)
    reviewed_inputs: tuple[Any, ...] = ()
    reviewed_items: int = 0
    routing: Mapping[str, Any] = field(default_factory=dict)
    output_kind: str = "automatic curation"
    libraries: Mapping[str, str | None] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "tool": self.tool.to_dict(),
            "tool_version": self.tool.version,  # the key older readers look for
            "rules_version": self.rules_version,
            "lexicon_sha256": self.lexicon_sha256,
            "config": dict(self.config),
            "inputs": [dict(i) for i in self.inputs],
            "out_of_scope": self.out_of_scope,
            "rule_failures": self.rule_failures,
            "validity_decider": self.validity_decider,
            "name_counterparts": dict(self.name_counterparts),
            "reviewed_inputs": list(self.reviewed_inputs),
            "reviewed_items": self.reviewed_items,
            "routing": dict(self.routing),
            "output_kind": self.output_kind,
            "libraries": dict(self.libraries),
            **dict(self.extra),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CurationProvenance":
        version = _check_schema(data, "curation provenance")
        names = {f.name for f in dataclasses.fields(cls)} | {"tool_version"}
        return cls(
            tool=_tool(data),
            rules_version=data.get("rules_version"),
            lexicon_sha256=data.get("lexicon_sha256"),
            config=dict(data.get("config") or {}),
            inputs=tuple(dict(i) if isinstance(i, Mapping) else {"path": str(i)} for i in data.get("inputs") or ()),
            out_of_scope=data.get("out_of_scope"),
            rule_failures=int(data.get("rule_failures") or 0),
            validity_decider=str(data.get("validity_decider") or "evidence rules"),
            name_counterparts=dict(data.get("name_counterparts") or {}),
            reviewed_inputs=tuple(data.get("reviewed_inputs") or ()),
            reviewed_items=int(data.get("reviewed_items") or 0),
            routing=dict(data.get("routing") or {}),
            output_kind=str(data.get("output_kind") or "automatic curation"),
            libraries=dict(data.get("libraries") or {}),
            extra={k: v for k, v in data.items() if k not in names},
            schema_version=version,
        )


@dataclass(frozen=True, eq=False)
class LabelStudioMergeProvenance(Serialised):
    """What produced a reviewed version from a Label Studio export (``stereoset-eval annotate merge``).

    Attributes:
        tool: the toolkit (version and git commit) that merged.
        pitfall_catalogue / model_version: fingerprints of the pitfall catalogue the tasks showed.
        adjudication / adjudication_rule: how annotators' decisions were combined, in words.
        primary_annotator: the annotator whose decision wins under ``primary``.
        unreviewed / unreviewed_policy: what happens to items nobody reviewed, in words.
        n_input_items, n_kept, n_removed, n_edited, n_human_decisions, n_disagreement_rows: counts.
        annotators: annotator ids seen in the export.
        issue_counts: issues of the export, by kind.
        export_items_not_in_input: ids in the export but not in the pushed items.
        extra: anything else the caller records (kept verbatim).
    """

    tool: ToolInfo
    pitfall_catalogue: Any = None
    model_version: str | None = None
    adjudication: str | None = None
    adjudication_rule: str | None = None
    primary_annotator: str | None = None
    unreviewed: str | None = None
    unreviewed_policy: str | None = None
    n_input_items: int = 0
    n_kept: int = 0
    n_removed: int = 0
    n_edited: int = 0
    n_human_decisions: int = 0
    n_disagreement_rows: int = 0
    annotators: tuple[str, ...] = ()
    issue_counts: Mapping[str, Any] = field(default_factory=dict)
    export_items_not_in_input: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("tool", "extra")}
        out.update(tool=self.tool.to_dict(), annotators=list(self.annotators), issue_counts=dict(self.issue_counts),
                   export_items_not_in_input=list(self.export_items_not_in_input))
        return {"schema_version": self.schema_version, **out, **dict(self.extra)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "LabelStudioMergeProvenance":
        version = _check_schema(data, "Label Studio merge provenance")
        names = {f.name for f in dataclasses.fields(cls)}
        plain = {k: v for k, v in data.items() if k in names and k not in ("tool", "extra", "schema_version")}
        plain.update(annotators=tuple(data.get("annotators") or ()), issue_counts=dict(data.get("issue_counts") or {}),
                     export_items_not_in_input=tuple(data.get("export_items_not_in_input") or ()))
        return cls(tool=_tool(data), **plain, extra={k: v for k, v in data.items() if k not in names},
                   schema_version=version)


def curation_provenance(*, rules_version: str | None, lexicon_sha256: str | None, config: Mapping[str, Any],
                        inputs: Iterable[Mapping[str, Any]] = (), command: str | None = "curate",
                        **fields: Any) -> CurationProvenance:
    """The block of a curation run made now: this toolkit's version and git commit, the library
    versions, and the run's own fields (``out_of_scope``, ``rule_failures``, ``validity_decider``,
    ``name_counterparts``, ``reviewed_inputs``, ``reviewed_items``, ``routing``, ``output_kind``;
    anything else goes to ``extra``)."""
    known = {f.name for f in dataclasses.fields(CurationProvenance)} - {"tool", "libraries", "schema_version"}
    own = {k: v for k, v in fields.items() if k in known and k != "extra"}
    extra = {**{k: v for k, v in fields.items() if k not in known}, **dict(fields.get("extra") or {})}
    if "reviewed_inputs" in own:
        own["reviewed_inputs"] = tuple(own["reviewed_inputs"])
    return CurationProvenance(tool=ToolInfo.current(command), rules_version=rules_version,
                              lexicon_sha256=lexicon_sha256, config=dict(config), inputs=tuple(dict(i) for i in inputs),
                              libraries=library_versions(), extra=extra, **own)


def labelstudio_merge_provenance(*, command: str | None = "annotate merge", **fields: Any) -> LabelStudioMergeProvenance:
    """The block of a Label Studio merge made now (this toolkit's version and git commit); the
    keyword arguments are the merge's fields (anything unknown goes to ``extra``)."""
    known = {f.name for f in dataclasses.fields(LabelStudioMergeProvenance)} - {"tool", "schema_version"}
    own = {k: v for k, v in fields.items() if k in known and k != "extra"}
    for name in ("annotators", "export_items_not_in_input"):
        if name in own:
            own[name] = tuple(own[name])
    extra = {**{k: v for k, v in fields.items() if k not in known}, **dict(fields.get("extra") or {})}
    return LabelStudioMergeProvenance(tool=ToolInfo.current(command), extra=extra, **own)
