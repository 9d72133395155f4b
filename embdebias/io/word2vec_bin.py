"""The word2vec binary format (also gzip-compressed).

Layout: an ASCII header ``"n d\\n"`` (``n >= 0`` words, ``d >= 1``), then ``n`` records: a
word, a space, ``d`` little-endian float32 and, in files written by the word2vec C
tool (and by :func:`write_word2vec_bin`), a newline; gensim writes no newline.  A file
is one or the other throughout: the first record decides.  A word is non-empty UTF-8
(per ``unicode_errors``) without spaces or control characters (bytes 0-31 other than tab
and carriage return).

Reading without a Python loop over the words: the file is read in windows (4 MiB,
read into one reused buffer, never memory-mapped: a file that shrinks under a map
kills the process with SIGBUS, while a read sees the end of the file and reports it),
so that memory holds the output matrix and one window, never the whole input.  A
window stays in the processor's cache from its read through the space scan to the
copy of its vectors (measured: 20% faster than 32 MiB windows, read from RAM three
times).  In a window:

1. every space is found (vectorized, in cache-sized pieces);
2. for every space, the space that would end the *next* word if this one ended a word
   is found with one ``searchsorted``: the vector takes the next ``4 d`` bytes, then the
   newline if the file has them, then the next word runs to the next space.  This
   "next" map is monotone, so the chains from spaces inside vectors run between the
   records and merge into the chain of the records within a few steps;
3. the records are the chain from the window's first space: the images of all spaces
   under 16 steps of the map (4 squarings) are that chain after its 16th node, which is
   checked in one comparison; if a chain had not merged yet, pointer doubling gives the
   exact chain (``O(m log m)`` for ``m`` spaces).

Each record is then validated (non-empty word without control characters that does not
start with white space, the newline after the vector when the file has them, UTF-8,
finite values), the words are decoded in one call per window and the vectors are copied
once, as opaque ``4 d``-byte items, into the preallocated output.  Duplicate words are
looked for with 64-bit hashes of their bytes (:func:`~embdebias.vocab.word_hashes`,
a few operations per word) and one sort at the end; only when two hashes are equal do
the decoded words go through a dict (a 3,000,000-word dict costs about 0.9 s, the hashes
0.15 s; sorted, the hashes are the vocabulary's lookup index).  A word with a space, a
wrong dimension in the header or a damaged record makes these checks fail at the first
record that does not fit (the records after it would be shifted), with its byte offset.
Without newlines (gensim's layout) nothing in the format shows where a word with a space
ends; the vectors do, and :meth:`_BinaryReader._spaced_records` makes it an error at its
record when its vector read a few bytes off holds a value no embedding has while the
vector after the space is plausible (when all its shifted values look plausible, a chance
of about ``0.5 ** d``, the next record's stray first bytes usually fail instead).

The header is checked against the file size before anything is allocated: each record
takes at least ``4 d + 2`` bytes, so ``n (4 d + 2)`` must fit in the file (for gzip, in
1032 times the compressed size, the most deflate can expand; the matrix then grows as
records arrive).  After the ``n`` records only whitespace may follow (anything else is
an error: the header is then wrong, or the file damaged).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .._atomic import atomic_file
from .._prefault import Prefault
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding
from ..errors import EmbdebiasError, VectorFileError, quote
from ._common import (
    MAX_WORD_BYTES,
    binary_records_ok,
    check_block_finite,
    check_limit,
    check_unicode_errors,
    encode_words,
    gather_ranges,
    is_gzip,
    make_embedding,
    open_binary,
    open_output,
    require_file,
    text_records_ok,
    word_hashes,
)

#: Bytes of input looked at in one step (a window); larger for a record that needs it.  Small enough
#: to stay in the cache between the passes over it (2-4 MiB measured fastest, 32 MiB 20% slower).
WINDOW_BYTES = 4 << 20
#: The spaces are found in pieces of this size, so that the mask stays in the cache.
_SCAN_BYTES = 1 << 20
#: The vectors are copied in slices of this size, so that the temporary stays in the cache.
_COPY_BYTES = 2 << 20
#: Steps of the "next record" map after which chains from inside vectors have (nearly always) merged.
_MERGE_SQUARINGS = 4
#: The most a deflate stream expands (a bound on the size of a gzip file's content).
_GZIP_MAX_RATIO = 1032
_WHITESPACE = b" \t\r\n"
#: The bytes a word may not contain besides the space: control characters, except tab and
#: carriage return (kept for files that have them).  They catch records shifted by a word
#: with a space in a file without newlines: the next "word" starts with vector bytes.
_CONTROL = np.zeros(256, dtype=bool)
_CONTROL[:32] = True
_CONTROL[[9, 13]] = False
_NEWLINE, _SPACE = 10, 32
#: The bytes a word may not start with: white space (after a vector, one newline is part of the record).
_WHITESPACE_BYTES = b" \t\r\n\x0b\x0c"
_LEADING = np.zeros(256, dtype=bool)
_LEADING[list(_WHITESPACE_BYTES)] = True
#: No embedding holds a value of magnitude 2**64 (1.8e19) or more, or a normal one below 2**-60
#: (8.7e-19); a vector read a few bytes off holds one or the other with a chance of about 1/2 per value,
#: its exponents being random mantissa bytes (``_spaced_records``).
_PLAUSIBLE_EXPONENT = 64
_TINY = 2.0 ** -60


def _implausible(vectors: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Per row: whether some value is non-finite, or normal with a magnitude outside ``[lo, hi]``.

    Zeros and subnormals (below 2**-126) are never implausible: files hold them.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        size = np.abs(vectors)
        odd = ~np.isfinite(size) | ((size >= np.finfo(np.float32).tiny) & ((size < lo) | (size > hi)))
    return odd.any(axis=1)


# -- input windows ----------------------------------------------------------------------------
class _StreamWindows:
    """Forward-only windows of a (gzip-decompressed) byte stream, read into one reused buffer.

    The array a call returns is only valid until the next call.
    """

    def __init__(self, path):
        self.fh = open_binary(path)
        self.buf = bytearray()
        self.base = self.filled = 0
        self.eof = False

    def window(self, pos: int, size: int) -> tuple[np.ndarray, bool]:
        """The bytes from ``pos`` on (``size`` of them unless the stream ends first), and whether it ends.

        The buffer grows with the data read, never ahead of it: a header cannot make it
        allocate more than the stream holds.
        """
        shift = pos - self.base
        keep = self.filled - shift
        if keep:
            self.buf[:keep] = self.buf[shift:self.filled]
        self.base, self.filled = pos, keep
        while self.filled < size and not self.eof:
            if self.filled == len(self.buf):
                # A new buffer rather than a resize: arrays of the last window may still refer to the old one.
                grown = bytearray(min(size, max(2 * len(self.buf), 1 << 16)))
                grown[:self.filled] = self.buf[:self.filled]
                self.buf = grown
            with memoryview(self.buf) as view:
                got = self.fh.readinto(view[self.filled:min(size, len(self.buf))])
            self.filled += got
            self.eof = not got
        return np.frombuffer(self.buf, dtype=np.uint8, count=min(self.filled, size)), self.eof and self.filled <= size

    def close(self):
        self.fh.close()


class _FileWindows:
    """Windows of a plain file, each read (``readinto``) into one reused buffer, never mapped.

    A memory map kills the process with SIGBUS when the file shrinks while it is read
    (another program truncating or rewriting it); a read just returns fewer bytes, which
    ends the window there and becomes a "truncated record" error.  Reading costs one copy
    from the page cache (about 20 GB/s).  The array a call returns is only valid until
    the next call.
    """

    def __init__(self, path):
        self.fh = open(path, "rb", buffering=0)
        self.size = os.fstat(self.fh.fileno()).st_size  # what is past it (the file grew) is not read
        self.buf = np.empty(0, np.uint8)

    def window(self, pos: int, size: int) -> tuple[np.ndarray, bool]:
        """The bytes from ``pos`` on (``size`` of them unless the file ends first), and whether it ends."""
        want = max(0, min(size, self.size - pos))
        if len(self.buf) < want:  # np.empty: no zero-filling of what the read overwrites
            self.buf = np.empty(want, np.uint8)
        got = 0
        self.fh.seek(pos)
        with memoryview(self.buf) as view:
            while got < want:
                read = self.fh.readinto(view[got:want])
                if not read:  # the file shrank since it was opened: it ends here
                    return self.buf[:got], True
                got += read
        return self.buf[:got], pos + got >= self.size

    def close(self):
        self.fh.close()


def _open_windows(path) -> _FileWindows | _StreamWindows:
    """Read windows of a plain file, or of the decompressed stream of a gzip file."""
    return _StreamWindows(path) if is_gzip(path) else _FileWindows(path)


# -- the header ----------------------------------------------------------------------------------
def _read_header(src, path) -> tuple[int, int, int]:
    """``(n, d, header length)`` from the first line (``d`` at least 1)."""
    head, _ = src.window(0, 256)
    head = bytes(head)
    if not head.strip():
        raise VectorFileError(path, "empty file: expected a header line 'count dim'", offset=0)
    nl = head.find(b"\n")
    fields = head[:nl].split() if nl >= 0 else []
    if len(fields) != 2 or not all(f.isdigit() and len(f) <= 18 for f in fields):
        shown = (head[:nl] if nl >= 0 else head).decode("utf-8", "replace")
        raise VectorFileError(path, f"expected a header line 'count dim' (two integers of at most 18 digits), "
                                    f"found {quote(shown)}", offset=0)
    n, d = int(fields[0]), int(fields[1])
    if d < 1:
        raise VectorFileError(path, f"header gives dimension {d}, expected at least 1", offset=0)
    return n, d, nl + 1


def _rows_that_fit(path, n: int, d: int, header_bytes: int, gzipped: bool) -> int:
    """How many records of dimension ``d`` the file can hold (at most ``n``); an error if not one.

    Each record takes at least ``4 d + 2`` bytes (a one-byte word, a space, the vector).
    A header that claims more records than fit is not trusted with memory: only what
    fits is allocated, and reading then stops at the last record with an error naming it.
    """
    size = os.path.getsize(path)
    available = size * _GZIP_MAX_RATIO if gzipped else size - header_bytes
    per_record = 4 * d + 2
    if n and per_record > available:
        what = (f"a gzip file of {size} bytes holds at most {available}" if gzipped
                else f"the file has {available} after the header")
        raise VectorFileError(path, f"the header says the dimension is {d}, so that a record takes at least "
                                    f"{per_record} bytes, but {what}; is the header damaged?", offset=0)
    return min(n, available // per_record)


def _refuse_text_records(src, pos: int, n: int, d: int, path) -> None:
    """Text lines 'word v1 ... vd' that are not also binary records: a text file read as binary."""
    head, eof = src.window(pos, 1 << 16)
    head = bytes(head)
    if text_records_ok(head, d, eof) and not binary_records_ok(head, n, d, eof):
        shown = head.split(b"\n", 1)[0].decode("utf-8", "replace")
        raise VectorFileError(path, f"found the text line {quote(shown)} where a binary record should start; "
                                    f"expected a word, a space and {4 * d} bytes of float32 (this looks like "
                                    f"word2vec text or fastText .vec)", offset=pos)


# -- locating the records -------------------------------------------------------------------------
def _follow(jump: np.ndarray, need: int) -> np.ndarray:
    """The chain ``0, jump[0], jump[jump[0]], ...`` before the sink ``len(jump) - 1``, at most ``need`` nodes.

    ``jump`` is monotone and ``jump[i] > i``.  The chain after its first ``2**_MERGE_SQUARINGS``
    nodes is guessed as the image of every node under that many steps (chains that
    start elsewhere have merged into it by then, nearly always) and verified; if the
    guess fails, pointer doubling finds it exactly.
    """
    sink = len(jump) - 1
    steps = 1 << _MERGE_SQUARINGS
    head = [0]
    while head[-1] != sink and len(head) <= min(need, steps):
        head.append(int(jump[head[-1]]))
    if head[-1] == sink or len(head) > need:
        chain = np.array(head, dtype=np.int64)
        return chain[chain != sink][:need]
    far = jump
    for _ in range(_MERGE_SQUARINGS):
        far = far[far]
    reached = np.zeros(sink + 1, dtype=bool)
    reached[far] = True
    reached[sink] = False
    chain = np.concatenate([np.array(head[:steps], dtype=np.int64), np.flatnonzero(reached)])
    if chain[steps] == head[steps] and jump[chain[-1]] == sink and np.array_equal(jump[chain[:-1]], chain[1:]):
        return chain[:need]
    return _follow_doubling(jump, need)


def _follow_doubling(jump: np.ndarray, need: int) -> np.ndarray:
    """:func:`_follow` by pointer doubling: after k rounds, the first ``2**k`` nodes and the ``2**k``-step map."""
    sink = len(jump) - 1
    chain = np.zeros(1, dtype=np.int64)
    far = jump
    while chain[-1] != sink and len(chain) < need:
        chain = np.concatenate([chain, far[chain]])
        far = far[far]
    return chain[chain != sink][:need]


# -- the reader ------------------------------------------------------------------------------------
class _BinaryReader:
    """One read of a word2vec binary file: the header, the position, and the rows so far."""

    def __init__(self, path, *, limit, window_bytes: int, unicode_errors: str):
        self.path, self.limit, self.unicode_errors = path, limit, unicode_errors
        self.window_bytes = max(1, int(window_bytes))
        self.words: list[str] = []
        self.rows = 0
        self.newline = None  # whether records end with a newline: the first record decides
        self.spaced = False  # the record in error seems to have a space in its word
        self.mask = np.empty(0, dtype=bool)  # reused by the space scan
        # Strictly decoded, equal words are equal bytes: hashes of the bytes, cheaper than a dict, show
        # that the words are distinct (not so under "replace" or "ignore": there the dict checks).
        self.hashes: list[np.ndarray] | None = [] if unicode_errors == "strict" else None

    def read(self, name) -> Embedding:
        self.src = _open_windows(self.path)
        self.prefault = None
        try:
            self._start()
            with np.errstate(over="ignore", invalid="ignore"):
                while self.rows < self.want:
                    self._next_window()
            if self.limit is None or self.limit > self.n:  # a limit stops the reading before the end
                self._check_nothing_after()
        finally:
            if self.prefault is not None:
                self.prefault.stop()
            self.src.close()
        return make_embedding(self.words, self.out[:self.rows], self.path, name, hashes=self.hashes)

    def _start(self) -> None:
        self.n, self.d, self.pos = _read_header(self.src, self.path)
        gzipped = is_gzip(self.path)
        rows = _rows_that_fit(self.path, self.n, self.d, self.pos, gzipped)
        self.nbytes = 4 * self.d
        self.want = self.n if self.limit is None else min(self.n, self.limit)
        rows = min(rows, self.want)
        if gzipped:  # the content's size is not known: start with what 4 times the file could hold, then grow
            rows = min(rows, max(1, 4 * os.path.getsize(self.path) // (self.nbytes + 2)))
        self.out = np.empty((rows, self.d), dtype=np.float32)
        self.prefault = Prefault(self.out)  # its pages faulted in on another core, ahead of the copy
        self.size = max(self.window_bytes, 2 * (self.nbytes + 64))
        self.most = 2 * (MAX_WORD_BYTES + self.nbytes + 2)  # a window this large holds a record
        if self.want:
            _refuse_text_records(self.src, self.pos, self.n, self.d, self.path)

    def _next_window(self) -> None:
        """Read the records of one window (or grow the window if none fits, or raise at the end)."""
        a, eof = self.src.window(self.pos, self.size)
        spaces, length, eof = self._find_spaces(a, eof)
        if self.newline is None and not self._decide_newline(a, spaces, length, eof):
            return self._no_record(a, spaces, length, eof)
        step = 1 + self.nbytes + self.newline
        ends = spaces + step  # where the record would end if that space ended its word
        # The newline after the last record may be missing (nothing is lost).
        complete = int(np.searchsorted(ends, length + (eof and self.newline), side="right"))
        jump = np.full(len(spaces) + 1, len(spaces), dtype=np.int64)
        jump[:complete] = np.searchsorted(spaces, ends[:complete])
        chain = _follow(jump, self.want - self.rows)
        chain = chain[chain < complete]
        if not len(chain):
            return self._no_record(a, spaces, length, eof)
        self._take(a, spaces[chain], step, self._spaced_records(a, spaces, jump, chain, complete))
        self.pos += min(int(spaces[chain[-1]]) + step, length)

    def _find_spaces(self, a: np.ndarray, eof: bool) -> tuple[np.ndarray, int, bool]:
        """The positions of the spaces in ``a``, the length looked at, and whether that is the end.

        Vector bytes are spaces at random (1 in 256), or all of them in a strange file:
        past ``size / 16`` spaces the window is cut short, which bounds the memory.
        """
        if len(self.mask) < min(len(a), _SCAN_BYTES):
            self.mask = np.empty(_SCAN_BYTES, dtype=bool)
        cap = self.size // 16
        parts, count = [np.zeros(0, np.int64)], 0
        for lo in range(0, len(a), _SCAN_BYTES):
            piece = a[lo:lo + _SCAN_BYTES]
            found = np.flatnonzero(np.equal(piece, _SPACE, out=self.mask[:len(piece)]))
            found += lo
            parts.append(found)
            count += len(found)
            if count > cap and lo + len(piece) < len(a):
                return np.concatenate(parts), lo + len(piece), False
        return np.concatenate(parts), len(a), eof

    def _decide_newline(self, a: np.ndarray, spaces: np.ndarray, length: int, eof: bool) -> bool:
        """Whether the first record ends with a newline (False: the window does not show it yet)."""
        if not len(spaces):
            return False
        vec_end = int(spaces[0]) + 1 + self.nbytes
        if vec_end < length:
            self.newline = int(a[vec_end] == _NEWLINE)
        elif vec_end == length and eof:
            self.newline = 0
        return self.newline is not None

    def _no_record(self, a: np.ndarray, spaces: np.ndarray, length: int, eof: bool) -> None:
        """No complete record in the window: grow it, or say what is wrong at the end of the file."""
        if not eof:
            if length == len(a) >= self.most:
                raise VectorFileError(self.path, f"no word ends within {MAX_WORD_BYTES} bytes: expected a word "
                                                 f"of at most {MAX_WORD_BYTES} bytes and a space", offset=self.pos)
            self.size *= 2
            return
        rest = bytes(a[:min(length, 4096)])
        if not rest.strip(_WHITESPACE) and length <= 4096:
            raise VectorFileError(self.path, f"the header says {self.n} words but the file ends after {self.rows}",
                                  offset=self.pos + length)
        word_end = int(spaces[0]) if len(spaces) else length
        found = max(0, length - word_end - 1)
        raise VectorFileError(
            self.path, f"truncated record {self.rows + 1}: expected a word, a space and {self.nbytes} bytes of "
                       f"vector, found {found} byte(s) of vector after "
                       f"{quote(rest[:word_end].decode('utf-8', 'replace'))} and the end of the file",
            offset=self.pos)

    def _spaced_records(self, a: np.ndarray, spaces: np.ndarray, jump: np.ndarray, chain: np.ndarray,
                        complete: int) -> np.ndarray:
        """The records (indices into ``chain``) whose word most likely goes on past its space.

        A word with a space, ``"wo rd"``, reads as the word ``"wo"`` whose vector starts
        with ``"rd "`` and is cut short; the next word then starts with the last bytes of
        the true vector, and the records after it are read right.  Without newlines after
        the vectors nothing in the format tells the two readings apart, but the vectors do:
        shifted by a few bytes, a vector's exponents are random bytes of the true one.  So
        where a space inside a record's vector would end an alternative word with the same
        next record (a word with a space), and that alternative's vector is plausible
        (:func:`_implausible`) while the record's own is not, the record is an error.  Such
        an alternative exists for a few percent of the records of a valid file (a 0x20
        byte near a vector's start), whose own vectors are plausible: it costs one gather
        of those few vectors.
        """
        if self.newline:  # the newline after each vector already shows where the record ends
            return np.zeros(0, np.int64)
        outside = np.ones(complete, dtype=bool)
        outside[chain] = False
        inside = np.flatnonzero(outside)
        inside = inside[inside > chain[0]]
        owner = np.searchsorted(chain, inside) - 1
        same_next = jump[inside] == jump[chain[owner]]
        if not same_next.any():
            return np.zeros(0, np.int64)
        owner, alternative = owner[same_next], inside[same_next]
        own = self._vectors_at(a, spaces[chain[owner]] + 1)
        big = _implausible(own, 0.0, 2.0 ** _PLAUSIBLE_EXPONENT)
        tiny = _implausible(own, _TINY, np.inf)
        if not (big | tiny).any():
            return np.zeros(0, np.int64)
        # Judged against the magnitudes of the window's other records too (a file may hold odd values throughout).
        sample = np.setdiff1d(chain[np.linspace(0, len(chain) - 1, min(len(chain), 4096)).astype(np.int64)],
                              chain[owner[big | tiny]])
        sizes = np.abs(self._vectors_at(a, spaces[sample] + 1))
        sizes = sizes[np.isfinite(sizes) & (sizes >= np.finfo(np.float32).tiny)]
        if not len(sizes):
            return np.zeros(0, np.int64)
        lo, hi = sizes.min() / 256, sizes.max() * 256
        other = self._vectors_at(a, spaces[alternative] + 1)
        # A tiny value counts against a record only where the other records have none.
        odd = _implausible(own, 0.0, max(hi, 2.0 ** _PLAUSIBLE_EXPONENT)) | (tiny & (sizes.min() >= _TINY))
        spaced = odd & ~_implausible(other, max(lo, _TINY), min(hi, 2.0 ** _PLAUSIBLE_EXPONENT))
        return np.unique(owner[spaced])

    def _vectors_at(self, a: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """The float32 vectors starting at the byte offsets ``starts`` of ``a`` (a gathered copy)."""
        lengths = np.full(len(starts), self.nbytes, dtype=np.int64)
        return gather_ranges(a, starts, lengths).view("<f4").reshape(len(starts), self.d)

    def _take(self, a: np.ndarray, word_ends: np.ndarray, step: int, spaced: np.ndarray) -> None:
        """Check the records whose words end at ``word_ends``, decode their words and copy their vectors.

        ``spaced``: the records whose word seems to contain a space (:meth:`_spaced_records`).
        """
        starts = np.empty_like(word_ends)
        starts[0] = 0
        starts[1:] = word_ends[:-1] + step
        lengths = word_ends - starts
        # Each word with the space that ends it: checked, then decoded in one call.
        joined = gather_ranges(a, starts, lengths + 1)
        problem = self._first_problem(a, joined, starts, lengths)
        if len(spaced) and (problem is None or spaced[0] < problem):
            problem, self.spaced = int(spaced[0]), True
        good = len(word_ends) if problem is None else problem
        if problem is not None:
            error = VectorFileError(self.path, self._problem_message(a, problem, int(starts[problem]),
                                                                     int(word_ends[problem])),
                                    offset=self.pos + int(starts[problem]))
        if good:
            words = self._decode_words(a, joined, starts[:good], lengths[:good])
            if self.hashes is not None:
                self.hashes.append(word_hashes(joined, lengths[:good]))
            self._copy_vectors(a, word_ends[:good] + 1, words)
            self.words.extend(words)
            self.rows += good
        if problem is not None:  # after the records before it, whose own errors come first
            raise error

    def _first_problem(self, a: np.ndarray, joined: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
        """The index of the first record with an empty or too long word, a control character in its
        word or no newline after its vector (when the file has them); None if all are fine."""
        bad = (lengths == 0) | (lengths > MAX_WORD_BYTES)
        # A word starts right after the previous vector (and its newline): never with white space.
        bad |= _LEADING[a[np.minimum(starts, len(a) - 1)]] & (lengths > 0)
        if self.newline:
            newlines = starts + lengths + 1 + self.nbytes
            inside = newlines < len(a)  # (the last record of the file may lack it)
            bad[inside] |= a[newlines[inside]] != _NEWLINE
        control = np.flatnonzero(_CONTROL[joined])
        if len(control):
            bad[np.searchsorted(np.cumsum(lengths + 1), control, side="right")] = True
        return int(np.argmax(bad)) if bad.any() else None

    def _problem_message(self, a: np.ndarray, k: int, start: int, word_end: int) -> str:
        record = f"record {self.rows + k + 1}"
        word = bytes(a[start:word_end])
        shown = quote(word.decode("utf-8", "replace"))
        if self.spaced:
            return (f"the word {shown} of {record} seems to go on past a space: its {self.nbytes} vector bytes hold "
                    f"a value beyond 2**{_PLAUSIBLE_EXPONENT} or below 2**-60, unlike the other records, "
                    f"while reading the word on to the next space gives a plausible vector; expected a word without "
                    f"spaces (or is the header's dimension {self.d} wrong?)")
        if word and word[:1] in _WHITESPACE_BYTES:
            return (f"the word {shown} of {record} starts with white space {word[:1]!r}; expected a word right "
                    f"after the previous vector{' and its newline' if self.newline else ''} (is something "
                    f"between the records, or the header's dimension {self.d} wrong?)")
        hint = (f"; the previous record's word may contain a space, or the header's dimension {self.d} may be "
                f"wrong" if self.rows + k else "")
        if not word:
            return f"empty word in {record}: expected a word before the space that starts a vector{hint}"
        if len(word) > MAX_WORD_BYTES:
            return f"the word of {record} is {len(word)} bytes long, expected at most {MAX_WORD_BYTES}"
        control = next((c for c in word if _CONTROL[c]), None)
        if control is not None:
            return (f"the word {shown} of {record} contains the control character {bytes([control])!r}; "
                    f"expected a word without control characters{hint}")
        found = quote(bytes(a[word_end + 1 + self.nbytes:word_end + 9 + self.nbytes]).decode("latin-1"))
        return (f"expected a newline after the {self.nbytes} vector bytes of {shown} ({record}), as after the "
                f"first record, found {found}; does the word contain a space, or is the header's dimension "
                f"{self.d} wrong?")

    def _decode_words(self, a: np.ndarray, joined: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> list[str]:
        """Decode the words (checked: without control characters) in one call.

        ``joined`` holds each word with the space after it (and maybe more words after
        these): the spaces become newlines, which split the decoded text.
        """
        joined_starts = np.cumsum(lengths + 1) - (lengths + 1)
        used = int(joined_starts[-1] + lengths[-1])
        joined[joined_starts + lengths] = _NEWLINE
        try:
            words = bytes(joined[:used]).decode("utf-8", self.unicode_errors).split("\n")
        except UnicodeDecodeError as exc:
            k = int(np.searchsorted(joined_starts, exc.start, side="right")) - 1
            raw = bytes(a[starts[k]:starts[k] + lengths[k]]).decode("utf-8", "backslashreplace")
            at = exc.start - int(joined_starts[k])
            raise VectorFileError(self.path, f"undecodable UTF-8 in the word {quote(raw)} of record "
                                             f"{self.rows + k + 1} (byte {at}: {exc.reason}); expected UTF-8 text "
                                             f"(unicode_errors='ignore' or 'replace' accept it)",
                                  offset=self.pos + int(starts[k]) + at) from None
        if self.unicode_errors == "ignore" and "" in words:
            k = words.index("")
            raw = bytes(a[starts[k]:starts[k] + lengths[k]]).decode("utf-8", "backslashreplace")
            raise VectorFileError(self.path, f"the word {quote(raw)} is empty once its undecodable bytes are "
                                             f"dropped (unicode_errors='ignore')", offset=self.pos + int(starts[k]))
        return words

    def _copy_vectors(self, a: np.ndarray, vec_starts: np.ndarray, words: list[str]) -> None:
        """Copy the vectors starting at ``vec_starts`` into the output rows, checking that they are finite."""
        k = len(vec_starts)
        self._reserve(self.rows + k)
        block = self.out[self.rows:self.rows + k]
        # Each vector as one opaque item of nbytes that starts at any byte: the gather
        # copies whole vectors, in slices whose temporaries stay in the cache.
        item = np.dtype((np.void, self.nbytes))
        vectors = np.ndarray(shape=(len(a) - self.nbytes + 1,), dtype=item, buffer=a, strides=(1,))
        target = block.view(item).reshape(k)
        step = max(1, _COPY_BYTES // self.nbytes)
        for lo in range(0, k, step):
            target[lo:lo + step] = vectors[vec_starts[lo:lo + step]]
            # A sum is NaN or infinite if a value is (or if it overflows: then look closer).
            if not np.isfinite(np.add.reduce(block[lo:lo + step], axis=None)):
                self._check_finite(block, lo, step, vec_starts, words)

    def _check_finite(self, block: np.ndarray, lo: int, step: int, vec_starts: np.ndarray, words) -> None:
        finite = np.isfinite(block[lo:lo + step]).all(axis=1)
        if not finite.all():
            j = lo + int(np.flatnonzero(~finite)[0])
            raise VectorFileError(self.path, f"the vector of {quote(words[j])} has NaN or infinite values; "
                                             f"expected finite numbers", offset=self.pos + int(vec_starts[j]))

    def _reserve(self, rows: int) -> None:
        """Make the output hold ``rows`` rows (only a gzip file's output grows)."""
        if rows <= len(self.out):
            return
        grown = np.empty((min(self.want, max(rows, 2 * len(self.out))), self.d), dtype=np.float32)
        grown[:self.rows] = self.out[:self.rows]
        self.out = grown

    def _check_nothing_after(self) -> None:
        """After record n only whitespace may follow: anything else means the header is wrong."""
        tail, eof = self.src.window(self.pos, 4096)
        rest = bytes(tail)
        if rest.strip(_WHITESPACE) or not eof:
            raise VectorFileError(self.path, f"the header says {self.n} words but there are more records "
                                             f"(found {quote(rest[:40].decode('utf-8', 'replace'))})",
                                  offset=self.pos)


def read_word2vec_bin(path, *, limit: int | None = None, name: str | None = None,
                      window_bytes: int = WINDOW_BYTES, unicode_errors: str = "strict") -> Embedding:
    """Read a word2vec binary file (gzip-compressed or not) into a float32 array.

    Parameters
    ----------
    path : path-like
    limit : int, optional
        Keep the first ``limit`` words; reading stops there (and what follows is not checked).
    name : str, optional
        Label of the embedding (default: the file name).
    window_bytes : int
        Bytes looked at in one step (more if a record needs it); memory use is the
        output matrix plus a few times this.
    unicode_errors : {"strict", "ignore", "replace"}
        Undecodable UTF-8 in a word: an error naming its byte offset, dropped bytes, or
        U+FFFD (gensim's ``unicode_errors``).

    Returns
    -------
    Embedding

    Raises
    ------
    VectorFileError
        With the byte offset (in the uncompressed stream) for a bad header or one whose
        records cannot fit in the file, a text file (its first record is a text line),
        a truncated record, fewer or more records than the header says, an empty word,
        a word with a control character or longer than :data:`MAX_WORD_BYTES`, a record
        without the newline the first record has, NaN/infinite values and undecodable
        words.
    """
    path = require_file(path)
    reader = _BinaryReader(path, limit=check_limit(limit), window_bytes=window_bytes,
                           unicode_errors=check_unicode_errors(unicode_errors))
    return reader.read(name)


# -- the writer --------------------------------------------------------------------------------------
def _check_writable(emb: Embedding, target: Path, joined: np.ndarray, starts: np.ndarray) -> None:
    """Refuse what :func:`read_word2vec_bin` would reject (``encode_words`` checked spaces, newlines, empties)."""
    if emb.dim == 0:
        raise EmbdebiasError(f"{target}: word2vec-bin format cannot store vectors of dimension 0 "
                             f"(its reader needs at least 1); use 'native'")
    control = np.flatnonzero(_CONTROL[joined])
    control = control[joined[control] != _NEWLINE]  # the newlines separate the words
    leading = np.flatnonzero(_LEADING[joined[starts[:-1]]]) if len(starts) > 1 else np.zeros(0, np.int64)
    if len(leading):
        row = int(leading[0])
        raise EmbdebiasError(f"{target}: word2vec-bin format cannot store the word {quote(emb.words[row])} "
                             f"(row {row}): it starts with white space, which the reader takes for a damaged "
                             f"record boundary; use 'native'")
    lengths = np.diff(starts) - 1
    if len(control) or (len(lengths) and lengths.max() > MAX_WORD_BYTES):
        row = (int(np.searchsorted(starts, control[0], side="right")) - 1 if len(control)
               else int(np.argmax(lengths > MAX_WORD_BYTES)))
        raise EmbdebiasError(f"{target}: word2vec-bin format cannot store the word {quote(emb.words[row])} "
                             f"(row {row}): it has a control character or more than {MAX_WORD_BYTES} bytes; "
                             f"use 'native'")


def write_word2vec_bin(emb: Embedding, path, *, chunk_rows: int = DEFAULT_CHUNK_ROWS, inputs=()) -> None:
    """Write ``emb`` in word2vec binary format (gzip when ``path`` ends in ``.gz``).

    Each record ends with a newline, as the word2vec C tool writes it; records are
    assembled per chunk with vectorized scatters (no loop over the words).  What the
    reader would reject is refused before anything is written: dimension 0, a word that
    is empty, has a space, a control character other than tab and carriage return (a
    newline included) or more than :data:`MAX_WORD_BYTES` bytes, and NaN or infinite
    values (checked per chunk; the output file is only put in place once complete).
    """
    target = Path(path)
    words = emb.words.tolist()
    joined, starts = encode_words(words, target, allow_space=False, format_name="word2vec-bin")
    _check_writable(emb, target, joined, starts)
    nbytes = 4 * emb.dim
    inputs = (*inputs, emb.path) if emb.path else inputs
    item = np.dtype((np.void, nbytes))
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
            buf[rec_start + wlen] = _SPACE
            buf[rec_start + wlen + 1 + nbytes] = _NEWLINE
            # Each vector as one nbytes-wide item that may start at any byte of buf.
            slots = np.ndarray(shape=(len(buf) - nbytes + 1,), dtype=item, buffer=buf, strides=(1,))
            slots[rec_start + wlen + 1] = np.ascontiguousarray(block, dtype="<f4").view(item).reshape(-1)
            fh.write(buf)
