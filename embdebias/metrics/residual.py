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
       candidates; ``sklearn.svm.SVC(kernel="rbf")`` with scikit-learn's defaults is
       trained on the first ``n_train`` (1,000) words of
       ``numpy.random.default_rng(seed).permutation`` of them and its accuracy is
       reported on the others, vectors from the tested embedding (unit-normalized).
    5. **Bias by neighbours.** For those ``2 * n_classify`` words, the
       ``n_neighbours`` (100) nearest candidates by cosine in the tested embedding,
       the word itself excluded; reported is the Pearson correlation between a word's
       original bias and the fraction of its neighbours whose original bias is male
       (``> 0``).  Computed by blocked matrix products: a block of query rows against
       the candidate matrix at a time (memory bounded by the block, not by the number
       of candidates squared), and the ``n_neighbours``-th largest cosine of each row
       found by a partition of the cosines above a sampled lower bound (exactly
       that value, for a fraction of the work); neighbours tied with it at the boundary count
       in proportion (the expectation over every way of breaking the tie), so the
       result never depends on the order of rows.

    Everything is matched **by word**, never by row position: the word sets are
    chosen on the original alone (so every tested embedding is scored on the same
    words), and a word missing from the tested embedding is left out of every step
    and listed in ``missing``.  If more than ``max_missing`` (default 20%) of the
    candidates, of the clustering words or of the classification words are missing,
    :class:`~embdebias.errors.MissingWordsError` says how many.  The tested
    embedding may be the original itself, and may have another dimension.
    Cosines are computed in float32, the precision the vectors are stored in.

:func:`refit_direction_bias`
    Direct bias and projections with the gender direction fitted again in the
    tested embedding's own space, next to how far that direction is from the
    original one.

:func:`indirect_bias`
    Bolukbasi et al.'s indirect bias :math:`\beta(w, v)` over many pairs at once.

:func:`gender_analogies`
    Bolukbasi et al.'s generated ``she : he :: x : y`` analogies, by blocked
    matrix products.

References
----------
Gonen, H. & Goldberg, Y. (2019). Lipstick on a pig: debiasing methods cover up
systematic gender biases in word embeddings but do not remove them. NAACL.

Bolukbasi, T., Chang, K.-W., Zou, J., Saligrama, V. & Kalai, A. (2016). Man is to
computer programmer as woman is to homemaker? Debiasing word embeddings. NeurIPS.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import wordlists
from .._rows import row_norms, unit_rows
from .._threads import one_thread
from ..errors import EmbdebiasError, MissingWordsError
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, check_max_missing, lookup, unit_vectors

#: Bytes of one block of cosines (float32) in the blocked nearest-neighbour passes.
BLOCK_BYTES = 64 << 20
#: Most query rows in one block, whatever the budget.
MAX_BLOCK_ROWS = 1024
#: Rows read at a time when a pass goes over many rows of an embedding.
_CHUNK_ROWS = 1 << 14


def block_rows_for(n_columns: int, block_rows: int | None = None) -> int:
    """Rows per block so that a ``(rows, n_columns)`` float32 block fits :data:`BLOCK_BYTES`."""
    if block_rows is not None:
        if int(block_rows) < 1:
            raise EmbdebiasError(f"block_rows must be >= 1, got {block_rows}")
        return int(block_rows)
    return int(max(1, min(MAX_BLOCK_ROWS, BLOCK_BYTES // (4 * max(int(n_columns), 1)))))


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
        The (male, female) pair whose difference defines a word's bias.
    random_state : int or None
        The seed of k-means and of the training split.
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
    head = vocab[:int(reference_rows.max()) + 1] if reference_rows.size else []
    pairs = zip(words, reference_rows.tolist(), strict=True)
    same = np.fromiter((r < len(head) and head[r] == w for w, r in pairs), dtype=bool, count=len(words))
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


def cluster_accuracy(vectors: np.ndarray, labels: np.ndarray, random_state) -> float:
    """``max(a, 1 - a)``, ``a`` the agreement of 2-means clusters with ``labels`` (0/1)."""
    from sklearn.cluster import KMeans

    with one_thread():
        km = KMeans(n_clusters=2, n_init=10, random_state=random_state).fit(vectors)
    agreement = float(np.mean(km.labels_ == labels))
    return max(agreement, 1.0 - agreement)


def classification_accuracy(vectors: np.ndarray, labels: np.ndarray, n_train: int,
                            random_state) -> tuple[float, int]:
    """Accuracy of an RBF SVM trained on the first ``n_train`` of a seeded permutation."""
    from sklearn.svm import SVC

    perm = np.random.default_rng(random_state).permutation(len(labels))
    train, test = perm[:n_train], perm[n_train:]
    if test.size == 0:
        raise EmbdebiasError(f"residual bias: n_train={n_train} leaves no word to test "
                             f"({len(labels)} classification words)")
    if np.unique(labels[train]).size < 2:
        raise EmbdebiasError("residual bias: the training split holds only one gender; raise n_train")
    clf = SVC(kernel="rbf").fit(vectors[train], labels[train])
    return float(np.mean(clf.predict(vectors[test]) == labels[test])), int(test.size)


def _kth_largest(sims: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(kth, n_at_least)``: each row's ``k``-th largest value and how many values reach it.

    Found without partitioning whole rows: the ``k``-th largest of every ``stride``-th
    column is a lower bound (a subset's ``k``-th largest cannot exceed the row's), so
    every value of the row's top ``k`` is at or above it; only those values, about
    ``k * stride`` per row, are packed into a small array (padded with -inf) and
    partitioned. The result is exactly the row's ``k``-th largest.
    """
    rows, n = sims.shape
    stride = max(1, int(np.sqrt(n / k)))        # balances the sample's and the packed partition
    sample = sims[:, ::stride]
    if sample.shape[1] <= k:
        sample, stride = sims, 1
    m = sample.shape[1]
    bound = np.partition(sample, m - k, axis=1)[:, m - k]
    flat = np.flatnonzero(sims >= bound[:, None])
    row_of = flat // n
    per_row = np.bincount(row_of, minlength=rows)
    width = int(per_row.max())
    packed = np.full((rows, width), -np.inf, dtype=sims.dtype)
    packed[row_of, np.arange(flat.size) - np.repeat(np.cumsum(per_row) - per_row, per_row)] = sims.ravel()[flat]
    kth = np.partition(packed, width - k, axis=1)[:, width - k]
    return kth, np.count_nonzero(packed >= kth[:, None], axis=1)


def _count_top(sims: np.ndarray, k: int, n_marked: int) -> np.ndarray:
    """How many of each row's ``k`` largest values lie in its first ``n_marked`` columns.

    Values tied with the ``k``-th largest share the places left at the boundary in
    proportion, so the count does not depend on the column order within a tie.
    """
    kth, n_at_least = _kth_largest(sims, k)
    kth = kth[:, None]
    count = np.count_nonzero(sims[:, :n_marked] >= kth, axis=1).astype(np.float64)
    # A tie crosses the boundary iff more than k values reach the k-th largest.
    tied = np.flatnonzero(n_at_least > k)
    if tied.size:
        rows, edge = sims[tied], kth[tied]
        above, equal = (rows > edge).sum(axis=1), (rows == edge).sum(axis=1)
        m_above = (rows[:, :n_marked] > edge).sum(axis=1)
        m_equal = (rows[:, :n_marked] == edge).sum(axis=1)
        count[tied] = m_above + (k - above) * m_equal / equal
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
    The candidate columns are reordered so that the marked ones come first, each
    block of cosines is one matrix product into a reused buffer, the query's own
    column is set to ``-inf``, and the ``k``-th largest cosine of every row is found
    by partitioning only the values above a lower bound taken from a sample of the
    columns (see :func:`_kth_largest`); memory is about one ``(block_rows, n)``
    float32 buffer whatever the number of queries.
    """
    n = candidates.shape[0]
    if not 1 <= k < n:
        raise EmbdebiasError(f"residual bias: n_neighbours must be in [1, {n - 1}] for {n:,} candidates, got {k}")
    order = np.concatenate([np.flatnonzero(marked), np.flatnonzero(~marked)])
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    cand = np.ascontiguousarray(candidates[order], dtype=np.float32)
    n_marked = int(marked.sum())
    queries = np.asarray(queries, dtype=np.int64)
    rows = block_rows_for(n, block_rows)
    buf = np.empty((min(rows, queries.size), n), dtype=np.float32)
    out = np.empty(queries.size, dtype=np.float64)
    for start in range(0, queries.size, rows):
        q = queries[start:start + rows]
        sims = buf[:q.size]
        np.dot(candidates[q].astype(np.float32, copy=False), cand.T, out=sims)
        sims[np.arange(q.size), position[q]] = -np.inf
        out[start:start + q.size] = _count_top(sims, k, n_marked) / k
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


def _plan(original, tested, *, n_candidates, n_cluster, n_classify, gender_specific, lists,
          direction_words, lowercase) -> _Plan:
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
    for start in range(0, words.size, _CHUNK_ROWS):
        bias[start:start + _CHUNK_ROWS] = unit_block(original, orig_rows[start:start + _CHUNK_ROWS]) @ direction32
    tested_rows = rows_by_word(original, tested, words.tolist(), orig_rows)
    return _Plan(words, bias, tested_rows, extremes(bias, n_cluster), extremes(bias, n_classify), lk)


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
                  direction_words=("he", "she"), max_missing: float = DEFAULT_MAX_MISSING,
                  lowercase: bool = True, block_rows: int | None = None) -> ResidualBiasResult:
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
    direction_words : (str, str), default ("he", "she")
        The male and the female word whose difference defines the bias.
    max_missing : float, default 0.2
        Largest fraction of the candidates, of the clustering words or of the
        classification words that may be missing from ``tested``.
    lowercase : bool, default True
        Lower-case fallback for the direction words only.
    block_rows : int, optional
        Query rows per block of the nearest-neighbour step (default: 64 MiB blocks).

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
    _check_sizes(n_candidates, n_cluster, n_classify, n_train, n_neighbours)
    plan = _plan(original, tested, n_candidates=n_candidates, n_cluster=n_cluster, n_classify=n_classify,
                 gender_specific=gender_specific, lists=lists, direction_words=direction_words,
                 lowercase=lowercase)
    found = plan.tested_rows >= 0
    cand_missing = plan.words[~found].tolist()
    _missing_check("candidate", plan.words.size, cand_missing, max_missing, tested.name)
    c_male, c_female, c_labels, c_missing = _present(plan, "clustering", plan.cluster, max_missing, tested.name)
    s_male, s_female, s_labels, s_missing = _present(plan, "classification", plan.classify, max_missing,
                                                     tested.name)

    pool = np.flatnonzero(found)                       # candidates in the tested embedding
    index = np.full(plan.words.size, -1, dtype=np.int64)
    index[pool] = np.arange(pool.size)
    vectors = unit_block(tested, plan.tested_rows[pool])

    cluster_x = vectors[index[np.concatenate([c_male, c_female])]].astype(np.float64)
    kmeans_acc = cluster_accuracy(cluster_x, c_labels, random_state)
    queries = index[np.concatenate([s_male, s_female])]
    svm_acc, n_test = classification_accuracy(vectors[queries].astype(np.float64), s_labels, n_train,
                                              random_state)
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
        direction_words=list(lk.words), random_state=random_state)


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


def refit_direction_bias(tested, words=None, *, original=None, lists: str = wordlists.DEFAULT_LISTS,
                         max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True) -> RefitDirectionResult:
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

    Returns
    -------
    RefitDirectionResult
    """
    from ..subspace import BiasSubspace
    from .projection import direct_bias, gender_direction, projections

    tested = as_emb(tested)
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
    for start in range(0, left.size, _CHUNK_ROWS):
        a, b = left[start:start + _CHUNK_ROWS], right[start:start + _CHUNK_ROWS]
        out[start:start + a.size] = np.einsum("ij,ij->i", x[a], x[b])
    return out


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
    >>> indirect_bias(emb, [("softball", "receptionist"), ("football", "receptionist")])  # doctest: +SKIP
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
        pairs=[(lk.words[a], lk.words[b]) for a, b in zip(left.tolist(), right.tolist(), strict=True)],
        beta=beta.tolist(), similarity=sim.tolist(), similarity_without_gender=sim_perp.tolist(),
        mean_beta=float(np.mean(beta[defined])) if defined.any() else float("nan"),
        n_undefined=int((~defined).sum()), missing={"words": list(lk.missing)},
        lowercased={"words": dict(lk.lowercased)} if lk.lowercased else {},
        direction="given subspace" if subspace is not None else "BiasSubspace fitted on this embedding")


# -- generated analogies ------------------------------------------------------------------------

#: Squared distances below this (64 float32 epsilons) are duplicates at float32 precision.
_DUPLICATE_D2 = 64 * float(np.finfo(np.float32).eps)


def _merge_best(best_s, best_y, keys, scores, partners) -> None:
    """Fold ``(key, score, partner)`` candidates into the running best of every key, in place.

    A key keeps the highest score; among equal scores, the lowest partner index. The
    result does not depend on the order in which candidates arrive.
    """
    if keys.size == 0:
        return
    top = np.full(best_s.size, -np.inf, dtype=best_s.dtype)
    np.maximum.at(top, keys, scores)
    hit = scores == top[keys]
    partner = np.full(best_y.size, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(partner, keys[hit], partners[hit])
    better = (top > best_s) | ((top == best_s) & (partner < best_y))
    best_s[better] = top[better]
    best_y[better] = partner[better]


def _pairs_in_block(sims, mask, start, p, min_cos):
    """Pairs ``(x, y)``, ``x < y``, of a block of rows ``start:`` against columns ``start:``
    within ``delta`` (``cos >= min_cos``) and not duplicates: ``(x, y, score of x -> y)``."""
    np.greater_equal(sims, min_cos, out=mask)
    flat = np.flatnonzero(mask)                      # faster than a 2-d nonzero
    r, c = np.divmod(flat, sims.shape[1])
    d2 = 2.0 - 2.0 * sims.ravel()[flat]
    ok = (c > r) & (d2 > _DUPLICATE_D2)              # upper triangle: each pair once
    x, y = r[ok] + start, c[ok] + start
    return x, y, (p[x] - p[y]) / np.sqrt(d2[ok])


def gender_analogies(embedding, *, seed_pair=("she", "he"), delta: float = 1.0, n: int = 50,
                     n_candidates: int = 50_000, lowercase: bool = True,
                     block_rows: int | None = None) -> list[tuple[str, str, float]]:
    r"""Bolukbasi et al.'s (2016, Section 4 and Appendix) generated analogies ``a : b :: x : y``.

    With the seed pair ``(a, b)`` (default ``("she", "he")``) and the unit direction
    :math:`d = (a - b) / \|a - b\|` of the unit-normalized seed vectors, a pair of
    candidate words ``(x, y)`` with :math:`\|x - y\| \le \delta` (on unit vectors) is
    scored :math:`\cos(d, x - y)`.  Every candidate ``x`` is paired with its best
    ``y`` (the ``y`` within :math:`\delta` with the highest score), and the ``n``
    best-scoring pairs are returned, best first.

    Candidates are the first ``n_candidates`` words in file order (the most frequent
    for the usual files) without the two seed words (``she : he :: she : he`` is no
    finding) and without zero vectors.  ``y`` may repeat across pairs (``x`` does not).

    Computed by blocked matrix products: a block of candidate rows against all
    candidates at a time (memory bounded by the block), the pairs within
    :math:`\delta` picked out of each block of cosines and the best ``y`` of each row
    found by a grouped maximum; since :math:`\cos(d, y - x) = -\cos(d, x - y)`, only
    the upper triangle of the cosine matrix is computed.  Ties go to the ``y`` that
    comes first in the file, whatever the block size.  Cosines are float32; pairs closer than float32
    rounding can resolve (squared distance below 64 float32 epsilons, about
    :math:`\|x - y\| < 0.003`) are treated as duplicates and skipped, and the
    returned scores are recomputed in float64.

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    seed_pair : (str, str), default ("she", "he")
    delta : float, default 1.0
        Largest distance ``|x - y|`` of unit vectors (1.0 means cosine >= 0.5).
    n : int, default 50
        Pairs returned.
    n_candidates : int, default 50,000
    lowercase : bool, default True
        Lower-case fallback for the seed words.
    block_rows : int, optional
        Candidate rows per block (default: 64 MiB blocks of cosines).

    Returns
    -------
    list of (str, str, float)
        ``(x, y, cos(d, x - y))``, best first.
    """
    emb = as_emb(embedding)
    if not 0 < delta:
        raise EmbdebiasError(f"gender analogies: delta must be > 0, got {delta}")
    n, n_candidates = int(n), int(n_candidates)
    if n < 1 or n_candidates < 2:
        raise EmbdebiasError(f"gender analogies: need n >= 1 and n_candidates >= 2, got {n} and {n_candidates}")
    lk = lookup(emb, list(seed_pair), name="gender analogies: seed pair", lowercase=lowercase,
                max_missing=0.0, min_size=2)
    a, b = unit_vectors(emb, lk.rows)
    d = unit_rows(a - b)
    limit = min(n_candidates, len(emb))
    vectors = unit_rows(emb.take(slice(0, limit)))
    keep = row_norms(vectors) > 0
    keep[lk.rows[lk.rows < limit]] = False
    rows = np.flatnonzero(keep)
    vectors = np.ascontiguousarray(vectors[rows])
    p = vectors @ d.astype(np.float32)
    min_cos = 1.0 - delta * delta / 2.0
    m = rows.size
    best_s = np.full(m, -np.inf, dtype=np.float32)
    best_y = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    first = block_rows_for(m, block_rows)
    buf = np.empty(first * m, dtype=np.float32)
    mask = np.empty(first * m, dtype=bool)
    start = 0
    while start < m:
        # Rows start:stop against columns start: (the upper triangle; score(y, x) = -score(x, y)).
        width = m - start
        stop = min(m, start + min(block_rows_for(width, block_rows), buf.size // width))
        shape = (stop - start, width)
        sims = buf[:shape[0] * width].reshape(shape)
        np.dot(vectors[start:stop], vectors[start:].T, out=sims)
        x, y, score = _pairs_in_block(sims, mask[:sims.size].reshape(shape), start, p, min_cos)
        _merge_best(best_s, best_y, x, score, y)
        _merge_best(best_s, best_y, y, -score, x)
        start = stop
    return _top_pairs(emb, rows, best_y, best_s, d, n)


def _top_pairs(emb, rows, best_y, best_s, d, n):
    """The ``n`` best ``(x, y, score)``, scores recomputed in float64 and re-sorted."""
    order = np.argsort(-best_s, kind="stable")[:n]
    order = order[np.isfinite(best_s[order])]   # an x without any y within delta
    x_rows, y_rows = rows[order], rows[best_y[order]]
    diff = unit_vectors(emb, x_rows) - unit_vectors(emb, y_rows)
    scores = (diff @ d) / row_norms(diff)
    words = emb.words
    out = [(words[int(x)], words[int(y)], float(s)) for x, y, s in zip(x_rows, y_rows, scores)]
    return sorted(out, key=lambda t: -t[2])
