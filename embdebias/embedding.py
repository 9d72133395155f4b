"""The :class:`Embedding`: words in file order and their vectors.

The vectors are a ``(n, d)`` float32 array that may be a read-only memory map (the
native format and ``.npy``-backed files open that way), so every whole-vocabulary
operation here walks the rows in chunks (:meth:`Embedding.iter_chunks`) and never
materialises more than a chunk of temporaries.

Copy or share
-------------
An Embedding never changes its vectors, and ``emb.vectors`` is read-only.  Whether it
copies the array it is given is the ``copy`` argument (numpy's convention):

* ``copy=None`` (default): share the array when nothing can write to it (it is
  read-only all the way down, like a read-only memory map), else copy it;
* ``copy=True``: always copy;
* ``copy=False``: never copy; the Embedding keeps a read-only *view*, and whoever owns
  the array may still change it.

The cached row norms and the "every value is finite" check are kept only while the
memory cannot change (a copy, or a read-only array); a ``copy=False`` view of a
writeable array is *live*: nothing is cached, so both are recomputed on every use and
always describe the current values.  They can never go stale.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from numbers import Integral
from pathlib import Path

import numpy as np

from ._warn import warn
from ._providers import provided
from .errors import DimensionError, MissingWordsError, NonFiniteError
from .vocab import LOOKUP_CONTRACT, Vocabulary, WordLookup, duplicate_rows

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
    dup_rows = duplicate_rows(words)
    if not len(dup_rows):
        return None
    shown = []
    for r in dup_rows[:10].tolist():
        where = f" (line {line_of(r)})" if line_of is not None else f" (row {r})"
        shown.append(f"{words[r]!r}{where}")
    more = f" and {len(dup_rows) - 10} more" if len(dup_rows) > 10 else ""
    src = f"{source}: " if source else ""
    warn(f"{src}{len(dup_rows)} duplicate word(s) dropped, first row kept: "
         f"{', '.join(shown)}{more}", DuplicateWordWarning)
    keep = np.ones(len(words), dtype=bool)
    keep[dup_rows] = False
    return np.flatnonzero(keep)


def is_read_only(array) -> bool:
    """Whether nothing can write to ``array``'s memory: no writeable array or buffer under it.

    True for a read-only memory map and for an array that owns its data and is marked
    read-only; False when the array, or any array or buffer it is a view of, is writeable.
    """
    while isinstance(array, np.ndarray):
        if array.flags.writeable:
            return False
        array = array.base
    if array is None:
        return True
    try:
        with memoryview(array) as view:
            return view.readonly
    except TypeError:
        return False


def owned(array: np.ndarray) -> np.ndarray:
    """Mark a freshly made array, and the arrays it is a view of, read-only; returns it.

    For code that builds a matrix that nothing else refers to and hands it to
    ``Embedding(..., copy=None)``: the array is then shared rather than copied, and its
    caches are kept.
    """
    base = array
    while isinstance(base, np.ndarray):
        base.flags.writeable = False
        base = base.base
    return array


def _read_only_view(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


def _prepare_vectors(vectors, copy: bool | None) -> tuple[np.ndarray, bool]:
    """``(read-only float32 matrix, whether its memory can never change)`` for ``copy``."""
    if not isinstance(vectors, np.ndarray):
        vectors = np.asarray(vectors)
    if vectors.ndim != 2:
        raise DimensionError(f"vectors must be a 2-d (n, d) array, got shape {vectors.shape}")
    is_f32 = vectors.dtype == np.float32
    if copy is False and not is_f32:
        raise ValueError(f"copy=False needs float32 vectors, got {vectors.dtype}; converting is a copy "
                         f"(use copy=None)")
    if copy is None and is_f32 and is_read_only(vectors):
        return _read_only_view(vectors), True
    if copy is False:
        return _read_only_view(vectors), is_read_only(vectors)
    return owned(np.array(vectors, dtype=np.float32, order="C", copy=True)), True


class Embedding(WordLookup):
    """Word vectors: an ordered vocabulary and a ``(n, d)`` float32 matrix.

    Parameters
    ----------
    words : sequence of str or Vocabulary
        Words in row order (file order, which for the usual files is frequency
        order). Duplicates are dropped with a warning, keeping the first row (which
        makes a copy of the remaining rows).
    vectors : array-like of shape (n, d)
        The matrix. Stored as float32 and never changed (``emb.vectors`` is read-only).
    name : str, optional
        A label used in reports and plots (default: the file name or "embedding").
    path : str, optional
        The file this embedding was read from, if any.
    copy : bool or None, optional
        None (default): share ``vectors`` when nothing can write to them (a read-only
        memory map), copy them otherwise. True: always copy. False: never copy; keep a
        read-only view of ``vectors`` (which must be float32), *live* if their owner can
        still change them. See the module docstring; caches never go stale.

    Notes
    -----
    Containers: ``len(emb)`` is the number of words; iterating gives the words in row
    order (like a dict's keys, and gensim's ``index_to_key``); ``word in emb`` tests a
    word; ``np.asarray(emb)`` is the ``(n, d)`` float32 matrix (checked for NaN and
    infinity). Indexing:

    ============================== ===============================================
    ``emb["word"]``                its vector, a float32 ``(d,)`` copy
    ``emb[["a", "b"]]``            a ``(2, d)`` copy; missing words raise
                                   :class:`~embdebias.errors.MissingWordsError`
    ``emb[i]`` (int)               the vector of row ``i``, as gensim's ``kv[i]``
                                   (negative counts from the end)
    ``emb[[0, 5]]`` (ints)         those rows, a ``(2, d)`` copy
    ``emb[a:b]`` (slice)           a new Embedding of those rows that shares memory
                                   (no copy), like :meth:`head`
    ============================== ===============================================
    """
    __doc__ += LOOKUP_CONTRACT + """
    Examples
    --------
    >>> import numpy as np
    >>> emb = Embedding(["he", "she"], np.eye(2))
    >>> emb["she"]
    array([0., 1.], dtype=float32)
    >>> emb.index("she"), emb.get("it"), list(emb)
    (1, -1, ['he', 'she'])
    """

    def __init__(self, words, vectors, *, name: str | None = None, path: str | None = None,
                 copy: bool | None = None):
        if not isinstance(vectors, np.ndarray):
            vectors = np.asarray(vectors)
        if vectors.ndim == 2 and not isinstance(words, Vocabulary):
            words = list(words)
            if len(words) != vectors.shape[0]:
                raise DimensionError(f"{len(words)} words but {vectors.shape[0]} vector rows")
            keep = drop_duplicates(words, path or name)
            if keep is not None:
                words = [words[i] for i in keep]
                vectors = owned(np.ascontiguousarray(vectors[keep], dtype=np.float32))
                copy = None  # the rows kept are a new array already
            words = Vocabulary._from_unique(words)
        vectors, self._frozen = _prepare_vectors(vectors, copy)
        if len(words) != vectors.shape[0]:
            raise DimensionError(f"{len(words)} words but {vectors.shape[0]} vector rows")
        self._vocab = words
        self._vectors = vectors
        self.path = os.fspath(path) if path is not None else None
        self.name = name or (Path(self.path).name if self.path else "embedding")
        self._norms: np.ndarray | None = None
        # Set after one full pass of iter_chunks found every value finite (only while the
        # memory cannot change). The text and binary readers check as they parse;
        # memory-mapped formats (native, gensim) are checked lazily, chunk by chunk, so
        # that opening them stays instant.
        self._finite = False

    # -- basic properties ----------------------------------------------------------
    @property
    def words(self) -> Vocabulary:
        """The vocabulary, an immutable sequence of words in row order."""
        return self._vocab

    @property
    def vectors(self) -> np.ndarray:
        """The ``(n, d)`` float32 matrix, read-only (possibly a memory map)."""
        return self._vectors

    @property
    def dim(self) -> int:
        return int(self._vectors.shape[1])

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self._vectors.shape)

    @property
    def live(self) -> bool:
        """True for a ``copy=False`` view whose owner may still change it (nothing is cached)."""
        return not self._frozen

    def __len__(self) -> int:
        return int(self._vectors.shape[0])

    def __iter__(self) -> Iterator[str]:
        """The words in row order."""
        return iter(self._vocab)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """The ``(n, d)`` matrix for ``np.asarray(emb)``, checked for NaN and infinity first."""
        if not self._finite:
            for _ in self.iter_chunks():
                pass
        if dtype is not None and np.dtype(dtype) != self._vectors.dtype:
            return self._vectors.astype(dtype)
        return np.array(self._vectors) if copy else self._vectors

    def __repr__(self) -> str:
        return f"Embedding(name={self.name!r}, n={len(self)}, dim={self.dim})"

    # -- lookup (index / get / rows / split_known / in come from WordLookup) --------------
    def _lookup_vocab(self) -> Vocabulary:
        return self._vocab

    def _lookup_where(self) -> str:
        return f"the vocabulary of {self.name}"

    def _missing(self, missing: list[str]) -> MissingWordsError:
        return MissingWordsError(f"{len(missing)} word(s) not in the vocabulary of {self.name}: "
                                 f"{', '.join(map(repr, missing[:20]))}", missing)

    def __getitem__(self, key):
        """A vector, a matrix of rows or a sliced Embedding: see the class docstring."""
        if isinstance(key, str):
            return self.take([self.index(key)])[0]
        if isinstance(key, slice):
            return Embedding(Vocabulary._from_unique(self._vocab[key]), self._vectors[key],
                             name=self.name, path=self.path, copy=False)._inherit(self)
        if isinstance(key, Integral) and not isinstance(key, bool):
            return self.take([self._check_row(int(key))])[0]
        return self.take(self._key_rows(key))

    def _check_row(self, i: int) -> int:
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"row {i} out of range for {n} words")
        return i % n if n else i

    def _key_rows(self, key) -> np.ndarray:
        """Rows for a sequence of words or of integer rows."""
        if isinstance(key, np.ndarray) and key.dtype.kind in "iu":
            items = key.ravel().tolist()
        elif isinstance(key, (list, tuple, np.ndarray)):
            items = list(key)
        else:
            raise TypeError(f"an Embedding is indexed by a word, a row, a slice or a list of words or rows, "
                            f"not {type(key).__name__}")
        if all(isinstance(k, str) for k in items):
            rows = self.rows(items)
            if (rows < 0).any():
                raise self._missing([w for w, r in zip(items, rows) if r < 0])
            return rows
        if all(isinstance(k, Integral) and not isinstance(k, bool) for k in items):
            return np.array([self._check_row(int(k)) for k in items], dtype=np.int64)
        raise TypeError("a list index must hold only words (str) or only rows (int)")

    def get_vector(self, key, norm: bool = False) -> np.ndarray:
        """The vector of a word (or row number), as gensim's ``KeyedVectors.get_vector``.

        Parameters
        ----------
        key : str or int
            A word, or a row number.
        norm : bool
            Return the vector scaled to unit length (a zero vector stays zero).

        Returns
        -------
        ndarray of shape (d,)
            A float32 copy.

        Raises
        ------
        MissingWordsError
            ``key`` is a word that is not in the vocabulary.
        """
        vec = self[key]
        if norm:
            length = float(np.sqrt(vec @ vec))
            if length > 0:
                vec /= length
        return vec

    def take(self, rows, dtype=np.float32) -> np.ndarray:
        """A copy of the given rows (indices or a slice) as ``dtype``.

        Raises :class:`NonFiniteError` naming the word if a row holds NaN or infinity.
        """
        indexed = self._vectors[rows]
        # a gather (rows as indices) is already a fresh array: converted, not copied again; a
        # slice or a single row is a view of the vectors, so copied
        fresh = not np.may_share_memory(indexed, self._vectors)
        block = np.ascontiguousarray(indexed, dtype=dtype) if fresh else np.array(indexed, dtype=dtype)
        if not self._finite:
            self._check_finite(block, rows)
        if not isinstance(rows, slice):
            _release_mapped_pages(self._vectors)
        return block

    def assume_finite(self) -> "Embedding":
        """Skip the lazy NaN/infinity checks: for readers that validated every value.

        Has no effect on a live view (its values may change).
        """
        self._finite = self._frozen
        return self

    def _inherit(self, parent: "Embedding") -> "Embedding":
        """Take over the finite check of ``parent`` (for views of its rows)."""
        self._finite = parent._finite and self._frozen
        return self

    def _check_finite(self, block: np.ndarray, rows) -> None:
        # The sum is finite when every value is (and seldom otherwise: an overflow): one
        # fast pass in the usual case, where the row-wise test costs several.
        if np.isfinite(np.einsum("i->", block.reshape(-1))):
            return
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

    # -- whole-vocabulary passes, chunked --------------------------------------------
    def iter_chunks(self, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[tuple[int, int, np.ndarray]]:
        """Yield ``(start, stop, block)`` over the rows; ``block`` is a read-only float32 array."""
        yield from self._chunks(0, len(self), chunk_rows)
        self._finite = self._frozen

    def _chunks(self, first: int, last: int, chunk_rows: int):
        for start in range(first, last, chunk_rows):
            stop = min(start + chunk_rows, last)
            block = np.asarray(self._vectors[start:stop], dtype=np.float32)
            if not self._finite:
                self._check_finite(block, slice(start, stop))
            yield start, stop, block

    def fingerprint(self, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> str:
        """``blake2b:`` and the hex digest (16 bytes) of the words (UTF-8, one per line) and the
        float32 rows in order: the same for the same vectors however they were stored (the file
        format, its path and its date do not count), different for any change of a word or value.
        Read in chunks of ``chunk_rows`` rows (bounded memory); a bias card names the embedding by it.
        """
        return fingerprint_of(self._fingerprint_parts(chunk_rows))

    def _fingerprint_parts(self, chunk_rows: int = DEFAULT_CHUNK_ROWS):
        """The bytes :meth:`fingerprint` hashes, in order: the words, the shape, then each chunk of
        rows as a view of its little-endian float32 values (no copy: hashlib reads the buffer, and
        releases the GIL while it hashes a large one)."""
        yield "\n".join(self.words.tolist()).encode("utf-8")
        yield np.asarray(self.shape, dtype="<i8").tobytes()
        for _, _, block in self.iter_chunks(chunk_rows):
            yield memoryview(np.ascontiguousarray(block, dtype="<f4")).cast("B")

    def norms(self, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> np.ndarray:
        """Euclidean norm of every row (read-only; computed in chunks, cached unless live)."""
        if self._norms is not None:
            return self._norms
        out = np.empty(len(self), dtype=np.float32)
        for start, stop, block in self.iter_chunks(chunk_rows):
            out[start:stop] = np.sqrt(np.einsum("ij,ij->i", block, block))
        out.flags.writeable = False
        if self._frozen:
            self._norms = out
        return out

    def normalize(self, chunk_rows: int = DEFAULT_CHUNK_ROWS, out: np.ndarray | None = None) -> "Embedding":
        """A new embedding whose rows have unit length (zero rows stay zero).

        Parameters
        ----------
        chunk_rows : int
            Rows per chunk.
        out : ndarray, optional
            Destination ``(n, d)`` float32 array (for example a writable memory map),
            so that memory stays bounded by a chunk for huge vocabularies. The result
            is a live view of it (``copy=False``).
        """
        norms = self.norms(chunk_rows)
        fresh = out is None
        if fresh:
            out = np.empty(self.shape, dtype=np.float32)
        elif out.shape != self.shape:
            raise DimensionError(f"out has shape {out.shape}, expected {self.shape}")
        for start, stop, block in self.iter_chunks(chunk_rows):
            nrm = norms[start:stop, None]
            np.divide(block, nrm, out=out[start:stop], where=nrm > 0)
            out[start:stop][(nrm == 0)[:, 0]] = 0.0
        result = Embedding(self._vocab, owned(out) if fresh else out, name=self.name, copy=False)
        if result._frozen:
            result._norms = owned(np.where(norms > 0, 1.0, 0.0).astype(np.float32))
            result._finite = True
        return result

    def is_normalized(self, atol: float = 1e-4) -> bool:
        """Whether every non-zero row has unit length."""
        n = self.norms()
        return bool(np.all((np.abs(n - 1.0) <= atol) | (n == 0)))

    # -- similarity --------------------------------------------------------------------
    def most_similar(self, positive=None, negative=None, topn: int | None = 10,
                     restrict_vocab: int | None = None, *, chunk_rows: int = DEFAULT_CHUNK_ROWS):
        """The words most cosine-similar to a combination of words and vectors, as gensim's.

        Each given word is scaled to unit length (a given vector is used as it is),
        weighted (+1 for ``positive``, -1 for ``negative``, or the weight of a
        ``(item, weight)`` pair), the weighted mean is scaled to unit length, and every
        row is ranked by its cosine with it. The query words themselves are left out.
        The rows are scanned in blocks (memory: a block and ``topn`` candidates).

        Parameters
        ----------
        positive, negative : str, int, ndarray, or a list of them or of (item, weight)
            Words (or row numbers, or ``(d,)`` vectors) that pull towards, or away from,
            the result.
        topn : int or None
            How many ``(word, cosine)`` pairs to return; None returns the cosine of every
            row (of the first ``restrict_vocab``) as a float32 array.
        restrict_vocab : int, optional
            Search only the first ``restrict_vocab`` rows (the most frequent words in
            the usual files).
        chunk_rows : int
            Rows per block.

        Returns
        -------
        list of (str, float), or ndarray
            Best first. Zero rows have cosine 0.

        Raises
        ------
        MissingWordsError
            A query word is not in the vocabulary.
        ValueError
            Neither ``positive`` nor ``negative`` holds anything.
        """
        if isinstance(topn, Integral) and topn < 1:
            return []
        terms = _query_terms(positive, 1.0) + _query_terms(negative, -1.0)
        if not terms:
            raise ValueError("cannot compute similarity with no input")
        mean, exclude = self._query_vector(terms)
        stop = len(self) if not restrict_vocab else min(int(restrict_vocab), len(self))
        norms = self.norms(chunk_rows)
        if not topn:
            out = np.empty(stop, dtype=np.float32)
            for start, end, block in self._chunks(0, stop, chunk_rows):
                out[start:end] = _cosines(block, mean, norms[start:end])
            return out
        keep = int(topn) + len(exclude)
        best_rows, best_sims = np.zeros(0, np.int64), np.zeros(0, np.float32)
        for start, end, block in self._chunks(0, stop, chunk_rows):
            sims = np.concatenate([best_sims, _cosines(block, mean, norms[start:end])])
            rows = np.concatenate([best_rows, np.arange(start, end, dtype=np.int64)])
            if len(sims) > keep:
                top = np.argpartition(-sims, keep - 1)[:keep]
                sims, rows = sims[top], rows[top]
            best_rows, best_sims = rows, sims
        order = np.lexsort((best_rows, -best_sims))
        ranked = [(r, s) for r, s in zip(best_rows[order].tolist(), best_sims[order].tolist())
                  if r not in exclude]
        return [(self._vocab[r], float(s)) for r, s in ranked[:topn]]

    def _query_vector(self, terms) -> tuple[np.ndarray, set[int]]:
        """The unit weighted mean of ``terms`` and the rows of the query words."""
        mean = np.zeros(self.dim, dtype=np.float64)
        total, exclude, missing = 0.0, set(), []
        for item, weight in terms:
            if isinstance(item, np.ndarray):
                if item.shape != (self.dim,):
                    raise DimensionError(f"a query vector of shape {item.shape}; expected ({self.dim},)")
                vec = item.astype(np.float64)
            else:
                row = self.get(item) if isinstance(item, str) else self._check_row(int(item))
                if row < 0:
                    missing.append(item)
                    continue
                exclude.add(row)
                vec = self.get_vector(row, norm=True).astype(np.float64)
            mean += weight * vec
            total += abs(weight)
        if missing:
            raise self._missing(missing)
        if total > 0:
            mean /= total
        length = np.linalg.norm(mean)
        return (mean / length if length > 0 else mean).astype(np.float32), exclude

    # -- derived embeddings ----------------------------------------------------------
    def subset(self, words: Iterable[str], *, on_missing: str = "raise") -> "Embedding":
        """A new in-memory embedding of ``words`` (in the given order).

        ``on_missing="raise"`` raises :class:`MissingWordsError` for words not in the
        vocabulary; ``"ignore"`` leaves them out.
        """
        words = list(words)
        rows = self.rows(words)
        found = rows >= 0
        if not found.all() and on_missing == "raise":
            raise self._missing([w for w, f in zip(words, found) if not f])
        words = [w for w, f in zip(words, found) if f]
        return Embedding(words, owned(self.take(rows[found])), name=self.name)

    def head(self, n: int) -> "Embedding":
        """The first ``n`` words (file order is frequency order for the usual files), sharing memory."""
        return self[:max(int(n), 0)]

    def with_vectors(self, vectors: np.ndarray, *, name: str | None = None,
                     copy: bool | None = None) -> "Embedding":
        """The same vocabulary with other vectors.

        Parameters
        ----------
        vectors : array-like of shape (n, d)
        name : str, optional
            Label (default: this embedding's).
        copy : bool or None
            As in the constructor.

        Returns
        -------
        Embedding
        """
        if len(vectors) != len(self):
            raise DimensionError(f"{len(vectors)} rows for {len(self)} words")
        return Embedding(self._vocab, vectors, name=name or self.name, copy=copy)

    # -- gensim interop: the one conversion in each direction -----------------------------
    @classmethod
    def from_gensim(cls, kv, *, name: str | None = None, copy: bool | None = None) -> "Embedding":
        """An Embedding of a gensim ``KeyedVectors`` (or a model's ``.wv``).

        Parameters
        ----------
        kv : gensim.models.KeyedVectors
        name : str, optional
            Label (default "gensim").
        copy : bool or None
            As in the constructor: by default ``kv.vectors`` is copied (it is writeable);
            ``copy=False`` shares it as a live read-only view.

        Returns
        -------
        Embedding
            A repeated key (only a hand-edited ``index_to_key`` has one) keeps its first
            row, with a :class:`DuplicateWordWarning`, as everywhere else.
        """
        kv = getattr(kv, "wv", kv)
        words = list(kv.index_to_key)
        vectors = kv.vectors
        if vectors.shape[0] != len(words):  # gensim may preallocate rows
            vectors = vectors[:len(words)]
        return cls(words, vectors, name=name or "gensim", copy=copy)

    def to_gensim(self, *, copy: bool = True):
        """A gensim ``KeyedVectors`` with these words and vectors, in row order.

        Parameters
        ----------
        copy : bool
            True (default): gensim gets its own writeable copy. False: gensim gets this
            embedding's read-only matrix, without copying (fine for saving or querying;
            gensim methods that write into ``kv.vectors`` then raise).

        Returns
        -------
        gensim.models.KeyedVectors
        """
        from gensim.models import KeyedVectors

        words = self._vocab.tolist()
        kv = KeyedVectors(self.dim, count=0, dtype=np.float32)
        kv.index_to_key = words
        kv.key_to_index = dict(zip(words, range(len(words))))
        kv.vectors = np.array(self._vectors, dtype=np.float32) if copy else self._vectors
        kv.allocate_vecattrs()
        return kv

    # -- saving ------------------------------------------------------------------------
    def save(self, path, format: str | None = None, **kwargs) -> str:
        """Write to ``path`` atomically; see :func:`embdebias.io.save`.

        Parameters
        ----------
        path : path-like
        format : str, optional
            One of :data:`embdebias.io.FORMATS`; None chooses it from the file name
            exactly as the command line does (:func:`embdebias.io.guess_format_from_path`):
            ``x.bin`` is word2vec binary, ``x.embd`` (or no known ending) native.
        **kwargs
            Passed to :func:`embdebias.io.save` (``inputs``).

        Returns
        -------
        str
            The format written.
        """
        return provided("save embedding")(self, path, format=format, **kwargs)


class RowMapEmbedding(Embedding):
    """An embedding whose rows are a row-wise map of another's, computed when they are read.

    Nothing is stored: reading ``k`` rows (:meth:`take`, indexing, :meth:`iter_chunks`)
    reads those ``k`` rows of ``source`` and maps them with ``func``, so whatever reads only
    some rows (an evaluation's word sets, the first 50,000 words) costs only those rows.
    A debiaser's :meth:`~embdebias.debias._base.Debiaser.lazy_transform` returns one.

    Parameters
    ----------
    source : Embedding
        The input rows; it must stay unchanged while this embedding is used.
    func : callable
        ``func(rows, block, out)`` writes the mapped rows into the float32 ``out`` from
        ``block``, the rows ``rows`` of ``source`` (a slice or an index array, any order).
        An output row may depend on its input row and its row number, on nothing else.
    name : str, optional
        A label (default: the source's).

    Notes
    -----
    :attr:`vectors`, ``np.asarray(emb)`` and :meth:`to_gensim` need the whole matrix: they
    map every row once into memory (``n x d`` float32) and keep it. A slice (``emb[a:b]``,
    :meth:`head`) is lazy too.
    """

    def __init__(self, source: Embedding, func, *, name: str | None = None, _first: int = 0,
                 _last: int | None = None):
        self._source, self._func = source, func
        self._first = _first
        self._last = len(source) if _last is None else _last
        whole = _first == 0 and self._last == len(source)
        self._vocab = source.words if whole else Vocabulary._from_unique(source.words[_first:self._last])
        self._frozen = source._frozen
        self._finite = True  # every row read is read through source, which checks it
        self._norms = None
        self._matrix: np.ndarray | None = None
        self.path = None
        self.name = name or source.name

    @property
    def _vectors(self) -> np.ndarray:
        """The whole mapped matrix (computed chunk by chunk; kept unless the source is live)."""
        if self._matrix is not None:
            return self._matrix
        out = np.empty(self.shape, dtype=np.float32)
        for start, stop, block in self.iter_chunks():
            out[start:stop] = block
        matrix = _read_only_view(owned(out))
        if self._frozen:
            self._matrix = matrix
        return matrix

    @property
    def dim(self) -> int:
        return self._source.dim

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self), self._source.dim)

    def __len__(self) -> int:
        return self._last - self._first

    def __repr__(self) -> str:
        return f"RowMapEmbedding(name={self.name!r}, n={len(self)}, dim={self.dim})"

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step == 1:
                return RowMapEmbedding(self._source, self._func, name=self.name, _first=self._first + start,
                                       _last=self._first + max(start, stop))
            rows = np.arange(start, stop, step)  # those rows only, never the whole matrix
            return Embedding(Vocabulary._from_unique(self._vocab[key]), owned(self.take(rows)), name=self.name,
                             copy=False)
        return super().__getitem__(key)

    def take(self, rows, dtype=np.float32) -> np.ndarray:
        """The mapped rows (indices, a boolean mask or a slice) as ``dtype``."""
        if isinstance(rows, slice):
            start, stop, step = rows.indices(len(self))
            if step != 1:
                return self.take(np.arange(start, stop, step), dtype)
            where = slice(self._first + start, self._first + max(start, stop))
        else:
            where = self._absolute_rows(rows)
        block = self._source.take(where)
        out = np.empty(block.shape, dtype=np.float32)
        if len(out):
            self._func(where, block, out)
        return out if np.dtype(dtype) == np.float32 else out.astype(dtype)

    def _absolute_rows(self, rows) -> np.ndarray:
        """The source's row numbers of ``rows`` (row numbers, negative from the end, or a mask)."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            if rows.shape != (len(self),):
                raise IndexError(f"a boolean mask of shape {rows.shape} for {len(self)} words")
            rows = np.flatnonzero(rows)
        at = rows.astype(np.int64, copy=False)
        if at.ndim != 1:
            raise IndexError(f"rows must be one-dimensional, got shape {at.shape}")
        if at.size and (at.min() < -len(self) or at.max() >= len(self)):
            raise IndexError(f"row out of range for {len(self)} words")
        return np.where(at < 0, at + len(self), at) + self._first

    def _chunks(self, first: int, last: int, chunk_rows: int):
        for start, stop, block in self._source._chunks(self._first + first, self._first + last, chunk_rows):
            out = np.empty(block.shape, dtype=np.float32)
            self._func(slice(start, stop), block, out)
            yield start - self._first, stop - self._first, out


def fingerprint_of(parts, stop=None) -> str | None:
    """``blake2b:`` and the hex digest (16 bytes) of the byte strings ``parts`` in order: the
    digest of :meth:`Embedding.fingerprint` (of its ``_fingerprint_parts``). ``stop``: a
    ``threading.Event`` checked before each part; None once it is set (the hash is unfinished)."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        if stop is not None and stop.is_set():
            return None
        digest.update(part)
    return f"blake2b:{digest.hexdigest()}"


def _release_mapped_pages(vectors: np.ndarray) -> None:
    """Unmap the file pages a scattered read of a memory-mapped matrix brought in.

    Each row read through the map faults in the pages around it as well (Linux maps up
    to 64 KiB around a fault), so a few thousand scattered rows of a 3,000,000 x 300
    file made some 430 MB of it resident in this process, measured in ``embdebias
    run`` at that scale. The copy is taken; the pages stay in the page cache, so a
    later read is as fast, but they no longer count as this process's memory.
    """
    import mmap

    base = vectors
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "_mmap", None) or getattr(base, "base", None)
    if base is not None and hasattr(base, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        try:
            base.madvise(mmap.MADV_DONTNEED)
        except (OSError, ValueError):  # a closed or special map: nothing to release
            pass


def _query_terms(items, sign: float) -> list[tuple[object, float]]:
    """``(item, weight)`` pairs of a ``most_similar`` argument (gensim's conventions)."""
    if items is None:
        return []
    if isinstance(items, (str, Integral)) or (isinstance(items, np.ndarray) and items.ndim == 1):
        items = [items]
    out = []
    for item in items:
        if isinstance(item, tuple):
            out.append((item[0], float(item[1])))
        else:
            out.append((item, sign))
    return out


def _cosines(block: np.ndarray, unit: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``block`` with the unit vector ``unit`` (0 for zero rows)."""
    dots = block @ unit
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def _no_copy(vectors) -> bool | None:
    """``copy`` for wrapping without copying: False for float32 arrays, else None (convert)."""
    return False if isinstance(vectors, np.ndarray) and vectors.dtype == np.float32 else None


def as_embedding(obj, *, name: str | None = None) -> Embedding:
    """Accept an :class:`Embedding`, a gensim ``KeyedVectors`` or a ``(words, vectors)`` pair.

    Nothing is copied when the vectors are float32: a KeyedVectors or a pair is wrapped
    as a live read-only view (``copy=False``), so the estimators take gensim input
    without doubling memory, and nothing is cached that a later change could make stale.
    """
    if isinstance(obj, Embedding):
        return obj
    if hasattr(obj, "index_to_key") and hasattr(obj, "vectors"):
        return Embedding.from_gensim(obj, name=name, copy=_no_copy(obj.vectors))
    if isinstance(obj, tuple) and len(obj) == 2:
        return Embedding(obj[0], obj[1], name=name, copy=_no_copy(obj[1]))
    raise TypeError(f"expected an Embedding, a gensim KeyedVectors or (words, vectors), "
                    f"got {type(obj).__name__}")
