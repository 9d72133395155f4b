"""Residual bias's RBF SVM predictions by BLAS (svm_predict): exactly libsvm's, boundary cases included."""

import numpy as np
import pytest
from sklearn.svm import SVC

from embdebias.metrics.residual import classification_accuracy, svm_predict


def _unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _spied(clf):
    """``clf`` whose ``predict`` records how many rows each call was given."""
    calls = []
    predict = clf.predict

    def spy(x):
        calls.append(len(x))
        return predict(x)

    clf.predict = spy
    return clf, calls


def _overlapping(seed, n=600, dim=20, shift=0.3):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    x = rng.normal(size=(n, dim))
    x[:, 0] += shift * (2 * labels - 1)
    return _unit(x), labels


@pytest.mark.parametrize("gamma", ["scale", "auto"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_predictions_are_libsvms_on_overlapping_classes(gamma, seed):
    x, y = _overlapping(seed)
    clf = SVC(kernel="rbf", gamma=gamma).fit(x[:200], y[:200])
    expected = clf.predict(x[200:])
    got = svm_predict(clf, x[200:])
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype
    assert 0 < np.mean(expected == y[200:]) < 1    # not a trivially separable case


@pytest.mark.parametrize("classes", [(0, 1), (1, 0), (7, -3), ("female", "male")])
def test_either_label_order_and_any_label_values(classes):
    x, y = _overlapping(3, n=400)
    named = np.array(classes)[y]
    clf = SVC(kernel="rbf").fit(x[:150], named[:150])
    np.testing.assert_array_equal(svm_predict(clf, x[150:]), clf.predict(x[150:]))


def test_support_vectors_duplicates_and_training_rows_are_predicted_as_libsvm_does():
    x, y = _overlapping(4, n=300)
    train = np.concatenate([x[:100], x[:20]])                 # duplicate training rows
    labels = np.concatenate([y[:100], 1 - y[:20]])            # ... with the opposite label: ties
    clf = SVC(kernel="rbf").fit(train, labels)
    test = np.concatenate([clf.support_vectors_, train, x[100:], x[100:110]])   # a test row equal to an SV
    np.testing.assert_array_equal(svm_predict(clf, test), clf.predict(test))


@pytest.mark.parametrize("labels", [(1, 0), (0, 1)])
def test_rows_on_the_boundary_go_to_libsvm_and_keep_its_answer(labels):
    # mirror images with opposite labels: a test row with first coordinate 0 is at the same distance
    # from each support vector and its mirror, so its decision value is 0 up to rounding (exactly 0
    # for some: libsvm's tie, which it gives to the second class)
    rng = np.random.default_rng(5)
    train = np.array([[1.0, 0, 0, 0], [-1.0, 0, 0, 0], [0.8, 0.6, 0, 0], [-0.8, 0.6, 0, 0]])
    on_plane = _unit(rng.normal(size=(40, 4)) * [0, 1, 1, 1])
    off_plane = _unit(rng.normal(size=(40, 4)))
    test = np.concatenate([on_plane, off_plane, train, on_plane[:5]])
    clf, calls = _spied(SVC(kernel="rbf").fit(train, np.array(labels * 2)))
    decision = clf.decision_function(test)
    got = svm_predict(clf, test)
    np.testing.assert_array_equal(got, SVC.predict(clf, test))
    assert np.sum(decision == 0) >= 5 and np.sum(np.abs(decision) < 1e-12) >= 45   # really on it ...
    assert sum(calls) == np.sum(np.abs(decision) < 1e-12)      # ... libsvm decided those, we the others


def test_a_decision_value_far_from_zero_is_never_sent_to_libsvm():
    x, y = _overlapping(6, shift=2.0)
    clf, calls = _spied(SVC(kernel="rbf").fit(x[:200], y[:200]))
    decision = clf.decision_function(x[200:])
    got = svm_predict(clf, x[200:])
    np.testing.assert_array_equal(got, SVC.predict(clf, x[200:]))
    assert sum(calls) <= int(np.sum(np.abs(decision) < 1e-6))


def test_blocks_of_test_rows_give_the_same_predictions(monkeypatch):
    from embdebias.metrics import residual

    x, y = _overlapping(7, n=500)
    clf = SVC(kernel="rbf").fit(x[:100], y[:100])
    monkeypatch.setattr(residual, "_SVM_ROWS", 7)
    np.testing.assert_array_equal(svm_predict(clf, x[100:]), clf.predict(x[100:]))


def test_more_than_two_classes_are_libsvms_votes():
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, 300)
    x = _unit(rng.normal(size=(300, 10)) + 0.5 * np.eye(10)[y])
    clf, calls = _spied(SVC(kernel="rbf").fit(x[:120], y[:120]))
    np.testing.assert_array_equal(svm_predict(clf, x[120:]), SVC.predict(clf, x[120:]))
    assert calls == [180]


@pytest.mark.parametrize("gamma", ["scale", "auto"])
def test_classification_accuracy_is_libsvms(gamma):
    x, y = _overlapping(9, n=700, dim=30)
    perm = np.random.default_rng(4).permutation(len(y))
    clf = SVC(kernel="rbf", gamma=gamma).fit(x[perm[:250]], y[perm[:250]])
    expected = float(np.mean(clf.predict(x[perm[250:]]) == y[perm[250:]]))
    assert classification_accuracy(x, y, 250, 4, gamma) == (expected, 450)
