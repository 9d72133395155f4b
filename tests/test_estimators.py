"""The estimators keep scikit-learn's contract: parameters, clone, NotFittedError, Pipeline."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import sklearn
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.utils import estimator_checks

from embdebias.debias import GenderSpecificExpander, HardDebias, SoftDebias
from embdebias.embedding import Embedding
from embdebias.subspace import BiasSubspace

PAIRS = [("she", "he"), ("woman", "man"), ("girl", "boy"), ("mother", "father")]
SPECIFIC = [w for p in PAIRS for w in p] + ["queen", "king"]
EQUALIZE = [("queen", "king")]


def planted(n_neutral=60, d=12, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.normal(size=d)
    g /= np.linalg.norm(g)
    words, vecs = [], []
    for f, m in PAIRS + EQUALIZE:
        base = rng.normal(size=d)
        words += [f, m]
        vecs += [base + 2 * g, base - 2 * g + 0.1 * rng.normal(size=d)]
    for i in range(n_neutral):
        words.append(f"x{i}")
        vecs.append(rng.normal(size=d) + rng.normal() * g)
    return Embedding(words, np.array(vecs, dtype=np.float32), name="planted")


def estimators():
    return [BiasSubspace(PAIRS), HardDebias(definitional=PAIRS, equalize=EQUALIZE, gender_specific=SPECIFIC),
            SoftDebias(0.3, definitional=PAIRS, gender_specific=SPECIFIC), GenderSpecificExpander(SPECIFIC)]


CHECKS = ["check_parameters_default_constructible", "check_no_attributes_set_in_init",
          "check_get_params_invariance", "check_set_params", "check_estimator_repr",
          "check_do_not_raise_errors_in_init_or_set_params"]


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("est", estimators(), ids=lambda e: type(e).__name__)
def test_sklearn_checks_that_apply(est, check):
    # The remaining sklearn checks feed numeric arrays to fit; ours take embeddings.
    if not hasattr(estimator_checks, check):  # newer than the lowest scikit-learn we support
        pytest.skip(f"scikit-learn {sklearn.__version__} has no {check}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(estimator_checks, check)(type(est).__name__, est)


@pytest.mark.parametrize("est", estimators(), ids=lambda e: type(e).__name__)
def test_params_verbatim_clone_and_repr(est):
    params = est.get_params()
    twin = clone(est)
    assert twin is not est and twin.get_params() == params
    for key, value in params.items():
        assert getattr(est, key) is value  # kept verbatim, not copied or converted
    assert type(est).__name__ + "(" in repr(est)


def test_not_fitted_errors():
    emb = planted()
    for est in (HardDebias(), SoftDebias()):
        with pytest.raises(NotFittedError):
            est.transform(emb)
    with pytest.raises(NotFittedError):
        BiasSubspace().direction_
    with pytest.raises(NotFittedError):
        BiasSubspace().project(np.ones((1, 3)))


def test_one_transform_signature():
    hard = inspect.signature(HardDebias.transform)
    assert hard == inspect.signature(SoftDebias.transform)
    assert list(hard.parameters) == ["self", "embedding", "out", "progress", "name", "also"]


def test_fit_leaves_the_estimators_passed_in_unchanged():
    emb = planted()
    sub = BiasSubspace(PAIRS)
    hd = HardDebias(sub, equalize=EQUALIZE, gender_specific=SPECIFIC).fit(emb)
    assert not hasattr(sub, "components_") and hd.subspace_ is not sub
    assert hd.get_params()["subspace"] is sub
    expander = GenderSpecificExpander(SPECIFIC, n_train=40, cv=None, target_precision=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sd = SoftDebias(0.3, subspace=sub, gender_specific=expander).fit(emb)
    assert not hasattr(expander, "result_") and sd.expansion_ is not None
    fitted = BiasSubspace(PAIRS).fit(emb)
    assert HardDebias(fitted, equalize=EQUALIZE, gender_specific=SPECIFIC).fit(emb).subspace_ is fitted


def test_pipeline_fit_transform_and_set_params():
    emb = planted()
    pipe = Pipeline([("soft", SoftDebias(0.3, definitional=PAIRS, gender_specific=SPECIFIC)),
                     ("hard", HardDebias(definitional=PAIRS, equalize=EQUALIZE, gender_specific=SPECIFIC))])
    out = pipe.fit(emb).transform(emb)
    assert out.shape == emb.shape
    again = pipe.fit_transform(emb)
    np.testing.assert_allclose(again.vectors, out.vectors, atol=1e-6)
    pipe.set_params(soft__lam=0.0)
    assert pipe.named_steps["soft"].lam == 0.0
    assert clone(pipe).named_steps["hard"].get_params() == pipe.named_steps["hard"].get_params()


@pytest.mark.parametrize("cls", [HardDebias, SoftDebias])
def test_out_array_and_fit_transform_out(cls, tmp_path):
    emb = planted()
    est = cls(definitional=PAIRS, gender_specific=SPECIFIC)
    mem = est.fit_transform(emb)
    buf = np.empty(emb.shape, dtype=np.float32)
    res = est.transform(emb, buf)
    assert np.shares_memory(res.vectors, buf)
    np.testing.assert_array_equal(buf, mem.vectors)
    disk = est.fit_transform(emb, out=tmp_path / "x.embd")
    np.testing.assert_array_equal(np.asarray(disk.vectors), mem.vectors)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(5, 60), d=st.integers(6, 24), k=st.integers(1, 2))
def test_hard_debias_properties(seed, n, d, k):
    emb = planted(n_neutral=n, d=d, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hd = HardDebias(definitional=PAIRS, equalize=EQUALIZE, gender_specific=SPECIFIC,
                        n_components=k, chunk_rows=7).fit(emb)
    out = hd.transform(emb)
    B = hd.subspace_.components_
    neutral = [w for w in emb.words if w.startswith("x")]
    assert np.abs(out[neutral] @ B.T).max() < 1e-4
    np.testing.assert_allclose(out.norms(), 1.0, atol=1e-5)
    qa, ka = out["queen"].astype(np.float64), out["king"].astype(np.float64)
    np.testing.assert_allclose(B @ qa, -(B @ ka), atol=1e-5)  # symmetric about the subspace


@settings(max_examples=15, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31 - 1), lam=st.floats(0.0, 5.0))
def test_soft_debias_properties(seed, lam):
    emb = planted(seed=seed)
    sd = SoftDebias(lam, definitional=PAIRS, gender_specific=SPECIFIC).fit(emb)
    out = sd.transform(emb)
    np.testing.assert_allclose(out.norms(), 1.0, atol=1e-5)
    after = sd.solve_info_["objective_after"]["total"]
    before = sd.solve_info_["objective_before"]["total"]
    assert after <= before + 1e-12  # the identity is feasible: the optimum is no worse
    if lam == 0.0:
        np.testing.assert_allclose(out.vectors, emb.normalize().vectors, atol=1e-5)
