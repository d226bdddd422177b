"""Benchmark files from the manifest: find locally, or download, verify and store atomically.

The data directory is ``--data-dir``, else ``$STEREOSET_EVAL_DATA``, else
``~/.cache/stereoset-eval/data``. Its layout mirrors the manifest's ``path`` entries
(``stereoset/…``, ``crows-pairs/…``), so a local folder of the same shape works offline.
A file is verified (sha256 and/or git blob id) before it is used, found or downloaded.
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

from stereoset_eval.foundation.errors import ChecksumError, StereosetEvalError, UnknownNameError
from stereoset_eval.foundation.files import file_sha256, git_blob_sha1

DATA_ENV = "STEREOSET_EVAL_DATA"


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


def verify(path: Path, spec: dict[str, Any]) -> None:
    """Raise ChecksumError unless ``path`` matches every checksum ``spec`` gives."""
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
        try:
            atomic_download(spec["url"], dest)
        except OSError as exc:
            raise StereosetEvalError(
                f"{name}: cannot download {spec['url']} ({exc}); put the file at {dest} or pass --data"
            ) from None
    verify(dest, spec)
    return dest
