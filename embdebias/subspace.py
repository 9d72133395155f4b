"""The bias subspace: PCA over defining sets (Bolukbasi et al., 2016; Manzini et al., 2019).

A defining set holds one word per group of a protected attribute: a gender pair
``(female, male)`` (Bolukbasi et al.'s definitional pairs, ``k = 2`` groups) or, for an
attribute with ``k`` groups, a ``k``-tuple such as ``(judaism, christianity, islam)``
(Manzini et al.'s defining sets). Every word is first unit-normalized; each set is then
centred on its own mean ``mu_i``, the centred vectors ``w - mu_i`` of all sets are
stacked, and their principal components are the bias directions. Because every set
is centred on itself the stacked matrix already has zero mean, so the PCA is the SVD
of that matrix (the same result as scikit-learn's ``PCA``, which Bolukbasi et al.'s
and WEFE's code use). For pairs this is exactly Bolukbasi et al.'s subspace: a pair's
centred vectors are ``+-(f - m) / 2``.

Normalization: Manzini et al.'s code takes the raw vectors, WEFE's port unit-normalizes
first; here the vectors are normalized (as Bolukbasi et al. and WEFE do), so the
subspace does not depend on the words' norms.

Number of components: ``k`` groups span at most ``k - 1`` directions per set, and the
default is ``k - 1`` (1 for gender, 2 for three groups; Manzini et al.'s README examples
use 2 for race and religion, their CLI default is 1).

Sign convention (it makes the basis deterministic; the projection on the subspace does
not depend on it): component ``c`` is oriented so that the **first group** (the first
word of every set) projects positively, ``sum_i (w_i1 - mu_i) . c > 0``. For pairs this
is Bolukbasi's orientation used here since 0.1: the female word first, so "she" is on
the positive side of the gender direction, "he" on the negative. When the first group
has no part on a component (``|sum| <= SIGN_TOL`` times the component's singular
value; with three groups the second component often separates the other two), the
next group decides, and so on.
"""

from __future__ import annotations


import numpy as np

from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from ._warn import warn
from ._case import rows_with_lowercase
from ._rows import unit_rows
from ._validation import POSITIVE
from .embedding import Embedding, as_embedding
from .errors import DimensionError, EmbdebiasError, MissingWordsError, NonFiniteError, WordListError
from . import wordlists


class MissingWordsWarning(UserWarning):
    """Some words of a list were not in the embedding and were left out."""


#: A group decides the sign of a component when the sum of its centred words projects
#: on it by more than this share of the component's singular value (see the module docstring).
SIGN_TOL = 1e-9


def resolve_sets(sets, lists: str = wordlists.DEFAULT_LISTS,
                 role: str = "definitional_pairs") -> list[tuple[str, ...]]:
    """Defining sets as a list of word tuples, all of one size ``k >= 2``.

    Parameters
    ----------
    sets : None, str, path or sequence of sequences of str
        None: the ``role`` pair list of ``lists``; a name or path: that pair list
        (:func:`embdebias.wordlists.resolve_pairs`); otherwise the sets themselves, each
        with one word per group, in the groups' order.
    lists : {"published", "curated"}
    role : str
        The list role a None or a name stands for.

    Raises
    ------
    WordListError
        A set of another size than the first, of fewer than two words, with a word
        twice, or with a word that is not a non-empty string (the message names the set).
    """
    if sets is None or wordlists._is_path_like(sets):
        return wordlists.resolve_pairs(sets, role, lists)
    out = [tuple(s) if isinstance(s, (list, tuple)) else (s,) for s in sets]
    k = len(out[0]) if out else 2
    for i, words in enumerate(out, start=1):
        if len(words) != k or k < 2:
            raise WordListError(f"defining sets: set {i} {list(words)!r} has {len(words)} words, expected "
                                f"{max(k, 2)} (one per group, as the first set)")
        if not all(isinstance(w, str) and w for w in words) or len(set(words)) != k:
            raise WordListError(f"defining sets: set {i} {list(words)!r} needs {k} different non-empty words")
    return out


class BiasSubspace(BaseEstimator):
    """Bias subspace from defining sets: gender pairs or sets of ``k`` groups.

    A scikit-learn estimator: parameters are kept verbatim, ``fit`` learns the
    attributes ending in ``_``, and using them before ``fit`` raises
    :class:`sklearn.exceptions.NotFittedError`. :meth:`from_components` makes a fitted
    subspace from given directions instead. See the module docstring for the
    algorithm, the default number of components and the sign convention.

    Parameters
    ----------
    pairs : list of word tuples or str, optional
        The defining sets: ``(female, male)`` definitional pairs, or tuples of ``k``
        words, one per group in the groups' order; or the name/path of a pair list.
        Default: the defining sets of ``attribute``, or without one the ten pairs of
        Bolukbasi et al. (2016) from ``lists``.
    n_components : int, optional
        Number of principal components that span the subspace. Default: ``k - 1``
        for ``k`` groups (1 for gender pairs).
    lists : {"published", "curated"}, default "published"
        The bundled list set that supplies the default pairs (both sets hold the same
        ten pairs; see :mod:`embdebias.wordlists`).
    lowercase_fallback : bool, default True
        Use a word's lower-case form when the word itself is not in the vocabulary
        but its lower-case form is ("Mary" -> "mary" in the lower-case GloVe 6B), so a
        lower-case vocabulary keeps all ten of Bolukbasi's pairs. The replacements are
        listed in ``case_mapped_``.
    attribute : Attribute or str, optional
        A protected attribute (:func:`embdebias.load_attribute`: ``"gender"``,
        ``"race"``, ``"religion"`` or a JSON file): its defining sets and group names.
        Not given: gender, unless ``pairs`` are sets of another size than two (then sets
        of no named attribute, whose groups are "group 1", "group 2", ...).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, d)
        Orthonormal basis of the subspace (rows), float64.
    explained_variance_ratio_ : ndarray
        Fraction of the variance of the centred set vectors carried by every
        principal component (not only the kept ones), as in Bolukbasi et al.'s
        Figure 3; ``explained_variance_ratio_[:n_components]`` belongs to the kept ones.
    explained_variance_ : ndarray
        The same variances, unnormalized (sample variance, ``ddof=1``).
    sets_used_ : list of tuple of str
        The defining sets all of whose words were in the vocabulary.
    pairs_used_ : list of tuple of str
        The same list (its name from when the sets were always pairs).
    groups_ : tuple of str
        The group names, in the order of the sets' words (``("female", "male")`` for pairs).
    attribute_ : Attribute or None
        The attribute the subspace is of (None for sets of no named attribute, and for
        :meth:`from_components`); an estimator given this subspace works on it.
    missing_words_ : list of str
        Words of the sets that were not in the vocabulary.
    case_mapped_ : dict
        Words replaced by their lower-case form (see ``lowercase_fallback``).
    """

    def __init__(self, pairs=None, n_components: int | None = None, *, lists: str = wordlists.DEFAULT_LISTS,
                 lowercase_fallback: bool = True, attribute=None):
        self.pairs = pairs
        self.n_components = n_components
        self.lists = lists
        self.lowercase_fallback = lowercase_fallback
        self.attribute = attribute

    def _sets(self) -> tuple[list[tuple[str, ...]], tuple[str, ...], object]:
        """``(defining sets, group names, attribute or None)`` from ``pairs`` and ``attribute``."""
        from .data.attributes import given_attribute

        given = None if self.pairs is None else resolve_sets(self.pairs, self.lists)
        attr = given_attribute(self.attribute, self.lists, set_size=None if given is None else len(given[0]))
        sets = given if given is not None else [tuple(s) for s in attr.defining_sets]
        if not sets:
            raise WordListError("bias subspace: no defining sets given")
        k = len(sets[0])
        if attr is None:
            return sets, tuple(f"group {i + 1}" for i in range(k)), None
        if len(attr.groups) != k:
            raise WordListError(f"defining sets of {k} words do not fit attribute {attr.name!r}, "
                                f"which has {len(attr.groups)} groups ({', '.join(attr.groups)})")
        return sets, tuple(attr.groups), attr

    def fit(self, embedding, y=None) -> "BiasSubspace":
        """Fit the subspace on ``embedding`` (an Embedding or gensim KeyedVectors)."""
        emb = as_embedding(embedding)
        sets, groups, attr = self._sets()
        k = len(groups)
        what = "definitional pairs" if k == 2 else "defining sets"
        used, missing, mapped = self._resolve_sets(sets, emb)
        if missing:
            warn(f"{what}: {len(missing)} word(s) not in {emb.name}: "
                 f"{', '.join(missing)}; {len(used)} of {len(sets)} {'pairs' if k == 2 else 'sets'} used",
                 MissingWordsWarning)
        if len(used) < 2:
            raise MissingWordsError(
                f"bias subspace needs at least 2 {what} in the vocabulary of "
                f"{emb.name}, found {len(used)} (missing: {', '.join(missing) or 'none'})", missing)
        n = k - 1 if self.n_components is None else int(POSITIVE.check(self.n_components, "n_components"))
        if n > len(used) * (k - 1):
            raise EmbdebiasError(f"n_components={n} exceeds the {len(used) * (k - 1)} directions that "
                                 f"{len(used)} usable {what} of {k} words span ({k - 1} each)")
        vectors = unit_rows(emb[[w for s in used for w in s]].astype(np.float64)).reshape(len(used), k, -1)
        centred = vectors - vectors.mean(axis=1, keepdims=True)
        # group-major rows (every set's first word, then every second word, ...): for pairs the
        # stacking of Bolukbasi et al. and of this class before k groups, so gender's SVD is unchanged
        _, s, vt = np.linalg.svd(centred.transpose(1, 0, 2).reshape(len(used) * k, -1), full_matrices=False)
        var = s**2
        total = var.sum()
        if total <= 0:
            raise EmbdebiasError(f"{what} have identical vectors: no bias direction")
        vt = vt * _orientation(centred.sum(axis=0) @ vt.T, s)[:, None]
        self.components_ = vt[:n].copy()
        self.explained_variance_ = var / max(len(used) * k - 1, 1)
        self.explained_variance_ratio_ = var / total
        self.sets_used_ = used
        self.groups_ = groups
        self.attribute_ = attr
        self.missing_words_ = missing
        self.case_mapped_ = mapped
        self.n_features_in_ = emb.dim
        return self

    @property
    def pairs_used_(self) -> list:
        """The defining sets used (:attr:`sets_used_`; the name is from when they were pairs)."""
        check_is_fitted(self, "components_")
        return self.sets_used_

    def _resolve_sets(self, sets, emb):
        """``(sets found, missing words, {word: lower-case form used})``."""
        k = len(sets[0])
        words = [w for s in sets for w in s]
        rows, mapped = rows_with_lowercase(emb.words, words, self.lowercase_fallback)
        resolved = [mapped.get(w, w) for w in words]
        ok = (rows.reshape(-1, k) >= 0).all(axis=1)
        used = [tuple(resolved[k * i:k * (i + 1)]) for i in np.flatnonzero(ok)]
        missing = [w for w, r in zip(resolved, rows) if r < 0]
        return used, missing, mapped

    @classmethod
    def from_components(cls, components) -> "BiasSubspace":
        """A fitted subspace spanned by given directions: a ``(d,)`` vector or ``(k, d)`` rows.

        The rows are orthonormalized in order (Gram-Schmidt by QR), each keeping its
        sign, so a female-positive first row stays the female-positive direction.
        ``sets_used_`` and ``groups_`` are empty and the explained variances are NaN:
        nothing was fitted.
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
        sub.sets_used_, sub.groups_, sub.missing_words_, sub.case_mapped_ = [], (), [], {}
        sub.attribute_ = None
        sub.n_features_in_ = comps.shape[1]
        return sub

    @property
    def direction_(self) -> np.ndarray:
        """The first component, shape ``(d,)``: the gender direction (female positive) for gender's
        pairs, the first group's side positive for ``k`` groups."""
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


def _orientation(group_parts: np.ndarray, singular_values: np.ndarray) -> np.ndarray:
    """The sign (+1 or -1) of every component from ``group_parts`` (k groups x components).

    ``group_parts[g, j]``: the sum of group ``g``'s centred words projected on component
    ``j``. The first group whose part exceeds :data:`SIGN_TOL` times the component's
    singular value is put on the positive side (the first group if none does).
    """
    decisive = np.abs(group_parts) > SIGN_TOL * singular_values[None, :]
    first = np.where(decisive.any(axis=0), decisive.argmax(axis=0), 0)
    return np.where(group_parts[first, np.arange(group_parts.shape[1])] < 0, -1.0, 1.0)


def _is_set_list(obj) -> bool:
    """A non-empty list of word tuples (pairs or defining sets), as opposed to directions."""
    return (isinstance(obj, (list, tuple)) and len(obj) > 0
            and all(isinstance(p, (list, tuple)) and len(p) >= 2 and all(isinstance(w, str) for w in p)
                    for p in obj))


def resolve_subspace(subspace, embedding, *, pairs=None, n_components: int | None = None,
                     lists: str = wordlists.DEFAULT_LISTS, attribute=None) -> BiasSubspace:
    """The fitted :class:`BiasSubspace` that a ``subspace`` argument stands for.

    The one place where every estimator, metric and plot turns its ``subspace``
    argument into directions:

    * None: ``BiasSubspace(pairs, n_components, lists=lists, attribute=attribute)``
      fitted on ``embedding`` (with neither ``pairs`` nor ``attribute``: gender's pairs);
    * a list of word pairs or defining sets, or a pair-list name/path: the same with
      those sets;
    * a fitted BiasSubspace: itself (never refitted or changed);
    * an unfitted BiasSubspace: a clone of it fitted on ``embedding`` (the object
      passed in is left unfitted, as scikit-learn estimators leave their arguments);
    * a ``(d,)`` vector or ``(k, d)`` array: :meth:`BiasSubspace.from_components`.

    ``attribute`` (an :class:`~embdebias.Attribute` or its name/path) supplies the
    defining sets and group names when none are given; ``n_components`` defaults to
    the number of groups minus one. The dimension must match the embedding's.
    """
    emb = as_embedding(embedding)
    if subspace is None or _is_set_list(subspace) or wordlists._is_path_like(subspace):
        given = pairs if subspace is None else subspace
        sub = BiasSubspace(given, n_components, lists=lists, attribute=attribute).fit(emb)
    elif isinstance(subspace, BiasSubspace):
        sub = subspace if hasattr(subspace, "components_") else clone(subspace).fit(emb)
    else:
        sub = BiasSubspace.from_components(subspace)
    if sub.components_.shape[1] != emb.dim:
        raise DimensionError(f"the bias subspace has dimension {sub.components_.shape[1]}, "
                             f"{emb.name} has {emb.dim}-d vectors")
    return sub


def fit_subspace(embedding: Embedding, pairs=None, n_components: int | None = None, *,
                 lists: str = wordlists.DEFAULT_LISTS, attribute=None) -> BiasSubspace:
    """Shorthand for ``BiasSubspace(pairs, n_components, lists=lists, attribute=attribute).fit(embedding)``."""
    return BiasSubspace(pairs, n_components, lists=lists, attribute=attribute).fit(embedding)


def gender_direction(emb, subspace=None, *, lists: str = "published") -> tuple[np.ndarray, str]:
    """The unit gender direction (female positive) and a label saying where it came from.

    ``subspace`` is resolved by :func:`~embdebias.subspace.resolve_subspace`: None or
    an unfitted BiasSubspace is fitted on ``emb`` (the definitional pairs of
    ``lists``), a fitted one or a ``(d,)`` vector is used as given.
    """
    fitted_here = subspace is None or (isinstance(subspace, BiasSubspace)
                                       and not hasattr(subspace, "components_"))
    if not fitted_here and not isinstance(subspace, BiasSubspace) and np.ndim(subspace) != 1:
        raise DimensionError(f"a gender direction must be a (d,) vector, got shape {np.shape(subspace)}")
    sub = resolve_subspace(subspace, emb, lists=lists)
    label = ("BiasSubspace fitted on this embedding" if fitted_here
             else "given BiasSubspace" if isinstance(subspace, BiasSubspace) else "given vector")
    return unit_rows(sub.direction_, copy=True), label


def centroid_directions(centroids, what: str) -> np.ndarray:
    """``(k, d)`` unit rows ``c_j - mean(c)``: each group's centroid minus the mean of the ``k``
    centroids, the group directions of the k-group labels (INLP, RLACE) and residual tests.
    ``what`` names the caller in the error raised when two groups share a centroid."""
    centroids = np.asarray(centroids, dtype=np.float64)
    offsets = centroids - centroids.mean(axis=0)
    norms = np.linalg.norm(offsets, axis=1, keepdims=True)
    if np.any(norms <= 1e-12):
        raise EmbdebiasError(f"{what}: two groups have the same centroid")
    return offsets / norms
