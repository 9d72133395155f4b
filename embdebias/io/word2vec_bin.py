"""The word2vec binary format (also gzip-compressed).

Layout: an ASCII header ``"n d\\n"`` (``n >= 0`` words, ``d >= 1``), then ``n`` records: a
word, a space, ``d`` little-endian float32 and, in files written by the word2vec C
tool (and by :func:`write_word2vec_bin`), a newline; gensim writes no newline.  A file
is one or the other throughout: the first record decides.  A word is non-empty UTF-8
(per ``unicode_errors``) without spaces or control characters (bytes 0-31 other than tab
and carriage return).

Reading without a Python loop over the words: the file is read in windows (32 MiB,
memory-mapped one at a time for a plain file, read into one reused buffer for gzip),
so that memory holds the output matrix and one window, never the whole input.  In a
window:

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

Each record is then validated (non-empty word without control characters, the newline
after the vector when the file has them, UTF-8, finite values), the words are decoded in
one call per window and the vectors are copied once, as opaque ``4 d``-byte items, into
the preallocated output.  A word with a space, a wrong dimension in the header or a
damaged record makes these checks fail at the first record that does not fit (the
records after it would be shifted), with its byte offset.

The header is checked against the file size before anything is allocated: each record
takes at least ``4 d + 2`` bytes, so ``n (4 d + 2)`` must fit in the file (for gzip, in
1032 times the compressed size, the most deflate can expand; the matrix then grows as
records arrive).  After the ``n`` records only whitespace may follow (anything else is
an error: the header is then wrong, or the file damaged).
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import numpy as np

from .._atomic import atomic_file
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding
from ..errors import EmbdebiasError, VectorFileError, quote
from ._common import (
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
)

#: Bytes of input looked at in one step (a window); larger for a record that needs it.
WINDOW_BYTES = 32 << 20
#: The longest word accepted (the word2vec C tool cuts words at 100 bytes).
MAX_WORD_BYTES = 1 << 16
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


# -- input windows ----------------------------------------------------------------------------
class _MappedWindows:
    """Windows of a plain file, each memory-mapped while it is looked at.

    One window is mapped at a time, so the mapped file pages in the resident memory are
    bounded by the window size (mapping the whole file would count all of it).  Mapping
    avoids the copy that ``read`` makes.  The array a call returns keeps its window
    mapped until it is dropped.
    """

    def __init__(self, path):
        self.fh = open(path, "rb")
        self.size = os.fstat(self.fh.fileno()).st_size
        self.path = path

    def window(self, pos: int, size: int) -> tuple[np.ndarray, bool]:
        """The bytes from ``pos`` on (``size`` of them unless the file ends first), and whether it ends."""
        end = min(pos + size, self.size)
        if end <= pos:
            return np.zeros(0, np.uint8), True
        start = pos - pos % mmap.ALLOCATIONGRANULARITY
        try:
            mapped = mmap.mmap(self.fh.fileno(), end - start, access=mmap.ACCESS_READ, offset=start)
        except (OSError, ValueError) as exc:  # the file shrank since it was opened
            raise VectorFileError(self.path, f"cannot map bytes {start}-{end} ({exc}); "
                                             f"was the file changed while it was read?", offset=pos) from None
        return np.frombuffer(mapped, np.uint8, offset=pos - start), end == self.size

    def close(self):
        self.fh.close()


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


def _open_windows(path) -> _MappedWindows | _StreamWindows:
    """Mapped windows for a plain file, read ones for gzip or a file that cannot be mapped."""
    if is_gzip(path):
        return _StreamWindows(path)
    mapped = _MappedWindows(path)
    try:
        mapped.window(0, 1)  # not every file system maps files
    except VectorFileError:
        mapped.close()
        return _StreamWindows(path)
    return mapped


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
        self.mask = np.empty(0, dtype=bool)  # reused by the space scan

    def read(self, name) -> Embedding:
        self.src = _open_windows(self.path)
        try:
            self._start()
            with np.errstate(over="ignore", invalid="ignore"):
                while self.rows < self.want:
                    self._next_window()
            if self.limit is None or self.limit > self.n:  # a limit stops the reading before the end
                self._check_nothing_after()
        finally:
            self.src.close()
        return make_embedding(self.words, self.out[:self.rows], self.path, name)

    def _start(self) -> None:
        self.n, self.d, self.pos = _read_header(self.src, self.path)
        gzipped = isinstance(self.src, _StreamWindows)
        rows = _rows_that_fit(self.path, self.n, self.d, self.pos, gzipped)
        self.nbytes = 4 * self.d
        self.want = self.n if self.limit is None else min(self.n, self.limit)
        rows = min(rows, self.want)
        if gzipped:  # the content's size is not known: start with what 4 times the file could hold, then grow
            rows = min(rows, max(1, 4 * os.path.getsize(self.path) // (self.nbytes + 2)))
        self.out = np.empty((rows, self.d), dtype=np.float32)
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
        self._take(a, spaces[chain], step)
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

    def _take(self, a: np.ndarray, word_ends: np.ndarray, step: int) -> None:
        """Check the records whose words end at ``word_ends``, decode their words and copy their vectors."""
        starts = np.empty_like(word_ends)
        starts[0] = 0
        starts[1:] = word_ends[:-1] + step
        lengths = word_ends - starts
        # Each word with the space that ends it: checked, then decoded in one call.
        joined = gather_ranges(a, starts, lengths + 1)
        problem = self._first_problem(a, joined, starts, lengths)
        good = len(word_ends) if problem is None else problem
        if problem is not None:
            error = VectorFileError(self.path, self._problem_message(a, problem, int(starts[problem]),
                                                                     int(word_ends[problem])),
                                    offset=self.pos + int(starts[problem]))
        if good:
            words = self._decode_words(a, joined, starts[:good], lengths[:good])
            self._copy_vectors(a, word_ends[:good] + 1, words)
            self.words.extend(words)
            self.rows += good
        if problem is not None:  # after the records before it, whose own errors come first
            raise error

    def _first_problem(self, a: np.ndarray, joined: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
        """The index of the first record with an empty or too long word, a control character in its
        word or no newline after its vector (when the file has them); None if all are fine."""
        bad = (lengths == 0) | (lengths > MAX_WORD_BYTES)
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
