"""The layout of a Facebook fastText ``.bin`` model, checked against the file size before gensim reads it.

gensim's reader trusts the file: it reads each word byte by byte until a NUL (at the
end of a truncated file it waits for one forever), loops over a vocabulary size of
1e9, and allocates a matrix from its header.  :func:`check_fasttext_bin` walks the same
layout first, with every count checked against the bytes that remain:

* magic number 793712314 and version (11 or 12), or no magic at all in models older
  than the magic (their first two int32 are ``dim`` and ``ws``);
* the settings: 12 int32 (``dim, ws, epoch, min_count, neg, word_ngrams, loss, model,
  bucket, minn, maxn, lr_update_rate``, the first two before the magic in old models)
  and the float64 sampling threshold;
* the dictionary: int32 ``size, nwords, nlabels``, int64 ``ntokens`` and (new models)
  int64 ``pruneidx_size``; then ``size`` entries, each a NUL-terminated word, an int64
  count and an int8 type (at least 10 bytes), then ``pruneidx_size`` int32 pairs;
* the input matrix: (new models) a quantization flag, int64 rows and columns, then
  ``rows * cols`` float32; rows must be ``nwords + bucket`` and columns ``dim``;
* the output matrix in the same form, ending exactly at the end of the file.

The entries are walked by one regular expression, in C, not by a Python loop over
words.  Quantized models (``.ftz``) and supervised models (labels) are refused: gensim
reads neither.
"""

from __future__ import annotations

import mmap
import os
import re
import stat
import struct
from pathlib import Path

from ..errors import VectorFileError

MAGIC = 793712314
VERSIONS = (11, 12)
SETTINGS = ("dim", "ws", "epoch", "min_count", "neg", "word_ngrams", "loss", "model", "bucket", "minn", "maxn",
            "lr_update_rate")
#: A dictionary entry: a word without NUL, its NUL, an int64 count and an int8 type.
_ENTRY_BYTES = 10


def check_fasttext_bin(path) -> dict:
    """Walk the layout of a fastText ``.bin`` file and check every size against the file.

    Parameters
    ----------
    path : path-like
        A regular file.

    Returns
    -------
    dict
        The settings (:data:`SETTINGS`) and ``nwords``, ``size``, ``new_format``.

    Raises
    ------
    VectorFileError
        Naming the byte offset and what was expected: a truncated file, a count the
        remaining bytes cannot hold, a matrix of the wrong shape, a quantized or
        supervised model, or trailing bytes.
    """
    path = Path(path)
    if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or device would block or never end
        raise VectorFileError(path, "not a regular file; expected a fastText .bin model")
    with open(path, "rb") as fh:
        if not fh.seek(0, 2):
            raise VectorFileError(path, "empty file: expected a fastText .bin model", offset=0)
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _Walk(path, data).run()


class _Walk:
    """A cursor over the file's bytes that refuses to read past the end."""

    def __init__(self, path: Path, data):
        self.path, self.data, self.pos = path, data, 0

    def fail(self, message: str, at: int | None = None):
        raise VectorFileError(self.path, f"not a readable fastText .bin model: {message}",
                              offset=self.pos if at is None else at)

    def take(self, fmt: str, what: str) -> tuple:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            self.fail(f"truncated in the {what}: {len(self.data) - self.pos} bytes left, expected {size}")
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values

    def left(self) -> int:
        return len(self.data) - self.pos

    def run(self) -> dict:
        info = self.settings()
        nwords, size = self.dictionary(info)
        rows = nwords + info["bucket"]
        self.matrix(info, "input matrix", rows)
        self.matrix(info, "output matrix", nwords)
        if self.left():
            self.fail(f"{self.left()} bytes after the output matrix, expected the end of the file")
        return {**info, "nwords": nwords, "size": size}

    def settings(self) -> dict:
        magic, version = self.take("<2i", "header")
        new_format = magic == MAGIC
        if new_format:
            if version not in VERSIONS:
                self.fail(f"fastText file version {version}, expected one of {VERSIONS}", at=4)
            values = self.take("<12i", "settings")
        else:
            values = (magic, version, *self.take("<10i", "settings"))
        self.take("<d", "settings")  # the sampling threshold t
        info = dict(zip(SETTINGS, values, strict=True), new_format=new_format)
        if info["dim"] < 1 or info["bucket"] < 0 or not 0 <= info["minn"] <= info["maxn"]:
            self.fail(f"settings dim {info['dim']}, bucket {info['bucket']}, minn {info['minn']}, maxn "
                      f"{info['maxn']}: expected dim >= 1, bucket >= 0 and 0 <= minn <= maxn"
                      + ("" if new_format else " (or not a fastText model: no magic number)"), at=0)
        return info

    def dictionary(self, info: dict) -> tuple[int, int]:
        size, nwords, nlabels = self.take("<3i", "dictionary header")
        self.take("<q", "dictionary header")  # ntokens
        prune = self.take("<q", "dictionary header")[0] if info["new_format"] else -1
        if nlabels:
            self.fail(f"a supervised model ({nlabels} labels): only word-vector models can be read", at=self.pos)
        if not 0 <= nwords == size or size * _ENTRY_BYTES > self.left():
            self.fail(f"dictionary of {size} entries and {nwords} words: expected as many words as entries, "
                      f"each of at least {_ENTRY_BYTES} bytes ({self.left()} bytes left)")
        if prune < -1 or 8 * max(prune, 0) > self.left() - size * _ENTRY_BYTES:
            self.fail(f"{prune} pruned-index pairs do not fit in the {self.left()} bytes left")
        self.entries(size)
        self.pos += 8 * max(prune, 0)
        return nwords, size

    def entries(self, size: int) -> None:
        """Step over ``size`` entries: a non-empty NUL-terminated word without whitespace
        (fastText splits tokens there), an int64 count >= 0 and a type byte 0 (a word:
        labels were refused above).

        One possessive regular expression, so the walk runs in C and keeps no
        backtracking state; ``size`` is an int32, below the regex repeat limit (2**32 - 1).
        Requiring the count's sign bit clear and the type 0 catches a word that lost its
        NUL: it would swallow the next bytes and read a count and type out of place.
        """
        entry = rb"[^\x00 \t\n\x0b\x0c\r]++\x00[\x00-\xff]{7}[\x00-\x7f]\x00"
        found = re.compile(rb"(?:%s){%d}+" % (entry, size)).match(self.data, self.pos)
        if found is None:
            self.fail(f"truncated or damaged dictionary: {size} entries (a non-empty NUL-terminated word without "
                      f"whitespace, an int64 count >= 0 and the word type 0) are not found before the end of the file")
        self.pos = found.end()

    def matrix(self, info: dict, what: str, rows_expected: int) -> None:
        if info["new_format"] and self.take("<?", what)[0]:
            self.fail(f"a quantized model (.ftz): the {what} is compressed; only full .bin models can be read",
                      at=self.pos - 1)
        at = self.pos
        rows, cols = self.take("<2q", what)
        if rows != rows_expected or cols != info["dim"]:
            self.fail(f"{what} of {rows} x {cols}, expected {rows_expected} x {info['dim']}", at=at)
        if rows * cols * 4 > self.left():
            self.fail(f"truncated {what}: {rows} x {cols} float32 need {rows * cols * 4} bytes, "
                      f"{self.left()} left", at=at)
        self.pos += rows * cols * 4
