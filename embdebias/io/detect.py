"""Which format a vector file is: :func:`detect_format` looks at the content, not the name.

The formats whose content starts with a mark of their own (the ``signature`` of their
:class:`~embdebias.io.formats.Format` record: gensim's pickle, fastText's magic number)
are looked for first, in the table's order; then a ``"count dim"`` header line
(word2vec binary or text, fastText ``.vec``), an old fastText model's settings, and
GloVe's ``word v1 ... vd`` lines. A directory is native if it holds ``embdebias.json``.
"""

from __future__ import annotations

import codecs
import gzip
import os
from pathlib import Path

from ..errors import UnknownFormatError, VectorFileError, VectorFileNotFoundError
from ._common import (
    BOM,
    GZIP_ERRORS,
    GZIP_MAGIC,
    HEADER_LINE,
    SNIFF_BYTES,
    MAX_FIRST_LINE,
    MAX_WORD_BYTES,
    bad_header_error,
    binary_records_ok,
    damaged_header,
    glove_dim,
    gzip_errors,
    is_number,
    lone_cr,
    require_file,
    sample_lines,
    split_fields,
    text_records_ok,
    trailing_values,
)
from .default import BUILTIN_NAMES
from .formats import FASTTEXT_MAGIC, TABLE, looks_like_fasttext, looks_like_old_fasttext, looks_like_pickle
from .native import is_native

def _detect_after_header(first: bytes, payload: bytes, suffixes: list[str], compressed: bool,
                         complete: bool) -> str:
    """word2vec text, fastText .vec or word2vec binary, from what follows a 'count dim' line.

    Both readings are tried on the first records: text lines ``word v1 ... vd`` with the
    header's ``d``, and binary records (word, space, ``4 d`` bytes).  When exactly one
    fits, that is the format; when both do (a tiny file can be valid both ways, e.g.
    ``"1 1\\nw 1234\\n"``) the extension decides; when neither does, a first line of a
    word and numbers means a damaged text file (its reader names the line).
    """
    text = "fasttext-vec" if ".vec" in suffixes else "word2vec-text"
    by_name = "word2vec-bin" if _binary_by_name(suffixes, compressed) else text
    n, d = map(int, first.split())
    word_end = min((i for i in map(payload.find, (b" ", b"\t", b"\n")) if i >= 0), default=-1)
    if word_end < 0 and not complete or word_end > MAX_WORD_BYTES:
        return by_name  # a first word too long for any format: its reader says so, whichever it is
    if not payload.strip() or d < 1:
        return by_name  # no record to look at (or a bad header the reader reports): trust the extension
    is_text = text_records_ok(payload, d, complete)
    is_binary = binary_records_ok(payload, n, d, complete)
    if is_text == is_binary:
        # both: the extension decides; neither: a first line of a word and numbers is damaged text
        return by_name if is_text else (text if _damaged_text_row(payload.split(b"\n", 1)[0], d) else "word2vec-bin")
    return text if is_text else "word2vec-bin"


def _binary_by_name(suffixes: list[str], compressed: bool) -> bool:
    return ".bin" in suffixes or (compressed and ".txt" not in suffixes and ".vec" not in suffixes)


def _damaged_text_row(line: bytes, d: int) -> bool:
    """Whether a line that is no valid row is still text: a word and numbers, or ``d + 1`` UTF-8 fields.

    (A word2vec binary record of ``d`` float32 is all but never valid UTF-8 without NUL.)
    """
    fields = split_fields(line)  # a tab separates fields like a space
    if len(fields) >= 2 and all(is_number(f) for f in fields[1:]):
        return True
    return len(fields) == d + 1 and b"\x00" not in line and _is_utf8(line)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _text_view(head: bytes) -> bytes:
    """``head`` as the text readers see it, for sniffing: without a BOM, and with CR-only line ends as LF.

    (The readers refuse CR-only line ends, with a clear error; detecting the format
    first lets that error be the one reported.)
    """
    if head.startswith(BOM):
        head = head[len(BOM):]
    nl = head.find(b"\n")
    if lone_cr(head[:nl] if nl >= 0 else head) >= 0:
        head = head.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return head


def _looks_like_glove(text: bytes, complete: bool, path) -> bool:
    """Whether the first lines are GloVe rows: :func:`~._common.glove_dim` finds a dimension
    ``d``, and at least half of the lines end in ``d`` values (prose where a few sentences end
    in a number, "... in 1913", is a corpus, not a 1-d GloVe file).

    A first line of numbers only that disagrees with them ("40 8 3", "-1 8", "40.0 8")
    is a damaged header: a :class:`VectorFileError`, not a GloVe row.
    """
    lines = sample_lines(text, complete)
    if not lines or not _is_utf8(lines[0][1]):
        return False
    line_no, first = lines[0]
    d = glove_dim(lines)
    if damaged_header(first, d):
        raise bad_header_error(path, first, line=line_no, offset=None)
    rows = sum(trailing_values(split_fields(line)) == d for _, line in lines)
    return d >= 1 and 2 * rows >= len(lines)


def _by_signature(head: bytes, path: Path) -> str | None:
    """The first format of the table whose signature ``head`` carries (a pickle must be named like one)."""
    for fmt in TABLE:
        if fmt.signature is not None and fmt.signature(head):
            return _detect_pickle(path) if fmt.name == "gensim-kv" else fmt.name
    return None


def _detect_bytes(head: bytes, path: Path, compressed: bool, complete: bool) -> str:
    signed = _by_signature(head, path)
    if signed is not None:
        return signed
    text = _text_view(head)
    nl = text.find(b"\n")
    first = text[:nl] if nl >= 0 else text
    if HEADER_LINE.fullmatch(first):
        return _detect_after_header(first, text[nl + 1:] if nl >= 0 else b"", [s.lower() for s in path.suffixes],
                                    compressed, complete=complete)
    if looks_like_old_fasttext(head):
        return "fasttext-bin"
    if _looks_like_glove(text, complete, path):
        return "glove"
    if nl < 0 and not complete and _is_utf8_prefix(text):
        raise VectorFileError(path, f"no line end in the first {len(text)} bytes of text: expected lines "
                                    f"'word v1 ... vd' with words of at most {MAX_WORD_BYTES} bytes", line=1)
    raise UnknownFormatError(
        f"{path}: unknown vector format: not a native-format directory, gzip, gensim pickle, fastText "
        f".bin, word2vec binary/text (header 'count dim') or GloVe text ('word v1 ... vd' lines); "
        f"first bytes {head[:24]!r}")


def _sniff(fh) -> tuple[bytes, bool]:
    """The first bytes of an open file and whether they are all of it: :data:`SNIFF_BYTES`, and on
    until they hold the first two lines (a header and a first row, or a GloVe file's first rows)
    or :data:`MAX_FIRST_LINE` bytes; a file with a signature of its own is not read on."""
    head = fh.read(SNIFF_BYTES)
    complete = len(head) < SNIFF_BYTES
    while not complete and len(head) < MAX_FIRST_LINE and head.count(b"\n") < 2 and not _signed(head):
        more = fh.read(len(head))
        complete = len(more) < len(head)
        head += more
    return head, complete


def _signed(head: bytes) -> bool:
    return any(fmt.signature is not None and fmt.signature(head) for fmt in TABLE)


def _is_utf8_prefix(data: bytes) -> bool:
    """Whether ``data`` is UTF-8 text without NUL (a character cut at its end allowed)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return False
    return b"\x00" not in data


def _detect_pickle(path: Path) -> str:
    """A pickle is gensim-kv only under a gensim-like name: content alone never leads to unpickling."""
    from .gensim_kv import PICKLE_ENDINGS, is_pickle_name

    if is_pickle_name(path):
        return "gensim-kv"
    raise VectorFileError(path, f"a pickle (a gensim KeyedVectors file?) whose name does not end in "
                                f"{', '.join(PICKLE_ENDINGS)}: not unpickled on content alone; rename it, or "
                                f"name the format (--input-format gensim-kv, API: format='gensim-kv')")


def detect_format(path) -> str:
    """Detect the format of ``path`` from its content.

    Returns one of :data:`~embdebias.io.FORMATS`.  Gzip-compressed files are looked into (the
    readers decompress transparently).  ``word2vec-text`` and ``fasttext-vec`` are the
    same format; the latter is returned for a ``.vec`` file.  A pickle is ``gensim-kv``
    only when its name ends like one (``.kv``, ``.wv``, ``.model``, ``.pkl``,
    ``.pickle``, each optionally ``.gz``); any other pickle is a
    :class:`VectorFileError`, so that a file named like text is never unpickled on
    its content alone (it can still be read by naming the format).

    Raises
    ------
    UnknownFormatError
        The content matches no known format.
    VectorFileError
        The file does not exist, is empty, is not a regular file (a FIFO, a device, a
        socket), or its first line of numbers only is a damaged ``"count dim"`` header
        (``40 8 3``, ``-1 8``, ``40.0 8``); or it is a pickle not named like one.
    """
    path = Path(path)
    check_source(path)
    if path.is_dir():
        if is_native(path):
            return "native"
        raise UnknownFormatError(f"{path}: a directory without embdebias.json, not a native-format embedding")
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
        compressed = head[:2] == GZIP_MAGIC
        if not compressed:
            fh.seek(0)
            head, complete = _sniff(fh)
    if compressed:
        try:
            with gzip.open(path, "rb") as fh:
                head, complete = _sniff(fh)
        except (OSError, *GZIP_ERRORS) as exc:
            raise VectorFileError(path, f"truncated or damaged gzip data: {exc or type(exc).__name__}") from None
    if not head.removeprefix(BOM).strip():
        raise VectorFileError(path, "empty file: expected word vectors", line=1)
    return _detect_bytes(head, path, compressed, complete)


def check_source(source) -> None:
    """A missing input is an error (a bare name also lists the built-in embeddings); so is a special file.

    FIFOs, devices and sockets are refused before anything opens them
    (:func:`~._common.require_file`).
    """
    text = os.fspath(source)
    if not os.path.lexists(text) and not any(sep and sep in text for sep in (os.sep, os.altsep)):
        raise VectorFileNotFoundError(text, f"no such file or directory; not a built-in embedding either "
                                    f"(built-in: {', '.join(BUILTIN_NAMES)})")
    require_file(text, allow_dir=True)


def check_fits(path, fmt: str) -> None:
    """Refuse content that ``fmt`` cannot be, naming the file, the place and what was expected.

    Covers the formats read whole by other code (native, gensim-kv, fastText .bin);
    the text and word2vec binary readers check their own content line by line.
    """
    path = Path(path)
    if fmt == "native" and not is_native(path):
        found = "a directory without embdebias.json" if path.is_dir() else "a file"
        raise VectorFileError(path, f"expected a native-format directory (embdebias.json, vectors.npy and "
                                    f"the vocabulary files), found {found}")
    if fmt not in ("gensim-kv", "fasttext-bin") or path.is_dir():
        return
    head = _pickle_head(path) if fmt == "gensim-kv" else _head(path)
    if fmt == "gensim-kv" and not looks_like_pickle(head):
        raise VectorFileError(path, f"expected a gensim KeyedVectors file (a pickle: byte 0x80 and a protocol "
                                    f"number 2-5), found {head[:24]!r}", offset=0)
    if fmt == "fasttext-bin" and not looks_like_fasttext(head):
        raise VectorFileError(path, f"expected a fastText .bin model (its magic number "
                                    f"{FASTTEXT_MAGIC!r}), found {head[:24]!r}", offset=0)


def _head(path, size: int = 64) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(size)


def _pickle_head(path) -> bytes:
    """The first bytes of a pickle, looked for inside gzip (gensim gzips the pickle of a ``NAME.gz``)."""
    head = _head(path)
    if head[:2] == GZIP_MAGIC:
        with gzip.open(path, "rb") as fh, gzip_errors(path):
            head = fh.read(64)
    return head
