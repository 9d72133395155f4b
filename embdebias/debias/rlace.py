"""Relaxed Linear Adversarial Concept Erasure, rank k (Ravfogel, Twiton, Goldberg & Cotterell, ICML 2022).

Written with numpy and scipy (no PyTorch): the game is over a ``d x d`` matrix and a
``d``-vector, so its gradients are two small matrix products, written out here.
"""

from __future__ import annotations

import os
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
from sklearn.utils._param_validation import Interval, StrOptions

from ..data import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from ..errors import EmbdebiasError
from . import _labels
from ._linear import LinearDebiaser
from ._params import GROUPS, INT, NUMBER, Array
from ._progress import fit_bar

#: Bisection steps of the Fantope projection (the authors' code).
BISECTION_STEPS = 25
#: Linear classifiers trained at each evaluation (the authors' ``get_score``).
N_EVAL_CLASSIFIERS = 3


def water_level(lam: np.ndarray, rank: int, bulk: float = 0.0, multiplicity: int = 0) -> float:
    """The ``theta`` with ``sum_i clip(lambda_i - theta, 0, 1) = rank``, by the authors' 25 bisection steps.

    Parameters
    ----------
    lam : ndarray
        Eigenvalues (any order).
    rank : int
        The trace wanted.
    bulk, multiplicity : float, int
        A further eigenvalue ``bulk`` repeated ``multiplicity`` times, not listed in
        ``lam`` (the factored solver's ``b`` of ``P = b I + V diag(c) V^T``).

    Returns
    -------
    float
        The midpoint of the last bracket, as in the authors' ``solve_constraint``.
    """
    lo, hi = lam.min() - 1.0, lam.max()
    if multiplicity:
        lo, hi = min(lo, bulk - 1.0), max(hi, bulk)
    for _ in range(BISECTION_STEPS):
        theta = (lo + hi) / 2
        total = np.minimum(np.maximum(lam - theta, 0.0), 1.0).sum()  # np.clip's values, at half its overhead
        if multiplicity:
            total += multiplicity * min(max(bulk - theta, 0.0), 1.0)
        if total > rank:
            lo = theta
        else:
            hi = theta
    return (lo + hi) / 2


def fantope_projection(P: np.ndarray, rank: int) -> np.ndarray:
    """The projection of symmetric ``P`` onto ``{0 <= P <= I, tr P = rank}``.

    In ``P``'s eigenbasis it clips ``lambda - theta`` to ``[0, 1]``, with ``theta``
    found by bisection (:func:`water_level`) so that the clipped eigenvalues sum to ``rank``.
    """
    lam, U = np.linalg.eigh((P + P.T) / 2)
    clipped = np.clip(lam - water_level(lam, rank), 0, 1)
    return (U * clipped) @ U.T


def top_eigenvectors(P: np.ndarray, rank: int) -> np.ndarray:
    """``W`` (``d x rank``): the eigenvectors of the ``rank`` largest eigenvalues of symmetric ``P``, ascending."""
    return np.linalg.eigh((P + P.T) / 2)[1][:, -rank:]


def rank_k_projection(P: np.ndarray, rank: int) -> np.ndarray:
    """``I - W^T W`` with ``W`` the top-``rank`` eigenvectors of ``P``: an orthogonal projection."""
    W = top_eigenvectors(P, rank)
    return np.eye(P.shape[0]) - W @ W.T


def _bce_residual(Z: np.ndarray, y: np.ndarray, theta: np.ndarray, bias: float) -> np.ndarray:
    """``(sigmoid(Z theta + b) - y) / m``: the gradient of the mean BCE with respect to the logits."""
    return (expit(Z @ theta + bias) - y) / len(y)


class _Logistic:
    """The predictor of two classes: one logistic unit (BCE), the authors' binary setting."""

    def __init__(self, rng, dim: int):
        bound = 1 / np.sqrt(dim)
        self.theta, self.bias = rng.uniform(-bound, bound, dim), float(rng.uniform(-bound, bound))

    @staticmethod
    def targets(labels: np.ndarray) -> np.ndarray:
        return labels.astype(np.float64)

    def residual(self, Z, y):
        return _bce_residual(Z, y, self.theta, self.bias)

    def adversary_factors(self, Xb, r):
        """``(A, B)`` with ``dL/dP = -A B^T`` at ``Xb (I - P)``: ``A = X^T r``, ``B = theta`` (columns)."""
        return (Xb.T @ r)[:, None], self.theta[:, None]

    def step(self, Z, r, lr: float, wd: float) -> None:
        self.theta = self.theta - lr * (Z.T @ r + wd * self.theta)
        self.bias = self.bias - lr * (r.sum() + wd * self.bias)


class _Softmax(_Logistic):
    """The predictor of ``c > 2`` classes: one linear layer with softmax cross-entropy (the
    authors' code uses cross-entropy for more than two classes)."""

    def __init__(self, rng, dim: int, n_classes: int):
        bound = 1 / np.sqrt(dim)
        self.theta, self.bias = rng.uniform(-bound, bound, (dim, n_classes)), rng.uniform(-bound, bound, n_classes)
        self.n_classes = n_classes

    def targets(self, labels: np.ndarray) -> np.ndarray:
        return np.eye(self.n_classes)[labels]

    def residual(self, Z, y):
        logits = Z @ self.theta + self.bias
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (p / p.sum(axis=1, keepdims=True) - y) / len(y)

    def adversary_factors(self, Xb, r):
        return Xb.T @ r, self.theta

    def step(self, Z, r, lr: float, wd: float) -> None:
        self.theta = self.theta - lr * (Z.T @ r + wd * self.theta)
        self.bias = self.bias - lr * (r.sum(axis=0) + wd * self.bias)


class _DenseAdversary:
    """The adversary ``P`` as a ``d x d`` matrix, projected by a full eigendecomposition every step.

    The authors' code, transcribed (``solver="dense"``): ``O(d^3)`` per iteration.
    """

    def __init__(self, P0: np.ndarray):
        self.P = P0
        self.eye = np.eye(len(P0))

    def removed_from(self, X: np.ndarray) -> np.ndarray:
        """``X (I - P)``."""
        return X @ (self.eye - self.P)

    def step(self, predictor, Xb, yb, lr: float, wd: float, rank: int) -> None:
        """One SGD step on ``-L`` (ascent on the predictor's loss), then the Fantope projection."""
        P = (self.P + self.P.T) / 2
        A, B = predictor.adversary_factors(Xb, predictor.residual(Xb @ (self.eye - P), yb))
        grad = -(A @ B.T)
        self.P = fantope_projection(P - lr * (-(grad + grad.T) / 2 + wd * P), rank)

    def top(self, rank: int) -> np.ndarray:
        return top_eigenvectors(self.P, rank)


class _FactoredAdversary:
    """The adversary as ``P = b I + V diag(c) V^T`` (``V``: ``d x r`` orthonormal), projected in ``r + 2`` dimensions.

    An SGD step scales ``P`` by ``a = 1 - lr wd`` and adds the symmetric rank-2 term
    ``-lr/2 (A B^T + B A^T)`` (``A = X^T r``, ``B = theta``; rank ``2c`` for ``c``
    classes), so the new matrix is ``a b I`` plus a matrix within the span of
    ``[V, A, B]``. Its eigendecomposition is that of the ``(r + 2) x (r + 2)`` matrix
    ``Q^T (P - a b I) Q`` (``Q``: an orthonormal basis of the span), and its remaining
    ``d - r - 2`` eigenvalues all equal ``a b``. The Fantope projection clips every
    eigenvalue, those of the bulk with them (:func:`water_level` counts the bulk with its
    multiplicity); the directions whose clipped eigenvalue equals the bulk's fall back into
    it, so ``r`` is the number of eigenvalues that differ from the bulk's: at rank 1 on the
    300-dimensional benchmark at most 9, and 1 or 2 once the game has settled (most are
    clipped to 0). In exact arithmetic every step equals the dense one;
    it costs ``O(d r^2 + m d r)`` instead of ``O(d^3 + m d^2)``. When the span would fill
    the space (the random ``P_0``, or a large ``rank``), the step is taken densely.
    """

    def __init__(self, P0: np.ndarray):
        lam, U = np.linalg.eigh((P0 + P0.T) / 2)
        self.dim, self.b, self.V, self.c = len(P0), 0.0, U, lam

    def removed_from(self, X: np.ndarray) -> np.ndarray:
        """``X (I - P) = (1 - b) X - (X V) diag(c) V^T``."""
        return (1.0 - self.b) * X - ((X @ self.V) * self.c) @ self.V.T

    def dense(self) -> np.ndarray:
        return self.b * np.eye(self.dim) + (self.V * self.c) @ self.V.T

    def step(self, predictor, Xb, yb, lr: float, wd: float, rank: int) -> None:
        """The dense step's update and Fantope projection, computed in the span of ``[V, A, B]``."""
        A, B = predictor.adversary_factors(Xb, predictor.residual(self.removed_from(Xb), yb))
        decay, half = 1.0 - lr * wd, lr / 2
        if self.V.shape[1] + A.shape[1] + B.shape[1] >= self.dim:
            lam, U = np.linalg.eigh(decay * self.dense() - half * (A @ B.T + B @ A.T))
            bulk, multiplicity = 0.0, 0
        else:
            Q = np.linalg.qr(np.hstack([self.V, A, B]))[0]
            G, QA, QB = Q.T @ self.V, Q.T @ A, Q.T @ B
            mu, E = np.linalg.eigh(decay * ((G * self.c) @ G.T) - half * (QA @ QB.T + QB @ QA.T))
            bulk, multiplicity = decay * self.b, self.dim - Q.shape[1]
            lam, U = bulk + mu, Q @ E
        theta = water_level(lam, rank, bulk, multiplicity)
        level = min(max(bulk - theta, 0.0), 1.0) if multiplicity else 0.0
        clipped = np.clip(lam - theta, 0, 1)
        own = clipped != level
        self.b, self.V, self.c = level, U[:, own], clipped[own] - level

    def top(self, rank: int) -> np.ndarray:
        """The top-``rank`` eigenvectors (ascending), from ``V`` when ``rank`` of its eigenvalues exceed ``b``."""
        if (self.c > 0).sum() < rank:  # the bulk's eigenspace is among the top: any basis of it will do
            return top_eigenvectors(self.dense(), rank)
        return self.V[:, np.argsort(self.c, kind="stable")[-rank:]]


SOLVERS = {"factored": _FactoredAdversary, "dense": _DenseAdversary}


def _eval_classifier(seed: int, Z_train, y_train, Z_dev, y_dev) -> tuple[float, float]:
    """``(log-loss, accuracy)`` on dev of one of the authors' evaluation classifiers."""
    from sklearn.metrics import log_loss

    clf = SGDClassifier(loss="log_loss", alpha=1e-4, tol=1e-4, n_iter_no_change=15, max_iter=25000,
                        random_state=seed).fit(Z_train, y_train)
    return log_loss(y_dev, clf.predict_proba(Z_dev), labels=clf.classes_), clf.score(Z_dev, y_dev)


def evaluate_projection(P, X_train, y_train, X_dev, y_dev, random_state: int) -> tuple[float, float]:
    """``(lowest log-loss, highest accuracy)`` on dev of 3 SGD logistic classifiers after ``P``.

    The authors train three ``SGDClassifier(loss="log", alpha=1e-4, tol=1e-4,
    n_iter_no_change=15, max_iter=25000)``; the strongest of them measures what is left.
    They are trained on threads, one each (scikit-learn's SGD releases the GIL): each
    has its own seed, so the result is the same as one after the other, in up to a third
    of the time on three cores. On 300 dimensions they are most of a fit's time.
    """
    from concurrent.futures import ThreadPoolExecutor

    Z_train, Z_dev = X_train @ P, X_dev @ P
    seeds = [random_state + i for i in range(N_EVAL_CLASSIFIERS)]
    # the filter is process-wide: set once here, not per thread (catch_warnings is not thread-safe)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with ThreadPoolExecutor(min(N_EVAL_CLASSIFIERS, os.cpu_count() or 1)) as pool:
            scores = list(pool.map(lambda seed: _eval_classifier(seed, Z_train, y_train, Z_dev, y_dev), seeds))
    return float(min(loss for loss, _ in scores)), float(max(acc for _, acc in scores))


class RLACE(LinearDebiaser):
    """Rank-``k`` linear concept erasure by a relaxed adversarial game (Ravfogel et al. 2022).

    A linear predictor ``theta`` (logistic, with bias) tries to tell male- from
    female-biased words after ``X (I - P)``; the adversary ``P``, relaxed to the
    Fantope ``{0 <= P <= I, tr P = k}``, tries to make it fail. Alternating single
    SGD steps (adversary: ascent on the loss, then projection on the Fantope;
    predictor: descent) with weight decay on both. Every ``evaluate_every``
    iterations the rank-``k`` projection ``I - W^T W`` (``W``: top-``k`` eigenvectors
    of ``P``) is scored by fresh linear classifiers; the ``P`` with the highest
    log-loss is kept, and the game stops once the best accuracy is within
    ``epsilon`` of the majority class's. The result ``map_ = I - W^T W`` removes a
    rank-``k`` subspace from every word.

    Defaults: the authors' GloVe experiment (``glove/run_glove.py``): the binary
    male/female words of INLP's data (:mod:`embdebias.debias._labels`), SGD
    learning rate 0.005, weight decay 1e-5, batch 128, at most 50,000 iterations,
    ``epsilon`` 0.002, evaluation every 1,000; the function's own defaults
    (75,000 iterations, weight decay 1e-4, ``epsilon`` 0.0015) differ and are not used.

    Deliberate differences, tested in ``tests/test_debiasers_rlace.py``:

    * numpy instead of PyTorch: the gradients are written out (BCE with logits;
      ``dL/dP = -X^T r theta^T`` symmetrized); the random draws (``P_0 = 0.1 N(0, 1)``,
      the predictor's uniform start, the batches) come from one seeded numpy
      generator, so two fits with the same seed are identical, but they are not
      PyTorch's draws;
    * at each evaluation the strongest of the three classifiers counts (the lowest
      log-loss and highest accuracy), so the stopping rule is as strict as it can be;
    * the classifiers are scikit-learn's ``loss="log_loss"`` (the newer name of ``"log"``);
      the three of an evaluation run on threads (:func:`evaluate_projection`), with the
      same result as one after the other;
    * ``solver="factored"`` (the default) keeps ``P`` as ``b I + V diag(c) V^T`` and
      projects it onto the Fantope within the few dimensions an SGD step touches
      (:class:`_FactoredAdversary`), instead of eigendecomposing the ``d x d`` matrix at
      every iteration as the authors' code does (``solver="dense"``, their steps
      transcribed, kept as the reference). The iterates are the same in exact arithmetic
      and agree to rounding in floating point (about 1e-15 at the default learning rate;
      a game at a far larger rate amplifies rounding whichever solver). The evaluation classifiers' SGD
      can amplify so small a difference (an early-stopping decision flips), and with it
      which ``P`` is kept; on GloVe 6B 50d and on the 3,000,000 x 300 benchmark file the
      two solvers stop at the same iteration with the same held-out accuracy
      (``benchmarks/bench_rlace.py``);
    * **k > 2 groups** (no published setting): the published rule stops once the best
      accuracy is within ``epsilon`` of the majority class's, which a rank below ``k - 1``
      cannot reach (the ``k`` groups' centroids span ``k - 1`` dimensions, and a linear
      classifier still tells them apart in what is left): race at rank 1 ran all 50,000
      iterations. The game then also stops once ``n_evals_no_change`` evaluations in a row
      have not raised the kept log-loss by more than ``tol`` (1 %) of itself; the ``P`` kept
      is the one of highest log-loss so far, as before (before and after:
      ``benchmarks/results/rlace.md``).

    Parameters
    ----------
    rank : int, default 1
    max_iter : int, default 50000
    learning_rate : float, default 0.005
    weight_decay : float, default 1e-5
    batch_size : int, default 128
    epsilon : float, default 0.002
    evaluate_every : int, default 1000
    n_evals_no_change : int or None, default 2
        For ``k > 2`` groups: also stop once this many evaluations in a row have not raised
        the kept log-loss by more than ``tol`` times itself (None: the published rule alone).
        Two groups keep the published rule alone.
    tol : float, default 0.01
    fraction, max_words : the labels' share and vocabulary (as :class:`~embdebias.debias.inlp.INLP`).
    subspace, lists : accepted for ``embdebias run``.
    attribute : Attribute or str, optional
        The protected attribute (:func:`embdebias.load_attribute`); not given: the attribute of a fitted
        ``subspace``, else gender (one that disagrees with the subspace's is an error). For
        ``k`` groups the game is played on the ``k`` groups' words
        (:func:`~embdebias.debias._labels.attribute_labels`) with a softmax
        cross-entropy predictor (the authors' choice beyond two classes), and the stopping
        rule compares with the majority class's share, about ``1/k``.
    random_state : int, default 0
    chunk_rows : int
    solver : {"factored", "dense"}, default "factored"
        How the adversary's Fantope projection is computed (above): ``"dense"`` costs a
        ``d x d`` eigendecomposition per iteration, ``"factored"`` one of ``r + 2`` (``r + 2c``
        for ``c`` classes) dimensions. On the 300-dimensional benchmark the game took 265 s of
        a 304 s fit before and takes 4 s of 43 s now, the rest being the stopping rule's
        evaluations (``benchmarks/results/rlace.md``).

    Attributes
    ----------
    map_ : ndarray (d, d)
        ``I - W^T W``.
    components_ : ndarray (rank, d)
        The removed directions ``W``.
    n_iter_ : int
        Iterations run.
    dev_accuracy_ : float
        Best held-out (dev) accuracy at the kept ``P``.
    test_accuracy_ : float
        Held-out (test split) accuracy of a fresh linear SVM after the projection.
    majority_accuracy_ : float
    groups_ : tuple of str
        The groups whose labels were erased, in label order.
    n_features_in_ : int
    """

    _suffix = "rlace"
    _params_schema = {**LinearDebiaser._params_schema, "components_": Array((None, "d")), "groups_": GROUPS,
                      "majority_accuracy_": NUMBER, "dev_accuracy_": NUMBER, "n_iter_": INT,
                      "test_accuracy_": NUMBER}
    _parameter_constraints = {
        "rank": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, 1, closed="left")],
        "evaluate_every": [Interval(Integral, 1, None, closed="left")],
        "n_evals_no_change": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "fraction": [Interval(Real, 0, 0.5, closed="right")],
        "max_words": [Interval(Integral, 2, None, closed="left")],
        "subspace": "no_validation",
        "lists": [StrOptions(set(wordlists.LIST_SETS))],
        "random_state": [Interval(Integral, 0, 2**32 - 1, closed="both")],
        "attribute": "no_validation",
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions(set(SOLVERS))],
    }

    def __init__(self, rank: int = 1, *, max_iter: int = 50_000, learning_rate: float = 0.005,
                 weight_decay: float = 1e-5, batch_size: int = 128, epsilon: float = 0.002,
                 evaluate_every: int = 1000, n_evals_no_change: int | None = 2, tol: float = 0.01,
                 fraction: float = _labels.FRACTION, max_words: int = _labels.MAX_WORDS,
                 subspace=None, lists: str = wordlists.DEFAULT_LISTS, random_state: int = 0, attribute=None,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS, solver: str = "factored"):
        self.rank = rank
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.batch_size = batch_size
        self.epsilon = epsilon
        self.evaluate_every = evaluate_every
        self.n_evals_no_change = n_evals_no_change
        self.tol = tol
        self.fraction = fraction
        self.max_words = max_words
        self.subspace = subspace
        self.lists = lists
        self.random_state = random_state
        self.attribute = attribute
        self.chunk_rows = chunk_rows
        self.solver = solver

    def fit(self, embedding, y=None) -> "RLACE":
        """Play the game on the male- and female-biased words of ``embedding``."""
        self._validate()
        emb = as_embedding(embedding)
        if self.rank >= emb.dim:
            raise EmbdebiasError(f"rank must be below the dimension {emb.dim} of {emb.name}, got {self.rank}")
        labelled = _labels.protected_labels(emb, self._attribute(), self.lists, fraction=self.fraction,
                                            max_words=self.max_words, random_state=self.random_state)
        self.groups_ = labelled.groups
        X, y_ = labelled.split(emb, "train", binary=True)
        X_dev, y_dev = labelled.split(emb, "dev", binary=True)
        self.majority_accuracy_ = float(np.unique(y_dev, return_counts=True)[1].max() / len(y_dev))
        W, self.dev_accuracy_, self.n_iter_ = self._play(X, y_, X_dev, y_dev, emb.dim)
        self.map_ = np.eye(emb.dim) - W @ W.T
        self.components_ = W.T.copy()
        X_test, y_test = labelled.split(emb, "test", binary=True)
        from .inlp import linear_accuracy

        self.test_accuracy_ = linear_accuracy(X @ self.map_, y_, X_test @ self.map_, y_test, self.random_state)
        self.n_features_in_ = emb.dim
        return self

    def _play(self, X, labels, X_dev, y_dev, dim: int):
        """The game: ``(W, dev accuracy, iterations)``, ``W`` the top-``rank`` eigenvectors of the kept ``P``."""
        rng = np.random.default_rng(self.random_state)
        lr, wd, m, k = float(self.learning_rate), float(self.weight_decay), int(self.batch_size), int(self.rank)
        adversary = SOLVERS[self.solver](0.1 * rng.standard_normal((dim, dim)))
        n_classes = len(np.unique(labels))
        predictor = _Logistic(rng, dim) if n_classes == 2 else _Softmax(rng, dim, n_classes)
        y = predictor.targets(labels)
        y_eval = y if n_classes == 2 else labels
        best_W, best_loss, best_acc, stalled = None, -np.inf, 1.0, 0
        patience = self.n_evals_no_change if n_classes > 2 else None
        every = int(self.evaluate_every)
        with fit_bar(int(self.max_iter), f"[fit] rlace, {n_classes} groups", "it") as bar:
            for it in range(int(self.max_iter)):
                idx = rng.integers(0, len(y), m)
                adversary.step(predictor, X[idx], y[idx], lr, wd, k)
                # predictor: one SGD step on L, fresh batch
                idx = rng.integers(0, len(y), m)
                Z = adversary.removed_from(X[idx])
                predictor.step(Z, predictor.residual(Z, y[idx]), lr, wd)
                if it % every:
                    continue
                bar.update(min(every, int(self.max_iter) - it))
                W = adversary.top(k)
                loss, acc = evaluate_projection(np.eye(dim) - W @ W.T, X, y_eval, X_dev, y_dev, self.random_state)
                stalled = 0 if best_W is None or loss > best_loss + float(self.tol) * abs(best_loss) else stalled + 1
                if loss > best_loss:
                    best_W, best_loss = W, loss
                best_acc = min(best_acc, acc, key=lambda a: abs(a - self.majority_accuracy_))
                if abs(best_acc - self.majority_accuracy_) < self.epsilon or (patience and stalled >= patience):
                    break
        return best_W, best_acc, it + 1

    def run_info(self, embedding: Embedding) -> dict:
        return {"rank": int(self.rank), "iterations": self.n_iter_, "held_out_linear_accuracy": self.test_accuracy_}
