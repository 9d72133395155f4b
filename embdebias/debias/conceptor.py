"""Conceptor negation (Karve, Ungar & Sedoc, GeBNLP 2019, "Conceptor debiasing of word representations").

For a word list with vectors as rows of ``X`` (``n x d``), the correlation matrix is
``R = X^T X / n`` (not centred) and its conceptor ``C = R (R + aperture^-2 I)^-1``: a
soft projection that keeps each principal direction of the list in proportion
``lambda / (lambda + aperture^-2)`` of its eigenvalue ``lambda``. Lists combine by
Boolean OR (Jaeger 2014): for conceptors of one aperture, ``C(R1) OR C(R2) =
C(R1 + R2)``, so the OR of many lists is the conceptor of their summed correlation
matrices. The debiased vector is ``x' = (I - C) x``, the negation ``NOT C`` applied:
the bias directions are damped, not removed, so no guarantee follows and a
certificate is only reported by :func:`~embdebias.debias.certificate.erasure_certificate`
when asked.

Deliberate choices, tested in ``tests/test_debiasers_leace.py``:

* **Lists.** One list per group of each attribute: the group's words of the defining
  sets and its group words (gender: the definitional pairs' and the target words);
  several attributes (``"gender+race"``) add theirs. Each list's ``R`` is an average
  over its words, so a long list does not outweigh a short one.
* **Aperture** 1 by default, the default of the authors' repository
  (jsedoc/ConceptorDebias); the paper reports several.
* **Normalization** as every debiaser of the table: unit-length rows
  (``normalize=True``), since conceptor negation has no affine guarantee to keep.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..data import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from ..errors import ErasureError
from ._linear import LinearDebiaser
from .leace import erased_attributes, group_word_rows


def conceptor(correlation: np.ndarray, aperture: float) -> np.ndarray:
    """``R (R + aperture^-2 I)^-1`` of a symmetric p.s.d. ``R``, through its eigenvectors (symmetric result)."""
    lam, vecs = np.linalg.eigh(correlation)
    lam = np.clip(lam, 0.0, None)
    return (vecs * (lam / (lam + aperture ** -2.0))) @ vecs.T


class ConceptorNegation(LinearDebiaser):
    """Conceptor negation of an attribute's word lists, combined by OR (Karve et al. 2019).

    See the module docstring. ``x' = unit(x @ (I - C))`` with ``C`` the OR of the lists'
    conceptors.

    Parameters
    ----------
    aperture : float, default 1.0
        The conceptors' aperture (larger: closer to a hard projection on the lists' span).
    normalize : bool, default True
    max_missing : float, default 0.2
        Largest share of a list's words that may be missing from the embedding.
    subspace, lists
        Accepted for ``embdebias run``; ``lists`` resolves the attributes' lists.
    attribute : Attribute, str, list, optional
        The attribute(s) whose lists are negated; None: gender; ``"gender+race"``: both.
    chunk_rows : int

    Attributes
    ----------
    map_ : ndarray (d, d)
        ``I - C``.
    quota_ : float
        ``trace(C) / d``: the share of the space the combined conceptor claims (Jaeger 2014).
    lists_ : dict
        ``{"attribute:group": number of words}`` of the lists combined.
    n_features_in_ : int
    """

    _suffix = "conceptor"
    #: The lists of several attributes combine by OR (``attribute="gender+race"``).
    several_attributes = True
    _parameter_constraints = {
        "aperture": [Interval(Real, 0, None, closed="neither")],
        "normalize": ["boolean"],
        "max_missing": [Interval(Real, 0, 1, closed="both")],
        "subspace": "no_validation",
        "lists": [StrOptions(set(wordlists.LIST_SETS))],
        "attribute": "no_validation",
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, aperture: float = 1.0, *, normalize: bool = True, max_missing: float = 0.2, subspace=None,
                 lists: str = wordlists.DEFAULT_LISTS, attribute=None, chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.aperture = aperture
        self.normalize = normalize
        self.max_missing = max_missing
        self.subspace = subspace
        self.lists = lists
        self.attribute = attribute
        self.chunk_rows = chunk_rows

    def fit(self, embedding, y=None) -> "ConceptorNegation":
        """Conceptor of each list, their OR, and its negation as the map."""
        self._validate()
        emb = as_embedding(embedding)
        found = {}
        for attr in erased_attributes(self.attribute, self.lists):
            rows = group_word_rows(emb, attr, float(self.max_missing))
            found.update({f"{attr.name}:{group}": r for group, r in zip(attr.groups, rows)})
        if not any(len(rows) for rows in found.values()):
            raise ErasureError(f"conceptor negation: no word of {', '.join(found)} is in {emb.name}")
        correlation = np.zeros((emb.dim, emb.dim))
        for rows in found.values():
            if len(rows):
                x = emb.take(rows, dtype=np.float64)
                correlation += x.T @ x / len(rows)  # OR of the lists: the sum of their correlations
        c = conceptor(correlation, float(self.aperture))
        self.map_ = np.eye(emb.dim) - c
        self.quota_ = float(np.trace(c) / emb.dim)
        self.lists_ = {name: int(len(rows)) for name, rows in found.items()}
        self.n_features_in_ = emb.dim
        return self

    def run_info(self, embedding: Embedding) -> dict:
        return {"aperture": float(self.aperture), "quota": self.quota_, "lists": len(self.lists_),
                "list_words": int(sum(self.lists_.values()))}
