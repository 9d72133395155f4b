r"""Is the bias gone? Residual gender bias after debiasing.

Gonen & Goldberg (2019, "Lipstick on a Pig") showed that hard-debiased embeddings
still group words by their *original* gender bias: removing the gender direction hides
the bias from the direction but not from the geometry around each word.  This module
measures that, next to diagnostics of Bolukbasi et al. (2016) that look past the
gender direction.

:func:`residual_bias` -- Gonen & Goldberg's three tests
    The protocol, exactly (the sizes are parameters; the defaults are the paper's):

    1. **Candidates.** The first ``n_candidates`` (50,000) words of the *original*
       embedding in file order, of those the alphabetic ones (``str.isalpha()``), minus
       the gender-specific list (default: the published full list of
       :func:`embdebias.wordlists.gender_specific`; membership is the exact string as
       written, no case folding).
    2. **Bias of a word.** Its cosine with the unit vector of ``he - she`` in the
       *original* embedding, ``he`` and ``she`` unit-normalized first (as the other
       metrics do).  Positive means male.  This is Gonen & Goldberg's orientation,
       the opposite of the female-positive gender direction used elsewhere in
       embdebias; flipping it leaves all three reported numbers unchanged (words
       whose bias is exactly 0 aside).
    3. **Clustering.** The ``n_cluster`` (500) most male and the ``n_cluster`` most
       female candidates; ``sklearn.cluster.KMeans(n_clusters=2, n_init=10,
       random_state=seed)`` on their unit-normalized vectors in the *tested*
       embedding.  Accuracy is ``max(a, 1 - a)`` where ``a`` is the fraction of words
       whose cluster label equals their male (1) / female (0) label.
    4. **Classification.** The ``n_classify`` (2,500) most male and most female
       candidates; ``sklearn.svm.SVC(kernel="rbf", gamma=svm_gamma)`` is trained on the
       first ``n_train`` (1,000) words of
       ``numpy.random.default_rng(seed).permutation`` of them and its accuracy is
       reported on the others, vectors from the tested embedding (unit-normalized). The
       predictions are libsvm's exactly, their kernel rows computed by BLAS
       (:func:`svm_predict`: libsvm itself decides any test vector whose decision value is
       within the bound of its rounding of 0).
       ``svm_gamma`` is scikit-learn's default ``"scale"`` (``1 / (d var(X))``) unless
       told otherwise; Gonen & Goldberg and the Double-Hard authors used ``"auto"``
       (``1 / d``), and the two differ (hard debias on GloVe 6B 50d: 0.963 with
       ``"scale"`` against 0.896 with ``"auto"``): compare a number only with one of the
       same setting, which the result (``svm_gamma``) and the report's parameters record.
    5. **Bias by neighbours.** For those ``2 * n_classify`` words, the
       ``n_neighbours`` (100) nearest candidates by cosine in the tested embedding,
       the word itself excluded; reported is the Pearson correlation between a word's
       original bias and the fraction of its neighbours whose original bias is male
       (``> 0``).  Computed by blocked matrix products: a block of query rows against
       the candidate matrix at a time (memory bounded by the block, not by the number
       of candidates squared), and the ``n_neighbours``-th largest cosine of each row
       found by a partition of the few cosines at or above a lower bound taken from the
       maxima of groups of columns (exactly that value, for a fraction of the work);
       neighbours tied with it at the boundary count in proportion (the expectation over
       every way of breaking the tie), so the result never depends on the order of rows.

    Everything is matched **by word**, never by row position: the word sets are
    chosen on the original alone (so every tested embedding is scored on the same
    words), and a word missing from the tested embedding is left out of every step
    and listed in ``missing``.  If more than ``max_missing`` (default 20%) of the
    candidates, of the clustering words or of the classification words are missing,
    :class:`~embdebias.errors.MissingWordsError` says how many.  The tested
    embedding may be the original itself, and may have another dimension.
    Cosines are computed in float32, the precision the vectors are stored in.

**k groups** (``groups=`` or an ``attribute=`` other than gender): the same protocol with
one association per group instead of one bias. Group ``j``'s centroid :math:`c_j` is the
mean of the unit vectors of its words (an attribute's: the ``j``-th word of every defining
set) and a word's association with it is :math:`\cos(w, c_j - \bar c)`, :math:`\bar c` the
mean of the centroids (for two groups :math:`c_1 - \bar c = (c_1 - c_2)/2`: the binary bias,
up to the words that define it). :math:`c_j - \bar c` is the mean, over the defining sets,
of the set-centred vector of the set's ``j``-th word: the vectors whose principal components
are the attribute's subspace (Manzini et al. 2019), so the ``k`` directions lie in the span
the subspace summarizes, and they name the group each side of it belongs to. Candidates also
leave out the attribute's specific words and the group words. A word belongs to the group it
is most associated with; the words "most associated with each group" are the ``n_cluster``
(``n_classify``) of each group with the largest association. Then k-means with ``k``
clusters (accuracy: the best one-to-one matching of clusters to groups, found by
``scipy.optimize.linear_sum_assignment``; for two groups ``max(a, 1 - a)``), a multi-class
RBF SVM (scikit-learn's ``SVC``, one-vs-one), and the neighbour correlation averaged over
the groups: Pearson r between a word's association with group ``j`` and the fraction of its
neighbours that belong to ``j`` (for two groups the binary number: both terms of the average
are equal). Gender with its default ``("he", "she")`` direction keeps the binary protocol
above, so its numbers do not change.

The shared direction tests live beside it: :mod:`~embdebias.metrics.refit` (the direction
fitted again), :mod:`~embdebias.metrics.indirect` (indirect bias) and
:mod:`~embdebias.metrics.analogies` (generated analogies).

References
----------
Gonen, H. & Goldberg, Y. (2019). Lipstick on a pig: debiasing methods cover up
systematic gender biases in word embeddings but do not remove them. NAACL.

Bolukbasi, T., Chang, K.-W., Zou, J., Saligrama, V. & Kalai, A. (2016). Man is to
computer programmer as woman is to homemaker? Debiasing word embeddings. NeurIPS.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .._warn import warn
from .. import wordlists
from .._rows import unit_rows
from .._threads import one_thread
from ..errors import EmbdebiasError, MissingWordsError
from .base import N_SCORED, Metric, Option, chance_level, register  # noqa: F401 (chance_level: its old home)
from ._blocks import CHUNK_ROWS, block_rows_for
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, check_max_missing, lookup, unit_vectors

# -- residual bias (Gonen & Goldberg) ---------------------------------------------------------


@dataclass
class ResidualBiasResult(MetricResult):
    """Result of :func:`residual_bias`.

    Attributes
    ----------
    cluster_accuracy : float
        k-means (2 clusters) agreement with the original male/female labels of the
        ``n_cluster`` most male and most female candidates, ``max(a, 1 - a)``; 0.5 is
        chance, 1.0 means the tested embedding still separates them perfectly.  The
        headline ``value``: it is the figure Gonen & Goldberg lead with.
    classification_accuracy : float
        Held-out accuracy of an RBF SVM trained on ``n_train`` of the ``2 n_classify``
        most biased candidates (0.5 is chance).
    neighbour_correlation : float
        Pearson correlation between the original bias of those words and the fraction
        of their ``n_neighbours`` nearest candidates (in the tested embedding) that are
        originally male; NaN if either is constant.
    cluster_words, classify_words : dict
        ``{"male": [...], "female": [...]}``: the words each step used, most biased
        first (missing words left out).  The neighbour step queries ``classify_words``.
    n_candidates : int
        Candidates in the tested embedding (the pool of neighbours).
    n_train, n_test : int
        Words the SVM was trained and scored on.
    n_neighbours : int
    missing : dict
        ``{"candidates" | "clustering" | "classification": [words not in the tested
        embedding]}``.
    lowercased : dict
        ``{"direction words": {word: lower-case form used}}`` if ``he``/``she`` were
        found only in lower case (the candidates are always matched exactly).
    direction_words : list of str
        The (male, female) pair whose difference defines a word's bias (binary protocol;
        empty for k groups).
    groups : list of str
        The groups, the keys of ``cluster_words`` and ``classify_words``.
    random_state : int or None
        The seed of k-means and of the training split.
    svm_gamma : {"scale", "auto"}
        The RBF kernel's ``gamma`` of the classification test.
    """

    cluster_accuracy: float
    classification_accuracy: float
    neighbour_correlation: float
    cluster_words: dict[str, list[str]]
    classify_words: dict[str, list[str]]
    n_candidates: int
    n_train: int
    n_test: int
    n_neighbours: int
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)
    direction_words: list[str] = field(default_factory=lambda: ["he", "she"])
    random_state: int | None = 0
    groups: list[str] = field(default_factory=lambda: ["male", "female"])
    svm_gamma: str = "scale"

    value_field = "cluster_accuracy"

    @property
    def n_scored(self) -> int:
        """Words clustered (the headline's sample)."""
        return sum(len(v) for v in self.cluster_words.values())


def _positive_int(name: str, value) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise EmbdebiasError(f"residual bias: {name} must be a positive integer, got {value!r}")
    return int(value)


def first_words(vocab, n: int) -> list[str]:
    """The first ``n`` words of a vocabulary (decodes only those of a memory-mapped one)."""
    return list(vocab[:max(int(n), 0)])


def candidate_words(emb, n_candidates: int, gender_specific) -> tuple[np.ndarray, np.ndarray]:
    """``(words, rows)``: the first ``n_candidates`` words, alphabetic, minus ``gender_specific``."""
    words = first_words(emb.words, n_candidates)
    specific = set(gender_specific)
    keep = np.fromiter((w.isalpha() and w not in specific for w in words), dtype=bool, count=len(words))
    rows = np.flatnonzero(keep).astype(np.int64)
    return np.array([words[i] for i in rows], dtype=str), rows


def rows_by_word(reference, other, words, reference_rows) -> np.ndarray:
    """Rows of ``words`` in ``other`` (-1 if missing), matched by word.

    ``reference_rows`` are the words' rows in ``reference``; when ``other`` shares the
    vocabulary object, or holds the same word at the same row (checked word by word),
    that row is taken without a dictionary lookup, so two files written in the same
    word order never build an index of their whole vocabularies.
    """
    reference_rows = np.asarray(reference_rows, dtype=np.int64)
    if other is reference or other.words is reference.words:
        return reference_rows.copy()
    vocab = other.words
    if len(words) != reference_rows.size:
        raise ValueError(f"{len(words)} words for {reference_rows.size} rows")
    head = np.array(vocab[:int(reference_rows.max()) + 1] if reference_rows.size else [], dtype=object)
    same = np.zeros(reference_rows.size, dtype=bool)
    inside = np.flatnonzero(reference_rows < head.size)
    # object arrays compare their strings with ==, at C speed (no Python loop over the words)
    same[inside] = head[reference_rows[inside]] == np.array(words, dtype=object)[inside]
    rows = np.where(same, reference_rows, -1)
    others = np.flatnonzero(~same)
    if others.size:
        rows[others] = vocab.rows([words[i] for i in others])
    return rows


def male_direction(emb, pair, lowercase: bool = True):
    """Unit vector of ``unit(pair[0]) - unit(pair[1])`` and the lookup (for its report)."""
    lk = lookup(emb, list(pair), name="residual bias: direction words", lowercase=lowercase,
                max_missing=0.0, min_size=2)
    if len(lk.words) != 2:
        raise EmbdebiasError(f"residual bias: the direction needs two different words, got {pair!r}")
    a, b = unit_vectors(emb, lk.rows)
    diff = a - b
    norm = float(np.linalg.norm(diff))
    if norm == 0.0:
        raise EmbdebiasError(f"residual bias: {pair[0]!r} and {pair[1]!r} have the same direction")
    return diff / norm, lk


def unit_block(emb, rows) -> np.ndarray:
    """Rows of ``emb`` as unit-length float32 vectors (zero rows stay zero)."""
    return unit_rows(emb.take(np.asarray(rows, dtype=np.int64)))


def extremes(bias: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the ``n`` largest and the ``n`` smallest values (ties: earlier first)."""
    order = np.argsort(-bias, kind="stable")
    return order[:n], np.argsort(bias, kind="stable")[:n]


def _missing_check(name: str, n_total: int, missing: list[str], max_missing: float, tested_name: str):
    if n_total and len(missing) / n_total > max_missing:
        shown = ", ".join(map(repr, missing[:20])) + (f" and {len(missing) - 20:,} more" if len(missing) > 20 else "")
        raise MissingWordsError(
            f"residual bias: {len(missing):,} of {n_total:,} {name} words are not in the vocabulary of "
            f"{tested_name} (more than the allowed {max_missing:.0%}): {shown}", missing)


def cluster_accuracy(vectors: np.ndarray, labels: np.ndarray, random_state, n_clusters: int = 2) -> float:
    """Agreement of k-means clusters with ``labels`` (0 .. k-1) under the best matching of clusters
    to labels: ``max(a, 1 - a)`` for two, ``a`` the agreement of 2-means clusters with 0/1 labels."""
    from sklearn.cluster import KMeans

    with one_thread():
        km = KMeans(n_clusters=n_clusters, n_init=10, random_state=random_state).fit(vectors)
    if n_clusters == 2:
        agreement = float(np.mean(km.labels_ == labels))
        return max(agreement, 1.0 - agreement)
    from scipy.optimize import linear_sum_assignment

    confusion = np.zeros((n_clusters, n_clusters), dtype=np.int64)
    np.add.at(confusion, (km.labels_, labels), 1)
    rows, cols = linear_sum_assignment(-confusion)
    return float(confusion[rows, cols].sum() / labels.size)


#: The RBF SVM's ``gamma`` settings: scikit-learn's default, and the published one (Gonen &
#: Goldberg 2019; Wang et al. 2020 for Double-Hard).
SVM_GAMMAS = ("scale", "auto")


def check_svm_gamma(value) -> str:
    """``value`` if it is one of :data:`SVM_GAMMAS` (an option check)."""
    if value not in SVM_GAMMAS:
        raise EmbdebiasError(f"svm_gamma must be one of {', '.join(map(repr, SVM_GAMMAS))} "
                             f"(scikit-learn's default, or the published setting), got {value!r}")
    return value


def classification_accuracy(vectors: np.ndarray, labels: np.ndarray, n_train: int,
                            random_state, gamma: str = "scale") -> tuple[float, int]:
    """Accuracy of an RBF SVM (kernel ``gamma``) trained on the first ``n_train`` of a seeded permutation."""
    from sklearn.svm import SVC

    perm = np.random.default_rng(random_state).permutation(len(labels))
    train, test = perm[:n_train], perm[n_train:]
    if test.size == 0:
        raise EmbdebiasError(f"residual bias: n_train={n_train} leaves no word to test "
                             f"({len(labels)} classification words)")
    if np.unique(labels[train]).size < np.unique(labels).size:
        raise EmbdebiasError("residual bias: the training split misses a group; raise n_train")
    clf = SVC(kernel="rbf", gamma=gamma).fit(vectors[train], labels[train])
    return float(np.mean(svm_predict(clf, vectors[test]) == labels[test])), int(test.size)


#: Test rows whose RBF kernel values against the support vectors are computed at a time by
#: :func:`svm_predict` (a float64 block of this many rows by the support vectors).
_SVM_ROWS = 2048

#: Safety factor of :func:`svm_predict`'s bound on the rounding of a decision value.
_SVM_BOUND_FACTOR = 64.0


def svm_predict(clf, x: np.ndarray) -> np.ndarray:
    r"""``clf.predict(x)`` of a fitted binary RBF ``sklearn.svm.SVC``, exactly, its kernel rows by BLAS.

    libsvm computes each kernel value ``K(x, s) = exp(-gamma |x - s|^2)`` with a loop of its
    own per test vector and support vector; here a block of test rows takes them from one
    matrix product, ``|x - s|^2 = |x|^2 + |s|^2 - 2 x.s``, in float64, and the decision value
    ``f(x) = sum_i dual_coef_i K(x, s_i) + intercept`` (scikit-learn's sign: ``f > 0`` is
    ``classes_[1]``, ``f < 0`` ``classes_[0]``).

    **Why the predictions are libsvm's exactly.** Both computations approximate the same
    real number :math:`D(x)` (the decision value in exact arithmetic); libsvm's label is its
    computed :math:`\hat D_{svm}` compared with 0, ours :math:`\hat D` compared with 0. With
    ``u`` the unit roundoff (2**-53), ``m`` the dimension, ``n`` the support vectors,
    :math:`r = |x| + \max_i |s_i|` and :math:`S = \sum_i |c_i| K(x, s_i)`: each squared
    distance is off by at most ``(m + 3) u r^2`` in either form (a sum of ``m`` products,
    after a difference or with two norms), ``gamma`` times that in the exponent, which moves
    each ``K`` by that relative amount (plus a few ulp for ``exp`` and the product with
    ``gamma``); each weighted sum of ``n`` terms adds at most ``n u S``, and the intercept
    ``n u |b|`` more. So :math:`|\hat D - D|` and :math:`|\hat D_{svm} - D|` are each below
    :math:`B/2 = 32 u ((2(m+3) + 1) \gamma r^2 S + (2n + 8) S + (2n + 4) |b|)`, where the
    first-order terms above are inflated by a factor of 64 overall (``_SVM_BOUND_FACTOR``; the
    higher-order terms are negligible at these magnitudes: ``gamma r^2 u`` is below 1e-12 for
    unit vectors). Wherever :math:`|\hat D| > B`, :math:`D` and :math:`\hat D_{svm}` have the
    sign of :math:`\hat D`, hence so do both labels; every other row (a decision value within
    the bound of 0: a tie, a vector on the boundary) is given to ``clf.predict`` itself, row by
    row the same computation. ``S`` is computed in floating point too; the factor covers its
    relative error of ``n u``.

    More than two classes (libsvm's one-vs-one votes): ``clf.predict``, unchanged.
    """
    if len(clf.classes_) != 2 or clf.kernel != "rbf":
        return clf.predict(x)
    x = np.ascontiguousarray(x, dtype=np.float64)
    sv = np.asarray(clf.support_vectors_, dtype=np.float64)
    coef = np.asarray(clf.dual_coef_, dtype=np.float64)[0]
    intercept = float(clf.intercept_[0])
    gamma = float(clf._gamma)  # the gamma libsvm was given ("scale" or "auto" resolved at fit)
    sv_square = np.einsum("ij,ij->i", sv, sv)
    sv_norm = float(np.sqrt(sv_square.max())) if sv.size else 0.0
    n_sv, dim = sv.shape
    per_sum = (2 * (dim + 3) + 1) * gamma
    out = np.empty(x.shape[0], dtype=clf.classes_.dtype)
    for start in range(0, x.shape[0], _SVM_ROWS):
        block = x[start:start + _SVM_ROWS]
        square = np.einsum("ij,ij->i", block, block)
        kernel = block @ sv.T
        kernel *= -2.0
        kernel += square[:, None]
        kernel += sv_square[None, :]
        kernel *= -gamma
        np.exp(kernel, out=kernel)
        decision = kernel @ coef + intercept
        weight = kernel @ np.abs(coef)
        radius = (np.sqrt(square) + sv_norm) ** 2
        bound = (_SVM_BOUND_FACTOR * np.finfo(np.float64).epsneg
                 * ((per_sum * radius + 2 * n_sv + 8) * weight + (2 * n_sv + 4) * abs(intercept)))
        out[start:start + block.shape[0]] = np.where(decision > 0, clf.classes_[1], clf.classes_[0])
        unsure = np.flatnonzero(~(np.abs(decision) > bound))   # NaN too
        if unsure.size:
            out[start + unsure] = clf.predict(block[unsure])
    return out


#: Query rows whose ``k`` largest cosines are found together: their cosines and the mask of
#: the values kept (about 7 MB) stay in the cache between the passes over them.
_TOP_ROWS = 32

#: Rows of those whose bound and mask are computed together (about 1.5 MB of cosines): the
#: mask's pass then reads them from the cache the bound's pass just filled, where 32 rows'
#: (6 MB at 47,000 candidates) came back from memory (measured: 8 rows, 10% less time than 32
#: or 4 on the 3M x 300 candidates; 2 pays more in calls than it saves).
_SUB_ROWS = 8


def _lower_bounds(sims: np.ndarray, k: int) -> np.ndarray:
    """A lower bound of each row's ``k``-th largest value, close to it, from one pass over the row.

    The columns are split into ``G`` (about ``sqrt(n k)``, at least ``k``) groups, each group a
    strided set of columns (column ``c`` in group ``c mod G``: the maxima are elementwise
    maxima of runs of ``G`` contiguous columns; the columns past the last whole run join the
    first groups), and the bound is the ``k``-th largest of the groups' maxima. It cannot
    exceed the row's ``k``-th largest value: ``k`` groups have a maximum at or above it, which
    are ``k`` different values of the row. Because each of those is the best of its group,
    only a little more than ``k`` values of a row reach the bound (of 50,000 cosines, 100
    neighbours: about 110). The rows are read once, in runs of a few kB; earlier versions read
    half of each row for a looser bound (about ``2 k`` values kept), then had to read the whole
    row anyway to find them, at about the same cost for the pass and more work after it.
    """
    rows, n = sims.shape
    groups = min(n, max(k, int(np.sqrt(n * k))))
    runs = n // groups
    maxima = sims[:, :runs * groups].reshape(rows, runs, groups).max(axis=1)
    tail = n - runs * groups
    if tail:
        np.maximum(maxima[:, :tail], sims[:, runs * groups:], out=maxima[:, :tail])
    return np.partition(maxima, groups - k, axis=1)[:, groups - k]


def _true_positions(mask: np.ndarray) -> np.ndarray:
    """``np.flatnonzero(mask)`` of a contiguous 1-d boolean array in which few values are true.

    ``flatnonzero`` inspects every value one by one, whatever the count it finds. Here the
    mask is read as 8-byte words: which words are not zero is found the same way on an
    eighth as many values (recursively, down to a few thousand), and only those words' bytes
    are searched: byte ``j`` of word ``i`` (in memory order) is position ``8 i + j``. The same
    positions come out in the same (ascending) order.
    """
    whole = mask.size // 8 * 8
    words = mask[:whole].view(np.uint64)
    any_true = words != 0
    hits = _true_positions(any_true) if any_true.size > 4096 else np.flatnonzero(any_true)
    found = np.flatnonzero(words[hits].view(bool))     # (numpy's fast path is for 1-d booleans)
    inside = hits[found >> 3] * 8 + (found & 7)
    if whole == mask.size:
        return inside
    return np.concatenate([inside, whole + np.flatnonzero(mask[whole:])])


def _count_top(sims: np.ndarray, k: int, labels: np.ndarray, n_counted: int,
               kept: np.ndarray | None = None) -> np.ndarray:
    """``(rows, n_counted)``: how many of each row's ``k`` largest values lie in columns of label
    ``j`` (``labels[column]``), for the labels ``0 .. n_counted - 1``.

    Values tied with the ``k``-th largest share the places left at the boundary in
    proportion (each label counts ``above + (k - all above) * its tied / all tied``), so the
    count does not depend on the column order within a tie. Only the values at or above
    :func:`_lower_bounds` (every value of the row's top ``k`` and a few more) are taken out of
    ``sims`` (bound and mask ``_SUB_ROWS`` rows at a time, their positions by
    :func:`_true_positions`), packed one row per line, and the
    ``k``-th largest found by partitioning them. ``kept``, a boolean buffer of ``sims``'s shape
    or larger, is reused for the mask.
    """
    rows, n = sims.shape
    kept = np.empty(sims.shape, dtype=bool) if kept is None else kept[:rows]
    for first in range(0, rows, _SUB_ROWS):
        part = sims[first:first + _SUB_ROWS]
        np.greater_equal(part, _lower_bounds(part, k)[:, None], out=kept[first:first + _SUB_ROWS])
    flat = _true_positions(kept.reshape(-1))
    row = flat // n
    values = sims.ravel()[flat]
    label = labels[flat - row * n]
    per_row = np.bincount(row, minlength=rows)         # at least k in every row
    width = int(per_row.max())
    packed = np.full((rows, width), -np.inf, dtype=sims.dtype)
    packed[row, np.arange(flat.size) - (np.cumsum(per_row) - per_row)[row]] = values
    kth = np.partition(packed, width - k, axis=1)[:, width - k][row]
    above, equal = values > kth, values == kth
    n_above = np.bincount(row[above], minlength=rows)
    n_equal = np.bincount(row[equal], minlength=rows)
    count = np.empty((rows, n_counted), dtype=np.float64)
    for j in range(n_counted):
        mark = label == j
        # without a tie at the boundary (k - n_above) == n_equal and this is the plain count
        count[:, j] = (np.bincount(row[above & mark], minlength=rows)
                       + (k - n_above) * np.bincount(row[equal & mark], minlength=rows) / n_equal)
    return count


def neighbour_fractions(candidates: np.ndarray, queries: np.ndarray, marked: np.ndarray, k: int,
                        *, block_rows: int | None = None) -> np.ndarray:
    """Fraction of each query's ``k`` nearest candidates (cosine, itself excluded) that are marked.

    Parameters
    ----------
    candidates : ndarray of shape (n, d)
        Unit-length rows (float32).
    queries : ndarray of int
        Positions of the query words among the candidates.
    marked : ndarray of bool, shape (n,)
        Which candidates count (here: originally male).
    k : int
        Neighbours per query, at most ``n - 1``.
    block_rows : int, optional
        Query rows per block; default: a 64 MiB block of cosines, at most 1,024 rows.

    Notes
    -----
    :func:`neighbour_label_fractions` with the marked candidates as label 0.
    """
    labels = np.where(np.asarray(marked, dtype=bool), 0, 1)
    return neighbour_label_fractions(candidates, queries, labels, 1, k, block_rows=block_rows)[:, 0]


def neighbour_label_fractions(candidates: np.ndarray, queries: np.ndarray, labels: np.ndarray, n_counted: int,
                              k: int, *, block_rows: int | None = None) -> np.ndarray:
    """``(queries, n_counted)``: the fraction of each query's ``k`` nearest candidates (cosine,
    itself excluded) whose label (``labels``, ints) is ``j``, for ``j`` in ``0 .. n_counted - 1``.

    Notes
    -----
    One pass for all the labels: each block of cosines is one matrix product into a reused
    buffer, the query's own column is set to ``-inf``, and the ``k`` largest cosines of every
    ``_TOP_ROWS`` rows of it are found together (:func:`_count_top`: the values at or above a
    lower bound from group maxima, then a partition of those few); each label's count is read
    off them. The candidate columns are in label order (stably: for two labels, the marked
    ones first) as in earlier versions: BLAS rounds a product differently in different places
    of its output (where the threads split it, at the edges of its tiles), so that order, and
    the block size, keep every cosine, and so every result, bit for bit what it was. Candidates
    given in that order already (:func:`residual_bias` takes them so) are used as they are, a
    C-contiguous float32 matrix without a copy. Memory is about one ``(block_rows, n)`` float32
    buffer whatever the number of queries.
    """
    n = candidates.shape[0]
    if not 1 <= k < n:
        raise EmbdebiasError(f"residual bias: n_neighbours must be in [1, {n - 1}] for {n:,} candidates, got {k}")
    labels = np.asarray(labels, dtype=np.int64)
    order = np.argsort(labels, kind="stable")
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    in_order = bool(np.all(labels[:-1] <= labels[1:]))    # then order is the identity: no copy
    cand = np.ascontiguousarray(candidates if in_order else candidates[order], dtype=np.float32)
    column_labels = labels[order]
    queries = np.asarray(queries, dtype=np.int64)
    rows = block_rows_for(n, block_rows)
    buf = np.empty((min(rows, queries.size), n), dtype=np.float32)
    kept = np.empty((min(_TOP_ROWS, buf.shape[0]), n), dtype=bool)
    out = np.empty((queries.size, n_counted), dtype=np.float64)
    for start in range(0, queries.size, rows):
        q = queries[start:start + rows]
        sims = buf[:q.size]
        np.dot(candidates[q].astype(np.float32, copy=False), cand.T, out=sims)
        sims[np.arange(q.size), position[q]] = -np.inf
        for top in range(0, q.size, _TOP_ROWS):
            part = sims[top:top + _TOP_ROWS]
            out[start + top:start + top + part.shape[0]] = _count_top(part, k, column_labels, n_counted, kept) / k
    return out


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _check_sizes(n_candidates, n_cluster, n_classify, n_train, n_neighbours) -> None:
    for name, value in (("n_candidates", n_candidates), ("n_cluster", n_cluster), ("n_classify", n_classify),
                        ("n_train", n_train), ("n_neighbours", n_neighbours)):
        _positive_int(name, value)
    if n_train >= 2 * n_classify:
        raise EmbdebiasError(f"residual bias: n_train={n_train} must be below the {2 * n_classify:,} "
                             f"classification words (2 x n_classify)")


@dataclass
class _Plan:
    """The word sets of the protocol, chosen on the original embedding."""

    words: np.ndarray           # candidates (str)
    bias: np.ndarray            # their original bias, male positive
    tested_rows: np.ndarray     # their rows in the tested embedding, -1 if missing
    cluster: tuple              # (male positions, female positions) into words
    classify: tuple
    lookup: object              # of the direction words


def _kept_for(cache: dict | None, key: tuple, original, make):
    """``make()``, kept in ``cache`` under ``key`` for this very ``original`` object (another
    original under the same key replaces it); no cache: ``make()`` each time.

    What the protocol chooses on the original alone (the candidates, their bias or
    associations, the word sets) is the same for every tested column of an evaluation: made
    once, its arrays read-only, since each column's plan shares them."""
    if cache is None:
        return make()
    hit = cache.get(key)
    if hit is not None and hit[0] is original:
        return hit[1]
    made = make()
    for value in vars(made).values():
        for array in (value if isinstance(value, (tuple, list)) else (value,)):
            if isinstance(array, np.ndarray):
                array.flags.writeable = False
    cache[key] = (original, made)
    return made


def _plan(original, tested, *, cache=None, **params) -> _Plan:
    """The protocol's plan for ``tested``: the word sets chosen on ``original`` (kept in ``cache``,
    :func:`_kept_for`) and their rows in ``tested``."""
    chosen = _kept_for(cache, ("residual plan", repr(sorted(params.items()))), original,
                       lambda: _choose(original, **params))
    return replace(chosen, tested_rows=rows_by_word(original, tested, chosen.words.tolist(), chosen.tested_rows))


def _choose(original, *, n_candidates, n_cluster, n_classify, gender_specific, lists, direction_words,
            lowercase) -> _Plan:
    """The plan of ``original`` itself (its ``tested_rows`` are the candidates' rows in it)."""
    specific = wordlists.resolve_words(gender_specific, "gender_specific", lists)
    words, orig_rows = candidate_words(original, n_candidates, specific)
    need = 2 * max(n_cluster, n_classify)
    if words.size < need:
        raise EmbdebiasError(
            f"residual bias: only {words.size:,} candidate words (alphabetic, not gender-specific) among "
            f"the first {n_candidates:,} of {original.name}; the protocol needs at least {need:,} "
            f"(2 x max(n_cluster, n_classify))")
    direction, lk = male_direction(original, direction_words, lowercase)
    bias = np.empty(words.size, dtype=np.float64)
    direction32 = direction.astype(np.float32)
    for start in range(0, words.size, CHUNK_ROWS):
        bias[start:start + CHUNK_ROWS] = unit_block(original, orig_rows[start:start + CHUNK_ROWS]) @ direction32
    return _Plan(words, bias, orig_rows, extremes(bias, n_cluster), extremes(bias, n_classify), lk)


def _present(plan: _Plan, name: str, positions, max_missing: float, tested_name: str):
    """Positions (into the candidates) of a male/female word set found in the tested embedding."""
    male, female = positions
    both = np.concatenate([male, female])
    found = plan.tested_rows[both] >= 0
    missing = plan.words[both[~found]].tolist()
    _missing_check(name, both.size, missing, max_missing, tested_name)
    male, female = male[plan.tested_rows[male] >= 0], female[plan.tested_rows[female] >= 0]
    labels = np.concatenate([np.ones(male.size, dtype=np.int64), np.zeros(female.size, dtype=np.int64)])
    return male, female, labels, missing


def residual_bias(original, tested, *, random_state: int | None = 0, gender_specific=None,
                  lists: str = wordlists.DEFAULT_LISTS, n_candidates: int = 50_000, n_cluster: int = 500,
                  n_classify: int = 2_500, n_train: int = 1_000, n_neighbours: int = 100,
                  direction_words=None, max_missing: float = DEFAULT_MAX_MISSING,
                  lowercase: bool = True, block_rows: int | None = None, attribute="gender",
                  groups=None, svm_gamma: str = "scale", cache: dict | None = None) -> ResidualBiasResult:
    """Gonen & Goldberg's (2019) residual-bias tests of ``tested`` against ``original``.

    The protocol is stated in full in the module docstring
    (:mod:`embdebias.metrics.residual`): candidates are the first ``n_candidates``
    alphabetic, non-gender-specific words of ``original``; a word's bias is its
    cosine with ``unit(he) - unit(she)`` (normalized) in ``original``; the tests --
    2-means clustering of the ``n_cluster`` most male and most female words, an RBF
    SVM on the ``n_classify`` most male and most female, and the correlation of the
    bias with the male share of the ``n_neighbours`` nearest candidates -- use the
    vectors of ``tested``.

    Parameters
    ----------
    original : Embedding or gensim KeyedVectors
        The embedding before debiasing: it chooses the words and their bias.
    tested : Embedding or gensim KeyedVectors
        The embedding to audit (may be ``original``); matched by word.
    random_state : int or None, default 0
        Seed of k-means (``random_state``) and of the training split
        (``numpy.random.default_rng``).
    gender_specific : list of str or str, optional
        Words left out of the candidates: words, a bundled list name or a path.
        Default: the ``gender_specific`` list of ``lists`` (published: 1,441 words).
    lists : {"published", "curated"}, default "published"
    n_candidates, n_cluster, n_classify, n_train, n_neighbours : int
        Protocol sizes (defaults: Gonen & Goldberg's 50,000, 500, 2,500, 1,000, 100).
    direction_words : (str, str), optional
        The two words whose difference defines the bias (binary protocol); default: the
        attribute's ``direction_words``, second group's word first (gender: he, she).
    max_missing : float, default 0.2
        Largest fraction of the candidates, of the clustering words or of the
        classification words that may be missing from ``tested``.
    lowercase : bool, default True
        Lower-case fallback for the direction words only.
    block_rows : int, optional
        Query rows per block of the nearest-neighbour step (default: 64 MiB blocks).
    attribute : str, path or Attribute, default "gender"
        An attribute that names no ``direction_words`` (race, religion) runs the k-group
        protocol (module docstring) on its groups (the columns of its defining sets), leaving
        out its specific words; one that does (gender) the binary protocol with them. None:
        gender, deprecated.
    groups : dict, optional
        ``{group: words}``: the k-group protocol on these groups (instead of an attribute's);
        the words of ``gender_specific``, if given, are left out of the candidates.
    svm_gamma : {"scale", "auto"}, default "scale"
        The classification test's RBF ``gamma``: scikit-learn's default, or ``"auto"``
        as Gonen & Goldberg and the Double-Hard authors ran it (module docstring).
    cache : dict, optional
        A dict kept by the caller between calls that test several embeddings against the same
        ``original`` (:func:`~embdebias.evaluate.evaluate` passes one per evaluation): what is
        chosen on ``original`` alone -- the candidates, their bias (or associations), the word
        sets and the direction -- is computed on the first call and read from it on the next,
        keyed by the parameters and held for this very ``original`` object. Keep it no longer
        than ``original``'s vectors and the word lists stay unchanged. The results are the same
        with or without it.

    Returns
    -------
    ResidualBiasResult

    Raises
    ------
    MissingWordsError
        A direction word is not in ``original``, or ``tested`` lacks more than
        ``max_missing`` of a word set (the message says how many).
    EmbdebiasError
        Bad sizes, or too few candidates for them.
    """
    original, tested = as_emb(original), as_emb(tested)
    max_missing = check_max_missing(max_missing)
    svm_gamma = check_svm_gamma(svm_gamma)
    _check_sizes(n_candidates, n_cluster, n_classify, n_train, n_neighbours)
    specific = () if gender_specific is None else wordlists.resolve_words(gender_specific, "gender_specific", lists)
    from ..data.attributes import as_attribute

    attr = as_attribute(attribute, lists)
    if groups is None and not attr.direction_words:
        groups, specific = attribute_groups(attr, lists)
    if direction_words is None:  # the attribute's second-group word minus its first's (gender: he - she)
        direction_words = tuple(reversed(attr.direction_words))
    if groups is not None:
        return _residual_groups(original, tested, dict(groups), specific, random_state=random_state,
                                n_candidates=n_candidates, n_cluster=n_cluster, n_classify=n_classify,
                                n_train=n_train, n_neighbours=n_neighbours, max_missing=max_missing,
                                lowercase=lowercase, block_rows=block_rows, svm_gamma=svm_gamma, cache=cache)
    plan = _plan(original, tested, cache=cache, n_candidates=n_candidates, n_cluster=n_cluster,
                 n_classify=n_classify, gender_specific=gender_specific, lists=lists,
                 direction_words=tuple(direction_words), lowercase=lowercase)
    found = plan.tested_rows >= 0
    cand_missing = plan.words[~found].tolist()
    _missing_check("candidate", plan.words.size, cand_missing, max_missing, tested.name)
    c_male, c_female, c_labels, c_missing = _present(plan, "clustering", plan.cluster, max_missing, tested.name)
    s_male, s_female, s_labels, s_missing = _present(plan, "classification", plan.classify, max_missing,
                                                     tested.name)

    pool = np.flatnonzero(found)                       # candidates in the tested embedding
    # ... the male ones first (stably): the neighbour step's column order, so that its matrix is
    # the tested rows as taken, not a second copy of them
    pool = pool[np.argsort(plan.bias[pool] <= 0, kind="stable")]
    index = np.full(plan.words.size, -1, dtype=np.int64)
    index[pool] = np.arange(pool.size)
    vectors = unit_block(tested, plan.tested_rows[pool])

    cluster_x = vectors[index[np.concatenate([c_male, c_female])]].astype(np.float64)
    kmeans_acc = cluster_accuracy(cluster_x, c_labels, random_state)
    queries = index[np.concatenate([s_male, s_female])]
    svm_acc, n_test = classification_accuracy(vectors[queries].astype(np.float64), s_labels, n_train,
                                              random_state, svm_gamma)
    fractions = neighbour_fractions(vectors, queries, plan.bias[pool] > 0, int(n_neighbours),
                                    block_rows=block_rows)
    corr = _pearson(plan.bias[pool][queries], fractions)
    lk = plan.lookup
    return ResidualBiasResult(
        cluster_accuracy=kmeans_acc, classification_accuracy=svm_acc, neighbour_correlation=corr,
        cluster_words={"male": plan.words[c_male].tolist(), "female": plan.words[c_female].tolist()},
        classify_words={"male": plan.words[s_male].tolist(), "female": plan.words[s_female].tolist()},
        n_candidates=int(pool.size), n_train=int(n_train), n_test=n_test, n_neighbours=int(n_neighbours),
        missing={"candidates": cand_missing, "clustering": c_missing, "classification": s_missing},
        lowercased={"direction words": dict(lk.lowercased)} if lk.lowercased else {},
        direction_words=list(lk.words), random_state=random_state, svm_gamma=svm_gamma)


# -- k groups ------------------------------------------------------------------------------------


def group_directions(emb, groups: dict, lowercase: bool = True) -> np.ndarray:
    """``(k, d)`` unit rows ``c_j - mean(c)``: each group's centroid (mean unit vector of its words
    in ``emb``) minus the mean of the centroids."""
    centroids = []
    for name, words in groups.items():
        lk = lookup(emb, list(words), name=f"residual bias: words of group {name!r}", lowercase=lowercase)
        centroids.append(unit_vectors(emb, lk.rows).mean(axis=0))
    from ..subspace import centroid_directions

    return centroid_directions(centroids, f"residual bias: groups {', '.join(groups)}")


def most_associated(scores: np.ndarray, n: int) -> list[np.ndarray]:
    """For each group ``j``, the positions of the ``n`` words most associated with it among those
    whose largest association is ``j`` (ties: earlier first)."""
    best = np.argmax(scores, axis=1)
    out = []
    for j in range(scores.shape[1]):
        own = np.flatnonzero(best == j)
        out.append(own[np.argsort(-scores[own, j], kind="stable")][:n])
    return out


@dataclass
class _GroupPlan:
    """The word sets of the k-group protocol, chosen on the original embedding."""

    words: np.ndarray           # candidates (str)
    scores: np.ndarray          # (n, k) original associations
    tested_rows: np.ndarray
    cluster: list               # per group: positions into words
    classify: list


def _group_plan(original, tested, groups, specific, n_candidates, n_cluster, n_classify, lowercase,
                cache=None) -> _GroupPlan:
    """The k-group plan for ``tested``: the word sets chosen on ``original`` (kept in ``cache``,
    :func:`_kept_for`) and their rows in ``tested``."""
    key = ("residual group plan", repr([(g, tuple(ws)) for g, ws in groups.items()]), repr(sorted(specific)),
           n_candidates, n_cluster, n_classify, lowercase)
    chosen = _kept_for(cache, key, original, lambda: _choose_groups(original, groups, specific, n_candidates,
                                                                    n_cluster, n_classify, lowercase))
    return replace(chosen, tested_rows=rows_by_word(original, tested, chosen.words.tolist(), chosen.tested_rows))


def _choose_groups(original, groups, specific, n_candidates, n_cluster, n_classify, lowercase) -> _GroupPlan:
    """The k-group plan of ``original`` itself (its ``tested_rows`` are the candidates' rows in it)."""
    exclude = set(specific) | {w for ws in groups.values() for w in ws}
    words, orig_rows = candidate_words(original, n_candidates, exclude)
    directions = group_directions(original, groups, lowercase).astype(np.float32)
    scores = np.empty((words.size, len(groups)), dtype=np.float64)
    for start in range(0, words.size, CHUNK_ROWS):
        scores[start:start + CHUNK_ROWS] = unit_block(original, orig_rows[start:start + CHUNK_ROWS]) @ directions.T
    cluster, classify = most_associated(scores, n_cluster), most_associated(scores, n_classify)
    short = [g for g, pos in zip(groups, classify) if pos.size < min(n_cluster, n_classify)]
    if short:
        raise EmbdebiasError(f"residual bias: too few candidates are most associated with group(s) "
                             f"{', '.join(short)} among the first {n_candidates:,} words of {original.name}")
    return _GroupPlan(words, scores, orig_rows, cluster, classify)


def _present_groups(plan: _GroupPlan, name: str, positions, max_missing: float, tested_name: str):
    """``(positions found, labels, missing)`` of per-group word sets in the tested embedding."""
    both = np.concatenate(positions)
    missing = plan.words[both[plan.tested_rows[both] < 0]].tolist()
    _missing_check(name, both.size, missing, max_missing, tested_name)
    kept = [pos[plan.tested_rows[pos] >= 0] for pos in positions]
    labels = np.concatenate([np.full(pos.size, j, dtype=np.int64) for j, pos in enumerate(kept)])
    return kept, labels, missing


def group_neighbour_correlation(vectors, queries, scores, n_neighbours, block_rows=None) -> float:
    """Mean over the groups of Pearson r between a query's association with group ``j`` and the
    fraction of its neighbours most associated with ``j`` (the binary number for two groups)."""
    best = np.argmax(scores, axis=1)
    k = scores.shape[1]
    counted = neighbour_label_fractions(vectors, queries, best, k - 1, int(n_neighbours), block_rows=block_rows)
    fractions = [np.ascontiguousarray(counted[:, j]) for j in range(k - 1)]
    fractions.append(1.0 - np.sum(fractions, axis=0))     # every neighbour belongs to one group
    return float(np.mean([_pearson(scores[queries, j], fractions[j]) for j in range(k)]))


def _residual_groups(original, tested, groups: dict, specific, *, random_state, n_candidates, n_cluster, n_classify,
                     n_train, n_neighbours, max_missing, lowercase, block_rows,
                     svm_gamma: str = "scale", cache: dict | None = None) -> ResidualBiasResult:
    """The k-group protocol (module docstring) of :func:`residual_bias`."""
    if len(groups) < 2:
        raise EmbdebiasError(f"residual bias: needs at least two groups, got {len(groups)}")
    plan = _group_plan(original, tested, groups, specific, n_candidates, n_cluster, n_classify, lowercase, cache)
    found = plan.tested_rows >= 0
    cand_missing = plan.words[~found].tolist()
    _missing_check("candidate", plan.words.size, cand_missing, max_missing, tested.name)
    c_pos, c_labels, c_missing = _present_groups(plan, "clustering", plan.cluster, max_missing, tested.name)
    s_pos, s_labels, s_missing = _present_groups(plan, "classification", plan.classify, max_missing, tested.name)
    pool = np.flatnonzero(found)
    index = np.full(plan.words.size, -1, dtype=np.int64)
    index[pool] = np.arange(pool.size)
    vectors = unit_block(tested, plan.tested_rows[pool])
    kmeans_acc = cluster_accuracy(vectors[index[np.concatenate(c_pos)]].astype(np.float64), c_labels, random_state,
                                  n_clusters=len(groups))
    queries = index[np.concatenate(s_pos)]
    svm_acc, n_test = classification_accuracy(vectors[queries].astype(np.float64), s_labels, n_train, random_state,
                                              svm_gamma)
    corr = group_neighbour_correlation(vectors, queries, plan.scores[pool], n_neighbours, block_rows)
    names = list(groups)
    return ResidualBiasResult(
        cluster_accuracy=kmeans_acc, classification_accuracy=svm_acc, neighbour_correlation=corr,
        cluster_words={g: plan.words[pos].tolist() for g, pos in zip(names, c_pos)},
        classify_words={g: plan.words[pos].tolist() for g, pos in zip(names, s_pos)},
        n_candidates=int(pool.size), n_train=int(n_train), n_test=n_test, n_neighbours=int(n_neighbours),
        missing={"candidates": cand_missing, "clustering": c_missing, "classification": s_missing},
        direction_words=[], random_state=random_state, groups=names, svm_gamma=svm_gamma)


def attribute_groups(attribute, lists: str = wordlists.DEFAULT_LISTS) -> tuple[dict | None, tuple]:
    """``({group: defining words}, specific words)`` of an attribute (a name, path or Attribute):
    group ``j``'s words are the ``j``-th words of its defining sets; ``(None, ())`` for one that names
    its ``direction_words`` (gender), which keeps the binary protocol of Gonen & Goldberg (the
    direction of those words, he - she)."""
    from ..data.attributes import as_attribute

    attr = as_attribute(attribute, lists)
    if attr.direction_words:
        return None, ()
    return ({g: tuple(s[j] for s in attr.defining_sets) for j, g in enumerate(attr.groups)},
            tuple(attr.specific_words))


def _recoverable_text(r: dict) -> str:
    def f(v):
        return "n/a" if v is None else f"{v:.2f}"
    name = r.get("attribute", "gender")
    state = f"{name} still recoverable" if r["recoverable"] else f"{name} not recoverable beyond chance"
    return (f"{state} (clustering {f(r['cluster_accuracy'])}, SVM {f(r['classification_accuracy'])}, "
            f"neighbour r {f(r['neighbour_correlation'])})")


@register
class Residual(Metric):
    name, title = "residual", "Residual bias"
    scope = "any"  # measures any attribute (its groups, defining sets and neutral words)
    # "chance": 1/k of the report's k groups (chance_level), which the summary table shows
    headline = (("", "cluster_accuracy", "chance"), ("", "classification_accuracy", "chance"))
    function = "residual_bias"
    legend = ("Is the gender bias still recoverable? (Gonen & Goldberg 2019.) The 500 most male- and "
              "500 most female-biased words of the original (the most negative and most positive "
              "cosines with she - he, gender-specific words left out) are clustered with 2-means in "
              "each column: accuracy 0.5 means the bias is gone, 1.0 that it is fully recoverable. "
              "An RBF SVM trained on 1,000 of the "
              "5,000 most biased words predicts the other 4,000 (0.5 is fair). Neighbour correlation: "
              "Pearson r between a word's original bias and the male share of its 100 nearest "
              "neighbours in the column (0 is fair). Re-fitted direction: direct bias along the "
              "direction fitted again on each column's definitional pairs, and that direction's "
              "|cos| with the original one. Intervals here are analytic (Wilson for the accuracies, "
              "Fisher z for r), because a bootstrap would refit k-means and the SVM each time; "
              "they hold the words fixed.")
    statistics = {"cluster_accuracy": "clustering accuracy", "classification_accuracy": "SVM accuracy",
                  "neighbour_correlation": "neighbour correlation r",
                  "refit_direct_bias": "DirectBias (re-fitted direction)",
                  "direction_cosine": "abs. cosine, re-fitted vs original direction",
                  "refit_variance_ratio": "explained variance of the re-fitted direction",
                  N_SCORED: "words clustered"}
    options = {"neutral_words": Option(None, "words of the re-fitted direction's direct bias (a list, list "
                                             "name or file; default: the professions of lists)"),
               "svm_gamma": Option("scale", "the RBF SVM's gamma: 'scale' (scikit-learn's default) or 'auto' "
                                            "(Gonen & Goldberg's and Double-Hard's published setting)",
                                   check_svm_gamma)}

    def params(self, opts):
        return {"neutral_words": None if opts["neutral_words"] is None else str(opts["neutral_words"]),
                "svm_gamma": opts["svm_gamma"]}

    def units(self, ctx):

        return [ctx.attribute_or_default().name]

    def legend_for(self, ctx):

        attr = ctx.attribute_or_default()
        if attr.direction_words:  # the binary protocol ran
            return self.legend
        return (f"Is the {attr.name} bias still recoverable? Gonen & Goldberg's (2019) tests for {attr.k} groups "
                f"({', '.join(attr.groups)}): each group's 500 most associated words of the original (cosine with "
                f"the group's centroid minus the mean centroid, over the columns of the defining sets; specific "
                f"words left out) are clustered with {attr.k}-means in each column (accuracy under the best "
                f"matching of clusters to groups; chance is about 1/{attr.k}), a multi-class RBF SVM trained on "
                f"1,000 of the 2,500 most associated words of each group predicts the others, and the neighbour "
                f"correlation is averaged over the groups. Re-fitted direction: the attribute's subspace of "
                f"{attr.k - 1} components fitted again on each column. Intervals: Wilson and Fisher z.")

    def data(self, ctx):
        """The data line, and which RBF ``gamma`` the SVM accuracy used (the published one differs)."""
        gamma = ctx.opts(self.name)["svm_gamma"]
        return (f"{self._data_text(ctx)}; SVM: RBF, gamma={gamma!r}"
                + (" (scikit-learn's default; Gonen & Goldberg used 'auto')" if gamma == "scale" else
                   " (Gonen & Goldberg's setting)"))

    def _data_text(self, ctx):

        attr = ctx.attribute_or_default()
        if not attr.direction_words:
            return (f"candidates: the first 50,000 alphabetic words of '{ctx.reference_name}' minus the "
                    f"{len(attr.specific_words):,} specific words and the defining words of {attr.name!r}; "
                    f"groups: {', '.join(attr.groups)} (the columns of its {len(attr.defining_sets)} defining sets)")
        neutral = ctx.opts(self.name)["neutral_words"]
        ctx.neutral(neutral)  # a bad list fails before any scoring
        return (f"candidates: the first 50,000 alphabetic words of '{ctx.reference_name}' minus "
                f"{ctx.list_text(None, 'gender_specific', 'words')}; bias of a word: its cosine with "
                f"she - he in '{ctx.reference_name}' (negative: male); re-fitted direction measured on "
                f"{ctx.list_text(neutral, 'professions', 'words')}")

    def score(self, emb, unit, ctx):
        from ._resample import fisher_z_interval, wilson_interval
        from .refit import refit_direction_bias

        from ._query import neutral_word_set

        attr = ctx.attribute_or_default()
        r = residual_bias(ctx.reference, emb, random_state=ctx.random_state, lists=ctx.lists,
                          max_missing=ctx.max_missing, lowercase=ctx.lowercase, attribute=attr,
                          svm_gamma=ctx.opts(self.name)["svm_gamma"], cache=ctx.cache)
        neutral = ctx.opts(self.name)["neutral_words"]
        refit = None  # the re-fitted rows need neutral words: an attribute without any has no such rows
        if neutral is not None or attr.neutral_words:
            try:  # only the re-fitted rows use the neutral words: a short list leaves them alone empty
                refit = refit_direction_bias(emb, neutral_word_set(ctx, neutral),
                                             original=ctx.reference, lists=ctx.lists, max_missing=ctx.max_missing,
                                             lowercase=ctx.lowercase, attribute=attr)
            except EmbdebiasError as exc:
                warn(f"residual bias: the re-fitted direction's rows are not scored: {exc}")
        n_cluster = sum(len(v) for v in r.cluster_words.values())
        n_classify = sum(len(v) for v in r.classify_words.values())
        cells = {"cluster_accuracy": (r.cluster_accuracy, *wilson_interval(r.cluster_accuracy, n_cluster)),
                 "classification_accuracy": (r.classification_accuracy,
                                             *wilson_interval(r.classification_accuracy, r.n_test)),
                 "neighbour_correlation": (r.neighbour_correlation,
                                           *fisher_z_interval(r.neighbour_correlation, n_classify)),
                 **{key: None if refit is None else getattr(refit, attr)
                    for key, attr in (("refit_direct_bias", "direct_bias"), ("direction_cosine", "direction_cosine"),
                                      ("refit_variance_ratio", "refit_variance_ratio"))},
                 N_SCORED: n_cluster}
        return r, {unit: cells}, {}

    def verdict(self, report, embedding):
        """Whether the residual tests still recover the attribute in ``embedding``: clustering or SVM
        accuracy whose interval lies above chance (1/k of its k groups; 0.5 for gender). None without
        the residual tests."""
        unit = self._unit_in(report)
        cells = {s: report.cells.get((self.name, unit, s), {}).get(embedding)
                 for s in ("cluster_accuracy", "classification_accuracy", "neighbour_correlation")}
        acc = [cells[s] for s in ("cluster_accuracy", "classification_accuracy")]
        if all(c is None or c.value is None for c in acc):
            return None
        chance = chance_level(report)
        return {"recoverable": any(c is not None and c.ci_low is not None and c.ci_low > chance for c in acc),
                "attribute": unit, "chance": chance, **{s: None if c is None else c.value for s, c in cells.items()}}

    def _unit_in(self, report) -> str:
        """The residual row of ``report``: "gender", or the attribute it was run for."""
        units = [t for (m, t, s) in report.rows if m == self.name and s == "cluster_accuracy"]
        return "gender" if "gender" in units or not units else units[0]

    def verdict_text(self, entry):
        return _recoverable_text(entry)

    def recoverable_text(self, report, embedding) -> str | None:
        """The summary's words on ``embedding``: recoverable or not, with the accuracies."""
        entry = self.verdict(report, embedding)
        if entry is None:
            return None
        acc = ", ".join(f"{label} {entry[key]:.2f}" for key, label in (("cluster_accuracy", "clustering"),
                                                                        ("classification_accuracy", "SVM"))
                        if entry.get(key) is not None)
        return (f"'{embedding}': {'yes' if entry['recoverable'] else 'no, not beyond chance'} "
                f"({acc}; {entry['chance']:.2g} is chance)")
