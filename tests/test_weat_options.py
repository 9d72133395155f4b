"""WEAT's options: the two-sided and "less" p-values against brute-force enumeration of every
partition, and the effect-size variants (overall, pooled, r) against hand computation."""

import statistics
from itertools import combinations

import numpy as np
import pytest

from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError
from embdebias.evaluate import evaluate
from embdebias.metrics import weat
from embdebias.metrics.weat import effect_size_sample


def _random_test(n_x, n_y, seed, shift=0.0):
    """A random embedding with X, Y, A, B words; ``shift`` pushes X towards A."""
    rng = np.random.default_rng(seed)
    dim = 6
    a_dir = np.eye(dim)[0]
    words, vecs = [], []
    for name, n, push in (("x", n_x, shift), ("y", n_y, 0.0), ("a", 3, 2.0), ("b", 3, -2.0)):
        for i in range(n):
            words.append(f"{name}{i}")
            vecs.append(rng.normal(size=dim) + push * a_dir)
    emb = Embedding(words, np.array(vecs))
    sets = [[f"{c}{i}" for i in range(n)] for c, n in (("x", n_x), ("y", n_y), ("a", 3), ("b", 3))]
    return emb, sets


def _brute_force(s_x, s_y):
    """``(greater, less, two-sided)`` p-values by listing every partition, in plain Python.

    Two-sided: partitions whose sum of s over X_i is at least as far from its mean over
    all partitions (|X| times the mean of s) as the observed one.
    """
    pooled = list(s_x) + list(s_y)
    observed = sum(s_x)
    centre = len(s_x) * statistics.fmean(pooled)
    eps = 1e-12
    counts = {"greater": 0, "less": 0, "two-sided": 0}
    n = 0
    for idx in combinations(range(len(pooled)), len(s_x)):
        sub = sum(pooled[i] for i in idx)
        n += 1
        counts["greater"] += sub >= observed - eps
        counts["less"] += sub <= observed + eps
        counts["two-sided"] += abs(sub - centre) >= abs(observed - centre) - eps
    return {k: v / n for k, v in counts.items()}


@pytest.mark.parametrize("n_x, n_y, seed, shift", [(5, 5, 0, 0.3), (5, 5, 1, 0.0), (4, 6, 2, 0.5),
                                                   (6, 3, 3, -0.4), (7, 7, 4, 1.0)])
def test_every_alternative_equals_exact_enumeration(n_x, n_y, seed, shift):
    emb, (X, Y, A, B) = _random_test(n_x, n_y, seed, shift)
    expected = None
    for alternative in ("greater", "less", "two-sided"):
        r = weat(emb, X, Y, A, B, alternative=alternative)
        expected = expected or _brute_force(r.s_X, r.s_Y)
        assert r.exact and r.alternative == alternative
        assert r.p_value == pytest.approx(expected[alternative], abs=1e-12)


def test_two_sided_is_twice_the_smaller_one_sided_p_with_equal_sizes():
    for seed in range(6):
        emb, (X, Y, A, B) = _random_test(6, 6, seed, shift=0.4 * (seed % 3 - 1))
        p = {alt: weat(emb, X, Y, A, B, alternative=alt).p_value for alt in ("greater", "less", "two-sided")}
        assert p["two-sided"] == pytest.approx(min(1.0, 2 * min(p["greater"], p["less"])), abs=1e-12)
        assert p["greater"] + p["less"] >= 1.0  # the observed partition is in both


def test_monte_carlo_two_sided_agrees_with_the_exact_count():
    emb, (X, Y, A, B) = _random_test(7, 7, 5, shift=0.3)
    exact = weat(emb, X, Y, A, B, alternative="two-sided")
    sampled = weat(emb, X, Y, A, B, alternative="two-sided", exact_limit=1, n_permutations=40_000)
    assert not sampled.exact and sampled.p_value_se > 0
    assert abs(sampled.p_value - exact.p_value) < 4 * sampled.p_value_se + 1e-4


def test_the_default_is_the_published_one_sided_d_and_unchanged():
    emb, (X, Y, A, B) = _random_test(8, 8, 6, shift=0.5)
    default = weat(emb, X, Y, A, B, bootstrap=200)
    explicit = weat(emb, X, Y, A, B, bootstrap=200, alternative="greater", effect_size="overall")
    assert default.alternative == "greater" and default.effect_size_kind == "overall"
    assert (default.effect_size, default.p_value, default.ci) == (explicit.effect_size, explicit.p_value,
                                                                  explicit.ci)
    s = default.s_X + default.s_Y
    hand = (statistics.fmean(default.s_X) - statistics.fmean(default.s_Y)) / statistics.stdev(s)
    assert default.effect_size == pytest.approx(hand, rel=1e-12)


def test_pooled_within_group_sd_is_cohens_d():
    emb, (X, Y, A, B) = _random_test(5, 7, 7, shift=0.8)
    r = weat(emb, X, Y, A, B, effect_size="pooled")
    sx, sy = r.s_X, r.s_Y
    pooled_var = ((len(sx) - 1) * statistics.variance(sx) + (len(sy) - 1) * statistics.variance(sy)) \
        / (len(sx) + len(sy) - 2)
    assert r.effect_size == pytest.approx((statistics.fmean(sx) - statistics.fmean(sy)) / pooled_var ** 0.5,
                                          rel=1e-12)
    overall = weat(emb, X, Y, A, B)
    # the overall SD also holds the spread between the group means: pooled d is larger in size
    assert abs(r.effect_size) > abs(overall.effect_size)
    assert r.p_value == overall.p_value  # the options are independent


def test_r_is_the_point_biserial_correlation():
    emb, (X, Y, A, B) = _random_test(6, 4, 8, shift=0.6)
    r = weat(emb, X, Y, A, B, effect_size="r")
    s = np.array(r.s_X + r.s_Y)
    member = np.r_[np.ones(len(r.s_X)), np.zeros(len(r.s_Y))]
    assert r.effect_size == pytest.approx(np.corrcoef(s, member)[0, 1], rel=1e-12)
    assert -1.0 <= r.effect_size <= 1.0
    assert weat(emb, X, Y, A, B, effect_size="r", ddof=0).effect_size == r.effect_size


def test_hand_values_for_plus_and_minus_one():
    # s = +1 for the four X words and -1 for the four Y words (as in test_metrics_weat)
    words = ["x0", "x1", "x2", "x3", "y0", "y1", "y2", "y3", "a0", "b0"]
    vecs = [[1.0, 0.0]] * 4 + [[0.0, 1.0]] * 4 + [[3.0, 0.0], [0.0, 0.5]]
    emb = Embedding(words, np.array(vecs))
    X, Y = words[:4], words[4:8]
    assert weat(emb, X, Y, ["a0"], ["b0"], effect_size="r").effect_size == pytest.approx(1.0)
    # zero within-group spread: Cohen's d is undefined
    assert np.isnan(weat(emb, X, Y, ["a0"], ["b0"], effect_size="pooled").effect_size)
    two = weat(emb, X, Y, ["a0"], ["b0"], alternative="two-sided")
    assert two.p_value == pytest.approx(2 / 70)       # the observed partition and its mirror
    assert weat(emb, X, Y, ["a0"], ["b0"], alternative="less").p_value == pytest.approx(1.0)


@pytest.mark.parametrize("kind", ["overall", "pooled", "r"])
def test_the_bootstrap_statistic_of_each_kind_gives_the_value(kind):
    emb, (X, Y, A, B) = _random_test(6, 5, 9, shift=0.5)
    r = weat(emb, X, Y, A, B, effect_size=kind, bootstrap=300)
    vec = {k: emb[w] / np.linalg.norm(emb[w], axis=1, keepdims=True) for k, w in zip("XYAB", (X, Y, A, B))}
    sample = effect_size_sample(dict(zip("XYAB", (X, Y, A, B))), vec, kind=kind)
    assert sample.value() == pytest.approx(r.effect_size, rel=1e-6)  # vectors stored in float32
    assert r.ci[0] <= r.ci[1]


def test_bad_options_are_refused_with_their_names():
    emb, (X, Y, A, B) = _random_test(4, 4, 10)
    with pytest.raises(EmbdebiasError, match="alternative"):
        weat(emb, X, Y, A, B, alternative="both")
    with pytest.raises(EmbdebiasError, match="effect_size"):
        weat(emb, X, Y, A, B, effect_size="hedges")
    with pytest.raises(EmbdebiasError, match="'weat', option 'alternative'"):
        evaluate({"e": emb}, ["weat"], options={"weat": {"alternative": "two_sided"}})


def test_evaluate_reports_the_options():
    from embdebias.wordlists import WeatTest, WordSet

    emb, (X, Y, A, B) = _random_test(5, 5, 11, shift=0.7)
    test = WeatTest("t1", "toy", WordSet("X", tuple(X)), WordSet("Y", tuple(Y)), WordSet("A", tuple(A)),
                    WordSet("B", tuple(B)), group="toy")
    report = evaluate({"e": emb}, ["weat"], options={"weat": {"tests": [test], "alternative": "two-sided",
                                                              "effect_size": "r"}})
    direct = weat(emb, test, alternative="two-sided", effect_size="r")
    assert report.value("weat", "t1", "p_value", "e") == pytest.approx(direct.p_value)
    assert report.value("weat", "t1", "effect_size", "e") == pytest.approx(direct.effect_size)
    assert report.params["options"]["weat"]["alternative"] == "two-sided"
    assert "point-biserial" in report.to_markdown()
