"""Residual bias, direct bias and the re-fitted subspace for attributes of k groups."""

from string import ascii_lowercase

import numpy as np
import pytest

from embdebias.data.attributes import Attribute
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError
from embdebias.metrics import direct_bias, get_metric, residual_bias
from embdebias.metrics.base import EvalContext
from embdebias.metrics.projection import subspace_norms
from embdebias.metrics.refit import subspace_cosine
from embdebias.metrics.residual import cluster_accuracy, group_directions, most_associated
from embdebias.subspace import BiasSubspace

SIZES = {"n_candidates": 2500, "n_cluster": 60, "n_classify": 150, "n_train": 200, "n_neighbours": 15}
GROUPS = {"g1": ["alpha", "alef"], "g2": ["beta", "bet"], "g3": ["gamma", "gimel"]}


def _word(i: int) -> str:
    out, i = "", i + 26**3
    while i:
        i, r = divmod(i, 26)
        out += ascii_lowercase[r]
    return out


def _three_groups(n=3000, dim=12, seed=0, strength=1.5):
    """Each filler word leans to one of three groups along e0..e2 (a planted 3-group attribute)."""
    rng = np.random.default_rng(seed)
    defining = [w for ws in GROUPS.values() for w in ws]
    words = defining + [_word(i) for i in range(n - len(defining))]
    vecs = rng.normal(0, 0.3, (n, dim))
    group = rng.integers(0, 3, n)
    vecs[np.arange(n), group] += strength * rng.uniform(0.2, 1.0, n)
    for j, ws in enumerate(GROUPS.values()):
        for w in ws:
            i = words.index(w)
            vecs[i] = rng.normal(0, 0.05, dim)
            vecs[i, j] = 1.0
    return Embedding(words, vecs.astype(np.float32), name="three")


@pytest.fixture(scope="module")
def three():
    return _three_groups()


def test_three_groups_are_recovered_in_the_original_and_gone_when_removed(three):
    r = residual_bias(three, three, groups=GROUPS, **SIZES)
    assert r.groups == ["g1", "g2", "g3"] and set(r.cluster_words) == set(GROUPS)
    assert all(len(v) == SIZES["n_cluster"] for v in r.cluster_words.values())
    assert r.cluster_accuracy > 0.9 and r.classification_accuracy > 0.9 and r.neighbour_correlation > 0.3
    vecs = np.array(three.vectors)
    vecs[:, :3] = 0.0                      # the group components removed from every word
    gone = Embedding(three.words, vecs, name="gone")
    g = residual_bias(three, gone, groups=GROUPS, **SIZES)
    # chance is 1/3 for three balanced groups; 2/3 would mean two groups still apart
    assert g.cluster_accuracy < 0.5 and g.classification_accuracy < 0.5
    assert abs(g.neighbour_correlation) < 0.2


def test_the_k_group_plan_is_chosen_once_per_original(three, monkeypatch):
    """A cache keeps the k-group word sets of the original for the next column: chosen once, the
    same results as without it."""
    from embdebias.metrics import residual

    vecs = np.array(three.vectors)
    vecs[:, 0] = 0.0
    tested = Embedding(three.words, vecs, name="e0 removed")
    small = {**SIZES, "n_cluster": 30, "n_classify": 80, "n_train": 100, "n_neighbours": 10}
    expected = [residual_bias(three, column, groups=GROUPS, **small).to_dict() for column in (three, tested)]
    calls = []
    choose = residual._choose_groups
    monkeypatch.setattr(residual, "_choose_groups", lambda *a, **kw: calls.append(a[0]) or choose(*a, **kw))
    cache = {}
    got = [residual_bias(three, column, groups=GROUPS, cache=cache, **small).to_dict() for column in (three, tested)]
    assert got == expected and calls == [three] and len(cache) == 1
    reordered = dict(reversed(GROUPS.items()))            # the groups' order is the scores' columns: another plan
    assert residual_bias(three, tested, groups=reordered, cache=cache, **small).groups == ["g3", "g2", "g1"]
    assert calls == [three, three] and len(cache) == 2


def test_words_most_associated_with_each_group_by_hand():
    scores = np.array([[0.9, 0.1, 0.0], [0.5, 0.6, 0.1], [0.2, 0.1, 0.8], [0.7, 0.0, 0.3], [0.1, 0.2, 0.3]])
    first, second, third = most_associated(scores, 2)
    assert first.tolist() == [0, 3] and second.tolist() == [1] and third.tolist() == [2, 4]


def test_group_directions_centre_the_centroids():
    emb = Embedding(["a", "b", "c"], np.eye(3))
    d = group_directions(emb, {"x": ["a"], "y": ["b"], "z": ["c"]})
    expected = np.eye(3) - 1 / 3
    np.testing.assert_allclose(d, expected / np.linalg.norm(expected, axis=1, keepdims=True), atol=1e-12)
    # two groups: opposite directions, the binary bias up to sign
    two = group_directions(emb, {"x": ["a"], "y": ["b"]})
    np.testing.assert_allclose(two[0], -two[1], atol=1e-12)
    np.testing.assert_allclose(two[0], np.array([1, -1, 0]) / np.sqrt(2), atol=1e-12)


def test_cluster_accuracy_matches_clusters_to_groups():
    rng = np.random.default_rng(1)
    centres = np.eye(3) * 10
    labels = np.repeat([0, 1, 2], 30)
    x = centres[labels] + rng.normal(0, 0.1, (90, 3))
    assert cluster_accuracy(x, labels, 0, n_clusters=3) == 1.0
    # the labels renamed: the same accuracy (the matching is found, not assumed)
    assert cluster_accuracy(x, (labels + 1) % 3, 0, n_clusters=3) == 1.0
    # one group split evenly over the other two clusters' points: 2/3 at best
    assert cluster_accuracy(x, np.where(labels == 2, np.arange(90) % 2, labels), 0, n_clusters=3) <= 2 / 3 + 1e-9


def test_two_groups_give_the_binary_protocol():
    """The k-group path on {he} vs {she} equals Gonen & Goldberg's binary protocol on he - she."""
    from test_residual import SIZES as BINARY_SIZES
    from test_residual import SPECIFIC, _planted

    emb = _planted()
    binary = residual_bias(emb, emb, gender_specific=SPECIFIC + ["he", "she"], **BINARY_SIZES)
    grouped = residual_bias(emb, emb, groups={"male": ["he"], "female": ["she"]}, gender_specific=SPECIFIC,
                            **BINARY_SIZES)
    assert grouped.cluster_words["male"] == binary.cluster_words["male"]
    assert grouped.cluster_words["female"] == binary.cluster_words["female"]
    assert grouped.cluster_accuracy == pytest.approx(binary.cluster_accuracy)
    assert grouped.classification_accuracy == pytest.approx(binary.classification_accuracy)
    assert grouped.neighbour_correlation == pytest.approx(binary.neighbour_correlation, rel=1e-9)


def test_a_group_with_too_few_words_is_refused(three):
    with pytest.raises(EmbdebiasError, match="too few candidates"):
        residual_bias(three, three, groups=GROUPS, **{**SIZES, "n_cluster": 900, "n_classify": 900, "n_train": 200})
    with pytest.raises(EmbdebiasError, match="at least two groups"):
        residual_bias(three, three, groups={"g1": GROUPS["g1"]}, **SIZES)


# -- direct bias on a k-dimensional subspace ---------------------------------------------------------


def test_direct_bias_on_k_components_is_the_norm_of_the_projection(three):
    words = list(three.words[10:60])
    comps = np.eye(12)[:2]
    r = direct_bias(three, words, subspace=comps)
    unit = three[words] / np.linalg.norm(three[words], axis=1, keepdims=True)
    assert r.n_components == 2
    assert r.direct_bias == pytest.approx(np.mean(np.sqrt(unit[:, 0] ** 2 + unit[:, 1] ** 2)), rel=1e-6)
    # a rotation of the basis inside the subspace, or a flipped sign, changes nothing
    c, s = np.cos(0.7), np.sin(0.7)
    rotated = np.array([c * comps[0] + s * comps[1], s * comps[0] - c * comps[1]])
    assert direct_bias(three, words, subspace=rotated).direct_bias == pytest.approx(r.direct_bias, rel=1e-9)
    # one component: |cos(w, g)|, as before
    one = direct_bias(three, words, subspace=comps[0])
    assert one.n_components == 1 and one.direct_bias == pytest.approx(np.mean(np.abs(unit[:, 0])), rel=1e-6)
    assert direct_bias(three, words, subspace=comps, c=2).direct_bias == pytest.approx(
        np.mean(unit[:, 0] ** 2 + unit[:, 1] ** 2), rel=1e-6)


def test_subspace_norms_and_cosines_by_hand():
    comps = np.eye(3)[:2]
    assert subspace_norms(np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0], [1.0, 1.0, 1.0]]), comps) == pytest.approx(
        [1.0, 0.0, np.sqrt(2 / 3)])
    assert subspace_cosine(comps, comps[::-1]) == pytest.approx(1.0)
    assert subspace_cosine(np.eye(3)[:1], np.eye(3)[1:2]) == pytest.approx(0.0)
    assert subspace_cosine(np.eye(3)[:2], np.eye(3)[1:3]) == pytest.approx(np.sqrt(0.5))


def test_the_registered_metrics_take_a_k_group_attribute(three, monkeypatch):
    """Residual and direct bias with a three-group attribute in the context (the subspace of the
    attribute given by from_components until the k-group BiasSubspace is merged)."""
    import embdebias.metrics.projection as projection

    attr = Attribute(name="toy", groups=("g1", "g2", "g3"), defining_sets=tuple(zip(*GROUPS.values())),
                     group_words={g: tuple(w) for g, w in GROUPS.items()},
                     neutral_words=tuple(three.words[100:160]))
    monkeypatch.setattr(projection, "attribute_subspace",
                        lambda emb, a, lists="published": BiasSubspace.from_components(np.eye(emb.dim)[:2]))
    ctx = EvalContext(reference=three, reference_name="three")
    ctx.attribute = attr
    db = get_metric("direct_bias")
    [unit] = db.units(ctx)
    assert unit == "neutral words"
    result, cells, samples = db.score(three, unit, ctx)
    expected = direct_bias(three, list(attr.neutral_words), subspace=np.eye(12)[:2]).direct_bias
    assert cells[unit]["direct_bias_original"] == pytest.approx(expected)
    assert samples[(unit, "direct_bias_own")].value() == pytest.approx(expected)
    assert result.n_components == 2

    res = get_metric("residual")
    assert res.units(ctx) == ["toy"]
    assert "3 groups" in res.legend_for(ctx)
