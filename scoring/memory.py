"""Keep a scoring run's host memory bounded by the batch budget, not by the dataset size.

glibc serves allocations above ``M_MMAP_THRESHOLD`` (128 KiB at start) with ``mmap`` and
gives them back to the OS when freed, but after the first such free it raises the threshold
(up to 32 MiB), so the activation buffers of later forward passes come from the heap, are
freed into it and fragment it: the resident size then creeps up with every batch, i.e. with
the dataset. Measured on CPU with a BERT-base-sized model (``stereoset-mlm``, budget 1,024
tokens), the scoring peak above the loaded model (940 MB) was +30 MB for 120 sentences,
+121 MB for 960 and +240 MB for 1,920. With the threshold fixed at 1 MiB (``mallopt``, which
also stops the adjustment): +26 MB for 120, +58 MB for 480, +65 MB for 1,440 — the rest is
per-shape kernel caches. Large buffers are then mapped and unmapped per forward pass, a cost
far below that of the forward pass itself.

Applied once per process when scoring starts; a no-op outside glibc, or when the user set
``MALLOC_MMAP_THRESHOLD_`` (glibc's own variable) or ``STEREOSET_EVAL_MALLOC_TUNING=0``.
Numbers never depend on it.
"""

from __future__ import annotations

import ctypes
import os
import sys

MMAP_THRESHOLD = 1 << 20  # bytes; buffers above it are returned to the OS when freed
_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
_state: dict[str, bool] = {}


def bound_allocator() -> bool:
    """Fix glibc's mmap threshold (see the module docstring); True if it is in effect."""
    if "applied" in _state:
        return _state["applied"]
    applied = False
    wanted = os.environ.get("STEREOSET_EVAL_MALLOC_TUNING", "1") != "0"
    if wanted and sys.platform.startswith("linux") and "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        try:
            mallopt = ctypes.CDLL("libc.so.6").mallopt
        except (OSError, AttributeError):  # not glibc (musl, …)
            mallopt = None
        if mallopt is not None:
            mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
            applied = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    _state["applied"] = applied
    return applied
