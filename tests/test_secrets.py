"""Secrets: the Label Studio API key and hub tokens never reach output, logs, files or errors.

Both are read from the environment only (``LABEL_STUDIO_API_KEY``, ``HF_TOKEN`` /
``HUGGING_FACE_HUB_TOKEN``). The test sets recognisable values, runs ``annotate`` commands
against a server that echoes the ``Authorization`` header back in its error bodies (the worst
case: a proxy or a debug server) and against an unreachable URL, then ``score`` and
``report`` (and a hub model that cannot be fetched), capturing stdout, stderr, every log
record at DEBUG level (httpx, urllib3, transformers, huggingface_hub included) and every file
written under the test folder; the secrets must appear in none of them.
"""

from __future__ import annotations

import csv
import http.server
import json
import logging
import socket
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from stereoset_eval.cli.main import main

LS_KEY = "ls-SECRET-7f3a9c2e1b"
HF_KEY = "hf_SECRETtoken9d8c7b6a5"
SECRETS = (LS_KEY, HF_KEY)
FIXTURES = Path(__file__).resolve().parent / "fixtures"


class _EchoAuth(http.server.BaseHTTPRequestHandler):
    """Refuses every request and echoes the credentials it was sent in the error body."""

    def _answer(self) -> None:
        body = json.dumps({"detail": f"Invalid token {self.headers.get('Authorization')!s}",
                           "headers": dict(self.headers)}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def echo_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EchoAuth)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.fixture()
def secret_env(monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", LS_KEY)
    monkeypatch.setenv("HF_TOKEN", HF_KEY)
    monkeypatch.setenv("HUGGING_FACE_HUB_TOKEN", HF_KEY)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture()
def all_logs() -> Iterator[list[str]]:
    """Every log record of every logger at DEBUG, formatted with its arguments."""
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(f"{record.name}: {record.getMessage()} {record.exc_text or ''}")

    root, handler = logging.getLogger(), Keep(level=logging.DEBUG)
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield records
    root.removeHandler(handler)
    root.setLevel(old)


def assert_no_secret(where: str, text: str | bytes) -> None:
    data = text.encode() if isinstance(text, str) else text
    for secret in SECRETS:
        assert secret.encode() not in data, f"{where} contains the secret {secret[:6]}…"


def scan_files(root: Path) -> int:
    n = 0
    for path in root.rglob("*"):
        if path.is_file():
            assert_no_secret(str(path), path.read_bytes())
            n += 1
    return n


def annotate_commands(url_refusing: str, url_unreachable: str, tmp: Path) -> list[list[str]]:
    items = str(FIXTURES / "labelstudio_items.jsonl")
    return [
        ["annotate", "pull", "--url", url_refusing, "--project", "1", "--out", str(tmp / "export.json")],
        ["annotate", "pull", "--url", url_unreachable, "--project", "1", "--out", str(tmp / "export2.json")],
        ["annotate", "push", "--items", items, "--tasks-out", str(tmp / "tasks.json"), "--url", url_refusing],
        ["annotate", "merge", "--items", items, "--url", url_refusing, "--project", "3", "--out", str(tmp / "merged")],
        ["annotate", "agreement", "--url", url_unreachable, "--project", "1"],
    ]


def test_label_studio_key_never_appears(echo_server, secret_env, all_logs, tmp_path, capsys):
    outputs = []
    for argv in annotate_commands(echo_server, closed_port_url(), tmp_path):
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        outputs.append(captured.err)
        assert_no_secret(f"stdout of {argv[:2]}", captured.out)
        assert_no_secret(f"stderr of {argv[:2]}", captured.err)
    assert any("refused" in e for e in outputs) and any("cannot reach" in e for e in outputs)
    assert (tmp_path / "tasks.json").exists()  # push wrote its tasks file before contacting the server
    for record in all_logs:
        assert_no_secret("a log record", record)
    assert scan_files(tmp_path) >= 1


def test_key_never_in_exceptions_or_their_context(echo_server):
    from stereoset_eval.curation.labelstudio.server import LabelStudioError, connect

    for key in (LS_KEY, f"{LS_KEY}\n", f"  {LS_KEY} "):  # a key read from a file keeps its newline
        with pytest.raises(LabelStudioError) as info:
            connect(echo_server, key, timeout=10)
        exc = info.value
        chain = [exc, exc.__cause__, exc.__context__]
        for e in chain:
            if e is not None:
                assert_no_secret("exception", f"{e!s} {e!r} {getattr(e, 'args', '')}")
        assert_no_secret("exception attributes", json.dumps({k: str(v) for k, v in vars(exc).items()}))


def test_hub_token_never_appears_in_score_and_report(secret_env, all_logs, models_dir, crows_csv, tmp_path, capsys):
    data = tmp_path / "crows6.csv"
    with open(crows_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))[:7]
    with open(data, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    out = tmp_path / "scores"
    assert main(["score", "--benchmark", "crows-pairs", "--data", str(data), "--model", str(models_dir / "tiny-bert"),
                 "--output", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]) == 0
    assert main(["report", "--benchmark", "crows-pairs", "--data", str(data), "--scores", str(out / "scores.csv"),
                 "--out", str(tmp_path / "report"), "--bootstrap", "20"]) == 0
    # a hub model that cannot be fetched offline: the error path must not echo the token either
    assert main(["score", "--benchmark", "crows-pairs", "--data", str(data), "--model", "no-such-org/no-such-model",
                 "--output", str(tmp_path / "never"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]) == 2
    captured = capsys.readouterr()
    assert_no_secret("stdout", captured.out)
    assert_no_secret("stderr", captured.err)
    assert "error: " in captured.err
    for record in all_logs:
        assert_no_secret("a log record", record)
    assert scan_files(tmp_path) >= 6  # scores.csv/json, provenance, report.json/md/html, the cache …
    provenance = (out / "provenance.json").read_text()
    assert "HF_TOKEN" not in provenance and "token" not in json.loads(provenance)["command"]
