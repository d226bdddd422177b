"""Build the benchmark files shipped inside the package (``data/bundled/``), reproducibly.

Run from the repository root::

    python -m tools.build_packaged_data [--source ../shared/data] [--check]

* CrowS-Pairs original and revised: copied byte for byte (their manifest checksums apply).
* StereoSet dev: the English columns of ``stereoset/stereoset_dev_ids_ptbr_llm.csv``
  (``dataset_type, cluster_id, bias_type, target, context, sentence, gold_label,
  sentence_id``; the Portuguese ``context_pt`` / ``sentence_pt`` are dropped), every cell
  unchanged, rows in file order, UTF-8 without BOM, ``\\n`` line ends.

Each source is verified against ``data/manifest.json`` before use. The script writes
``data/bundled/PROVENANCE.md`` and the bundled entries' checksums into the manifest; with
``--check`` it only verifies that the committed files are what it would write. Not installed.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
BUNDLED = DATA / "bundled"
MANIFEST = DATA / "manifest.json"
#: English columns of the ids CSV, in its order
ENGLISH_COLUMNS = ("dataset_type", "cluster_id", "bias_type", "target", "context", "sentence", "gold_label",
                   "sentence_id")
#: bundled file -> (manifest entry of the source, how it is made)
BUILDS = {
    "crows_pairs_anonymized.csv": ("crows-pairs", "copy"),
    "crows_pairs_EN_revised.csv": ("crows-pairs-revised", "copy"),
    "stereoset_dev_en.csv": ("stereoset-dev-ids-csv", "english-columns"),
}
STEREOSET_ENTRY = "stereoset-dev-en"
#: published results shown beside ours (byte-exact copies; path under the source folder, sha256)
REFERENCES = {
    "stereoset_dev_scores_nadeem2021.json": (
        "reference-results/stereoset_dev_scores_nadeem2021.json",
        "13b127378fc3c7584115202156be877a44f3f12d2cdb53184cc3da24af59e70b",
        "moinnadeem/StereoSet code/predictions.json @ ead7d086a64a192a1eca88e0dd2fd163de375218 (CC BY-SA 4.0): "
        "official evaluation.py output on the dev split, shown beside our numbers when the model matches",
    ),
}
COMMENT = ("Benchmark files the toolkit knows. Each is verified before use by sha256 and/or git blob id (sha1 of "
           "'blob <size>\\0' + bytes). 'path' is where the file lives under the data directory (same layout as a local "
           "data folder); 'bundled' is its copy inside the package (data/bundled/, see PROVENANCE.md there), used when "
           "the data directory lacks the file, so no run needs a download; 'url' (null: bundled only) downloads it. "
           "Entries with 'hf' come from the Hugging Face Hub at a pinned revision; 'sha256_recorded_at_first_download': "
           "no published checksum, the sha256 of the written file is recorded beside it (<file>.provenance.json) at "
           "first download and enforced afterwards.")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def english_columns(raw: bytes) -> bytes:
    """The ids CSV reduced to :data:`ENGLISH_COLUMNS` (cells unchanged)."""
    rows = csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline=""))
    missing = [c for c in ENGLISH_COLUMNS if c not in (rows.fieldnames or [])]
    if missing:
        raise SystemExit(f"source lacks columns {missing}")
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(ENGLISH_COLUMNS)
    for row in rows:
        w.writerow([row[c] for c in ENGLISH_COLUMNS])
    return out.getvalue().encode("utf-8")


def build(source: Path) -> dict[str, bytes]:
    """Bundled file name -> bytes, from the verified source files under ``source``."""
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))["files"]
    out = {}
    for name, (entry, how) in BUILDS.items():
        spec = manifest[entry]
        path = source / spec["path"]
        if not path.is_file():
            raise SystemExit(f"{path}: source file missing (--source is a data folder with the manifest layout)")
        raw = path.read_bytes()
        if sha256(raw) != spec["sha256"]:
            raise SystemExit(f"{source / spec['path']}: sha256 {sha256(raw)} is not the manifest's {spec['sha256']}")
        out[name] = raw if how == "copy" else english_columns(raw)
    for name, (rel, digest, _) in REFERENCES.items():
        raw = (source / rel).read_bytes()
        if sha256(raw) != digest:
            raise SystemExit(f"{source / rel}: sha256 {sha256(raw)} is not {digest}")
        out[name] = raw
    return out


def provenance_md(files: dict[str, bytes]) -> str:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))["files"]
    lines = [
        "# Bundled benchmark data — provenance",
        "",
        "Shipped inside the package so that no run needs a data download. Built by",
        "`python -m tools.build_packaged_data` from the files named below (each verified by sha256",
        "against `data/manifest.json` first). A file of the same manifest name in the data directory",
        "(`--data-dir`, `$STEREOSET_EVAL_DATA`) is preferred; the user's own `dev.json` / `test.json` still load.",
        "",
        "License: **CC BY-SA 4.0** (StereoSet: Nadeem et al. 2021, `moinnadeem/StereoSet` `LICENSE.md`;",
        "CrowS-Pairs: Nangia et al. 2020, `nyu-mll/crows-pairs` README; revised English CrowS-Pairs:",
        "Névéol et al. 2022, upstream French CrowS-Pairs release). ShareAlike applies to these files.",
        "",
        "| file | made from (manifest entry, source URL) | how | rows | bytes | sha256 | git blob |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, data in files.items():
        if name in REFERENCES:
            continue
        entry, how = BUILDS[name]
        spec = manifest[entry]
        text = data.decode("utf-8-sig")
        rows = sum(1 for _ in csv.reader(io.StringIO(text, newline=""), delimiter="\t" if name.endswith("revised.csv") else ",")) - 1
        what = "byte-exact copy" if how == "copy" else "English columns only: " + ", ".join(ENGLISH_COLUMNS)
        lines.append(f"| `{name}` | `{entry}` ({spec['url']}, sha256 `{spec['sha256']}`) | {what} | {rows} | "
                     f"{len(data)} | `{sha256(data)}` | `{git_blob(data)}` |")
    lines += [
        "",
        "`stereoset_dev_en.csv` drops the machine-translated `context_pt` / `sentence_pt` columns of",
        "`stereoset_dev_ids_ptbr_llm.csv` (StereoSet-PTBR, Vitória Firmino, CC BY-SA 4.0); every English",
        "cell, the example ids (`cluster_id`), sentence ids and gold labels are unchanged, in file order.",
        "`tests/test_bundled_data.py` checks that its items equal those loaded from the source file.",
        "",
        "## Published results",
        "",
        "| file | source | bytes | sha256 |",
        "| --- | --- | --- | --- |",
    ]
    for name, (rel, digest, what) in REFERENCES.items():
        lines.append(f"| `{name}` | {what} (`shared/data/{rel}`) | {len(files[name])} | `{digest}` |")
    lines.append("")
    return "\n".join(lines)


def update_manifest(files: dict[str, bytes]) -> str:
    """The manifest text with the bundled entries' ``bundled`` paths and checksums filled in."""
    doc = json.loads(MANIFEST.read_text(encoding="utf-8"))
    doc["_comment"] = COMMENT
    entries = doc["files"]
    for name, (entry, how) in BUILDS.items():
        if how == "copy":
            entries[entry]["bundled"] = f"bundled/{name}"
        else:
            src = entries[entry]
            entries[STEREOSET_ENTRY] = {
                "url": None,
                "path": f"stereoset/{name}",
                "bundled": f"bundled/{name}",
                "sha256": sha256(files[name]),
                "git_blob": git_blob(files[name]),
                "license": "CC BY-SA 4.0",
                "benchmark": "stereoset",
                "description": "StereoSet dev split, English columns with official example/sentence ids (bundled)",
                "derived_from": {"entry": entry, "url": src["url"], "sha256": src["sha256"],
                                 "columns": list(ENGLISH_COLUMNS), "built_by": "python -m tools.build_packaged_data"},
            }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = os.environ.get("STEREOSET_EVAL_DATA") or (
        str(Path(os.environ["STEREOSET_EVAL_SHARED"]) / "data") if os.environ.get("STEREOSET_EVAL_SHARED") else None)
    parser.add_argument("--source", type=Path, default=default, required=default is None,
                        help="data folder with the manifest layout (default $STEREOSET_EVAL_DATA, "
                             "else $STEREOSET_EVAL_SHARED/data)")
    parser.add_argument("--check", action="store_true", help="only check that the committed files are up to date")
    args = parser.parse_args(argv)
    files = build(args.source)
    wanted = {BUNDLED / n: d for n, d in files.items()}
    wanted[BUNDLED / "PROVENANCE.md"] = provenance_md(files).encode("utf-8")
    wanted[MANIFEST] = update_manifest(files).encode("utf-8")
    stale = [p for p, d in wanted.items() if not p.exists() or p.read_bytes() != d]
    if args.check:
        for p in stale:
            print(f"stale: {p.relative_to(REPO)}", file=sys.stderr)
        return 1 if stale else 0
    BUNDLED.mkdir(parents=True, exist_ok=True)
    for path, data in wanted.items():
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        print(f"wrote {path.relative_to(REPO)} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
