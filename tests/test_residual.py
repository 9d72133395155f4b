"""Residual bias (Gonen & Goldberg), re-fitted direction, indirect bias and generated analogies.

Every test uses a small constructed embedding whose answer is known: gender planted
in two directions so that removing the first leaves the second, gender removed from
both, pairs planted exactly along the seed direction, and so on.
"""

import json
from string import ascii_lowercase

import numpy as np
import pytest
from synthetic import synthetic_embedding

from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError
from embdebias.metrics import direct_bias, gender_analogies, indirect_bias, refit_direction_bias, residual_bias
from embdebias.metrics.residual import _count_top, _lower_bounds, neighbour_fractions
from embdebias.subspace import BiasSubspace

SIZES = {"n_candidates": 2500, "n_cluster": 100, "n_classify": 300, "n_train": 200, "n_neighbours": 20}
#: Non-alphabetic and gender-specific words planted among the most gendered ones.
NON_ALPHA = ["ab1", "x-y", "co.op", "m_n"]
SPECIFIC = ["kinga", "queena"]


def _word(i: int) -> str:
    """A distinct lower-case alphabetic word for every i (never 'he' or 'she')."""
    out = ""
    i += 26**3
    while i:
        i, r = divmod(i, 26)
        out += ascii_lowercase[r]
    return out


def _planted(n=3000, dim=16, seed=0):
    """Gender ``s`` in [-1, 1] planted along e0 *and* e1; ``he - she`` points along e0.

    Row 0/1 are he/she, rows 2..5 are non-alphabetic words and rows 6..7 gender-specific
    ones, all strongly gendered; the words after row 2,500 are outside the candidates.
    """
    rng = np.random.default_rng(seed)
    words = ["he", "she"] + NON_ALPHA + SPECIFIC + [_word(i) for i in range(n - 8)]
    s = rng.uniform(-1, 1, n)
    s[2:8] = [1, -1, 1, -1, 1, -1]
    s[2600:2620] = 1.5          # beyond n_candidates: most male, never candidates
    vecs = rng.normal(0, 0.35, (n, dim))
    vecs[:, 0] = 1.5 * s
    vecs[:, 1] = 1.5 * s
    vecs[0] = 0.0
    vecs[1] = 0.0
    vecs[0, [0, 2]] = [1.0, 1.0]
    vecs[1, [0, 2]] = [-1.0, 1.0]
    return Embedding(words, vecs.astype(np.float32), name="planted")


def _zeroed(emb, columns, name):
    vecs = np.array(emb.vectors)
    vecs[2:, columns] = 0.0      # he and she stay: they define the original bias only
    return Embedding(emb.words, vecs, name=name)


@pytest.fixture(scope="module")
def planted():
    return _planted()


def _run(original, tested, **kw):
    return residual_bias(original, tested, gender_specific=SPECIFIC + ["he", "she"], **{**SIZES, **kw})


def test_gender_in_a_second_direction_survives(planted):
    before = _run(planted, planted)
    after = _run(planted, _zeroed(planted, [0], "e0 removed"))
    assert before.cluster_accuracy == 1.0 and before.classification_accuracy >= 0.97
    assert before.neighbour_correlation > 0.8
    # The he - she direction (e0) is gone, the gender is still there along e1.
    assert after.cluster_accuracy >= 0.97
    assert after.classification_accuracy >= 0.9
    assert after.neighbour_correlation > 0.7
    assert after.value == after.cluster_accuracy and after.n_scored == 200


def test_gender_truly_gone(planted):
    gone = _run(planted, _zeroed(planted, [0, 1], "e0 and e1 removed"))
    assert 0.5 <= gone.cluster_accuracy < 0.65
    assert gone.classification_accuracy < 0.65
    assert abs(gone.neighbour_correlation) < 0.15


def test_word_sets_follow_the_protocol(planted):
    res = _run(planted, planted)
    words = planted.words.tolist()
    v = np.array(planted.vectors, dtype=np.float64)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    direction = v[0] - v[1]
    direction /= np.linalg.norm(direction)
    cand = [i for i in range(2500) if words[i].isalpha() and words[i] not in SPECIFIC + ["he", "she"]]
    bias = v[cand] @ direction
    male = [words[cand[i]] for i in np.argsort(-bias)[:300]]
    female = [words[cand[i]] for i in np.argsort(bias)[:300]]
    assert res.classify_words == {"male": male, "female": female}
    assert res.cluster_words == {"male": male[:100], "female": female[:100]}
    used = set(male) | set(female)
    assert not used & set(NON_ALPHA + SPECIFIC + ["he", "she"])
    assert not used & set(words[2500:])          # the planted extremes beyond n_candidates
    assert res.n_candidates == len(cand) and res.n_train == 200 and res.n_test == 400
    assert res.missing == {"candidates": [], "clustering": [], "classification": []}
    # The default gender-specific list is the published one, matched as written.
    default = residual_bias(planted, planted, **SIZES)
    assert "kinga" in default.classify_words["male"]


def test_shuffled_rows_and_native_files_give_identical_results(planted, tmp_path):
    tested = _zeroed(planted, [0], "hard-like")
    perm = np.random.default_rng(1).permutation(len(tested))
    words = tested.words.tolist()
    shuffled = Embedding([words[i] for i in perm], np.asarray(tested.vectors)[perm], name="shuffled")
    a, b = _run(planted, tested), _run(planted, shuffled)
    assert a.to_dict() == b.to_dict()
    planted.save(tmp_path / "orig.embd")
    tested.save(tmp_path / "tested.embd")
    from embdebias.io import load

    c = _run(load(tmp_path / "orig.embd"), load(tmp_path / "tested.embd"))
    assert c.to_dict() == a.to_dict()


def test_missing_words_are_left_out_and_counted(planted):
    tested = _zeroed(planted, [0], "hard-like")
    full = _run(planted, tested)
    words = tested.words.tolist()
    used = set(full.classify_words["male"] + full.classify_words["female"])
    others = [w for w in words[1000:1500] if w not in used][:100]     # candidates, not classified
    drop = set(full.classify_words["male"][:20]) | set(others)
    keep = [i for i, w in enumerate(words) if w not in drop]
    partial = Embedding([words[i] for i in keep], np.asarray(tested.vectors)[keep], name="partial")
    res = _run(planted, partial)
    assert sorted(res.missing["candidates"]) == sorted(w for w in drop if w.isalpha())
    assert len(res.missing["candidates"]) == 120
    assert res.missing["classification"] == full.classify_words["male"][:20]
    assert res.missing["clustering"] == full.cluster_words["male"][:20]
    assert len(res.classify_words["male"]) == 280 and res.n_scored == 180
    assert res.n_test == 580 - 200 and res.n_candidates == full.n_candidates - 120
    assert res.cluster_accuracy >= 0.97


def test_too_many_missing_words_raise_with_a_count(planted):
    tested = _zeroed(planted, [0], "hard-like")
    full = _run(planted, tested)
    words = tested.words.tolist()
    # 30% of the classification words missing: an error that says how many.
    drop = set(full.classify_words["female"][100:280])      # none of them clustered
    keep = [i for i, w in enumerate(words) if w not in drop]
    lossy = Embedding([words[i] for i in keep], np.asarray(tested.vectors)[keep], name="lossy")
    with pytest.raises(MissingWordsError, match=r"180 of 600 classification words .* lossy") as info:
        _run(planted, lossy)
    assert len(info.value.missing) == 180
    res = _run(planted, lossy, max_missing=0.5)
    assert len(res.missing["classification"]) == 180


def test_same_seed_same_numbers(planted):
    tested = _zeroed(planted, [0], "hard-like")
    a, b = _run(planted, tested, random_state=3), _run(planted, tested, random_state=3)
    assert a.to_dict() == b.to_dict()
    assert a.random_state == 3
    text = json.dumps(a.to_dict(), allow_nan=False)
    assert json.loads(text)["value"] == a.cluster_accuracy


def test_tested_may_have_another_dimension(planted):
    """Matching is by word, so a tested embedding of another dimension is fine."""
    rng = np.random.default_rng(5)
    proj = rng.normal(size=(planted.dim, 10))
    other = Embedding(planted.words, np.asarray(planted.vectors) @ proj, name="10-d")
    res = _run(planted, other)
    assert res.cluster_accuracy >= 0.9 and res.n_candidates > 2000


def test_bad_input(planted):
    with pytest.raises(EmbdebiasError, match="n_train"):
        _run(planted, planted, n_train=600)
    with pytest.raises(EmbdebiasError, match="candidate words"):
        _run(planted, planted, n_classify=1500)
    with pytest.raises(EmbdebiasError, match="n_cluster"):
        _run(planted, planted, n_cluster=0)
    with pytest.raises(MissingWordsError, match="direction words"):
        _run(planted, planted, direction_words=("hex", "she"))
    with pytest.raises(EmbdebiasError, match="n_neighbours"):
        _run(planted, planted, n_neighbours=5000)


def test_the_original_plan_is_chosen_once_per_original_and_the_results_are_the_same(planted, monkeypatch):
    """With a cache (evaluate passes its context's), what is chosen on the original alone is chosen on
    the first call only, for this very original object and these parameters; every result is the
    one computed without it, whether the tested column is the original, another, a shuffled copy or
    one missing words; the kept arrays are read-only (every column's plan shares them)."""
    from embdebias.metrics import residual

    tested = _zeroed(planted, [0], "hard-like")
    words = tested.words.tolist()
    keep = [i for i, w in enumerate(words) if i % 50 != 7]
    partial = Embedding([words[i] for i in keep], np.asarray(tested.vectors)[keep], name="partial")
    perm = np.random.default_rng(2).permutation(len(tested))
    shuffled = Embedding([words[i] for i in perm], np.asarray(tested.vectors)[perm], name="shuffled")
    columns = [planted, tested, partial, shuffled]
    small = {"n_cluster": 50, "n_classify": 150, "n_train": 100, "n_neighbours": 10}
    expected = [_run(planted, column, **small).to_dict() for column in columns]
    calls = []
    choose = residual._choose
    monkeypatch.setattr(residual, "_choose", lambda *a, **kw: calls.append(a[0]) or choose(*a, **kw))
    cache = {}
    assert [_run(planted, column, cache=cache, **small).to_dict() for column in columns] == expected
    assert calls == [planted] and len(cache) == 1
    (kept_original, plan), = cache.values()
    assert kept_original is planted and not plan.bias.flags.writeable and not plan.cluster[0].flags.writeable
    _run(planted, tested, cache=cache, **{**small, "n_classify": 140})   # other parameters: chosen again
    same_words = Embedding(planted.words, np.asarray(planted.vectors) * 2, name="another original")
    assert _run(same_words, tested, cache=cache, **small).to_dict() == expected[1]   # another object: chosen again
    assert calls == [planted, planted, same_words] and len(cache) == 2


def test_rows_by_word_matches_word_by_word():
    """The tested rows of the candidates: the same row where the other vocabulary holds the same word
    there, else its row by lookup, -1 if absent, also past the other vocabulary's end."""
    from embdebias.metrics.residual import rows_by_word

    reference = Embedding(["a", "b", "c", "d", "e"], np.eye(5, dtype=np.float32))
    other = Embedding(["a", "c", "b"], np.eye(3, dtype=np.float32))
    words, rows = ["a", "b", "c", "e"], np.array([0, 1, 2, 4])
    assert rows_by_word(reference, other, words, rows).tolist() == [0, 2, 1, -1]
    assert rows_by_word(reference, reference, words, rows).tolist() == [0, 1, 2, 4]
    assert rows_by_word(reference, other, [], np.array([], dtype=np.int64)).tolist() == []


def _naive_fractions(cand, queries, marked, k):
    sims = cand[queries] @ cand.T
    sims[np.arange(len(queries)), queries] = -np.inf
    top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    return marked[top].mean(axis=1)


def test_neighbour_fractions_match_a_full_sort_in_any_block_size():
    rng = np.random.default_rng(2)
    cand = rng.normal(size=(400, 6)).astype(np.float32)
    cand /= np.linalg.norm(cand, axis=1, keepdims=True)
    marked = rng.random(400) < 0.4
    queries = rng.choice(400, 90, replace=False)
    expected = _naive_fractions(cand.astype(np.float64), queries, marked, 15)
    for rows in (1, 7, None):
        got = neighbour_fractions(cand, queries, marked, 15, block_rows=rows)
        np.testing.assert_allclose(got, expected, atol=1e-12)


def test_neighbour_ties_share_the_boundary():
    """Two identical candidates tie for the last place: each counts one half."""
    cand = np.array([[1, 0], [0.95, np.sqrt(1 - 0.95**2)], [0.9, np.sqrt(1 - 0.81)], [0.9, np.sqrt(1 - 0.81)],
                     [0, 1], [-1, 0]], dtype=np.float32)
    for marked, expected in (([0, 1, 1, 0, 0, 0], 0.75), ([0, 1, 0, 1, 0, 0], 0.75),
                             ([0, 0, 1, 1, 0, 0], 0.5), ([0, 1, 1, 1, 0, 0], 1.0)):
        got = neighbour_fractions(cand, np.array([0]), np.array(marked, dtype=bool), 2)
        assert got[0] == pytest.approx(expected)


def _top_count_by_sorting(sims: np.ndarray, k: int, labels: np.ndarray, n_counted: int) -> np.ndarray:
    """Per row and label, the count among the k largest, ties at the boundary shared in proportion."""
    out = np.empty((sims.shape[0], n_counted))
    for i, row in enumerate(sims):
        kth = np.sort(row)[-k]
        above, equal = row > kth, row == kth
        for j in range(n_counted):
            out[i, j] = (above & (labels == j)).sum() + (k - above.sum()) * (equal & (labels == j)).sum() / equal.sum()
    return out


def test_top_k_bound_is_below_the_kth_value_and_keeps_few_values():
    """The bound of the neighbour step comes from the maxima of strided groups of columns: it never
    exceeds the k-th largest value, even when every large value lies in one group or in the tail
    past the last whole run, and on ordinary rows it keeps little more than k values."""
    rng = np.random.default_rng(11)
    n, k = 5_011, 40
    sims = rng.normal(size=(70, n)).astype(np.float32)
    groups = int(np.sqrt(n * k))                          # 447 columns a run, 11 whole runs, a tail of 94
    one_group = np.arange(3, n, groups)                   # 12 columns: group 3 and the tail's column 3
    sims[:10, one_group] += 10.0                          # the top 12 of these rows: all in one group
    sims[10:20, rng.choice(one_group, 2, replace=False)] += 10.0
    tail = np.arange(n // groups * groups, n)
    sims[20:30, tail[:k + 5]] += 10.0                     # the top k of these rows: all in the tail
    sims[30:40] = np.round(sims[30:40])               # long ties at the boundary
    sims[40, :] = 0.0                                  # every value tied
    sims[:, 5] = -np.inf                               # a query's own column
    labels = rng.integers(0, 3, n)
    bound = _lower_bounds(sims, k)
    assert (bound <= np.sort(sims, axis=1)[:, -k]).all()
    assert np.median((sims[41:] >= bound[41:, None]).sum(axis=1)) < 2 * k
    got = _count_top(sims, k, labels, 3)
    np.testing.assert_allclose(got, _top_count_by_sorting(sims, k, labels, 3), rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.sum(axis=1), k, rtol=0, atol=1e-9)   # every column has a label


@pytest.mark.parametrize("n", [2, 3, 12, 40])
def test_top_k_counts_for_every_k_up_to_all_other_candidates(n):
    """k from 1 to n - 1 (the bound's groups then are single columns), with ties."""
    rng = np.random.default_rng(n)
    sims = rng.integers(0, 4, size=(9, n)).astype(np.float32)
    sims[np.arange(9), rng.integers(0, n, 9)] = -np.inf
    labels = rng.integers(0, 2, n)
    for k in range(1, n):
        np.testing.assert_allclose(_count_top(sims, k, labels, 2), _top_count_by_sorting(sims, k, labels, 2),
                                   rtol=0, atol=1e-12)


def test_neighbours_of_a_zero_vector_are_everyone_in_proportion():
    """A zero row (kept zero by unit-normalizing) has cosine 0 with every candidate: all tie, so its
    fraction is the marked share of the other candidates, whatever k."""
    rng = np.random.default_rng(12)
    cand = rng.normal(size=(3_000, 6)).astype(np.float32)
    cand /= np.linalg.norm(cand, axis=1, keepdims=True)
    cand[7] = 0.0
    marked = rng.random(3_000) < 0.3
    for k in (1, 100, 2_999):
        got = neighbour_fractions(cand, np.array([7, 8]), marked, k)
        assert got[0] == pytest.approx(np.delete(marked, 7).mean(), rel=1e-12)
        assert got[1] == pytest.approx(_naive_fractions(cand.astype(np.float64), np.array([8]), marked, k)[0],
                                       abs=1e-12)


# -- re-fitted direction -----------------------------------------------------------------------


def test_refit_direction_is_rotation_invariant():
    emb = synthetic_embedding(n_filler=300, dim=12, seed=1)
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(12, 12)))
    rotated = Embedding(emb.words, np.asarray(emb.vectors) @ q.T, name="rotated")
    same = refit_direction_bias(emb, original=emb)
    assert same.direction_cosine == pytest.approx(1.0)
    assert same.direct_bias == pytest.approx(direct_bias(emb).direct_bias)
    assert same.refit_variance_ratio == pytest.approx(same.original_variance_ratio)

    res = refit_direction_bias(rotated, original=emb)
    g = BiasSubspace().fit(emb).direction_
    assert res.direction_cosine == pytest.approx(abs(g @ (q @ g)), abs=1e-6)
    assert res.direction_cosine < 0.9          # the rotation moved the direction ...
    assert res.direct_bias == pytest.approx(same.direct_bias, rel=1e-5)   # ... not the bias
    assert direct_bias(rotated, subspace=g).direct_bias < 0.8 * same.direct_bias
    assert res.refit_variance_ratio == pytest.approx(same.refit_variance_ratio, rel=1e-5)
    np.testing.assert_allclose(res.projections, same.projections, atol=1e-5)
    assert res.n_scored == len(res.words) > 100 and len(res.pairs_used) == 10

    alone = refit_direction_bias(rotated)
    assert np.isnan(alone.direction_cosine) and np.isnan(alone.original_variance_ratio)
    by_vector = refit_direction_bias(rotated, original=g)
    assert by_vector.direction_cosine == pytest.approx(res.direction_cosine)
    with pytest.raises(EmbdebiasError, match="unfitted"):
        refit_direction_bias(rotated, original=BiasSubspace())
    json.dumps(res.to_dict(), allow_nan=False)


# -- indirect bias -------------------------------------------------------------------------------


def _indirect_embedding():
    e = np.eye(6)
    vec = {"w": 0.6 * e[0] + 0.8 * e[1], "v": 0.6 * e[0] + 0.8 * e[2], "u": 3 * (0.6 * e[0] + 0.8 * e[1]),
           "x": 0.3 * e[0] + 0.5 * e[1] + 0.7 * e[3], "y": -0.4 * e[0] + 0.2 * e[1] + 0.9 * e[4],
           "o1": e[3], "o2": e[4], "g": e[0]}
    return Embedding(list(vec), np.array(list(vec.values())))


def _beta(a, b, g):
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    pa, pb = a - (a @ g) * g, b - (b @ g) * g
    return (a @ b - pa @ pb / np.linalg.norm(pa) / np.linalg.norm(pb)) / (a @ b)


def test_indirect_bias_hand_values():
    emb = _indirect_embedding()
    g = np.eye(6)[0]
    res = indirect_bias(emb, [("w", "v"), ("w", "u"), ("x", "y"), ("o1", "o2"), ("w", "g"), ("w", "zz")],
                        subspace=g)
    assert res.pairs == [("w", "v"), ("w", "u"), ("x", "y"), ("o1", "o2"), ("w", "g")]
    assert res.missing == {"words": ["zz"]}
    beta = res.beta
    assert beta[0] == pytest.approx(1.0)      # all of w.v = 0.36 is gender
    assert beta[1] == pytest.approx(0.0)      # same direction: nothing is due to gender
    vecs = {w: np.asarray(emb[w], dtype=np.float64) for w in ("x", "y")}
    assert beta[2] == pytest.approx(_beta(vecs["x"], vecs["y"], g))
    assert np.isnan(beta[3]) and np.isnan(beta[4])   # w.v = 0; g has no part outside gender
    assert res.n_undefined == 2 and res.n_scored == 3
    assert res.mean_beta == pytest.approx(np.mean([1.0, 0.0, beta[2]]))
    assert res.similarity[0] == pytest.approx(0.36) and res.similarity_without_gender[0] == pytest.approx(0.0)
    json.dumps(res.to_dict(), allow_nan=False)

    every = indirect_bias(emb, ["w", "v", "x"], subspace=g)
    assert every.pairs == [("w", "v"), ("w", "x"), ("v", "x")]
    assert every.as_dict()[("w", "v")] == pytest.approx(1.0)
    assert every.as_dict()[("v", "x")] == pytest.approx(_beta(np.asarray(emb["v"], float), vecs["x"], g))
    strict = indirect_bias(emb, [("w", "v"), ("x", "y")], subspace=g, min_similarity=0.5)
    assert np.isnan(strict.beta).all()
    with pytest.raises(EmbdebiasError, match="pairs"):
        indirect_bias(emb, [("w", "v", "x")], subspace=g)
    with pytest.raises(MissingWordsError):
        indirect_bias(emb, [("zz", "qq")], subspace=g)


def test_indirect_bias_vectorized_matches_a_loop():
    emb = synthetic_embedding(n_filler=50, dim=10, seed=3)
    words = emb.words.tolist()[:40]
    res = indirect_bias(emb, words)
    g = BiasSubspace().fit(emb).direction_
    vec = {w: np.asarray(emb[w], dtype=np.float64) for w in words}
    expected = [_beta(vec[a], vec[b], g) for a, b in res.pairs]
    assert len(res.pairs) == 40 * 39 // 2
    assert res.pairs == [(a, b) for i, a in enumerate(words) for b in words[i + 1:]]   # tuples, in order
    np.testing.assert_allclose(res.beta, expected, rtol=1e-9, atol=1e-12)
    explicit = indirect_bias(emb, [(words[3], words[1]), ("absent", words[2]), (words[5], words[5])])
    assert explicit.pairs == [(words[3], words[1]), (words[5], words[5])]


# -- generated analogies ---------------------------------------------------------------------------


def _unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def _analogy_embedding():
    """Three pairs exactly along she - he (e0) within delta, one too far apart, one partial."""
    e = np.eye(8)
    vec = {"she": _unit(e[0] + e[1]), "he": _unit(-e[0] + e[1])}
    for i, (f, m) in enumerate([("queen", "king"), ("aunt", "uncle"), ("niece", "nephew")], start=2):
        vec[f], vec[m] = _unit(0.3 * e[0] + e[i]), _unit(-0.3 * e[0] + e[i])
    vec["far_f"], vec["far_m"] = _unit(0.9 * e[0] + e[5]), _unit(-0.9 * e[0] + e[5])
    vec["part_f"], vec["part_m"] = _unit(0.3 * e[0] + e[6] + 0.2 * e[7]), _unit(-0.3 * e[0] + e[6] - 0.2 * e[7])
    return Embedding(list(vec), np.array(list(vec.values())))


def test_gender_analogies_planted_answer():
    emb = _analogy_embedding()
    res = gender_analogies(emb, n=10)
    assert {(x, y) for x, y, _ in res[:3]} == {("queen", "king"), ("aunt", "uncle"), ("niece", "nephew")}
    assert all(s == pytest.approx(1.0) for _, _, s in res[:3])
    d = _unit(emb["she"] / np.linalg.norm(emb["she"]) - emb["he"] / np.linalg.norm(emb["he"]))
    diff = _unit(emb["part_f"]) - _unit(emb["part_m"])
    assert res[3][:2] == ("part_f", "part_m")
    assert res[3][2] == pytest.approx(diff @ d / np.linalg.norm(diff)) and res[3][2] < 0.9
    assert ("far_f", "far_m") not in [(x, y) for x, y, _ in res]        # |x - y| > delta
    assert not {"she", "he"} & {w for x, y, _ in res for w in (x, y)}
    assert [s for _, _, s in res] == sorted((s for _, _, s in res), reverse=True)
    wide = gender_analogies(emb, n=10, delta=1.5)
    assert ("far_f", "far_m") in [(x, y) for x, y, _ in wide[:4]]
    with pytest.raises(MissingWordsError):
        gender_analogies(emb, seed_pair=("she", "him"))
    with pytest.raises(EmbdebiasError, match="delta"):
        gender_analogies(emb, delta=0)


def _naive_analogies(emb, n, delta, n_candidates):
    words = emb.words.tolist()[:n_candidates]
    v = np.array(emb.vectors[:n_candidates], dtype=np.float64)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    d = _unit(v[words.index("she")] - v[words.index("he")])
    best = []
    for i, x in enumerate(words):
        if x in ("she", "he"):
            continue
        diff = v[i] - v
        dist = np.linalg.norm(diff, axis=1)
        ok = (dist <= delta) & (dist > 0.003) & ~np.isin(words, ["she", "he"])
        if ok.any():
            scores = np.where(ok, diff @ d / np.where(ok, dist, 1), -np.inf)
            j = int(np.argmax(scores))
            best.append((x, words[j], float(scores[j])))
    return sorted(best, key=lambda t: -t[2])[:n]


def test_gender_analogies_match_a_per_word_loop_in_any_block_size():
    rng = np.random.default_rng(4)
    words = ["she", "he"] + [_word(i) for i in range(298)]
    vecs = rng.normal(size=(300, 5))
    vecs[0, 0] += 2
    vecs[1, 0] -= 2
    emb = Embedding(words + [_word(1000)], np.vstack([vecs, rng.normal(size=(1, 5))]))
    expected = _naive_analogies(emb, 40, 1.1, 300)
    for rows in (None, 1, 13):
        got = gender_analogies(emb, n=40, delta=1.1, n_candidates=300, block_rows=rows)
        assert [(x, y) for x, y, _ in got] == [(x, y) for x, y, _ in expected]
        np.testing.assert_allclose([s for _, _, s in got], [s for _, _, s in expected], atol=1e-12)


def test_bench_residual_smoke(tmp_path):
    """The benchmark's synthetic rows on a small file: the blocked and the naive step agree."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import bench_residual

    words = bench_residual.synthetic_words(30)
    assert words[:2] == ["he", "she"] and len(set(words)) == 30 and all(w.isalpha() for w in words)
    rows = bench_residual.run(rows=52_000, dim=8, workdir=tmp_path, baseline_queries=40, with_glove=False)
    assert [r["benchmark"] for r in rows] == ["residual_bias, native files (first call)",
                                             "residual_bias, second call", "neighbour step"]
    assert rows[0]["peak_mb"] > 0 and rows[0]["ours_s"] > 0
    assert float(rows[0]["note"].split()[1].rstrip(",")) > 0.85     # gender survives along e1
    assert "max |diff| 0.0e+00" in rows[2]["note"] and rows[2]["baseline_s"] > 0


def test_svm_gamma_scale_by_default_auto_as_published(planted):
    """scikit-learn's gamma='scale' is 1 / (d var(X)); Gonen & Goldberg's 'auto' is 1 / d. The
    result and the report's parameters say which one a number used."""
    from sklearn.svm import SVC

    from embdebias.metrics.base import get_metric
    from embdebias.metrics.residual import classification_accuracy

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 8)) * 0.2
    y = (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int)
    perm = np.random.default_rng(1).permutation(400)
    for gamma, value in (("scale", 1 / (8 * X.var())), ("auto", 1 / 8)):
        expected = SVC(kernel="rbf", gamma=value).fit(X[perm[:150]], y[perm[:150]]).score(X[perm[150:]], y[perm[150:]])
        assert classification_accuracy(X, y, 150, 1, gamma) == (pytest.approx(expected), 250)
    tested = _zeroed(planted, [0], "hard-like")
    assert _run(planted, tested).svm_gamma == "scale"
    auto = _run(planted, tested, svm_gamma="auto")
    assert auto.svm_gamma == "auto" and auto.to_dict()["svm_gamma"] == "auto"
    with pytest.raises(EmbdebiasError, match="svm_gamma must be one of 'scale', 'auto'"):
        _run(planted, tested, svm_gamma=0.1)
    metric = get_metric("residual")
    assert metric.params(metric.check_options({"svm_gamma": "auto"}))["svm_gamma"] == "auto"
    assert metric.params(metric.check_options({}))["svm_gamma"] == "scale"
