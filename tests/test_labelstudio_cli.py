"""``stereoset-eval annotate`` offline: files in, files out; connection errors without a server."""

from __future__ import annotations

import json
import secrets
import socket
import traceback
from pathlib import Path

import pytest

from analysis.cli import main
from curation.labelstudio.server import (
    LabelStudioAuthError, LabelStudioError, LabelStudioUnreachableError, connect,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ITEMS = FIXTURES / "labelstudio_items.jsonl"
EXPORT = FIXTURES / "labelstudio_export.json"


def run(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_push_writes_tasks_and_config_for_a_manual_import(tmp_path, capsys):
    pytest.importorskip("label_studio_sdk")
    code, out, _ = run(["annotate", "push", "--items", str(ITEMS), "--tasks-out", str(tmp_path / "tasks.json"),
                        "--config-out", str(tmp_path / "config.xml")], capsys)
    assert code == 0 and out.startswith("22 tasks, model_version stereoset-eval-")
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    assert len(tasks) == 22 and all(t["predictions"] for t in tasks)
    assert (tmp_path / "config.xml").read_text().startswith("<View>")


def test_push_without_destination(capsys):
    code, _, err = run(["annotate", "push", "--items", str(ITEMS)], capsys)
    assert code == 2 and "nothing to do" in err


def test_merge_from_export_file(tmp_path, capsys):
    code, out, _ = run(["annotate", "merge", "--items", str(ITEMS), "--export", str(EXPORT),
                        "--out", str(tmp_path / "review")], capsys)
    assert code == 0
    assert out.splitlines()[0] == "kept 18 (2 edited), removed 4, human decisions 20, issues 8"
    report = json.loads((tmp_path / "review" / "review_report.json").read_text())
    assert report["provenance"]["adjudication"] == "majority"
    assert report["source"] == str(EXPORT)
    run_prov = report["run"]
    assert [f["path"] for f in run_prov["data_files"]] == [str(ITEMS), str(EXPORT)]
    assert all(len(f["sha256"]) == 64 for f in run_prov["data_files"])
    assert run_prov["options"]["adjudication"] == "majority" and run_prov["tool"]["name"] == "stereoset-eval"


def test_merge_primary(tmp_path, capsys):
    meta = json.loads((FIXTURES / "labelstudio_meta.json").read_text())
    code, out, _ = run(["annotate", "merge", "--items", str(ITEMS), "--export", str(EXPORT), "--out",
                        str(tmp_path / "r"), "--adjudication", "primary", "--primary-annotator",
                        meta["annotators"]["A"]], capsys)
    assert code == 0 and out.startswith("kept 19 (3 edited), removed 3")


@pytest.mark.parametrize("extra, message", [
    (["--adjudication", "vote"], "unknown adjudication rule 'vote'"),
    (["--adjudication", "primary"], "needs primary_annotator"),
    (["--url", "http://127.0.0.1:9"], "either --export or --url"),
])
def test_merge_option_errors(tmp_path, capsys, extra, message):
    code, _, err = run(["annotate", "merge", "--items", str(ITEMS), "--export", str(EXPORT), "--out",
                        str(tmp_path / "r"), *extra], capsys)
    assert code == 2 and err.startswith("error: ") and message in err


def test_agreement_from_export_file(tmp_path, capsys):
    code, out, _ = run(["annotate", "agreement", "--export", str(EXPORT), "--out", str(tmp_path / "k.csv")], capsys)
    assert code == 0
    decision = next(line for line in out.splitlines() if line.strip().startswith("decision"))
    assert decision.split()[-4:] == ["18", "0.889", "0.559", "0.748"]
    assert (tmp_path / "k.csv").read_text().startswith("field,annotator_a,annotator_b,n,observed,expected,kappa")


def test_agreement_needs_a_source(capsys):
    code, _, err = run(["annotate", "agreement"], capsys)
    assert code == 2 and "give --export FILE, or --url and --project" in err


def test_unreachable_server(capsys, monkeypatch):
    pytest.importorskip("label_studio_sdk")
    key = secrets.token_hex(20)
    url = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(LabelStudioUnreachableError) as info:
        connect(url, key, timeout=5, max_retries=0)
    assert str(info.value).startswith(f"Label Studio at {url}: checking the API key: cannot reach the server")
    assert key not in "".join(traceback.format_exception(info.value))
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", key)
    code, out, err = run(["annotate", "pull", "--url", url, "--project", "3", "--out", "x.json"], capsys)
    assert code == 2 and "cannot reach the server" in err and key not in out + err


@pytest.mark.parametrize("url, key, error, message", [
    ("http://127.0.0.1:9", None, LabelStudioAuthError, "no API key: set the environment variable LABEL_STUDIO_API_KEY"),
    ("http://127.0.0.1:9", "  ", LabelStudioAuthError, "no API key"),
    ("localhost:8080", "k" * 40, LabelStudioError, "must start with http"),
    ("http://127.0.0.1:9", "bad\nkey" + "k" * 30, LabelStudioAuthError, "not a valid HTTP header value"),
])
def test_connect_refuses_before_any_request(url, key, error, message):
    pytest.importorskip("label_studio_sdk")
    with pytest.raises(error, match=message) as info:
        connect(url, key, timeout=5)
    if key and key.strip():
        assert key not in "".join(traceback.format_exception(info.value))
