"""Small helpers shared by the format readers and writers."""

from __future__ import annotations

import codecs
import contextlib
import gzip
import os
import re
import stat
from collections import Counter
from pathlib import Path

import numpy as np

# The gzip, unicode_errors and output-stream helpers live in the bottom layer, shared with the
# corpus reader and cda.
from .._files import GZIP_ERRORS, GZIP_MAGIC, UNICODE_ERRORS, check_unicode_errors, open_output  # noqa: F401
from ..embedding import Embedding, drop_duplicates, owned
from ..errors import EmbdebiasError, NonFiniteError, VectorFileError, VectorFileNotFoundError, quote
from ..vocab import Vocabulary, word_hashes  # noqa: F401 (word_hashes: for the readers)

#: Maps a tab to a space: text formats take a tab as a field separator, like a space.
TAB_TO_SPACE = bytes.maketrans(b"\t", b" ")
#: The header line of word2vec text/binary and fastText ``.vec``: ``"count dim"``, two unsigned
#: decimal integers (at most 18 digits: more is no real file, and int() of thousands of digits fails).
HEADER_LINE = re.compile(rb"\s*\d{1,18}[ \t]+\d{1,18}\s*")
#: A UTF-8 byte-order mark: the text readers drop it at the start of a file.
BOM = b"\xef\xbb\xbf"
#: The longest word any format reads or writes (bytes of UTF-8): a few KiB is generous (GloVe's
#: longest word is about 1 KiB, the word2vec C tool cuts words at 100 bytes), and it keeps a
#: file's first record within the bytes format detection looks at.
MAX_WORD_BYTES = 8 << 10
#: Longest first line read to find a GloVe file's dimension, or to see a first record whole when
#: detecting a format (about 1M values).
MAX_FIRST_LINE = 16 << 20
#: What a text value may look like: a decimal number (NaN and infinity are number-like, so
#: that they are reported as non-finite values, not as part of the word).  Stricter than
#: ``float()``, which also takes ``1_0`` and surrounding white space; the same as what
#: pyarrow's CSV parser takes, so the fast and the line-by-line parsers agree.
_NUMBER = re.compile(rb"[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|nan|inf(?:inity)?)", re.IGNORECASE)


def decode_joined(raw_words: list[bytes], unicode_errors: str) -> list[str]:
    """Decode many words (none containing a newline) in one call, with ``unicode_errors``.

    Joined with newlines: an undecodable sequence never swallows the ASCII newline after
    it, so the split gives one string per word, each as decoding it alone would.
    """
    if not raw_words:
        return []
    return b"\n".join(raw_words).decode("utf-8", unicode_errors).split("\n")


def is_gzip(path) -> bool:
    """Whether the file at ``path`` starts with the gzip magic number."""
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def open_binary(path):
    """Open ``path`` for reading bytes, decompressing transparently if it is gzip."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


@contextlib.contextmanager
def gzip_errors(path):
    """Turn the errors of a truncated or damaged gzip stream into a :class:`VectorFileError`."""
    try:
        yield
    except GZIP_ERRORS as exc:
        raise VectorFileError(path, f"truncated or damaged gzip data: {exc or type(exc).__name__}") from None


def check_limit(limit) -> int | None:
    """Validate ``limit`` (None or a non-negative integer)."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 0:
        raise EmbdebiasError(f"limit must be a non-negative integer or None, got {limit!r}")
    return int(limit)


_SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def require_file(path, *, allow_dir: bool = False) -> Path:
    """``path`` as a Path, or a :class:`VectorFileError` if it is not a readable regular file.

    FIFOs, devices (``/dev/zero``) and sockets are refused before anything opens them:
    reading one can block forever or never end.  ``allow_dir`` admits a directory (a
    native-format embedding).
    """
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise VectorFileNotFoundError(path) from None
    except (OSError, ValueError) as exc:  # permission, name too long, a NUL byte in the name
        raise VectorFileError(path, f"cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    if stat.S_ISDIR(mode):
        if allow_dir:
            return path
        raise VectorFileError(path, "is a directory, expected a vector file "
                                    "(or a native-format directory with embdebias.json)")
    if not stat.S_ISREG(mode):
        kind = next((what for test, what in _SPECIAL_FILES if test(mode)), "not a regular file")
        raise VectorFileError(path, f"is {kind}, not a regular file: expected a vector file "
                                    f"(special files are refused: reading one may block or never end)")
    return path


def make_embedding(words: list[str], vectors: np.ndarray, path, name, line_of=None,
                   hashes: list[np.ndarray] | None = None) -> Embedding:
    """Build the Embedding of a parsed file, dropping duplicate words (first kept) with a warning.

    ``vectors`` must be the reader's own array (or a read-only memory map): it is
    marked read-only and shared, not copied.  ``hashes``: the :func:`word_hashes` of
    the words' bytes in row order (in pieces), from a reader that decoded them strictly
    (then equal words are equal bytes); when they are distinct, so are the words, and they
    index the vocabulary (no dict).
    """
    vocab = Vocabulary._hashed_if_unique(words, hashes) if hashes is not None else None
    if vocab is None:
        vocab = Vocabulary._indexed_if_unique(words)  # the dict checks and indexes at once
    if vocab is None:
        keep = drop_duplicates(words, os.fspath(path), line_of=line_of)
        words = [words[i] for i in keep]
        vectors = vectors[keep]
        vocab = Vocabulary._from_unique(words)
    if vectors.dtype != np.float32:
        vectors = vectors.astype(np.float32)
    # A checked Vocabulary skips the second duplicate scan in Embedding.__init__.
    return Embedding(vocab, owned(vectors), name=name or Path(path).name, path=os.fspath(path))


def encode_words(words, path, *, allow_space: bool, format_name: str) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 encode ``words`` at once: the bytes (uint8) and the (n + 1,) start offsets.

    Words are joined with newlines and encoded in one call; an empty word or a word
    that contains a newline (or a space when ``allow_space`` is false) cannot be
    stored in the word2vec formats and raises :class:`EmbdebiasError`.
    """
    words = words if isinstance(words, list) else list(words)
    if not words:
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    joined = np.frombuffer(("\n".join(words) + "\n").encode("utf-8"), dtype=np.uint8)
    ends = np.flatnonzero(joined == 10)
    if len(ends) != len(words):
        bad = [w for w in words if "\n" in w][:5]
        raise EmbdebiasError(f"{path}: {format_name} format cannot store words containing a newline: "
                             f"{bad!r}; use 'gensim-kv' (no text format and not 'native' can)")
    starts = np.empty(len(words) + 1, np.int64)
    starts[0] = 0
    starts[1:] = ends + 1
    check_no_empty_word(np.diff(starts) == 1, path, format_name)
    if not allow_space and np.any(joined == 32):
        bad = [w for w in words if " " in w][:5]
        raise EmbdebiasError(f"{path}: {format_name} format cannot store words containing a space "
                             f"(readers split the word at the first space): {bad!r}; "
                             f"use 'glove' or 'native'")
    return joined, starts


def check_no_empty_word(is_empty: np.ndarray, path, format_name: str) -> None:
    """Refuse to write empty words (the text and word2vec readers reject them)."""
    if np.any(is_empty):
        r = int(np.flatnonzero(is_empty)[0])
        raise EmbdebiasError(f"{path}: {format_name} format cannot store an empty word (row {r}); "
                             f"use 'native'")


def gather_ranges(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenate ``buf[starts[i]:starts[i] + lengths[i]]`` for all i, vectorized."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, buf.dtype)
    csum = np.cumsum(lengths)
    offsets_in_out = csum - lengths
    idx = np.arange(total, dtype=np.int64) + np.repeat(starts - offsets_in_out, lengths)
    return buf[idx]


def check_block_finite(block: np.ndarray, start: int, words, target) -> None:
    """Raise :class:`NonFiniteError` naming the first row of ``block`` with NaN or infinity.

    Writers call this per chunk so that they never produce a file the readers reject.
    """
    finite = np.isfinite(block).all(axis=1)
    if not finite.all():
        r = start + int(np.flatnonzero(~finite)[0])
        raise NonFiniteError(f"{target}: the vector of {words[r]!r} (row {r}) has NaN or infinite "
                             f"values; refusing to write an unreadable file")


def check_finite(emb: Embedding, target) -> None:
    """:func:`check_block_finite` over all of ``emb``, in chunks."""
    for start, _, block in emb.iter_chunks():
        check_block_finite(block, start, emb.words, target)


def split_fields(raw: bytes) -> list[bytes]:
    """The fields of a text line: separated by one space or tab each."""
    return raw.translate(TAB_TO_SPACE).rstrip(b" \r\n").split(b" ")


def is_number(field: bytes) -> bool:
    """Whether ``field`` is a number as the text formats write one (see :data:`_NUMBER`)."""
    return _NUMBER.fullmatch(field) is not None


def parse_float32(fields: list[bytes]) -> np.ndarray:
    """Decimal fields (checked with :func:`is_number`) as float32, each correctly rounded from its decimal.

    The same parser as the fast path's pyarrow CSV reader (which rounds the decimal to
    float32 once); ``float()`` then float32 rounds twice, and is one ulp off where the
    float64 lands on a float32 midpoint (``1.0000000596046448`` must give 1.0000001, not
    1.0; a value just below the float32 maximum's midpoint must not become infinite).
    """
    import pyarrow as pa  # (imported here: the binary readers need no pyarrow)

    offsets = np.zeros(len(fields) + 1, dtype=np.int32)
    np.cumsum([len(f) for f in fields], out=offsets[1:])
    # From buffers, not pa.array(list): that imports pandas on first use (a quarter of a second).
    raw = pa.Array.from_buffers(pa.binary(), len(fields), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(fields))])
    parsed = raw.cast(pa.float32())
    return np.frombuffer(parsed.buffers()[1], dtype=np.float32, count=len(parsed)).copy()


def quote_bytes(raw: bytes, limit: int = 60) -> str:
    """:func:`~embdebias.errors.quote` of raw input: at most about ``limit + 20`` characters.

    Undecodable bytes are shown as ``\\xNN``; only the first ``4 * limit`` bytes are
    decoded, so quoting a huge line costs nothing.
    """
    shown = quote(raw[:4 * limit].decode("utf-8", "backslashreplace"), limit)
    return shown if len(shown) <= limit + 20 else shown[:limit + 17] + "..."


def trailing_values(fields: list[bytes]) -> int:
    """How many number-like fields end a line, leaving at least one field for the word."""
    d = 0
    while d < len(fields) - 1 and is_number(fields[-1 - d]):
        d += 1
    return d


#: Non-blank lines looked at to find the dimension of a headerless (GloVe) file.
DIM_SAMPLE_LINES = 100


def sample_lines(data: bytes, complete: bool, first_line: int = 1) -> list[tuple[int, bytes]]:
    """The first non-blank lines of ``data`` (up to :data:`DIM_SAMPLE_LINES`), with their line numbers.

    ``complete``: ``data`` runs to the end of the file (else its last, partial line is
    left out).
    """
    lines = data.split(b"\n", DIM_SAMPLE_LINES * 4)
    if not complete or len(lines) > DIM_SAMPLE_LINES * 4:
        lines = lines[:-1]
    found = [(first_line + k, line) for k, line in enumerate(lines) if line.strip()]
    return found[:DIM_SAMPLE_LINES]


def glove_dim(lines: list[tuple[int, bytes]]) -> int:
    """Dimension of a headerless file from its first lines (:func:`sample_lines`); 0 if none has values.

    Each line's count of values is the number of number-like fields at its end (so a
    GloVe 840B word with spaces does not add to it); the dimension is the most common
    non-zero count, ties going to the count seen first.  So one damaged line, even the
    first, cannot decide the dimension of every row: it is reported as a row with the
    wrong number of values.
    """
    counts = Counter(d for d in (trailing_values(split_fields(line)) for _, line in lines) if d)
    return counts.most_common(1)[0][0] if counts else 0


def damaged_header(line: bytes, d: int) -> bool:
    """Whether a first line of number-like fields only, not a valid header, disagrees with the rows' ``d``.

    Such a line (``40 8 3``, ``-1 8``, ``40.0 8``) is a damaged ``"count dim"`` header,
    never a GloVe row (whose word would be a number and whose values too few or many).
    """
    fields = split_fields(line)
    return all(is_number(f) for f in fields) and trailing_values(fields) != d


def bad_header_error(path, first: bytes, line: int = 1, offset: int = 0) -> VectorFileError:
    """The error for a first line that should be, but is not, a word2vec / fastText header."""
    shown = quote_bytes(first.rstrip(b"\r\n"))
    return VectorFileError(path, f"expected a header line 'count dim': exactly two unsigned decimal integers, "
                                 f"the number of words and the dimension (at least 1), e.g. '400000 300'; "
                                 f"found {shown}", line=line, offset=offset)


def lone_cr(data: bytes) -> int:
    """Position of the first carriage return in ``data`` not followed by a line feed, or -1.

    A CR at the very end of ``data`` counts as a line end.  Cheap when there is none:
    two counts (C speed); the position is looked for only when they disagree.
    """
    if b"\r" not in data:
        return -1
    trailing = data.endswith(b"\r")
    if data.count(b"\r") == data.count(b"\r\n") + trailing:
        return -1
    pos = data.find(b"\r")
    while data[pos + 1:pos + 2] == b"\n" or pos == len(data) - 1:
        pos = data.find(b"\r", pos + 1)
    return pos


#: The first bytes looked at (by :func:`~embdebias.io.detect.detect_format` and :func:`looks_like_text`).
SNIFF_BYTES = 1 << 16


def looks_like_text(path) -> bool:
    """Whether the first :data:`SNIFF_BYTES` of ``path`` (decompressed, for gzip) are UTF-8 text without NUL.

    Evidence for advice that only text survives (a line-end fix) and for telling a user
    that a file named as text holds another format: a word2vec binary file's float bytes
    are almost never UTF-8 without NUL over 64 KiB. False when the file cannot be read.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
        if head[:2] == GZIP_MAGIC:
            with gzip.open(path, "rb") as fh:
                head = fh.read(SNIFF_BYTES)
    except (OSError, *GZIP_ERRORS):
        return False
    if b"\x00" in head:
        return False
    try:  # a character cut at the end of the head is not an error
        codecs.getincrementaldecoder("utf-8")().decode(head, final=len(head) < SNIFF_BYTES)
    except UnicodeDecodeError:
        return False
    return True


def lone_cr_error(path, line: int, offset: int) -> VectorFileError:
    """The error for a carriage return inside a line (CR-only line ends are not read)."""
    return VectorFileError(path, "a carriage return (CR) that is not followed by a line feed: the file has "
                                 "CR-only (classic Mac OS) line ends or a stray CR inside a line; expected LF or "
                                 "CRLF line ends" + _line_end_fix(path), line=line, offset=offset)


def _line_end_fix(path) -> str:
    """How to fix the line ends, only where that fix is right: ``tr`` rewrites every CR byte, which only
    a plain text file survives (a binary file read as text, or gzip, would be corrupted)."""
    try:
        with open(path, "rb") as fh:
            compressed = fh.read(2) == GZIP_MAGIC
    except OSError:
        return ""
    if not looks_like_text(path):
        return ""  # binary content read as text: io.load says what it is instead
    return " (convert the decompressed text with: tr '\\r' '\\n')" if compressed else " (convert with: tr '\\r' '\\n')"


#: Lines (records) looked at to tell word2vec text from word2vec binary.
SNIFF_RECORDS = 10


def text_records_ok(payload: bytes, d: int, complete: bool) -> bool:
    """Whether the lines after a ``"count d"`` header are all ``word v1 ... vd`` (up to SNIFF_RECORDS).

    ``complete``: ``payload`` runs to the end of the file (else its last, partial line is
    not looked at).
    """
    lines = payload.split(b"\n")
    if not complete and len(lines) > 1:
        lines = lines[:-1]
    rows = [line for line in lines if line.strip()][:SNIFF_RECORDS]
    for row in rows:
        fields = split_fields(row)
        if len(fields) != d + 1 or not fields[0] or not all(is_number(f) for f in fields[1:]):
            return False
    return bool(rows)


def binary_records_ok(payload: bytes, n: int, d: int, complete: bool) -> bool:
    """Whether ``payload`` (what follows the header) starts with well-formed word2vec binary records.

    A record is a non-empty word without newline, a space, ``4 d`` bytes and an optional
    newline; the first ``min(n, SNIFF_RECORDS)`` must fit (a record cut by the end of an
    incomplete ``payload`` counts as fitting).
    """
    pos = 0
    for _ in range(min(n, SNIFF_RECORDS)):
        space = payload.find(b" ", pos)
        if space < 0:
            return not complete and pos > 0
        if space == pos or b"\n" in payload[pos:space]:
            return False
        end = space + 1 + 4 * d
        if end > len(payload):
            return not complete
        pos = end + (payload[end:end + 1] == b"\n")
    return True
