"""How a scoring run's activation buffers are served: fast by default, with the heap kept flat.

Every forward pass allocates and frees tens to hundreds of MB of activation buffers. glibc
serves allocations above ``M_MMAP_THRESHOLD`` with a fresh ``mmap`` and unmaps them when
freed, so each such buffer pays page faults on first touch; below it, freed buffers are
reused from the heap. Reusing them is fast, but it used to let the resident size creep up with
every batch, i.e. with the dataset. Issue 19 found why (``mallinfo2`` after every batch, and the
same batches replayed bare in a fresh process): the bytes in use stay flat while the heap's
*free* bytes grow, and what splits the free space is oneDNN's primitive cache. Torch's CPU
matmuls create one oneDNN primitive per new shape and keep up to 1,024 of them, each with
small allocations made in the middle of a forward pass, between activation buffers that are
freed a moment later; those pins cut the freed space into pieces too small for the next
batch's buffers, so the heap grows at every new batch shape. With the cache off
(:func:`limit_onednn_cache`, ``ONEDNN_PRIMITIVE_CACHE_CAPACITY=0``) nothing is pinned and
freed buffers are reused. Numbers do not depend on it (a primitive made again computes the
same thing: tiny-bert / tiny-roberta / tiny-gpt2 results bit-identical on 300 CrowS-Pairs pairs).

Policies (``RunSettings.allocator``, default ``$STEREOSET_EVAL_MALLOC_TUNING``, else ``fast``):

* ``fast`` (default): mmap and trim thresholds at 1 GiB, so buffers are reused from the heap
  instead of re-mapped, and ``malloc_trim(0)`` when a run ends gives the free heap pages back
  to the OS if more than ``FAST_KEEP_FREE`` (256 MiB) of them are free; a smaller free heap is
  kept for the process's next run, which would fault the same pages in again (trimming after
  every commit group made the next group fault its buffers in again). With the oneDNN cache off
  its peak follows the batch budget, not the dataset.
* ``bounded``: threshold fixed at 1 MiB, so every large buffer is mapped and unmapped per
  forward pass: the lowest peak, at the price of the page faults (the default until issue 19,
  when the oneDNN cache still fragmented a heap that reused buffers).
* ``off`` (or ``0``): glibc's own behaviour.

Measured on the 2-core CI machine (a nested VM, where page faults are dear), BERT-base-sized,
``stereoset-mlm``, budget 8,192 tokens, scoring peak above the loaded model (issue 19,
``speed/memory.py``'s measurement, one process each, quiet machine):

==============================  =====================  =====================  ======
policy, oneDNN primitive cache  1,920 sentences        3,840 sentences        growth
==============================  =====================  =====================  ======
fast, cache off (default)       24.6 s, +217 MB        49.3 s, +261 MB        44 MB
fast, cache on                  25.9 s, +517 MB        50.6 s, +723 MB        206 MB
bounded, cache off              27.9 s, +148 MB        61.7 s, +183 MB        35 MB
bounded, cache on               30.7 s, +149 MB        61.0 s, +191 MB        42 MB
==============================  =====================  =====================  ======

tiny-bert, ``crows-nangia``, all 1,508 CrowS-Pairs pairs (median of three runs, scoring peak):
fast with the cache off 2.50 s, +71 MB; fast with it on 2.80 s, +323 MB; bounded with it on
3.61 s, +127 MB. What growth is left under ``fast`` is the results themselves (bytes in use
263 -> 277 MB over the 3,840-sentence run) and a little fragmentation.

The glibc policy is applied once per process when scoring starts (glibc's thresholds are
process-wide, and its own adaptive threshold cannot be restored once set, so the first run of a
process decides); nothing happens outside glibc or when the user set ``MALLOC_MMAP_THRESHOLD_``
(glibc's own variable, which wins). The oneDNN cache is limited before a model loads (oneDNN
reads the variable when it makes its first primitive), whatever the policy, unless the user set
``ONEDNN_PRIMITIVE_CACHE_CAPACITY`` or ``DNNL_PRIMITIVE_CACHE_CAPACITY``. The provenance records
both (``run.allocator``, ``run.onednn_primitive_cache``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from typing import Any, get_args

from stereoset_eval.scoring.settings import ALLOCATOR_ENV, Allocator, allocator_from_environment

POLICIES: tuple[str, ...] = get_args(Allocator)
ENV = ALLOCATOR_ENV
ONEDNN_CACHE_ENV = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
ONEDNN_CACHE_ENVS = (ONEDNN_CACHE_ENV, "DNNL_PRIMITIVE_CACHE_CAPACITY")  # oneDNN reads either (ONEDNN_ first)
FAST_THRESHOLD = 1 << 30  # bytes: every activation buffer is reused from the heap
BOUNDED_THRESHOLD = 1 << 20  # bytes: buffers above it are returned to the OS when freed
FAST_KEEP_FREE = 256 << 20  # bytes: under fast, a run that ends with at most this much free heap keeps it
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameter numbers
_state: dict[str, Any] = {}


def requested_policy() -> str:
    """The policy ``STEREOSET_EVAL_MALLOC_TUNING`` asks for (``fast`` when unset); read in
    :func:`stereoset_eval.scoring.settings.allocator_from_environment`, the one place."""
    return allocator_from_environment()


def planned_policy(policy: str | None = None) -> str:
    """The policy :func:`tune_allocator` would apply: ``environment`` when the user set
    ``MALLOC_MMAP_THRESHOLD_`` (glibc's own variable wins), else ``policy`` or the requested one."""
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return "environment"
    policy = requested_policy() if policy is None else policy
    if policy not in POLICIES:
        raise ValueError(f"unknown allocator policy {policy!r}; known: {', '.join(POLICIES)}")
    return policy


def _libc() -> Any | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt.argtypes, libc.mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
        libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
        with contextlib.suppress(AttributeError):  # glibc 2.33+
            libc.mallinfo2.argtypes, libc.mallinfo2.restype = [], _MallInfo2
    except (OSError, AttributeError):  # not glibc (musl, …)
        return None
    return libc


def tune_allocator(policy: str | None = None) -> str:
    """Apply a policy once per process (``None``: the requested one); the policy in effect.

    One of ``bounded``, ``fast``, ``off`` (glibc's defaults), ``environment`` (the user set
    ``MALLOC_MMAP_THRESHOLD_``) or ``unavailable`` (not glibc). The first call decides: later
    calls return what it applied.
    """
    if "policy" in _state:
        return _state["policy"]
    policy = planned_policy(policy)
    libc = _libc()
    if libc is None and policy != "environment":
        policy = "unavailable"
    elif libc is None:  # policy "environment": nothing to apply
        pass
    elif policy == "fast":
        ok = libc.mallopt(_M_MMAP_THRESHOLD, FAST_THRESHOLD) == 1
        ok = ok and libc.mallopt(_M_TRIM_THRESHOLD, FAST_THRESHOLD) == 1
        policy = "fast" if ok else "off"
    elif policy == "bounded":
        policy = "bounded" if libc.mallopt(_M_MMAP_THRESHOLD, BOUNDED_THRESHOLD) == 1 else "off"
    _state.update(policy=policy, libc=libc)
    return policy


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (glibc 2.33+): the heap's totals, in bytes."""

    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                                     "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def free_heap_bytes() -> int | None:
    """The bytes glibc's heap holds free (``mallinfo2().fordblks``); None outside glibc 2.33+ or before tuning."""
    mallinfo2 = getattr(_state.get("libc"), "mallinfo2", None)
    return None if mallinfo2 is None else int(mallinfo2().fordblks)


def release_free_memory(keep_free: int = FAST_KEEP_FREE) -> bool:
    """Under ``fast``, when a run ends: give the heap's free pages back to the OS if it holds more
    than ``keep_free`` bytes free (always where glibc cannot say); whether it trimmed.

    A heap that holds less is kept for the next run of the process (a study's next method, a
    benchmark's next round): trimming it cost ~6 ms a run, and the next run's first forward passes
    faulted the same pages in again (tiny-bert ``stereoset-mlm`` ~20 ms a run in all, ~50 MB free).
    """
    if _state.get("policy") != "fast":
        return False
    free = free_heap_bytes()
    if free is not None and free <= keep_free:
        return False
    _state["libc"].malloc_trim(0)
    return True


def limit_onednn_cache() -> str:
    """Turn oneDNN's primitive cache off for this process unless the user sized it; the capacity in effect.

    Called before a model loads: oneDNN reads ``ONEDNN_PRIMITIVE_CACHE_CAPACITY`` once, when
    it makes its first primitive (a process that ran CPU matmuls before keeps the capacity it
    started with). Returns ``"0"``, or the user's value and variable (``"1024 (DNNL_PRIMITIVE_CACHE_CAPACITY)"``)
    for the provenance. Child processes inherit the variable.
    """
    for name in ONEDNN_CACHE_ENVS:
        value = os.environ.get(name)
        if value is not None:
            return "0" if (name, value.strip()) == (ONEDNN_CACHE_ENV, "0") else f"{value} ({name})"
    os.environ[ONEDNN_CACHE_ENV] = "0"
    return "0"
