"""Machinery shared by the debiasers: chunked output to memory or to a native file."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, owned
from ..errors import DimensionError
from ..subspace import BiasSubspace


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


def fit_bias_subspace(subspace, definitional, n_components, emb, lists="published") -> BiasSubspace:
    """A fitted :class:`BiasSubspace`: ``subspace`` if already fitted, else fitted on ``emb``."""
    if subspace is not None:
        if not hasattr(subspace, "components_"):
            subspace = subspace.fit(emb)
        check_dim(emb, subspace.components_.shape[1], "the bias subspace")
        return subspace
    return BiasSubspace(definitional, n_components, lists=lists).fit(emb)


def map_chunks(embedding: Embedding, func: Callable[[int, int, np.ndarray, np.ndarray], None], *,
               out=None, chunk_rows: int = DEFAULT_CHUNK_ROWS, name: str | None = None,
               finish: Callable[[np.ndarray], None] | None = None, progress: bool = False) -> Embedding:
    """Apply ``func(start, stop, block, out)`` over the rows into a new embedding.

    Parameters
    ----------
    embedding : Embedding
        The input; it is only read.
    func : callable
        Writes the new rows ``start:stop`` into ``out`` (the destination's float32
        ``(m, d)`` slice) from ``block`` (the input rows, possibly read-only). Working
        in the destination itself avoids chunk-sized temporaries, whose page faults
        cost more than the arithmetic on large inputs.
    out : None, ndarray or path
        None: the result lives in memory. An ndarray: a ``(n, d)`` float32 destination
        (e.g. a writable memory map). A path: a native-format directory written chunk by
        chunk and renamed into place at the end (memory stays bounded by a chunk), then
        opened memory-mapped.
    finish : callable, optional
        Called with the whole destination array after all chunks (for the few rows that
        need a second look, such as equalize pairs), before the file is committed.
    progress : bool
        Show a tqdm progress bar.
    """
    name = name or embedding.name

    def fill(dest: np.ndarray) -> None:
        chunks = embedding.iter_chunks(chunk_rows)
        if progress:
            from tqdm import tqdm

            total = -(-len(embedding) // chunk_rows)
            chunks = tqdm(chunks, total=total, desc=f"debias {name}", unit="chunk")
        for start, stop, block in chunks:
            func(start, stop, block, dest[start:stop])
        if finish is not None:
            finish(dest)

    if out is None or isinstance(out, np.ndarray):
        fresh = out is None
        if fresh:
            out = np.empty(embedding.shape, dtype=np.float32)
        elif out.shape != embedding.shape:
            raise DimensionError(f"out has shape {out.shape}, expected {embedding.shape}")
        fill(out)
        # A fresh array becomes the result's own; a given one is shared (a live view).
        return Embedding(embedding.words, owned(out) if fresh else out, name=name, copy=False)

    from ..io.native import NativeWriter

    inputs = (embedding.path,) if embedding.path else ()
    with NativeWriter(out, embedding.words, embedding.shape, inputs=inputs) as writer:
        fill(writer.vectors)
    return writer.open(name=name)


def unit_rows(block: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in place (zero rows stay zero); returns ``block``."""
    norms = np.sqrt(np.einsum("ij,ij->i", block, block))[:, None]
    np.divide(block, norms, out=block, where=norms > 0)
    return block


def subtract_projection(rows: np.ndarray, coords: np.ndarray, basis: np.ndarray) -> None:
    """``rows -= coords @ basis`` in place, without an ``(m, d)`` temporary.

    ``rows`` is a C-contiguous float32 ``(m, d)`` array, ``coords`` ``(m, k)`` and
    ``basis`` ``(k, d)``. BLAS ``sger`` applies each rank-one update to ``rows.T``
    (Fortran order) in place.
    """
    from scipy.linalg.blas import sger

    if rows.shape[0] == 0:
        return
    target = rows.T
    for j in range(basis.shape[0]):
        updated = sger(-1.0, basis[j], np.ascontiguousarray(coords[:, j]), a=target, overwrite_a=True)
        if not np.shares_memory(updated, rows):  # BLAS could not work in place
            rows[...] = updated.T
