"""Benchmark files from the manifest: find locally, or download, verify and store atomically.

The data directory is ``--data-dir``, else ``$STEREOSET_EVAL_DATA``, else
``~/.cache/stereoset-eval/data``. Its layout mirrors the manifest's ``path`` entries
(``stereoset/…``, ``crows-pairs/…``), so a local folder of the same shape works offline.
A file is verified (sha256 and/or git blob id) before it is used, found or downloaded.

Entries with an ``hf`` table come from the Hugging Face Hub at a pinned revision (the BMNE
release, ``teias-ai/BMNE``): a named ``filename`` through ``huggingface_hub.hf_hub_download``
(its sha256 is in the manifest), a ``config`` without a file name through
``datasets.load_dataset`` written to CSV — that file's sha256 is recorded at first download in
``<file>.provenance.json`` beside it and enforced from then on. Without hub access (and
without the file in the hub cache) the error names the entry and where to put a local copy.

Entries with a ``bundled`` path ship inside the package (``stereoset_eval/data/bundled/``:
CrowS-Pairs original and revised, StereoSet dev's English columns with ids); a file the data
directory lacks is taken from there, so those never need a download.
"""

from __future__ import annotations

import json
import os
import tempfile
import urllib.request
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from stereoset_eval.foundation.atomic import atomic_path, atomic_write_json
from stereoset_eval.foundation.errors import ChecksumError, StereosetEvalError, UnknownNameError
from stereoset_eval.foundation.files import file_sha256, git_blob_sha1

DATA_ENV = "STEREOSET_EVAL_DATA"
#: manifest flag: no published checksum, the sha256 is recorded at first download
RECORD_AT_FIRST_DOWNLOAD = "sha256_recorded_at_first_download"


@lru_cache(maxsize=1)
def manifest() -> dict[str, dict[str, Any]]:
    text = resources.files("stereoset_eval.data").joinpath("manifest.json").read_text(encoding="utf-8")
    return json.loads(text)["files"]


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit)
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV])
    return Path.home() / ".cache" / "stereoset-eval" / "data"


def entry(name: str) -> dict[str, Any]:
    files = manifest()
    if name not in files:
        raise UnknownNameError("data file", name, list(files))
    return files[name]


def record_path(path: Path) -> Path:
    """Where the first-download record (sha256 and origin) of ``path`` lives."""
    return path.with_name(path.name + ".provenance.json")


def recorded(path: Path) -> dict[str, Any] | None:
    """The first-download record of ``path`` (None when there is none)."""
    rec = record_path(path)
    return json.loads(rec.read_text(encoding="utf-8")) if rec.is_file() else None


def verify(path: Path, spec: dict[str, Any]) -> None:
    """Raise ChecksumError unless ``path`` matches every checksum ``spec`` gives.

    For an entry whose sha256 is recorded at first download, the recorded value is checked
    (a local copy found without a record gets one now, marked as such).
    """
    if spec.get(RECORD_AT_FIRST_DOWNLOAD) and "sha256" not in spec:
        rec = recorded(path)
        if rec is None:
            rec = {"sha256": file_sha256(path), "origin": "local copy (found in the data directory, not downloaded)",
                   "hf": spec.get("hf")}
            atomic_write_json(record_path(path), rec)
        spec = {**spec, "sha256": rec["sha256"]}
    if "sha256" in spec and file_sha256(path) != spec["sha256"]:
        raise ChecksumError(f"{path}: sha256 {file_sha256(path)} does not match the manifest's {spec['sha256']}")
    if "git_blob" in spec and git_blob_sha1(path) != spec["git_blob"]:
        raise ChecksumError(f"{path}: git blob {git_blob_sha1(path)} does not match the manifest's {spec['git_blob']}")


def atomic_download(url: str, dest: Path, *, timeout: float = 60.0) -> None:
    """Download to a temporary file beside ``dest`` and rename it into place."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            while chunk := resp.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def bundled_path(name: str) -> Path | None:
    """The package's own copy of manifest file ``name`` (None when it ships none)."""
    rel = entry(name).get("bundled")
    if not rel:
        return None
    path = Path(str(resources.files("stereoset_eval.data").joinpath(rel)))
    return path if path.is_file() else None


def fetch(name: str, *, data_directory: str | os.PathLike[str] | None = None, download: bool = True) -> Path:
    """Path of the verified manifest file ``name``.

    The data directory's copy first, else the package's bundled copy, else a download (when
    allowed and the entry has a URL).
    """
    spec = entry(name)
    dest = data_dir(data_directory) / spec["path"]
    if not dest.exists() and (bundled := bundled_path(name)) is not None:
        verify(bundled, spec)
        return bundled
    if not dest.exists():
        if not spec.get("url"):
            raise StereosetEvalError(f"{name}: {dest} not found, and the entry has no download URL")
        if not download:
            raise StereosetEvalError(f"{name}: {dest} not found and downloading is disabled")
        if "hf" in spec:
            fetch_hf(name, spec, dest)
        else:
            try:
                atomic_download(spec["url"], dest)
            except OSError as exc:
                raise StereosetEvalError(
                    f"{name}: cannot download {spec['url']} ({exc}); put the file at {dest} or pass --data"
                ) from None
    verify(dest, spec)
    return dest


def _hub_errors() -> tuple[type[BaseException], ...]:
    from huggingface_hub.errors import HfHubHTTPError

    return (OSError, ValueError, HfHubHTTPError)


def fetch_hf(name: str, spec: dict[str, Any], dest: Path) -> None:
    """Download the hub entry ``name`` into ``dest`` (verified before it is put in place)."""
    hf = spec["hf"]
    where = f"{hf['repo']}@{hf['revision']} ({hf.get('filename') or 'config ' + hf['config']})"
    try:
        if hf.get("filename"):
            _hf_file(hf, spec, dest)
        else:
            _hf_config(name, hf, dest)
    except ChecksumError:
        raise
    except _hub_errors() as exc:
        raise StereosetEvalError(
            f"{name}: cannot get {where} from the Hugging Face Hub ({type(exc).__name__}: {str(exc)[:200]}); "
            f"on a machine without hub access put a copy of the release file at {dest} "
            f"(it is checksum-verified) or give the benchmark `data = \"/path/to/copy.csv\"` (CSV or parquet)"
        ) from None


def _hf_file(hf: dict[str, Any], spec: dict[str, Any], dest: Path) -> None:
    from huggingface_hub import hf_hub_download

    cached = Path(hf_hub_download(repo_id=hf["repo"], filename=hf["filename"], repo_type="dataset",
                                  revision=hf["revision"]))
    verify(cached, spec)
    with atomic_path(dest) as tmp:
        tmp.write_bytes(cached.read_bytes())


def _hf_config(name: str, hf: dict[str, Any], dest: Path) -> None:
    """``datasets.load_dataset`` of the config, written as CSV; its sha256 recorded beside it."""
    import datasets

    ds = datasets.load_dataset(hf["repo"], hf["config"], split=hf.get("split", "train"), revision=hf["revision"])
    frame = ds.to_pandas()
    columns = list(hf.get("columns") or frame.columns)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise StereosetEvalError(f"{name}: {hf['repo']}@{hf['revision']} config {hf['config']} lacks column(s) "
                                 f"{missing}; it has {list(frame.columns)}")
    with atomic_path(dest) as tmp:
        frame[columns].to_csv(tmp, index=False, lineterminator="\n")  # the release's column order
        sha = file_sha256(tmp)
    atomic_write_json(record_path(dest), {
        "sha256": sha, "origin": "datasets.load_dataset at first download", "hf": hf, "rows": len(frame),
        "columns_dropped": [c for c in frame.columns if c not in columns],
        "datasets_version": datasets.__version__, "fingerprint": getattr(ds, "_fingerprint", None),
    })
