r"""Occupation bias of an embedding in the spirit of Lu et al. (2020).

Lu, Mardziel, Wu, Amancharla & Datta (2020, Definition 3) score a model on matched
sentence pairs that differ only in the gender of a word and define an occupation's bias
as the mean score difference, male minus female, and the *aggregate occupation bias*
(AOB) as its mean absolute value over the occupations; their Table 3 also aggregates
with the signs kept. For an embedding the score of an occupation ``o`` with a gendered
term is their cosine similarity, so here

.. math::

   B(o) = \frac{1}{|M|}\sum_{m \in M} \cos(o, m) - \frac{1}{|F|}\sum_{f \in F} \cos(o, f),
   \qquad \mathrm{AOB} = \frac{1}{|O|}\sum_o |B(o)|, \qquad
   \mathrm{AOB}_{\pm} = \frac{1}{|O|}\sum_o B(o),

with ``M`` and ``F`` the male and female words of the definitional pairs (Lu et al.'s
templates put "he" or "the man" beside the occupation) and ``O`` Lu et al.'s occupations
(``wordlists/lu2020/occupations.txt``). ``B(o) > 0``: the occupation is closer to the
male terms. AOB is 0 for an embedding where every occupation is as close to either
gender; the signed AOB says which way the bias leans on average. Their intervals
resample the occupations; the gendered terms are held fixed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data.wordlists import LU_OCCUPATIONS, lu_occupations  # noqa: F401 (their old home)
from .base import N_SCORED, Metric, register
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, unit_vectors
from ._resample import Sample

#: The bundled occupation list of Lu et al. (2020).


@dataclass
class OccupationBiasResult(MetricResult):
    """Result of :func:`occupation_bias`.

    Attributes
    ----------
    aob, signed_aob : float
        Mean of ``|B(o)|`` and of ``B(o)`` over the occupations.
    per_occupation : dict
        ``{occupation: B(o)}`` (positive: closer to the male terms).
    male, female : list of str
        The gendered terms used.
    missing : dict
        Out-of-vocabulary words of each set.
    """

    aob: float
    signed_aob: float
    per_occupation: dict
    male: list
    female: list
    missing: dict
    lowercased: dict = field(default_factory=dict)

    value_field = "aob"

    @property
    def n_scored(self) -> int:
        """Occupations scored."""
        return len(self.per_occupation)


def occupation_cosines(emb, occupations, male, female, *, max_missing: float, lowercase: bool):
    """``(lookups, cos with male terms, cos with female terms)`` of the occupations."""
    looks = [lookup(emb, words, name=name, lowercase=lowercase, max_missing=max_missing, min_size=1)
             for name, words in (("occupations", occupations), ("male terms", male), ("female terms", female))]
    occ, m, f = (unit_vectors(emb, lk.rows) for lk in looks)
    return looks, occ @ m.T, occ @ f.T


def occupation_bias(embedding, occupations=None, *, male=None, female=None, lists: str = "published",
                    max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True) -> OccupationBiasResult:
    """Lu et al.'s aggregate occupation bias of an embedding (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    occupations : list of str, optional
        Default: Lu et al.'s occupations.
    male, female : list of str, optional
        Default: the male and female words of the definitional pairs of ``lists``.
    max_missing : float, default 0.2
        Largest fraction of a set that may be out of vocabulary.
    lowercase : bool, default True
    """
    from .. import wordlists

    emb = as_emb(embedding)
    pairs = wordlists.definitional_pairs(lists)
    female = [f for f, _ in pairs] if female is None else list(female)
    male = [m for _, m in pairs] if male is None else list(male)
    occupations = lu_occupations() if occupations is None else list(occupations)
    looks, cos_m, cos_f = occupation_cosines(emb, occupations, male, female, max_missing=max_missing,
                                             lowercase=lowercase)
    b = cos_m.mean(axis=1) - cos_f.mean(axis=1)
    return OccupationBiasResult(
        aob=float(np.abs(b).mean()), signed_aob=float(b.mean()), per_occupation=dict(zip(looks[0].words, b.tolist())),
        male=looks[1].words, female=looks[2].words, missing={lk.name: list(lk.missing) for lk in looks},
        lowercased={lk.name: dict(lk.lowercased) for lk in looks if lk.lowercased})


def occupation_bias_statistic(cos_m: np.ndarray, cos_f: np.ndarray, signed: bool):
    """``stat(idx)`` of AOB (or the signed AOB) on resampled occupations.

    The gendered terms are held fixed: they define the two sides being compared, and
    resampling them would inflate every ``|B(o)|`` (a mean over fewer distinct terms
    cancels less), putting AOB's interval above its own value.
    """
    b = cos_m.mean(axis=1) - cos_f.mean(axis=1)

    def stat(idx):
        drawn = b[idx["occupations"]]
        return drawn.mean(axis=1) if signed else np.abs(drawn).mean(axis=1)
    return stat


@register
class OccupationBias(Metric):
    name, title = "occupation_bias", "Occupation bias (Lu et al.)"
    function = "occupation_bias"
    legend = ("Lu et al.'s (2020) aggregate occupation bias for an embedding: B(o) = mean cos(o, male "
              "terms) - mean cos(o, female terms) per occupation; AOB = mean |B(o)| (0 is fairer), "
              "signed AOB = mean B(o) (positive: occupations lean male; 0 is fairer). Intervals: "
              "bootstrap over the occupations, the gendered terms held fixed.")
    statistics = {"aob": "AOB", "signed_aob": "signed AOB", N_SCORED: "occupations scored"}

    def units(self, ctx):
        return ["lu2020"]

    def data(self, ctx):
        return (f"Lu et al. (2020)'s occupations (`wordlists/lu2020/occupations.txt`); male and female terms: "
                f"{ctx.list_text(None, 'definitional_pairs', 'pairs')}")

    def score(self, emb, unit, ctx):
        r = occupation_bias(emb, lists=ctx.lists, **ctx.common)
        looks, cos_m, cos_f = occupation_cosines(emb, lu_occupations(), r.male, r.female, max_missing=1.0,
                                                 lowercase=ctx.lowercase)
        items = {"occupations": looks[0].words}
        samples = {(unit, "aob"): Sample(items, occupation_bias_statistic(cos_m, cos_f, False)),
                   (unit, "signed_aob"): Sample(items, occupation_bias_statistic(cos_m, cos_f, True), "zero")}
        return r, {unit: {"aob": r.aob, "signed_aob": r.signed_aob, N_SCORED: r.n_scored}}, samples
