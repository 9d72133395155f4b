"""The vocabulary of an embedding: row index <-> word.

Two storages share one interface:

* an in-memory list of words with a dict for lookup (built on first lookup), and
* the native cache format's memory-mapped files (``vocab.txt`` with one word per
  line, the byte offset of each line, and the rows sorted by word), which open in
  milliseconds whatever the size: single lookups binary-search the sorted order
  without decoding the vocabulary, and the full word list is only decoded when
  somebody asks for it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from .errors import DuplicateWordsError, MissingWordsError

# Above this many lookups in one call, building the full dict is cheaper than binary
# searches over the memory map.
_BULK_LOOKUP = 2000

#: The lookup contract, the same on :class:`Vocabulary` and
#: :class:`~embdebias.embedding.Embedding` (quoted in both docstrings).
LOOKUP_CONTRACT = """
    Lookup (the same names, results and missing-word behaviour on ``Vocabulary`` and
    ``Embedding``; only ``str`` words are ever found):

    ======================== =====================================================
    ``word in x``            whether ``word`` is in the vocabulary
    ``x.index(word)``        its row (int); :class:`~embdebias.errors.MissingWordsError`
                             (a ``KeyError`` and a ``ValueError``) naming it if absent
    ``x.get(word, default)`` its row, or ``default`` (-1 unless given) if absent
    ``x.rows(words)``        int64 array of the rows in the given order, -1 for each
                             absent word
    ``x.split_known(words)`` ``(known, missing)``: the given words, order kept
    ======================== =====================================================
"""


def duplicate_rows(words: Sequence[str]) -> np.ndarray:
    """Rows whose word already occurs at an earlier row (empty when the words are unique)."""
    if len(set(words)) == len(words):  # the usual case, checked at C speed
        return np.zeros(0, dtype=np.int64)
    # A stable sort keeps the first occurrence of every word in ``first``.
    _, first = np.unique(np.array(words, dtype=object), return_index=True)
    keep = np.zeros(len(words), dtype=bool)
    keep[first] = True
    return np.flatnonzero(~keep)


class WordLookup:
    """Word -> row lookups shared by :class:`Vocabulary` and ``Embedding``.

    Subclasses provide ``_lookup_vocab()`` (the :class:`Vocabulary` to search) and
    may override ``_lookup_where()`` (how error messages name the vocabulary).
    """
    __doc__ += LOOKUP_CONTRACT

    __slots__ = ()

    def _lookup_vocab(self) -> "Vocabulary":
        raise NotImplementedError

    def _lookup_where(self) -> str:
        return "the vocabulary"

    def __contains__(self, word) -> bool:
        return self._lookup_vocab()._row(word) >= 0

    def get(self, word, default=-1):
        """Row of ``word``, or ``default`` when it is not in the vocabulary.

        Parameters
        ----------
        word : str
        default : object
            Returned for a missing word (-1, like :meth:`rows`, unless given).

        Returns
        -------
        int or default
        """
        row = self._lookup_vocab()._row(word)
        return default if row < 0 else row

    def index(self, word) -> int:
        """Row of ``word``.

        Parameters
        ----------
        word : str

        Returns
        -------
        int

        Raises
        ------
        MissingWordsError
            ``word`` is not in the vocabulary (also a ``KeyError`` and a ``ValueError``).
        """
        row = self._lookup_vocab()._row(word)
        if row < 0:
            raise MissingWordsError(f"{word!r} is not in {self._lookup_where()}", [word])
        return row

    def rows(self, words: Iterable[str]) -> np.ndarray:
        """Rows of ``words`` in the given order, -1 for each word not in the vocabulary.

        Parameters
        ----------
        words : iterable of str
            Not a single ``str`` (that raises ``TypeError``; use :meth:`index` or :meth:`get`).

        Returns
        -------
        ndarray of int64, shape (len(words),)
        """
        if isinstance(words, (str, bytes)):
            raise TypeError(f"rows() takes a sequence of words, not one word ({words!r}); use index() or get()")
        return self._lookup_vocab()._rows(words if isinstance(words, Sequence) else list(words))

    def split_known(self, words: Iterable[str]) -> tuple[list[str], list[str]]:
        """Split ``words`` into those in the vocabulary and those not, order kept.

        Parameters
        ----------
        words : iterable of str

        Returns
        -------
        (list of str, list of str)
            ``(known, missing)``.
        """
        words = list(words)
        found = self.rows(words) >= 0
        known = [w for w, f in zip(words, found, strict=True) if f]
        return known, [w for w, f in zip(words, found, strict=True) if not f]


class Vocabulary(WordLookup, Sequence):
    """An ordered, duplicate-free sequence of words with O(1) or O(log n) lookup.

    Parameters
    ----------
    words : iterable of str
        Words in row order. They must be unique: a repeated word raises
        :class:`~embdebias.errors.DuplicateWordsError` (``Embedding(words, vectors)``
        drops repeats itself, keeping the first row of each word).

    Notes
    -----
    A ``Vocabulary`` cannot be changed: ``tolist()`` returns a new list, and indexing
    with a slice gives a list of words.
    """
    __doc__ += LOOKUP_CONTRACT

    def __init__(self, words: Iterable[str]):
        words = list(words)
        dups = duplicate_rows(words)
        if len(dups):
            shown = ", ".join(repr(words[r]) + f" (row {r})" for r in dups[:10].tolist())
            more = f" and {len(dups) - 10} more" if len(dups) > 10 else ""
            raise DuplicateWordsError(f"a vocabulary needs unique words; repeated: {shown}{more} "
                                      f"(Embedding(words, vectors) drops repeats, keeping the first row)",
                                      [words[r] for r in dups[:100].tolist()])
        self._set_words(words)

    @classmethod
    def _from_unique(cls, words: list[str]) -> "Vocabulary":
        """A vocabulary of ``words`` already known to be unique (no second check)."""
        self = cls.__new__(cls)
        self._set_words(words)
        return self

    def _set_words(self, words: list[str]) -> None:
        self._words: list[str] | None = words
        self._index: dict[str, int] | None = None
        self._native = None  # (text memmap, offsets, sorted order) when native-backed
        self._n = len(words)

    # -- construction from the native format ---------------------------------------
    @classmethod
    def from_native(cls, directory: str | Path) -> "Vocabulary":
        """Open the vocabulary files of a native-format directory memory-mapped, after checking them.

        See :func:`embdebias.io.native.open_vocabulary` (a damaged or inconsistent
        vocabulary raises :class:`~embdebias.errors.VectorFileError`).
        """
        from .io.native import open_vocabulary

        return open_vocabulary(directory)

    @classmethod
    def _from_native_arrays(cls, text: np.ndarray, offsets: np.ndarray, order: np.ndarray) -> "Vocabulary":
        """A vocabulary over checked native arrays: the UTF-8 lines, their (n + 1) offsets, the sorted rows."""
        self = cls.__new__(cls)
        self._words = None
        self._index = None
        self._native = (text, offsets, order)
        self._n = int(offsets.shape[0]) - 1
        return self

    @staticmethod
    def write_native(words: Sequence[str], directory: str | Path) -> int:
        """Write ``vocab.txt``, ``vocab_offsets.npy`` and ``vocab_sorted.npy``; returns their CRC-32.

        See :func:`embdebias.io.native.write_vocabulary`.

        Raises
        ------
        EmbdebiasError
            A word contains a newline (``vocab.txt`` holds one word per line; a
            carriage return is stored as it is), is not encodable as UTF-8, or repeats.
        """
        from .io.native import write_vocabulary

        return write_vocabulary(words, directory)

    # -- sequence protocol -----------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def _word_at(self, i: int) -> str:
        if self._words is not None:
            return self._words[i]
        text, offsets, _ = self._native
        return bytes(text[offsets[i]:offsets[i + 1] - 1]).decode("utf-8")

    def __getitem__(self, i):
        """The word at row ``i`` (negative counts from the end); a slice gives a list of words."""
        if isinstance(i, slice):
            return self._list()[i]
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            i = int(i)
            if i < 0:
                i += self._n
            if not 0 <= i < self._n:
                raise IndexError(f"word index {i} out of range for {self._n} words")
            return self._word_at(i)
        raise TypeError(f"vocabulary indices must be integers or slices, not {type(i).__name__}")

    def __iter__(self) -> Iterator[str]:
        return iter(self._list())

    def tolist(self) -> list[str]:
        """A new list of all words in row order (changing it does not change the vocabulary)."""
        return list(self._list())

    def _list(self) -> list[str]:
        """The internal word list (decodes the native file once and keeps it); never handed out."""
        if self._words is None:
            text, offsets, _ = self._native
            if self._n == 0:
                self._words = []
            else:
                decoded = bytes(text).decode("utf-8")
                self._words = decoded.split("\n")[: self._n]
        return self._words

    # -- lookup (the public methods come from WordLookup) --------------------------------
    def _lookup_vocab(self) -> "Vocabulary":
        return self

    def _ensure_index(self) -> dict[str, int]:
        if self._index is None:
            words = self._list()
            self._index = dict(zip(words, range(len(words)), strict=True))
        return self._index

    def _search(self, word: str) -> int:
        text, offsets, order = self._native
        lo = bisect.bisect_left(range(self._n), word, key=lambda k: self._word_at(int(order[k])))
        if lo < self._n:
            row = int(order[lo])
            if self._word_at(row) == word:
                return row
        return -1

    def _row(self, word) -> int:
        """Row of ``word``, -1 when absent (or not a str)."""
        if not isinstance(word, str):
            return -1
        if self._index is not None or self._native is None:
            return self._ensure_index().get(word, -1)
        return self._search(word)

    def _rows(self, words: Sequence[str]) -> np.ndarray:
        if self._native is not None and self._index is None and len(words) > _BULK_LOOKUP:
            self._ensure_index()
        return np.fromiter((self._row(w) for w in words), dtype=np.int64, count=len(words))

    def __eq__(self, other) -> bool:
        if isinstance(other, Vocabulary):
            return len(self) == len(other) and self._list() == other._list()
        if isinstance(other, (list, tuple)):
            return self._list() == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        head = ", ".join(repr(self._word_at(i)) for i in range(min(self._n, 5)))
        more = ", ..." if self._n > 5 else ""
        return f"Vocabulary([{head}{more}], n={self._n})"
