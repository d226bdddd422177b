"""The benchmark files shipped in the package: same items as their sources, used without a download."""

from __future__ import annotations

import dataclasses
import fnmatch
import subprocess
import sys

import pytest

from stereoset_eval.curation.loaders.download import bundled_path, entry, fetch, manifest
from stereoset_eval.curation.loaders.registry import load_items
from stereoset_eval.foundation.files import file_sha256, git_blob_sha1

from conftest import REPO

BUNDLED = [name for name, spec in manifest().items() if spec.get("bundled")]


def _content(item) -> dict:
    """Everything of an item except where it was read from (file, checksum, row, format)."""
    out = dataclasses.asdict(item)
    out.pop("provenance")
    return out


def test_bundled_entries_are_the_three_benchmark_files():
    assert sorted(BUNDLED) == ["crows-pairs", "crows-pairs-revised", "stereoset-dev-en"]


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_file_is_installed_and_matches_the_manifest(name):
    path = bundled_path(name)
    assert path is not None and path.is_file(), name
    assert file_sha256(path) == entry(name)["sha256"]
    assert git_blob_sha1(path) == entry(name)["git_blob"]


def test_bundled_files_are_package_data():
    """pyproject's package-data patterns cover every bundled file and its PROVENANCE.md."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["stereoset_eval.data"]
    for rel in [entry(n)["bundled"] for n in BUNDLED] + ["bundled/PROVENANCE.md"]:
        assert any(fnmatch.fnmatch(rel, p) for p in patterns), rel
        assert (REPO / "data" / rel).is_file(), rel


def test_bundled_provenance_names_source_checksum_and_license():
    text = (REPO / "data" / "bundled" / "PROVENANCE.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in text
    assert entry("stereoset-dev-ids-csv")["sha256"] in text and entry("stereoset-dev-en")["sha256"] in text
    derived = entry("stereoset-dev-en")["derived_from"]
    assert derived["sha256"] == entry("stereoset-dev-ids-csv")["sha256"]
    assert "context_pt" not in derived["columns"] and "sentence_id" in derived["columns"]


def test_stereoset_items_equal_those_of_the_shared_ids_csv(ids_csv):
    """Ids, texts, labels, targets, bias types and order: identical to the source file's items."""
    shipped = load_items("stereoset", bundled_path("stereoset-dev-en"))
    source = load_items("stereoset", ids_csv)
    assert len(shipped) == len(source) == 4229
    assert [_content(i) for i in shipped] == [_content(i) for i in source]
    assert sum(len(i.sentences) for i in shipped) == 12687


@pytest.mark.parametrize("name", ["crows-pairs", "crows-pairs-revised"])
def test_crows_pairs_bundled_byte_for_byte(data_dir, name):
    assert bundled_path(name).read_bytes() == (data_dir / entry(name)["path"]).read_bytes()


def test_empty_data_directory_uses_the_bundled_copy_without_download(tmp_path, monkeypatch):
    import stereoset_eval.curation.loaders.download as dl

    def refuse(url, dest, timeout=60.0):
        raise AssertionError(f"downloaded {url}")

    monkeypatch.setattr(dl, "atomic_download", refuse)
    for name in BUNDLED:
        assert fetch(name, data_directory=tmp_path, download=True) == bundled_path(name)
    assert not any(tmp_path.iterdir())


def test_a_data_directory_copy_is_preferred(tmp_path, crows_csv):
    dest = tmp_path / entry("crows-pairs")["path"]
    dest.parent.mkdir(parents=True)
    dest.write_bytes(crows_csv.read_bytes())
    assert fetch("crows-pairs", data_directory=tmp_path, download=False) == dest


def test_default_stereoset_file_without_data_dir_is_bundled(tmp_path):
    from stereoset_eval.cli.commands._common import resolve_data

    assert resolve_data("stereoset", None, tmp_path) == bundled_path("stereoset-dev-en")
    assert resolve_data("crows-pairs", None, tmp_path) == bundled_path("crows-pairs")


def test_build_script_reproduces_the_committed_files(data_dir):
    out = subprocess.run([sys.executable, "-m", "tools.build_packaged_data", "--source", str(data_dir), "--check"],
                         cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
