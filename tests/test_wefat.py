"""WEFAT (per-word association) against hand computation, its properties and its registered metric."""

import math
import statistics

import numpy as np
import pytest
from synthetic import synthetic_embedding

from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError
from embdebias.evaluate import evaluate
from embdebias.metrics import wefat
from embdebias.metrics.base import EvalContext
from embdebias.metrics._query import group_sets


def _toy():
    r = 1 / math.sqrt(2)
    words = ["w1", "w2", "w3", "a0", "a1", "b0", "b1"]
    vecs = [[1.0, 0, 0], [0, 2.0, 0], [r, r, 0], [1.0, 0, 0], [r, r, 0], [0, 1.0, 0], [0, 0, 1.0]]
    return Embedding(words, np.array(vecs)), ["w1", "w2", "w3"], {"A": ["a0", "a1"], "B": ["b0", "b1"]}


def _hand(cos_a, cos_b, ddof=1):
    s = statistics.fmean(cos_a) - statistics.fmean(cos_b)
    sd = statistics.stdev(cos_a + cos_b) if ddof == 1 else statistics.pstdev(cos_a + cos_b)
    return s / sd


def test_hand_computed_scores():
    emb, targets, attrs = _toy()
    r = wefat(emb, targets, attrs)
    c = 1 / math.sqrt(2)
    expected = [_hand([1, c], [0, 0]), _hand([0, c], [1, 0]), _hand([c, 1], [c, 0])]
    assert r.scores == pytest.approx(expected, rel=1e-6)
    assert r.associations[0] == pytest.approx((1 + c) / 2, rel=1e-6)
    assert r.value == pytest.approx(np.mean(np.abs(expected)), rel=1e-6)
    assert r.mean_score == pytest.approx(np.mean(expected), rel=1e-6)
    assert r.attribute_names == ["A", "B"] and r.n_scored == 3
    r0 = wefat(emb, targets, attrs, ddof=0)
    assert r0.scores[0] == pytest.approx(_hand([1, c], [0, 0], ddof=0), rel=1e-6)
    assert r.as_dict()["w1"] == r.scores[0]


def test_swapping_the_attribute_sets_negates_every_score():
    emb = synthetic_embedding()
    words = list(emb.words[100:160])
    a, b = list(emb.words[10:18]), list(emb.words[30:40])
    one = wefat(emb, words, [a, b])
    other = wefat(emb, words, {"B": b, "A": a})
    np.testing.assert_allclose(other.scores, -np.asarray(one.scores), rtol=1e-12)
    assert other.mean_abs_score == pytest.approx(one.mean_abs_score)
    # the scale of the vectors does not matter (cosines)
    scaled = emb.with_vectors(emb.vectors * 3.0)
    np.testing.assert_allclose(wefat(scaled, words, [a, b]).scores, one.scores, atol=1e-6)  # float32 storage


def _leaning(n_targets=40, seed=0):
    """Targets pushed towards the A words, in a random 8-d embedding."""
    rng = np.random.default_rng(seed)
    axis = np.eye(8)[0]
    vecs = np.vstack([rng.normal(size=(n_targets, 8)) + 1.5 * axis, rng.normal(size=(10, 8)) + 3 * axis,
                      rng.normal(size=(10, 8)) - 3 * axis])
    words = [f"t{i}" for i in range(n_targets)] + [f"a{i}" for i in range(10)] + [f"b{i}" for i in range(10)]
    return Embedding(words, vecs), words[:n_targets], {"A": words[n_targets:n_targets + 10], "B": words[-10:]}


def test_bootstrap_intervals_hold_the_values():
    emb, targets, attrs = _leaning()
    r = wefat(emb, targets, attrs, bootstrap=400)
    assert r.mean_score > 0.5
    assert r.ci[0] <= r.mean_abs_score <= r.ci[1]
    assert r.mean_ci[0] <= r.mean_score <= r.mean_ci[1]
    assert set(r.word_ci) == set(r.words)
    inside = [lo <= s <= hi for s, (lo, hi) in zip(r.scores, r.word_ci.values())]
    assert np.mean(inside) > 0.9


def test_the_resampling_statistic_on_all_items_is_the_value():
    from embdebias.metrics._common import lookup, unit_vectors
    from embdebias.metrics.wefat import wefat_sample

    emb, targets, attrs = _leaning(seed=1)
    r = wefat(emb, targets, attrs)
    vec = {k: unit_vectors(emb, lookup(emb, w).rows) for k, w in (("T", targets), ("A", attrs["A"]),
                                                                 ("B", attrs["B"]))}
    keys = {"T": targets, "A": attrs["A"], "B": attrs["B"]}
    cos_a, cos_b = vec["T"] @ vec["A"].T, vec["T"] @ vec["B"].T
    assert wefat_sample(keys, cos_a, cos_b).value() == pytest.approx(r.mean_abs_score, rel=1e-10)
    assert wefat_sample(keys, cos_a, cos_b, absolute=False).value() == pytest.approx(r.mean_score, rel=1e-10)


def test_bad_input():
    emb, targets, attrs = _toy()
    with pytest.raises(EmbdebiasError, match="exactly two attribute sets"):
        wefat(emb, targets, [["a0"], ["b0"], ["b1"]])
    with pytest.raises(EmbdebiasError, match="string"):
        wefat(emb, "w1", attrs)
    with pytest.raises(MissingWordsError, match="WEFAT: targets"):
        wefat(emb, ["w1", "nope1", "nope2"], attrs)


def test_registered_metric_gives_the_function_values_and_intervals():
    emb = synthetic_embedding()
    report = evaluate({"e": emb}, ["wefat"], bootstrap=300)
    groups = group_sets(EvalContext().attribute_or_default())
    names = list(groups)
    unit = f"{names[0]} vs {names[1]}"
    words = [w for w in report.params["options"].get("wefat", {}).get("neutral_words") or []] or None
    assert words is None
    from embdebias.metrics._query import neutral_word_set

    direct = wefat(emb, neutral_word_set(EvalContext(), None), {n: groups[n] for n in names[:2]}, bootstrap=300)
    assert report.value("wefat", unit, "mean_abs_score", "e") == pytest.approx(direct.mean_abs_score)
    assert report.value("wefat", unit, "mean_score", "e") == pytest.approx(direct.mean_score)
    lo, hi = report.interval("wefat", unit, "mean_abs_score", "e")
    assert (lo, hi) == pytest.approx(direct.ci, rel=1e-9)


def test_the_metric_takes_the_attribute_of_the_evaluation():
    """Three groups: one row per pair of groups, each the function on those two groups."""
    from embdebias.data.attributes import Attribute
    from embdebias.metrics import get_metric

    emb = synthetic_embedding()
    words = list(emb.words)
    attr = Attribute(name="toy", groups=("g1", "g2", "g3"),
                     defining_sets=tuple(zip(words[10:14], words[20:24], words[30:34])),
                     group_words={"g1": tuple(words[10:16]), "g2": tuple(words[20:26]), "g3": tuple(words[30:36])},
                     neutral_words=tuple(words[300:340]))
    ctx = EvalContext()
    ctx.attribute = attr
    metric = get_metric("wefat")
    assert metric.units(ctx) == ["g1 vs g2", "g1 vs g3", "g2 vs g3"]
    result, cells, samples = metric.score(emb, "g2 vs g3", ctx)
    direct = wefat(emb, words[300:340], {"g2": words[20:26], "g3": words[30:36]})
    assert cells["g2 vs g3"]["mean_abs_score"] == pytest.approx(direct.mean_abs_score)
    assert samples[("g2 vs g3", "mean_score")].value() == pytest.approx(direct.mean_score, rel=1e-6)
    # the factual association needs facts about this attribute: no row without them
    assert get_metric("factual").units(ctx) == []
