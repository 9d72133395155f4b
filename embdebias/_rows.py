"""Row-wise vector arithmetic shared by every module (one implementation of each)."""

from __future__ import annotations

import numpy as np


def row_norms(x: np.ndarray) -> np.ndarray:
    """Euclidean norm of every row of a 2-d array (no ``(n, d)`` temporary)."""
    return np.sqrt(np.einsum("ij,ij->i", x, x))


def unit_rows(x, *, copy: bool = False, out: np.ndarray | None = None) -> np.ndarray:
    """Rows of ``x`` scaled to unit length; zero rows stay zero.

    ``copy=False`` (the debiasers' hot path) scales a float array in place and returns
    it; ``copy=True`` leaves ``x`` alone and returns a new float64 array; ``out``, an
    array of the same shape, receives the unit rows instead of ``x`` (and is returned).
    A 1-d ``x`` is one vector.
    """
    if copy:
        x = np.array(x, dtype=np.float64)
    if x.ndim == 1:
        return unit_rows(x[None, :], out=None if out is None else out[None, :])[0]
    norms = row_norms(x)
    # Dividing a zero (or NaN) row by 1 leaves it as it is, like ``where=norms > 0``
    # would, at half the cost of a masked division.
    norms[~(norms > 0)] = 1
    return np.divide(x, norms[:, None], out=x if out is None else out)


#: Columns of a chunk's similarities merged at a time by :func:`top_neighbours`.
MERGE_COLUMNS = 4096


def top_neighbours(queries: np.ndarray, chunks, n: int, query_rows: np.ndarray | None = None) -> np.ndarray:
    """Rows of the ``n`` largest dot products of every query (best first) over ``chunks``.

    ``chunks`` yields ``(start, block)`` of the candidate rows (unit rows give cosine
    neighbours); a query's own row (``query_rows``) is never its neighbour. Memory
    stays bounded by one ``queries x chunk`` block.
    """
    m = len(queries)
    best_sim = np.full((m, 0), -np.inf, dtype=np.float32)
    best_row = np.zeros((m, 0), dtype=np.int64)
    q = np.asarray(queries, dtype=np.float32)
    for start, block in chunks:
        sims = q @ np.asarray(block, dtype=np.float32).T
        if query_rows is not None:
            own = (query_rows >= start) & (query_rows < start + len(block))
            sims[np.flatnonzero(own), query_rows[own] - start] = -np.inf
        for at in range(0, sims.shape[1], MERGE_COLUMNS):  # narrow slices: the bar rises after the first
            best_sim, best_row = _merge_best(best_sim, best_row, sims[:, at:at + MERGE_COLUMNS], start + at, n)
    order = np.argsort(-best_sim, axis=1, kind="stable")
    return np.take_along_axis(best_row, order, 1)


def _merge_best(best_sim: np.ndarray, best_row: np.ndarray, sims: np.ndarray, start: int, n: int):
    """The ``n`` best of the best so far and a chunk's similarities (rows from ``start``).

    Once a query holds ``n`` neighbours, only a similarity above its ``n``-th best can
    enter: after the first chunk those are few, so they are gathered (padded with ``-inf``
    to the widest query) instead of partitioning every similarity of the chunk again.
    """
    m, width = sims.shape
    cand_row = None  # None: the candidates are the chunk's columns, rows start + column
    if best_sim.shape[1] == 0:
        cand_sim = sims
    elif best_sim.shape[1] < n:
        cand_sim = np.hstack([best_sim, sims])
        cand_row = np.hstack([best_row, np.broadcast_to(np.arange(start, start + width), sims.shape)])
    else:
        bar = best_sim.min(axis=1)
        # a row maximum (one vectorized read) finds the queries with any hit; late in a scan they
        # are few, and only their rows are searched for the hits' columns
        live = np.flatnonzero(sims.max(axis=1) > bar)
        if live.size == 0:
            return best_sim, best_row
        hit_q, hit_c = np.nonzero(sims[live] > bar[live, None])
        hit_q = live[hit_q]
        counts = np.bincount(hit_q, minlength=m)
        cand_sim = np.full((m, n + int(counts.max())), -np.inf, dtype=np.float32)
        cand_row = np.zeros(cand_sim.shape, dtype=np.int64)
        cand_sim[:, :n], cand_row[:, :n] = best_sim, best_row
        slot = n + np.arange(hit_q.size) - np.repeat(np.cumsum(counts) - counts, counts)
        cand_sim[hit_q, slot] = sims[hit_q, hit_c]
        cand_row[hit_q, slot] = start + hit_c
    keep = min(n, cand_sim.shape[1])
    top = np.argpartition(-cand_sim, keep - 1, axis=1)[:, :keep]
    rows = start + top if cand_row is None else np.take_along_axis(cand_row, top, 1)
    return np.take_along_axis(cand_sim, top, 1), rows


def indirect_bias(words: np.ndarray, neighbours: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Bolukbasi et al.'s indirect bias ``beta(w, v) = (w.v - cos(w_perp, v_perp)) / (w.v)``.

    ``words`` (m, d) and ``neighbours`` (m, k, d) unit rows, ``direction`` a unit vector;
    ``x_perp = x - (x.g) g``. Returns (m, k).
    """
    w = np.asarray(words, dtype=np.float64)
    v = np.asarray(neighbours, dtype=np.float64)
    g = np.asarray(direction, dtype=np.float64)
    dot = np.einsum("md,mkd->mk", w, v)
    w_perp = w - np.outer(w @ g, g)
    v_perp = v - (v @ g)[..., None] * g
    cos_perp = np.einsum("md,mkd->mk", w_perp, v_perp) / (
        np.maximum(np.linalg.norm(w_perp, axis=1)[:, None] * np.linalg.norm(v_perp, axis=2), 1e-12))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.abs(dot) > 1e-12, (dot - cos_perp) / dot, 0.0)
