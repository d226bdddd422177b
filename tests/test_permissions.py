"""Permission denied, for real: unreadable inputs and unwritable output folders through the CLI.

Tests usually run as root, which no file mode stops. So each case runs ``stereoset-eval`` in a
child process as another user: as ``nobody`` through ``setpriv`` when this process is root (the
case is skipped, with the reason, when ``setpriv`` is missing or ``nobody`` cannot run this
interpreter), else as the current user (the modes below deny their owner too). Every case must
end in exit status 2 with exactly one ``error:`` line, the last, naming the file or folder — no
traceback — and an unwritable output folder must be refused before any work, with nothing written.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("STEREOSET_EVAL_SHARED") or REPO.parent / "shared")
MODELS = SHARED / "fixtures" / "models"
CROWS = (',sent_more,sent_less,stereo_antistereo,bias_type\n'
         '0,"Women are bad at math.","Men are bad at math.",stereo,gender\n'
         '1,"She cried at the film.","He cried at the film.",stereo,gender\n')
CLI = "import sys; from stereoset_eval.cli.main import main; sys.exit(main(sys.argv[1:]))"
TIMEOUT_S = 240


def _as_other_user() -> list[str]:
    """The command prefix that runs a child as a user the test's file modes apply to."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no user to deny permissions to (install util-linux)")
    prefix = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    probe = subprocess.run(prefix + [sys.executable, "-c", "import stereoset_eval.cli.main"], capture_output=True,
                           text=True, timeout=TIMEOUT_S, cwd="/")
    if probe.returncode != 0:
        pytest.skip(f"user nobody cannot run this interpreter: {probe.stderr.strip()[-300:]}")
    return prefix


@pytest.fixture(scope="module")
def prefix() -> list[str]:
    return _as_other_user()


@pytest.fixture
def root():
    """A folder the other user can enter (pytest's own tmp folders are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="perm", dir="/tmp"))
    path.chmod(0o755)
    home = path / "home"
    home.mkdir()
    home.chmod(0o777)  # the other user's HOME, caches and outputs
    yield path
    for p in [path, *path.rglob("*")]:  # give the owner its folders back, then remove what this fixture made
        try:
            if not p.is_symlink():
                p.chmod(0o755 if p.is_dir() else 0o644)
        except OSError:
            pass
    shutil.rmtree(path, ignore_errors=True)


@dataclass(frozen=True)
class Run:
    rc: int
    stdout: str
    stderr: str


def cli(prefix: list[str], root: Path, *argv: str) -> Run:
    home = root / "home"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "OMP_NUM_THREADS": "1",
           "STEREOSET_EVAL_CACHE": str(home / "cache"), "HF_HOME": str(home / "hf"), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "MPLCONFIGDIR": str(home / "mpl"), "STEREOSET_EVAL_DATA": str(SHARED / "data")}
    done = subprocess.run(prefix + [sys.executable, "-c", CLI, *argv], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT_S, cwd=str(home))
    return Run(done.returncode, done.stdout, done.stderr)


def one_error_line(run: Run, names: tuple[str, ...], problem: str) -> str:
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.rc == 2, (run.rc, run.stderr[-2000:])
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], lines[-5:]
    for name in names:
        assert name in errors[0], (name, errors[0])
    assert re.search(problem, errors[0]), errors[0]
    return errors[0]


def _file(root: Path, name: str, text: str, mode: int) -> Path:
    path = root / name
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def _locked_folder(root: Path, name: str = "ro") -> Path:
    """A folder the other user may enter and list but not write."""
    path = root / name
    path.mkdir()
    path.chmod(0o555)
    return path


def _unreadable_model(root: Path) -> Path:
    path = root / "bert"
    shutil.copytree(MODELS / "tiny-bert", path)
    path.chmod(0o000)
    return path


def _config(root: Path, output: Path, mode: int = 0o644) -> Path:
    text = (f'[study]\noutput = "{output}"\nlimit = 2\n[data]\ndir = "{SHARED / "data"}"\ndownload = false\n'
            '[[models]]\nid = "fake:masked"\n[[benchmarks]]\nname = "CrowS-Pairs"\nsource = "crows-pairs"\n'
            '[methods]\nmasked = ["pll"]\nbenchmark_methods = false\n[analysis]\nbootstrap = 10\n')
    return _file(root, "study.toml", text, mode)


@dataclass(frozen=True)
class Case:
    id: str
    argv: Callable[[Path], list[str]]  # builds its inputs under the root folder
    names: Callable[[Path], tuple[str, ...]]
    problem: str
    nothing_written: str | None = None  # a folder that must stay empty


def _crows(root: Path, mode: int = 0o644) -> Path:
    return _file(root, "crows.csv", CROWS, mode)


def _scores(root: Path, mode: int) -> Path:
    return _file(root, "scores.csv", "sentence_id,score\n0:more,-1.0\n", mode)


UNREADABLE = "permission denied"
UNWRITABLE = r"cannot be written: the folder .* is not writable \(permission denied or a read-only file system\)"
CASES = [
    Case("curate-unreadable-data",
         lambda r: ["curate", "--benchmark", "crows-pairs", "--data", str(_crows(r, 0o000)),
                    "--output", str(r / "home" / "out")],
         lambda r: (str(r / "crows.csv"),), UNREADABLE),
    Case("score-unreadable-data",
         lambda r: ["score", "--benchmark", "crows-pairs", "--data", str(_crows(r, 0o000)), "--model", "fake:masked",
                    "--output", str(r / "home" / "out")],
         lambda r: (str(r / "crows.csv"),), UNREADABLE),
    Case("score-unreadable-model-folder",
         lambda r: ["score", "--benchmark", "crows-pairs", "--data", str(_crows(r)), "--model", str(_unreadable_model(r)),
                    "--output", str(r / "home" / "out")],
         lambda r: (str(r / "bert"),), UNREADABLE),
    Case("report-unreadable-scores",
         lambda r: ["report", "--benchmark", "crows-pairs", "--data", str(_crows(r)), "--scores",
                    str(_scores(r, 0o000)), "--out", str(r / "home" / "out")],
         lambda r: (str(r / "scores.csv"),), UNREADABLE),
    Case("study-unreadable-config",
         lambda r: ["study", str(_config(r, r / "home" / "out", 0o000))],
         lambda r: (str(r / "study.toml"),), r"cannot read the study config \(Permission denied\)"),
    Case("score-read-only-cache-folder",
         lambda r: ["score", "--benchmark", "crows-pairs", "--data", str(_crows(r)), "--model", "fake:masked",
                    "--output", str(r / "home" / "out"), "--cache-dir", str(_locked_folder(r) / "cache")],
         lambda r: (str(r / "ro"),), UNREADABLE, nothing_written="ro"),
    Case("curate-read-only-output-folder",
         lambda r: ["curate", "--benchmark", "crows-pairs", "--data", str(_crows(r)),
                    "--output", str(_locked_folder(r) / "out")],
         lambda r: (str(r / "ro" / "out"), str(r / "ro")), UNWRITABLE, nothing_written="ro"),
    Case("score-read-only-output-folder",
         lambda r: ["score", "--benchmark", "crows-pairs", "--data", str(_crows(r)), "--model", "fake:masked",
                    "--output", str(_locked_folder(r) / "deeper" / "out")],
         lambda r: (str(r / "ro" / "deeper" / "out"), str(r / "ro")), UNWRITABLE, nothing_written="ro"),
    Case("report-read-only-output-folder",
         lambda r: ["report", "--benchmark", "crows-pairs", "--data", str(_crows(r)), "--scores",
                    str(_scores(r, 0o644)), "--out", str(_locked_folder(r) / "out")],
         lambda r: (str(r / "ro" / "out"),), UNWRITABLE, nothing_written="ro"),
    Case("study-read-only-output-folder",
         lambda r: ["study", str(_config(r, _locked_folder(r) / "out"))],
         lambda r: (str(r / "ro" / "out"),), UNWRITABLE, nothing_written="ro"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_permission_denied_is_one_error_line(prefix, root, case):
    argv = case.argv(root)
    run = cli(prefix, root, *argv)
    one_error_line(run, case.names(root), case.problem)
    if case.nothing_written:
        folder = root / case.nothing_written
        folder.chmod(0o755)
        assert list(folder.iterdir()) == [], "an unwritable folder got files"
    if case.problem == UNWRITABLE:
        assert "scoring" not in run.stderr, "refused only after the work was done"
