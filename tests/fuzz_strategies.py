"""Hypothesis strategies and the one property every reader is fuzzed against (issue 33).

The property: a generated input either loads, with items equal to a reference reading of the
same bytes (Python's ``csv`` / ``json`` / ``tomllib`` modules, or the values the input was built
from), or ends in one :class:`~stereoset_eval.foundation.errors.StereosetEvalError` whose
``error:`` line (:func:`stereoset_eval.cli.faults.describe`) is one line naming the file. Any
other exception is a traceback the user would see: a bug. A hang is caught by the deadline, and
the sizes are bounded by the strategies (the 10,000-character field cap is drawn on purpose).

Profiles: ``suite`` (the default: few examples, derandomized so every ``make test`` sees the same
inputs and the fuzzers together stay well under 45 s) and ``fuzz`` (``HYPOTHESIS_PROFILE=fuzz``, what ``make fuzz`` runs: many
examples, an example database under ``.cache/hypothesis`` so a failure found once is replayed
first). Cases a fuzzer found and that were fixed are kept as ``@example`` regressions beside it.
"""

from __future__ import annotations

import os
import string
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from stereoset_eval.cli.faults import describe
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.limits import MAX_FIELD_CHARS

T = TypeVar("T")

settings.register_profile("suite", max_examples=int(os.environ.get("FUZZ_EXAMPLES", "15")), deadline=None,
                          database=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("fuzz", max_examples=int(os.environ.get("FUZZ_EXAMPLES", "1500")), deadline=None,
                          database=DirectoryBasedExampleDatabase(".cache/hypothesis"), print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

#: a reader that takes longer than this on an input of these sizes hangs
HANG_S = 20.0

SENTENCES = ("He couldn't figure out the issue with the rope.", "The poor are really ignorant about money.",
             "Women don't know how to drive.", "She is a nurse, and he is a doctor.", "The BLANK man was tall.")
SPECIAL = ("", " ", "\t", "\n", "\r\n", '"', '""', ",", ";", "\\", "null", "None", "NaN", "nan", "inf", "-0",
           "=HYPERLINK(\"http://x\",\"y\")", "+1", "-cmd", "@SUM(A1)", "'=1", "\x00", "\ufeff", "\u200b",
           "BLANK", "BLANKed", "ü", "名字", "🙂", "stereo", "antistereo", "gender", "Race-color")

#: text a user's file may hold: ordinary sentences, the awkward characters, any Unicode, the size cap
texts = st.one_of(
    st.sampled_from(SENTENCES),
    st.sampled_from(SPECIAL),
    st.text(st.characters(codec="utf-8"), max_size=24),
    st.text(st.sampled_from(string.printable), max_size=24),
    st.builds(lambda s, extra: s + "x" * extra, st.sampled_from(SENTENCES),
              st.sampled_from((MAX_FIELD_CHARS - 40, MAX_FIELD_CHARS + 1))),
)
#: text a valid file holds: one printable line, not blank, no quote or separator trouble
clean_texts = st.one_of(
    st.sampled_from(SENTENCES),
    st.text(st.sampled_from(string.ascii_letters + string.digits + " .'!?-"), min_size=1, max_size=30)
    .filter(lambda s: s.strip() and s == s.strip() and s[0] not in "=+-@'"),
)

#: any JSON value, nested a little, with the numbers that break float conversion
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**400), 10**400), st.floats(allow_nan=True),
                         texts)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(texts, inner, max_size=3), max_leaves=8)


def mutate(raw: bytes, ops: list[tuple[int, int, bytes]]) -> bytes:
    """``raw`` with each ``(kind, position, bytes)`` applied: 0 flips a byte, 1 deletes a run, 2 inserts,
    3 truncates (what a bad download, a wrong editor or a killed writer leaves)."""
    out = bytearray(raw)
    for kind, pos, blob in ops:
        if not out:
            out.extend(blob)
            continue
        at = pos % len(out)
        if kind == 0:
            out[at] ^= (blob[0] if blob else 0x80) or 0x80
        elif kind == 1:
            del out[at: at + 1 + len(blob)]
        elif kind == 2:
            out[at:at] = blob
        else:
            del out[at:]
    return bytes(out)


mutations = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1 << 20), st.binary(max_size=6)), max_size=4)
encodings = st.sampled_from(("utf-8", "utf-8-sig", "latin-1", "utf-16", "cp1252"))


@contextmanager
def input_file(name: str, data: bytes) -> Iterator[Path]:
    """``data`` written as ``name`` in a fresh folder (one per example: hypothesis reruns examples)."""
    with tempfile.TemporaryDirectory(prefix="fuzz-") as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        yield path


def load_or_error(read: Callable[[Path], T], path: Path) -> T | None:
    """``read(path)``; None after an error that is one ``error:`` line naming the file. Anything else
    (another exception, a second line) fails the property, and so does a read slower than :data:`HANG_S`."""
    import time

    started = time.monotonic()
    try:
        return read(path)
    except StereosetEvalError as exc:
        line = describe(exc)
        assert line and "\n" not in line, f"the error is not one line: {line!r}"
        assert str(path) in line or path.name in line, f"the error does not name the file: {line!r}"
        return None
    finally:
        assert time.monotonic() - started < HANG_S, f"{path.name}: the reader took over {HANG_S} s"


def encode(text: str, encoding: str) -> bytes:
    """``text`` in ``encoding``; characters it cannot hold become ``?`` (a real file of that encoding)."""
    return text.encode(encoding, errors="replace")


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
