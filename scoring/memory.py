"""How glibc's allocator serves a scoring run's activation buffers: bounded by default, or fast.

Every forward pass allocates and frees tens to hundreds of MB of activation buffers. glibc
serves allocations above ``M_MMAP_THRESHOLD`` with a fresh ``mmap`` and unmaps them when
freed, so each such buffer pays page faults on first touch; below it, freed buffers are
reused from the heap. glibc starts the threshold at 128 KiB and raises it (up to 32 MiB) as
buffers are freed; the activation buffers of later forward passes then come from the heap,
are freed into it and fragment it, and the resident size creeps up with every batch, i.e.
with the dataset. Policies (``RunSettings.allocator``, default ``$STEREOSET_EVAL_MALLOC_TUNING``):

* ``bounded`` (default): threshold fixed at 1 MiB, so every large buffer is mapped and
  unmapped per forward pass: the peak follows the batch budget, not the dataset, at the price
  of the page faults. (Issue 19 tried 8 MiB, so that small models' few-MiB activations are
  reused from the heap: BERT-base-sized scoring peak +332 / +432 MB at 1,920 / 3,840 sentences,
  growth 100 MB, against +147 / +199 MB, growth 52 MB, at 1 MiB: reverted.)
* ``fast``: threshold and trim threshold at 1 GiB, so buffers are reused from the heap
  instead of re-mapped, and ``malloc_trim(0)`` when a run ends gives the free heap pages back
  to the OS (until issue 19 it trimmed after every commit group, which made the next group
  fault its buffers in again: a fixture model's run then cost as much as under ``bounded``);
  the peak grows with the dataset.
* ``off`` (or ``0``): glibc's own behaviour.

Measured on the 2-core CI machine (a nested VM, where page faults are dear), BERT-base-sized,
``stereoset-mlm``, budget 8,192 tokens, scoring peak above the loaded model (~905 MB):

=================  =====================  =====================
policy             1,920 sentences        3,840 sentences
=================  =====================  =====================
fast               27.1 s, +372 MB        56.0 s, +530 MB
bounded            40.4 s, +148 MB        67.0 s, +198 MB
off (glibc)        26.7 s, +417 MB        56.6 s, +572 MB
=================  =====================  =====================

Issue 19 (same machine, shared with other jobs, ``speed/memory.py``): ``bounded`` +147 MB at
1,920 and +199 MB at 3,840 sentences (growth 52 MB, peak RSS 1,113 MiB); ``fast`` with one trim
per run +500 MB and +769 MB (growth 269 MB): ``bounded`` stays the default.

And ``pll`` on 4 CrowS-Pairs pairs 4.7 s (fast) vs 5.5 s (bounded). ``bounded`` costs 15-50 %
of the time on that machine for a peak that grows least with the dataset (the rest of its
growth is per-shape kernel caches); ``fast`` keeps glibc's speed with a little less memory.
Applied once per process when scoring starts (glibc's thresholds are process-wide, and its own
adaptive threshold cannot be restored once set, so the first run of a process decides); nothing happens outside glibc or when the user
set ``MALLOC_MMAP_THRESHOLD_`` (glibc's own variable, which wins).
Numbers never depend on it; the provenance records the policy in effect (``run.allocator``).
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any, get_args

from stereoset_eval.scoring.settings import ALLOCATOR_ENV, Allocator, allocator_from_environment

POLICIES: tuple[str, ...] = get_args(Allocator)
ENV = ALLOCATOR_ENV
FAST_THRESHOLD = 1 << 30  # bytes: every activation buffer is reused from the heap
BOUNDED_THRESHOLD = 1 << 20  # bytes: buffers above it are returned to the OS when freed
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameter numbers
_state: dict[str, Any] = {}


def requested_policy() -> str:
    """The policy ``STEREOSET_EVAL_MALLOC_TUNING`` asks for (``bounded`` when unset); read in
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


def release_free_memory() -> None:
    """Under ``fast``: give the heap's free pages back to the OS (called once, when a run ends)."""
    if _state.get("policy") == "fast":
        _state["libc"].malloc_trim(0)
