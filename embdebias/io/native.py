"""The native cache format: a directory that opens memory-mapped in milliseconds.

Layout of ``NAME/`` (by convention ``NAME.embd``, but detection reads the content)::

    embdebias.json      {"format": "embdebias-native", "version": 1, "count": n, "dim": d, "dtype": "float32"}
    vectors.npy         the (n, d) float32 matrix, C order, opened with mmap_mode="r"
    vocab.txt           the words, UTF-8, one per line, in row order
    vocab_offsets.npy   int64 (n + 1,): byte offset of each line in vocab.txt
    vocab_sorted.npy    int64 (n,): rows sorted by word, for binary-search lookup

Opening reads only the small JSON file and maps the arrays, so it costs the same for
400,000 or 3,000,000 words.  The directory is written under a temporary name and
renamed into place, so readers never see a half-written cache.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .._atomic import atomic_dir
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, owned
from ..errors import EmbdebiasError, VectorFileError
from ..vocab import Vocabulary

MAGIC = "embdebias-native"
VERSION = 1
META = "embdebias.json"


def is_native(path) -> bool:
    """Whether ``path`` is a native-format directory."""
    p = Path(path)
    return p.is_dir() and (p / META).is_file()


def read_native(path, *, limit: int | None = None, mmap: bool = True, name: str | None = None) -> Embedding:
    """Open a native-format directory (memory-mapped unless ``mmap=False``)."""
    path = Path(path)
    meta_path = path / META
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise VectorFileError(meta_path, f"unreadable native-format metadata ({exc})") from None
    if meta.get("format") != MAGIC or meta.get("version") != VERSION:
        raise VectorFileError(meta_path, f"expected format {MAGIC!r} version {VERSION}, "
                                         f"got {meta.get('format')!r} version {meta.get('version')!r}")
    try:
        vectors = np.load(path / "vectors.npy", mmap_mode="r" if mmap else None)
        vocab = Vocabulary.from_native(path)
    except (OSError, ValueError) as exc:
        raise VectorFileError(path, f"damaged native-format directory ({exc})") from None
    n, d = int(meta["count"]), int(meta["dim"])
    if vectors.shape != (n, d) or len(vocab) != n or vectors.dtype != np.float32:
        raise VectorFileError(path, f"metadata says {n} x {d} float32, found vectors "
                                    f"{vectors.shape} {vectors.dtype} and {len(vocab)} words")
    emb = Embedding(vocab, owned(vectors), name=name or path.name, path=str(path))
    return emb.head(limit) if limit is not None and limit < n else emb


class NativeWriter:
    """Write a native-format directory chunk by chunk, atomically.

    Use as a context manager; :attr:`vectors` is a writable ``(n, d)`` float32 memory
    map to fill.  On a clean exit the directory is renamed into place; on an
    exception nothing is left behind.

    Examples
    --------
    >>> with NativeWriter(out, words, (n, d)) as w:      # doctest: +SKIP
    ...     for start, stop, block in emb.iter_chunks():
    ...         w.vectors[start:stop] = f(block)
    >>> result = w.open()                                 # doctest: +SKIP
    """

    def __init__(self, path, words, shape, *, inputs=()):
        self.path = Path(path)
        self.words = words
        self.shape = (int(shape[0]), int(shape[1]))
        self.inputs = inputs
        self.vectors = None
        self._ctx = None

    def __enter__(self) -> "NativeWriter":
        if len(self.words) != self.shape[0]:
            raise ValueError(f"{len(self.words)} words for {self.shape[0]} rows")
        # Checked before any vector is copied (Vocabulary.write_native checks again).
        self._word_list = self.words.tolist() if isinstance(self.words, Vocabulary) else list(self.words)
        if "\n" in "".join(self._word_list):
            r = next(i for i, w in enumerate(self._word_list) if "\n" in w)
            raise EmbdebiasError(f"{self.path}: the native format cannot store words containing a newline: "
                                 f"{self._word_list[r]!r} (row {r}); drop or rename it, or use 'gensim-kv'")
        self._ctx = atomic_dir(self.path, inputs=self.inputs)
        tmp = self._ctx.__enter__()
        self._tmp = tmp
        self.vectors = np.lib.format.open_memmap(tmp / "vectors.npy", mode="w+",
                                                 dtype=np.float32, shape=self.shape)
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.vectors.flush()
                Vocabulary.write_native(self._word_list, self._tmp)
                meta = {"format": MAGIC, "version": VERSION, "count": self.shape[0],
                        "dim": self.shape[1], "dtype": "float32"}
                (self._tmp / META).write_text(json.dumps(meta), encoding="utf-8")
        except BaseException as err:
            self.vectors = None
            self._ctx.__exit__(type(err), err, err.__traceback__)
            raise
        self.vectors = None  # drop the memmap before the rename
        return self._ctx.__exit__(exc_type, exc, tb)

    def open(self, name: str | None = None) -> Embedding:
        """The written embedding, opened memory-mapped."""
        return read_native(self.path, name=name)


def write_native(emb: Embedding, path, *, chunk_rows: int = DEFAULT_CHUNK_ROWS, inputs=()) -> None:
    """Write ``emb`` to a native-format directory, copying in chunks."""
    if emb.path:
        inputs = (*inputs, emb.path)
    with NativeWriter(path, emb.words, emb.shape, inputs=inputs) as w:
        for start, stop, block in emb.iter_chunks(chunk_rows):
            w.vectors[start:stop] = block
