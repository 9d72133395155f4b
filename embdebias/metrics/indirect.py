r"""Bolukbasi et al.'s (2016) indirect bias :math:`\beta(w, v)` over many pairs at once.

Bolukbasi, T., Chang, K.-W., Zou, J., Saligrama, V. & Kalai, A. (2016). Man is to
computer programmer as woman is to homemaker? Debiasing word embeddings. NeurIPS.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import wordlists
from .._rows import row_norms, unit_rows
from ..errors import EmbdebiasError, MissingWordsError
from .base import N_SCORED, Metric, Option, register
from ._blocks import CHUNK_ROWS
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, unit_vectors

# -- indirect bias ------------------------------------------------------------------------------


@dataclass
class IndirectBiasResult(MetricResult):
    r"""Result of :func:`indirect_bias`.

    Attributes
    ----------
    pairs : list of (str, str)
        The pairs scored (both words in the vocabulary).
    beta : list of float
        :math:`\beta(w, v)` per pair; NaN where it is undefined (see
        :func:`indirect_bias`).
    similarity : list of float
        :math:`w \cdot v`, the cosine of the pair.
    similarity_without_gender : list of float
        :math:`w_\perp \cdot v_\perp / (\|w_\perp\| \|v_\perp\|)`, the cosine once the
        gender subspace is removed.
    mean_beta : float
        Mean of the defined ``beta`` values (the headline ``value``).
    n_undefined : int
        Pairs whose ``beta`` is NaN.
    """

    pairs: list[tuple[str, str]]
    beta: list[float]
    similarity: list[float]
    similarity_without_gender: list[float]
    mean_beta: float
    n_undefined: int
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)
    direction: str = ""

    value_field = "mean_beta"

    @property
    def n_scored(self) -> int:
        """Pairs with a defined beta."""
        return len(self.pairs) - self.n_undefined

    def as_dict(self) -> dict[tuple[str, str], float]:
        """``{(w, v): beta}``."""
        return dict(zip(self.pairs, self.beta))


def _pair_indices(pairs_or_words) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(unique words, left index, right index)`` of explicit pairs or of all pairs of words."""
    items = list(pairs_or_words)
    if items and all(isinstance(x, str) for x in items):
        words = list(dict.fromkeys(items))
        left, right = np.triu_indices(len(words), 1)
        return words, left.astype(np.int64), right.astype(np.int64)
    if not items or not all(isinstance(p, (tuple, list)) and len(p) == 2
                            and all(isinstance(w, str) for w in p) for p in items):
        raise EmbdebiasError("indirect bias: expected a list of words or a list of (word, word) pairs")
    words = list(dict.fromkeys(w for p in items for w in p))
    where = {w: i for i, w in enumerate(words)}
    index = np.array([[where[a], where[b]] for a, b in items], dtype=np.int64).reshape(-1, 2)
    return words, index[:, 0], index[:, 1]


def _pair_dots(x: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``x[left[i]] . x[right[i]]`` for every pair.

    Every pair of a few hundred words is tens of thousands of pairs: then the entries of
    the words' Gram matrix (one small matrix product) beat gathering two vectors per
    pair. Sparse explicit pairs, whose Gram matrix would dwarf them, go chunk by chunk.
    """
    if x.shape[0] ** 2 <= 4 * left.size:
        return (x @ x.T)[left, right]
    out = np.empty(left.size)
    for start in range(0, left.size, CHUNK_ROWS):
        a, b = left[start:start + CHUNK_ROWS], right[start:start + CHUNK_ROWS]
        out[start:start + a.size] = np.einsum("ij,ij->i", x[a], x[b])
    return out


def _word_pairs(words: list[str], left: np.ndarray, right: np.ndarray) -> list[tuple[str, str]]:
    """``[(words[left[i]], words[right[i]])]``: the words gathered by index arrays and paired by ``zip``
    (tens of thousands of pairs, no Python-level indexing per pair)."""
    table = np.array(words, dtype=object)
    return list(zip(table[left].tolist(), table[right].tolist()))


def indirect_bias(embedding, pairs_or_words, *, subspace=None, lists: str = wordlists.DEFAULT_LISTS,
                  min_similarity: float = 1e-3, max_missing: float = DEFAULT_MAX_MISSING,
                  lowercase: bool = True) -> IndirectBiasResult:
    r"""Bolukbasi et al.'s (2016, Section 4) indirect bias of word pairs.

    For unit vectors :math:`w, v` and the gender subspace (by default the unit
    direction :math:`g`), :math:`w_\perp = w - (w \cdot g) g` and

    .. math:: \beta(w, v) = \Bigl(w \cdot v - \frac{w_\perp \cdot v_\perp}
              {\|w_\perp\| \|v_\perp\|}\Bigr) \Big/ \, w \cdot v,

    the share of the similarity of ``w`` and ``v`` that is due to gender: 0 when
    removing the gender component leaves their cosine unchanged, 1 when nothing of
    it is left, negative when removing gender makes them *more* similar.  With a
    ``k``-dimensional subspace, :math:`w_\perp` removes the projection on all of it.

    **Undefined values.** As :math:`w \cdot v \to 0` the ratio grows without bound
    and its sign follows the rounding of :math:`w \cdot v`, so pairs with
    :math:`|w \cdot v| <` ``min_similarity`` get NaN (they are counted in
    ``n_undefined`` and left out of ``mean_beta``); so do pairs where a word lies in
    the gender subspace (:math:`w_\perp = 0`).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    pairs_or_words : list of (str, str) or list of str
        Explicit pairs, or words, of which every unordered pair (in the given order:
        ``(words[i], words[j])`` for ``i < j``) is scored.
    subspace : BiasSubspace, array or pairs, optional
        The gender subspace, resolved by :func:`~embdebias.subspace.resolve_subspace`
        (default: fitted on ``embedding`` from the definitional pairs of ``lists``).
    lists : {"published", "curated"}, default "published"
    min_similarity : float, default 1e-3
        Smallest :math:`|w \cdot v|` for which ``beta`` is reported.
    max_missing, lowercase
        As for every metric; a pair with a missing word is left out.

    Returns
    -------
    IndirectBiasResult

    Examples
    --------
    With the gender direction along the first axis, softball's similarity to receptionist
    is mostly not gender's (a fifth of it is); football's nearly vanishes, so removing
    gender turns it far more similar and the ratio runs away (see "Undefined values"):

    >>> import numpy as np
    >>> from embdebias import Embedding
    >>> emb = Embedding(["softball", "football", "receptionist"],
    ...                 np.array([[0.6, 0.8, 0], [-0.6, 0.8, 0], [0.6, 0.48, 0.64]]))
    >>> pairs = [("softball", "receptionist"), ("football", "receptionist")]
    >>> np.round(indirect_bias(emb, pairs, subspace=np.array([[1.0, 0, 0]])).beta, 3).tolist()
    [0.194, -24.0]
    """
    from ..subspace import resolve_subspace

    emb = as_emb(embedding)
    if not min_similarity >= 0:
        raise EmbdebiasError(f"indirect bias: min_similarity must be >= 0, got {min_similarity}")
    words, left, right = _pair_indices(pairs_or_words)
    lk = lookup(emb, words, name="indirect bias: words", lowercase=lowercase, max_missing=max_missing)
    sub = resolve_subspace(subspace, emb, lists=lists)
    row_of = np.full(len(words), -1, dtype=np.int64)
    position = {w: i for i, w in enumerate(words)}
    row_of[[position[w] for w in lk.words]] = np.arange(len(lk.words))
    keep = (row_of[left] >= 0) & (row_of[right] >= 0)
    left, right = row_of[left[keep]], row_of[right[keep]]
    if left.size == 0:
        raise MissingWordsError("indirect bias: no pair has both words in the vocabulary", lk.missing)
    unit = unit_vectors(emb, lk.rows)
    perp = unit - (unit @ sub.components_.T) @ sub.components_
    norms = row_norms(perp)
    perp_unit = unit_rows(perp.copy())
    sim, sim_perp = _pair_dots(unit, left, right), _pair_dots(perp_unit, left, right)
    tiny = 1e-12
    defined = (np.abs(sim) >= min_similarity) & (norms[left] > tiny) & (norms[right] > tiny)
    beta = np.full(left.size, np.nan)
    beta[defined] = (sim[defined] - sim_perp[defined]) / sim[defined]
    return IndirectBiasResult(
        pairs=_word_pairs(lk.words, left, right),
        beta=beta.tolist(), similarity=sim.tolist(), similarity_without_gender=sim_perp.tolist(),
        mean_beta=float(np.mean(beta[defined])) if defined.any() else float("nan"),
        n_undefined=int((~defined).sum()), missing={"words": list(lk.missing)},
        lowercased={"words": dict(lk.lowercased)} if lk.lowercased else {},
        direction="given subspace" if subspace is not None else "BiasSubspace fitted on this embedding")


# -- generated analogies ------------------------------------------------------------------------


@register
class IndirectBias(Metric):
    name, title = "indirect_bias", "Indirect bias"
    headline = (("", "mean_beta", "lower"),)
    function = "indirect_bias"
    legend = ("Bolukbasi et al.'s (2016) indirect bias beta(w, v): the share of the similarity of two "
              "words that is due to their gender components, averaged over every pair of the "
              "professions whose similarity is defined (|w.v| >= 0.001); 0 is fairer. Direction: "
              "the original's. The interval is the normal one of a mean over pairs, treated as independent.")
    statistics = {"mean_beta": "mean beta over pairs", N_SCORED: "pairs scored"}
    options = {"neutral_words": Option(None, "words whose every pair is scored (a list, list name or file; "
                                             "default: the professions of lists)")}

    def params(self, opts):
        return {"neutral_words": None if opts["neutral_words"] is None else str(opts["neutral_words"])}

    def units(self, ctx):
        return [ctx.neutral_name(ctx.opts(self.name)["neutral_words"])]

    def data(self, ctx):
        neutral = ctx.opts(self.name)["neutral_words"]
        ctx.neutral(neutral)  # a bad list fails before any scoring
        return f"every pair of {ctx.list_text(neutral, 'professions', 'words')}"

    def score(self, emb, unit, ctx):
        from ._resample import normal_mean_interval

        g, _ = ctx.reference_direction()
        r = indirect_bias(emb, ctx.neutral(ctx.opts(self.name)["neutral_words"]), subspace=g, lists=ctx.lists,
                          max_missing=ctx.max_missing, lowercase=ctx.lowercase)
        # Tens of thousands of pairs: a normal interval of their mean (pairs sharing a word
        # are not independent, so it is on the narrow side; the legend says so).
        lo, hi = normal_mean_interval(r.beta, r.mean_beta)
        return r, {unit: {"mean_beta": (r.mean_beta, lo, hi), N_SCORED: r.n_scored}}, {}
