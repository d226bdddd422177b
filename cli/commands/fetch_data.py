"""``stereoset-eval fetch-data``: download and verify benchmark files from the manifest."""

from __future__ import annotations

import argparse
from pathlib import Path

from stereoset_eval.curation.loaders.download import fetch, manifest


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fetch-data", help="download (or verify already present) benchmark files")
    p.add_argument("names", nargs="*", help="manifest names (default: all); see `stereoset-eval ls`")
    p.add_argument("--data-dir", type=Path, help="data directory (default $STEREOSET_EVAL_DATA)")
    p.add_argument("--no-download", action="store_true", help="only verify files already present")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for name in args.names or sorted(manifest()):
        path = fetch(name, data_directory=args.data_dir, download=not args.no_download)
        print(f"ok  {name:24s} {path}")
    return 0
