"""Iterative Nullspace Projection (Ravfogel, Elazar, Gonen, Twiton & Goldberg, ACL 2020)."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC
from sklearn.utils._param_validation import Interval, StrOptions

from ..data import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from . import _labels
from ._linear import LinearDebiaser
from ._params import GROUPS, INT, NUMBER, Array
from ._progress import fit_bar


def rowspace_projection(W: np.ndarray) -> np.ndarray:
    """``P_R(W) = B B^T`` with ``B`` an orthonormal basis of the row space of ``W`` (c x d).

    Weights all near zero (``np.allclose(W, 0)``: every entry within ``1e-8``) span
    nothing, as in the authors' ``get_rowspace_projection``: such a classifier (one that
    found no signal, weights about ``1e-8``) removes no direction. (Until issue 33 any
    non-zero entry counted, and with all 35 iterations on GloVe 6B rank 45 was removed
    where the authors' rule removes 42.)
    """
    W = np.atleast_2d(np.asarray(W, dtype=np.float64))
    B = np.zeros((W.shape[1], 0)) if np.allclose(W, 0) else scipy.linalg.orth(W.T)
    return B @ B.T


def nullspace_projection(rowspace_projections, dim: int) -> np.ndarray:
    """``P = I - P_R(sum_j P_R(W_j))``: projection on the intersection of the classifiers' nullspaces."""
    if not rowspace_projections:
        return np.eye(dim)
    return np.eye(dim) - rowspace_projection(np.sum(rowspace_projections, axis=0))


def linear_classifier(random_state: int = 0) -> LinearSVC:
    """The published classifier: ``LinearSVC(fit_intercept=False, class_weight=None, dual=False, random_state=0)``."""
    return LinearSVC(fit_intercept=False, class_weight=None, dual=False, random_state=random_state)


def linear_accuracy(X_train, y_train, X_test, y_test, random_state: int = 0) -> float:
    """Held-out accuracy of a fresh published linear classifier."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return float(linear_classifier(random_state).fit(X_train, y_train).score(X_test, y_test))


class INLP(LinearDebiaser):
    """Iterative Nullspace Projection of gender, or of an attribute's groups (Ravfogel et al. 2020).

    Fits linear classifiers of protected labels one after another; after each, the
    data are projected onto the nullspace of every classifier so far
    (``P = I - P_R(sum_j P_R(W_j))``), and the next classifier is trained on the
    projected data. The result is one symmetric, idempotent ``d x d`` projection
    ``P`` applied to every word (``x' = x P``, then unit length).

    Labels and classifier as published (:mod:`embdebias.debias._labels`): male-,
    female-biased and neutral words by cosine with ``he - she`` on the original
    vectors (7,500 each from the first 150,000 words that pass the published filter, as
    published; the same 5 % share of a smaller vocabulary), the
    70/30 + 70/30 splits, a 3-class ``LinearSVC(fit_intercept=False, dual=False)``,
    at most 35 iterations, autoregressive.

    Deliberate differences from the authors' notebook, tested in ``tests/test_debiasers_inlp.py``:

    * **stopping**: the notebook runs all 35 iterations; in 50 dimensions, 35
      three-class classifiers can remove up to 105 directions, the whole space. As
      AllenNLP's port does, it stops once gender is at chance: after each iteration a
      fresh binary classifier (male- vs female-biased, the published family) is trained
      on the projected training words and scored on the dev words; at
      ``stop_accuracy`` (0.55) or below, it stops. ``stop_accuracy=None`` runs every
      iteration, as published;
    * the neutral words are drawn at random (seeded) among those with ``|cos| < 0.03``.

    For an attribute of ``k`` groups (``attribute=``, race or religion), the classes are
    its ``k`` groups and the neutral words (:func:`~embdebias.debias._labels.attribute_labels`:
    the words nearest each group's direction), the classifier is the same ``k + 1``-class
    ``LinearSVC``, and the stopping classifier tells the ``k`` groups apart; since chance
    is then ``1/k``, it stops at ``stop_accuracy - 1/2 + 1/k`` (the same margin over
    chance as 0.55 over 1/2; 0.383 for three groups).

    Parameters
    ----------
    n_iterations : int, default 35
    stop_accuracy : float or None, default 0.55
    binary : bool, default False
        Train on the male- and female-biased words only (2 classes, one direction per
        iteration), as RLACE's rank comparison does; default: the published 3 classes.
        For ``k`` groups: the groups' words only (``k`` classes, no neutral class).
    fraction : float, default 0.05
        Share of the filtered vocabulary in each class.
    max_words : int, default 150000
        Labels come from the first ``max_words`` words that pass the published filter.
    subspace, lists : accepted for ``embdebias run`` (the labels use ``he - she``, or the
        attribute's defining sets).
    attribute : Attribute or str, optional
        The protected attribute (:func:`embdebias.load_attribute`); not given: the attribute of a fitted
        ``subspace``, else gender (one that disagrees with the subspace's is an error).
    random_state : int, default 0
        Seed of the splits, the neutral sample and the classifiers.
    chunk_rows : int

    Attributes
    ----------
    map_ : ndarray (d, d)
        The projection ``P``.
    classifiers_ : ndarray (m, d)
        Stacked weight rows of every iteration's classifier; their row spaces were
        removed, except a classifier whose weights are all near zero (it removes
        nothing, as in the authors' code: :func:`rowspace_projection`).
    rank_removed_ : int
        ``d - rank(P)``.
    n_iterations_ : int
    history_ : list of dict
        Per iteration: the 3-class dev accuracy of its classifier, then the binary dev
        accuracy and the rank removed after its projection.
    test_accuracy_ : float
        Held-out (test split) accuracy of a fresh linear classifier of the groups (two
        for gender) after INLP.
    groups_ : tuple of str
        The groups whose labels were removed, in label order.
    n_features_in_ : int
    """

    _suffix = "inlp"
    _transient = ("history_",)
    _params_schema = {**LinearDebiaser._params_schema, "classifiers_": Array((None, "d")), "groups_": GROUPS,
                      "rank_removed_": INT, "n_iterations_": INT, "test_accuracy_": NUMBER}
    _parameter_constraints = {
        "n_iterations": [Interval(Integral, 1, None, closed="left")],
        "stop_accuracy": [Interval(Real, 0, 1, closed="both"), None],
        "binary": ["boolean"],
        "fraction": [Interval(Real, 0, 0.5, closed="right")],
        "max_words": [Interval(Integral, 2, None, closed="left")],
        "subspace": "no_validation",
        "lists": [StrOptions(set(wordlists.LIST_SETS))],
        "random_state": ["random_state"],
        "attribute": "no_validation",
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_iterations: int = 35, *, stop_accuracy: float | None = 0.55, binary: bool = False,
                 fraction: float = _labels.FRACTION, max_words: int = _labels.MAX_WORDS, subspace=None,
                 lists: str = wordlists.DEFAULT_LISTS, random_state: int = 0, attribute=None,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.n_iterations = n_iterations
        self.stop_accuracy = stop_accuracy
        self.binary = binary
        self.fraction = fraction
        self.max_words = max_words
        self.subspace = subspace
        self.lists = lists
        self.random_state = random_state
        self.attribute = attribute
        self.chunk_rows = chunk_rows

    def fit(self, embedding, y=None) -> "INLP":
        """Label the words of ``embedding``, then fit classifiers and project until chance."""
        self._validate()
        emb = as_embedding(embedding)
        labelled = _labels.protected_labels(emb, self._attribute(), self.lists, fraction=self.fraction,
                                            max_words=self.max_words, random_state=self.random_state)
        self.groups_ = labelled.groups
        X_train, y_train = labelled.split(emb, "train", binary=self.binary)
        X_dev, y_dev = labelled.split(emb, "dev", binary=self.binary)
        binary = [labelled.split(emb, part, binary=True) for part in ("train", "dev", "test")]
        P, weights, history = self._iterate(X_train, y_train, X_dev, y_dev, binary[:2], emb.dim,
                                            self._stop_threshold(labelled.n_groups))
        self.map_ = P
        self.classifiers_ = np.vstack(weights) if weights else np.zeros((0, emb.dim))
        self.rank_removed_ = int(emb.dim - np.linalg.matrix_rank(P))
        self.n_iterations_ = len(history)
        self.history_ = history
        (Xb_train, yb_train), _, (Xb_test, yb_test) = binary
        self.test_accuracy_ = linear_accuracy(Xb_train @ P, yb_train, Xb_test @ P, yb_test, self.random_state)
        self.n_features_in_ = emb.dim
        return self

    def _stop_threshold(self, n_groups: int) -> float | None:
        """``stop_accuracy`` for two groups; the same margin over chance ``1/k`` for ``k``."""
        if self.stop_accuracy is None:
            return None
        return float(self.stop_accuracy) if n_groups == 2 else float(self.stop_accuracy) - 0.5 + 1.0 / n_groups

    def _iterate(self, X_train, y_train, X_dev, y_dev, binary, dim: int, stop: float | None):
        (Xb_train, yb_train), (Xb_dev, yb_dev) = binary
        P, projections, weights, history = np.eye(dim), [], [], []
        with fit_bar(int(self.n_iterations), "[fit] inlp", "it") as bar:
            for _ in range(int(self.n_iterations)):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    clf = linear_classifier(self.random_state).fit(X_train @ P, y_train)
                accuracy = float(clf.score(X_dev @ P, y_dev))
                W = np.atleast_2d(clf.coef_)
                weights.append(W)
                projections.append(rowspace_projection(W))
                P = nullspace_projection(projections, dim)
                after = linear_accuracy(Xb_train @ P, yb_train, Xb_dev @ P, yb_dev, self.random_state)
                history.append({"accuracy": accuracy, "binary_dev_accuracy": after,
                                "rank_removed": int(dim - np.linalg.matrix_rank(P))})
                bar.update(1)
                if stop is not None and after <= stop:
                    break
        return P, weights, history

    def run_info(self, embedding: Embedding) -> dict:
        info = {"iterations": self.n_iterations_, "rank_removed": self.rank_removed_,
                "held_out_linear_accuracy": self.test_accuracy_}
        if tuple(getattr(self, "groups_", ("female", "male"))) != ("female", "male"):
            info["groups"] = len(self.groups_)
        return info
