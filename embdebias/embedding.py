"""The :class:`Embedding`: words in file order and their vectors.

The vectors are a ``(n, d)`` float32 array that may be a read-only memory map (the
native format and ``.npy``-backed files open that way), so every whole-vocabulary
operation here walks the rows in chunks (:meth:`Embedding.iter_chunks`) and never
materialises more than a chunk of temporaries.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from .errors import DimensionError, MissingWordsError, NonFiniteError
from .vocab import Vocabulary

#: Rows per chunk for whole-vocabulary passes: 65,536 x 300 float32 is 75 MiB.
DEFAULT_CHUNK_ROWS = 1 << 16


class DuplicateWordWarning(UserWarning):
    """A word occurs more than once; the first row is kept."""


def drop_duplicates(words: Sequence[str], source: str | None = None,
                    line_of=None) -> np.ndarray | None:
    """Rows to keep when ``words`` has duplicates (first occurrence wins), else None.

    Warns with :class:`DuplicateWordWarning` naming the duplicated words and, when
    ``line_of`` (row -> line number) is given, where they stand in ``source``.
    """
    if len(set(words)) == len(words):  # the usual case, checked at C speed
        return None
    seen: dict[str, int] = {}
    dup_rows = []
    for i, w in enumerate(words):
        if seen.setdefault(w, i) != i:
            dup_rows.append(i)
    if not dup_rows:
        return None
    shown = []
    for r in dup_rows[:10]:
        where = f" (line {line_of(r)})" if line_of is not None else f" (row {r})"
        shown.append(f"{words[r]!r}{where}")
    more = f" and {len(dup_rows) - 10} more" if len(dup_rows) > 10 else ""
    src = f"{source}: " if source else ""
    warnings.warn(f"{src}{len(dup_rows)} duplicate word(s) dropped, first row kept: "
                  f"{', '.join(shown)}{more}", DuplicateWordWarning, stacklevel=3)
    keep = np.ones(len(words), dtype=bool)
    keep[dup_rows] = False
    return np.flatnonzero(keep)


class Embedding:
    """Word vectors: an ordered vocabulary and a ``(n, d)`` float32 matrix.

    Parameters
    ----------
    words : sequence of str or Vocabulary
        Words in row order (file order, which for the usual files is frequency
        order). Duplicates are dropped with a warning, keeping the first row.
    vectors : array-like of shape (n, d)
        Converted to float32 if needed; a float32 array or memory map is used as is,
        without copying.
    name : str, optional
        A label used in reports and plots (default: the file name or "embedding").
    path : str, optional
        The file this embedding was read from, if any.

    Examples
    --------
    >>> import numpy as np
    >>> emb = Embedding(["he", "she"], np.eye(2))
    >>> emb["she"]
    array([0., 1.], dtype=float32)
    """

    def __init__(self, words, vectors, *, name: str | None = None, path: str | None = None):
        vectors = np.asarray(vectors) if not isinstance(vectors, np.ndarray) else vectors
        if vectors.dtype != np.float32:
            vectors = vectors.astype(np.float32)
        if vectors.ndim != 2:
            raise DimensionError(f"vectors must be a 2-d (n, d) array, got shape {vectors.shape}")
        if not isinstance(words, Vocabulary):
            words = list(words)
            if len(words) != vectors.shape[0]:
                raise DimensionError(
                    f"{len(words)} words but {vectors.shape[0]} vector rows")
            keep = drop_duplicates(words, path or name)
            if keep is not None:
                words = [words[i] for i in keep]
                vectors = vectors[keep]
            words = Vocabulary(words)
        elif len(words) != vectors.shape[0]:
            raise DimensionError(f"{len(words)} words but {vectors.shape[0]} vector rows")
        self._vocab = words
        self._vectors = vectors
        self.path = os.fspath(path) if path is not None else None
        self.name = name or (Path(self.path).name if self.path else "embedding")
        self._norms: np.ndarray | None = None
        # Set after one full pass of iter_chunks found every value finite. The text and
        # binary readers check as they parse; memory-mapped formats (native, gensim) are
        # checked lazily, chunk by chunk, so that opening them stays instant.
        self._finite = False

    # -- basic properties ----------------------------------------------------------
    @property
    def words(self) -> Vocabulary:
        """The vocabulary, a sequence of words in row order."""
        return self._vocab

    @property
    def vectors(self) -> np.ndarray:
        """The ``(n, d)`` float32 matrix (possibly a read-only memory map)."""
        return self._vectors

    @property
    def dim(self) -> int:
        return int(self._vectors.shape[1])

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self._vectors.shape)

    def __len__(self) -> int:
        return int(self._vectors.shape[0])

    def __repr__(self) -> str:
        return f"Embedding(name={self.name!r}, n={len(self)}, dim={self.dim})"

    # -- lookup --------------------------------------------------------------------
    def __contains__(self, word) -> bool:
        return word in self._vocab

    def index(self, word: str) -> int:
        """Row of ``word``; raises :class:`MissingWordsError` if it is not there."""
        row = self._vocab.get(word)
        if row < 0:
            raise MissingWordsError(f"{word!r} is not in the vocabulary of {self.name}", [word])
        return row

    def __getitem__(self, key):
        """``emb["word"]`` gives a vector, ``emb[["a", "b"]]`` a ``(2, d)`` matrix."""
        if isinstance(key, str):
            return self.take([self.index(key)])[0]
        rows, missing = self.rows(key)
        if missing:
            raise MissingWordsError(
                f"{len(missing)} word(s) not in the vocabulary of {self.name}: "
                f"{', '.join(map(repr, missing[:20]))}", missing)
        return self.take(rows)

    def get(self, word: str, default=None):
        """Vector of ``word`` or ``default``."""
        row = self._vocab.get(word)
        return default if row < 0 else self.take([row])[0]

    def take(self, rows, dtype=np.float32) -> np.ndarray:
        """A copy of the given rows (indices or a slice) as ``dtype``.

        Raises :class:`NonFiniteError` naming the word if a row holds NaN or infinity.
        """
        block = np.array(self._vectors[rows], dtype=dtype)
        if not self._finite:
            self._check_finite(block, rows)
        return block

    def assume_finite(self) -> "Embedding":
        """Skip the lazy NaN/infinity checks: for readers that validated every value."""
        self._finite = True
        return self

    def _check_finite(self, block: np.ndarray, rows) -> None:
        ok = np.isfinite(block).all(axis=-1)
        if ok.all():
            return
        bad = int(np.flatnonzero(~np.atleast_1d(ok))[0])
        if isinstance(rows, slice):
            row = (rows.start or 0) + bad
        else:
            row = int(np.atleast_1d(np.asarray(rows))[bad])
        raise NonFiniteError(f"{self.path or self.name}: row {row} ({self._vocab[row]!r}) has NaN or "
                             f"infinite values; expected finite numbers")

    def rows(self, words: Iterable[str]) -> tuple[np.ndarray, list[str]]:
        """Rows of the in-vocabulary ``words`` (in the given order) and the missing ones."""
        words = list(words)
        rows = self._vocab.rows(words)
        missing = [w for w, r in zip(words, rows) if r < 0]
        return rows[rows >= 0], missing

    def split_known(self, words: Iterable[str]) -> tuple[list[str], list[str]]:
        """``(known, missing)``: the words that are in the vocabulary, and those that are not."""
        words = list(words)
        rows = self._vocab.rows(words)
        return ([w for w, r in zip(words, rows) if r >= 0],
                [w for w, r in zip(words, rows) if r < 0])

    # -- whole-vocabulary passes, chunked --------------------------------------------
    def iter_chunks(self, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[tuple[int, int, np.ndarray]]:
        """Yield ``(start, stop, block)`` over the rows; ``block`` is a float32 array."""
        n = len(self)
        for start in range(0, n, chunk_rows):
            stop = min(start + chunk_rows, n)
            block = np.asarray(self._vectors[start:stop], dtype=np.float32)
            if not self._finite:
                self._check_finite(block, slice(start, stop))
            yield start, stop, block
        self._finite = True

    def norms(self, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> np.ndarray:
        """Euclidean norm of every row (computed once, in chunks, then cached)."""
        if self._norms is None:
            out = np.empty(len(self), dtype=np.float32)
            for start, stop, block in self.iter_chunks(chunk_rows):
                out[start:stop] = np.sqrt(np.einsum("ij,ij->i", block, block))
            self._norms = out
        return self._norms

    def normalize(self, chunk_rows: int = DEFAULT_CHUNK_ROWS, out: np.ndarray | None = None) -> "Embedding":
        """A new embedding whose rows have unit length (zero rows stay zero).

        Parameters
        ----------
        chunk_rows : int
            Rows per chunk.
        out : ndarray, optional
            Destination ``(n, d)`` float32 array (for example a writable memory map),
            so that memory stays bounded by a chunk for huge vocabularies.
        """
        norms = self.norms(chunk_rows)
        if out is None:
            out = np.empty(self.shape, dtype=np.float32)
        elif out.shape != self.shape:
            raise DimensionError(f"out has shape {out.shape}, expected {self.shape}")
        for start, stop, block in self.iter_chunks(chunk_rows):
            nrm = norms[start:stop, None]
            np.divide(block, nrm, out=out[start:stop], where=nrm > 0)
            out[start:stop][(nrm == 0)[:, 0]] = 0.0
        result = Embedding(self._vocab, out, name=self.name)
        result._norms = np.where(norms > 0, 1.0, 0.0).astype(np.float32)
        return result

    def is_normalized(self, atol: float = 1e-4) -> bool:
        """Whether every non-zero row has unit length."""
        n = self.norms()
        return bool(np.all((np.abs(n - 1.0) <= atol) | (n == 0)))

    # -- derived embeddings ----------------------------------------------------------
    def subset(self, words: Iterable[str], *, on_missing: str = "raise") -> "Embedding":
        """A new in-memory embedding of ``words`` (in the given order).

        ``on_missing="raise"`` raises :class:`MissingWordsError` for words not in the
        vocabulary; ``"ignore"`` leaves them out.
        """
        words = list(words)
        rows, missing = self.rows(words)
        if missing and on_missing == "raise":
            raise MissingWordsError(
                f"{len(missing)} word(s) not in the vocabulary of {self.name}: "
                f"{', '.join(map(repr, missing[:20]))}", missing)
        if missing:
            missing_set = set(missing)
            words = [w for w in words if w not in missing_set]
        return Embedding(words, np.asarray(self._vectors[rows]), name=self.name)

    def head(self, n: int) -> "Embedding":
        """The first ``n`` words (file order is frequency order for the usual files)."""
        n = min(int(n), len(self))
        vocab = self._vocab if n == len(self) else Vocabulary(self._vocab[:n])
        return Embedding(vocab, self._vectors[:n], name=self.name, path=self.path)

    def with_vectors(self, vectors: np.ndarray, *, name: str | None = None) -> "Embedding":
        """The same vocabulary with other vectors (shared, not copied)."""
        if vectors.shape[0] != len(self):
            raise DimensionError(f"{vectors.shape[0]} rows for {len(self)} words")
        return Embedding(self._vocab, vectors, name=name or self.name)

    # -- gensim interop ------------------------------------------------------------
    @classmethod
    def from_gensim(cls, kv, *, name: str | None = None) -> "Embedding":
        """Wrap a gensim ``KeyedVectors`` (its arrays are used without copying when float32)."""
        return cls(list(kv.index_to_key), kv.vectors, name=name or "gensim")

    def to_gensim(self):
        """A gensim ``KeyedVectors`` holding these words and vectors."""
        from gensim.models import KeyedVectors

        kv = KeyedVectors(self.dim, count=0, dtype=np.float32)
        kv.add_vectors(self._vocab.tolist(), np.asarray(self._vectors))
        return kv

    # -- saving ------------------------------------------------------------------------
    def save(self, path, format: str = "native", **kwargs) -> None:
        """Write to ``path`` in ``format`` (atomically); see :func:`embdebias.io.save`."""
        from .io import save

        save(self, path, format=format, **kwargs)


def as_embedding(obj, *, name: str | None = None) -> Embedding:
    """Accept an :class:`Embedding`, a gensim ``KeyedVectors`` or a ``(words, vectors)`` pair."""
    if isinstance(obj, Embedding):
        return obj
    if hasattr(obj, "index_to_key") and hasattr(obj, "vectors"):
        return Embedding.from_gensim(obj, name=name)
    if isinstance(obj, tuple) and len(obj) == 2:
        return Embedding(obj[0], obj[1], name=name)
    raise TypeError(f"expected an Embedding, a gensim KeyedVectors or (words, vectors), "
                    f"got {type(obj).__name__}")
