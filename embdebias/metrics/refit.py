r"""Direct bias along the gender direction fitted again in the tested embedding's own space
(:func:`refit_direction_bias`), next to how far that direction is from the original one:
after debiasing, the gender information may sit on a new axis.

For an attribute of ``k > 2`` groups (``attribute=``) the direction is its subspace of
``k - 1`` components fitted again, the direct bias is the norm of the projection on it
(:mod:`embdebias.metrics.projection`), and the agreement of the two subspaces is
:math:`\sqrt{\operatorname{mean}_i \cos^2\theta_i}` over their principal angles
:math:`\theta_i` (the singular values of :math:`B_{\text{refit}} B_{\text{orig}}^\top`): 1 when
they are the same subspace, and ``|cos|`` of the two directions for one component.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import wordlists
from .._rows import unit_rows
from ..errors import EmbdebiasError
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, unit_vectors

# -- re-fitted direction ----------------------------------------------------------------------


@dataclass
class RefitDirectionResult(MetricResult):
    """Result of :func:`refit_direction_bias`.

    Attributes
    ----------
    direct_bias : float
        ``DirectBias_1`` of ``words`` along the direction re-fitted in the tested
        embedding (the headline ``value``).
    words, projections : list
        The in-vocabulary words and their cosines with the re-fitted direction
        (female positive).
    direction_cosine : float
        ``|cos|`` between the re-fitted and the original direction (NaN without an
        original); 1 means debiasing left the definitional pairs pointing the same way.
    refit_variance_ratio, original_variance_ratio : float
        Share of the variance of the centred definitional pairs carried by each
        direction (its first principal component); NaN when a direction was given
        rather than fitted.
    refit_spectrum : list of float
        Every component's explained variance ratio in the tested embedding
        (Bolukbasi et al.'s Figure 3).
    pairs_used : list of (str, str)
        The definitional pairs the re-fit used.
    missing, lowercased : dict
        As for every metric, for ``words``.
    """

    direct_bias: float
    words: list[str]
    projections: list[float]
    direction_cosine: float
    refit_variance_ratio: float
    original_variance_ratio: float
    refit_spectrum: list[float]
    pairs_used: list[tuple[str, str]]
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)

    value_field = "direct_bias"

    @property
    def n_scored(self) -> int:
        """Words projected."""
        return len(self.words)


def _original_subspace(original, tested, lists: str):
    """The original's fitted BiasSubspace (or None) from an embedding, a subspace or a vector."""
    from ..subspace import BiasSubspace, resolve_subspace

    if original is None:
        return None
    if isinstance(original, BiasSubspace) and not hasattr(original, "components_"):
        raise EmbdebiasError("refit_direction_bias: original must be an embedding, a fitted BiasSubspace "
                             "or a direction vector, not an unfitted BiasSubspace")
    if isinstance(original, (BiasSubspace, np.ndarray)):
        return resolve_subspace(original, tested, lists=lists)
    return BiasSubspace(lists=lists).fit(as_emb(original))


def subspace_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """``sqrt(mean cos^2)`` of the principal angles between the subspaces spanned by the orthonormal
    rows ``a`` and ``b`` (``|cos|`` of two directions)."""
    s = np.linalg.svd(np.atleast_2d(a) @ np.atleast_2d(b).T, compute_uv=False)
    return float(np.sqrt(np.mean(np.clip(s, 0.0, 1.0) ** 2)))


def _refit_groups(tested, words, name, attribute, original, lists, max_missing, lowercase) -> RefitDirectionResult:
    """:func:`refit_direction_bias` for an attribute of several groups (module docstring)."""
    from ..subspace import resolve_subspace
    from .base import attribute_subspace
    from .projection import direct_bias, subspace_norms

    refit = attribute_subspace(tested, attribute, lists=lists)
    db = direct_bias(tested, words, subspace=refit, max_missing=max_missing, lowercase=lowercase)
    lk = lookup(tested, words, name=f"refit: {name}", lowercase=lowercase, max_missing=max_missing)
    norms = subspace_norms(unit_vectors(tested, lk.rows), refit.components_)
    cosine, orig_ratio = float("nan"), float("nan")
    if original is not None:
        orig = (resolve_subspace(original, tested, lists=lists) if not hasattr(original, "words")
                else attribute_subspace(as_emb(original), attribute, lists=lists))
        cosine = subspace_cosine(refit.components_, orig.components_)
        orig_ratio = float(np.sum(orig.explained_variance_ratio_[:orig.components_.shape[0]]))
    m = refit.components_.shape[0]
    return RefitDirectionResult(
        direct_bias=db.direct_bias, words=list(lk.words), projections=norms.tolist(), direction_cosine=cosine,
        refit_variance_ratio=float(np.sum(refit.explained_variance_ratio_[:m])), original_variance_ratio=orig_ratio,
        refit_spectrum=refit.explained_variance_ratio_.tolist(), pairs_used=list(refit.pairs_used_),
        missing={name: list(lk.missing)}, lowercased={name: dict(lk.lowercased)} if lk.lowercased else {})


def refit_direction_bias(tested, words=None, *, original=None, lists: str = wordlists.DEFAULT_LISTS,
                         max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True,
                         attribute="gender") -> RefitDirectionResult:
    """Direct bias with the gender direction fitted again in ``tested``'s own space.

    Measuring a debiased embedding along the *original* direction asks whether that
    direction was removed; re-fitting a :class:`~embdebias.subspace.BiasSubspace` on
    the tested embedding's own definitional pairs asks whether a gender direction
    is still there.  Hard debias equalizes most definitional pairs about the
    original direction, so their re-fitted direction is close to it and
    neutralized words project to ~0 on it; an embedding that merely rotated the bias
    would keep its direct bias along the re-fitted direction.

    Parameters
    ----------
    tested : Embedding or gensim KeyedVectors
    words : list of str or str, optional
        Words that should be gender-neutral (default: the professions of ``lists``).
    original : Embedding, KeyedVectors, fitted BiasSubspace or (d,) array, optional
        Where the original direction comes from (an embedding is fitted with the same
        definitional pairs); without it ``direction_cosine`` is NaN.
    lists : {"published", "curated"}, default "published"
        Supplies the definitional pairs and the default words.
    max_missing, lowercase
        As for every metric.
    attribute : str, path or Attribute, default "gender"
        The attribute (None: gender, deprecated). One whose defining sets are not the list
        set's definitional pairs (another than gender): its subspace of ``k - 1`` components is re-fitted
        (module docstring); ``projections`` are then the norms of the projections, and the
        variance ratios the share of the kept components. ``words`` default to its neutral
        words.

    Returns
    -------
    RefitDirectionResult
    """
    from ..subspace import BiasSubspace, gender_direction
    from .projection import direct_bias, projections

    from ..data.attributes import as_attribute

    tested = as_emb(tested)
    attr = as_attribute(attribute, lists)
    if not attr.uses_gender_lists:
        name = "neutral words" if words is None else "words"
        words = list(attr.neutral_words) if words is None else wordlists.resolve_words(words, "professions", lists)
        return _refit_groups(tested, words, name, attr, original, lists, max_missing, lowercase)
    name = "professions" if words is None else "words"
    words = wordlists.resolve_words(words, "professions", lists)
    refit = BiasSubspace(lists=lists).fit(tested)
    g, _ = gender_direction(tested, refit, lists=lists)
    db = direct_bias(tested, words, subspace=refit, max_missing=max_missing, lowercase=lowercase)
    proj = projections(tested, words, subspace=refit, max_missing=max_missing, lowercase=lowercase,
                       name=name)
    orig = _original_subspace(original, tested, lists)
    cosine, orig_ratio = float("nan"), float("nan")
    if orig is not None:
        if orig.components_.shape[1] != tested.dim:
            raise EmbdebiasError(f"refit_direction_bias: the original direction has dimension "
                                 f"{orig.components_.shape[1]}, {tested.name} has {tested.dim}")
        cosine = float(abs(unit_rows(orig.direction_, copy=True) @ g))
        orig_ratio = float(orig.explained_variance_ratio_[0])
    return RefitDirectionResult(
        direct_bias=db.direct_bias, words=proj.words, projections=proj.projections, direction_cosine=cosine,
        refit_variance_ratio=float(refit.explained_variance_ratio_[0]), original_variance_ratio=orig_ratio,
        refit_spectrum=refit.explained_variance_ratio_.tolist(), pairs_used=list(refit.pairs_used_),
        missing=proj.missing, lowercased=proj.lowercased)
