"""The command line's error boundary: every fault becomes one ``error:`` line and exit status 2.

Errors the toolkit raises on purpose (:class:`StereosetEvalError`) already name the file, row
and problem. Faults from below — the operating system (a directory given as a file, a
read-only or full disk, a closed pipe, a symlink loop), SQLite, safetensors, the tokenizers
library, Label Studio's SDK — are translated here into the same one-line form, naming the
file or model and saying what to do. ``--debug`` prints the traceback as well. Every line is
scrubbed of secrets (:mod:`stereoset_eval.foundation.secrets`) before it is printed.
"""

from __future__ import annotations

import os
import sqlite3

from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.oserrors import os_error_message as _os_message
from stereoset_eval.foundation.secrets import scrub, shorten

EXIT_ERROR = 2

def _is(exc: BaseException, module: str, name: str) -> bool:
    return any(c.__name__ == name and c.__module__.split(".")[0] == module for c in type(exc).__mro__)


def describe(exc: BaseException) -> str:
    """The one line the user sees for ``exc`` (without the ``error:`` prefix)."""
    if isinstance(exc, StereosetEvalError):
        text = str(exc)
    elif isinstance(exc, BrokenPipeError):
        text = "the output pipe was closed before everything was written (e.g. `| head`)"
    elif isinstance(exc, OSError):
        text = _os_message(exc)
    elif isinstance(exc, sqlite3.Error):
        text = (f"a score cache database cannot be used ({exc}): it may be corrupt or truncated; delete the "
                "cache file (scores.sqlite3) or pass --cache-dir to use another folder")
    elif _is(exc, "safetensors", "SafetensorError") or _is(exc, "safetensors_rust", "SafetensorError"):
        text = (f"a safetensors weights file cannot be read ({exc}): it is damaged or truncated; download or "
                "save the model again")
    elif isinstance(exc, MemoryError):
        text = "out of memory: lower --batch-tokens, --bootstrap or the input size"
    elif _is(exc, "label_studio_sdk", "ApiError") or _is(exc, "httpx", "HTTPError"):
        text = f"Label Studio request failed: {type(exc).__name__}: {exc}"
    elif type(exc).__module__.split(".")[0] == "tokenizers" or "tokenizer" in str(exc).lower()[:200]:
        text = f"the tokenizer failed: {exc}: check the model's tokenizer files"
    else:
        text = (f"unexpected {type(exc).__name__}: {exc} (a bug in stereoset-eval: rerun with --debug and "
                "report the traceback)")
    return shorten(" ".join(scrub(text).split()), 2000)


def quiet_stdout() -> None:
    """After a closed pipe, point stdout at /dev/null so Python's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass
