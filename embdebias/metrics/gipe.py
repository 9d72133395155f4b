r"""Gender-based Illicit Proximity Estimate, GIPE (Kumar et al., TACL 2020), RAN-Debias's companion metric.

For each word :math:`w` of a debias set, :math:`\eta(w)` is the share of its ``n``
nearest neighbours in the *tested* embedding (cosine) whose indirect bias
:math:`\beta(w, u)` (Bolukbasi et al. 2016), computed in the *original* embedding along
its gender direction, exceeds :math:`\theta`. Words are weighted by the graph of those
neighbour edges: a word :math:`u` reached by :math:`E(u)` edges, :math:`B(u)` of them with
:math:`\beta > \theta`, weighs :math:`1 + B(u) / E(u)` (1 when no edge reaches it), and

.. math:: \mathrm{GIPE} = \frac{\sum_w \mathrm{weight}(w)\, \eta(w)}{\sum_w \mathrm{weight}(w)}

(the authors' ``gipe.py``, ``score``): lower is fairer, 0 when no word of the set has a
neighbour left that is close to it because of gender.

**A documented choice: the weight of a word no edge reaches.** The authors' code gives
such a word weight 0 (its weight is computed only for the words some edge reaches), so
it drops out of the weighted mean; its comment, the formula ``1 + B(u) / E(u)`` and
embdebias give it 1, so every word of the set counts at least once (``unreached_weight=0``
gives the code's number). The two differ when
a word of the set is nobody's neighbour (a set of three words ``a, b, c``, each one's
nearest neighbour biased for ``a`` and ``b``, ``c`` reached by no edge: 0.78 here, 1.0
with the code's 0; ``tests/test_metric_gipe.py``).

Kumar, V., Bhotia, T. S., Kumar, V. & Chakraborty, T. (2020). Nurse is closer to woman
than surgeon? Mitigating gender-biased proximities in word embeddings. TACL 8.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import wordlists
from .._rows import indirect_bias, top_neighbours, unit_rows
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding
from ..errors import EmbdebiasError, MissingWordsError
from .base import N_SCORED, Metric, Option, positive_int, positive_number, register
from ._blocks import CHUNK_ROWS
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, unit_vectors
from ._resample import Sample

#: Words per side of the default word set, the size of RAN-Debias's default debias set.
DEFAULT_N_WORDS = 1000
#: Where the default word set is chosen from: the first words of the original (Gonen & Goldberg's candidates).
N_CANDIDATES = 50_000


@dataclass
class GipeResult(MetricResult):
    r"""Result of :func:`gipe`.

    Attributes
    ----------
    gipe : float
        The weighted mean of ``eta`` (the headline ``value``); lower is fairer.
    words : list of str
        The words scored (in the tested embedding's vocabulary).
    eta : ndarray
        Per word, the share of its ``n`` nearest neighbours in the tested embedding with
        :math:`\beta > \theta` in the original.
    weights : ndarray
        Per word, :math:`1 + B(w) / E(w)` of the neighbour graph.
    n, theta : int, float
        The neighbours per word and the threshold on :math:`\beta`.
    missing, lowercased : dict
        As for every metric, for ``words``.
    """

    gipe: float
    eta: np.ndarray
    weights: np.ndarray
    words: list
    n: int = 100
    theta: float = 0.05
    missing: dict = field(default_factory=dict)
    lowercased: dict = field(default_factory=dict)

    value_field = "gipe"

    @property
    def n_scored(self) -> int:
        """Words scored."""
        return len(self.words)


def gipe_statistic(eta: np.ndarray, weights: np.ndarray):
    """The resampling statistic of GIPE: ``stat({"words": (B, n) indices}) -> (B,)`` weighted means.

    Each word keeps its graph weight (computed once, on every word) when the words are
    resampled: the interval is that of the choice of words, the neighbour graph held fixed.
    """
    eta, weights = np.asarray(eta, dtype=np.float64), np.asarray(weights, dtype=np.float64)

    def stat(draws: dict) -> np.ndarray:
        idx = draws["words"]
        w = weights[idx]
        return (w * eta[idx]).sum(axis=1) / w.sum(axis=1)

    return stat


def most_biased_words(original, n_words: int = DEFAULT_N_WORDS, *, lists: str = wordlists.DEFAULT_LISTS,
                      gender_specific=None, lowercase: bool = True) -> list[str]:
    """The ``n_words`` most male then the ``n_words`` most female words of ``original``.

    The candidates and the bias are those of :func:`~embdebias.metrics.residual_bias`
    (Gonen & Goldberg 2019): the first 50,000 words, alphabetic, minus the gender-specific
    list; bias = cosine with the unit ``he - she``.

    Parameters
    ----------
    original : Embedding or gensim KeyedVectors
    n_words : int, default 1000
        Words per side.
    lists : {"published", "curated"}, default "published"
    gender_specific : list of str or str, optional
        Words left out (default: the gender-specific list of ``lists``).
    lowercase : bool, default True
        Look ``he`` and ``she`` up in lower case if needed.

    Returns
    -------
    list of str
    """
    from .residual import candidate_words, extremes, male_direction, unit_block

    original = as_emb(original)
    n_words = positive_int(n_words)
    specific = wordlists.resolve_words(gender_specific, "gender_specific", lists)
    words, rows = candidate_words(original, N_CANDIDATES, specific)
    if words.size < 2 * n_words:
        raise EmbdebiasError(f"GIPE: only {words.size:,} candidate words (alphabetic, not gender-specific) among "
                             f"the first {N_CANDIDATES:,} of {original.name}; {2 * n_words:,} are needed")
    direction = male_direction(original, ("he", "she"), lowercase)[0].astype(np.float32)
    bias = np.concatenate([unit_block(original, rows[s:s + CHUNK_ROWS]) @ direction
                           for s in range(0, rows.size, CHUNK_ROWS)])
    male, female = extremes(bias, n_words)
    return words[male].tolist() + words[female].tolist()


def _unit_chunks(emb: Embedding, chunk_rows: int):
    for start, _, block in emb.iter_chunks(chunk_rows):
        yield start, unit_rows(np.array(block, dtype=np.float32))


def _original_rows(original: Embedding, tested: Embedding, rows: np.ndarray) -> np.ndarray:
    """Rows in ``original`` of the tested embedding's ``rows``, matched by word (all must be there)."""
    if original.words is tested.words:
        return rows
    unique, inverse = np.unique(rows, return_inverse=True)
    words = [tested.words[int(r)] for r in unique]
    found = np.asarray(original.words.rows(words), dtype=np.int64)
    if (found < 0).any():
        missing = [w for w, r in zip(words, found) if r < 0]
        raise MissingWordsError(
            f"GIPE: {len(missing):,} neighbours in {tested.name} are not in the vocabulary of {original.name}, "
            f"so their indirect bias is undefined (GIPE compares two versions of one vocabulary): "
            f"{', '.join(map(repr, missing[:10]))}", missing)
    return found[inverse].reshape(rows.shape)


def gipe(original, tested, words=None, direction=None, *, n: int = 100, theta: float = 0.05,
         n_words: int = DEFAULT_N_WORDS, lists: str = wordlists.DEFAULT_LISTS,
         max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True,
         chunk_rows: int = DEFAULT_CHUNK_ROWS, unreached_weight: float = 1.0) -> GipeResult:
    r"""GIPE of ``tested`` on ``words``, the indirect bias taken in ``original`` along ``direction``.

    See the module docstring for the definition.

    Parameters
    ----------
    original : Embedding or gensim KeyedVectors
        The embedding before debiasing: :math:`\beta` is computed there.
    tested : Embedding or gensim KeyedVectors
        The embedding scored: the neighbours are found there (among all its words, by
        cosine, the word itself excluded). Every neighbour must be in ``original``'s
        vocabulary; the dimensions may differ.
    words : list of str or str, optional
        The debias set (words, a list name or a file). Default: :func:`most_biased_words`
        of ``original`` (``n_words`` per side). The authors score their debias set, made by
        a knowledge-base classifier and shared only as a pickle; to score RAN-Debias on
        exactly the words it moved, pass ``RANDebias(...).fit(emb).debias_words_``.
    direction : (d,) array, optional
        The gender direction of ``original`` (its sign does not matter). Default: the
        first principal component of the definitional pairs of ``lists``
        (:class:`~embdebias.subspace.BiasSubspace`). The authors' ``get_g`` leaves
        mary/john out of the pairs; the default here is the direction every other metric
        of the run uses.
    n : int, default 100
        Neighbours per word (the authors' ``n``).
    theta : float, default 0.05
        Threshold on :math:`\beta` (the authors' :math:`\theta`).
    n_words : int, default 1000
        Words per side of the default word set.
    lists : {"published", "curated"}, default "published"
    max_missing : float, default 0.2
        Largest share of ``words`` that may be out of ``tested``'s vocabulary; the others
        are scored. Every word scored must also be in ``original``.
    lowercase : bool, default True
    chunk_rows : int
        Rows of ``tested`` held at once by the neighbour search.
    unreached_weight : {1.0, 0.0}, default 1.0
        The weight of a word of the set that no neighbour edge reaches: 1, as the
        formula and the authors' comment say, or 0, what their code computes (the module
        docstring's documented choice).

    Returns
    -------
    GipeResult

    Raises
    ------
    MissingWordsError
        Too many words missing, or a neighbour missing from ``original``.
    DimensionError
        ``direction`` does not have ``original``'s dimension.

    Examples
    --------
    Three words, the first axis gender: "nurse" is nearest to "woman" only through their
    gender components (beta = 1); once moved, its nearest word is "table", an unbiased
    neighbour (beta < 0).

    >>> import numpy as np
    >>> from embdebias import Embedding
    >>> words = ["nurse", "woman", "table"]
    >>> original = Embedding(words, np.array([[0.8, 0.6, 0], [0.8, 0, 0.6], [0, 0.6, 0.8]]))
    >>> moved = Embedding(words, np.array([[0, 0.8, 0.6], [0.8, 0, 0.6], [0, 0.6, 0.8]]))
    >>> gipe(original, original, ["nurse"], [1, 0, 0], n=1).gipe, gipe(original, moved, ["nurse"], [1, 0, 0], n=1).gipe
    (1.0, 0.0)
    """
    from ..errors import DimensionError

    original, tested = as_emb(original), as_emb(tested)
    n, theta = positive_int(n), float(theta)
    if words is None:
        words = most_biased_words(original, n_words, lists=lists, lowercase=lowercase)
    words = wordlists.resolve_words(words, "professions", lists)
    lk = lookup(tested, words, name="GIPE: words", lowercase=lowercase, max_missing=max_missing)
    in_original = lookup(original, lk.words, name=f"GIPE: words (in the original {original.name})",
                         lowercase=lowercase, max_missing=0.0)
    if direction is None:
        from ..subspace import BiasSubspace

        direction = BiasSubspace(lists=lists).fit(original).components_[0]
    g = np.asarray(direction, dtype=np.float64).ravel()
    if g.shape != (original.dim,) or not np.linalg.norm(g) > 0:
        raise DimensionError(f"GIPE: the direction must be a non-zero vector of {original.name}'s dimension "
                             f"{original.dim}, got shape {np.shape(direction)}")
    queries = unit_vectors(tested, lk.rows).astype(np.float32)
    near = top_neighbours(queries, _unit_chunks(tested, chunk_rows), n, lk.rows)
    neigh = unit_vectors(original, _original_rows(original, tested, near).ravel()).reshape(*near.shape, -1)
    biased = indirect_bias(unit_vectors(original, in_original.rows), neigh, g / np.linalg.norm(g)) > theta
    eta = biased.mean(axis=1)
    edges = np.bincount(near.ravel(), minlength=len(tested))
    biased_edges = np.bincount(near.ravel(), weights=biased.ravel(), minlength=len(tested))
    reached = edges[lk.rows]
    if unreached_weight not in (0, 1):
        raise EmbdebiasError(f"GIPE: unreached_weight is 1 (the formula) or 0 (the authors' code), got "
                             f"{unreached_weight!r}")
    weights = np.where(reached > 0, 1 + biased_edges[lk.rows] / np.maximum(reached, 1), float(unreached_weight))
    return GipeResult(float((weights * eta).sum() / weights.sum()), eta, weights, list(lk.words), n, theta,
                      missing={"words": list(lk.missing)},
                      lowercased={"words": dict(lk.lowercased)} if lk.lowercased else {})


@register
class Gipe(Metric):
    name, title = "gipe", "GIPE (gender-biased proximity)"
    headline = (("", "gipe", "lower"),)
    function = "gipe"
    legend = ("Kumar et al.'s (2020) Gender-based Illicit Proximity Estimate, RAN-Debias's companion metric: "
              "for each of the 1,000 most male- and 1,000 most female-biased words of the original, the share "
              "of its 100 nearest neighbours in the column whose indirect bias beta (in the original, along "
              "the original direction) exceeds 0.05, averaged with the weights of the neighbour graph; 0 is "
              "fairer. The interval resamples the words (each keeps its graph weight).")
    statistics = {"gipe": "GIPE", "mean_eta": "mean share of biased neighbours (unweighted)",
                  N_SCORED: "words scored"}
    options = {
        "words": Option(None, "the debias set scored (a list, list name or file; default: the n_words most male- "
                              "and most female-biased of the original's first 50,000 alphabetic words)"),
        "n_words": Option(DEFAULT_N_WORDS, "words per side of the default set", positive_int),
        "n": Option(100, "nearest neighbours per word", positive_int),
        "theta": Option(0.05, "threshold on the indirect bias beta", positive_number),
    }

    def params(self, opts):
        return {**opts, "words": None if opts["words"] is None else str(opts["words"])}

    def legend_for(self, ctx):
        opts = ctx.opts(self.name)
        words = (f"the {opts['n_words']:,} most male- and {opts['n_words']:,} most female-biased words of the original"
                 if opts["words"] is None else "each word of the given debias set")
        return (f"Kumar et al.'s (2020) Gender-based Illicit Proximity Estimate, RAN-Debias's companion metric: for "
                f"{words}, the share of its {opts['n']} nearest neighbours in the column whose indirect bias beta "
                f"(in the original, along the original direction) exceeds {opts['theta']:g}, averaged with the "
                f"weights of the neighbour graph; 0 is fairer. The interval resamples the words (each keeps its "
                f"graph weight).")

    def units(self, ctx):
        return ["gender" if ctx.opts(self.name)["words"] is None else "words"]

    def _words(self, ctx) -> list:
        opts = ctx.opts(self.name)
        key = ("gipe_words", repr(opts["words"]), opts["n_words"])
        if key not in ctx.cache:
            ctx.cache[key] = (most_biased_words(ctx.reference, opts["n_words"], lists=ctx.lists,
                                                lowercase=ctx.lowercase)
                              if opts["words"] is None else wordlists.resolve_words(opts["words"], "professions",
                                                                                   ctx.lists))
        return ctx.cache[key]

    def data(self, ctx):
        opts = ctx.opts(self.name)
        if opts["words"] is not None:
            return f"debias set: {ctx.list_text(opts['words'], 'professions', 'words')}"
        return (f"debias set: the {opts['n_words']:,} most male- and most female-biased words (cosine with he - she) "
                f"of the first {N_CANDIDATES:,} alphabetic words of '{ctx.reference_name}' minus "
                f"{ctx.list_text(None, 'gender_specific', 'words')}; beta in '{ctx.reference_name}'")

    def score(self, emb, unit, ctx):
        opts = ctx.opts(self.name)
        g, _ = ctx.reference_direction()
        r = gipe(ctx.reference, emb, self._words(ctx), g, n=opts["n"], theta=opts["theta"], lists=ctx.lists,
                 max_missing=ctx.max_missing, lowercase=ctx.lowercase)
        sample = Sample({"words": list(r.words)}, gipe_statistic(r.eta, r.weights), "lower")
        cells = {"gipe": r.gipe, "mean_eta": float(np.mean(r.eta)), N_SCORED: r.n_scored}
        return r, {unit: cells}, {(unit, "gipe"): sample}
