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

# Above this many lookups in one call, building the full dict is cheaper than binary
# searches over the memory map.
_BULK_LOOKUP = 2000


class Vocabulary(Sequence):
    """An ordered, duplicate-free sequence of words with O(1) or O(log n) lookup.

    Parameters
    ----------
    words : sequence of str
        Words in row order. Must be unique (callers drop duplicates first, see
        :func:`embdebias.embedding.drop_duplicates`).
    """

    def __init__(self, words: Iterable[str]):
        self._words: list[str] | None = list(words)
        self._index: dict[str, int] | None = None
        self._native = None  # (text memmap, offsets, sorted order) when native-backed
        self._n = len(self._words)

    # -- construction from the native format ---------------------------------------
    @classmethod
    def from_native(cls, directory: str | Path) -> "Vocabulary":
        """Open the vocabulary files of a native-format directory memory-mapped."""
        directory = Path(directory)
        self = cls.__new__(cls)
        text = np.memmap(directory / "vocab.txt", dtype=np.uint8, mode="r") \
            if (directory / "vocab.txt").stat().st_size else np.zeros(0, np.uint8)
        offsets = np.load(directory / "vocab_offsets.npy", mmap_mode="r")
        order = np.load(directory / "vocab_sorted.npy", mmap_mode="r")
        self._words = None
        self._index = None
        self._native = (text, offsets, order)
        self._n = int(offsets.shape[0]) - 1
        return self

    @staticmethod
    def write_native(words: Sequence[str], directory: str | Path) -> None:
        """Write ``vocab.txt``, ``vocab_offsets.npy`` and ``vocab_sorted.npy``.

        Words are sorted by code point, which is also UTF-8 byte order, so lookups can
        binary-search the sorted permutation.

        Raises
        ------
        EmbdebiasError
            A word contains a newline (``vocab.txt`` holds one word per line).  A
            carriage return is stored as it is: only ``"\\n"`` ends a line here.
        """
        directory = Path(directory)
        encoded = [w.encode("utf-8") for w in words]
        joined = b"\n".join(encoded)
        if joined.count(b"\n") != max(len(encoded) - 1, 0):
            from .errors import EmbdebiasError

            r = next(i for i, w in enumerate(words) if "\n" in w)
            raise EmbdebiasError(f"the native format cannot store words containing a newline: {words[r]!r} "
                                 f"(row {r}); drop or rename it, or use 'gensim-kv'")
        lengths = np.fromiter((len(b) + 1 for b in encoded), dtype=np.int64, count=len(encoded))
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        with open(directory / "vocab.txt", "wb") as fh:
            if encoded:
                fh.write(joined)
                fh.write(b"\n")
        np.save(directory / "vocab_offsets.npy", offsets)
        order = np.array(sorted(range(len(words)), key=words.__getitem__), dtype=np.int64)
        np.save(directory / "vocab_sorted.npy", order)

    # -- sequence protocol -----------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def _word_at(self, i: int) -> str:
        if self._words is not None:
            return self._words[i]
        text, offsets, _ = self._native
        return bytes(text[offsets[i]:offsets[i + 1] - 1]).decode("utf-8")

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.tolist()[i]
        if isinstance(i, (int, np.integer)):
            i = int(i)
            if i < 0:
                i += self._n
            if not 0 <= i < self._n:
                raise IndexError(f"word index {i} out of range for {self._n} words")
            return self._word_at(i)
        raise TypeError(f"vocabulary indices must be integers or slices, not {type(i).__name__}")

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def tolist(self) -> list[str]:
        """All words in row order (decodes the native file once and keeps the list)."""
        if self._words is None:
            text, offsets, _ = self._native
            if self._n == 0:
                self._words = []
            else:
                decoded = bytes(text).decode("utf-8")
                self._words = decoded.split("\n")[: self._n]
        return self._words

    # -- lookup --------------------------------------------------------------------
    def _ensure_index(self) -> dict[str, int]:
        if self._index is None:
            words = self.tolist()
            self._index = dict(zip(words, range(len(words))))
        return self._index

    def _search(self, word: str) -> int:
        text, offsets, order = self._native
        lo = bisect.bisect_left(range(self._n), word, key=lambda k: self._word_at(int(order[k])))
        if lo < self._n:
            row = int(order[lo])
            if self._word_at(row) == word:
                return row
        return -1

    def get(self, word: str, default: int = -1) -> int:
        """Row of ``word``, or ``default`` when it is not in the vocabulary."""
        if self._index is not None or self._native is None:
            return self._ensure_index().get(word, default)
        row = self._search(word)
        return default if row < 0 else row

    def __contains__(self, word) -> bool:
        return isinstance(word, str) and self.get(word) >= 0

    def index(self, word: str, *args) -> int:  # Sequence.index signature
        row = self.get(word)
        if row < 0:
            raise ValueError(f"{word!r} is not in the vocabulary")
        return row

    def rows(self, words: Sequence[str]) -> np.ndarray:
        """Rows of many words at once, -1 for words not in the vocabulary."""
        if self._native is not None and self._index is None and len(words) > _BULK_LOOKUP:
            self._ensure_index()
        return np.fromiter((self.get(w) for w in words), dtype=np.int64, count=len(words))

    def __eq__(self, other) -> bool:
        if isinstance(other, Vocabulary):
            return len(self) == len(other) and self.tolist() == other.tolist()
        if isinstance(other, (list, tuple)):
            return self.tolist() == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        head = ", ".join(repr(self._word_at(i)) for i in range(min(self._n, 5)))
        more = ", ..." if self._n > 5 else ""
        return f"Vocabulary([{head}{more}], n={self._n})"
