"""A batch's host arrays reach the device through one buffer (``scorers.one_transfer``, issue 35).

On CUDA the buffer is pinned and copied without blocking (``tests/test_gpu.py`` checks that path
and every golden runs through it there); here the same packing and views are checked on the CPU.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from stereoset_eval.scoring.scorers import one_transfer  # noqa: E402


def _arrays() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 30_000, size=(5, 9), dtype=np.int64)
    return [ids, (ids > 100).astype(np.int64), rng.integers(0, 9, size=7, dtype=np.int64),
            np.zeros(0, dtype=np.int64), np.zeros((3, 0), dtype=np.int64),
            ids[:, ::2],  # not contiguous
            ids.T]  # not C-ordered


def test_every_array_comes_back_equal_in_its_shape_as_views_of_one_buffer() -> None:
    arrays = _arrays()
    out = one_transfer(torch, arrays, torch.device("cpu"), pin=False)
    assert len(out) == len(arrays)
    for a, t in zip(arrays, out):
        assert t.dtype == torch.int64 and tuple(t.shape) == a.shape
        assert np.array_equal(t.numpy(), a)
    storages = {t.untyped_storage().data_ptr() for t in out}
    assert len(storages) == 1  # one buffer, one copy on a device


def test_the_copies_do_not_alias_the_host_arrays() -> None:
    arrays = _arrays()
    out = one_transfer(torch, arrays, torch.device("cpu"), pin=False)
    arrays[0][:] = -7
    assert not bool((out[0] == -7).any())


def test_arrays_of_another_dtype_go_one_by_one_unchanged() -> None:
    arrays = [np.arange(6, dtype=np.int64).reshape(2, 3), np.arange(4, dtype=np.int32)]
    out = one_transfer(torch, arrays, torch.device("cpu"), pin=False)
    assert [t.dtype for t in out] == [torch.int64, torch.int32]
    assert all(np.array_equal(t.numpy(), a) for a, t in zip(arrays, out))
