"""Manifest files: found locally and verified, checksums enforced, atomic download."""

from __future__ import annotations

import pytest

from stereoset_eval.curation.loaders.download import entry, fetch, manifest, verify
from stereoset_eval.foundation.errors import ChecksumError, StereosetEvalError
from stereoset_eval.foundation.files import file_sha256, git_blob_sha1


def test_manifest_entries_complete():
    for name, spec in manifest().items():
        assert {"url", "path", "license", "benchmark", "description"} <= set(spec), name
        # a hub config without a published checksum gets its sha256 recorded at first download (and a pinned revision)
        tofu = "hf" in spec and spec.get("sha256_recorded_at_first_download") is True and len(spec["hf"]["revision"]) == 40
        assert "sha256" in spec or "git_blob" in spec or tofu, name


@pytest.mark.parametrize("name", ["crows-pairs", "crows-pairs-revised", "stereoset-dev-ids-csv", "stereoset-dev-jsonl"])
def test_local_shared_files_verify(data_dir, name):
    path = fetch(name, data_directory=data_dir, download=False)
    assert file_sha256(path) == entry(name)["sha256"]
    assert git_blob_sha1(path) == entry(name)["git_blob"]


def test_tampered_file_rejected(tmp_path, crows_csv):
    spec = entry("crows-pairs")
    bad = tmp_path / spec["path"]
    bad.parent.mkdir(parents=True)
    bad.write_bytes(crows_csv.read_bytes() + b"x")
    with pytest.raises(ChecksumError, match="sha256"):
        verify(bad, spec)


def test_missing_file_without_download(tmp_path):
    with pytest.raises(StereosetEvalError, match="not found and downloading is disabled"):
        fetch("stereoset-dev", data_directory=tmp_path, download=False)


def test_download_failure_is_clear(tmp_path, monkeypatch):
    import stereoset_eval.curation.loaders.download as dl

    def refuse(url, dest, timeout=60.0):
        raise OSError("network unreachable")

    monkeypatch.setattr(dl, "atomic_download", refuse)
    with pytest.raises(StereosetEvalError, match="cannot download .*put the file at"):
        fetch("stereoset-dev", data_directory=tmp_path)  # crows-pairs is bundled: it never downloads
    assert not list(tmp_path.rglob("*.json*"))


def test_atomic_download_from_file_url(tmp_path, crows_csv):
    from stereoset_eval.curation.loaders.download import atomic_download

    dest = tmp_path / "x" / "c.csv"
    atomic_download(crows_csv.as_uri(), dest)
    assert file_sha256(dest) == entry("crows-pairs")["sha256"]
    assert [p.name for p in dest.parent.iterdir()] == ["c.csv"]
