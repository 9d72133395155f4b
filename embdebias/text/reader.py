"""The one corpus reader: a text file (plain or gzip) read as checked blocks of whole lines.

``embdebias train`` (:class:`~embdebias.text.corpus.LineCorpus`) and ``embdebias cda``
(:class:`~embdebias.cda.CounterfactualAugmenter`) read their corpora through
:class:`CorpusFile`, so they accept the same files and refuse the same ones with the
same messages.

Accepted: a regular file of UTF-8 text, plain or gzip-compressed (recognised by its
magic bytes, not its name), one sentence or paragraph a line. Refused with a
:class:`~embdebias.errors.CorpusError` naming the file, and for content errors the
line and the byte offset (of the decompressed text, for gzip, which the message says):

* a path that is missing, a directory, a FIFO, a socket or a device;
* an empty corpus (no byte of text);
* a first 64 KiB of which more than 1 % are control bytes (other than tab, line
  ends, form feed and escape): a binary file;
* a NUL byte anywhere (a binary file, or UTF-16 text);
* undecodable UTF-8, with ``unicode_errors="strict"`` (``"ignore"`` drops the bytes,
  ``"replace"`` puts U+FFFD in their place, as everywhere in embdebias);
* truncated or damaged gzip data.

Every block ends at a line end (``"\\n"``), but perhaps the last. A line longer than a
block is one block of its own, or, with ``cut_long_lines=True`` (training, whose
tokens never span a space, and ``cda``, which transforms a long line's parts with their
neighbours as context), is cut after its last space or tab within the block, so a
file without line ends streams in bounded memory.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from .._files import GZIP_ERRORS, GZIP_MAGIC, check_unicode_errors
from ..errors import CorpusError, CorpusNotFoundError, EmbdebiasError

#: Bytes read at a time (a block is this plus the rest of its last line).
BLOCK_BYTES = 1 << 20
#: The first bytes looked at for a binary file.
SNIFF = 64 << 10
#: A first block with more than this fraction of control bytes is not text.
MAX_CONTROL = 0.01
#: At most this many characters of the input are quoted in an error message.
QUOTE = 80

_CONTROL = np.zeros(256, dtype=bool)
_CONTROL[list(range(0, 9)) + list(range(14, 27)) + list(range(28, 32)) + [127]] = True


def check_corpus_path(path) -> Path:
    """``path`` as a Path, or a :class:`~embdebias.errors.CorpusError` if it is not a regular file.

    Parameters
    ----------
    path : path-like

    Returns
    -------
    Path
    """
    path = Path(path)
    if not path.exists():
        raise CorpusNotFoundError(path)
    if path.is_dir():
        raise CorpusError(path, "is a directory, expected a text file (one sentence or paragraph a line)")
    if not path.is_file():
        raise CorpusError(path, "not a regular file (a FIFO, socket or device?): the corpus is read once per "
                                "epoch, so it must be a file")
    return path


def excerpt(block: bytes, at: int) -> str:
    """At most :data:`QUOTE` characters of the line of ``block`` around byte ``at``, quoted."""
    line_start = block.rfind(b"\n", 0, at) + 1
    line_end = block.find(b"\n", at)
    line_end = len(block) if line_end < 0 else line_end
    lo, hi = max(line_start, at - QUOTE // 2), min(line_end, at + QUOTE // 2)
    text = block[lo:hi].decode("utf-8", "replace")[:QUOTE]
    return repr(("..." if lo > line_start else "") + text + ("..." if hi < line_end else ""))


def space_cut(buf: bytes) -> int:
    """After the last space or tab of ``buf`` (0: it has none)."""
    return max(buf.rfind(b" "), buf.rfind(b"\t")) + 1


def long_line_cut(buf: bytes) -> int:
    """Where to cut ``buf``, a piece of a line longer than a block: after its last space or tab,
    else at the last UTF-8 character boundary."""
    return space_cut(buf) or char_end(buf)


def char_end(buf: bytes) -> int:
    """``len(buf)``, less the bytes of an incomplete UTF-8 character at its end."""
    i = len(buf) - 1
    while i > 0 and len(buf) - i < 4 and buf[i] & 0xC0 == 0x80:  # continuation bytes
        i -= 1
    lead = buf[i]
    need = 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return i if len(buf) - i < need else len(buf)


class CorpusFile:
    """A corpus file read as checked blocks of UTF-8 text (see the module docstring).

    Parameters
    ----------
    path : path-like
        Must be a regular file (checked at once).
    unicode_errors : {"strict", "ignore", "replace"}
    block_bytes : int
        Bytes read at a time.
    cut_long_lines : bool
        Cut a line longer than a block after a space or tab (default: keep it whole).
    cut_inside_words : bool
        With ``cut_long_lines``: a run longer than a block without space or tab is cut at
        a character boundary (default, training: bounded memory whatever the file), or
        held whole (``False``, ``cda``: its rules look at whole words, and a word cut in
        two would be two words).

    Attributes
    ----------
    path : Path
    compressed : bool
        Whether the file is gzip.
    size : int
        Bytes on disk, the unit of :attr:`progress`.
    progress : callable or None
        Called with the number of bytes read from the file since its last call, as a
        pass goes on (for a progress bar).
    """

    def __init__(self, path, *, unicode_errors: str = "strict", block_bytes: int = BLOCK_BYTES,
                 cut_long_lines: bool = False, cut_inside_words: bool = True):
        self.path = check_corpus_path(path)
        self.unicode_errors = check_unicode_errors(unicode_errors)
        if isinstance(block_bytes, bool) or not isinstance(block_bytes, int) or block_bytes < 1:
            raise EmbdebiasError(f"block size must be a positive integer, got {block_bytes!r}")
        self.block_bytes = block_bytes
        self.cut_long_lines = bool(cut_long_lines)
        self.cut_inside_words = bool(cut_inside_words)
        with open(self.path, "rb") as fh:
            self.compressed = fh.read(2) == GZIP_MAGIC
        self.size = os.path.getsize(self.path)
        self.progress: Callable[[int], None] | None = None

    def __repr__(self) -> str:
        return f"CorpusFile({os.fspath(self.path)!r})"

    def _error(self, message: str, block: bytes, at: int, offset: int, line: int) -> CorpusError:
        """A content error at byte ``at`` of ``block`` (which starts at ``offset``, on ``line``)."""
        where = "in the decompressed text, " if self.compressed else ""
        return CorpusError(self.path, where + message, line=line + block.count(b"\n", 0, at), offset=offset + at)

    def _reads(self, raw) -> Iterator[bytes]:
        """The decompressed bytes, :attr:`block_bytes` at a time, reporting progress."""
        fh = gzip.GzipFile(fileobj=raw, mode="rb") if self.compressed else raw
        seen = 0
        while True:
            try:
                data = fh.read(self.block_bytes)
            except GZIP_ERRORS as exc:
                raise CorpusError(self.path, f"truncated or damaged gzip data: {exc or type(exc).__name__}") \
                    from None
            if self.progress is not None:
                pos = raw.tell()
                self.progress(pos - seen)
                seen = pos
            if not data:
                return
            yield data

    def _check_first(self, block: bytes) -> None:
        """An error if the first bytes look binary (many control bytes; a NUL has its own message)."""
        head = np.frombuffer(block[:SNIFF], dtype=np.uint8)
        control = np.flatnonzero(_CONTROL[head])
        if control.size > MAX_CONTROL * head.size and b"\0" not in block[:SNIFF]:
            first = int(control[0])
            raise self._error(f"a binary file, not text: {control.size} control byte(s) in the first "
                              f"{head.size} bytes (the first, {head[first]:#04x}, at byte offset {first})",
                              block, first, 0, 1)

    def checked(self, block: bytes, offset: int, line: int) -> bytes:
        """``block`` (at byte ``offset``, line ``line`` of the text) as valid UTF-8, or an error."""
        nul = block.find(b"\0")
        if nul >= 0:
            raise self._error(f"a NUL byte: a binary file (or UTF-16 text), expected UTF-8 text "
                              f"(near {excerpt(block, nul)})", block, nul, offset, line)
        if block.isascii():
            return block
        try:
            block.decode("utf-8")
            return block
        except UnicodeDecodeError as exc:
            if self.unicode_errors == "strict":
                raise self._error(f"not UTF-8 text ({exc.reason}) near {excerpt(block, exc.start)}; "
                                  f"--unicode-errors (unicode_errors=) ignore or replace accepts it",
                                  block, exc.start, offset, line) from None
        return block.decode("utf-8", self.unicode_errors).encode("utf-8")

    def _empty(self) -> CorpusError:
        what = "an empty file" if self.size == 0 else "no text in the gzip data"
        return CorpusError(self.path, f"empty corpus: {what}; expected UTF-8 text, one sentence or paragraph a line")

    def _split(self, pending: list[bytes], chunk: bytes) -> tuple[bytes, list[bytes]]:
        """``(block, rest)``: a block to yield (empty: read on) and what stays pending."""
        cut = chunk.rfind(b"\n") + 1
        if not cut and self.cut_long_lines and sum(map(len, pending)) + len(chunk) >= self.block_bytes:
            chunk, pending = b"".join((*pending, chunk)), []
            cut = long_line_cut(chunk) if self.cut_inside_words else space_cut(chunk)
        if not cut:
            return b"", [*pending, chunk]
        block = b"".join((*pending, chunk[:cut])) if pending else chunk[:cut]
        return block, [chunk[cut:]] if cut < len(chunk) else []

    def blocks(self) -> Iterator[bytes]:
        """One pass over the file: checked UTF-8 blocks, each ending at a line end (see the module docstring)."""
        with open(self.path, "rb") as raw:
            pending: list[bytes] = []  # the start of a line that has not ended yet
            offset, line, first = 0, 1, True
            for chunk in self._reads(raw):
                if first:
                    self._check_first(chunk)
                    first = False
                block, pending = self._split(pending, chunk)
                if block:
                    yield self.checked(block, offset, line)
                    offset, line = offset + len(block), line + block.count(b"\n")
            if first:
                raise self._empty()
            if pending:
                yield self.checked(b"".join(pending), offset, line)
