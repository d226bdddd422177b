"""Hostile input does not take the machine's memory: ``score`` ends in a clear error, RSS bounded.

Each case runs ``stereoset-eval score`` in a child process (so the peak resident set size
measured is that run's alone, and an out-of-memory kill would fail the test rather than the
test runner) and checks: exit status 2, one ``error:`` line naming the file / sentence, peak
RSS under 1.5 GB.

* a 1 MB sentence (refused at load time by the field-size cap, with file, row and field);
* a 100,000-row file whose last row holds a 9,000-token sentence (CJK characters, one token
  each): it passes the field cap, and without the token-count pre-check the masked-LM method
  would build 9,000 masked copies of 9,000 tokens (81 M token slots) before any length check;
* a 100,000-row file with an unbalanced quote (every later row joined into one field).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("STEREOSET_EVAL_SHARED") or Path(__file__).resolve().parents[2] / "shared")
MODEL = SHARED / "fixtures" / "models" / "tiny-bert"
HEADER = ",sent_more,sent_less,stereo_antistereo,bias_type\n"
RSS_LIMIT_KB = 1_500_000
CHILD = ("import resource, sys\n"
         "from stereoset_eval.cli.main import main\n"
         "rc = main(sys.argv[1:])\n"
         "print('PEAK_RSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
         "sys.exit(rc)\n")

pytestmark = pytest.mark.skipif(not MODEL.is_dir(), reason=f"fixture model not found at {MODEL}")


def _rows(n: int) -> str:
    return "".join(f'{i},"The nurse {i} said she would come.","The nurse {i} said he would come.",stereo,gender\n'
                   for i in range(n))


def _score(tmp: Path, data: Path) -> tuple[int, str, int]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, "score", "--benchmark", "crows-pairs", "--data", str(data), "--model", str(MODEL),
         "--method", "crows-nangia", "--output", str(tmp / "out"), "--cache-dir", str(tmp / "cache"), "--no-progress"],
        capture_output=True, text=True, timeout=600, env=env)
    rss = [int(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("PEAK_RSS_KB")]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert len(errors) == 1, proc.stderr[-3000:]
    assert rss, proc.stderr[-3000:]
    return proc.returncode, errors[0], rss[0]


def test_megabyte_sentence_is_refused_at_load(tmp_path: Path) -> None:
    data = tmp_path / "crows.csv"
    data.write_text(HEADER + f'0,"{"word " * 200_000}","He is.",stereo,gender\n' + _rows(3)[2:])
    rc, error, rss = _score(tmp_path, data)
    assert rc == 2 and f"{data}, row 1, field 'sent_more'" in error and "1,000,000 characters long" in error, error
    assert rss < RSS_LIMIT_KB, f"peak RSS {rss / 1e6:.2f} GB"
    assert not (tmp_path / "out").exists()


def test_long_sentence_in_a_100k_row_file_is_refused_before_masked_copies(tmp_path: Path) -> None:
    data = tmp_path / "crows.csv"
    long = "我" * 9_000  # under the 10,000-character field cap, one token per character
    data.write_text(HEADER + _rows(100_000) + f'100000,"{long}","He is.",stereo,gender\n', encoding="utf-8")
    rc, error, rss = _score(tmp_path, data)
    assert rc == 2 and "crows:100000:more" in error and "exceed the 128-token limit" in error, error
    assert rss < RSS_LIMIT_KB, f"peak RSS {rss / 1e6:.2f} GB"
    assert not (tmp_path / "out").exists()


def test_unbalanced_quote_in_a_100k_row_file(tmp_path: Path) -> None:
    data = tmp_path / "crows.csv"
    data.write_text(HEADER + '0,"Women are bad at math.,"Men are bad at math.",stereo,gender\n'
                    + _rows(100_000).replace('"', ""))
    rc, error, rss = _score(tmp_path, data)
    assert rc == 2 and str(data) in error and "unbalanced quote" in error, error
    assert rss < RSS_LIMIT_KB, f"peak RSS {rss / 1e6:.2f} GB"
