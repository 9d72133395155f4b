"""Soft debias: the reduced algebra, the solvers against cvxpy, and the estimator."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from embdebias.debias import _psd
from embdebias.debias.expand import GenderSpecificExpander
from embdebias.debias.soft import SoftDebias, unit_moments
from embdebias.embedding import Embedding
from sklearn.exceptions import NotFittedError

from embdebias.errors import DimensionError, EmbdebiasError, NonFiniteError
from embdebias.io.native import is_native


def toy_embedding(n=300, d=12, seed=0, n_gender=20, strength=2.0):
    """Random words with a planted gender direction (axis 0).

    Rows 0..9 are five (female, male) definitional pairs, rows 10..n_gender-1 are
    other gender-specific words; the neutral words carry a weaker gender component.
    """
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, d)).astype(np.float32)
    g = np.zeros(d, dtype=np.float32)
    g[0] = 1.0
    sign = np.where(np.arange(n) % 2 == 0, 1.0, -1.0).astype(np.float32)
    v[:n_gender] += strength * sign[:n_gender, None] * g
    v[n_gender:] += 0.5 * rng.standard_normal(n - n_gender).astype(np.float32)[:, None] * g
    words = [f"f{i}" if i % 2 == 0 else f"m{i}" for i in range(n_gender)] + \
        [f"w{i}" for i in range(n_gender, n)]
    pairs = [(words[i], words[i + 1]) for i in range(0, 10, 2)]
    return Embedding(words, v, name="toy"), pairs, words[:n_gender]


def unit(x):
    x = np.asarray(x, dtype=np.float64)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, n, out=np.zeros_like(x), where=n > 0)


def brute_force_terms(emb, gs_words, B, X, normalization):
    W = unit(emb.vectors).T                        # d x n
    gs = set(gs_words)
    neutral = np.array([w not in gs for w in emb.words.tolist()])
    N = W[:, neutral]
    n, k = W.shape[1], B.shape[1]
    t1 = np.sum((W.T @ X @ W - W.T @ W) ** 2)
    t2 = np.sum((N.T @ X @ B) ** 2)
    if normalization == "mean":
        return t1 / n**2, t2 / (N.shape[1] * k)
    return t1, t2


# -- algebra ------------------------------------------------------------------------


def exact_moments(emb, gs):
    """``(C, M)`` in float64 throughout: the algebra tests check the reduction, not the accumulation."""
    W = unit(np.asarray(emb.vectors, dtype=np.float64))
    neutral = np.setdiff1d(np.arange(len(emb)), emb.words.rows(gs))
    return W.T @ W, W[neutral].T @ W[neutral]


def test_moments_match_dense_products():
    emb, _, gs = toy_embedding(n=97, d=7)
    rows = emb.words.rows(gs)
    C, M = unit_moments(emb, rows, chunk_rows=10)
    W = unit(emb.vectors)
    neutral = np.setdiff1d(np.arange(len(emb)), rows)
    # float32 blocks summed in float64 (GramAccumulator): within a few float32 roundings
    scale = np.abs(W.T @ W).max()
    np.testing.assert_allclose(C, W.T @ W, atol=1e-6 * scale)
    np.testing.assert_allclose(M, W[neutral].T @ W[neutral], atol=1e-6 * scale)
    np.testing.assert_array_equal(C, C.T)


def test_moments_precision_on_many_rows():
    """The float32 block products stay within 3e-7 of the largest entry over 50,000 rows (float64 reference)."""
    rng = np.random.default_rng(4)
    vectors = (rng.standard_normal((50_000, 40)) + 0.3).astype(np.float32)
    emb = Embedding([f"w{i}" for i in range(len(vectors))], vectors)
    C, _ = unit_moments(emb)
    W = vectors.astype(np.float64)
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    exact = W.T @ W
    assert np.abs(C - exact).max() <= 3e-7 * np.abs(exact).max()


@pytest.mark.parametrize("normalization", ["mean", "sum"])
def test_reduced_objective_equals_brute_force(normalization):
    emb, pairs, gs = toy_embedding(n=60, d=6, seed=3)
    rng = np.random.default_rng(1)
    B = np.linalg.qr(rng.standard_normal((6, 2)))[0]
    C, M = exact_moments(emb, gs)
    n, nn, k, lam = len(emb), len(emb) - len(gs), 2, 0.7
    a, b = (1 / n**2, lam / (nn * k)) if normalization == "mean" else (1.0, lam)
    prob = _psd.SoftProblem.from_moments(C, M, B, a, b)
    A = rng.standard_normal((6, 6))
    X = A @ A.T / 6
    t1, t2 = brute_force_terms(emb, gs, B, X, normalization)
    r1, r2 = prob.terms(X)
    assert r1 == pytest.approx(t1, rel=1e-9)
    assert r2 == pytest.approx(lam * t2, rel=1e-9)
    # the scaled variable Y gives the same objective, and maps back to X
    Y = prob.Y_from_X(X)
    assert prob.a * prob.sigma**2 * prob.g(Y) == pytest.approx(t1 + lam * t2, rel=1e-9)
    np.testing.assert_allclose(prob.X_from_Y(Y), X, atol=1e-10)


def test_gradient_matches_finite_differences():
    emb, _, gs = toy_embedding(n=50, d=5, seed=4)
    C, M = exact_moments(emb, gs)
    B = np.linalg.qr(np.random.default_rng(0).standard_normal((5, 2)))[0]
    prob = _psd.SoftProblem.from_moments(C, M, B, 1 / 50**2, 3.0 / (30 * 2))
    rng = np.random.default_rng(2)
    Y = prob.Y_from_X(np.eye(5) + 0.1 * np.diag(rng.random(5)))
    E = rng.standard_normal((5, 5))
    E = E + E.T
    eps = 1e-6
    numeric = (prob.g(Y + eps * E) - prob.g(Y - eps * E)) / (2 * eps)
    assert numeric == pytest.approx(float(np.sum(prob.grad(Y) * E)), rel=1e-6)


def test_closed_form_is_stationary():
    emb, _, gs = toy_embedding(n=80, d=8, seed=5)
    C, M = exact_moments(emb, gs)
    B = np.linalg.qr(np.random.default_rng(0).standard_normal((8, 3)))[0]
    prob = _psd.SoftProblem.from_moments(C, M, B, 1 / 80**2, 5.0 / (60 * 3))
    Y = prob.unconstrained_minimizer()
    assert np.linalg.norm(prob.grad(Y)) < 1e-10 * np.linalg.norm(prob.S)


# -- solvers against cvxpy --------------------------------------------------------------


def random_problem(seed):
    """Small random problems of varied shape (some with an active PSD constraint)."""
    W, n_gender, B, lam = random_problem_data(seed)
    N = W[:, n_gender:]
    n, k = W.shape[1], B.shape[1]
    return _psd.SoftProblem.from_moments(W @ W.T, N @ N.T, B, 1 / n**2, lam / (N.shape[1] * k))


def random_problem_data(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 8))
    n = int(rng.integers(d + 1, 30))
    k = int(rng.integers(1, d))
    W = rng.standard_normal((d, n)) * rng.exponential(1, size=(d, 1)) ** 2
    W /= np.linalg.norm(W, axis=0)
    n_gender = int(rng.integers(0, n - 1))
    B = np.linalg.qr(rng.standard_normal((d, k)))[0]
    lam = 10 ** rng.uniform(-2, 5)
    return W, n_gender, B, lam


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 143])
@pytest.mark.parametrize("cvx", ["CLARABEL", "SCS"])
def test_fast_solver_matches_cvxpy(seed, cvx):
    prob = random_problem(seed)
    fast = _psd.solve_fast(prob)
    ref = _psd.solve_cvxpy(prob, solver=cvx)
    f_fast, f_ref = prob.objective(fast.X), prob.objective(ref.X)
    f_start = prob.objective(np.eye(prob.dim))      # the objective at X = I
    assert fast.status == "optimal"
    # Agreement to 1e-8 of the objective's starting value (the optimum itself can be
    # ~1e-9 of it at large lambda, where cvxpy's own accuracy is the limit), and fast
    # is never worse than the reference beyond that.
    assert abs(f_fast - f_ref) <= 1e-8 * f_start
    assert f_fast <= f_ref + 1e-9 * f_start
    assert np.linalg.eigvalsh(fast.X)[0] >= -1e-9


def test_admm_path_is_exercised_and_correct():
    """Seed 1 and 143 have a non-PSD unconstrained minimiser: the ADMM path runs."""
    for seed in (1, 143):
        prob = random_problem(seed)
        assert np.linalg.eigvalsh(prob.unconstrained_minimizer())[0] < 0
        fast = _psd.solve_fast(prob)
        assert fast.iterations > 0 and "ADMM" in fast.extra["method"]
        assert np.linalg.eigvalsh(fast.Y)[0] >= -1e-12


def test_naive_dense_formulation_agrees():
    emb, pairs, gs = toy_embedding(n=120, d=6, seed=6)
    C, M = exact_moments(emb, gs)
    B = np.eye(6)[:, :1]
    prob = _psd.SoftProblem.from_moments(C, M, B, 1 / 120**2, 0.5 / 100)
    naive = _psd.solve_naive_cvxpy(prob, solver="CLARABEL")
    fast = _psd.solve_fast(prob)
    assert prob.objective(fast.X) == pytest.approx(prob.objective(naive.X), rel=1e-6)
    np.testing.assert_allclose(fast.X, naive.X, atol=1e-4)


# -- the estimator --------------------------------------------------------------------------


def fit_toy(lam=0.2, seed=0, **kw):
    emb, pairs, gs = toy_embedding(seed=seed)
    kw.setdefault("gender_specific", gs)
    sd = SoftDebias(lam, subspace=pairs, **kw).fit(emb)
    return emb, sd, gs


def neutral_projection(emb, out, sd, gs):
    rows = np.setdiff1d(np.arange(len(emb)), emb.words.rows(gs))
    return float(np.mean(np.abs(unit(out.vectors[rows]) @ sd.components_.T)))


def test_fit_transform_outputs_and_attributes():
    emb, sd, gs = fit_toy()
    out = sd.transform(emb)
    assert out is not emb and out.shape == emb.shape
    np.testing.assert_allclose(np.linalg.norm(out.vectors, axis=1), 1.0, atol=1e-5)
    X, T = sd.X_, sd.transform_matrix_
    assert np.linalg.eigvalsh(X)[0] >= -1e-10
    np.testing.assert_allclose(T, T.T)
    np.testing.assert_allclose(T @ T, X, atol=1e-10)
    info = sd.solve_info_
    for key in ("solver", "status", "iterations", "seconds", "objective_before", "objective_after"):
        assert key in info
    assert info["status"] == "optimal"
    assert info["objective_before"]["inner_products"] == 0.0
    assert info["objective_after"]["total"] < info["objective_before"]["total"]
    assert info["objective_after"]["bias"] < info["objective_before"]["bias"]
    assert sd.gender_specific_ == gs and sd.gender_specific_missing_ == []
    # bias of neutral words drops
    assert neutral_projection(emb, out, sd, gs) < neutral_projection(emb, emb, sd, gs)


def test_fit_objective_matches_brute_force():
    emb, sd, gs = fit_toy(lam=0.4)
    B = sd.components_.T
    t1, t2 = brute_force_terms(emb, gs, B, sd.X_, "mean")
    after = sd.solve_info_["objective_after"]
    # the fit's moments are float32 block products summed in float64 (GramAccumulator)
    assert after["inner_products"] == pytest.approx(t1, rel=1e-6)
    assert after["bias"] == pytest.approx(0.4 * t2, rel=1e-6)


def test_cvxpy_solver_agrees_with_fast():
    emb, fast, _ = fit_toy(lam=0.5)
    _, ref, _ = fit_toy(lam=0.5, solver="cvxpy", cvxpy_solver="CLARABEL")
    assert ref.solve_info_["solver"] == "cvxpy/CLARABEL"
    f, r = fast.solve_info_["objective_after"]["total"], ref.solve_info_["objective_after"]["total"]
    assert f == pytest.approx(r, rel=1e-6)
    np.testing.assert_allclose(fast.X_, ref.X_, atol=1e-5)


def test_lambda_zero_preserves_inner_products():
    emb, sd, _ = fit_toy(lam=0.0)
    T = sd.transform_matrix_
    np.testing.assert_allclose(T.T @ T, np.eye(emb.dim), atol=1e-10)
    out = sd.transform(emb)
    W = unit(emb.vectors)
    np.testing.assert_allclose(out.vectors @ out.vectors.T, W @ W.T, atol=1e-5)


def test_large_lambda_approaches_neutralize():
    emb, pairs, gs = toy_embedding(seed=1)
    projections = []
    for lam in (0.0, 1.0, 100.0, 1e5):
        sd = SoftDebias(lam, subspace=pairs, gender_specific=gs).fit(emb)
        projections.append(neutral_projection(emb, sd.transform(emb), sd, gs))
    assert all(b < a for a, b in zip(projections, projections[1:]))
    assert projections[0] > 0.1
    assert projections[-1] < 1e-3


def test_plain_sums_barely_change_a_larger_vocabulary():
    emb, pairs, gs = toy_embedding(n=3000, d=10, seed=2)
    out = {}
    for norm in ("mean", "sum"):
        sd = SoftDebias(0.2, normalization=norm, subspace=pairs, gender_specific=gs).fit(emb)
        out[norm] = neutral_projection(emb, sd.transform(emb), sd, gs)
    before = neutral_projection(emb, emb, sd, gs)
    assert out["mean"] < 0.7 * before
    assert out["sum"] > 0.99 * before


def test_zero_vectors_stay_zero_and_rank_deficient_input():
    # n < d: C is singular; X must be the identity on its null space
    rng = np.random.default_rng(0)
    v = rng.standard_normal((8, 12)).astype(np.float32)
    v[5] = 0.0
    emb = Embedding([f"w{i}" for i in range(8)], v)
    sd = SoftDebias(0.5, subspace=v[:1] / np.linalg.norm(v[:1]), gender_specific=["w0"]).fit(emb)
    assert sd.solve_info_["rank"] == 7
    null = np.linalg.svd(unit(v), full_matrices=True)[2][7:].T   # basis of the null space
    np.testing.assert_allclose(sd.X_ @ null, null, atol=1e-6)  # C: float32 block products
    out = sd.transform(emb)
    assert np.all(out.vectors[5] == 0)
    np.testing.assert_allclose(np.linalg.norm(out.vectors[[0, 1, 2, 3, 4, 6, 7]], axis=1), 1, atol=1e-5)


def test_transform_to_native_path_and_chunks(tmp_path):
    emb, sd, _ = fit_toy()
    mem = sd.set_params(chunk_rows=7).transform(emb)
    path = tmp_path / "soft.embd"
    disk = sd.set_params(chunk_rows=64).transform(emb, out=path)
    assert is_native(path)
    assert disk.words.tolist() == emb.words.tolist()
    # Not bit for bit: OpenBLAS picks its sgemm kernel (and so its summation order) by the
    # number of rows, so a 7-row and a 64-row chunk can differ in the last float32 bit on
    # some processors (seen with OPENBLAS_CORETYPE=Haswell). A given chunk size is
    # reproducible; across chunk sizes the rows agree to an ulp.
    np.testing.assert_allclose(np.asarray(disk.vectors), mem.vectors, rtol=0, atol=3e-7)


def test_accepts_gensim_keyed_vectors():
    emb, pairs, gs = toy_embedding()
    kv = emb.to_gensim()
    a = SoftDebias(0.3, subspace=pairs, gender_specific=gs).fit(kv)
    b = SoftDebias(0.3, subspace=pairs, gender_specific=gs).fit(emb)
    np.testing.assert_allclose(a.X_, b.X_, atol=1e-12)
    assert a.transform(kv).shape == emb.shape


def test_missing_gender_specific_words_are_reported():
    emb, pairs, gs = toy_embedding()
    sd = SoftDebias(subspace=pairs, gender_specific=gs + ["nosuchword"]).fit(emb)
    assert sd.gender_specific_missing_ == ["nosuchword"]
    assert sd.solve_info_["n_neutral"] == len(emb) - len(gs)


def test_with_svm_expansion_is_deterministic():
    emb, pairs, gs = toy_embedding(n=400, seed=7)
    seed = gs[:14]  # the expander should find the rest

    def run():
        sd = SoftDebias(0.2, subspace=pairs, random_state=3,
                        gender_specific=GenderSpecificExpander(seed, n_train=300, cv=3, random_state=3))
        sd.fit(emb)
        return sd, sd.transform(emb)

    a, out_a = run()
    b, out_b = run()
    assert a.expansion_ is not None and set(seed) <= set(a.gender_specific_)
    assert a.gender_specific_ == b.gender_specific_
    np.testing.assert_array_equal(a.X_, b.X_)
    np.testing.assert_array_equal(out_a.vectors, out_b.vectors)


def test_fitted_subspace_and_array_basis():
    from embdebias.subspace import BiasSubspace

    emb, pairs, gs = toy_embedding()
    sub = BiasSubspace(pairs, n_components=2).fit(emb)
    a = SoftDebias(subspace=sub, gender_specific=gs).fit(emb)
    b = SoftDebias(subspace=sub.components_, gender_specific=gs).fit(emb)
    assert a.components_.shape == (2, emb.dim) and a.subspace_ is sub
    np.testing.assert_allclose(a.X_, b.X_, atol=1e-12)


def test_bad_parameters_raise():
    emb, pairs, gs = toy_embedding()
    with pytest.raises(EmbdebiasError):
        SoftDebias(-1.0, subspace=pairs, gender_specific=gs).fit(emb)
    with pytest.raises(EmbdebiasError):
        SoftDebias(normalization="median", subspace=pairs, gender_specific=gs).fit(emb)
    with pytest.raises(EmbdebiasError):
        SoftDebias(solver="magic", subspace=pairs, gender_specific=gs).fit(emb)
    with pytest.raises(NotFittedError):
        SoftDebias().transform(emb)
    sd = SoftDebias(subspace=pairs, gender_specific=gs).fit(emb)
    other = Embedding(["a", "b"], np.ones((2, emb.dim + 1)))
    with pytest.raises(DimensionError):
        sd.transform(other)
    with pytest.raises(DimensionError):
        SoftDebias(subspace=np.ones((1, emb.dim + 1)), gender_specific=gs).fit(emb)


def test_report_mentions_solver_and_objectives():
    _, sd, _ = fit_toy()
    text = sd.report()
    assert "fast" in text and "objective before" in text and "objective after" in text


def test_estimator_uses_admm_when_needed_and_warns_on_non_convergence():
    from sklearn.exceptions import ConvergenceWarning

    W, n_gender, B, lam = random_problem_data(1)     # closed form not PSD for this one
    words = [f"w{i}" for i in range(W.shape[1])]
    emb = Embedding(words, W.T)
    kw = dict(subspace=B.T, gender_specific=words[:n_gender])
    sd = SoftDebias(lam, **kw).fit(emb)
    assert "ADMM" in sd.solve_info_["method"] and sd.solve_info_["iterations"] > 0
    ref = _psd.solve_cvxpy(random_problem(1), solver="CLARABEL")
    assert sd.solve_info_["objective_after"]["total"] == pytest.approx(
        random_problem(1).objective(ref.X), rel=1e-6)
    with pytest.warns(ConvergenceWarning):
        SoftDebias(lam, max_iter=2, **kw).fit(emb)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SoftDebias(lam, **kw).fit(emb)


def test_definitional_pairs_and_case_variants():
    emb, pairs, gs = toy_embedding()
    words = emb.words.tolist()
    words[50] = "F0"          # a Title-case variant of the gender-specific word "f0"
    emb2 = Embedding(words, emb.vectors)
    on = SoftDebias(definitional=pairs, gender_specific=gs, case_variants=True).fit(emb2)
    off = SoftDebias(definitional=pairs, gender_specific=gs).fit(emb2)  # the list as given
    assert "F0" in on.gender_specific_ and "F0" not in off.gender_specific_
    assert on.solve_info_["n_neutral"] == off.solve_info_["n_neutral"] - 1
    assert on.subspace_.pairs_used_ == pairs


def test_make_debiaser_builds_soft():
    from embdebias.debias.api import make_debiaser

    emb, pairs, gs = toy_embedding()
    sd = make_debiaser("soft", definitional=pairs, gender_specific=gs, lam=0.3)
    out = sd.fit(emb).transform(emb, progress=False)
    assert isinstance(sd, SoftDebias) and sd.lam == 0.3 and out.shape == emb.shape


def test_gram_shared_with_another_pass_gives_the_same_fit():
    """The moments accumulated during hard debias's pass (what `run` does) give soft debias the same T."""
    from embdebias.debias import HardDebias
    from embdebias.debias.soft import GramAccumulator

    emb, pairs, gs = toy_embedding(n=120, d=8, seed=5)
    acc = GramAccumulator(emb.dim, name=emb.name, words=emb.words)
    hard = HardDebias(definitional=pairs, gender_specific=gs, equalize=[], chunk_rows=7).fit(emb)
    shared = hard.transform(emb, also=acc.add)
    np.testing.assert_array_equal(shared.vectors, hard.transform(emb).vectors)
    assert acc.rows_seen == len(emb)
    own = SoftDebias(0.5, definitional=pairs, gender_specific=gs).fit(emb)
    given = SoftDebias(0.5, definitional=pairs, gender_specific=gs).fit(emb, gram=acc.result())
    # blocks cut at other rows round differently (float32 block products): equal to float32 precision
    np.testing.assert_allclose(given.transform_matrix_, own.transform_matrix_, atol=1e-6)


def test_gram_accumulator_names_the_non_finite_word():
    from embdebias.debias.soft import GramAccumulator

    emb, _, _ = toy_embedding(n=30, d=4)
    block = np.array(emb.vectors[:30])
    block[17, 2] = np.nan
    acc = GramAccumulator(4, name="toy", words=emb.words)
    with pytest.raises(NonFiniteError, match=rf"row 17.*{emb.words[17]}|{emb.words[17]}.*row 17"):
        acc.add(0, block)


def test_cvxpy_is_optional(monkeypatch):
    """Without cvxpy (an extra) the reference path says how to install it; 'fast' needs none."""
    import builtins

    from embdebias.errors import SolverError

    real_import = builtins.__import__

    def no_cvxpy(name, *args, **kwargs):
        if name == "cvxpy" or name.startswith("cvxpy."):
            raise ImportError("No module named 'cvxpy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cvxpy)
    with pytest.raises(SolverError, match=r"embdebias\[reference\]"):
        _psd.solve_cvxpy(random_problem(1), solver="CLARABEL")
    _psd.solve_fast(random_problem(1))  # the default solver does not need it
