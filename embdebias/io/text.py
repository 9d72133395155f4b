"""Text vector formats: word2vec text / fastText ``.vec`` (header ``"n d"``) and GloVe (no header).

Reading is block-wise: the file is read in blocks of whole lines (8 MiB), each
block is parsed at once by pyarrow's multi-threaded CSV reader (space-delimited, no
quoting, tabs turned into spaces first; column 0 is the word as raw bytes, the
others float32), and the numbers go
straight into a preallocated ``(n, d)`` float32 array: the header gives ``n``; for a
headerless GloVe file the lines are counted first (a ``bytes.count`` pass, far
cheaper than parsing).  Gzip input of either kind is not preallocated (its size says
nothing sure about the rows): its parsed blocks are concatenated at the end (peak
memory about twice the matrix).  What is preallocated never
exceeds the rows the file's size can hold (a row of ``d`` values takes at least
``2 d + 2`` bytes), so a header count of ``1e12`` allocates nothing large; a count
that disagrees with the rows is an error once they run out ("the header says n
words but the file ends after k"), or at the first row too many.

Parsing is strict:

* The header is exactly two unsigned decimal integers ``"count dim"`` (spaces or
  tabs around them), the dimension 1 to :data:`MAX_DIM`; a count of 0 is an empty
  embedding.  ``40 8 3``, ``-1 8``, ``40.0 8`` or ``40 0`` are errors on line 1,
  and so is such a first line when the file is detected or read as GloVe: a first
  line of numbers only whose count of values disagrees with the rows is a damaged
  header, never a GloVe row.
* Every row has exactly ``d`` values, each a decimal number (``1_0`` and other
  forms only Python's ``float()`` takes are refused) and finite.  A word2vec /
  ``.vec`` row with ``d + 1`` values is an error naming its line: the extra value
  is never glued onto the word.
* GloVe's ``d`` is not read from the first line alone: it is the most common count
  of values among the first 100 non-blank lines (each line's count being the
  number-like fields at its end, so a GloVe 840B word with spaces does not change
  it; ties go to the count seen first).  A damaged first row is then reported as
  that row's error ("expected 50 values ... found 49"), not taken as the dimension
  of every row.
* A UTF-8 byte-order mark at the very start of the file is dropped on purpose: the
  file reads exactly as without it (byte offsets in errors still count it).
* CRLF line ends read as LF.  A carriage return not followed by a line feed (CR-only
  line ends of classic Mac OS, or a stray CR inside a line) is refused with an error
  naming its line: it is never read as part of one giant word.  A CR as the very last
  byte of the file is a line end.
* A line is read up to ``MAX_WORD_BYTES + 64 d`` bytes (the first line of a GloVe file up
  to :data:`MAX_FIRST_LINE`); a longer one is an error naming it, without reading the
  rest of it into memory. A word longer than :data:`MAX_WORD_BYTES` (8 KiB, the same in
  every format) is an error naming its line.  Error messages quote at most about 80 characters of input.

When a block does not fit the fast path (a row with the wrong number of values, a
value that is not a number, NaN or infinity, undecodable UTF-8, a GloVe word that
contains spaces, a tab or a doubled space) the block is parsed again line by line,
which either accepts it (GloVe words with spaces: the last ``d`` fields are the
numbers, the rest is the word) or raises a :class:`~embdebias.errors.VectorFileError`
naming the exact line (and, for undecodable words, the byte offset).  Blank lines are
skipped.  A line may end with spaces (the word2vec C tool writes one after the last
value).

Fields are separated by one space or one tab each (tab-separated files are common;
gensim's own reader splits at spaces only and rejects them).  So in word2vec text a
word cannot contain a tab, and the writer refuses one; in GloVe the word is
everything before the last ``d`` separators, tabs and spaces inside it kept as
they are, as long as no part of it after the first is a number: ``"x 0.1 0.2 0.3"``
with ``d = 2`` is a line with too many values, and ``"x 0.1 0.1.2 0.3"`` a damaged
one, never the words ``"x 0.1"`` or ``"x 0.1 0.1.2"``.  An empty word (a line
starting with a separator) is an error: the word2vec binary format cannot store it,
and it is almost always a damaged line.
A GloVe file has no header: a first line of two integers (``"1763 50"``) is a
word2vec / fastText header, and reading such a file as GloVe is an error.

The writers refuse what their reader would read back differently: dimension 0 (or
above the reader's cap), empty words, words with a line break (or, in word2vec
text, a space or tab), words longer than :data:`MAX_WORD_BYTES`, and in GloVe a
word with a space before a number or starting with whitespace, a first word starting with U+FEFF (read as a
byte-order mark) or a first line that reads as a header.

Undecodable UTF-8 in a word is handled as gensim's ``unicode_errors``: ``"strict"``
(an error naming the line and byte offset), ``"ignore"`` or ``"replace"`` (U+FFFD).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .._atomic import atomic_file
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding
from ..errors import EmbdebiasError, VectorFileError, quote
from ._common import (BOM, HEADER_LINE, MAX_FIRST_LINE, MAX_WORD_BYTES, TAB_TO_SPACE, bad_header_error,
                      check_block_finite, check_limit, check_no_empty_word, check_unicode_errors, damaged_header,
                      decode_joined, glove_dim, is_gzip, is_number, lone_cr, lone_cr_error, make_embedding,
                      open_binary, open_output, parse_float32, quote_bytes, require_file, sample_lines)

#: Bytes of whole lines parsed at once (8 MiB measured faster than 32 MiB: cache-friendlier).
BLOCK_BYTES = 8 << 20
#: pyarrow's own block size inside one of our blocks (smaller, so both cores get work).
_ARROW_BLOCK = 4 << 20
_PARSE = pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                            double_quote=False, newlines_in_values=False, ignore_empty_lines=True)
#: Bytes read first: the header line, or the lines that decide a GloVe file's dimension.
HEAD_BYTES = 1 << 20
#: Longest line read, beyond the values: the longest word and a line end.
_LINE_SLACK = MAX_WORD_BYTES + 2
#: Bytes per value allowed in a line's length cap (``-1.2345678901234567e-30`` is 24).
_VALUE_BYTES = 64
#: Largest dimension a header may give (no real embedding comes near; an empty embedding of a
#: huge dimension would make every later per-dimension array huge).
MAX_DIM = 1 << 24
#: The bytes a row of ``d`` values takes at the least: a 1-byte word, ``d`` times a separator and a
#: digit, and a line end; a last row without line end is allowed by adding 1 to the bytes available.
_MIN_ROW = "2 d + 2"


def _max_rows(available: int, d: int) -> int:
    """The most rows of ``d`` values ``available`` bytes can hold (see :data:`_MIN_ROW`)."""
    return (available + 1) // (2 * d + 2)


def _parse_header(first: bytes, path, offset: int = 0) -> tuple[int, int]:
    """``(count, dim)`` from a header line: exactly two unsigned decimal integers, the dimension at least 1.

    A count of 0 is an empty embedding (what the writers and gensim write for one).
    """
    if not HEADER_LINE.fullmatch(first):
        raise bad_header_error(path, first, offset=offset)
    n, d = map(int, first.split())
    if not 1 <= d <= MAX_DIM:
        raise VectorFileError(path, f"header gives dimension {d}, expected 1 to {MAX_DIM}", line=1, offset=offset)
    return n, d


def _glove_dim(head: bytes, complete: bool, path, offset: int) -> int:
    """The dimension of a GloVe file from its first lines (:func:`~._common.glove_dim`).

    A word2vec header on the first line is an error, and so is a first line of numbers
    only that disagrees with the rows after it (a damaged header, not a row).
    """
    lines = sample_lines(head, complete)
    line_no, first = lines[0]
    offset += head.find(first)  # the first non-blank line: only white space comes before it
    if HEADER_LINE.fullmatch(first):
        raise VectorFileError(path, f"found {quote_bytes(first.strip())}, a word2vec / fastText header line "
                                    f"'count dim', but GloVe files have no header; expected lines 'word v1 ... vd' "
                                    f"(read the file as word2vec-text or fasttext-vec)", line=line_no, offset=offset)
    d = glove_dim(lines)
    if damaged_header(first, d):
        raise bad_header_error(path, first, line=line_no, offset=offset)
    if d < 1:
        raise VectorFileError(path, "expected lines 'word v1 ... vd' (a word followed by its values), found "
                                    f"{quote_bytes(first.rstrip())}", line=line_no, offset=offset)
    return d


def _fast_words(column, unicode_errors: str) -> list[str] | None:
    """The words of a parsed block; None when the line-by-line parser must decide."""
    try:
        return column.cast(pa.string()).to_pylist()
    except pa.ArrowInvalid:
        if unicode_errors == "strict":
            return None  # the slow path names the line and byte offset
    words = decode_joined(column.to_pylist(), unicode_errors)
    return None if "" in words else words


def _arrow_owned(block: bytes) -> pa.Buffer:
    """A copy of ``block`` in pyarrow's own memory, for its CSV reader.

    The reader's worker threads may drop their last reference to the input after
    ``read_csv`` has returned. Were the input a buffer over a Python object
    (``pa.py_buffer``), freeing it would take the GIL from a native thread; at
    interpreter exit Python stops such a thread inside C++ frames that cannot unwind,
    and the process aborts after its work is done ("terminate called without an active
    exception", exit 134). A buffer pyarrow owns is freed without Python. The copy costs
    one pass over a block already in the cache.
    """
    buf = pa.allocate_buffer(len(block))
    np.frombuffer(buf, dtype=np.uint8)[:] = np.frombuffer(block, dtype=np.uint8)
    return buf


def _arrow_table(block: bytes, d: int, trailing: bool):
    """The block as a pyarrow table (word, d values[, empty trailing field]); None if it does not parse."""
    ncols = d + 2 if trailing else d + 1
    if b"\t" in block:
        block = block.translate(TAB_TO_SPACE)
    names = [str(i) for i in range(ncols)]
    types = {"0": pa.binary(), **{str(i): pa.float32() for i in range(1, d + 1)}}
    if trailing:
        types[str(d + 1)] = pa.binary()
    try:
        return pacsv.read_csv(
            _arrow_owned(block),
            read_options=pacsv.ReadOptions(column_names=names, block_size=_ARROW_BLOCK, use_threads=True),
            parse_options=_PARSE,
            convert_options=pacsv.ConvertOptions(column_types=types, null_values=[],
                                                 strings_can_be_null=False,
                                                 quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _fits_fast_path(block: bytes, d: int) -> bool:
    """Whether pyarrow may parse ``block``.

    Not when it starts with a byte-order mark (pyarrow would drop one that belongs to the
    first word), nor when its first line is too short to hold ``d`` values: a header's
    huge ``d`` is not worth ``d`` column names (the slow path reports the line).
    """
    first_end = block.find(b"\n")
    return not block.startswith(BOM) and 2 * d <= (first_end if first_end >= 0 else len(block))


def _parse_block_fast(block: bytes, d: int, trailing: bool, unicode_errors: str = "strict"):
    """Parse a block with pyarrow; None when anything is irregular (the slow path decides)."""
    if not _fits_fast_path(block, d):
        return None
    table = _arrow_table(block, d, trailing)
    if table is None:
        return None
    if trailing and table.num_rows and pc.max(pc.binary_length(table.column(d + 1))).as_py() != 0:
        return None
    lengths = pc.binary_length(table.column(0))
    if table.num_rows and not 0 < pc.min(lengths).as_py() <= pc.max(lengths).as_py() <= MAX_WORD_BYTES:
        return None  # an empty or too long word: the slow path names its line
    words = _fast_words(table.column(0), unicode_errors)
    if words is None:
        return None
    vectors = np.empty((table.num_rows, d), dtype=np.float32)
    for j in range(d):
        vectors[:, j] = table.column(j + 1).to_numpy()
    if not np.isfinite(vectors).all():
        return None
    return words, vectors


class _Where(NamedTuple):
    """Where a line stands, for error messages."""
    path: object
    line: int
    offset: int

    def error(self, message: str, *, byte: int = 0) -> VectorFileError:
        return VectorFileError(self.path, message, line=self.line, offset=self.offset + byte)


class _Layout(NamedTuple):
    """How the lines of one file are read."""
    d: int
    words_with_spaces: bool
    header: bool
    unicode_errors: str

    @property
    def expected(self) -> str:
        return f"{self.d} values after the word" + (" (the header's dimension)" if self.header else
                                                   " (the most common number of values on the first lines)")


def _split_line(raw: bytes, stripped: bytes, where: _Where, layout: _Layout) -> list[bytes]:
    """The word (as written) and the ``d`` value fields of a non-blank line."""
    d = layout.d
    if not layout.words_with_spaces:
        fields = stripped.split(b" ")
        if len(fields) != d + 1:
            raise where.error(f"expected {layout.expected}, found {len(fields) - 1}")
        return fields
    fields = stripped.rsplit(b" ", d)
    if len(fields) != d + 1:
        raise where.error(f"expected {layout.expected}, found {max(len(fields) - 1, 0)}")
    if fields[0].startswith(b" "):  # not the word " she": a separator first leaves the word empty
        raise where.error("empty word: the line starts with a space or tab; expected 'word v1 ... vd'")
    if b" " in fields[0]:
        _refuse_numbers_in_word(fields[0], where, layout)
    fields[0] = raw[:len(fields[0])]  # the word as written: its tabs stay tabs
    return fields


def _refuse_numbers_in_word(word: bytes, where: _Where, layout: _Layout) -> None:
    """A GloVe word with spaces has no number after its first piece: that is a value glued onto it.

    ``"x 0.1 0.2 0.3"`` with ``d = 2`` is a row with 3 values, not the word ``"x 0.1"``;
    ``"x 0.1 0.1.2 0.3"`` (a damaged value) is not the word ``"x 0.1 0.1.2"`` either.
    """
    pieces = word.split(b" ")[1:]
    numbers = [piece for piece in pieces if is_number(piece)]
    if not numbers:
        return
    extra = next((k for k, piece in enumerate(reversed(pieces)) if not is_number(piece)), len(pieces))
    if extra:
        raise where.error(f"expected {layout.expected}, found {layout.d + extra}")
    raise where.error(f"the word {quote_bytes(word)} contains the number {quote_bytes(numbers[0])}: a value "
                      f"out of place or a damaged line (a GloVe word may contain spaces, but no number after "
                      f"its first part); expected {layout.expected}")


def _decode_word(raw: bytes, where: _Where, unicode_errors: str) -> str:
    try:
        word = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if unicode_errors == "strict":
            raise where.error(f"undecodable UTF-8 in the word {quote_bytes(raw)} (byte {exc.start}: {exc.reason}); "
                              f"expected UTF-8 text (unicode_errors='ignore' or 'replace' accept it)",
                              byte=exc.start) from None
        word = raw.decode("utf-8", unicode_errors)
        if not word:
            raise where.error(f"the word {quote_bytes(raw)} is empty once its undecodable bytes are dropped "
                              f"(unicode_errors={unicode_errors!r})") from None
    if not word:
        raise where.error("empty word: the line starts with a space or tab; expected 'word v1 ... vd'")
    return word


def _parse_values(fields: list[bytes], word: str, where: _Where) -> np.ndarray:
    j = next((j for j, f in enumerate(fields) if not is_number(f)), None)  # stricter than float(): no "1_0"
    if j is not None:
        raise where.error(f"value {j + 1} of {quote(word)} is not a number: {quote_bytes(fields[j])}")
    values = parse_float32(fields)  # 1e39 becomes inf and is reported below
    if not np.isfinite(values).all():
        j = int(np.flatnonzero(~np.isfinite(values))[0])
        raise where.error(f"value {j + 1} of {quote(word)} is {quote_bytes(fields[j])} "
                          f"(as float32: {values[j]}); expected finite numbers")
    return values


def _parse_block_slow(block: bytes, where: _Where, layout: _Layout):
    """Parse a block line by line: exact error messages, and GloVe words containing spaces.

    ``where`` is the first line of the block and its byte offset.
    """
    words, rows = [], []
    offset = where.offset
    for k, raw in enumerate(block.split(b"\n")):
        here = _Where(where.path, where.line + k, offset)
        offset += len(raw) + 1
        stripped = raw.translate(TAB_TO_SPACE).rstrip(b" \r\n")
        if not stripped.strip():
            continue
        fields = _split_line(raw, stripped, here, layout)
        if len(fields[0]) > MAX_WORD_BYTES:
            raise here.error(f"a word of {len(fields[0])} bytes ({quote_bytes(fields[0][:40])}...); expected words "
                             f"of at most {MAX_WORD_BYTES} bytes")
        word = _decode_word(fields[0], here, layout.unicode_errors)
        words.append(word)
        rows.append(_parse_values(fields[1:], word, here))
    vectors = np.array(rows, dtype=np.float32) if rows else np.zeros((0, layout.d), np.float32)
    return words, vectors


def _line_of_row(block: bytes, first_line: int, row: int) -> int:
    """Line number of the ``row``-th (0-based) non-blank line of ``block``."""
    seen = -1
    for k, raw in enumerate(block.split(b"\n")):
        if raw.strip():
            seen += 1
            if seen == row:
                return first_line + k
    return first_line + block.count(b"\n")


def _count_lines(path, stop_at: int | None) -> int:
    """Lines in a plain file (a last line without newline counts), stopping early at ``stop_at``."""
    count, last = 0, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(16 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
            if stop_at is not None and count >= stop_at:
                return count
    return count + (last != b"\n")


def _read_on_to_line_end(fh, head: bytes) -> tuple[bytes, bool]:
    """``head`` and more, until a line end, the end of the file or :data:`MAX_FIRST_LINE` bytes."""
    complete = False
    while not complete and b"\n" not in head and len(head) < MAX_FIRST_LINE:
        more = fh.read(len(head))
        complete = len(more) < len(head)
        head += more
    return head, complete


class _TextReader:
    """One read of a text file: the header's count, where we are, and the rows so far."""

    def __init__(self, path, *, header: bool, limit, words_with_spaces: bool, unicode_errors: str):
        self.path, self.header, self.limit = path, header, limit
        self.words_with_spaces, self.unicode_errors = words_with_spaces, unicode_errors
        self.words: list[str] = []
        self.parts: list[np.ndarray] = []
        self.rows = 0
        self.n: int | None = None
        self.line_no, self.offset = 1, 0

    def _read_head(self, fh) -> tuple[bytes, bool]:
        """The first bytes, to the end of the first line at least (a BOM dropped); and whether that is all.

        A GloVe first line may run on to :data:`MAX_FIRST_LINE`; a header line must end
        within :data:`HEAD_BYTES`.  A CR that ends no line is refused here, before a
        CR-only file is read on as one long line.
        """
        head = fh.read(HEAD_BYTES)
        complete = len(head) < HEAD_BYTES
        if head.startswith(BOM):  # dropped on purpose: the file reads the same as without it
            head, self.offset = head[len(BOM):], len(BOM)
        self._refuse_lone_cr(head, 1, self.offset)
        if not self.header and not complete and b"\n" not in head:
            head, complete = _read_on_to_line_end(fh, head)
        if b"\n" not in head and not complete:
            if self.header:
                raise bad_header_error(self.path, head[:200], offset=self.offset)
            raise VectorFileError(self.path, f"no line end in the first {len(head)} bytes; expected lines "
                                             f"'word v1 ... vd'", line=1, offset=self.offset)
        if not head.strip():
            what = "a header line 'count dim'" if self.header else "lines 'word v1 ... vd'"
            raise VectorFileError(self.path, f"empty file: expected {what}", line=1, offset=0)
        return head, complete

    def _refuse_lone_cr(self, block: bytes, line: int, offset: int) -> None:
        pos = lone_cr(block)
        if pos >= 0:
            raise lone_cr_error(self.path, line + block.count(b"\n", 0, pos), offset + pos)

    def start(self, fh, block_bytes: int) -> tuple[bytes, int]:
        """Read the first line(s); returns the first data (carried into the blocks) and the block size."""
        head, complete = self._read_head(fh)
        if self.header:
            nl = head.find(b"\n")
            first = head[:nl] if nl >= 0 else head
            self.n, d = _parse_header(first, self.path, self.offset)
            data = head[len(first) + 1:]
            self.line_no, self.offset = 2, self.offset + len(first) + 1
        else:
            d = _glove_dim(head, complete, self.path, self.offset)
            data = head
        first_data = data.split(b"\n", 1)[0]
        self.layout = _Layout(d, self.words_with_spaces, self.header, self.unicode_errors)
        self.trailing = first_data.rstrip(b"\r").endswith((b" ", b"\t"))
        self.max_line = _LINE_SLACK + _VALUE_BYTES * d
        # the rows wanted: the header's count (rows past it are an error) or the limit, if smaller
        self.want = self.limit if self.n is None else min(self.n, self.limit if self.limit is not None else self.n)
        if self.want is not None:  # do not read far past the rows wanted
            block_bytes = min(block_bytes, max(1 << 16, int(self.want * (len(first_data) + 1) * 1.5)))
        n_alloc = self._rows_to_allocate(d)
        self.out = np.empty((n_alloc, d), np.float32) if n_alloc is not None else None
        return data, block_bytes

    def _rows_to_allocate(self, d: int) -> int | None:
        """Rows to preallocate (None for gzip input: its parsed blocks are concatenated at the end).

        Never more than the bytes left can hold (:data:`_MIN_ROW`), whatever a header
        says: a count too large for the file is reported once the rows run out ("the
        header says n words but the file ends after k").
        """
        if is_gzip(self.path):
            return None
        rows = self.n if self.n is not None else _count_lines(self.path, self.limit)
        if self.limit is not None:
            rows = min(rows, self.limit)
        return min(rows, _max_rows(self.path.stat().st_size - self.offset, d))

    def blocks(self, fh, carry: bytes, block_bytes: int):
        """Yield blocks of whole lines (the last one may lack its newline); a line over the cap is an error."""
        while True:
            chunk = fh.read(block_bytes)
            if not chunk:
                if carry:
                    yield carry
                return
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                if len(data) > self.max_line:  # every block before it was fed: line_no is this line
                    raise VectorFileError(self.path, f"a line longer than {self.max_line} bytes without a line "
                                                     f"end; expected lines 'word v1 ... v{self.layout.d}'",
                                          line=self.line_no, offset=self.offset)
                carry = data  # one line longer than a block: keep reading
                continue
            carry = data[cut:]
            yield data[:cut]

    def _more_rows_error(self, block: bytes, row: int) -> VectorFileError:
        return VectorFileError(self.path, f"the header says {self.n} words but there are more rows",
                               line=_line_of_row(block, self.line_no, row))

    def _checks_past_count(self) -> bool:
        """Whether rows past the header's count are an error (rather than past the limit)."""
        return self.n is not None and (self.limit is None or self.limit > self.n)

    def feed(self, block: bytes) -> bool:
        """Take one block of whole lines; False when no more are needed."""
        self._refuse_lone_cr(block, self.line_no, self.offset)
        if self.want is not None and self.rows >= self.want:
            if not (self._checks_past_count() and self.rows == self.n):
                return False
            if block.strip():  # all n rows read: anything but blank lines is one too many
                raise self._more_rows_error(block, 0)
        else:
            where = _Where(self.path, self.line_no, self.offset)
            parsed = _parse_block_fast(block, self.layout.d, self.trailing, self.unicode_errors)
            self._store(block, *(parsed or _parse_block_slow(block, where, self.layout)))
        self.line_no += block.count(b"\n")
        self.offset += len(block)
        return True

    def _store(self, block: bytes, words: list[str], vectors: np.ndarray) -> None:
        k = len(words)
        if self._checks_past_count() and self.rows + k > self.n:
            raise self._more_rows_error(block, self.n - self.rows)
        if self.want is not None:
            k = min(k, self.want - self.rows)
        self.words.extend(words[:k] if k < len(words) else words)
        if self.out is not None and self.rows + k > len(self.out):
            # the file-size bound makes this unreachable; were it wrong, go on in parts, not truncate
            self.parts, self.out = [self.out[:self.rows]], None
        if self.out is not None:
            self.out[self.rows:self.rows + k] = vectors[:k]
        else:
            self.parts.append(vectors[:k])
        self.rows += k

    def finish(self, name) -> Embedding:
        if self.n is not None and self.rows < self.n and (self.limit is None or self.rows < self.limit):
            raise VectorFileError(self.path, f"the header says {self.n} words but the file ends after "
                                             f"{self.rows}", line=self.line_no)
        out = self.out
        if out is None:
            out = np.concatenate(self.parts) if self.parts else np.zeros((0, self.layout.d), np.float32)
        elif self.rows < len(out):
            out = out[:self.rows]
        first_row_line = 2 if self.header else 1
        return make_embedding(self.words, out, self.path, name, line_of=lambda r: r + first_row_line)


def read_text(path, *, header: bool, limit: int | None = None, name: str | None = None,
              words_with_spaces: bool = False, block_bytes: int = BLOCK_BYTES,
              unicode_errors: str = "strict") -> Embedding:
    """Read a text vector file (gzip-compressed or not).

    Parameters
    ----------
    path : path-like
    header : bool
        True for word2vec text / fastText ``.vec`` (first line ``"count dim"``), False
        for GloVe (the dimension is the number of values on the first line).
    limit : int, optional
        Keep the first ``limit`` words; reading stops there.
    name : str, optional
        Label of the embedding (default: the file name).
    words_with_spaces : bool
        Take the last ``d`` fields as the numbers and the rest as the word (GloVe 840B
        has a few words with spaces).  When false, a line with more than ``d`` values
        is an error.
    block_bytes : int
        Bytes of whole lines parsed at once.
    unicode_errors : {"strict", "ignore", "replace"}
        Undecodable UTF-8 in a word: an error naming the line and byte offset, dropped
        bytes, or U+FFFD (gensim's ``unicode_errors``).

    Returns
    -------
    Embedding
    """
    path = require_file(path)
    reader = _TextReader(path, header=header, limit=check_limit(limit), words_with_spaces=words_with_spaces,
                         unicode_errors=check_unicode_errors(unicode_errors))
    with open_binary(path) as fh:
        carry, block_bytes = reader.start(fh, block_bytes)
        for block in reader.blocks(fh, carry, block_bytes):
            if not reader.feed(block):
                break
    return reader.finish(name)


def _check_shape(emb: Embedding, target, *, header: bool, format_name: str) -> None:
    """Refuse a shape the reader cannot read back: no dimension, too large a one, or GloVe with no word."""
    if not header and len(emb) == 0:
        # A GloVe file's dimension is the number of values on its first lines.
        raise EmbdebiasError(f"{target}: cannot write an empty embedding (0 words) in {format_name} format: "
                             f"it has no header to keep the dimension; use 'word2vec-text' or 'native'")
    top = MAX_DIM if header else MAX_FIRST_LINE // (_VALUE_BYTES // 4)
    if not 1 <= emb.dim <= top:
        raise EmbdebiasError(f"{target}: {format_name} format cannot store vectors of dimension {emb.dim} (its "
                             f"reader takes 1 to {top}); use 'native'")


def _examples(words: list[str], has) -> str:
    """Up to 5 of ``words`` for which ``has(word)``, each quoted short."""
    return "[" + ", ".join(quote(w) for w in [w for w in words if has(w)][:5]) + "]"


def _check_words(words: list[str], target, *, header: bool, format_name: str) -> None:
    """Refuse words the reader would read back differently (vectorized over the words)."""
    array = pa.array(words, pa.string())
    lengths = pc.binary_length(array)
    check_no_empty_word(pc.equal(lengths, 0).to_numpy(zero_copy_only=False), target, format_name)
    if len(words) and pc.max(lengths).as_py() > MAX_WORD_BYTES:
        raise EmbdebiasError(f"{target}: {format_name} format cannot store words longer than {MAX_WORD_BYTES} "
                             f"bytes (its reader caps line lengths): "
                             f"{_examples(words, lambda w: len(w.encode('utf-8')) > MAX_WORD_BYTES)}; use 'native'")
    separators = (("\n", "a newline", "'gensim-kv'"), ("\r", "a carriage return", "'native'"),
                  (" ", "a space", "'glove' or 'native'"), ("\t", "a tab", "'glove' or 'native'"))
    # GloVe readers take the last d fields as numbers: spaces and tabs are fine there
    for bad_char, what, instead in separators if header else separators[:2]:
        if pc.any(pc.match_substring(array, bad_char)).as_py():
            raise EmbdebiasError(f"{target}: {format_name} format cannot store words containing "
                                 f"{what}: {_examples(words, lambda w, c=bad_char: c in w)}; use {instead}")
    if not header:
        _check_glove_words(words, array, target, format_name)


_LEADING_WHITESPACE = " \t\x0b\x0c"


def _check_glove_words(words: list[str], array, target, format_name: str) -> None:
    """Refuse GloVe words that read back as more values, and a first word the reader takes for a BOM."""
    if words and words[0].startswith("\ufeff"):
        raise EmbdebiasError(f"{target}: {format_name} format cannot store the first word {quote(words[0])}: it "
                             f"starts with U+FEFF, which the {format_name} "
                             f"reader drops as a byte-order mark; put another word first or use 'word2vec-text'")

    leading = pc.match_substring_regex(array, r"^[ \t\x0b\x0c]").to_numpy(zero_copy_only=False)
    if leading.any():  # a separator first reads as an empty word; a first line may even pass for a header
        examples = _examples(words, lambda w: w[:1] in _LEADING_WHITESPACE)
        raise EmbdebiasError(f"{target}: {format_name} format cannot store words starting with whitespace: "
                             f"{examples}; use 'native' or 'gensim-kv'")

    def has_number(w: str) -> bool:  # after its first part: what the reader refuses (_refuse_numbers_in_word)
        return any(is_number(piece.encode("utf-8")) for piece in w.replace("\t", " ").split(" ")[1:])

    spaced = pc.match_substring_regex(array, r"[ \t]").to_numpy(zero_copy_only=False)
    spaced_words = np.asarray(words, dtype=object)[spaced].tolist()
    if any(has_number(w) for w in spaced_words):
        raise EmbdebiasError(f"{target}: {format_name} format cannot store words with a space or tab "
                             f"followed by a number (the reader takes that number for a value): "
                             f"{_examples(spaced_words, has_number)}; use 'native' or 'gensim-kv'")


def _check_glove_first_line(emb: Embedding, words: list[str], target) -> None:
    """Refuse a first line that would read as a word2vec header (``"5 3"``: word "5", value 3)."""
    if emb.dim != 1 or not HEADER_LINE.fullmatch(words[0].encode("utf-8") + b" 0"):
        return
    value = pa.array(emb.take([0])[:, 0]).cast(pa.string())[0].as_py()
    if HEADER_LINE.fullmatch(f"{words[0]} {value}".encode("utf-8")):
        raise EmbdebiasError(f"{target}: the first GloVe line would be {words[0]} {value!r}, which reads as a "
                             f"word2vec header 'count dim'; put another word first or use 'word2vec-text'")


def write_text(emb: Embedding, path, *, header: bool, format_name: str,
               chunk_rows: int = DEFAULT_CHUNK_ROWS, inputs=()) -> None:
    """Write ``emb`` as text, atomically and in chunks (gzip when ``path`` ends in ``.gz``).

    Values are written with the shortest decimal that reads back as the same float32
    (pyarrow's float-to-string cast), so a round trip is exact.
    """
    target = Path(path)
    words = emb.words.tolist()
    _check_shape(emb, target, header=header, format_name=format_name)
    _check_words(words, target, header=header, format_name=format_name)
    if not header:
        _check_glove_first_line(emb, words, target)
    inputs = (*inputs, emb.path) if emb.path else inputs
    with atomic_file(target, inputs=inputs) as tmp, open_output(tmp, target) as fh:
        if header:
            fh.write(f"{len(emb)} {emb.dim}\n".encode("ascii"))
        for start, stop, block in emb.iter_chunks(chunk_rows):
            check_block_finite(block, start, words, target)
            columns = [pa.array(words[start:stop], pa.string())]
            columns += [pa.array(block[:, j]).cast(pa.string()) for j in range(block.shape[1])]
            lines = pc.binary_join_element_wise(*columns, " ")
            listed = pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines)
            fh.write(pc.binary_join(listed, "\n")[0].as_buffer())
            fh.write(b"\n")
