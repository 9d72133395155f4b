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
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._atomic import atomic_file
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding
from ..errors import VectorFileError
from ._common import (binary_records_ok, check_block_finite, check_limit, check_unicode_errors, encode_words,
                      gather_ranges, make_embedding, open_binary, open_output, require_file, text_records_ok)

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


def _refuse_text_records(src, pos: int, n: int, d: int, path) -> None:
    """Text lines 'word v1 ... vd' that are not also binary records: a text file read as binary."""
    head, eof = src.window(pos, 1 << 16)
    head = bytes(head)
    if text_records_ok(head, d, eof) and not binary_records_ok(head, n, d, eof):
        shown = head.split(b"\n", 1)[0][:60].decode("utf-8", "replace")
        raise VectorFileError(path, f"found the text line {shown!r} where a binary record should start; "
                                    f"expected a word, a space and {4 * d} bytes of float32 (this looks like "
                                    f"word2vec text or fastText .vec)", offset=pos)


def _decode_words(a: np.ndarray, starts: np.ndarray, ends: np.ndarray, base: int, path,
                  unicode_errors: str = "strict") -> list[str]:
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
        words = bytes(joined[:-1]).decode("utf-8", unicode_errors).split("\n")
    except UnicodeDecodeError as exc:
        k = int(np.searchsorted(out_starts, exc.start, side="right")) - 1
        raw = bytes(a[starts[k]:ends[k]])
        at = exc.start - int(out_starts[k])
        raise VectorFileError(path, f"undecodable UTF-8 in the word {raw[:40]!r} (byte {at}: {exc.reason}); "
                                    f"expected UTF-8 text (unicode_errors='ignore' or 'replace' accept it)",
                              offset=base + int(starts[k]) + at) from None
    if len(words) != len(lengths):
        inside = np.setdiff1d(np.flatnonzero(joined == 10), out_starts + lengths)[0]
        k = int(np.searchsorted(out_starts, inside, side="right")) - 1
        raise VectorFileError(path, "a word contains a newline", offset=base + int(starts[k]))
    if unicode_errors == "ignore" and "" in words:
        k = words.index("")
        raise VectorFileError(path, f"the word {bytes(a[starts[k]:ends[k]])[:40]!r} is empty once its "
                                    f"undecodable bytes are dropped (unicode_errors='ignore')",
                              offset=base + int(starts[k]))
    return words


class _Window(NamedTuple):
    """Where the records of one window may start and end (all arrays index ``spaces``)."""
    spaces: np.ndarray      # positions of the spaces in the window
    next_start: np.ndarray  # where the next record would start if that space ended a word
    inner: np.ndarray       # the vector after that space ends inside the window
    codes: list             # index of the space ending the next word, -1 none in the window, -2 incomplete


class _BinaryReader:
    """One read of a word2vec binary file: the header, the position, and the rows so far."""

    def __init__(self, path, *, limit, window_bytes: int, unicode_errors: str):
        self.path, self.limit, self.unicode_errors = path, limit, unicode_errors
        self.window_bytes = window_bytes
        self.words: list[str] = []
        self.rows = 0
        # Reused across windows: fresh 64 MiB temporaries would page-fault every time.
        self.is_space = np.empty(0, dtype=bool)

    def _start(self) -> None:
        self.n, self.d, self.pos = _read_header(self.src, self.path)
        self.nbytes = 4 * self.d
        self.want = self.n if self.limit is None else min(self.n, self.limit)
        self.out = np.empty((self.want, self.d), dtype=np.float32)
        self.size = max(self.window_bytes, 16 * (self.nbytes + 256))

    def read(self, name) -> Embedding:
        self.src = _Source(self.path)
        try:
            self._start()
            if self.want:
                _refuse_text_records(self.src, self.pos, self.n, self.d, self.path)
            while self.rows < self.want and self._next_window():
                pass
        finally:
            self.src.close()
        return make_embedding(self.words, self.out, self.path, name)

    def _scan(self, a: np.ndarray, eof: bool, s0: int) -> tuple[int, _Window] | None:
        """The first record's space and the window's record pointers; None: the window is too small."""
        length = len(a)
        if len(self.is_space) < length:
            self.is_space = np.empty(length, dtype=bool)
        spaces = np.flatnonzero(np.equal(a, 32, out=self.is_space[:length]))
        first = int(np.searchsorted(spaces, s0))
        vec_end = spaces + 1 + self.nbytes
        complete = (vec_end < length) | ((vec_end == length) & eof)
        if first == len(spaces) or not complete[first]:
            if eof:
                self._raise_at_end(a, s0, spaces, first)
            return None
        inner = vec_end < length
        next_start = vec_end.copy()
        next_start[inner] += a[vec_end[inner]] == 10
        nxt = np.searchsorted(spaces, next_start)
        code = np.where(nxt < len(spaces), nxt, -1)
        code[~complete] = -2
        return first, _Window(spaces, next_start, inner, code.tolist())

    def _raise_at_end(self, a: np.ndarray, s0: int, spaces: np.ndarray, first: int) -> None:
        length = len(a)
        rest = bytes(a[s0:])
        if not rest.strip(_WHITESPACE):
            raise VectorFileError(self.path, f"the header says {self.n} words but the file ends after {self.rows}",
                                  offset=self.pos + length)
        word_end = int(spaces[first]) if first < len(spaces) else length
        found = length - word_end - 1 if first < len(spaces) else 0
        raise VectorFileError(
            self.path, f"truncated record: expected a word, a space and {self.nbytes} bytes of vector, "
                       f"found {found} byte(s) of vector after {rest[:min(word_end - s0, 40)]!r}",
            offset=self.pos + s0)

    def _chain(self, first: int, codes: list) -> list[int]:
        """The spaces that end the words of consecutive records (one list lookup per record)."""
        need = self.want - self.rows
        chain = []
        i = first
        while True:
            chain.append(i)
            c = codes[i]
            if c < 0 or len(chain) >= need or codes[c] == -2:
                return chain
            i = c

    def _next_window(self) -> bool:
        """Read the records of one window; False when the reading is over."""
        a, eof = self.src.window(self.pos, self.size)
        s0 = 1 if len(a) and a[0] == 10 else 0  # the optional newline ending the previous record
        scanned = self._scan(a, eof, s0)
        if scanned is None:
            self.size *= 2  # a record longer than the window
            return True
        first, win = scanned
        chain = self._chain(first, win.codes)
        self._take(a, s0, chain, win)
        last = chain[-1]
        after = int(win.next_start[last]) if win.inner[last] else len(a)
        if self.rows == self.want:
            self._check_nothing_after(after)
            return False
        if eof and win.codes[last] == -1:
            self._raise_after_last(a, after)
        self.pos += after
        return True

    def _take(self, a: np.ndarray, s0: int, chain: list[int], win: _Window) -> None:
        """Decode the words of ``chain`` and copy their vectors into the output."""
        ch = np.asarray(chain, dtype=np.int64)
        ends = win.spaces[ch]
        starts = np.empty(len(ch), dtype=np.int64)
        starts[0] = s0
        starts[1:] = win.next_start[ch[:-1]]
        block_words = _decode_words(a, starts, ends, self.pos, self.path, self.unicode_errors)
        k = len(ch)
        block = self.out[self.rows:self.rows + k]
        # Each vector as one opaque nbytes-wide item starting at any byte: gathering
        # items copies whole records (memcpy-sized), not byte by byte; in slices whose
        # temporaries stay small enough for malloc to reuse them.
        records = np.ndarray(shape=(len(a) - self.nbytes + 1,), dtype=np.dtype((np.void, self.nbytes)),
                             buffer=a, strides=(1,))
        target = block.view(records.dtype).reshape(k)
        step = max(1, _GATHER_BYTES // self.nbytes)
        for lo in range(0, k, step):
            target[lo:lo + step] = records[ends[lo:lo + step] + 1]
        finite = np.isfinite(block).all(axis=1)
        if not finite.all():
            j = int(np.flatnonzero(~finite)[0])
            raise VectorFileError(self.path, f"the vector of {block_words[j]!r} has NaN or infinite values; "
                                             f"expected finite numbers", offset=self.pos + int(ends[j]) + 1)
        self.words.extend(block_words)
        self.rows += k

    def _check_nothing_after(self, after: int) -> None:
        """After record n, anything but whitespace is an error (unless a limit stopped us first)."""
        if self.limit is not None and self.limit <= self.n:
            return
        tail, _ = self.src.window(self.pos + after, 64)
        if bytes(tail[:4096]).strip(_WHITESPACE):
            raise VectorFileError(self.path, f"the header says {self.n} words but there are more records",
                                  offset=self.pos + after)

    def _raise_after_last(self, a: np.ndarray, after: int) -> None:
        rest = bytes(a[after:])
        if rest.strip(_WHITESPACE):
            raise VectorFileError(self.path, f"truncated record: expected a word, a space and {self.nbytes} "
                                             f"bytes of vector, found {rest[:40]!r} and the end of the file",
                                  offset=self.pos + after)
        raise VectorFileError(self.path, f"the header says {self.n} words but the file ends after {self.rows}",
                              offset=self.pos + len(a))


def read_word2vec_bin(path, *, limit: int | None = None, name: str | None = None,
                      window_bytes: int = WINDOW_BYTES, unicode_errors: str = "strict") -> Embedding:
    """Read a word2vec binary file (gzip-compressed or not) into a float32 array.

    Parameters
    ----------
    path : path-like
    limit : int, optional
        Keep the first ``limit`` words; reading stops there.
    name : str, optional
        Label of the embedding (default: the file name).
    window_bytes : int
        Bytes scanned at once.
    unicode_errors : {"strict", "ignore", "replace"}
        Undecodable UTF-8 in a word: an error naming its byte offset, dropped bytes, or
        U+FFFD (gensim's ``unicode_errors``).

    Returns
    -------
    Embedding

    Raises
    ------
    VectorFileError
        With the byte offset (in the uncompressed stream) for a bad header, a text file
        (its first record is a text line), a truncated record, fewer or more records
        than the header says, NaN/infinite values and undecodable words.
    """
    path = require_file(path)
    reader = _BinaryReader(path, limit=check_limit(limit), window_bytes=window_bytes,
                           unicode_errors=check_unicode_errors(unicode_errors))
    return reader.read(name)


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
