"""Prefault: a new array's pages populated on another thread while it is being filled."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from embdebias import _prefault
from embdebias._prefault import Prefault

linux = pytest.mark.skipif(sys.platform != "linux", reason="MADV_POPULATE_WRITE is Linux's")


def _kernel_populates() -> bool:
    import ctypes
    import mmap

    region = mmap.mmap(-1, 1 << 16)
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    ok = madvise(address, 1 << 16, _prefault.MADV_POPULATE_WRITE) == 0
    del address
    return ok


@linux
def test_the_values_written_while_it_populates_stay(monkeypatch):
    monkeypatch.setattr(_prefault, "MIN_BYTES", 0)
    monkeypatch.setattr(_prefault, "PIECE_BYTES", 1 << 16)
    out = np.empty((4096, 256), np.float32)  # 4 MB, 64 pieces
    job = Prefault(out)
    expected = np.arange(out.size, dtype=np.float32).reshape(out.shape)
    for lo in range(0, len(out), 64):        # filled from the front while the thread populates
        out[lo:lo + 64] = expected[lo:lo + 64]
    job.stop()
    np.testing.assert_array_equal(out, expected)


@linux
def test_it_makes_the_pages_resident_and_small_arrays_get_no_thread(monkeypatch):
    """The pages of a fresh anonymous map (none resident) are resident after it, none written."""
    import ctypes
    import mmap

    monkeypatch.setattr(_prefault, "MIN_BYTES", 1 << 20)
    assert Prefault(np.empty(1000, np.float32))._thread is None
    if not _kernel_populates():
        pytest.skip("this kernel has no MADV_POPULATE_WRITE (Linux 5.14+)")
    size = 16 << 20
    region = mmap.mmap(-1, size)
    big = np.frombuffer(region, np.uint8)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)
    status = ctypes.create_string_buffer(size // mmap.PAGESIZE)

    def resident() -> int:
        assert libc.mincore(big.ctypes.data, size, status) == 0
        return sum(b & 1 for b in status.raw)

    assert resident() == 0
    Prefault(big)._thread.join()
    assert resident() == size // mmap.PAGESIZE
    assert not big.any()                      # populated, not written


def test_stop_ends_it_and_is_idempotent(monkeypatch):
    monkeypatch.setattr(_prefault, "MIN_BYTES", 0)
    job = Prefault(np.empty(1 << 20, np.uint8))
    job.stop()
    job.stop()
    assert job._thread is None or not job._thread.is_alive()
