"""LEACE, orth (mean projection), SAL and conceptor negation; the erasure certificate."""

import numpy as np
import pytest
import scipy.linalg
from debiaser_data import gendered_embedding

from embdebias.data.attributes import Attribute
from embdebias.debias import make_debiaser
from embdebias.debias.certificate import Moments, cross_covariance, erasure_certificate, max_cross_covariance
from embdebias.debias.conceptor import ConceptorNegation, conceptor
from embdebias.debias.inlp import INLP
from embdebias.debias.leace import LEACE, SAL, erasure_map, oas_shrinkage
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, ErasureError, MissingWordsError


def labelled(n=600, d=8, k=3, seed=0, shift=1.5):
    """Gaussian rows with correlated features and a class-dependent mean in a few directions."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    mix = rng.normal(size=(d, d))
    x = rng.normal(size=(n, d)) @ mix + shift * rng.normal(size=(k, d))[y]
    return x.astype(np.float32).astype(np.float64), y


def closed_form(x, y):
    """The paper's formula written out: W = (S^{1/2})^+, P onto colsp(W S_xz), r(x) = x - W^+ P W (x - mu)."""
    z = (y[:, None] == np.unique(y)[None, :]).astype(float)
    mu = x.mean(axis=0)
    xc, zc = x - mu, z - z.mean(axis=0)
    s_xx, s_xz = xc.T @ xc / len(x), xc.T @ zc / len(x)
    w = np.linalg.pinv(np.real(scipy.linalg.sqrtm(s_xx)))
    a = w @ s_xz
    p = a @ np.linalg.pinv(a)
    return lambda v: v - (np.linalg.pinv(w) @ p @ w @ (v - mu).T).T


@pytest.fixture(scope="module")
def data():
    return labelled()


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding(n_filler=2500, dim=20)


def test_moments_equal_two_pass_sums_whatever_the_chunks(data):
    x, y = data
    z = (y[:, None] == np.arange(3)).astype(float)
    acc = Moments(x.shape[1], 3)
    for part in np.array_split(np.arange(len(x)), [1, 7, 300]):
        acc.add(x[part], z[part])
    xc = x - x.mean(axis=0)
    assert np.abs(acc.covariance - xc.T @ xc / len(x)).max() < 1e-12
    assert np.abs(acc.cross_covariance - xc.T @ (z - z.mean(axis=0)) / len(x)).max() < 1e-12
    assert np.abs(cross_covariance(x, y) - acc.cross_covariance).max() < 1e-12


@pytest.mark.parametrize("eraser", ["leace", "orth"])
def test_the_certificate_is_zero_without_normalization_and_not_after(data, eraser):
    x, y = data
    est = LEACE(eraser).fit_vectors(x, y)
    cert = est.certificate_
    assert cert["before"] > 0.1
    assert cert["edited"] < 1e-12 * cert["before"] * 1e3
    assert max_cross_covariance(est.transform_vectors(x), y) == pytest.approx(cert["edited"], abs=1e-15)
    assert cert["normalized"] > 1e3 * cert["edited"]  # unit length is an edit of its own
    assert est.rank_removed_ == 2  # k - 1 directions for k = 3


def test_leace_equals_the_papers_closed_form(data):
    x, y = data
    est = LEACE().fit_vectors(x, y)
    assert np.abs(est.transform_vectors(x) - closed_form(x, y)(x)).max() < 1e-9


def test_leace_moves_the_fitting_words_least(data):
    # the theorem: least expected squared edit among guarded affine maps, in every p.s.d.
    # norm, the Euclidean one included: orth is guarded too and moves them more
    x, y = data
    moved = {e: np.mean(np.sum((LEACE(e).fit_vectors(x, y).transform_vectors(x) - x) ** 2, axis=1))
             for e in ("leace", "orth")}
    assert moved["leace"] < moved["orth"]


def test_the_affine_term_keeps_the_mean_and_the_edit_is_idempotent(data):
    x, y = data
    est = LEACE().fit_vectors(x, y)
    edited = est.transform_vectors(x)
    assert np.abs(edited.mean(axis=0) - x.mean(axis=0)).max() < 1e-12
    assert np.abs(est.transform_vectors(edited) - edited).max() < 1e-9  # an (oblique) projection


def test_orth_is_mean_projection():
    x, y = labelled(k=2)
    diff = x[y == 1].mean(axis=0) - x[y == 0].mean(axis=0)
    u = diff / np.linalg.norm(diff)
    est = LEACE("orth").fit_vectors(x, y)
    assert np.abs(est.map_ - (np.eye(len(u)) - np.outer(u, u))).max() < 1e-12
    assert np.abs(est.offset_ - np.outer(u, u) @ x.mean(axis=0)).max() < 1e-12


def test_sal_full_rank_is_orths_linear_part_and_fewer_directions_are_not_guarded(data):
    x, y = data
    sal = SAL().fit_vectors(x, y)
    orth = LEACE("orth").fit_vectors(x, y)
    assert np.abs(sal.map_ - orth.map_).max() < 1e-12 and not sal.offset_.any()
    one = SAL(1).fit_vectors(x, y)  # reported, not refused
    assert one.rank_removed_ == 1 and one.certificate_["edited"] > 1e-3


def test_shrinkage_keeps_the_certificate_and_oas_behaves():
    x, y = labelled(n=60, d=40, k=2)  # 30 words a group in 40 dimensions
    with pytest.raises(ErasureError, match=r"has \d+ fitting words .*fewer than the 40 .*shrinkage='oas'"):
        LEACE().fit_vectors(x, y)
    est = LEACE(shrinkage="oas").fit_vectors(x, y)
    assert 0 < est.shrinkage_ < 1 and est.certificate_["edited"] < 1e-10 * est.certificate_["before"]
    assert oas_shrinkage(np.eye(5) * 3.0, 10) == 1.0  # already spherical
    big = labelled(n=20000, d=8, k=2)[0]
    assert oas_shrinkage(np.cov(big.T, bias=True), 20000) < 1e-2


def test_fewer_than_two_groups_is_refused(data):
    x, _ = data
    with pytest.raises(ErasureError, match="at least two groups"):
        LEACE().fit_vectors(x, np.zeros(len(x)))


def test_a_certificate_missing_its_bound_is_refused():
    # the groups differ only along a direction whose variance is below the pseudo-inverse's
    # threshold: whitening cannot see it, so the eraser leaves it (numerical rank trouble)
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 200)
    x = np.hstack([rng.normal(size=(400, 4)), 1e-8 * y[:, None]])
    with pytest.raises(ErasureError, match="numerical rank trouble"):
        LEACE().fit_vectors(x, y)
    orth = LEACE("orth").fit_vectors(x, y).certificate_  # orth needs no covariance
    assert orth["edited"] < 1e-10 * orth["before"]


def test_fit_on_an_embedding_uses_the_train_and_dev_words_and_certifies(emb):
    est = LEACE().fit(emb)
    assert est.attributes_ == ["gender"] and est.groups_ == [["female", "male"]]
    assert est.certificate_["edited"] < 1e-10 * est.certificate_["before"]
    with_neutral = LEACE(neutral=True).fit(emb)
    assert with_neutral.groups_ == [["female", "male", "neutral"]] and with_neutral.rank_removed_ == 2
    assert with_neutral.n_fitting_words_ > est.n_fitting_words_
    from embdebias.debias._labels import gender_labels

    lw = gender_labels(emb)
    assert est.n_fitting_words_ == int((lw.labels[np.concatenate([lw.train, lw.dev])] >= 0).sum())
    info = est.run_info(emb)
    assert info["eraser"] == "leace" and info["certificate"] == est.certificate_["edited"]


def test_transform_is_the_affine_map_and_normalize_is_a_choice(emb):
    est = LEACE().fit(emb)
    out = est.transform(emb).vectors
    expected = est.transform_vectors(emb.vectors)
    assert np.abs(out - expected).max() < 1e-4 * np.abs(expected).max()
    assert not np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-3)
    unit = LEACE(normalize=True).fit(emb).transform(emb).vectors
    assert np.allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-5)
    lazy = est.lazy_transform(emb).take(np.arange(5, 50))
    assert np.abs(lazy - out[5:50]).max() < 1e-5


def test_params_round_trip_keeps_the_map_and_the_certificate(emb, tmp_path):
    est = LEACE(shrinkage="oas").fit(emb)
    loaded = LEACE().load_params(est.save_params(tmp_path / "p.npz"))
    assert loaded.shrinkage == "oas" and loaded.certificate_ == est.certificate_
    assert np.array_equal(loaded.transform(emb).vectors, est.transform(emb).vectors)


def two_attribute_embedding(d=10, n=80, seed=0):
    """Words of attribute A (two groups) and B (three groups), each planted along its own directions."""
    rng = np.random.default_rng(seed)
    a_dir, b_dirs = rng.normal(size=d), rng.normal(size=(3, d))
    words, vecs = [], []
    for g in range(2):
        words += [f"a{g}_{i}" for i in range(n)]
        vecs.append(rng.normal(size=(n, d)) + (2 * g - 1) * a_dir)
    for g in range(3):
        words += [f"b{g}_{i}" for i in range(n)]
        vecs.append(rng.normal(size=(n, d)) + b_dirs[g])
    emb = Embedding(words, np.vstack(vecs).astype(np.float32), name="two attributes")

    def attribute(name, prefix, k):
        groups = tuple(f"{prefix}{g}" for g in range(k))
        sets = tuple(tuple(f"{prefix}{g}_{i}" for g in range(k)) for i in range(n))
        return Attribute(name=name, groups=groups, defining_sets=sets,
                         group_words={f"{prefix}{g}": () for g in range(k)})

    return emb, attribute("A", "a", 2), attribute("B", "b", 3)


def test_several_attributes_in_one_map_are_each_certified():
    emb, a, b = two_attribute_embedding()
    both = LEACE(labels="group_words", attribute=[a, b]).fit(emb)
    assert both.attributes_ == ["A", "B"] and both.rank_removed_ == 3
    for name in ("A", "B"):
        cert = both.certificate_["attributes"][name]
        assert cert["edited"] < 1e-10 * cert["before"] and cert["n_groups"] == (2 if name == "A" else 3)
    only_a = LEACE(labels="group_words", attribute=a).fit(emb)
    b_rows = np.arange(160, 400)
    b_labels = np.repeat([0, 1, 2], 80)
    left = erasure_certificate(only_a, emb, b_rows, b_labels)
    assert left.edited > 0.1 * left.before  # erasing A alone leaves B


def test_group_words_missing_beyond_max_missing_are_refused():
    emb, a, _ = two_attribute_embedding()
    words = [w for w in emb.words if not w.startswith("a1_") or int(w.split("_")[1]) < 40]
    small = Embedding(words, emb.take(emb.words.rows(words)), name="half of a1")
    with pytest.raises(MissingWordsError, match=r"group 'a1': 40 of 80 .*max_missing 20%"):
        LEACE(labels="group_words", attribute=a).fit(small)
    assert LEACE(labels="group_words", attribute=a, max_missing=0.5).fit(small).n_fitting_words_ == 120


def test_neutral_needs_projection_labels():
    emb, a, _ = two_attribute_embedding()
    with pytest.raises(ErasureError, match="neutral=True"):
        LEACE(labels="group_words", neutral=True, attribute=a).fit(emb)


def test_the_certificate_of_another_linear_debiaser(emb):
    from embdebias.debias._labels import gender_labels

    lw = gender_labels(emb)
    at = lw.train[lw.labels[lw.train] >= 0]
    inlp = INLP().fit(emb)
    cert = erasure_certificate(inlp, emb, lw.rows[at], lw.labels[at])
    assert cert.edited is not None and cert.edited < cert.before and cert.n_groups == 2
    hard = make_debiaser("hard").fit(emb)  # not a LinearDebiaser: only its unit output is shown
    hard_cert = erasure_certificate(hard, emb, lw.rows[at], lw.labels[at])
    assert hard_cert.edited is None and hard_cert.normalized > 0


def test_conceptor_or_is_the_conceptor_of_summed_correlations():
    rng = np.random.default_rng(0)
    a1, a2 = (rng.normal(size=(50, 6)) * rng.uniform(0.2, 3, 6) for _ in range(2))
    r1, r2 = a1.T @ a1 / 50, a2.T @ a2 / 50
    c1, c2 = conceptor(r1, 1.5), conceptor(r2, 1.5)
    eye = np.eye(6)
    # Jaeger (2014): NOT C = I - C, C AND B = (C^-1 + B^-1 - I)^-1, C OR B = NOT(NOT C AND NOT B)
    both = eye - np.linalg.inv(np.linalg.inv(eye - c1) + np.linalg.inv(eye - c2) - eye)
    assert np.abs(both - conceptor(r1 + r2, 1.5)).max() < 1e-10


def test_conceptor_negation_of_the_gender_lists(emb):
    est = ConceptorNegation(aperture=2.0).fit(emb)
    assert set(est.lists_) == {"gender:female", "gender:male"}
    from embdebias.data.attributes import load_attribute
    from embdebias.debias.leace import group_word_rows

    correlation = sum(emb.take(r, np.float64).T @ emb.take(r, np.float64) / len(r)
                      for r in group_word_rows(emb, load_attribute("gender"), 0.2))
    lam, v = np.linalg.eigh(correlation)
    c = (v * (lam / (lam + 0.25))) @ v.T
    assert np.abs(est.map_ - (np.eye(emb.dim) - c)).max() < 1e-10
    out = est.transform(emb).vectors
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert 0 < est.quota_ < 1


def test_the_table_builds_them_and_refuses_several_attributes_elsewhere():
    assert type(make_debiaser("leace", eraser="orth")) is LEACE
    assert make_debiaser("sal", n_directions=2).n_directions == 2
    assert make_debiaser("conceptor", attribute="gender+race").attribute == "gender+race"
    with pytest.raises(EmbdebiasError, match="one attribute at a time.*leace, sal, conceptor"):
        make_debiaser("inlp", attribute="gender+race")
    with pytest.raises(EmbdebiasError, match="eraser must be leace or orth"):
        make_debiaser("leace", eraser="mean")
    assert erasure_map(np.zeros(3), np.eye(3), np.zeros((3, 1))).rank == 0  # nothing to erase
