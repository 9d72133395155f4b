"""Fairness metrics with many groups: PCM never forms all pairs past its stated limits, set
comparisons refuse past theirs, and each refusal is one line."""

import itertools
import tracemalloc

import numpy as np
import pytest

from embdebias import fairness as F
from embdebias.cli import main
from embdebias.errors import FairnessInputError
from embdebias.fairness import generalized


def many(n_groups, per_group=2, templates=False, seed=0, low=0.05):
    rng = np.random.default_rng(seed)
    groups = np.repeat([f"g{i:06d}" for i in range(n_groups)], per_group)
    scores = rng.uniform(low, 1, groups.size)
    tmpl = np.tile([f"t{k}" for k in range(per_group)], n_groups) if templates else None
    return scores, groups, tmpl


def brute_force(d, scores, groups, templates):
    """PCM's per-template sums over all pairs, pair by pair (the definition)."""
    data = F.prepare(scores, groups, templates=templates)
    table = np.zeros((data.n_templates, data.n_groups))
    np.add.at(table, (data.template_codes, data.group_codes), data.scores)
    table /= np.bincount(data.cell_codes).reshape(table.shape)
    dist = F.distance(d)
    return np.array([sum(dist(row[i], row[k]) for i, k in itertools.combinations(range(len(row)), 2))
                     for row in table])


@pytest.mark.parametrize("d", generalized.CLOSED_FORMS)
@pytest.mark.parametrize("templates", [False, True])
def test_closed_forms_equal_the_pairs(d, templates, monkeypatch):
    scores, groups, tmpl = many(40, 3, templates)
    monkeypatch.setattr(generalized, "PAIR_PARTS_LIMIT", 10)  # 780 pairs: past it, the closed form
    closed = F.pcm(scores, groups, d=d, templates=tmpl, normalizer="one")
    assert closed.parts == {}
    expected = brute_force(d, scores, groups, tmpl)
    assert closed.value == pytest.approx(expected.mean(), rel=1e-12)
    monkeypatch.setattr(generalized, "PAIR_PARTS_LIMIT", 10_000)  # the pairs, listed
    listed = F.pcm(scores, groups, d=d, templates=tmpl, normalizer="one")
    assert len(listed.parts) == 780 and listed.value == pytest.approx(closed.value, rel=1e-12)
    assert sum(listed.parts.values()) == pytest.approx(listed.value, rel=1e-12)


def test_a_hundred_thousand_groups_in_bounded_memory():
    scores, groups, _ = many(100_000)
    tracemalloc.start()
    result = F.pcm(scores, groups, d="absolute_difference", normalizer="one")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # sorted, x_(j) weighs 2j - (G - 1): the same sum as the five billion pairs
    means = np.sort(scores.reshape(-1, 2).mean(axis=1))
    j = np.arange(means.size)
    assert result.value == pytest.approx(float(means @ (2 * j - means.size + 1)), rel=1e-9)
    assert result.parts == {} and len(result.group_scores) == 100_000
    assert peak < 150 << 20, peak


def test_past_the_pairs_limit_a_comparison_without_closed_form_is_refused(monkeypatch):
    scores, groups, _ = many(30)
    monkeypatch.setattr(generalized, "PAIR_PARTS_LIMIT", 100)
    monkeypatch.setattr(generalized, "PAIRS_LIMIT", 400)  # 435 pairs

    def my_d(x, y):
        return abs(x - y)

    with pytest.raises(FairnessInputError, match="PCM with my_d compares each pair of groups: 30 groups make 435 "
                                                 "pairs, more than 400"):
        F.pcm(scores, groups, d=my_d)
    assert F.pcm(scores, groups).value > 0  # absolute_difference: its closed form


def test_set_comparisons_refuse_past_their_limit(monkeypatch):
    scores, groups, _ = many(50, 4)
    labels = np.tile([0, 1], 100)
    monkeypatch.setattr(generalized, "SET_SCORES_LIMIT", 5_000)
    with pytest.raises(FairnessInputError, match=r"wasserstein of the score sets \(scores\) would read 9,800 scores"):
        F.pcm(scores, groups, d="wasserstein")
    with pytest.raises(FairnessInputError, match="would read 10,000 scores in all"):  # 50 groups x all 200 scores
        F.fairness_metric("bpsn_auc", scores, groups, labels=labels)
    monkeypatch.setattr(generalized, "SET_SCORES_LIMIT", 20_000)
    assert len(F.fairness_metric("bpsn_auc", scores, groups, labels=labels)) == 50


@pytest.mark.parametrize("d, says", [
    ("ratio", "ratio comparing group 'g000000' with group 'g000003': ratio x / y is undefined"),
    ("inverse_ratio", "inverse_ratio comparing group 'g000003' with group 'g000004': inverse_ratio y / x is undefined"),
])
def test_a_zero_denominator_names_the_first_pair_in_the_closed_form_too(d, says, monkeypatch):
    scores, groups, _ = many(40, 1)
    scores[3] = 0.0
    for limit in (10, 10_000):
        monkeypatch.setattr(generalized, "PAIR_PARTS_LIMIT", limit)
        with pytest.raises(FairnessInputError, match=says):
            F.pcm(scores, groups, d=d)


def test_too_many_template_cells_is_one_line():
    scores, groups, _ = many(5_000, 1)
    templates = [f"t{i}" for i in range(5_000)]
    with pytest.raises(FairnessInputError, match="5,000 templates x 5,000 groups make 25,000,000 cells and "
                                                 "there are only 5,000 examples"):
        F.pcm(scores, groups, templates=templates)


def test_the_cli_on_a_hundred_thousand_groups(tmp_path, capsys):
    scores, groups, _ = many(100_000)
    path = tmp_path / "scores.csv"
    rows = "\n".join(f"e{i},{g},{s:.4f},{i % 2}" for i, (g, s) in enumerate(zip(groups, scores)))
    path.write_text("id,group,score,label\n" + rows + "\n", encoding="utf-8")
    assert main(["fairness", str(path), "--metric", "tpr_gap", "--metric", "fped"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert "100000 groups" in first and "99,980 more (--json lists all)" in first and len(first) < 600
    assert "tpr_gap = " in out and " vs " not in out  # no per-pair table
    assert main(["fairness", str(path), "--metric", "avg_group_fairness"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "more than 100,000,000" in err
