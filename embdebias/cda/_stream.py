"""Reading a text corpus (plain or gzip) in big blocks of whole lines, checked.

Every block is UTF-8 text ending at a newline (the last one may not, nor the parts of a
line longer than a block, see :func:`iter_blocks`): a NUL byte, a
first block that is mostly control bytes, undecodable bytes (with
``unicode_errors="strict"``), a damaged gzip stream, an empty file, a directory or a
FIFO raise a :class:`~embdebias.errors.CorpusError` naming the file and the place.
"""

from __future__ import annotations

import contextlib
import gzip
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..errors import CorpusError
from ..io._common import GZIP_ERRORS, GZIP_MAGIC

#: Bytes read at a time (a block is this plus the rest of its last line). 1 MiB keeps the
#: per-block arrays in the processor's cache: 40 % faster than 8 MiB blocks.
BLOCK_SIZE = 1 << 20
#: The first bytes looked at for a binary file.
SNIFF = 64 << 10
#: A first block with more than this fraction of control bytes is not text.
MAX_CONTROL = 0.01
#: At most this many characters of the input are quoted in an error message.
QUOTE = 80

_CONTROL = np.zeros(256, dtype=bool)
_CONTROL[list(range(0, 9)) + list(range(14, 27)) + list(range(28, 32)) + [127]] = True


@contextlib.contextmanager
def open_corpus(path: Path):
    """``(reader, raw)``: the decompressed byte stream of ``path`` and the file under it."""
    with open(path, "rb") as raw:
        if raw.read(2) == GZIP_MAGIC:
            raw.seek(0)
            with gzip.GzipFile(fileobj=raw, mode="rb") as fh:
                yield fh, raw
        else:
            raw.seek(0)
            yield raw, raw


def _read(fh, path: Path, size: int) -> bytes:
    try:
        return fh.read(size)
    except GZIP_ERRORS as exc:
        raise CorpusError(path, f"truncated or damaged gzip data ({exc or type(exc).__name__})") from None


def quote(block: bytes, at: int) -> str:
    """At most :data:`QUOTE` characters of the line of ``block`` around byte ``at``, quoted."""
    line_start = block.rfind(b"\n", 0, at) + 1
    line_end = block.find(b"\n", at)
    line_end = len(block) if line_end < 0 else line_end
    lo, hi = max(line_start, at - QUOTE // 2), min(line_end, at + QUOTE // 2)
    text = block[lo:hi].decode("utf-8", "replace")[:QUOTE]
    return repr(("..." if lo > line_start else "") + text + ("..." if hi < line_end else ""))


def check_first_block(block: bytes, path: Path) -> None:
    """A :class:`CorpusError` if the first bytes look binary (many control bytes)."""
    head = np.frombuffer(block[:SNIFF], dtype=np.uint8)
    control = np.flatnonzero(_CONTROL[head])
    if control.size > MAX_CONTROL * head.size and b"\0" not in block[:SNIFF]:  # a NUL has its own message
        first = int(control[0])
        raise CorpusError(path, f"a binary file, not text: {control.size} control byte(s) in the first "
                                f"{head.size} bytes (the first, {head[first]:#04x}, at byte offset {first})",
                          line=block.count(b"\n", 0, first) + 1, offset=first)


def checked(block: bytes, path: Path, offset: int, line: int, unicode_errors: str) -> bytes:
    """``block`` (starting at byte ``offset`` and ``line``) as valid UTF-8, or an error."""
    nul = block.find(b"\0")
    if nul >= 0:
        raise CorpusError(path, f"a NUL byte: a binary file, not text (near {quote(block, nul)})",
                          line=line + block.count(b"\n", 0, nul), offset=offset + nul)
    if block.isascii():
        return block
    try:
        block.decode("utf-8")
        return block
    except UnicodeDecodeError as exc:
        if unicode_errors == "strict":
            raise CorpusError(path, f"not UTF-8 text ({exc.reason}) near {quote(block, exc.start)}; "
                                    "--unicode-errors ignore or replace accepts it",
                              line=line + block.count(b"\n", 0, exc.start), offset=offset + exc.start) from None
    return block.decode("utf-8", unicode_errors).encode("utf-8")


def part_end(data: bytes) -> int:
    """Where to cut a part off a long line: after its last space or tab (0: none, keep reading).

    Never inside a word: the rules look at whole words, and a word split between two parts
    would be two words.
    """
    return max(data.rfind(b" "), data.rfind(b"\t")) + 1


def iter_blocks(fh, path: Path, unicode_errors: str, block_size: int = BLOCK_SIZE) -> Iterator[bytes]:
    """The corpus read from ``fh`` as checked blocks of whole lines (see the module docstring).

    A line longer than ``block_size`` comes in parts of about ``block_size`` bytes, each cut
    after a space or tab (:func:`part_end`): a block that does not end with a newline (and is
    not the last) is a part of a line that goes on in the next block.  Memory stays bounded
    however long the line (a run of more than a block without space or tab is held whole).
    """
    pending: list[bytes] = []  # the start of a line that has not ended yet
    offset, line = 0, 1
    chunk = _read(fh, path, block_size)
    if not chunk:
        raise CorpusError(path, "empty corpus: no text to augment")
    check_first_block(chunk, path)
    while chunk:
        cut = chunk.rfind(b"\n") + 1
        if cut:
            block = b"".join((*pending, chunk[:cut])) if pending else chunk[:cut]
            yield checked(block, path, offset, line, unicode_errors)
            offset, line = offset + len(block), line + block.count(b"\n")
            pending = [chunk[cut:]] if cut < len(chunk) else []
        else:
            pending.append(chunk)
            if sum(map(len, pending)) > block_size and part_end(chunk):  # a long line: hand on its part so far
                data = b"".join(pending)
                cut = part_end(data)
                yield checked(data[:cut], path, offset, line, unicode_errors)
                offset += cut
                pending = [data[cut:]] if cut < len(data) else []
        chunk = _read(fh, path, block_size)
    if pending:
        yield checked(b"".join(pending), path, offset, line, unicode_errors)
