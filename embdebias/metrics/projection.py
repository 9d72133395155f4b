r"""Projections on the gender direction and Bolukbasi et al.'s (2016) direct bias.

The gender direction ``g`` is the first component of a
:class:`~embdebias.subspace.BiasSubspace` (by default fitted on the embedding being
measured, from the ten definitional pairs); it is oriented so that female words project
positively.  A word's projection is :math:`\cos(w, g)`.

Direct bias over a set ``N`` of words that ought to be gender-neutral (default: the
bundled professions) is :math:`\mathrm{DirectBias}_c = \frac{1}{|N|}\sum_{w \in N} |\cos(w, g)|^c`
(``c = 1`` by default; Bolukbasi et al. report ``c = 1``).  It is 0 after a hard debias
that neutralized those words.

**k groups.** An attribute of ``k > 2`` groups has a bias subspace of several components
:math:`B = (b_1, \dots, b_m)` (Manzini et al. 2019: ``k - 1`` principal components of the
set-centred defining sets). Bolukbasi et al. define direct bias for one direction only; we
take the norm of the projection on the subspace, the cosine of the word with the subspace:

.. math::

    \mathrm{DirectBias}_c = \frac{1}{|N|}\sum_{w \in N} \lVert P_B\,\hat w \rVert^c
    = \frac{1}{|N|}\sum_{w \in N} \Bigl(\sum_{i=1}^{m} \cos(w, b_i)^2\Bigr)^{c/2}

which is :math:`|\cos(w, g)|^c` for one component, so gender's numbers do not change, and
which does not depend on the basis chosen inside the subspace (rotating the components, or
flipping their signs, leaves it unchanged). :func:`direct_bias` uses it when its subspace
has more than one component.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._rows import unit_rows
from ..errors import DimensionError, EmbdebiasError
from .base import N_SCORED, Metric, Option, attribute_subspace, positive_number, register
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, unit_vectors
from ._resample import Sample, mean_of


def __getattr__(name):
    # gender_direction moved beside BiasSubspace (embdebias.subspace); users' imports from
    # here keep working, without importing scikit-learn (subspace's) with the metrics.
    if name == "gender_direction":
        from ..subspace import gender_direction

        return gender_direction
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class ProjectionResult(MetricResult):
    """Projections ``cos(w, g)`` of the in-vocabulary ``words`` (female positive)."""

    words: list[str]
    projections: list[float]
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)
    direction: str = ""

    @property
    def value(self) -> float:
        """Mean absolute projection (DirectBias with c = 1)."""
        return float(np.mean(np.abs(self.projections))) if self.projections else float("nan")

    @property
    def n_scored(self) -> int:
        """Words projected."""
        return len(self.words)

    def as_dict(self) -> dict[str, float]:
        """``{word: projection}``."""
        return dict(zip(self.words, self.projections))


def projections(embedding, words, *, subspace=None, max_missing: float = DEFAULT_MAX_MISSING,
                lowercase: bool = True, name: str = "words") -> ProjectionResult:
    """Every word's cosine with the gender direction (see the module docstring)."""
    from ..subspace import gender_direction

    emb = as_emb(embedding)
    lk = lookup(emb, words, name=f"projections: {name}", lowercase=lowercase, max_missing=max_missing)
    g, label = gender_direction(emb, subspace)
    proj = unit_vectors(emb, lk.rows) @ g
    return ProjectionResult(lk.words, proj.tolist(), {name: list(lk.missing)},
                            {name: dict(lk.lowercased)} if lk.lowercased else {}, label)


@dataclass
class DirectBiasResult(MetricResult):
    """Result of :func:`direct_bias` (``n_components``: of the subspace the words were projected on)."""

    direct_bias: float
    c: float
    n_words: int
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)
    direction: str = ""
    words_name: str = ""
    n_components: int = 1

    value_field = "direct_bias"

    @property
    def n_scored(self) -> int:
        """Words scored."""
        return self.n_words


def subspace_norms(vectors: np.ndarray, components: np.ndarray) -> np.ndarray:
    """``||P_B w||`` of the unit rows of ``vectors`` on the orthonormal rows ``components`` of a
    subspace: the cosine of each word with the subspace (``|cos(w, g)|`` for one component)."""
    return np.linalg.norm(unit_rows(np.asarray(vectors, dtype=np.float64), copy=True) @ components.T, axis=1)


def _components(subspace) -> np.ndarray | None:
    """The ``(k, d)`` rows of a given subspace with ``k > 1`` (None otherwise: one direction)."""
    from ..subspace import BiasSubspace

    if isinstance(subspace, BiasSubspace) and hasattr(subspace, "components_"):
        comps = subspace.components_
    elif subspace is not None and not isinstance(subspace, BiasSubspace) and np.ndim(subspace) == 2:
        comps = BiasSubspace.from_components(subspace).components_
    else:
        return None
    return comps if comps.shape[0] > 1 else None


def direct_bias(embedding, words=None, *, c: float = 1.0, subspace=None,
                max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True) -> DirectBiasResult:
    """Bolukbasi et al.'s ``DirectBias_c`` over ``words`` (default: the bundled professions).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    words : list of str, optional
        Words that should be gender-neutral.
    c : float, default 1.0
        Strictness exponent (``c > 0``).
    subspace : BiasSubspace or array, optional
        Gender direction; default a BiasSubspace fitted on ``embedding``. A fitted subspace or
        ``(k, d)`` array of ``k > 1`` components (an attribute of several groups) gives the mean
        norm of the projection on it (module docstring).
    """
    if not c > 0:
        raise EmbdebiasError(f"direct bias: c must be > 0, got {c}")
    name = "words"
    if words is None:
        from ..wordlists import professions

        words, name = professions(), "professions"
    comps = _components(subspace)
    if comps is not None:
        return _direct_bias_k(embedding, words, c, comps, name, max_missing, lowercase)
    res = projections(embedding, words, subspace=subspace, max_missing=max_missing,
                      lowercase=lowercase, name=name)
    value = float(np.mean(np.abs(np.asarray(res.projections)) ** c))
    return DirectBiasResult(value, float(c), len(res.words), res.missing, res.lowercased,
                            res.direction, name)


def _direct_bias_k(embedding, words, c, comps, name, max_missing, lowercase) -> DirectBiasResult:
    emb = as_emb(embedding)
    if comps.shape[1] != emb.dim:
        raise DimensionError(f"the bias subspace has dimension {comps.shape[1]}, {emb.name} has {emb.dim}-d vectors")
    lk = lookup(emb, words, name=f"direct bias: {name}", lowercase=lowercase, max_missing=max_missing)
    norms = subspace_norms(unit_vectors(emb, lk.rows), comps)
    return DirectBiasResult(float(np.mean(norms ** c)), float(c), len(lk.words), {name: list(lk.missing)},
                            {name: dict(lk.lowercased)} if lk.lowercased else {},
                            f"given subspace of {comps.shape[0]} components", name, int(comps.shape[0]))


@register
class DirectBias(Metric):
    name, title = "direct_bias", "Direct bias"
    needs = ("neutral_words",)
    scope = "any"  # measures any attribute (its groups, defining sets and neutral words)
    headline = (("", "direct_bias_original", "lower"),)
    function = "direct_bias"
    legend = ("DirectBias_c (Bolukbasi et al. 2016): mean |cos(w, g)|^c over the professions; 0 is "
              "fairer. Original direction: g fitted once, on the first column, so every column is "
              "measured on the same axis. Own direction: g re-fitted on each column's definitional "
              "pairs; after debiasing the gender information may sit on a new axis, which only "
              "this row shows.")
    statistics = {"direct_bias_original": "DirectBias (original direction)",
                  "direct_bias_own": "DirectBias (own direction)", N_SCORED: "words scored"}
    options = {"neutral_words": Option(None, "words measured (a list, list name or file; "
                                             "default: the professions of lists)"),
               "c": Option(1.0, "the exponent c of DirectBias_c", positive_number)}

    def params(self, opts):
        return {"neutral_words": None if opts["neutral_words"] is None else str(opts["neutral_words"]),
                "c": opts["c"]}

    def units(self, ctx):

        neutral = ctx.opts(self.name)["neutral_words"]
        return [ctx.attribute_or_default().neutral_name if neutral is None else ctx.neutral_name(neutral)]

    def data(self, ctx):
        from ._query import neutral_word_set

        neutral = ctx.opts(self.name)["neutral_words"]
        attr = ctx.attribute_or_default()
        if not attr.uses_gender_lists:
            words = neutral_word_set(ctx, neutral)
            return (f"{len(words):,} neutral words of the attribute {attr.name!r}; the norm of their projection "
                    f"on its subspace of {attr.k - 1} components (original: fitted on the defining sets in "
                    f"'{ctx.reference_name}'; own: on each column's)")
        ctx.neutral(neutral)  # a bad list fails before any scoring
        return (f"{ctx.list_text(neutral, 'professions', 'words')}; original direction: "
                f"{ctx.reference_label}; own direction: fitted on each column's definitional pairs")

    def _score_groups(self, emb, unit, ctx, attr):
        """An attribute of several groups: the norm of the projection on its subspace."""
        from ..subspace import resolve_subspace
        from ._query import neutral_word_set

        opts = ctx.opts(self.name)
        words = neutral_word_set(ctx, opts["neutral_words"])
        key = ("attribute_subspace", attr.name)
        if key not in ctx.cache:
            ctx.cache[key] = (resolve_subspace(ctx.subspace, ctx.reference) if ctx.subspace is not None
                              else attribute_subspace(ctx.reference, attr, lists=ctx.lists))
        cells, samples, first = {}, {}, None
        for stat, sub in (("direct_bias_original", ctx.cache[key]),
                          ("direct_bias_own", attribute_subspace(emb, attr, lists=ctx.lists))):
            lk = lookup(emb, words, name=f"direct bias: {unit}", lowercase=ctx.lowercase, max_missing=ctx.max_missing)
            per_word = subspace_norms(unit_vectors(emb, lk.rows), sub.components_) ** opts["c"]
            cells[stat] = float(per_word.mean())
            samples[(unit, stat)] = Sample({"items": lk.words}, mean_of(per_word))
            first = first or (lk, sub.components_.shape[0])
        lk, n_comp = first
        r = DirectBiasResult(cells["direct_bias_original"], float(opts["c"]), len(lk.words), {unit: list(lk.missing)},
                             {unit: dict(lk.lowercased)} if lk.lowercased else {},
                             f"original: {attr.name} subspace", unit, n_comp)
        cells[N_SCORED] = r.n_scored
        return r, {unit: cells}, samples

    def score(self, emb, unit, ctx):
        from ..subspace import resolve_subspace

        attr = ctx.attribute_or_default()
        if not attr.uses_gender_lists:
            return self._score_groups(emb, unit, ctx, attr)
        opts = ctx.opts(self.name)
        words = ctx.neutral(opts["neutral_words"])
        g, label = ctx.reference_direction()
        own_g = resolve_subspace(None, emb, lists=ctx.lists).direction_
        cells, samples, first = {}, {}, None
        for stat, direction in (("direct_bias_original", g), ("direct_bias_own", own_g)):
            p = projections(emb, words, subspace=direction, **ctx.common)
            per_word = np.abs(np.asarray(p.projections)) ** opts["c"]
            cells[stat] = float(per_word.mean())
            samples[(unit, stat)] = Sample({"items": p.words}, mean_of(per_word))
            first = first or p
        r = DirectBiasResult(cells["direct_bias_original"], float(opts["c"]), len(first.words), first.missing,
                             first.lowercased, f"original: {label}", unit)
        cells[N_SCORED] = r.n_scored
        return r, {unit: cells}, samples
