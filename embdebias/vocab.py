"""The vocabulary of an embedding: row index <-> word.

Two storages share one interface:

* an in-memory list of words with a dict for lookup (built on first lookup), and
* the native cache format's memory-mapped files (``vocab.txt`` with one word per
  line, the byte offset of each line, and the rows sorted by word), which open in
  milliseconds whatever the size: lookups binary-search the sorted order without
  decoding the vocabulary (many words at once, in lock-step), a slice of rows decodes
  only those rows, and the full word list is only decoded when somebody asks for it
  (or when a lookup of so many words that decoding everything is cheaper).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from ._providers import provided
from .errors import DuplicateWordsError, MissingWordsError


# A native lookup of m words costs about m * log2(n) word reads; decoding the n words
# and building their dict costs about n of them (each somewhat dearer), so the dict
# pays off once m * log2(n) exceeds n.
def _index_pays_off(n_lookups: int, n_words: int) -> bool:
    return n_lookups * max(int(n_words).bit_length(), 1) > n_words

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


def _utf8(word) -> bytes | None:
    """``word`` as UTF-8 (the native format's byte order), None if it is not an encodable str."""
    if not isinstance(word, str):
        return None
    try:
        return word.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no stored word can equal it
        return None


#: Longest key (bytes) the vectorized binary search takes; longer keys search word by word.
_PADDED_WIDTH = 64


def _padded_keys(keys: list) -> tuple[np.ndarray, np.ndarray]:
    """``(keys as NUL-padded S{width} strings, their byte lengths)`` for the vectorized binary
    search (keys shorter than :data:`_PADDED_WIDTH` bytes holding no NUL byte; the others are
    compared word by word).

    Why the comparisons agree with Python's bytes order: NumPy compares ``S`` strings as bytes
    with trailing NULs ignored, one byte wider than the longest key. A stored word differing
    from a key within that width compares as the bytes do; one equal to the key there is the
    key followed by nothing or by NULs (not less, as in Python: the key holds no NUL), and is
    the key itself only if the lengths agree too (the equality test checks them)."""
    width = max((len(k) for k in keys if k is not None), default=0) + 1
    padded = np.array([b"" if k is None else k for k in keys], dtype=f"S{width}")
    return padded, np.fromiter((-1 if k is None else len(k) for k in keys), dtype=np.int64, count=len(keys))


def duplicate_rows(words: Sequence[str]) -> np.ndarray:
    """Rows whose word already occurs at an earlier row (empty when the words are unique)."""
    if len(set(words)) == len(words):  # the usual case, checked at C speed
        return np.zeros(0, dtype=np.int64)
    # A stable sort keeps the first occurrence of every word in ``first``.
    _, first = np.unique(np.array(words, dtype=object), return_index=True)
    keep = np.zeros(len(words), dtype=bool)
    keep[first] = True
    return np.flatnonzero(~keep)


_HASH_RNG = np.random.default_rng(0x9E3779B97F4A7C15)
#: Random odd multipliers: for a word's length, its first two 8-byte chunks, and each byte position after them.
_HASH_LENGTH, _HASH_CHUNK0, _HASH_CHUNK1 = _HASH_RNG.integers(0, 1 << 64, 3, dtype=np.uint64) | np.uint64(1)
_HASH_POSITION = _HASH_RNG.integers(0, 1 << 64, 1 << 17, dtype=np.uint64) | np.uint64(1)
#: Random values of the bytes after the first 16.
_HASH_BYTE = _HASH_RNG.integers(0, 1 << 64, 256, dtype=np.uint64)
#: The low ``k`` bytes of a little-endian 8-byte chunk, for k = 0..8.
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def word_hashes(joined: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each word of ``joined`` (words back to back, each followed by one separator byte).

    ``length * L + chunk0 * C0 + chunk1 * C1`` modulo 2**64, where the chunks are the
    word's first 16 bytes as two little-endian integers (zero past its end), plus, for a
    longer word, ``sum(position[i] * byte[w[i]])`` over its bytes from the 17th on, with
    random odd multipliers and random byte values.  Words of up to 8 bytes never collide;
    two given longer distinct words do with a chance of about 2**-64.  So distinct hashes
    prove distinct words, vectorized, at the cost of a few operations per word (equal
    hashes prove nothing: the caller then compares the words).  Words may have up to
    131,087 bytes (the position table's size).
    """
    if not len(lengths):
        return np.zeros(0, np.uint64)
    sizes = lengths.astype(np.int64) + 1
    firsts = np.cumsum(sizes) - sizes
    padded = np.zeros(len(joined) + 16, np.uint8)  # a chunk may be read past the last word
    padded[:len(joined)] = joined
    # Every 8-byte chunk that starts at a byte of ``padded``, as one unaligned little-endian integer.
    chunks = np.ndarray(shape=(len(joined) + 9,), dtype="<u8", buffer=padded, strides=(1,))
    hashes = lengths.astype(np.uint64) * _HASH_LENGTH
    for k, multiplier in enumerate((_HASH_CHUNK0, _HASH_CHUNK1)):
        inside = np.clip(lengths - 8 * k, 0, 8)
        hashes += (chunks[firsts + 8 * k] & _LOW_BYTES[inside]) * multiplier
    longer = np.flatnonzero(lengths > 16)
    if len(longer):  # rare: their bytes after the 16th, one by one
        tail = lengths[longer].astype(np.int64) - 16
        tail_firsts = np.cumsum(tail) - tail
        position = np.arange(int(tail.sum()), dtype=np.int64) - np.repeat(tail_firsts, tail)
        tail_bytes = joined[position + np.repeat(firsts[longer] + 16, tail)]
        terms = _HASH_BYTE[tail_bytes] * _HASH_POSITION[position]
        hashes[longer] += np.add.reduceat(terms, tail_firsts)
    return hashes


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

    @classmethod
    def _hashed_if_unique(cls, words: list[str], hashes: list[np.ndarray]) -> "Vocabulary | None":
        """A vocabulary of ``words`` indexed by their :func:`word_hashes`, or None if two hashes are equal.

        ``hashes`` (in pieces, row order) must be of the words' UTF-8 bytes.  Distinct
        hashes prove the words distinct; sorted, they are the lookup index (a lookup
        hashes the words it looks for and checks the word at the row it finds), built
        with one sort instead of a dict (0.1 s for 3,000,000 words instead of 1 s).
        """
        every = np.concatenate([np.zeros(0, np.uint64), *hashes])
        order = np.argsort(every)
        ordered = every[order]
        if np.any(ordered[1:] == ordered[:-1]):
            return None
        self = cls._from_unique(words)
        self._hashed = (ordered, order)
        return self

    @classmethod
    def _indexed_if_unique(cls, words: list[str]) -> "Vocabulary | None":
        """A vocabulary of ``words`` with its lookup dict built, or None if a word repeats.

        One dict does both jobs: its size tells whether the words are unique (the
        duplicate check a reader needs anyway), and it is the index the first lookup
        would build, so a 3,000,000-word file pays for one hash table, not a set and then
        a dict.
        """
        index = dict(zip(words, range(len(words)), strict=True))
        if len(index) != len(words):
            return None
        self = cls._from_unique(words)
        self._index = index
        return self

    def _set_words(self, words: list[str]) -> None:
        self._words: list[str] | None = words
        self._index: dict[str, int] | None = None
        self._native = None  # (text memmap, offsets, sorted order) when native-backed
        self._native_views = None
        self._hashed = None  # (sorted word hashes, their rows) when a reader gave them
        self._searches = 0  # hashed lookups done so far
        self._searched: dict[str, int] = {}  # native or hashed lookups done so far
        self._n = len(words)

    # -- construction from the native format ---------------------------------------
    @classmethod
    def from_native(cls, directory: str | Path) -> "Vocabulary":
        """Open the vocabulary files of a native-format directory memory-mapped, after checking them.

        See :func:`embdebias.io.native.open_vocabulary` (a damaged or inconsistent
        vocabulary raises :class:`~embdebias.errors.VectorFileError`).
        """
        return provided("open native vocabulary")(directory)

    @classmethod
    def _from_native_arrays(cls, text: np.ndarray, offsets: np.ndarray, order: np.ndarray) -> "Vocabulary":
        """A vocabulary over checked native arrays: the UTF-8 lines, their (n + 1) offsets, the sorted rows."""
        self = cls.__new__(cls)
        self._words = None
        self._index = None
        self._native = (text, offsets, order)
        self._native_views = None
        self._hashed = None
        self._searches = 0
        self._searched: dict[str, int] = {}  # native lookups done so far
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
        return provided("write native vocabulary")(words, directory)

    # -- sequence protocol -----------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def _word_at(self, i: int) -> str:
        if self._words is not None:
            return self._words[i]
        return self._word_bytes(i).decode("utf-8")

    def _word_bytes(self, i: int) -> bytes:
        """The UTF-8 bytes of the word at row ``i`` of a native vocabulary."""
        text, offsets = self._views()
        return bytes(text[offsets[i]:offsets[i + 1] - 1])

    def _views(self) -> tuple[memoryview, memoryview]:
        """Memoryviews of the native text and offsets: slicing a memoryview costs a tenth
        of slicing the memmap, which matters for the many reads of a binary search."""
        if self._native_views is None:
            text, offsets, _ = self._native
            self._native_views = (memoryview(text), memoryview(np.asarray(offsets, dtype=np.int64)))
        return self._native_views

    def _decode_rows(self, start: int, stop: int) -> list[str]:
        """The words of rows ``start:stop`` of a native vocabulary (decodes only those)."""
        if stop <= start:
            return []
        text, offsets = self._views()
        return bytes(text[offsets[start]:offsets[stop] - 1]).decode("utf-8").split("\n")

    def __getitem__(self, i):
        """The word at row ``i`` (negative counts from the end); a slice gives a list of words."""
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if self._words is None and step == 1:
                return self._decode_rows(start, stop)
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

    def _search(self, words: Sequence[str]) -> np.ndarray:
        """Rows of ``words`` in a native vocabulary (-1 if absent), by binary search.

        All words search at once, in lock-step: each step compares every word still
        searching with the sorted word at its midpoint. Words are compared as UTF-8
        bytes, whose order is the code-point order the sorted index uses.
        """
        keys = [_utf8(w) for w in words]
        plain = [j for j, k in enumerate(keys) if k is not None and (len(k) >= _PADDED_WIDTH or b"\0" in k)]
        if not plain:
            return self._binary_search(keys, _padded_keys(keys))
        rows = np.full(len(keys), -1, dtype=np.int64)       # a few keys word by word (see _padded_keys)
        rows[plain] = self._binary_search([keys[j] for j in plain], None)
        rest = np.setdiff1d(np.arange(len(keys)), plain)
        rows[rest] = self._binary_search([keys[j] for j in rest], _padded_keys([keys[j] for j in rest]))
        return rows

    def _binary_search(self, keys: list, padded) -> np.ndarray:
        """Rows of ``keys`` (UTF-8 bytes, None for none) in lock-step; ``padded``: their
        :func:`_padded_keys` to compare in arrays, None to compare word by word."""
        _, offsets, order = self._native
        valid = np.fromiter((k is not None for k in keys), dtype=bool, count=len(keys))
        lo = np.zeros(len(keys), dtype=np.int64)
        hi = np.where(valid, self._n, 0).astype(np.int64)   # an invalid key searches nothing
        active = np.flatnonzero(lo < hi)
        while active.size:
            mid = (lo[active] + hi[active]) // 2
            at = np.asarray(order[mid], dtype=np.int64)
            less = self._compare(at, [keys[j] for j in active.tolist()], offsets, equal=False) if padded is None \
                else self._padded_words(at, padded[0].itemsize)[0] < padded[0][active]
            lo[active[less]] = mid[less] + 1
            hi[active[~less]] = mid[~less]
            active = active[lo[active] < hi[active]]
        rows = np.full(len(keys), -1, dtype=np.int64)
        inside = np.flatnonzero(valid & (lo < self._n))
        candidates = np.asarray(order[lo[inside]], dtype=np.int64)
        if padded is None:
            hit = self._compare(candidates, [keys[j] for j in inside.tolist()], offsets, equal=True)
        else:
            found, lengths = self._padded_words(candidates, padded[0].itemsize)
            hit = (found == padded[0][inside]) & (lengths == padded[1][inside])
        rows[inside[hit]] = candidates[hit]
        return rows

    def _padded_words(self, rows: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
        """``(words, byte lengths)`` of ``rows`` of a native vocabulary, the words as NUL-padded
        ``S{width}`` strings (cut at ``width`` bytes), read from the text in one gather."""
        text, offsets, _ = self._native
        starts = np.asarray(offsets[rows], dtype=np.int64)
        lengths = np.asarray(offsets[rows + 1], dtype=np.int64) - 1 - starts
        at = np.arange(width)
        where = np.minimum(starts[:, None] + at, max(len(text) - 1, 0))
        data = np.where(at < lengths[:, None], np.take(np.asarray(text), where), 0).astype(np.uint8)
        return data.view(f"S{width}").reshape(-1), lengths

    def _compare(self, rows: np.ndarray, keys: list[bytes], offsets, *, equal: bool) -> np.ndarray:
        """Whether the word of each row is below (or, ``equal=True``, equal to) its key."""
        text = self._views()[0]
        starts = np.asarray(offsets[rows]).tolist()
        ends = (np.asarray(offsets[rows + 1]) - 1).tolist()
        if equal:
            found = (bytes(text[s:e]) == k for s, e, k in zip(starts, ends, keys, strict=True))
        else:
            found = (bytes(text[s:e]) < k for s, e, k in zip(starts, ends, keys, strict=True))
        return np.fromiter(found, dtype=bool, count=len(keys))

    def _hash_search(self, words: Sequence[str]) -> np.ndarray:
        """Rows of ``words`` (-1 if absent) in a vocabulary indexed by its sorted word hashes."""
        ordered, order = self._hashed
        keys = [_utf8(w) for w in words]
        valid = [j for j, k in enumerate(keys) if k is not None]
        rows = np.full(len(keys), -1, dtype=np.int64)
        if not valid or not self._n:
            return rows
        lengths = np.array([len(keys[j]) for j in valid], dtype=np.int64)
        joined = np.frombuffer(b"".join(keys[j] + b"\n" for j in valid), dtype=np.uint8)
        hashes = word_hashes(joined, lengths)
        at = np.minimum(np.searchsorted(ordered, hashes), self._n - 1)
        candidates = order[at].tolist()
        for j, row, same in zip(valid, candidates, (ordered[at] == hashes).tolist(), strict=True):
            if same and self._words[row] == words[j]:  # an equal hash may be another word's
                rows[j] = row
        return rows

    def _row(self, word) -> int:
        """Row of ``word``, -1 when absent (or not a str)."""
        if (self._native is not None or self._hashed is not None) and self._index is None:
            return int(self._rows([word])[0])
        return self._ensure_index().get(word, -1) if isinstance(word, str) else -1

    def _rows(self, words: Sequence[str]) -> np.ndarray:
        searchable = self._native is not None or self._hashed is not None
        index = self._index if not searchable or self._index is not None else self._searched_index(words)
        if index is None:
            index = self._ensure_index()
        return np.fromiter((index.get(w, -1) if isinstance(w, str) else -1 for w in words),
                           dtype=np.int64, count=len(words))

    def _searched_index(self, words: Sequence[str]) -> dict[str, int]:
        """A dict holding the rows of ``words``: the words searched so far, with these added,
        or the full index when building it is cheaper than searching them.

        Searched words are remembered: the metrics look up the same lists (a sentiment
        lexicon, the professions) several times per embedding.  A hashed search costs
        about 20 us a call, as much as the dict's entries for 64 words: once the searches
        have cost as much as the dict would, the dict is built (so that many lookups of
        one word each cost at most twice what a dict from the start would have).
        """
        todo = list(dict.fromkeys(w for w in words if isinstance(w, str) and w not in self._searched))
        if self._hashed is not None and todo:
            self._searches += 1
        if _index_pays_off(len(todo), self._n) or self._searches * 64 > self._n:
            return self._ensure_index()
        if todo:
            search = self._hash_search if self._hashed is not None else self._search
            self._searched.update(zip(todo, search(todo).tolist(), strict=True))
        return self._searched

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
