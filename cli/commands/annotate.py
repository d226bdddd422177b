"""``stereoset-eval annotate push|pull|merge|agreement``: the Label Studio review round trip.

Items are what ``stereoset-eval curate`` wrote (its output folder, ``pairs.csv`` or
``pairs.parquet``) or items JSON lines. ``merge`` writes a new curated version with the
same layout as ``curate`` (card, BMNE-schema CSV/parquet, ``hf_dataset/``, rule and
removed tables, statistics, provenance) plus ``review/`` (decisions, disagreements,
agreement, issues, review report); the card includes the review section.

The API key is read from the environment variable ``LABEL_STUDIO_API_KEY`` only (never a
command-line argument, which would land in shell history and process lists) and is
never printed, logged or written.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Mapping

from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.outputs import output_path
from stereoset_eval.foundation.items import Item

API_KEY_ENV = "LABEL_STUDIO_API_KEY"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("annotate", help="review curated pairs in Label Studio (push, pull, merge, agreement)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    acts = p.add_subparsers(dest="action", metavar="ACTION")
    acts.required = True

    push = acts.add_parser("push", help="make review tasks (JSON file and/or a new Label Studio project)")
    push.add_argument("--items", type=Path, required=True,
                      help="curated items: a `curate` output folder, its pairs.csv/pairs.parquet, or items .jsonl")
    push.add_argument("--tasks-out", type=Path, help="write the tasks as JSON for a manual import")
    push.add_argument("--config-out", type=Path, help="write the labeling config XML")
    push.add_argument("--url", help="Label Studio URL; pushes when given (key from $LABEL_STUDIO_API_KEY)")
    push.add_argument("--project", type=int, help="add to this existing project instead of creating one")
    push.add_argument("--title", default="stereoset-eval review", help="title of the new project")
    push.add_argument("--annotators-per-task", type=int, default=2, help="overlap of the new project (default 2)")
    push.set_defaults(func=run_push)

    pull = acts.add_parser("pull", help="download a full JSON export snapshot of a project")
    _server_args(pull, required=True)
    pull.add_argument("--output", "--out", dest="out", type=Path, required=True, help="export file to write (JSON)")
    pull.set_defaults(func=run_pull)

    merge = acts.add_parser("merge", help="fold annotations into a curated version (+ agreement report)")
    merge.add_argument("--items", type=Path, required=True,
                       help="the items that were pushed (folder, pairs file or .jsonl, as for push)")
    _export_args(merge)
    merge.add_argument("--output", "--out", dest="out", type=output_path, required=True,
                       help="output folder of the reviewed version (replaced as a whole, and only if it is an "
                            "earlier annotate merge output)")
    merge.add_argument("--version-name", help="version name on the dataset card (default: <items>-reviewed-<rule>)")
    merge.add_argument("--adjudication", default="majority", help="majority (default), primary or latest")
    merge.add_argument("--primary-annotator", help="annotator email (or user:<id>) for --adjudication primary")
    merge.add_argument("--unreviewed", default="automatic", help="automatic (default) or remove")
    merge.set_defaults(func=run_merge)

    agree = acts.add_parser("agreement", help="Cohen's kappa per field between every pair of annotators")
    _export_args(agree)
    agree.add_argument("--output", "--out", dest="out", type=Path, help="also write the table as CSV")
    agree.set_defaults(func=run_agreement)


def _server_args(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument("--url", required=required, help="Label Studio URL (key from $LABEL_STUDIO_API_KEY)")
    p.add_argument("--project", type=int, required=required, help="project id")


def _export_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--export", type=Path, help="a full JSON export file (instead of --url/--project)")
    _server_args(p, required=False)


def _connect(url: str):
    from stereoset_eval.curation.labelstudio.server import connect

    return connect(url, os.environ.get(API_KEY_ENV))


def load_review_items(path: Path) -> list[Item]:
    """Items from a ``curate`` folder, a pairs CSV/parquet, or items JSON lines."""
    from stereoset_eval.curation.labelstudio.items_io import load_review_items as load

    return load(path)


def _read_export(args: argparse.Namespace):
    """(tasks, pitfall names, source label) from --export or from --url/--project."""
    from stereoset_eval.curation.labelstudio.annotations import load_export

    if args.export is not None:
        if args.url:
            raise StereosetEvalError("give either --export or --url/--project, not both")
        tasks = load_export(args.export)
        project = getattr(args, "project", None)
        others = sorted({str(t.get("project")) for t in tasks if t.get("project") not in (None, project)})
        if project is not None and others:
            raise StereosetEvalError(f"{args.export}: the export holds tasks of project {', '.join(others)}, "
                                     f"not of --project {project}")
        names = _pitfalls_in_export(tasks)
        return tasks, names, str(args.export)
    if not (args.url and args.project is not None):
        raise StereosetEvalError("give --export FILE, or --url and --project")
    from stereoset_eval.curation.labelstudio.server import pull_export

    conn = _connect(args.url)
    tasks, schema = pull_export(conn, args.project)
    return tasks, schema.pitfall_names, f"{conn.url} project {args.project}"


def _pitfalls_in_export(tasks) -> tuple[str, ...]:
    """Pitfall names for an export file: the current catalogue plus any used in it."""
    from stereoset_eval.curation.labelstudio import config as cfg
    from stereoset_eval.curation.labelstudio.pitfalls import default_catalogue

    names = [p.name for p in default_catalogue()]
    for task in tasks:
        for group in (task.get("annotations") or []) + (task.get("predictions") or []):
            for r in (group.get("result") or []) if isinstance(group, dict) else []:
                if r.get("from_name") == cfg.PITFALLS:
                    names += [c for c in (r.get("value") or {}).get("choices", []) if c not in names]
    return tuple(names)


def run_push(args: argparse.Namespace) -> int:
    from stereoset_eval.foundation.atomic import atomic_write_text
    from stereoset_eval.curation.labelstudio.config import labeling_config, validate_config
    from stereoset_eval.curation.labelstudio.pitfalls import default_catalogue, model_version
    from stereoset_eval.curation.labelstudio.tasks import build_tasks, write_tasks_json

    if not (args.url or args.tasks_out or args.config_out):
        raise StereosetEvalError("nothing to do: give --url (push to a server) and/or --tasks-out/--config-out")
    items = load_review_items(args.items)
    pitfalls = default_catalogue()
    xml = labeling_config(pitfalls)
    tasks = build_tasks(items, pitfalls=pitfalls)
    print(f"{len(tasks)} tasks, model_version {model_version(pitfalls)}, {len(pitfalls)} pitfalls")
    if args.config_out:
        validate_config(xml)
        print(f"labeling config: {atomic_write_text(args.config_out, xml)}")
    if args.tasks_out:
        print(f"tasks: {write_tasks_json(args.tasks_out, tasks)}")
    if args.url:
        from stereoset_eval.curation.labelstudio.server import push_tasks

        result = push_tasks(_connect(args.url), tasks, config_xml=xml, title=args.title, project_id=args.project,
                            annotators_per_task=args.annotators_per_task)
        print(f"pushed {result.n_tasks} tasks to {args.url.rstrip('/')} project {result.project_id}")
    return 0


def run_pull(args: argparse.Namespace) -> int:
    from stereoset_eval.foundation.atomic import atomic_write_json
    from stereoset_eval.curation.labelstudio.server import pull_export

    conn = _connect(args.url)
    tasks, _ = pull_export(conn, args.project)
    n_ann = sum(len(t.get("annotations") or []) for t in tasks)
    print(f"{len(tasks)} tasks, {n_ann} annotations: {atomic_write_json(args.out, tasks)}")
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from stereoset_eval.curation.labelstudio.agreement import pairwise_agreement
    from stereoset_eval.curation.labelstudio.annotations import parse_export
    from stereoset_eval.curation.labelstudio.items_io import pairs_file_of
    from stereoset_eval.curation.labelstudio.merge import merge_annotations
    from stereoset_eval.curation.labelstudio.pitfalls import default_catalogue
    from stereoset_eval.curation.labelstudio.version import prior_curation, reviewed_version, write_reviewed_version

    items = load_review_items(args.items)
    tasks, names, source = _read_export(args)
    parsed = parse_export(tasks, pitfall_names=names, source=source)
    result = merge_annotations(items, parsed, pitfalls=default_catalogue(), adjudication=args.adjudication,
                               primary_annotator=args.primary_annotator, unreviewed=args.unreviewed)
    agreement = pairwise_agreement(parsed.annotations, pitfall_names=names)
    run = _run_provenance(args, tasks, source)
    version = reviewed_version(items, result, inputs=_inputs(args, items, parsed, run), prior=prior_curation(args.items))
    paths = write_reviewed_version(args.out, version, result, parsed, agreement, name=_version_name(args),
                                   source=source, run=run)
    prov = result.provenance
    by_reviewer = int((result.removed["decision_source"] == "human").sum()) if len(result.removed) else 0
    print(f"kept {prov['n_kept']} ({prov['n_edited']} edited), removed {prov['n_removed']} "
          f"({by_reviewer} by reviewers, {prov['n_removed'] - by_reviewer} automatic: unreviewed items follow "
          f"--unreviewed {args.unreviewed}), human decisions {prov['n_human_decisions']}, "
          f"issues {sum(parsed.issue_counts().values())}")
    print(f"reviewed version of {pairs_file_of(args.items)}: {args.out} ({len(version.items)} pairs; "
          f"{len(version.removed_table())} rows in removed.csv)")
    print(f"report: {paths['review_report_md']}")
    return 0


def _version_name(args: argparse.Namespace) -> str:
    if args.version_name:
        return args.version_name
    path = args.items.resolve()
    from stereoset_eval.curation.labelstudio.items_io import VERSION_PAIR_FILES

    base = path.name if path.is_dir() else path.parent.name if path.name in VERSION_PAIR_FILES else path.stem
    return f"{base}-reviewed-{args.adjudication}"


def _inputs(args: argparse.Namespace, items: list[Item], parsed, run: Mapping[str, Any]) -> list[dict]:
    """The files read, as the dataset card lists them (name, sha256, items loaded)."""
    from stereoset_eval.curation.labelstudio.items_io import pairs_file_of
    from stereoset_eval.foundation.files import file_sha256

    pairs = pairs_file_of(args.items)
    out = [{"benchmark": "curated items", "file": pairs.name, "sha256": file_sha256(pairs), "items_loaded": len(items)}]
    if args.export is not None:
        out.append({"benchmark": "Label Studio export", "file": args.export.name, "sha256": file_sha256(args.export),
                    "items_loaded": parsed.n_tasks})
    else:
        extra = run["extra"]
        out.append({"benchmark": "Label Studio export", "file": extra["export_source"],
                    "sha256": extra["export_sha256_canonical"] + " (canonical JSON)", "items_loaded": parsed.n_tasks})
    return out


def _run_provenance(args: argparse.Namespace, tasks, source: str) -> Mapping[str, Any]:
    """Tool, git commit, input files with sha256, options; the export's canonical sha256."""
    import hashlib
    import json

    from stereoset_eval.foundation.provenance import build_provenance

    canonical = json.dumps(tasks, sort_keys=True, ensure_ascii=False).encode("utf-8")
    from stereoset_eval.curation.labelstudio.items_io import pairs_file_of

    return build_provenance(
        data_files=[pairs_file_of(args.items)] + ([args.export] if args.export is not None else []),
        options={"adjudication": args.adjudication, "primary_annotator": args.primary_annotator,
                 "unreviewed": args.unreviewed},
        extra={"export_source": source, "export_sha256_canonical": hashlib.sha256(canonical).hexdigest()},
    )


def run_agreement(args: argparse.Namespace) -> int:
    from stereoset_eval.foundation.atomic import atomic_path
    from stereoset_eval.curation.labelstudio.agreement import pairwise_agreement
    from stereoset_eval.curation.labelstudio.annotations import parse_export

    tasks, names, source = _read_export(args)
    parsed = parse_export(tasks, pitfall_names=names, source=source)
    table = pairwise_agreement(parsed.annotations, pitfall_names=names)
    annotators = parsed.annotators()
    if table.empty:
        who = ", ".join(annotators) if annotators else "none"
        print(f"no agreement to compute: Cohen's kappa needs two annotators on the same tasks; "
              f"{source} has {len(annotators)} annotator(s) ({who})"
              + ("" if len(annotators) < 2 else " with no task annotated by two of them"))
    else:
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.out:
        with atomic_path(args.out) as tmp:
            table.to_csv(tmp, index=False)
        print(f"written: {args.out}")
    return 0
