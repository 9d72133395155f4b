"""Machinery shared by the debiasers: chunked output to memory or to a native file."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._format import format_scalar
from .._rows import unit_rows  # noqa: F401  (the debiasers' import point)
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, RowMapEmbedding, as_embedding, owned
from ..errors import DimensionError


def case_variants(words: Iterable[str]) -> list[str]:
    """Each word with its lower-case, Title-case and UPPER-case forms (order kept, no duplicates)."""
    out = {}
    for w in words:
        for v in (w, w.lower(), w[:1].upper() + w[1:].lower(), w.upper()):
            out.setdefault(v, None)
    return list(out)


def check_dim(embedding: Embedding, n_features: int, who: str) -> None:
    if embedding.dim != n_features:
        raise DimensionError(f"{who} was fitted on {n_features}-d vectors, "
                             f"{embedding.name} has {embedding.dim}-d vectors")


class Debiaser(TransformerMixin, BaseEstimator):
    """What every debiaser shares: scikit-learn's estimator API and one ``transform`` signature.

    ``fit(embedding)`` learns; ``transform(embedding, out=None, *, progress=False,
    name=None)`` returns a new :class:`~embdebias.embedding.Embedding` (see
    :func:`map_chunks` for ``out``), and :meth:`lazy_transform` the same embedding computed
    row by row when read, with nothing written; using either before ``fit`` raises
    :class:`sklearn.exceptions.NotFittedError`. Subclasses implement ``fit`` and
    ``_prepare``, which returns the fitted map as ``apply(rows, block, out)``: every
    debiaser here is a row-wise map (an output row depends only on its input row and its
    index), which is what lets an evaluation read only the rows its metrics need.
    """

    _suffix = "debiased"
    #: Whether the method edits vectors linearly (a matrix, maybe an offset; hard debias's
    #: projection), so that a run reports its erasure certificate
    #: (:func:`~embdebias.debias.certificate.run_certificate`): how far it is from linear guardedness.
    linear = False

    def transform(self, embedding, out=None, *, progress: bool = False, name: str | None = None,
                  also: Callable[[int, np.ndarray], None] | None = None) -> Embedding:
        """A new, debiased embedding with unit-length rows (zero rows stay zero).

        Except for a debiaser whose ``normalize`` parameter is False (the concept
        erasers of :mod:`embdebias.debias.leace`, by default): its guarantee is for the
        affine output, so rows are returned as the map leaves them.

        Parameters
        ----------
        embedding : Embedding or gensim KeyedVectors
            Same dimension as the fitted one (usually the same embedding).
        out : None, ndarray or path
            Where the result goes: in memory (None), a given ``(n, d)`` float32 array,
            or a native-format directory written chunk by chunk and atomically
            (bounded memory), then returned memory-mapped.
        progress : bool
            Show a progress bar.
        name : str, optional
            Name of the result (default: the input's name and the method).
        also : callable, optional
            ``also(start, block)`` is called with every input block, in order, on a
            thread of its own beside the transform (BLAS held to one thread meanwhile):
            another computation that shares this pass over the rows (``embdebias run``
            accumulates soft debias's moments while hard debias writes). Its error is raised.
        """
        emb = self._fitted_input(embedding)
        if isinstance(out, np.ndarray) and out.dtype != np.float32:
            raise DimensionError(f"out must be float32, got {out.dtype}")
        return map_chunks(emb, self._prepare(emb), out=out, chunk_rows=int(self.chunk_rows), progress=progress,
                          name=name or f"{emb.name} ({self._suffix})", also=also)

    def lazy_transform(self, embedding, *, name: str | None = None) -> RowMapEmbedding:
        """The debiased embedding, computed from ``embedding``'s rows when they are read.

        Nothing is computed or written up front: reading ``k`` rows reads ``k`` rows of the
        input and maps them, so an evaluation that reads 50,000 rows of a 3,000,000-word
        embedding costs 50,000 rows, not a pass over the matrix and a written copy. Its
        rows equal :meth:`transform`'s up to float32 rounding (a product of a few rows and
        one of a whole chunk may round their last bit differently).

        Parameters
        ----------
        embedding : Embedding or gensim KeyedVectors
            Same dimension as the fitted one (usually the same embedding); it must stay
            unchanged while the result is used.
        name : str, optional
            Name of the result (default: the input's name and the method).

        Returns
        -------
        RowMapEmbedding
        """
        emb = self._fitted_input(embedding)
        return RowMapEmbedding(emb, self._prepare(emb), name=name or f"{emb.name} ({self._suffix})")

    def _fitted_input(self, embedding) -> Embedding:
        """``embedding`` as an Embedding, once this debiaser is fitted on its dimension."""
        check_is_fitted(self)
        emb = as_embedding(embedding)
        check_dim(emb, self.n_features_in_, type(self).__name__)
        return emb

    def fit_transform(self, embedding, y=None, *, out=None, progress: bool = False,
                      name: str | None = None) -> Embedding:
        """``fit(embedding)`` then ``transform(embedding, out, progress=..., name=...)``."""
        return self.fit(embedding).transform(embedding, out, progress=progress, name=name)

    def run_info(self, embedding: Embedding) -> dict:
        """What ``embdebias run`` records about this fit in ``report.json`` (made JSON-able there)."""
        return {}

    @classmethod
    def report_lines(cls, info: dict) -> list[str]:
        """The report's lines about a fit, from its :meth:`run_info` (default: its scalar entries)."""
        shown = {k: v for k, v in (info or {}).items() if not isinstance(v, (list, dict))}
        if not shown:
            return []
        return [f"- {cls._suffix} debias: " + ", ".join(f"{k} = {format_scalar(v)}" for k, v in shown.items())]

    def _attribute(self):
        """The attribute this debiaser works on: its ``attribute`` parameter, else the attribute its
        fitted ``subspace`` carries, else gender (:func:`~embdebias.data.attributes.given_attribute`:
        an ``attribute`` that disagrees with the subspace's is an error naming both). Resolved once a
        fit (``attribute_``), so every list the fit reads is the same attribute's."""
        from ..data.attributes import given_attribute

        definitional = getattr(self, "definitional", None)
        size = None if definitional is None or isinstance(definitional, str) or not len(definitional) \
            else len(definitional[0])
        self.attribute_ = given_attribute(getattr(self, "attribute", None), getattr(self, "lists", "published"),
                                          carried=getattr(getattr(self, "subspace", None), "attribute_", None),
                                          set_size=size)
        return self.attribute_

    def _prepare(self, emb: Embedding):
        """The fitted map of ``emb``'s rows, ``apply(rows, block, out)``: it writes the new rows
        into ``out`` from ``block``, the input rows ``rows`` (a slice or an index array, in
        any order) of ``emb``. Anything it needs of other rows (equalized pairs) is computed
        here, before any block is mapped."""
        raise NotImplementedError

    def _validate(self) -> None:
        """Check the constructor parameters against ``_parameter_constraints`` (a project error if bad)."""
        from sklearn.utils._param_validation import InvalidParameterError

        from ..errors import EmbdebiasError

        try:
            self._validate_params()
        except InvalidParameterError as exc:
            raise EmbdebiasError(str(exc)) from None

    #: Fitted attributes that describe how the fit went (solver objects, the expansion)
    #: rather than what ``transform`` needs: :meth:`save_params` leaves them out.
    _transient: tuple = ()

    #: Fitted attributes that say what the fit read (the attribute, an object of word lists):
    #: :meth:`save_params` leaves them out, as ``transform`` never reads them.
    _fit_context: tuple = ("attribute_",)

    #: What a parameter file of this class holds: ``{fitted attribute: Array or Value}``
    #: (:mod:`embdebias.debias._params`); every fitted attribute not transient is named here.
    _params_schema: dict = {}

    def save_params(self, path) -> str:
        """Write the fitted parameters to ``path`` (npz with a JSON member, no pickle).

        Another copy of the vectors can then be debiased with them, without refitting:
        ``type(self)().load_params(path).transform(embedding)``.
        """
        from ._params import save_params

        return save_params(self, path)

    def load_params(self, path, *, dim: int | None = None):
        """Set the fitted parameters from a file of :meth:`save_params`; returns ``self``.

        A damaged file or one of another method raises
        :class:`~embdebias.errors.ParamsFileError`; one fitted on another dimension than
        ``dim`` (or than this estimator's, if fitted) raises
        :class:`~embdebias.errors.DimensionError`.
        """
        from ._params import load_params

        return load_params(self, path, dim=dim)

    def _check_loaded_params(self) -> None:
        """Check constructor parameters read from a parameter file (a project error if bad):
        by ``_parameter_constraints`` where the class declares them."""
        if getattr(self, "_parameter_constraints", None) is not None:
            self._validate()


def place_rows(out: np.ndarray, rows, fixed_rows: np.ndarray, fixed: np.ndarray) -> None:
    """Put ``fixed`` (the final vectors of the sorted rows ``fixed_rows``) where the rows ``rows``
    of a block (a slice or an index array, any order) meet them; ``out`` holds the block's rows."""
    if isinstance(rows, slice):
        lo, hi = np.searchsorted(fixed_rows, (rows.start, rows.stop))
        out[fixed_rows[lo:hi] - rows.start] = fixed[lo:hi]
        return
    if not len(fixed_rows):
        return
    rows = np.asarray(rows)
    at = np.minimum(np.searchsorted(fixed_rows, rows), len(fixed_rows) - 1)
    hit = fixed_rows[at] == rows
    out[hit] = fixed[at[hit]]


def map_chunks(embedding: Embedding, func: Callable[[slice, np.ndarray, np.ndarray], None], *,
               out=None, chunk_rows: int = DEFAULT_CHUNK_ROWS, name: str | None = None, progress: bool = False,
               also: Callable[[int, np.ndarray], None] | None = None) -> Embedding:
    """Apply the row-wise map ``func(rows, block, out)`` over the rows into a new embedding.

    Parameters
    ----------
    embedding : Embedding
        The input; it is only read.
    func : callable
        Writes the new rows ``rows`` (here a ``slice(start, stop)``) into ``out`` (the
        destination's float32 ``(m, d)`` slice) from ``block`` (the input rows, possibly
        read-only). Working in the destination itself avoids chunk-sized temporaries,
        whose page faults cost more than the arithmetic on large inputs.
    out : None, ndarray or path
        None: the result lives in memory. An ndarray: a ``(n, d)`` float32 destination
        (e.g. a writable memory map). A path: a native-format directory written chunk by
        chunk and renamed into place at the end (memory stays bounded by a chunk), then
        opened memory-mapped.
    progress : bool
        Show a tqdm progress bar.
    also : callable, optional
        ``also(start, block)`` sees every input block, in order, on a thread of its own (a
        computation sharing the pass); BLAS runs on one thread meanwhile. Its error is raised.
    """
    name = name or embedding.name
    if also is None:
        return _map_pass(embedding, func, out, _pass_chunks(embedding, chunk_rows, name, progress), chunk_rows, name)
    from .._threads import one_thread

    # ``also`` runs on a thread of its own beside the map (soft debias's Gram products beside
    # hard debias's row arithmetic, which uses no BLAS): the two take both cores. The pass holds
    # BLAS to one thread throughout, set and restored here, on this thread only (the limit is
    # process-wide: a thread setting and restoring it on its own would race with this one).
    with one_thread(), _Companion(also) as companion:
        return _map_pass(embedding, func, out, companion.feed(_pass_chunks(embedding, chunk_rows, name, progress)),
                         chunk_rows, name)


def _pass_chunks(embedding: Embedding, chunk_rows: int, name: str, progress: bool):
    """``embedding.iter_chunks``, with a progress bar when asked."""
    blocks = embedding.iter_chunks(chunk_rows)
    if progress:
        from tqdm import tqdm

        total = -(-len(embedding) // chunk_rows)
        blocks = tqdm(blocks, total=total, desc=f"debias {name}", unit="chunk")
    return blocks


class _Companion:
    """Calls ``also(start, block)`` for each chunk on one thread of its own, in order, at most one
    chunk behind the pass (so the blocks it holds stay bounded); its error is raised in the pass
    at the next chunk or at the end. The blocks are the input's rows, never reused buffers."""

    def __init__(self, also):
        self.also = also

    def __enter__(self):
        from concurrent.futures import ThreadPoolExecutor

        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embdebias-also")
        self.pending = None
        return self

    def feed(self, chunks):
        for start, stop, block in chunks:
            self._wait()
            self.pending = self.pool.submit(self.also, start, block)
            yield start, stop, block
        self._wait()

    def _wait(self):
        job, self.pending = self.pending, None
        if job is not None:
            job.result()

    def __exit__(self, *exc):
        if self.pending is not None:
            self.pending.cancel()
        self.pool.shutdown(wait=True)
        return False


def _map_pass(embedding: Embedding, func, out, chunks, chunk_rows: int, name: str) -> Embedding:
    """:func:`map_chunks`'s pass over ``chunks`` into memory, a given array or a native file."""
    if out is None or isinstance(out, np.ndarray):
        fresh = out is None
        if fresh:
            out = np.empty(embedding.shape, dtype=np.float32)
        elif out.shape != embedding.shape:
            raise DimensionError(f"out has shape {out.shape}, expected {embedding.shape}")
        for start, stop, block in chunks:
            func(slice(start, stop), block, out[start:stop])
        # A fresh array becomes the result's own; a given one is shared (a live view).
        return Embedding(embedding.words, owned(out) if fresh else out, name=name, copy=False)

    return _map_to_native(embedding, func, out, chunks, chunk_rows, name)


def _map_to_native(embedding: Embedding, func, out, chunks, chunk_rows: int, name: str) -> Embedding:
    """:func:`map_chunks` into a native-format directory ``out``, appended chunk by chunk.

    Two reused chunk buffers, appended to the file by a thread of its own: a written memory
    map of the whole output would count in resident memory until the end, and the write of
    one chunk (a copy into the page cache, done without the GIL) overlaps the work on the
    next instead of waiting for it (hard debias's pass over 3,000,000 x 300 with soft's moments,
    measured before the moments moved to a thread of their own: 14.7 and 18.0 s against 16.6
    and 24.2 s written on the pass's own thread).
    One writing thread keeps the chunks in order; a buffer is filled again only once its
    previous rows are written, and a failed write is raised here, as before.
    """
    from concurrent.futures import ThreadPoolExecutor

    from ..io.native import NativeWriter

    inputs = (embedding.path,) if embedding.path else ()
    rows = min(chunk_rows, len(embedding))
    n_buffers = min(2, -(-len(embedding) // max(rows, 1)))  # one chunk: one buffer
    buffers = [np.empty((rows, embedding.dim), dtype=np.float32) for _ in range(n_buffers)]
    pending: list = [None] * n_buffers
    with NativeWriter(out, embedding.words, embedding.shape, inputs=inputs) as writer, \
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="embdebias-write") as writes:
        for i, (start, stop, block) in enumerate(chunks):
            k = i % n_buffers
            if pending[k] is not None:
                pending[k].result()  # its previous rows are written (a failed write raises)
            func(slice(start, stop), block, buffers[k][:stop - start])
            pending[k] = writes.submit(writer.append, buffers[k][:stop - start])
        for job in pending:
            if job is not None:
                job.result()
    return writer.open(name=name)

