"""What identifies a model's numbers: revision, weights sha256, tokenizer sha256.

The weights hash is a sha256 over the sorted ``(file name, file sha256)`` of the weight files
that ``from_pretrained`` reads (safetensors if present, else PyTorch ``.bin``). For hub models
the files of the resolved snapshot are used; the hub cache stores LFS files under their
sha256, so a cached multi-GB checkpoint is identified without reading it. Local files are
hashed once per (path, size, mtime) and remembered.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, Callable, Protocol

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
TOKENIZER_FILES: tuple[str, ...] = (
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "vocab.txt", "vocab.json", "merges.txt", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model",
)


class HashMemo(Protocol):
    def get_file_hash(self, path: str, size: int, mtime_ns: int) -> str | None: ...
    def put_file_hash(self, path: str, size: int, mtime_ns: int, sha256: str) -> None: ...


_PROCESS_MEMO: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path, memo: HashMemo | None = None) -> str:
    """sha256 of a file; the hub cache's blob name is used when it is the file's sha256."""
    real = path.resolve()
    if real.parent.name == "blobs" and _HEX64.match(real.name):
        return real.name  # huggingface_hub stores LFS files as blobs/<sha256>
    st = real.stat()
    key = (str(real), st.st_size, st.st_mtime_ns)
    if key in _PROCESS_MEMO:
        return _PROCESS_MEMO[key]
    known = memo.get_file_hash(*key) if memo is not None else None
    if known is None:
        h = hashlib.sha256()
        with open(real, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        known = h.hexdigest()
        if memo is not None:
            memo.put_file_hash(*key, known)
    _PROCESS_MEMO[key] = known
    return known


def weight_files(directory: Path) -> list[Path]:
    """The weight files ``from_pretrained`` loads from ``directory`` (safetensors preferred)."""
    names = sorted(p for p in directory.iterdir() if p.is_file() or p.is_symlink())
    safetensors = [p for p in names if p.name.endswith(".safetensors")]
    if safetensors:
        return safetensors
    return [p for p in names if p.name.endswith(".bin") and p.name.startswith("pytorch_model")]


def combined_sha256(files: dict[str, str]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(f"{name}\x1f{files[name]}\n".encode())
    return h.hexdigest()


def model_directory(model: str, revision: str | None) -> tuple[Path | None, str | None]:
    """The local folder holding ``model``'s files, and the hub commit when it came from the hub.

    Call after ``from_pretrained`` (which downloads what is needed). None if it cannot be found.
    """
    if os.path.isdir(model):
        return Path(model).resolve(), None
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(model, "config.json", revision=revision)
    except Exception:  # noqa: BLE001 - a missing or odd cache only means "no file fingerprint"
        return None, None
    if not isinstance(cached, str):
        return None, None
    snapshot = Path(cached).parent
    return snapshot, snapshot.name if snapshot.parent.name == "snapshots" else None


def fingerprint(model: str, revision: str | None, *, memo: HashMemo | None = None,
                state_dict_hash: Callable[[], str] | None = None) -> dict[str, Any]:
    """Revision, per-file and combined weights sha256, tokenizer sha256 of ``model``.

    Falls back to hashing the loaded tensors (``state_dict_hash``) when no files are found.
    """
    directory, commit = model_directory(model, revision)
    out: dict[str, Any] = {"revision": commit or revision, "directory": str(directory) if directory else None}
    files = weight_files(directory) if directory else []
    if files:
        per_file = {p.name: file_sha256(p, memo) for p in files}
        out["weight_files"] = per_file
        out["weights_sha256"] = combined_sha256(per_file)
        out["weights_hash_of"] = "files"
    elif state_dict_hash is not None:
        out["weight_files"] = {}
        out["weights_sha256"] = state_dict_hash()
        out["weights_hash_of"] = "loaded tensors"
    tok_files = {n: file_sha256(directory / n, memo) for n in TOKENIZER_FILES if directory and (directory / n).exists()}
    out["tokenizer_files"] = tok_files
    out["tokenizer_sha256"] = combined_sha256(tok_files) if tok_files else None
    config = directory / "config.json" if directory else None
    out["config_sha256"] = file_sha256(config, memo) if config and config.exists() else None
    return out
