"""map_chunks into a native directory: the chunks are written by a thread of their own."""

from __future__ import annotations

import errno

import numpy as np
import pytest

from embdebias import io
from embdebias.debias._base import map_chunks
from embdebias.embedding import Embedding
from embdebias.io.native import NativeWriter


def _scaled(rows, block, out):
    # each row times its own row number: a chunk written to the wrong place shows
    np.multiply(block, np.arange(rows.start, rows.stop, dtype=np.float32)[:, None], out=out)


@pytest.mark.parametrize("n,chunk_rows", [(1, 4), (4, 4), (50, 7), (64, 8)])
def test_chunks_written_on_their_thread_equal_the_map_in_memory(tmp_path, n, chunk_rows):
    rng = np.random.default_rng(n)
    emb = Embedding([f"w{i}" for i in range(n)], rng.standard_normal((n, 3)).astype(np.float32))
    written = map_chunks(emb, _scaled, out=tmp_path / "out.embd", chunk_rows=chunk_rows)
    in_memory = map_chunks(emb, _scaled, chunk_rows=chunk_rows)
    np.testing.assert_array_equal(np.asarray(written.vectors), in_memory.vectors)
    assert list(io.load(tmp_path / "out.embd").words) == list(emb.words)


def test_a_failed_write_is_raised_and_leaves_no_output(tmp_path, monkeypatch):
    emb = Embedding([f"w{i}" for i in range(40)], np.ones((40, 2), np.float32))
    real, calls = NativeWriter.append, []

    def append(self, block):
        calls.append(len(block))
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self, block)

    monkeypatch.setattr(NativeWriter, "append", append)
    with pytest.raises(OSError, match="No space left"):
        map_chunks(emb, _scaled, out=tmp_path / "out.embd", chunk_rows=8)
    assert not (tmp_path / "out.embd").exists() and not list(tmp_path.iterdir())  # no temporary left
    assert calls[:2] == [8, 8] and len(calls) <= 5


def test_a_failing_map_stops_the_pass_and_leaves_no_output(tmp_path):
    emb = Embedding([f"w{i}" for i in range(40)], np.ones((40, 2), np.float32))

    def fails_at_row_16(rows, block, out):
        if rows.start == 16:
            raise ValueError("the map failed")
        out[:] = block

    with pytest.raises(ValueError, match="the map failed"):
        map_chunks(emb, fails_at_row_16, out=tmp_path / "out.embd", chunk_rows=8)
    assert not (tmp_path / "out.embd").exists() and not list(tmp_path.iterdir())  # no temporary left


# -- ``also``: a computation sharing the pass, on a thread of its own ------------------------------


@pytest.mark.parametrize("native", [False, True])
def test_also_sees_every_block_in_order_on_its_own_thread(tmp_path, native):
    import threading

    emb = Embedding([f"w{i}" for i in range(50)], np.arange(100, dtype=np.float32).reshape(50, 2))
    seen, threads = [], set()

    def also(start, block):
        seen.append((start, block.copy()))
        threads.add(threading.get_ident())

    out = map_chunks(emb, _scaled, out=tmp_path / "out.embd" if native else None, chunk_rows=7, also=also)
    assert [s for s, _ in seen] == list(range(0, 50, 7))
    np.testing.assert_array_equal(np.concatenate([b for _, b in seen]), emb.vectors)
    assert threads and threading.get_ident() not in threads
    np.testing.assert_array_equal(np.asarray(out.vectors), map_chunks(emb, _scaled, chunk_rows=7).vectors)


@pytest.mark.parametrize("native", [False, True])
def test_a_failing_also_is_raised_and_leaves_no_output(tmp_path, native):
    emb = Embedding([f"w{i}" for i in range(40)], np.ones((40, 2), np.float32))

    def fails_at_row_16(start, block):
        if start == 16:
            raise ValueError("the companion failed")

    with pytest.raises(ValueError, match="the companion failed"):
        map_chunks(emb, _scaled, out=tmp_path / "out.embd" if native else None, chunk_rows=8, also=fails_at_row_16)
    assert not list(tmp_path.iterdir())  # no output, no temporary


def test_the_pass_with_also_holds_blas_to_one_thread_and_restores_it():
    from threadpoolctl import threadpool_info

    def blas_threads():
        return sorted(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")

    before, during = blas_threads(), []
    emb = Embedding([f"w{i}" for i in range(20)], np.ones((20, 2), np.float32))
    map_chunks(emb, _scaled, chunk_rows=8, also=lambda start, block: during.append(blas_threads()))
    assert during and all(all(n == 1 for n in d) for d in during)
    assert blas_threads() == before
