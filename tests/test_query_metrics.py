"""MAC, RND, RIPA, the generalized WEAT and SAME (issue 23): hand-computed cases, invariances,
sign conventions, intervals, missing words, and the registered metrics on a k-group attribute."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from synthetic import synthetic_embedding

import embdebias.metrics as metrics
from embdebias import wordlists
from embdebias.data.attributes import load_attribute
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError
from embdebias.metrics import METRICS, EvalContext, generalized_weat, mac, ripa, rnd, same, weat
from embdebias.metrics._resample import paired_change, resample_rng

QUERY_METRICS = ("mac", "rnd", "ripa", "generalized_weat", "same")


def tiny(vectors: dict) -> Embedding:
    return Embedding(list(vectors), np.array(list(vectors.values()), dtype=np.float64), name="tiny")


def random_emb(n=60, dim=6, seed=0) -> tuple[Embedding, list]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n)]
    return Embedding(words, rng.normal(size=(n, dim)), name="random"), words


def rotated(emb: Embedding, scale: float = 1.0, seed: int = 1) -> Embedding:
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(emb.dim, emb.dim)))
    return emb.with_vectors(scale * np.asarray(emb.vectors, dtype=np.float64) @ q, name="rotated")


# -- hand-computed values -------------------------------------------------------------------------


def test_mac_is_the_mean_cosine_distance_of_every_target_word_to_every_attribute_set():
    emb = tiny({"t": [1, 0], "u": [0, 2], "a": [0, 1], "b": [3, 0], "c": [1, 1]})
    # t: to {a} 1, to {b, c} mean(0, 1 - 1/sqrt2); u: to {a} 0, to {b, c} mean(1, 1 - 1/sqrt2)
    r = mac(emb, [["t"], ["u"]], {"A": ["a"], "B": ["b", "c"]})
    d = 1 - 1 / math.sqrt(2)
    assert r.value == pytest.approx((1 + d / 2 + 0 + (1 + d) / 2) / 4)
    assert r.by_target["1"]["A"] == pytest.approx(1.0) and r.distances["2"]["u"]["B"] == pytest.approx((1 + d) / 2)
    assert r.n_scored == 5 and r.n_missing == 0


def test_rnd_euclidean_cosine_sum_and_sign():
    emb = tiny({"f": [1, 0], "m": [0, 1], "a": [2, 0], "b": [0, 1], "c": [1, 1]})
    # normalized: a = (1, 0) is 0 from f and sqrt2 from m; b the reverse; c equidistant
    r = rnd(emb, [["f"], ["m"]], ["a"])
    assert r.value == pytest.approx(-math.sqrt(2))          # closer to the first group: negative
    assert rnd(emb, [["m"], ["f"]], ["a"]).value == pytest.approx(math.sqrt(2))
    assert rnd(emb, [["f"], ["m"]], ["a", "b", "c"]).value == pytest.approx(0.0, abs=1e-12)
    assert rnd(emb, [["f"], ["m"]], ["a", "c"], aggregate="sum").value == pytest.approx(-math.sqrt(2))
    assert rnd(emb, [["f"], ["m"]], ["a", "c"]).value == pytest.approx(-math.sqrt(2) / 2)
    # cosine distance: (1 - 1) - (1 - 0)
    assert rnd(emb, [["f"], ["m"]], ["a"], distance="cosine").value == pytest.approx(-1.0)
    # raw vectors: |a - f| = 1, |a - m| = sqrt5
    assert rnd(emb, [["f"], ["m"]], ["a"], normalize=False).value == pytest.approx(1 - math.sqrt(5))
    assert rnd(emb, [["f"], ["m"]], ["a", "b"]).by_word == pytest.approx({"a": -math.sqrt(2), "b": math.sqrt(2)})


def test_ripa_uses_unnormalized_words_and_unit_pair_differences():
    emb = tiny({"x1": [3, 1], "y1": [1, 1], "x2": [1, 3], "y2": [1, 1.5], "w": [4, 2]})
    # b1 = (1, 0), b2 = (0, 1): w . b = 4 and 2
    r = ripa(emb, [["x1", "x2"], ["y1", "y2"]], ["w"])
    assert r.value == pytest.approx(3.0) and r.by_word_std["w"] == pytest.approx(1.0)
    assert ripa(emb, [["y1", "y2"], ["x1", "x2"]], ["w"]).value == pytest.approx(-3.0)
    # the first principal direction of (2, 0) and (0, 1.5) is (1, 0)
    assert ripa(emb, [["x1", "x2"], ["y1", "y2"]], ["w"], relation="pca").value == pytest.approx(4.0)
    assert ripa(emb, [["y1", "y2"], ["x1", "x2"]], ["w"], relation="pca").value == pytest.approx(-4.0)
    # doubling w doubles RIPA (no normalization)
    emb2 = emb.with_vectors(np.asarray(emb.vectors) * np.array([[1], [1], [1], [1], [2]]))
    assert ripa(emb2, [["x1", "x2"], ["y1", "y2"]], ["w"]).value == pytest.approx(6.0)


def test_generalized_weat_for_three_orthonormal_groups():
    e = np.eye(3)
    emb = tiny({"x1": e[0], "x2": e[1], "x3": e[2], "a1": e[0], "a2": e[1], "a3": e[2]})
    r = generalized_weat(emb, [["x1"], ["x2"], ["x3"]], [["a1"], ["a2"], ["a3"]], n_permutations=3000)
    assert r.value == pytest.approx(2.0)             # 3 * |e_i - mean|^2 = 3 * 2/3
    assert r.by_group == pytest.approx({"1": 2 / 3, "2": 2 / 3, "3": 2 / 3})
    # only the identity of the 6 assignments reaches it
    assert not r.exact and r.p_value == pytest.approx(1 / 6, abs=4 * r.p_value_se)
    anti = generalized_weat(emb, [["x1"], ["x2"], ["x3"]], [["a2"], ["a3"], ["a1"]], n_permutations=200)
    assert anti.value == pytest.approx(-1.0)         # anti-stereotypical: negative


def test_generalized_weat_with_two_groups_is_half_of_weats_mean_difference_with_its_p_value():
    emb = synthetic_embedding()
    t = wordlists.weat_tests("gender")[0]
    w = weat(emb, t, n_permutations=2000)
    g = generalized_weat(emb, [t.X.words, t.Y.words], [t.A.words, t.B.words], n_permutations=2000)
    assert g.value == pytest.approx(0.5 * (np.mean(w.s_X) - np.mean(w.s_Y)))
    assert g.p_value == pytest.approx(w.p_value) and g.exact == w.exact
    # few words: every partition counted, the same count as WEAT's
    sets = ([t.X.words[:5], t.Y.words[:5]], [t.A.words, t.B.words])
    w, g = weat(emb, *sets[0], *sets[1]), generalized_weat(emb, *sets)
    assert g.exact and w.exact and g.p_value == pytest.approx(w.p_value) and g.n_permutations == 252


def test_same_for_three_orthonormal_groups_follows_the_authors_weights():
    e = np.eye(3)
    emb = tiny({"g1": e[0], "g2": e[1], "g3": e[2], "u": e[2], "v": e[0] * 5})
    r = same(emb, [["g1"], ["g2"], ["g3"]], ["u", "v"])
    # c1 = e2 - e1, c2 = e3 - (e1 + e2)/2 (|c2| = sqrt 1.5); u: 0 + 1; v: 1/sqrt2 + (0.5/sqrt1.5)*sqrt1.5
    assert r.by_word == pytest.approx({"u": 1.0, "v": 1 / math.sqrt(2) + 0.5})
    assert r.value == pytest.approx((1.0 + 1 / math.sqrt(2) + 0.5) / 2)
    # skew and stereotype of a pair: mean and spread of cos(w, a_i - a_j)
    cos = np.array([0.0, 1 / math.sqrt(2)])          # u, v against e1 - e2
    assert r.skew["1 vs 2"] == pytest.approx(cos.mean()) and r.stereotype["1 vs 2"] == pytest.approx(cos.std())
    assert set(r.skew) == {"1 vs 2", "1 vs 3", "2 vs 3"}


def test_same_with_two_groups_is_the_absolute_cosine_with_the_group_difference():
    emb, words = random_emb()
    r = same(emb, [words[:5], words[5:9]], [words[20:30]])
    v = np.asarray(emb.vectors, dtype=np.float64)
    unit = v / np.linalg.norm(v, axis=1, keepdims=True)
    diff = unit[5:9].mean(0) - unit[:5].mean(0)
    cos = unit[20:30] @ diff / np.linalg.norm(diff)
    assert r.value == pytest.approx(np.abs(cos).mean())
    assert r.skew["1 vs 2"] == pytest.approx(-cos.mean())


# -- invariances ------------------------------------------------------------------------------------


def _values(emb, words):
    t2, t3 = [words[:6], words[6:12]], [words[:6], words[6:12], words[12:18]]
    attrs = {"A": words[20:28], "B": words[28:36], "C": words[36:44]}
    return {"mac": mac(emb, t3, attrs).value, "rnd": rnd(emb, t2, attrs).value,
            "ripa": ripa(emb, t2, attrs).value, "gweat": generalized_weat(emb, t3, attrs, n_permutations=50).value,
            "same": same(emb, t3, attrs).value}


def test_every_metric_is_invariant_to_a_rotation_and_all_but_ripa_to_a_scale():
    emb, words = random_emb()
    base = _values(emb, words)
    assert _values(rotated(emb), words) == pytest.approx(base)
    scaled = _values(rotated(emb, scale=3.0), words)
    assert scaled["ripa"] == pytest.approx(3 * base["ripa"])
    assert {k: v for k, v in scaled.items() if k != "ripa"} == pytest.approx(
        {k: v for k, v in base.items() if k != "ripa"})


def test_word_order_within_sets_does_not_matter():
    emb, words = random_emb()
    a = mac(emb, [words[:6], words[6:12]], [words[20:30]]).value
    assert mac(emb, [words[5::-1], words[11:5:-1]], [words[29:19:-1]]).value == pytest.approx(a)


# -- intervals, missing words, bad input -------------------------------------------------------------


@pytest.mark.parametrize("fn", [mac, rnd, ripa, generalized_weat, same])
def test_interval_present_and_reproducible(fn):
    emb, words = random_emb(n=80)
    args = ([words[:8], words[8:16]], [words[20:30], words[30:40]])
    r = fn(emb, *args, bootstrap=300)
    assert r.ci is not None and r.ci[0] < r.value < r.ci[1]
    assert fn(emb, *args, bootstrap=300).ci == r.ci
    assert fn(emb, *args).ci is None
    assert json.loads(json.dumps(r.to_dict()))["value"] == pytest.approx(r.value)


def test_missing_words_are_reported_and_too_many_refused():
    emb, words = random_emb()
    r = mac(emb, {"g": words[:4] + ["zzz"], "h": words[4:9]}, {"A": words[20:25]})
    assert r.missing["target g"] == ["zzz"] and r.n_missing == 1 and "zzz" not in r.words["target g"]
    with pytest.raises(MissingWordsError, match="MAC: attribute set 'A'.*'q1'"):
        mac(emb, [words[:4]], {"A": ["q1", "q2", words[20]]})
    # RIPA drops a pair whole and names the missing word
    r = ripa(emb, [[words[0], "zzz", words[2], words[3], words[4]], words[5:10]], [words[20:25]])
    assert r.pairs == [[words[i], words[i + 5]] for i in (0, 2, 3, 4)] and r.missing["target 1"] == ["zzz"]
    with pytest.raises(EmbdebiasError, match="RIPA: 2 of 3 pairs"):
        ripa(emb, [[words[0], "zzz", "yyy"], words[5:8]], [words[20:25]])


def test_bad_input_gives_one_clear_error():
    emb, words = random_emb()
    three = [words[:3], words[3:6], words[6:9]]
    with pytest.raises(EmbdebiasError, match="rnd: expected 2 target sets, got 3.*two at a time"):
        rnd(emb, three, [words[20:25]])
    with pytest.raises(EmbdebiasError, match="ripa: the two target sets are pairs by position"):
        ripa(emb, [words[:3], words[3:5]], [words[20:25]])
    with pytest.raises(EmbdebiasError, match="one attribute set per target set"):
        generalized_weat(emb, three, [words[20:25]])
    with pytest.raises(EmbdebiasError, match="distance must be one of euclidean, cosine"):
        rnd(emb, three[:2], [words[20:25]], distance="manhattan")
    with pytest.raises(EmbdebiasError, match="must be a list of word lists"):
        mac(emb, "she he", [words[20:25]])
    with pytest.raises(EmbdebiasError, match="generalized_weat: n_permutations: expected an integer >= 1"):
        generalized_weat(emb, three, [words[20:23], words[23:26], words[26:29]], n_permutations=0)
    with pytest.raises(EmbdebiasError, match="at least 2 target sets"):
        same(emb, [words[:3]], [words[20:25]])


# -- the registered metrics --------------------------------------------------------------------------


def test_registered_and_exported_but_not_in_the_default_suite():
    from embdebias.evaluate import DEFAULT_SUITE

    for name in QUERY_METRICS:
        assert name in METRICS and name not in DEFAULT_SUITE
        assert METRICS[name].function in metrics.__all__


@pytest.fixture(scope="module")
def three_groups(tmp_path_factory):
    """A three-group attribute over the synthetic embedding's words (a user's JSON file)."""
    emb = synthetic_embedding()
    words = [w for w in emb.words if w.startswith("filler")]
    path = tmp_path_factory.mktemp("attr") / "tri.json"
    path.write_text(json.dumps({
        "name": "tri", "groups": ["a", "b", "c"],
        "defining_sets": [[words[i], words[i + 1], words[i + 2]] for i in range(0, 18, 3)],
        "group_words": {"a": words[30:36], "b": words[36:42], "c": words[42:48]},
        "neutral_words": words[100:140],
        "attribute_sets": {"a": words[50:56], "b": words[56:62], "c": words[62:68]},
    }), encoding="utf-8")
    return emb, load_attribute(path)


def _ctx(emb, attribute=None):
    ctx = EvalContext(reference=emb, reference_name=emb.name)
    if attribute is not None:
        ctx.attribute = attribute
    return ctx


def test_registered_metrics_score_a_three_group_attribute_pairwise_where_binary(three_groups):
    emb, attr = three_groups
    ctx = _ctx(emb, attr)
    assert METRICS["rnd"].units(ctx) == [f"{s}: {i} vs {j}" for s in ("a", "b", "c", "neutral words")
                                          for i, j in (("a", "b"), ("a", "c"), ("b", "c"))]
    assert METRICS["mac"].units(ctx) == ["attribute sets"]
    for name in QUERY_METRICS:
        metric = METRICS[name]
        assert "tri" in metric.data(ctx) and "tri" in metric.legend_for(ctx)
        for unit in metric.units(ctx):
            result, cells, samples = metric.score(emb, unit, ctx)
            assert samples, (name, unit)
            for (test, stat), sample in samples.items():
                assert sample.value() == pytest.approx(cells[test][stat]), (name, unit, test, stat)
    # the RND of one pair is the function's on those two groups
    _, cells, _ = METRICS["rnd"].score(emb, "neutral words: a vs c", ctx)
    assert cells["neutral words: a vs c"]["rnd"] == pytest.approx(
        rnd(emb, [attr.group_words["a"], attr.group_words["c"]], [attr.neutral_words]).value)
    # SAME's pairs get their own rows
    _, cells, _ = METRICS["same"].score(emb, "neutral words", ctx)
    assert set(cells) == {"neutral words", "neutral words: a vs b", "neutral words: a vs c", "neutral words: b vs c"}


def test_generalized_weat_matches_stereotype_sets_to_groups_by_name():
    from types import SimpleNamespace

    from embdebias.metrics.generalized_weat import matched_sets

    attr = SimpleNamespace(name="x", groups=("a", "b"), k=2,
                           attribute_sets={"b_stereotypes": ["u"], "other": ["v"], "a stereotypes": ["w"]})
    assert list(matched_sets(attr)) == ["a stereotypes", "b_stereotypes"]
    attr.attribute_sets = {"first": ["u"], "second": ["v"]}
    assert list(matched_sets(attr)) == ["first", "second"]


def test_without_an_attribute_the_metrics_measure_gender():
    emb = synthetic_embedding()
    ctx = _ctx(emb)
    assert METRICS["rnd"].units(ctx)[-1] == "neutral words" and "gender" in METRICS["mac"].data(ctx)
    _, cells, _ = METRICS["mac"].score(emb, "attribute sets", ctx)
    assert 0 < cells["attribute sets"]["mac"] < 2
    # gender's attribute sets are not one per group: the generalized WEAT has no unit and says why
    assert METRICS["generalized_weat"].units(ctx) == []
    assert "not scored: attribute 'gender' needs one attribute set per group" in METRICS["generalized_weat"].data(ctx)


def test_an_attribute_without_attribute_sets_gives_no_units(tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"name": "plain", "groups": ["f", "m"],
                                "defining_sets": [["she", "he"], ["woman", "man"]]}), encoding="utf-8")
    ctx = _ctx(synthetic_embedding(), load_attribute(path))
    for name in QUERY_METRICS:
        assert METRICS[name].units(ctx) == [], name
    assert "nothing to score" in METRICS["mac"].data(ctx)


def test_paired_change_of_a_registered_metric_sees_a_planted_shift(three_groups):
    emb, attr = three_groups
    ctx = _ctx(emb, attr)
    _, _, ref = METRICS["same"].score(emb, "neutral words", ctx)
    # shrink the scored words' components along the group differences: SAME falls
    means = np.stack([np.asarray(emb[list(attr.group_words[g])], dtype=np.float64).mean(0) for g in attr.groups])
    basis, _ = np.linalg.qr((means[1:] - means[0]).T)
    vecs = np.asarray(emb.vectors, dtype=np.float64).copy()
    rows = [emb.words.index(w) if hasattr(emb.words, "index") else list(emb.words).index(w)
            for w in attr.neutral_words]
    vecs[rows] -= 0.9 * (vecs[rows] @ basis) @ basis.T
    _, _, other = METRICS["same"].score(emb.with_vectors(vecs, name="less"), "neutral words", ctx)
    key = ("neutral words", "same")
    out = paired_change(ref[key], other[key], 300, resample_rng(0, "paired", "same", *key))
    assert out["change"] < 0 and out["outcome"] == "improved"


# -- the fidelity benchmark's query building (WEFE itself runs in benchmarks/results/attributes.md) ---


def _bench():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_attributes.py"
    spec = importlib.util.spec_from_file_location("bench_attributes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_gives_wefe_pairs_without_repeated_or_missing_words():
    bench = _bench()
    sets = [("black", "caucasian", "asian"), ("african", "caucasian", "asian"), ("black", "white", "asian"),
            ("Africa", "america", "asia")]
    vocab = {"black", "caucasian", "asian", "african", "white", "africa", "asia"}
    # caucasian repeats (pair 2 dropped), america is missing (pair 4 dropped); Africa is lower-cased
    assert bench.ripa_pairs(sets, 0, 1, vocab) == (["black"], ["caucasian"], 3)
    assert bench.ripa_pairs(sets, 0, 2, vocab) == (["black", "africa"], ["asian", "asia"], 2)


def test_bench_queries_cover_every_pair_of_groups(three_groups):
    emb, attr = three_groups
    qs = _bench().attribute_queries(attr, set(emb.words))
    metrics_ = [q["metric"] for q in qs]
    assert metrics_.count("MAC") == 2 and metrics_.count("RIPA") == 3 * 4 and metrics_.count("RND") == 3 * 4
    # our side of a query is the metric function on the same sets
    q = next(q for q in qs if q["metric"] == "RND cos")
    assert _bench().ours(emb, q) == pytest.approx(-rnd(emb, q["targets"], q["attributes"], distance="cosine").value)


def test_evaluate_gives_the_query_metrics_intervals_and_paired_comparisons():
    from embdebias.evaluate import evaluate

    emb = synthetic_embedding()
    other = emb.with_vectors(np.asarray(emb.vectors) * 2.0, name="scaled")
    report = evaluate({"orig": emb, "scaled": other}, tests=list(QUERY_METRICS), bootstrap=100)
    assert not report.failures and "not scored" in report.data["generalized_weat"]
    for metric, test, stat in [("mac", "attribute sets", "mac"), ("rnd", "neutral words", "rnd"),
                               ("ripa", "career", "ripa"), ("same", "family", "stereotype")]:
        assert report.interval(metric, test, stat, "orig") is not None, (metric, test)
    changes = {(c["metric"], c["test"], c["statistic"]): c for c in report.comparisons}
    # a uniform scale changes RIPA only (it reads raw vectors): the others' changes are 0
    assert changes[("mac", "attribute sets", "mac")]["change"] == pytest.approx(0.0, abs=1e-12)
    assert changes[("ripa", "career", "ripa")]["value"] == pytest.approx(
        2 * changes[("ripa", "career", "ripa")]["reference_value"])
    assert "attribute gender, `wordlists/attributes/gender.json`" in report.data["mac"]
    assert "| attribute sets | MAC (mean cosine distance) |" in report.to_markdown()


def test_generalized_weat_refuses_a_partial_match_of_sets_to_groups():
    from embdebias.data.attributes import Attribute
    from embdebias.errors import EmbdebiasError
    from embdebias.metrics.generalized_weat import matched_sets

    groups = ("black", "white", "asian")
    sets = (("b", "w", "a"),)
    partial = Attribute("race", groups, sets, attribute_sets={"white_x": ("p",), "black_x": ("q",), "misc": ("r",)})
    with pytest.raises(EmbdebiasError, match="one attribute set per group"):
        matched_sets(partial)
    unnamed = Attribute("race", groups, sets, attribute_sets={"one": ("p",), "two": ("q",), "three": ("r",)})
    assert list(matched_sets(unnamed)) == ["one", "two", "three"]


def test_generalized_weat_counts_as_a_significance_test_in_the_first_screen():
    from embdebias.report import Report
    from embdebias.report.summary import _biased_sentence

    r = Report(["original"], params={"groups": ["a", "b", "c"], "attribute": "colour"})
    r.add("original", "generalized_weat", "stereotype sets", "statistic", 0.13)
    r.add("original", "generalized_weat", "stereotype sets", "p_value", 0.001)
    assert _biased_sentence(r).startswith("**Is 'original' biased by colour? Yes**: 1 of 1 test families")
    assert "generalized WEAT (1 of 1 tests p < 0.05; statistic 0.13 to 0.13)" in _biased_sentence(r)
