"""Spectral Attribute removaL (Shao, Ravfogel et al., EACL 2023): LEACE's fit, SAL's map.

The labels, statistics and certificate are :class:`~embdebias.debias.leace.LEACE`'s;
only the map differs (:func:`~embdebias.debias.leace.erasure_map` with ``method="sal"``).
"""

from __future__ import annotations

from ..data import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS
from . import _labels
from .leace import CERTIFICATE_TOL, LEACE


class SAL(LEACE):
    """Spectral Attribute removaL (Shao, Ravfogel et al., EACL 2023): the top ``n_directions``
    left singular vectors of the cross-covariance projected out, ``x' = x (I - U U^T)``, no offset.

    With ``n_directions=None`` (all the cross-covariance's directions, ``k - 1`` for ``k``
    groups) its linear part is orth's and it is guarded; fewer are not (its
    certificate is reported). The published setting, rank 2 on INLP's three classes,
    is ``SAL(2, neutral=True)``. Other parameters as :class:`LEACE` (no
    covariance: no shrinkage and no minimum group size).
    """

    _suffix = "sal"
    _parameter_constraints = {k: v for k, v in LEACE._parameter_constraints.items() if k not in ("eraser", "shrinkage")}

    def __init__(self, n_directions: int | None = None, *, labels: str = "projection", neutral: bool = False,
                 normalize: bool = False, certificate_tol: float = CERTIFICATE_TOL,
                 fraction: float = _labels.FRACTION, max_words: int = _labels.MAX_WORDS, max_missing: float = 0.2,
                 subspace=None, lists: str = wordlists.DEFAULT_LISTS, attribute=None, random_state: int = 0,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.n_directions = n_directions
        self.labels = labels
        self.neutral = neutral
        self.normalize = normalize
        self.certificate_tol = certificate_tol
        self.fraction = fraction
        self.max_words = max_words
        self.max_missing = max_missing
        self.subspace = subspace
        self.lists = lists
        self.attribute = attribute
        self.random_state = random_state
        self.chunk_rows = chunk_rows

    def _erasure_method(self) -> str:
        return "sal"
