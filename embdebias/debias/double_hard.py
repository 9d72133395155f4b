"""Double-Hard Debias (Wang, Lin, Rajani, McCann, Ordonez & Xiong, ACL 2020), full vocabulary with equalize."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.cluster import KMeans
from sklearn.utils._param_validation import Interval, StrOptions

from .._threads import one_thread
from ..data import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from ..errors import MissingWordsError
from ..subspace import BiasSubspace
from . import _labels
from ._base import Debiaser, place_rows
from ._params import INT, NUMBER, WORD_SETS, WORDS, Array
from ._two_means import two_means
from .hard import NEUTRALIZE_BYTES, HardDebias, equalize_forms, neutralize_rows
from .hsr import definition_words


#: Rows converted to float64 at a time by :func:`mean_and_components`: one reused buffer
#: of about 3 MB, which stays in cache between the copy and the product.
PCA_BLOCK_ROWS = 1 << 13


def mean_and_components(emb: Embedding, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """``(mean, principal directions as rows, by decreasing variance)`` of every row, in one chunked pass.

    The sums and the uncentred second moments, in float64, come from one matrix product
    per block: the block with a column of ones appended, times its transpose. Call it on
    one BLAS thread (:func:`~embdebias._threads.one_thread`, as :meth:`DoubleHardDebias.fit`
    does): on two, each of these small products waits for the other thread, and on a busy
    machine for a core (GloVe 6B 50d: 240 to 890 ms against 62 to 75 ms, measured under load).
    """
    d = emb.dim
    moments = np.zeros((d + 1, d + 1))
    buffer = np.ones((min(PCA_BLOCK_ROWS, max(len(emb), 1)), d + 1))
    for _, _, block in emb.iter_chunks(chunk_rows):
        for lo in range(0, len(block), len(buffer)):
            part = block[lo:lo + len(buffer)]
            b = buffer[:len(part)]
            b[:, :d] = part
            moments += b.T @ b
    n = moments[d, d]
    mean = moments[:d, d] / n
    cov = moments[:d, :d] / n - np.outer(mean, mean)
    lam, U = np.linalg.eigh(cov)
    return mean, U[:, ::-1].T.copy()


def most_biased_rows(emb: Embedding, n: int, excluded, *, limit: int = 50_000, male: str = "he",
                     female: str = "she") -> tuple[np.ndarray, np.ndarray]:
    """``(male rows, female rows)``: the ``n`` words of each side by ``cos(w, he) - cos(w, she)``.

    Among the first ``limit`` words, lower-case, shorter than 20 characters, letters
    (underscore phrases allowed), not in ``excluded`` (the authors' ``limit_vocab``).
    """
    rows = emb.words.rows([male, female])
    if (rows < 0).any():
        raise MissingWordsError(f"double-hard needs {male!r} and {female!r} in {emb.name}",
                                [w for w, r in zip((male, female), rows) if r < 0])
    he, she = emb.take(rows, np.float64)
    excluded = set(excluded)
    words = emb.words[:limit]
    keep = _labels.kept_words(words)
    # islower() first: a lower-case word skips building its lower() copy
    keep = np.array([i for i in keep if (words[i].islower() or words[i] == words[i].lower())
                     and words[i] not in excluded], dtype=np.int64)
    # the leading rows as one slice (a take of 45,000 scattered rows costs three times more)
    vecs = emb.take(slice(0, int(keep[-1]) + 1 if keep.size else 0), np.float64)[keep]
    cosines = vecs @ np.stack([he / np.linalg.norm(he), she / np.linalg.norm(she)], axis=1)
    cosines /= np.maximum(np.linalg.norm(vecs, axis=1), 1e-12)[:, None]
    top, bottom = stable_extremes(cosines[:, 0] - cosines[:, 1], n)
    return keep[top], keep[bottom]


def stable_extremes(values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The two ends of the stable argsort of ``values``, sorting only them.

    Parameters
    ----------
    values : ndarray (m,)
        Finite values.
    n : int
        How many of each end.

    Returns
    -------
    top, bottom : ndarray (min(n, m),) of int
        ``order[::-1][:n]`` and ``order[:n]`` for ``order = np.argsort(values,
        kind="stable")``: the values at least the n-th largest (or at most the n-th
        smallest), ties at the cut included, are a suffix (a prefix) of that order, so
        sorting them alone, stably, gives the same indices in the same order.
    """
    if 2 * n >= len(values):
        order = np.argsort(values, kind="stable")
        return order[::-1][:n], order[:n]
    low = np.flatnonzero(values <= np.partition(values, n - 1)[n - 1])
    high = np.flatnonzero(values >= np.partition(values, len(values) - n)[len(values) - n])
    low = low[np.argsort(values[low], kind="stable")][:n]
    high = high[np.argsort(values[high], kind="stable")][::-1][:n]
    return high, low


def search_map(u: np.ndarray | None, mean: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The linear part of the search's map of a word for one candidate.

    Parameters
    ----------
    u : ndarray (d,) or None
        The candidate principal direction (unit); None for the baseline (no removal).
    mean : ndarray (d,)
        The mean ``mu`` of every vector.
    a, b : ndarray (p, d)
        The raw vectors of the definitional pairs' two sides.

    Returns
    -------
    ndarray (d, d)
        ``M`` such that ``w M - mu M`` is ``w`` without ``u`` and ``mu`` (the notebook's
        shift, the projection taken on the uncentred ``w``), then without the gender
        direction re-fitted on the shifted pairs (:func:`pair_direction`).
    """
    d = len(mean)
    remove_u = np.eye(d) if u is None else np.eye(d) - np.outer(u, u)
    g = pair_direction(a @ remove_u - mean, b @ remove_u - mean)
    return remove_u @ (np.eye(d) - np.outer(g, g) / (g @ g))


def pair_direction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """First principal direction of the pair-centred vectors (the notebook's ``doPCA``, raw vectors)."""
    mu = (a + b) / 2
    _, _, vt = np.linalg.svd(np.vstack([a - mu, b - mu]), full_matrices=False)
    return vt[0]


#: How the search's 2-means runs: :func:`._two_means.two_means` (scikit-learn's algorithm
#: and random draws, every restart of every candidate stacked) or scikit-learn's ``KMeans``.
KMEANS = ("stacked", "sklearn")


def cluster_accuracy(vectors: np.ndarray, labels: np.ndarray, random_state: int, *,
                     kmeans: str = "stacked") -> float:
    """``max(acc, 1 - acc)`` of ``KMeans(n_clusters=2, n_init=10, random_state)`` against the labels.

    ``kmeans="stacked"`` runs :func:`~embdebias.debias._two_means.two_means` (the same
    labels to rounding), ``"sklearn"`` scikit-learn itself (also the fallback when a
    restart empties a cluster).
    """
    if kmeans == "stacked":
        pred, done = two_means(vectors, random_state)
        if done[0]:
            return _agreement(pred[0], labels)
    with one_thread():
        pred = KMeans(n_clusters=2, n_init=10, random_state=random_state).fit_predict(vectors)
    return _agreement(pred, labels)


def _agreement(pred: np.ndarray, labels: np.ndarray) -> float:
    acc = float(np.mean(pred == labels))
    return max(acc, 1 - acc)


class DoubleHardDebias(Debiaser):
    """Double-Hard Debias over the whole vocabulary, with equalize (Wang et al. 2020).

    1. The mean ``mu`` and principal directions ``u_1, u_2, ...`` of every (raw) vector.
    2. The ``n_words`` most male- and female-biased words (``cos(w, he) - cos(w, she)``
       among the first 50,000 lower-case words, minus the gender-specific and Zhao et
       al.'s definition words).
    3. For each candidate ``u_i`` (``n_candidates``): remove it (``w - (u_i . w) u_i -
       mu``, the projection taken on the uncentred ``w``, as in the authors' notebook
       and WEFE), re-fit the gender direction on the definitional pairs, drop it, and
       2-means-cluster the biased words; the candidate with the lowest clustering
       accuracy wins (:attr:`components_table_` lists every candidate).
    4. Every word: remove the winning component and ``mu``, then Hard Debias
       (:class:`~embdebias.debias.hard.HardDebias`: neutralize every non-gender-specific
       word along the gender subspace re-fitted on the shifted vectors, equalize the
       equalize pairs), one chunked pass.

    The authors' repository holds only the component search (steps 1-3), and WEFE's
    port rewrites only the ``2 n_words`` biased words and never equalizes; step 4 over
    the full vocabulary is the paper's description. Deliberate choices, tested in
    ``tests/test_debiasers_double_hard.py``:

    * the search re-fits the direction as the notebook does (first principal
      component of the pair-centred *raw* shifted vectors); the final step uses
      :class:`~embdebias.subspace.BiasSubspace` (pair-centred *unit* vectors), the
      toolkit's and Bolukbasi et al.'s Hard Debias;
    * the mean and principal directions come from one chunked pass (the covariance
      of all rows, exact), not ``IncrementalPCA`` of 10 components as in WEFE;
    * the 2-means runs with ``n_init=10`` and seed ``random_state`` (the notebook
      uses 1 in the search); it is scikit-learn's ``KMeans`` algorithm and random draws
      with the 210 restarts stacked (:mod:`embdebias.debias._two_means`, same labels up
      to rounding; ``kmeans="sklearn"`` runs ``KMeans`` itself).

    Parameters
    ----------
    n_words : int, default 1000
        Biased words per side for the search.
    n_candidates : int, default 20
        Principal directions tried (the notebook tries 20; WEFE 4).
    subspace : ignored but its pairs: the gender subspace is re-fitted on the shifted vectors.
    definitional, equalize, gender_specific, lists :
        As :class:`~embdebias.debias.hard.HardDebias`.
    random_state : int, default 1
    kmeans : {"stacked", "sklearn"}, default "stacked"
        How the search's 2-means runs: scikit-learn's ``KMeans`` restarts stacked into
        matrix products (:mod:`embdebias.debias._two_means`: the same algorithm and
        random draws, so the same labels up to rounding; the GloVe 6B 50d table is
        identical), or ``KMeans`` itself, one restart after the other.
    chunk_rows : int

    Attributes
    ----------
    mean_ : ndarray (d,)
    component_ : ndarray (d,)
        The removed frequency direction.
    component_index_ : int
        Its rank among the principal directions (0 = the first).
    components_table_ : list of dict
        ``{"component": i, "accuracy": a}`` for every candidate.
    baseline_accuracy_ : float
        The same clustering without removing a component (Hard Debias alone, search style).
    hard_ : HardDebias
        The Hard Debias fitted on the shifted vectors.
    n_features_in_ : int
    """

    _suffix = "double-hard"
    _transient = ("hard_", "components_table_")
    _params_schema = {"mean_": Array(("d",)), "component_": Array(("d",)), "basis_": Array((None, "d")),
                      "component_index_": INT, "baseline_accuracy_": NUMBER, "biased_words_": WORDS,
                      "gender_specific_": WORDS, "equalize_pairs_": WORD_SETS}
    _parameter_constraints = {
        "n_words": [Interval(Integral, 2, None, closed="left")],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "subspace": "no_validation",
        "definitional": "no_validation",
        "equalize": "no_validation",
        "gender_specific": "no_validation",
        "lists": [StrOptions(set(wordlists.LIST_SETS))],
        "random_state": [Interval(Integral, 0, 2**32 - 1, closed="both")],
        "kmeans": [StrOptions(set(KMEANS))],
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_words: int = 1000, n_candidates: int = 20, *, subspace=None, definitional=None,
                 equalize=None, gender_specific=None, lists: str = wordlists.DEFAULT_LISTS, random_state: int = 1,
                 kmeans: str = "stacked", chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.n_words = n_words
        self.n_candidates = n_candidates
        self.subspace = subspace
        self.definitional = definitional
        self.equalize = equalize
        self.gender_specific = gender_specific
        self.lists = lists
        self.random_state = random_state
        self.kmeans = kmeans
        self.chunk_rows = chunk_rows

    def _pairs(self):
        if self.definitional is None and isinstance(self.subspace, BiasSubspace):
            return self.subspace.pairs
        return self.definitional

    def fit(self, embedding, y=None) -> "DoubleHardDebias":
        """Search the frequency component on the biased words, then fit Hard Debias on the shifted vectors."""
        self._validate()
        emb = as_embedding(embedding)
        # every product here is small (d x d, or a few thousand rows): threads only add waits,
        # seconds of them on a busy machine (docs/user_guide/debiasers/double_hard.md)
        with one_thread():
            self._fit(emb)
        return self

    def _fit(self, emb: Embedding) -> None:
        mean, directions = mean_and_components(emb, int(self.chunk_rows))
        specific = wordlists.resolve_words(self.gender_specific, "gender_specific", self.lists)
        male, female = most_biased_rows(emb, int(self.n_words), set(specific) | set(definition_words()))
        pairs = BiasSubspace(self._pairs(), lists=self.lists).fit(emb).pairs_used_
        table, baseline = self._search(emb, mean, directions, male, female, pairs)
        best = min(table, key=lambda r: r["accuracy"])
        self.mean_, self.component_index_ = mean, int(best["component"])
        self.component_ = directions[self.component_index_]
        self.components_table_, self.baseline_accuracy_ = table, baseline
        self.biased_words_ = [emb.words[int(i)] for i in np.concatenate([male, female])]
        shifted = self._shifted_subset(emb, pairs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pairs missing from the subset were reported on the original
            self.hard_ = HardDebias(definitional=pairs, equalize=self.equalize, gender_specific=specific,
                                    lists=self.lists).fit(shifted)
        self.basis_ = self.hard_.subspace_.components_
        self.gender_specific_ = sorted(self.hard_.gender_specific_)
        self.equalize_pairs_ = [list(p) for p in self.hard_.equalize_pairs_]
        self.n_features_in_ = emb.dim

    def _search(self, emb, mean, directions, male, female, pairs):
        """``(table, baseline accuracy)``: the 2-means accuracy of the biased words after each candidate."""
        rows = np.concatenate([male, female, emb.words.rows([p[0] for p in pairs] + [p[1] for p in pairs])])
        words, a, b = np.split(emb.take(rows, np.float64), np.cumsum([len(male) + len(female), len(pairs)]))
        labels = np.r_[np.ones(len(male)), np.zeros(len(female))]
        candidates = [directions[i] for i in range(min(int(self.n_candidates), emb.dim))] + [None]
        maps = np.stack([search_map(u, mean, a, b) for u in candidates])
        seed = int(self.random_state)
        if self.kmeans == "stacked":
            pred, done = two_means(words, seed, maps=maps)
        else:
            pred, done = None, np.zeros(len(maps), dtype=bool)
        accuracy = [_agreement(pred[i], labels) if done[i]
                    else cluster_accuracy(words @ maps[i] - mean @ maps[i], labels, seed, kmeans="sklearn")
                    for i in range(len(maps))]
        table = [{"component": i, "accuracy": acc} for i, acc in enumerate(accuracy[:-1])]
        return table, accuracy[-1]

    def _shift(self, x: np.ndarray) -> np.ndarray:
        u = self.component_
        return x - np.outer(x @ u, u) - self.mean_

    def _shifted_subset(self, emb: Embedding, pairs) -> Embedding:
        """The shifted vectors of the words Hard Debias's fit and equalize read (definitional, equalize forms)."""
        equalize = wordlists.resolve_pairs(self.equalize, "equalize_pairs", self.lists)
        words = [w for p in pairs for w in p] + [w for p in equalize for f in equalize_forms(p) for w in f]
        words = list(dict.fromkeys(words))
        rows = emb.words.rows(words)
        present = [w for w, r in zip(words, rows) if r >= 0]
        vectors = self._shift(emb.take(rows[rows >= 0], np.float64)).astype(np.float32)
        return Embedding(present, vectors, name=f"{emb.name} (shifted)")

    def _prepare(self, emb: Embedding):
        u = np.asarray(self.component_, dtype=np.float32)
        mean = self.mean_.astype(np.float32)
        basis = np.asarray(self.basis_, dtype=np.float32)
        specific = np.zeros(len(emb), dtype=bool)
        rows = emb.words.rows(list(self.gender_specific_))
        specific[rows[rows >= 0]] = True
        fixed_rows, fixed = self._equalized(emb, specific, basis)

        step = max(NEUTRALIZE_BYTES // (4 * emb.dim), 1)

        def apply(rows, block, out):
            keep = specific[rows]
            # in cache-sized parts; x (I - u u^T) - mean as a rank-one update: 2d, not 2d^2,
            # multiply-adds a row, and a temporary of a part, not of the chunk
            for lo in range(0, len(block), step):
                part, dest = block[lo:lo + step], out[lo:lo + step]
                np.subtract(part, mean, out=dest)
                dest -= np.multiply.outer(part @ u, u)
                neutralize_rows(dest, dest, keep[lo:lo + step], basis)
            place_rows(out, rows, fixed_rows, fixed)

        return apply

    def _equalized(self, emb: Embedding, specific: np.ndarray, basis: np.ndarray):
        """``(rows, vectors)`` of the equalize pairs' final vectors in ``emb`` (rows sorted)."""
        pairs = [tuple(p) for p in self.equalize_pairs_]
        if not pairs:
            return np.zeros(0, np.int64), np.zeros((0, emb.dim), np.float32)
        words = list(dict.fromkeys(w for p in pairs for w in p))
        rows = emb.words.rows(words)
        if (rows < 0).any():
            raise MissingWordsError(f"DoubleHardDebias: equalize words missing from {emb.name}; "
                                    f"transform the embedding it was fitted on", [])
        shifted = Embedding(words, self._shift(emb.take(rows, np.float64)).astype(np.float32), name="equalize")
        hard = HardDebias()
        hard.subspace_ = BiasSubspace.from_components(np.asarray(self.basis_))
        hard.gender_specific_ = frozenset(self.gender_specific_)
        hard.equalize_pairs_ = pairs
        local_keep, set_rows = hard._rows(shifted)
        local_rows, vectors = hard._equalized_rows(shifted, basis, local_keep, set_rows)
        full = rows[local_rows]
        order = np.argsort(full)
        return full[order], vectors[order]

    def run_info(self, embedding: Embedding) -> dict:
        info = {"component": self.component_index_, "clustering_without_removal": self.baseline_accuracy_}
        table = getattr(self, "components_table_", None)  # transient: parameters loaded from a file lack it
        if table:
            info["clustering_accuracy"] = min(r["accuracy"] for r in table)
        return info
