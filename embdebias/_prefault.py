"""Fault in the pages of a large new array on a thread of its own, ahead of the code that fills it."""

from __future__ import annotations

import sys
import threading

import numpy as np

#: ``madvise`` advice: populate the pages writable, as a write would, without writing (Linux 5.14+).
MADV_POPULATE_WRITE = 23
#: Arrays smaller than this are left alone (a thread is not worth it).
MIN_BYTES = 256 << 20
#: Bytes populated per call, so that :meth:`Prefault.stop` takes effect soon.
PIECE_BYTES = 64 << 20
_PAGE = 4096


class Prefault:
    """Populate ``array``'s pages on a background thread, front to back; :meth:`stop` ends it.

    Why: a new array's pages are given to the process one at a time, by a fault on the first
    write to each. Copying 3,000,000 word2vec records into a fresh 3.6 GB array (880,000 pages
    of 4 kB) took 6.2 s, and 1.3 s into one already touched (measured alone, on a 2-core
    virtual machine). Asked to populate them ahead (``madvise(MADV_POPULATE_WRITE)``), the
    kernel does that work on this thread, on the other core, while the reader copies: loading
    that file took 6.9 and 7.0 s against 9.3 and 9.7 s without it, alternately (one run of
    9.7 s with it).

    Safe while the array is being filled: populating never changes a page already present
    (the values written stay), and a page not yet present is a zero page either way. The
    thread holds a reference to the array until it ends, so the memory cannot be freed under
    it. Elsewhere than Linux, on a kernel without the advice (before 5.14: ``EINVAL``), or for
    an array under :data:`MIN_BYTES`, it does nothing and the pages are faulted as before.
    """

    def __init__(self, array: np.ndarray):
        self._stop = threading.Event()
        self._thread = None
        if sys.platform != "linux" or array.nbytes < MIN_BYTES or not array.flags.c_contiguous:
            return
        self._thread = threading.Thread(target=self._populate, args=(array,), name="embdebias-prefault",
                                        daemon=True)
        self._thread.start()

    def _populate(self, array: np.ndarray) -> None:
        import ctypes

        madvise = ctypes.CDLL(None, use_errno=True).madvise
        madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        start = -(-array.ctypes.data // _PAGE) * _PAGE           # whole pages inside the array
        end = (array.ctypes.data + array.nbytes) // _PAGE * _PAGE
        for lo in range(start, end, PIECE_BYTES):
            if self._stop.is_set() or madvise(lo, min(PIECE_BYTES, end - lo), MADV_POPULATE_WRITE) != 0:
                return  # stopped, or the advice is unknown here: the writes fault the pages as before

    def stop(self) -> None:
        """End the population at the next piece and wait for the thread (nothing once it is done)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
