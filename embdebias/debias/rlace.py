"""Relaxed Linear Adversarial Concept Erasure, rank k (Ravfogel, Twiton, Goldberg & Cotterell, ICML 2022).

Written with numpy and scipy (no PyTorch): the game is over a ``d x d`` matrix and a
``d``-vector, so its gradients are two small matrix products, written out here.
"""

from __future__ import annotations

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

#: Bisection steps of the Fantope projection (the authors' code).
BISECTION_STEPS = 25
#: Linear classifiers trained at each evaluation (the authors' ``get_score``).
N_EVAL_CLASSIFIERS = 3


def fantope_projection(P: np.ndarray, rank: int) -> np.ndarray:
    """The projection of symmetric ``P`` onto ``{0 <= P <= I, tr P = rank}``.

    In ``P``'s eigenbasis it clips ``lambda - theta`` to ``[0, 1]``, with ``theta``
    found by bisection so that the clipped eigenvalues sum to ``rank``.
    """
    lam, U = np.linalg.eigh((P + P.T) / 2)
    lo, hi = lam.min() - 1.0, lam.max()
    for _ in range(BISECTION_STEPS):
        theta = (lo + hi) / 2
        if np.clip(lam - theta, 0, 1).sum() > rank:
            lo = theta
        else:
            hi = theta
    clipped = np.clip(lam - (lo + hi) / 2, 0, 1)
    return (U * clipped) @ U.T


def rank_k_projection(P: np.ndarray, rank: int) -> np.ndarray:
    """``I - W^T W`` with ``W`` the top-``rank`` eigenvectors of ``P``: an orthogonal projection."""
    _, U = np.linalg.eigh((P + P.T) / 2)
    W = U[:, -rank:]
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

    def adversary_gradient(self, Xb, r):
        """``dL/dP`` of the loss at ``Xb (I - P)``: ``-X^T r theta^T``."""
        return -np.outer(Xb.T @ r, self.theta)

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

    def adversary_gradient(self, Xb, r):
        return -(Xb.T @ r) @ self.theta.T

    def step(self, Z, r, lr: float, wd: float) -> None:
        self.theta = self.theta - lr * (Z.T @ r + wd * self.theta)
        self.bias = self.bias - lr * (r.sum(axis=0) + wd * self.bias)


def evaluate_projection(P, X_train, y_train, X_dev, y_dev, random_state: int) -> tuple[float, float]:
    """``(lowest log-loss, highest accuracy)`` on dev of 3 SGD logistic classifiers after ``P``.

    The authors train three ``SGDClassifier(loss="log", alpha=1e-4, tol=1e-4,
    n_iter_no_change=15, max_iter=25000)``; the strongest of them measures what is left.
    """
    from sklearn.metrics import log_loss

    losses, accuracies = [], []
    for i in range(N_EVAL_CLASSIFIERS):
        clf = SGDClassifier(loss="log_loss", alpha=1e-4, tol=1e-4, n_iter_no_change=15, max_iter=25000,
                            random_state=random_state + i)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X_train @ P, y_train)
        losses.append(log_loss(y_dev, clf.predict_proba(X_dev @ P), labels=clf.classes_))
        accuracies.append(clf.score(X_dev @ P, y_dev))
    return float(min(losses)), float(max(accuracies))


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
    * the classifiers are scikit-learn's ``loss="log_loss"`` (the newer name of ``"log"``).

    Parameters
    ----------
    rank : int, default 1
    max_iter : int, default 50000
    learning_rate : float, default 0.005
    weight_decay : float, default 1e-5
    batch_size : int, default 128
    epsilon : float, default 0.002
    evaluate_every : int, default 1000
    fraction, max_words : the labels' share and vocabulary (as :class:`~embdebias.debias.inlp.INLP`).
    subspace, lists : accepted for ``embdebias run``.
    attribute : Attribute or str, optional
        The protected attribute (:func:`embdebias.load_attribute`); None: gender. For
        ``k`` groups the game is played on the ``k`` groups' words
        (:func:`~embdebias.debias._labels.attribute_labels`) with a softmax
        cross-entropy predictor (the authors' choice beyond two classes), and the stopping
        rule compares with the majority class's share, about ``1/k``.
    random_state : int, default 0
    chunk_rows : int

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
    _array_shapes = {"map_": ("d", "d"), "components_": (None, "d")}
    _parameter_constraints = {
        "rank": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, 1, closed="left")],
        "evaluate_every": [Interval(Integral, 1, None, closed="left")],
        "fraction": [Interval(Real, 0, 0.5, closed="right")],
        "max_words": [Interval(Integral, 2, None, closed="left")],
        "subspace": "no_validation",
        "lists": [StrOptions(set(wordlists.LIST_SETS))],
        "random_state": [Interval(Integral, 0, 2**32 - 1, closed="both")],
        "attribute": "no_validation",
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, rank: int = 1, *, max_iter: int = 50_000, learning_rate: float = 0.005,
                 weight_decay: float = 1e-5, batch_size: int = 128, epsilon: float = 0.002,
                 evaluate_every: int = 1000, fraction: float = _labels.FRACTION, max_words: int = _labels.MAX_WORDS,
                 subspace=None, lists: str = wordlists.DEFAULT_LISTS, random_state: int = 0, attribute=None,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.rank = rank
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.batch_size = batch_size
        self.epsilon = epsilon
        self.evaluate_every = evaluate_every
        self.fraction = fraction
        self.max_words = max_words
        self.subspace = subspace
        self.lists = lists
        self.random_state = random_state
        self.attribute = attribute
        self.chunk_rows = chunk_rows

    def fit(self, embedding, y=None) -> "RLACE":
        """Play the game on the male- and female-biased words of ``embedding``."""
        self._validate()
        emb = as_embedding(embedding)
        if self.rank >= emb.dim:
            raise EmbdebiasError(f"rank must be below the dimension {emb.dim} of {emb.name}, got {self.rank}")
        labelled = _labels.protected_labels(emb, self.attribute, self.lists, fraction=self.fraction,
                                            max_words=self.max_words, random_state=self.random_state)
        self.groups_ = labelled.groups
        X, y_ = labelled.split(emb, "train", binary=True)
        X_dev, y_dev = labelled.split(emb, "dev", binary=True)
        self.majority_accuracy_ = float(np.unique(y_dev, return_counts=True)[1].max() / len(y_dev))
        best_P, self.dev_accuracy_, self.n_iter_ = self._play(X, y_, X_dev, y_dev, emb.dim)
        self.map_ = rank_k_projection(best_P, int(self.rank))
        _, U = np.linalg.eigh(best_P)
        self.components_ = U[:, -int(self.rank):].T.copy()
        X_test, y_test = labelled.split(emb, "test", binary=True)
        from .inlp import linear_accuracy

        self.test_accuracy_ = linear_accuracy(X @ self.map_, y_, X_test @ self.map_, y_test, self.random_state)
        self.n_features_in_ = emb.dim
        return self

    def _play(self, X, labels, X_dev, y_dev, dim: int):
        rng = np.random.default_rng(self.random_state)
        lr, wd, m, k = float(self.learning_rate), float(self.weight_decay), int(self.batch_size), int(self.rank)
        P = 0.1 * rng.standard_normal((dim, dim))
        n_classes = len(np.unique(labels))
        predictor = _Logistic(rng, dim) if n_classes == 2 else _Softmax(rng, dim, n_classes)
        y = predictor.targets(labels)
        y_eval = y if n_classes == 2 else labels
        eye = np.eye(dim)
        best_P, best_loss, best_acc = None, -np.inf, 1.0
        for it in range(int(self.max_iter)):
            # adversary: one SGD step on -L (ascent on the predictor's loss), then the Fantope
            P = (P + P.T) / 2
            idx = rng.integers(0, len(y), m)
            Xb = X[idx]
            grad = predictor.adversary_gradient(Xb, predictor.residual(Xb @ (eye - P), y[idx]))
            P = P - lr * (-(grad + grad.T) / 2 + wd * P)
            P = fantope_projection(P, k)
            # predictor: one SGD step on L, fresh batch
            idx = rng.integers(0, len(y), m)
            Z = X[idx] @ (eye - P)
            predictor.step(Z, predictor.residual(Z, y[idx]), lr, wd)
            if it % int(self.evaluate_every) == 0:
                loss, acc = evaluate_projection(rank_k_projection(P, k), X, y_eval, X_dev, y_dev, self.random_state)
                if loss > best_loss:
                    best_P, best_loss = P.copy(), loss
                best_acc = min(best_acc, acc, key=lambda a: abs(a - self.majority_accuracy_))
                if abs(best_acc - self.majority_accuracy_) < self.epsilon:
                    break
        return best_P, best_acc, it + 1

    def run_info(self, embedding: Embedding) -> dict:
        return {"rank": int(self.rank), "iterations": self.n_iter_, "held_out_linear_accuracy": self.test_accuracy_}
