"""The bias subspace: PCA over definitional pairs (Bolukbasi et al., 2016).

Each definitional pair ``(f, m)`` is first unit-normalized and then centred on its own
mean ``mu = (f + m) / 2``; the ``2p`` centred vectors ``f - mu`` and ``m - mu`` are
stacked and their principal components are the bias directions.  Because every pair
is centred on itself the stacked matrix already has zero mean, so the PCA is the SVD
of that matrix (the same result as scikit-learn's ``PCA``, which Bolukbasi et al.'s
code uses).

Sign convention: the first component is oriented so that the female word of the
pairs projects positively on it, i.e. ``sum_i (f_i - m_i) . c_1 > 0`` ("she" is on the
positive side, "he" on the negative).  Later components follow the same rule, which
makes the basis deterministic.
"""

from __future__ import annotations

import warnings

import numpy as np

from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from ._case import rows_with_lowercase
from ._rows import unit_rows
from ._validation import POSITIVE
from .embedding import Embedding, as_embedding
from .errors import DimensionError, EmbdebiasError, MissingWordsError, NonFiniteError
from . import wordlists


class MissingWordsWarning(UserWarning):
    """Some words of a list were not in the embedding and were left out."""


class BiasSubspace(BaseEstimator):
    """Gender (bias) subspace from definitional pairs.

    A scikit-learn estimator: parameters are kept verbatim, ``fit`` learns the
    attributes ending in ``_``, and using them before ``fit`` raises
    :class:`sklearn.exceptions.NotFittedError`. :meth:`from_components` makes a fitted
    subspace from given directions instead.

    Parameters
    ----------
    pairs : list of (str, str) or str, optional
        ``(female, male)`` definitional pairs, or the name/path of a pair list.
        Default: the ten pairs of Bolukbasi et al. (2016) from ``lists``.
    n_components : int, default 1
        Number of principal components ``k`` that span the subspace.
    lists : {"published", "curated"}, default "published"
        The bundled list set that supplies the default pairs (both sets hold the same
        ten pairs; see :mod:`embdebias.wordlists`).
    lowercase_fallback : bool, default True
        Use a word's lower-case form when the word itself is not in the vocabulary
        but its lower-case form is ("Mary" -> "mary" in the lower-case GloVe 6B), so a
        lower-case vocabulary keeps all ten of Bolukbasi's pairs. The replacements are
        listed in ``case_mapped_``.

    Attributes
    ----------
    components_ : ndarray of shape (k, d)
        Orthonormal basis of the subspace (rows), float64.
    explained_variance_ratio_ : ndarray of shape (min(2p, d),)
        Fraction of the variance of the centred pair vectors carried by every
        principal component (not only the first ``k``), as in Bolukbasi et al.'s
        Figure 3; ``explained_variance_ratio_[:k]`` belongs to the kept components.
    explained_variance_ : ndarray
        The same variances, unnormalized (sample variance, ``ddof=1``).
    pairs_used_ : list of (str, str)
        The pairs whose two words were both in the vocabulary.
    missing_words_ : list of str
        Words of the pairs that were not in the vocabulary.
    case_mapped_ : dict
        Words replaced by their lower-case form (see ``lowercase_fallback``).
    """

    def __init__(self, pairs=None, n_components: int = 1, *, lists: str = wordlists.DEFAULT_LISTS,
                 lowercase_fallback: bool = True):
        self.pairs = pairs
        self.n_components = n_components
        self.lists = lists
        self.lowercase_fallback = lowercase_fallback

    def _pairs(self) -> list[tuple[str, str]]:
        return wordlists.resolve_pairs(self.pairs, "definitional_pairs", self.lists)

    def fit(self, embedding, y=None) -> "BiasSubspace":
        """Fit the subspace on ``embedding`` (an Embedding or gensim KeyedVectors)."""
        emb = as_embedding(embedding)
        pairs = self._pairs()
        k = int(POSITIVE.check(self.n_components, "n_components"))
        used, missing, mapped = self._resolve_pairs(pairs, emb)
        if missing:
            warnings.warn(f"definitional pairs: {len(missing)} word(s) not in {emb.name}: "
                          f"{', '.join(missing)}; {len(used)} of {len(pairs)} pairs used",
                          MissingWordsWarning, stacklevel=2)
        if len(used) < 2:
            raise MissingWordsError(
                f"bias subspace needs at least 2 definitional pairs in the vocabulary of "
                f"{emb.name}, found {len(used)} (missing: {', '.join(missing) or 'none'})", missing)
        if k > len(used):
            raise EmbdebiasError(f"n_components={k} exceeds the {len(used)} usable pairs "
                                 f"(centred pairs span at most one dimension each)")
        female = unit_rows(emb[[f for f, _ in used]].astype(np.float64))
        male = unit_rows(emb[[m for _, m in used]].astype(np.float64))
        mu = (female + male) / 2.0
        centred = np.vstack([female - mu, male - mu])
        _, s, vt = np.linalg.svd(centred, full_matrices=False)
        var = s**2
        total = var.sum()
        if total <= 0:
            raise EmbdebiasError("definitional pairs have identical vectors: no bias direction")
        diff = (female - male).sum(axis=0)
        signs = np.where(vt @ diff < 0, -1.0, 1.0)
        vt = vt * signs[:, None]
        self.components_ = vt[:k].copy()
        self.explained_variance_ = var / max(centred.shape[0] - 1, 1)
        self.explained_variance_ratio_ = var / total
        self.pairs_used_ = used
        self.missing_words_ = missing
        self.case_mapped_ = mapped
        self.n_features_in_ = emb.dim
        return self

    def _resolve_pairs(self, pairs, emb):
        """``(pairs found, missing words, {word: lower-case form used})``."""
        words = [w for pair in pairs for w in pair]
        rows, mapped = rows_with_lowercase(emb.words, words, self.lowercase_fallback)
        resolved = [mapped.get(w, w) for w in words]
        ok = rows.reshape(-1, 2) >= 0
        used = [(resolved[2 * i], resolved[2 * i + 1]) for i in np.flatnonzero(ok.all(axis=1))]
        missing = [w for w, r in zip(resolved, rows) if r < 0]
        return used, missing, mapped

    @classmethod
    def from_components(cls, components) -> "BiasSubspace":
        """A fitted subspace spanned by given directions: a ``(d,)`` vector or ``(k, d)`` rows.

        The rows are orthonormalized in order (Gram-Schmidt by QR), each keeping its
        sign, so a female-positive first row stays the female-positive direction.
        ``pairs_used_`` is empty and the explained variances are NaN: nothing was fitted.
        """
        comps = np.atleast_2d(np.asarray(components, dtype=np.float64))
        if comps.ndim != 2 or comps.shape[0] == 0 or comps.shape[1] == 0:
            raise DimensionError(f"subspace directions must be a (d,) vector or (k, d) rows, "
                                 f"got shape {np.shape(components)}")
        if not np.all(np.isfinite(comps)):
            raise NonFiniteError("the subspace directions have NaN or infinite values")
        q, r = np.linalg.qr(comps.T)
        diag = np.diag(r)
        if np.any(np.abs(diag) < 1e-12 * max(1.0, np.abs(comps).max())):
            raise DimensionError("the subspace directions are linearly dependent (or zero)")
        sub = cls(n_components=comps.shape[0])
        sub.components_ = (q * np.sign(diag)[None, :]).T.copy()
        k = comps.shape[0]
        sub.explained_variance_ = np.full(k, np.nan)
        sub.explained_variance_ratio_ = np.full(k, np.nan)
        sub.pairs_used_, sub.missing_words_, sub.case_mapped_ = [], [], {}
        sub.n_features_in_ = comps.shape[1]
        return sub

    @property
    def direction_(self) -> np.ndarray:
        """The first component (the gender direction, female positive), shape ``(d,)``."""
        check_is_fitted(self, "components_")
        return self.components_[0]

    def project(self, vectors, *, normalize: bool = True) -> np.ndarray:
        """Coordinates of ``vectors`` (n, d) on the components: shape (n, k).

        With ``normalize=True`` (default) rows are unit-normalized first, so the
        first coordinate is the cosine with the gender direction.
        """
        check_is_fitted(self, "components_")
        x = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
        if normalize:
            x = unit_rows(x, copy=True)
        return x @ self.components_.T


def _is_pair_list(obj) -> bool:
    return (isinstance(obj, (list, tuple)) and len(obj) > 0
            and all(isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(w, str) for w in p)
                    for p in obj))


def resolve_subspace(subspace, embedding, *, pairs=None, n_components: int = 1,
                     lists: str = wordlists.DEFAULT_LISTS) -> BiasSubspace:
    """The fitted :class:`BiasSubspace` that a ``subspace`` argument stands for.

    The one place where every estimator, metric and plot turns its ``subspace``
    argument into directions:

    * None: ``BiasSubspace(pairs, n_components, lists=lists)`` fitted on ``embedding``;
    * a list of ``(female, male)`` word pairs or a pair-list name/path: the same with
      those pairs;
    * a fitted BiasSubspace: itself (never refitted or changed);
    * an unfitted BiasSubspace: a clone of it fitted on ``embedding`` (the object
      passed in is left unfitted, as scikit-learn estimators leave their arguments);
    * a ``(d,)`` vector or ``(k, d)`` array: :meth:`BiasSubspace.from_components`.

    The dimension must match the embedding's.
    """
    emb = as_embedding(embedding)
    if subspace is None or _is_pair_list(subspace) or wordlists._is_path_like(subspace):
        given = None if subspace is None else subspace
        sub = BiasSubspace(given if given is not None else pairs, n_components, lists=lists).fit(emb)
    elif isinstance(subspace, BiasSubspace):
        sub = subspace if hasattr(subspace, "components_") else clone(subspace).fit(emb)
    else:
        sub = BiasSubspace.from_components(subspace)
    if sub.components_.shape[1] != emb.dim:
        raise DimensionError(f"the bias subspace has dimension {sub.components_.shape[1]}, "
                             f"{emb.name} has {emb.dim}-d vectors")
    return sub


def fit_subspace(embedding: Embedding, pairs=None, n_components: int = 1, *,
                 lists: str = wordlists.DEFAULT_LISTS) -> BiasSubspace:
    """Shorthand for ``BiasSubspace(pairs, n_components, lists=lists).fit(embedding)``."""
    return BiasSubspace(pairs, n_components, lists=lists).fit(embedding)
