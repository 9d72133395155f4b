"""Gender-based Illicit Proximity Estimate, GIPE (Kumar et al., TACL 2020), RAN-Debias's companion metric.

For each word ``w`` of a debias set, ``eta(w)`` is the share of its ``n`` nearest
neighbours in the *tested* embedding (cosine) whose indirect bias ``beta(w, u)``,
computed in the *original* embedding with its gender direction, exceeds ``theta``.
Words are weighted by the graph of those neighbour edges: a word ``u`` reached by
``E(u)`` edges, ``B(u)`` of them with ``beta > theta``, weighs ``1 + B(u) / E(u)`` (1 when
no edge reaches it). GIPE is the weighted mean of ``eta`` (the authors' ``gipe.py``):
lower is better, 0 when no debias word has a biased neighbour left.

Not (yet) in :data:`~embdebias.metrics.REGISTRY`: registering it adds a row to every
report, which the report's owners decide; ``benchmarks/bench_debiasers.py`` uses it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._rows import indirect_bias, top_neighbours, unit_rows
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding
from ..errors import DimensionError, MissingWordsError


@dataclass
class GipeResult:
    """``gipe``; ``eta`` per word; ``weights`` per word; ``words`` scored."""

    gipe: float
    eta: np.ndarray
    weights: np.ndarray
    words: list


def _unit_chunks(emb: Embedding, chunk_rows: int):
    for start, _, block in emb.iter_chunks(chunk_rows):
        yield start, unit_rows(np.array(block, dtype=np.float32))


def gipe(original: Embedding, tested: Embedding, words, direction: np.ndarray, *, n: int = 100,
         theta: float = 0.05, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> GipeResult:
    """GIPE of ``tested`` on ``words``, with indirect bias from ``original`` and its unit ``direction``."""
    if original.dim != tested.dim or len(original) != len(tested):
        raise DimensionError(f"GIPE compares two versions of one vocabulary: {original.name} is "
                             f"{original.shape}, {tested.name} is {tested.shape}")
    words = list(dict.fromkeys(words))
    rows = tested.words.rows(words)
    if (rows < 0).any():
        missing = [w for w, r in zip(words, rows) if r < 0]
        raise MissingWordsError(f"GIPE: {len(missing)} words not in {tested.name}: {', '.join(missing[:10])}",
                                missing)
    queries = unit_rows(tested.take(rows, np.float64)).astype(np.float32)
    near = top_neighbours(queries, _unit_chunks(tested, chunk_rows), n, rows)
    orig_rows = original.words.rows([tested.words[int(r)] for r in near.ravel()])
    base = unit_rows(original.take(original.words.rows(words), np.float64))
    neigh = unit_rows(original.take(orig_rows, np.float64)).reshape(*near.shape, original.dim)
    g = np.asarray(direction, dtype=np.float64)
    biased = indirect_bias(base, neigh, g / np.linalg.norm(g)) > theta
    eta = biased.mean(axis=1)
    edges = np.bincount(near.ravel(), minlength=len(tested))
    biased_edges = np.bincount(near.ravel(), weights=biased.ravel(), minlength=len(tested))
    reached = edges[rows]
    weights = 1 + np.where(reached > 0, biased_edges[rows] / np.maximum(reached, 1), 0.0)
    return GipeResult(float((weights * eta).sum() / weights.sum()), eta, weights, words)
