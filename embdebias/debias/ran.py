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
from ._progress import fit_bar

#: RAN's gender direction: Bolukbasi et al.'s definitional pairs without mary/john (``utils.get_g``).
NO_NAMES = {"mary", "john"}
#: Debias words whose neighbours one pass over the vocabulary finds (one GEMM of that many queries):
#: the default set's 2,000 words in one pass, so that the vocabulary is read, converted and
#: multiplied once (two passes of 1,024 cost twice the reading for the same flops).
BATCH_WORDS = 2048
#: Candidate rows per block of the neighbour search: its similarities are BATCH_WORDS x this
#: float32 (64 MiB; a 65,536-row chunk's 256 MiB dominated the fit's memory at 300 dimensions,
#: for no gain in speed: 600,000 x 300, 32.1 against 33.2 s, peak RSS 1.16 against 1.57 GiB).
SEARCH_ROWS = 1 << 13
#: Debias words whose repulsion sets are found at once: their ``n_neighbours`` neighbours' vectors,
#: (words, n_neighbours, d) float64, and the indirect bias's temporaries of that size are the
#: largest arrays of that step (at 300 dimensions, 256 words: 123 MB each).
OPTIMIZE_WORDS = 256
#: Neighbour vectors (float64, summed over a block's words) optimized at once. The optimization
#: reads only each word's repulsion set (its other neighbours have no term in the objective),
#: with the words in order of set size so that a block's padding is small; a block of 4 MiB
#: stays in the cache for its 300 Adam steps. The block sizes change the float32 similarities
#: and the float64 sums in their last bit only, which can swap near-tied neighbours.
OPTIMIZE_BYTES = 4 << 20


def unit_chunks(emb: Embedding, chunk_rows: int, bar=None):
    """``(start, unit rows)`` of every chunk of ``emb`` (float32); ``bar`` (tqdm) counts the rows."""
    for start, _, block in emb.iter_chunks(chunk_rows):
        yield start, unit_rows(np.array(block, dtype=np.float32))
        if bar is not None:
            bar.update(len(block))


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
    and the gradients are written out instead of autograd. Every word's neighbours come
    from one pass over the vocabulary (float32 products of unit rows in blocks), and its
    optimization reads its repulsion set only (the other neighbours have no term in the
    objective), with the words in blocks of about the same set size: the same words as with
    all ``n_neighbours`` and a mask, to rounding (which the sign of ``w_d . g``, oscillating
    about 0 once neutralized, can amplify to about 1e-4 in a word or two; tested).

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
        passes = -(-len(rows) // BATCH_WORDS)
        with fit_bar(passes * len(emb), "[fit] ran: neighbours", "word") as bar:
            repulsion = self._repulsion_sets(emb, rows, g, bar)
        with fit_bar(len(rows), "[fit] ran: optimize", "word") as bar:
            vectors, before, after = self._optimize(emb, rows, repulsion, g, bar)
        self.direction_ = g
        self.debias_words_ = [emb.words[int(r)] for r in rows]
        self.vectors_ = vectors.astype(np.float32)
        self.repulsion_sizes_ = (repulsion >= 0).sum(axis=1).astype(np.int64)
        self.objective_ = (before / max(len(rows), 1), after / max(len(rows), 1))
        self.n_features_in_ = emb.dim
        return self

    def _repulsion_sets(self, emb: Embedding, rows: np.ndarray, g: np.ndarray, bar) -> np.ndarray:
        """``(m, n_repulsion)`` rows of every word's repulsion set, in neighbour order, padded with -1.

        The neighbours of ``BATCH_WORDS`` words come from one pass over the vocabulary
        (blocked float32 products of unit rows, :func:`~embdebias._rows.top_neighbours`).
        """
        width = int(self.n_repulsion)
        out = np.full((len(rows), width), -1, dtype=np.int64)
        for lo in range(0, len(rows), BATCH_WORDS):
            batch = rows[lo:lo + BATCH_WORDS]
            candidates = unit_chunks(emb, min(int(self.chunk_rows), SEARCH_ROWS), bar)
            near = top_neighbours(unit_rows(emb.take(batch, np.float64)), candidates, int(self.n_neighbours), batch)
            for at in range(0, len(batch), OPTIMIZE_WORDS):
                block = near[at:at + OPTIMIZE_WORDS]
                words = unit_rows(emb.take(batch[at:at + OPTIMIZE_WORDS], np.float64))
                neighbours = unit_rows(emb.take(block.ravel(), np.float64)).reshape(*block.shape, emb.dim)
                mask = repulsion_sets(words, neighbours, g, float(self.theta), width)
                # the set's rows first, in neighbour order (a stable sort of the mask)
                first = np.argsort(~mask, axis=1, kind="stable")[:, :width]
                kept = np.take_along_axis(mask, first, 1)
                out[lo + at:lo + at + len(block), :kept.shape[1]] = np.where(kept, np.take_along_axis(block, first, 1),
                                                                             -1)
        return out

    def _optimize(self, emb: Embedding, rows: np.ndarray, repulsion: np.ndarray, g: np.ndarray, bar):
        """``(optimized unit rows, objective before, after)`` of the words ``rows`` with repulsion sets
        ``repulsion`` (rows, -1 past a set's end), in blocks of words of about the same set size."""
        sizes = (repulsion >= 0).sum(axis=1)
        order = np.argsort(sizes, kind="stable")
        weights = tuple(float(w) for w in self.weights)
        out = np.empty((len(rows), emb.dim))
        before = after = 0.0
        widths = np.maximum(sizes[order], 1)  # ascending
        at = 0
        while at < len(order):
            # the most words whose padded block (to the widest set among them) fits OPTIMIZE_BYTES
            fits = np.arange(1, len(order) - at + 1) * widths[at:] * (8 * emb.dim) <= OPTIMIZE_BYTES
            block = order[at:at + max(1, int(fits.sum()))]
            width = int(widths[at + len(block) - 1])
            near = repulsion[block, :width]
            mask = near >= 0
            words = unit_rows(emb.take(rows[block], np.float64))
            neighbours = unit_rows(emb.take(np.where(mask, near, rows[block, None]).ravel(), np.float64))
            neighbours = neighbours.reshape(len(block), width, emb.dim)

            def gradient(W, words=words, neighbours=neighbours, mask=mask):
                return ran_gradient(W, words, neighbours, mask, g, weights)

            result = adam(words, gradient, lr=float(self.learning_rate), steps=int(self.n_epochs))
            out[block] = unit_rows(result)
            before, after = before + gradient(words)[0], after + gradient(result)[0]
            bar.update(len(block))
            at += len(block)
        return out, before, after

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
