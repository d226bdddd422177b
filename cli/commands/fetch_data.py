"""``stereoset-eval fetch-data``: download and verify benchmark files from the manifest."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stereoset_eval.curation.loaders.download import fetch, manifest
from stereoset_eval.foundation.errors import StereosetEvalError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fetch-data", help="download (or verify already present) benchmark files")
    p.add_argument("names", nargs="*", help="manifest names (default: all); see `stereoset-eval ls`")
    p.add_argument("--data-dir", type=Path, help="data directory (default $STEREOSET_EVAL_DATA)")
    p.add_argument("--no-download", action="store_true", help="only verify files already present")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Each file in turn; one that fails (e.g. the BMNE release without hub access) does not stop the others."""
    failed = []
    for name in args.names or sorted(manifest()):
        try:
            path = fetch(name, data_directory=args.data_dir, download=not args.no_download)
        except StereosetEvalError as exc:
            if args.names and len(args.names) == 1:
                raise
            print(f"error: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        print(f"ok  {name:24s} {path}")
    if failed:
        print(f"error: {len(failed)} file(s) not available: {', '.join(failed)}", file=sys.stderr)
        return 2
    return 0
