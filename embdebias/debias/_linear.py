"""Debiasers that are one fixed ``d x d`` map of every row: one matrix product per chunk."""

from __future__ import annotations

import numpy as np

from ..embedding import Embedding
from ._base import Debiaser, unit_rows
from ._params import Array


class LinearDebiaser(Debiaser):
    """A :class:`~embdebias.debias._base.Debiaser` whose transform is ``unit(x @ map_ + offset_)``.

    Subclasses fit ``map_`` (``(d, d)``, rows act on the right: ``x' = x @ map_``) and
    may fit ``offset_`` (``(d,)``, an affine map such as LEACE's; absent: none) and list
    ``kept_words_``: words whose rows are only scaled to unit length (such as HSR's
    definition words). A subclass whose ``normalize`` parameter is False returns the
    edited rows as they are (the erasers, whose guarantee is for the affine output);
    every other one scales them to unit length, as the Debiaser contract says. Every
    chunk costs one float32 GEMM.
    """

    _params_schema = {"map_": Array(("d", "d"))}
    linear = True

    def _kept_mask(self, emb: Embedding) -> np.ndarray:
        kept = list(getattr(self, "kept_words_", ()) or ())
        mask = np.zeros(len(emb), dtype=bool)
        if kept:
            rows = emb.words.rows(kept)
            mask[rows[rows >= 0]] = True
        return mask

    def _normalizes(self) -> bool:
        return bool(getattr(self, "normalize", True))

    def _prepare(self, emb: Embedding):
        matrix = np.ascontiguousarray(self.map_, dtype=np.float32)
        offset = getattr(self, "offset_", None)
        offset = None if offset is None else np.asarray(offset, dtype=np.float32)
        kept = self._kept_mask(emb)
        any_kept = bool(kept.any())
        normalize = self._normalizes()

        def apply(rows, block, out):
            np.matmul(block, matrix, out=out)
            if offset is not None:
                out += offset
            if any_kept:
                here = kept[rows]
                if here.any():
                    out[here] = block[here]
            if normalize:
                unit_rows(out)

        return apply

    def transform_vectors(self, vectors: np.ndarray) -> np.ndarray:
        """``x @ map_ (+ offset_)`` of raw rows (float64, not normalized, no kept words): the map itself."""
        out = np.asarray(vectors, dtype=np.float64) @ self.map_
        offset = getattr(self, "offset_", None)
        return out if offset is None else out + offset

    def edit_rows(self, embedding: Embedding, rows) -> np.ndarray:
        """The rows ``rows`` of ``embedding`` as the transform edits them before any unit
        scaling (float64; kept words unchanged): what a certificate measures
        (:func:`~embdebias.debias.certificate.erasure_certificate`)."""
        rows = np.asarray(rows, dtype=np.int64)
        block = embedding.take(rows, dtype=np.float64)
        out = self.transform_vectors(block)
        kept = self._kept_mask(embedding)[rows]
        out[kept] = block[kept]
        return out
