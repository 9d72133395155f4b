"""Debiasers that are one fixed ``d x d`` map of every row: one matrix product per chunk."""

from __future__ import annotations

import numpy as np

from ..embedding import Embedding
from ._base import Debiaser, unit_rows
from ._params import Array


class LinearDebiaser(Debiaser):
    """A :class:`~embdebias.debias._base.Debiaser` whose transform is ``unit(x @ map_)``.

    Subclasses fit ``map_`` (``(d, d)``, rows act on the right: ``x' = x @ map_``) and
    may list ``kept_words_``: words whose rows are only scaled to unit length (such as
    HSR's definition words). Every chunk costs one float32 GEMM.
    """

    _params_schema = {"map_": Array(("d", "d"))}

    def _kept_mask(self, emb: Embedding) -> np.ndarray:
        kept = list(getattr(self, "kept_words_", ()) or ())
        mask = np.zeros(len(emb), dtype=bool)
        if kept:
            rows = emb.words.rows(kept)
            mask[rows[rows >= 0]] = True
        return mask

    def _prepare(self, emb: Embedding):
        matrix = np.ascontiguousarray(self.map_, dtype=np.float32)
        kept = self._kept_mask(emb)
        any_kept = bool(kept.any())

        def apply(rows, block, out):
            np.matmul(block, matrix, out=out)
            if any_kept:
                here = kept[rows]
                if here.any():
                    out[here] = block[here]
            unit_rows(out)

        return apply

    def transform_vectors(self, vectors: np.ndarray) -> np.ndarray:
        """``x @ map_`` of raw rows (float64, not normalized, no kept words): the map itself."""
        return np.asarray(vectors, dtype=np.float64) @ self.map_
