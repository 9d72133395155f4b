"""Fresh probes of a concept after erasure: a linear one, an RBF-SVM and a small MLP; 2-means clustering.

The probes are scikit-learn's, with its defaults except where said:

* ``linear``: ``LogisticRegression(max_iter=2000)`` (with an intercept: LEACE's guarantee
  is for every affine classifier, so the probe may have one);
* ``rbf``: ``SVC(kernel="rbf")`` (``gamma="scale"``, ``C=1``);
* ``mlp``: ``MLPClassifier(hidden_layer_sizes=(100,), max_iter=500)``.

Each seeded by the benchmark's seed. An MLP or a logistic regression that stops at its
iteration limit is scored as it is: the limit is part of the probe, so their
``ConvergenceWarning`` is not raised (a benchmark of 40 fits would otherwise print
dozens).
"""

from __future__ import annotations

import warnings

import numpy as np

#: The probes by column name, in table order.
PROBES = ("linear", "rbf", "mlp")
#: How the table heads them.
PROBE_TITLES = {"linear": "linear (logistic)", "rbf": "RBF-SVM", "mlp": "MLP (100)"}


def probe_classifiers(seed: int) -> dict:
    """``{name: unfitted classifier}`` of :data:`PROBES`, seeded with ``seed``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC

    return {"linear": LogisticRegression(max_iter=2000, random_state=seed),
            "rbf": SVC(kernel="rbf", random_state=seed),
            "mlp": MLPClassifier(hidden_layer_sizes=(100,), max_iter=500, random_state=seed)}


def probe_accuracies(x_train, y_train, x_test, y_test, seed: int, probes=PROBES) -> dict:
    """``{probe: test accuracy}`` of fresh probes trained on ``(x_train, y_train)``."""
    from sklearn.exceptions import ConvergenceWarning

    out = {}
    for name, clf in probe_classifiers(seed).items():
        if name not in probes:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # the iteration limit is the probe's (module doc)
            out[name] = float(clf.fit(x_train, y_train).score(x_test, y_test))
    return out


def cluster_v_measure(x: np.ndarray, labels: np.ndarray, seed: int) -> float:
    """V-measure of ``KMeans(n_clusters=k, n_init=10)`` on ``x`` against ``labels`` (``k`` groups).

    Ravfogel et al.'s clustering test: 1 when the clusters are the groups, 0 when they
    say nothing about them.
    """
    from sklearn.cluster import KMeans
    from sklearn.metrics import v_measure_score

    k = len(np.unique(labels))
    found = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(x)
    return float(v_measure_score(labels, found))
