"""Repulsion-Attraction-Neutralization debiasing, RAN-Debias (Kumar, Bhotia, Kumar & Chakraborty, TACL 2020)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._rows import indirect_bias, top_neighbours
from ..data import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from ..errors import EmbdebiasError
from ..subspace import BiasSubspace
from ._base import Debiaser, place_rows, unit_rows
from ._params import NUMBERS, WORDS, Array
from .double_hard import most_biased_rows
from .hsr import check_missing, definition_words

#: RAN's gender direction: Bolukbasi et al.'s definitional pairs without mary/john (``utils.get_g``).
NO_NAMES = {"mary", "john"}
#: Debias words whose neighbours one pass over the vocabulary finds (one GEMM of that many queries).
BATCH_WORDS = 1024
#: Candidate rows per block of the neighbour search: its similarities are BATCH_WORDS x this
#: float32 (64 MiB; a 65,536-row chunk's 256 MiB dominated the fit's memory at 300 dimensions,
#: for no gain in speed: 600,000 x 300, 32.1 against 33.2 s, peak RSS 1.16 against 1.57 GiB).
SEARCH_ROWS = 1 << 14
#: Debias words optimized at once: their neighbours' vectors, (words, n_neighbours, d) float64, and the
#: two or three temporaries of that size the indirect bias makes, are the fit's largest arrays (at 300
#: dimensions, 256 words: 123 MB each; 1,024 words: 491 MB each). The block sizes change the float32
#: similarities in their last bit only, which can swap near-tied neighbours.
OPTIMIZE_WORDS = 256


def unit_chunks(emb: Embedding, chunk_rows: int):
    """``(start, unit rows)`` of every chunk of ``emb`` (float32)."""
    for start, _, block in emb.iter_chunks(chunk_rows):
        yield start, unit_rows(np.array(block, dtype=np.float32))


def repulsion_sets(words: np.ndarray, neighbours: np.ndarray, g: np.ndarray, theta: float, size: int):
    """Mask (m, k) of the first ``size`` neighbours of each word whose indirect bias is at least ``theta``."""
    beta = indirect_bias(words, neighbours, g)
    hit = beta >= theta
    return hit & (np.cumsum(hit, axis=1) <= size)


def ran_gradient(W, originals, neighbours, mask, g, weights):
    """``(J, dJ/dW)`` of RAN's objective for every row of ``W`` (m, d), summed over rows."""
    l1, l2, l3 = weights
    norm = np.linalg.norm(W, axis=1, keepdims=True)
    # stacked matrix-vector products (BLAS), several times faster than einsum's loops here
    cos_n = np.matmul(neighbours, W[:, :, None])[:, :, 0] / norm
    count = np.maximum(mask.sum(axis=1, keepdims=True), 1)
    sign_n = np.sign(cos_n) * mask / count
    weighted = np.matmul(sign_n[:, None, :], neighbours)[:, 0, :]
    grad_r = (weighted - (sign_n * cos_n).sum(1, keepdims=True) * W / norm) / norm
    cos_a = np.einsum("md,md->m", W, originals)[:, None] / norm
    grad_a = -0.5 * (originals - cos_a * W / norm) / norm
    proj = W @ g
    grad_n = np.sign(proj)[:, None] * g
    J = (l1 * (np.abs(cos_n) * mask / count).sum(1) + l2 * (1 - cos_a[:, 0]) / 2 + l3 * np.abs(proj)).sum()
    return J, l1 * grad_r + l2 * grad_a + l3 * grad_n


def adam(W0, gradient, *, lr: float, steps: int, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
    """Adam (PyTorch's defaults) on every row at once; returns the final rows."""
    W, m, v = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    for t in range(1, steps + 1):
        _, grad = gradient(W)
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        W -= lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return W


class RANDebias(Debiaser):
    """RAN-Debias (Kumar et al. 2020), every word of its debias set optimized at once.

    For each word ``w`` of the debias set, its repulsion set ``S`` holds its first (at
    most ``n_repulsion`` = 100) neighbours, among its ``n_neighbours`` = 200 nearest by
    dot product of unit vectors, whose indirect bias ``beta(w, n)`` (Bolukbasi et al.)
    is at least ``theta`` = 0.05. Starting from ``w``, Adam (lr 0.01, 300 epochs) minimizes
    ``lambda1 mean_S |cos(w_d, n)| + lambda2 |cos(w_d, w) - 1| / 2 + lambda3 |w_d . g|``;
    the word becomes ``unit(w_d)``. Every other word is only unit-normalized. The gender
    direction ``g`` is the first principal component of Bolukbasi et al.'s definitional
    pairs without mary/john (the authors' ``get_g``).

    The authors optimize one word at a time; here all words of a batch are one array
    (the objective is a sum of independent per-word terms, so the optimum is the same),
    and the gradients are written out instead of autograd.

    Deliberate differences, tested in ``tests/test_debiasers_ran.py``:

    * **weights**: the paper's and ``config.ini``'s ``lambda = (1/8, 6/8, 1/8)``. The
      authors' ``ran_objective`` computes ``w1 R + w2 A + w2 N`` (lambda2 on the
      neutralization term, lambda3 unused), which reads as a typo; the paper is followed;
    * **debias set**: the paper's set (from a knowledge-base classifier, shared only as
      a pickle) is not available; the default is the ``n_words`` most male- and
      female-biased words by ``cos(w, he) - cos(w, she)`` among the first 50,000
      lower-case words minus the gender-specific and Zhao et al.'s definition words
      (Double-Hard's selection); ``debias_words`` takes any list.

    Parameters
    ----------
    debias_words : list of str or str, optional
    n_words : int, default 1000
        Words per side of the default debias set.
    weights : tuple of 3 floats, default (1/8, 6/8, 1/8)
    theta : float, default 0.05
    n_neighbours : int, default 200
    n_repulsion : int, default 100
    learning_rate : float, default 0.01
    n_epochs : int, default 300
    subspace, gender_specific, lists : the run's interface; ``gender_specific`` is excluded from the default set.
    max_missing : float, default 0.5
        Largest share of ``debias_words`` that may be out of the vocabulary.
    chunk_rows : int

    Attributes
    ----------
    direction_ : ndarray (d,)
    debias_words_ : list of str
    vectors_ : ndarray (m, d)
        Their debiased unit vectors.
    repulsion_sizes_ : ndarray (m,)
        Size of every word's repulsion set.
    objective_ : tuple of float
        Mean objective per word before and after.
    n_features_in_ : int
    """

    _suffix = "ran"
    _params_schema = {"direction_": Array(("d",)), "vectors_": Array(("debias_words_", "d")),
                      "repulsion_sizes_": Array(("debias_words_",), dtypes=("int64", "int32")),
                      "debias_words_": WORDS, "objective_": NUMBERS}
    _parameter_constraints = {
        "debias_words": [list, tuple, str, None],
        "n_words": [Interval(Integral, 1, None, closed="left")],
        "weights": [tuple, list],
        "theta": [Interval(Real, None, None, closed="neither")],
        "n_neighbours": [Interval(Integral, 1, None, closed="left")],
        "n_repulsion": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "n_epochs": [Interval(Integral, 0, None, closed="left")],
        "subspace": "no_validation",
        "gender_specific": "no_validation",
        "lists": [StrOptions(set(wordlists.LIST_SETS))],
        "max_missing": [Interval(Real, 0, 1, closed="both")],
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, debias_words=None, *, n_words: int = 1000, weights=(1 / 8, 6 / 8, 1 / 8), theta: float = 0.05,
                 n_neighbours: int = 200, n_repulsion: int = 100, learning_rate: float = 0.01, n_epochs: int = 300,
                 subspace=None, gender_specific=None, lists: str = wordlists.DEFAULT_LISTS, max_missing: float = 0.5,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.debias_words = debias_words
        self.n_words = n_words
        self.weights = weights
        self.theta = theta
        self.n_neighbours = n_neighbours
        self.n_repulsion = n_repulsion
        self.learning_rate = learning_rate
        self.n_epochs = n_epochs
        self.subspace = subspace
        self.gender_specific = gender_specific
        self.lists = lists
        self.max_missing = max_missing
        self.chunk_rows = chunk_rows

    def _debias_rows(self, emb: Embedding) -> np.ndarray:
        if self.debias_words is None:
            specific = wordlists.resolve_words(self.gender_specific, "gender_specific", self.lists)
            male, female = most_biased_rows(emb, int(self.n_words), set(specific) | set(definition_words()))
            return np.concatenate([male, female])
        words = list(dict.fromkeys(wordlists.resolve_words(self.debias_words, "professions", self.lists)))
        rows = emb.words.rows(words)
        check_missing([w for w, r in zip(words, rows) if r < 0], len(words), self.max_missing, emb,
                      "RAN debias words", at_least=1)
        return rows[rows >= 0]

    def fit(self, embedding, y=None) -> "RANDebias":
        """Find every debias word's repulsion set and optimize the words."""
        self._validate()
        if len(self.weights) != 3:
            raise EmbdebiasError(f"weights must be 3 numbers (repulsion, attraction, neutralization), "
                                 f"got {self.weights!r}")
        emb = as_embedding(embedding)
        pairs = [p for p in wordlists.resolve_pairs(None, "definitional_pairs", self.lists)
                 if not {w.lower() for w in p} & NO_NAMES]
        g = BiasSubspace(pairs, lists=self.lists).fit(emb).components_[0]
        rows = self._debias_rows(emb)
        vectors, sizes, before, after = [], [], 0.0, 0.0
        for lo in range(0, len(rows), BATCH_WORDS):
            batch = rows[lo:lo + BATCH_WORDS]
            candidates = unit_chunks(emb, min(int(self.chunk_rows), SEARCH_ROWS))
            near = top_neighbours(unit_rows(emb.take(batch, np.float64)), candidates, int(self.n_neighbours), batch)
            for at in range(0, len(batch), OPTIMIZE_WORDS):  # each word's optimum is its own
                out, size, b, a = self._optimize(emb, batch[at:at + OPTIMIZE_WORDS], near[at:at + OPTIMIZE_WORDS], g)
                vectors.append(out)
                sizes.append(size)
                before, after = before + b, after + a
        self.direction_ = g
        self.debias_words_ = [emb.words[int(r)] for r in rows]
        self.vectors_ = np.vstack(vectors).astype(np.float32) if vectors else np.zeros((0, emb.dim), np.float32)
        self.repulsion_sizes_ = np.concatenate(sizes) if sizes else np.zeros(0, np.int64)
        self.objective_ = (before / max(len(rows), 1), after / max(len(rows), 1))
        self.n_features_in_ = emb.dim
        return self

    def _optimize(self, emb: Embedding, rows: np.ndarray, near: np.ndarray, g: np.ndarray):
        """``(optimized unit rows, repulsion set sizes, objective before, after)`` of the words ``rows``
        whose nearest neighbours are the rows ``near``."""
        words = unit_rows(emb.take(rows, np.float64))
        neighbours = unit_rows(emb.take(near.ravel(), np.float64)).reshape(*near.shape, emb.dim)
        mask = repulsion_sets(words, neighbours, g, float(self.theta), int(self.n_repulsion))
        weights = tuple(float(w) for w in self.weights)

        def gradient(W):
            return ran_gradient(W, words, neighbours, mask, g, weights)

        result = adam(words, gradient, lr=float(self.learning_rate), steps=int(self.n_epochs))
        return unit_rows(result), mask.sum(axis=1), gradient(words)[0], gradient(result)[0]

    def _prepare(self, emb: Embedding):
        rows = emb.words.rows(self.debias_words_)
        if (rows < 0).any():
            raise EmbdebiasError(f"RANDebias: debias words missing from {emb.name}; transform the embedding "
                                 f"it was fitted on")
        order = np.argsort(rows)
        fixed_rows, fixed = rows[order], np.asarray(self.vectors_, dtype=np.float32)[order]

        def apply(rows, block, out):
            unit_rows(block, out=out)
            place_rows(out, rows, fixed_rows, fixed)

        return apply

    def run_info(self, embedding: Embedding) -> dict:
        return {"debias_words": len(self.debias_words_),
                "mean_repulsion_set": float(np.mean(self.repulsion_sizes_)) if len(self.repulsion_sizes_) else 0.0,
                "objective_before": self.objective_[0], "objective_after": self.objective_[1]}
