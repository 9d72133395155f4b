"""WEAT against hand computation on constructed embeddings."""

import importlib
import json
import math
import statistics
from itertools import combinations

import numpy as np
import pytest

from embdebias.embedding import Embedding
from embdebias.errors import MissingWordsError
from embdebias.metrics import weat
from embdebias.metrics.weat import count_at_least, sample_at_least, smallest_key_sums
from embdebias.wordlists import WeatTest, WordSet


def _angles_embedding(angles_x, angles_y):
    """X/Y words at given angles in the (e1, e2) plane; A = {e1}, B = {e2}.

    Then cos(w, a) = cos(t) and cos(w, b) = sin(t), so s(w) = cos(t) - sin(t).
    """
    words, vecs = [], []
    for i, t in enumerate(angles_x):
        words.append(f"x{i}")
        vecs.append([math.cos(t), math.sin(t), 0.0])
    for i, t in enumerate(angles_y):
        words.append(f"y{i}")
        vecs.append([math.cos(t), math.sin(t), 0.0])
    words += ["a0", "b0", "other"]
    vecs += [[3.0, 0, 0], [0, 0.5, 0], [0, 0, 1.0]]  # lengths do not matter for cosines
    emb = Embedding(words, np.array(vecs))
    return emb, [f"x{i}" for i in range(len(angles_x))], [f"y{i}" for i in range(len(angles_y))]


def _hand_weat(s_x, s_y, ddof=1):
    """Effect size and exact one-sided p-value by brute force, in plain Python."""
    pooled = s_x + s_y
    sd = statistics.stdev(pooled) if ddof == 1 else statistics.pstdev(pooled)
    d = (statistics.fmean(s_x) - statistics.fmean(s_y)) / sd
    observed = sum(s_x) - sum(s_y)
    total = sum(pooled)
    hits = n = 0
    for idx in combinations(range(len(pooled)), len(s_x)):
        sub = sum(pooled[i] for i in idx)
        n += 1
        hits += (sub - (total - sub)) >= observed - 1e-12
    return d, hits / n


def test_closed_form_plus_minus_one():
    # X at angle 0 (s = +1), Y at angle pi/2 (s = -1), four words each.
    emb, X, Y = _angles_embedding([0.0] * 4, [math.pi / 2] * 4)
    r = weat(emb, X, Y, ["a0"], ["b0"])
    # mean difference 2, pooled sample std of four +1 and four -1 is sqrt(8/7)
    assert r.effect_size == pytest.approx(2 / math.sqrt(8 / 7), rel=1e-7)
    assert r.statistic == pytest.approx(8.0)
    # only the observed partition reaches the maximum: p = 1 / C(8, 4)
    assert r.exact and r.n_partitions == 70
    assert r.p_value == pytest.approx(1 / 70)
    assert r.p_value_se == 0.0
    assert r.s_X == pytest.approx([1.0] * 4) and r.s_Y == pytest.approx([-1.0] * 4)
    r0 = weat(emb, X, Y, ["a0"], ["b0"], ddof=0)
    assert r0.effect_size == pytest.approx(2.0)  # population std of +-1 is 1


def test_matches_brute_force_hand_computation():
    ax = [0.1, 0.5, 0.9, 1.3, 0.2, 0.7]
    ay = [0.3, 1.1, 1.4, 0.6, 0.8, 1.5]
    emb, X, Y = _angles_embedding(ax, ay)
    s_x = [math.cos(t) - math.sin(t) for t in ax]
    s_y = [math.cos(t) - math.sin(t) for t in ay]
    d, p = _hand_weat(s_x, s_y)
    r = weat(emb, X, Y, ["a0"], ["b0"])
    assert r.effect_size == pytest.approx(d, rel=1e-6)
    assert r.p_value == pytest.approx(p, abs=1e-12)
    assert r.exact and r.n_permutations == math.comb(12, 6)
    d0, _ = _hand_weat(s_x, s_y, ddof=0)
    assert weat(emb, X, Y, ["a0"], ["b0"], ddof=0).effect_size == pytest.approx(d0, rel=1e-6)


def test_attribute_means_with_several_words():
    # A = {e1, e3}, B = {e2}: s(w) = (cos(w,e1) + cos(w,e3)) / 2 - cos(w,e2)
    words = ["x0", "x1", "y0", "y1", "a0", "a1", "b0"]
    vecs = np.array([[1, 0, 0], [1, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]], float)
    emb = Embedding(words, vecs)
    r2 = math.sqrt(2)
    s_x = [0.5 - 0, (1 / r2 + 1 / r2) / 2 - 0]
    s_y = [0 - 1, (0 + 1 / r2) / 2 - 1 / r2]
    r = weat(emb, ["x0", "x1"], ["y0", "y1"], ["a0", "a1"], ["b0"])
    assert r.s_X == pytest.approx(s_x) and r.s_Y == pytest.approx(s_y)
    d, p = _hand_weat(s_x, s_y)
    assert r.effect_size == pytest.approx(d)
    assert r.p_value == pytest.approx(p)


@pytest.mark.parametrize("n_x,n", [(3, 10), (5, 11), (1, 7), (6, 6 + 7)])
def test_exact_count_equals_itertools(n_x, n):
    rng = np.random.default_rng(n_x * 100 + n)
    s = rng.integers(-3, 4, size=n).astype(float)  # integer values: many ties
    for threshold in (s[:n_x].sum(), 0.0, -1.5):
        count, total = count_at_least(s, n_x, threshold)
        brute = sum(1 for c in combinations(range(n), n_x) if s[list(c)].sum() >= threshold)
        assert total == math.comb(n, n_x)
        assert count == brute


def _random_sets(seed, n_x, n_y, n_a=5, n_b=5, dim=10):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n_x + n_y + n_a + n_b)]
    emb = Embedding(words, rng.standard_normal((len(words), dim)))
    cuts = np.cumsum([n_x, n_y, n_a])
    return emb, words[:cuts[0]], words[cuts[0]:cuts[1]], words[cuts[1]:cuts[2]], words[cuts[2]:]


def test_sampled_p_value_agrees_with_exact_within_standard_error():
    emb, X, Y, A, B = _random_sets(3, 8, 8)
    exact = weat(emb, X, Y, A, B)
    assert exact.exact and exact.n_partitions == 12870
    assert 0.05 < exact.p_value < 0.95  # a p-value in the middle: a real comparison
    sampled = weat(emb, X, Y, A, B, exact_limit=0, n_permutations=20_000, random_state=7)
    assert not sampled.exact and sampled.n_permutations == 20_000
    assert sampled.p_value_se == pytest.approx(
        math.sqrt(sampled.p_value * (1 - sampled.p_value) / 20_000))
    assert abs(sampled.p_value - exact.p_value) <= 3 * sampled.p_value_se
    assert sampled.effect_size == exact.effect_size


def test_same_seed_same_numbers_and_block_size_does_not_matter():
    emb, X, Y, A, B = _random_sets(5, 25, 25)
    r1 = weat(emb, X, Y, A, B, n_permutations=30_000, random_state=11, bootstrap=300)
    r2 = weat(emb, X, Y, A, B, n_permutations=30_000, random_state=11, bootstrap=300)
    assert not r1.exact
    assert r1.to_dict() == r2.to_dict()
    for block in (777, 64):
        r3 = weat(emb, X, Y, A, B, n_permutations=30_000, random_state=11, block_size=block)
        assert r3.p_value == r1.p_value  # the random stream does not depend on the blocking
    r4 = weat(emb, X, Y, A, B, n_permutations=30_000, random_state=12)
    assert r4.p_value != r1.p_value
    # the bootstrap uses its own stream: turning it on does not move the p-value
    assert weat(emb, X, Y, A, B, n_permutations=30_000, random_state=11).p_value == r1.p_value


def test_sample_at_least_counts_uniform_partitions():
    # s = (1, 0, 0, 0): a random 1-subset has sum >= 1 with probability 1/4
    rng = np.random.default_rng(0)
    hits = sample_at_least(np.array([1.0, 0, 0, 0]), 1, 1.0, 40_000, rng, block_size=3000)
    assert abs(hits / 40_000 - 0.25) < 4 * math.sqrt(0.25 * 0.75 / 40_000)


def _argpartition_sums(s, keys, n_x):
    """The sampler's sums as they were computed before smallest_key_sums (index gather)."""
    return s[np.argpartition(keys, n_x - 1, axis=1)[:, :n_x]].sum(axis=1)


@pytest.mark.parametrize("n, n_x", [(32, 16), (50, 25), (33, 10), (5, 1), (6, 6)])
def test_smallest_key_sums_are_the_argpartition_sums(n, n_x):
    rng = np.random.default_rng(n)
    s, keys = rng.standard_normal(n) * 3, rng.random((2000, n))
    np.testing.assert_allclose(smallest_key_sums(s, keys, n_x), _argpartition_sums(s, keys, n_x),
                               rtol=0, atol=1e-12)


def test_smallest_key_sums_with_tied_keys_take_argpartitions_choice():
    # whole-number keys tie often: those rows must be exactly the old gather, not a mask of more words
    rng = np.random.default_rng(3)
    s, keys = rng.standard_normal(8), rng.integers(0, 4, size=(500, 8)).astype(np.float64)
    got = smallest_key_sums(s, keys, 3)
    kth = np.partition(keys, 2, axis=1)[:, 2:3]
    tied = (keys <= kth).sum(axis=1) != 3
    assert tied.sum() > 100
    assert np.array_equal(got[tied], _argpartition_sums(s, keys, 3)[tied])
    np.testing.assert_allclose(got, _argpartition_sums(s, keys, 3), rtol=0, atol=1e-12)


def test_bootstrap_interval():
    emb, X, Y = _angles_embedding([0.1, 0.2, 0.3, 0.4, 0.35], [1.2, 1.3, 1.4, 1.1, 1.25])
    r = weat(emb, X, Y, ["a0"], ["b0"], bootstrap=500, random_state=3)
    lo, hi = r.ci
    assert lo < hi and r.n_bootstrap == 500 and r.ci_level == 0.95
    # X is entirely above Y: every replicate has a large positive effect
    assert lo > 1.0
    assert weat(emb, X, Y, ["a0"], ["b0"]).ci is None


def test_weat_test_object_missing_words_and_lowercase():
    emb, X, Y = _angles_embedding([0.1, 0.2, 0.3, 0.4, 0.5], [1.0, 1.1, 1.2, 1.3, 1.4])
    test = WeatTest("t1", "title", WordSet("xs", tuple(X) + ("absentword",)),
                    WordSet("ys", tuple(Y)), WordSet("as", ("A0",)), WordSet("bs", ("b0",)))
    r = weat(emb, test)
    assert r.test_id == "t1" and r.set_names["X"] == "xs"
    assert r.missing == {"X": ["absentword"], "Y": [], "A": [], "B": []}
    assert r.lowercased == {"A": {"A0": "a0"}}
    assert r.words["A"] == ["A0"]
    # without the lowercase fallback the one-word set A is lost entirely
    with pytest.raises(MissingWordsError) as err:
        weat(emb, test, lowercase=False)
    assert "A0" in str(err.value) and err.value.missing == ["A0"]


def test_too_many_missing_words_raise_naming_them():
    emb, X, Y = _angles_embedding([0.1, 0.2, 0.3], [1.0, 1.1, 1.2])
    with pytest.raises(MissingWordsError) as err:
        weat(emb, X + ["nope1"], Y, ["a0"], ["b0"])  # 1 of 4 = 25% > 20%
    assert "nope1" in str(err.value) and "set X" in str(err.value)
    r = weat(emb, X + ["nope1"], Y, ["a0"], ["b0"], max_missing=0.3)
    assert r.missing["X"] == ["nope1"]
    assert r.n_partitions == math.comb(6, 3)  # partitions of the 6 words that were found


def test_unequal_sets_use_observed_sizes():
    emb, X, Y, A, B = _random_sets(9, 4, 7)
    r = weat(emb, X, Y, A, B)
    assert r.n_partitions == math.comb(11, 4)
    s_x, s_y = r.s_X, r.s_Y
    d, p = _hand_weat(s_x, s_y)
    assert r.effect_size == pytest.approx(d) and r.p_value == pytest.approx(p)


def test_result_is_json_serialisable():
    emb, X, Y, A, B = _random_sets(1, 5, 5)
    d = weat(emb, X, Y, A, B, bootstrap=50).to_dict()
    again = json.loads(json.dumps(d, allow_nan=False))
    assert again["effect_size"] == d["effect_size"] and again["missing"]["X"] == []


def test_empty_subsets_sum_to_zero():
    # n_x = 0: every draw's subset is empty (the old index gather gave zero sums; a mask must too)
    keys = np.random.default_rng(0).random((10, 3))
    assert np.array_equal(smallest_key_sums(np.array([1.0, 2.0, 3.0]), keys, 0), np.zeros(10))
    assert sample_at_least(np.array([1.0, 2.0, 3.0]), 0, 0.0, 10, np.random.default_rng(0)) == 10


def test_sampler_reuses_subsets_of_the_same_state_and_leaves_the_generator_as_drawing_does(monkeypatch):
    # every test of a run samples from the same seed: the second call must reuse the partitions,
    # count exactly what drawing anew counts, and leave the generator where the draws would
    weat_module = importlib.import_module("embdebias.metrics.weat")   # the package's name is the function
    rng = np.random.default_rng(4)
    s1, s2 = rng.standard_normal(12), rng.standard_normal(12)
    threshold = float(np.sort(s2)[-6:].sum()) * 0.5

    monkeypatch.setattr(weat_module, "_kept_subsets", {})
    fresh = np.random.default_rng(9)
    expected = sample_at_least(s2, 6, threshold, 25_000, fresh, block_size=4000)
    after = fresh.random(3)

    monkeypatch.setattr(weat_module, "_kept_subsets", {})
    sample_at_least(s1, 6, 0.0, 25_000, np.random.default_rng(9), block_size=4000)   # fills the store
    drawn = []
    monkeypatch.setattr(weat_module, "_smallest_keys",
                        lambda *a, **k: drawn.append(1) or pytest.fail("the partitions were drawn again"))
    reused = np.random.default_rng(9)
    assert sample_at_least(s2, 6, threshold, 25_000, reused, block_size=4000) == expected
    assert not drawn and 0 < expected < 25_000
    assert np.array_equal(reused.random(3), after)


def test_sampler_store_is_bounded(monkeypatch):
    weat_module = importlib.import_module("embdebias.metrics.weat")   # the package's name is the function
    monkeypatch.setattr(weat_module, "_kept_subsets", {})
    monkeypatch.setattr(weat_module, "_KEPT_BYTES", 3 * 1000 * 10)
    for seed in range(5):
        sample_at_least(np.arange(10.0), 5, 20.0, 1000, np.random.default_rng(seed))
    assert len(weat_module._kept_subsets) == 3           # the two oldest dropped
    sample_at_least(np.arange(10.0), 5, 20.0, 4000, np.random.default_rng(0))   # too large to keep
    assert len(weat_module._kept_subsets) == 3


def test_sampler_store_tells_apart_generators_whose_printed_states_agree(monkeypatch):
    # MT19937's state holds an array: two states printed alike (numpy shortens long arrays) must
    # not share kept partitions
    weat_module = importlib.import_module("embdebias.metrics.weat")
    monkeypatch.setattr(weat_module, "_kept_subsets", {})
    s = np.arange(12.0)
    other = np.random.MT19937(1).state
    other["state"]["key"] = other["state"]["key"].copy()
    other["state"]["key"][300] ^= 1                        # a state that differs in one bit, mid-array

    def generator(state=None):
        g = np.random.Generator(np.random.MT19937(1))
        if state is not None:
            g.bit_generator.state = state
        return g

    with np.printoptions(threshold=10):
        assert repr(generator().bit_generator.state) == repr(generator(other).bit_generator.state)
        sample_at_least(s, 6, 33.0, 3000, generator())      # keeps the first generator's partitions
        got = sample_at_least(s, 6, 33.0, 3000, generator(other))
    monkeypatch.setattr(weat_module, "_kept_subsets", {})
    assert got == sample_at_least(s, 6, 33.0, 3000, generator(other))


def test_sampler_store_shared_by_threads_gives_each_its_own_count(monkeypatch):
    # a threaded Dask worker may run several WEAT tests at once: the store is shared under a lock,
    # and each thread counts what it would count alone
    from concurrent.futures import ThreadPoolExecutor

    weat_module = importlib.import_module("embdebias.metrics.weat")
    monkeypatch.setattr(weat_module, "_kept_subsets", {})
    monkeypatch.setattr(weat_module, "_KEPT_BYTES", 2 * 2000 * 10)    # evictions happen while threads run
    cases = [(np.arange(10.0) * (1 + i % 3), seed) for i, seed in enumerate([0, 1, 2, 0, 1, 2, 3, 4] * 3)]

    def count(case):
        s, seed = case
        return sample_at_least(s, 5, float(s.sum()) * 0.55, 2000, np.random.default_rng(seed), block_size=500)

    alone = []
    for case in cases:
        monkeypatch.setattr(weat_module, "_kept_subsets", {})
        alone.append(count(case))
    monkeypatch.setattr(weat_module, "_kept_subsets", {})
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(count, cases))
    assert together == alone and len(set(alone)) > 1


def test_unseeded_weat_keeps_no_partitions_and_seeded_calls_still_reuse_them(monkeypatch):
    # random_state=None draws from fresh entropy: no later call can share its partitions, so
    # storing them is wasted copying; a seeded call stores them and the next one reuses them
    weat_module = importlib.import_module("embdebias.metrics.weat")
    emb, X, Y = _angles_embedding([0.1 * i for i in range(10)], [1.0 + 0.1 * i for i in range(10)])
    small = dict(exact_limit=10, n_permutations=3000)        # C(20, 10) partitions: sampled, not exact
    monkeypatch.setattr(weat_module, "_kept_subsets", {})
    weat(emb, X, Y, ["a0"], ["b0"], random_state=None, **small)
    weat(emb, X, Y, ["a0"], ["b0"], random_state=None, alternative="two-sided", **small)
    assert weat_module._kept_subsets == {}
    first = weat(emb, X, Y, ["a0"], ["b0"], random_state=3, **small)
    assert len(weat_module._kept_subsets) == 1
    monkeypatch.setattr(weat_module, "_smallest_keys",
                        lambda *a, **k: pytest.fail("the seeded partitions were drawn again"))
    again = weat(emb, X[::-1], Y, ["a0"], ["b0"], random_state=3, **small)
    assert not first.exact and again.p_value == first.p_value and len(weat_module._kept_subsets) == 1
