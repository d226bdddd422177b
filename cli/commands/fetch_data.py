"""``stereoset-eval fetch-data``: download and verify benchmark files from the manifest."""

from __future__ import annotations

import argparse
from pathlib import Path

from stereoset_eval.curation.loaders.download import bundled_path, entry, fetch, manifest
from stereoset_eval.foundation.errors import StereosetEvalError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fetch-data", help="download (or verify already present) benchmark files")
    p.add_argument("names", nargs="*", help="manifest names (default: all); see `stereoset-eval ls`")
    p.add_argument("--data-dir", type=Path, help="data directory (default $STEREOSET_EVAL_DATA)")
    p.add_argument("--no-download", action="store_true", help="only verify files already present")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check (or fetch) every named file; report each missing or invalid one, then fail if any was."""
    names = args.names or sorted(manifest())
    for name in names:
        entry(name)  # unknown names fail before anything is read
    problems = []
    for name in names:
        try:
            path = fetch(name, data_directory=args.data_dir, download=not args.no_download)
        except StereosetEvalError as exc:
            problems.append(name)
            print(f"missing  {name:24s} {exc}")
            continue
        where = " (bundled in the package)" if path == bundled_path(name) else ""
        print(f"ok       {name:24s} {path}{where}")
    if problems:
        raise StereosetEvalError(f"{len(problems)} of {len(names)} data files missing or invalid: "
                                 f"{', '.join(problems)}")
    return 0
