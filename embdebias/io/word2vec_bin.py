"""The word2vec binary format (also gzip-compressed).

Layout: an ASCII header ``"n d\\n"``, then ``n`` records ``word<space>`` followed by
``d`` little-endian float32, optionally followed by ``"\\n"`` (the word2vec C tool writes
it, gensim does not).  Words cannot contain spaces.

Locating the records without a Python loop over the bytes: the file is scanned in
windows (64 MiB).  For every space in a window we compute, vectorized, where the
record would continue if that space ended a word: the vector occupies the next
``4d`` bytes, an optional newline follows, and the next word ends at the next space
after that.  This gives a "next record" pointer for every space, so the chain of real
records from the first word is a walk ``i = next[i]`` over a plain list of integers
(one list lookup per record, not a byte-level scan).  Words are then cut out and
decoded in one call and the vectors copied with one gather straight into the output.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._atomic import atomic_file
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding
from ..errors import VectorFileError
from ._common import (check_block_finite, check_limit, encode_words, gather_ranges, make_embedding, open_binary,
                      open_output, require_file)

WINDOW_BYTES = 64 << 20
_GATHER_BYTES = 8 << 20
_WHITESPACE = b" \t\r\n"


class _Source:
    """Forward-only windows of a (possibly gzip-decompressed) byte stream.

    One buffer is reused for every window (``readinto``): fresh 64 MiB allocations
    would page-fault anew each time.  Plain reads rather than a memory map, because
    mapped file pages count in the process's resident memory on top of the matrix.
    The array a call returns is only valid until the next call.
    """

    def __init__(self, path):
        self.fh = open_binary(path)
        self.buf = bytearray()
        self.base = self.filled = 0
        self.eof = False

    def window(self, pos: int, size: int):
        """The bytes from ``pos`` on (at least ``size`` of them unless the stream ends), and eof."""
        shift = pos - self.base
        keep = self.filled - shift
        if len(self.buf) < size:
            grown = bytearray(size)
            grown[:keep] = self.buf[shift:self.filled]
            self.buf = grown
        elif keep:
            self.buf[:keep] = self.buf[shift:self.filled]
        self.base, self.filled = pos, keep
        view = memoryview(self.buf)
        while self.filled < size and not self.eof:
            got = self.fh.readinto(view[self.filled:size])
            if got:
                self.filled += got
            else:
                self.eof = True
        view.release()
        return np.frombuffer(self.buf, dtype=np.uint8, count=self.filled), self.eof

    def close(self):
        self.fh.close()


def _read_header(src, path) -> tuple[int, int, int]:
    head, _ = src.window(0, 256)
    head = bytes(head)
    if not head.strip():
        raise VectorFileError(path, "empty file: expected a header line 'count dim'", offset=0)
    nl = head.find(b"\n")
    fields = head[:nl].split() if nl >= 0 else []
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        raise VectorFileError(path, f"expected a header line 'count dim' (two integers), found "
                                    f"{head[:max(nl, 0) or 40]!r}", offset=0)
    n, d = int(fields[0]), int(fields[1])
    if d < 1:
        raise VectorFileError(path, f"header gives dimension {d}, expected at least 1", offset=0)
    return n, d, nl + 1


def _decode_words(a: np.ndarray, starts: np.ndarray, ends: np.ndarray, base: int, path) -> list[str]:
    lengths = ends - starts
    if np.any(lengths <= 0):
        k = int(np.flatnonzero(lengths <= 0)[0])
        raise VectorFileError(path, "empty word: expected a word before the space that starts a vector",
                              offset=base + int(starts[k]))
    # Each word with the space that ends it, the spaces turned into newlines: one decode.
    joined = gather_ranges(a, starts, lengths + 1)
    out_starts = np.cumsum(lengths + 1) - (lengths + 1)
    joined[out_starts + lengths] = 10
    try:
        words = bytes(joined[:-1]).decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        k = int(np.searchsorted(out_starts, exc.start, side="right")) - 1
        raw = bytes(a[starts[k]:ends[k]])
        raise VectorFileError(path, f"undecodable UTF-8 in the word {raw[:40]!r} ({exc.reason}); "
                                    f"expected UTF-8 text", offset=base + int(starts[k])) from None
    if len(words) != len(lengths):
        inside = np.setdiff1d(np.flatnonzero(joined == 10), out_starts + lengths)[0]
        k = int(np.searchsorted(out_starts, inside, side="right")) - 1
        raise VectorFileError(path, "a word contains a newline", offset=base + int(starts[k]))
    return words


def read_word2vec_bin(path, *, limit: int | None = None, name: str | None = None,
                      window_bytes: int = WINDOW_BYTES) -> Embedding:
    """Read a word2vec binary file (gzip-compressed or not) into a float32 array.

    Raises :class:`~embdebias.errors.VectorFileError` with the byte offset (in the
    uncompressed stream) for a bad header, a truncated record, fewer or more records
    than the header says, NaN/infinite values and undecodable words.
    """
    path = require_file(path)
    limit = check_limit(limit)
    src = _Source(path)
    try:
        n, d, pos = _read_header(src, path)
        nbytes = 4 * d
        want = n if limit is None else min(n, limit)
        out = np.empty((want, d), dtype=np.float32)
        words: list[str] = []
        rows = 0
        size = max(window_bytes, 16 * (nbytes + 256))
        # Buffers reused across windows: fresh 64 MiB temporaries would page-fault every time.
        is_space = np.empty(0, dtype=bool)
        while rows < want:
            a, eof = src.window(pos, size)
            length = len(a)
            s0 = 1 if length and a[0] == 10 else 0  # the optional newline ending the previous record
            if len(is_space) < length:
                is_space = np.empty(length, dtype=bool)
            spaces = np.flatnonzero(np.equal(a, 32, out=is_space[:length]))
            first = int(np.searchsorted(spaces, s0))
            vec_end = spaces + 1 + nbytes
            complete = (vec_end < length) | ((vec_end == length) & eof)
            if first == len(spaces) or not complete[first]:
                if not eof:
                    size *= 2  # a record longer than the window
                    continue
                rest = bytes(a[s0:])
                if not rest.strip(_WHITESPACE):
                    raise VectorFileError(path, f"the header says {n} words but the file ends after {rows}",
                                          offset=pos + length)
                word_end = int(spaces[first]) if first < len(spaces) else length
                raise VectorFileError(
                    path, f"truncated record: expected a word, a space and {nbytes} bytes of vector, "
                          f"found {length - word_end - 1 if first < len(spaces) else 0} byte(s) of vector "
                          f"after {rest[:min(word_end - s0, 40)]!r}", offset=pos + s0)
            inner = vec_end < length
            next_start = vec_end.copy()
            next_start[inner] += a[vec_end[inner]] == 10
            nxt = np.searchsorted(spaces, next_start)
            code = np.where(nxt < len(spaces), nxt, -1)
            code[~complete] = -2
            codes = code.tolist()
            need = want - rows
            chain = []
            i = first
            while True:  # one list lookup per record
                chain.append(i)
                c = codes[i]
                if c < 0 or len(chain) >= need or codes[c] == -2:
                    break
                i = c
            ch = np.asarray(chain, dtype=np.int64)
            ends = spaces[ch]
            starts = np.empty(len(ch), dtype=np.int64)
            starts[0] = s0
            starts[1:] = next_start[ch[:-1]]
            block_words = _decode_words(a, starts, ends, pos, path)
            k = len(ch)
            block = out[rows:rows + k]
            # Each vector as one opaque nbytes-wide item starting at any byte: gathering
            # items copies whole records (memcpy-sized), not byte by byte; in slices whose
            # temporaries stay small enough for malloc to reuse them.
            records = np.ndarray(shape=(length - nbytes + 1,), dtype=np.dtype((np.void, nbytes)),
                                 buffer=a, strides=(1,))
            target = block.view(records.dtype).reshape(k)
            step = max(1, _GATHER_BYTES // nbytes)
            for lo in range(0, k, step):
                target[lo:lo + step] = records[ends[lo:lo + step] + 1]
            finite = np.isfinite(block).all(axis=1)
            if not finite.all():
                k = int(np.flatnonzero(~finite)[0])
                raise VectorFileError(path, f"the vector of {block_words[k]!r} has NaN or infinite values; "
                                            f"expected finite numbers", offset=pos + int(ends[k]) + 1)
            words.extend(block_words)
            rows += k
            last = chain[-1]
            after = int(next_start[last]) if inner[last] else length
            if rows == want:
                if limit is None or limit > n:  # then anything but whitespace after record n is an error
                    tail, _ = src.window(pos + after, 64)
                    if bytes(tail[:4096]).strip(_WHITESPACE):
                        raise VectorFileError(path, f"the header says {n} words but there are more records",
                                              offset=pos + after)
                break
            if eof and codes[last] == -1:
                rest = bytes(a[after:])
                if rest.strip(_WHITESPACE):
                    raise VectorFileError(path, f"truncated record: expected a word, a space and {nbytes} "
                                                f"bytes of vector, found {rest[:40]!r} and the end of the file",
                                          offset=pos + after)
                raise VectorFileError(path, f"the header says {n} words but the file ends after {rows}",
                                      offset=pos + length)
            pos += after
    finally:
        src.close()
    return make_embedding(words, out, path, name)


def write_word2vec_bin(emb: Embedding, path, *, chunk_rows: int = DEFAULT_CHUNK_ROWS, inputs=()) -> None:
    """Write ``emb`` in word2vec binary format (gzip when ``path`` ends in ``.gz``).

    Each record ends with a newline, as the word2vec C tool writes it; records are
    assembled per chunk with vectorized scatters (no loop over the words).
    """
    target = Path(path)
    words = emb.words.tolist()
    joined, starts = encode_words(words, target, allow_space=False, format_name="word2vec-bin")
    nbytes = 4 * emb.dim
    inputs = (*inputs, emb.path) if emb.path else inputs
    with atomic_file(target, inputs=inputs) as tmp, open_output(tmp, target) as fh:
        fh.write(f"{len(emb)} {emb.dim}\n".encode("ascii"))
        for start, stop, block in emb.iter_chunks(chunk_rows):
            check_block_finite(block, start, words, target)
            wlen = np.diff(starts[start:stop + 1]) - 1
            rec = wlen + 2 + nbytes
            rec_start = np.cumsum(rec) - rec
            buf = np.empty(int(rec.sum()), dtype=np.uint8)
            word_bytes = gather_ranges(joined, starts[start:stop], wlen)
            buf[np.arange(len(word_bytes), dtype=np.int64)
                + np.repeat(rec_start - (np.cumsum(wlen) - wlen), wlen)] = word_bytes
            buf[rec_start + wlen] = 32
            buf[rec_start + wlen + 1 + nbytes] = 10
            # A writable (len - nbytes + 1, nbytes) window view: row r is buf[r:r + nbytes].
            windows = as_strided(buf, shape=(len(buf) - nbytes + 1, nbytes), strides=(1, 1), writeable=True)
            windows[rec_start + wlen + 1] = np.ascontiguousarray(block, dtype="<f4").view(np.uint8)
            fh.write(buf)
