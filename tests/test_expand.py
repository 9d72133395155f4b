"""SVM expansion of the gender-specific seed list."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.svm import LinearSVC

from embdebias.debias.expand import (ExpansionResult, ExpansionWarning, GenderSpecificExpander,
                                     choose_threshold, expand_gender_specific, read_expanded)
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError


def planted(n=600, d=10, n_specific=60, seed=0):
    """Gender-specific words ``g*`` lie far out on axis 0 (both signs); others do not.

    The rows are interleaved so that specific words occur throughout the vocabulary.
    """
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, d)).astype(np.float32) * 0.3
    specific = rng.choice(n, n_specific, replace=False)
    v[:, 1:] += 1.0   # a common direction, as in real embeddings
    v[specific, 0] = np.where(rng.random(n_specific) < 0.5, 3.0, -3.0)
    # the planted feature is |x0|: add x0^2 as a coordinate so a linear SVM can see it
    v[:, 2] = v[:, 0] ** 2
    words = [f"g{i}" if i in set(specific) else f"w{i}" for i in range(n)]
    return Embedding(words, v, name="planted"), sorted((w for w in words if w.startswith("g")),
                                                      key=words.index)


def overlapping(n=1500, n_train=800, d=6, n_seed=80, shift=3.0, seed=0):
    """Seeds ``s*`` among the first ``n_train`` words are shifted along axis 0, but the
    classes overlap, so held-out precision falls as the threshold is lowered.  Words
    ``u*`` past ``n_train`` are shifted the same way but are not seeds."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, d)).astype(np.float32)
    v[:, 1] += 2.0
    seed_rows = rng.choice(n_train, n_seed, replace=False)
    late_rows = n_train + rng.choice(n - n_train, n_seed // 2, replace=False)
    v[seed_rows, 0] += shift
    v[late_rows, 0] += shift
    words = [f"w{i}" for i in range(n)]
    for r in seed_rows:
        words[r] = f"s{r}"
    for r in late_rows:
        words[r] = f"u{r}"
    return Embedding(words, v, name="overlapping"), [f"s{r}" for r in sorted(seed_rows)]


def oof_scores(emb, seeds, n_train, cv, random_state, C=1.0):
    """Out-of-fold decisions of the training words, computed here independently."""
    x = np.array(emb.vectors[:n_train], dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.isin(np.array(emb.words.tolist()[:n_train]), seeds).astype(int)
    splitter = StratifiedKFold(n_splits=cv, shuffle=True, random_state=random_state)
    s = cross_val_predict(LinearSVC(C=C, random_state=random_state, max_iter=10_000), x, y,
                          cv=splitter, method="decision_function")
    return y, s


def brute_force_threshold(y, s, target):
    """Every distinct score as a threshold: the largest recall with precision >= target,
    then the highest such threshold."""
    best = None
    for t in np.unique(s):
        pred = s >= t
        p, r = y[pred].mean(), y[pred].sum() / y.sum()
        if r > 0 and p >= target and (best is None or r > best[1] or (r == best[1] and t > best[0])):
            best = (t, r, p)
    return best


def test_choose_threshold_matches_brute_force_with_ties():
    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.2).astype(int)
    s = np.round(rng.standard_normal(300) + 1.5 * y, 1)      # rounded: many tied scores
    for target in (0.3, 0.5, 0.7, 0.9):
        got = choose_threshold(y, s, target)
        want = brute_force_threshold(y, s, target)
        if want is None:
            assert got["threshold"] is None
            continue
        assert got["threshold"] == pytest.approx(want[0])
        assert got["recall"] == pytest.approx(want[1]) and got["precision"] == pytest.approx(want[2])
        assert got["precision"] >= target
        assert got["f1"] == pytest.approx(2 * want[1] * want[2] / (want[1] + want[2]))
        assert got["accuracy"] == pytest.approx(np.mean((s >= want[0]) == y))
    # the best word of all is not a seed and precision never recovers
    y2 = np.array([0, 0, 1, 0, 1, 0, 0])
    s2 = np.array([9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0])
    got = choose_threshold(y2, s2, 0.5)
    assert got["threshold"] is None and got["recall"] is None
    assert got["best_precision"] == pytest.approx(2 / 5)


def test_chosen_threshold_reaches_the_target_on_held_out_words():
    emb, seeds = overlapping()
    for target in (0.6, 0.8):
        res = expand_gender_specific(emb, seeds, n_train=800, target_precision=target, cv=5,
                                     random_state=3)
        y, s = oof_scores(emb, seeds, 800, 5, 3)
        want = brute_force_threshold(y, s, target)
        assert res.threshold == pytest.approx(want[0], abs=1e-5)
        pred = s >= res.threshold - 1e-6      # float32 scores: no exact equality
        assert y[pred].mean() >= target
        assert res.cv_precision == pytest.approx(y[pred].mean())
        assert res.cv_recall == pytest.approx(y[pred].sum() / y.sum())
        assert 0 < res.cv_recall < 1 and res.cv_precision < 1   # the classes do overlap
        # a lower threshold (more recall) misses the target
        lower = s[s < res.threshold]
        assert all(y[s >= t].mean() < target for t in lower if y[s >= t].sum() > y[pred].sum())
        assert res.target_reached and res.cv_folds == 5 and res.target_precision == target
        assert f"decision >= {res.threshold:.4f}" in res.summary()


def test_higher_target_adds_fewer_words():
    emb, seeds = overlapping(seed=1)
    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExpansionWarning)
        for target in (0.5, 0.7, 0.9):
            runs[target] = expand_gender_specific(emb, seeds, n_train=800, max_rank=None,
                                                  target_precision=target, random_state=0)
    assert runs[0.5].threshold < runs[0.7].threshold <= runs[0.9].threshold
    assert runs[0.5].n_added > runs[0.7].n_added >= runs[0.9].n_added
    assert set(runs[0.9].added) <= set(runs[0.7].added) <= set(runs[0.5].added)
    assert runs[0.5].cv_recall > runs[0.9].cv_recall
    for res in runs.values():
        assert res.n_added == len(res.added)
        assert not set(res.added) & set(seeds)                       # added: non-seeds only
        assert set(res.words) == set(seeds) | set(res.added)         # all seeds kept


def test_max_rank_restricts_labelling():
    emb, specific = planted()
    rows = dict(zip(specific, emb.words.rows(specific)))
    seed = [w for w in specific if rows[w] < 300]
    late = [w for w in specific if rows[w] >= 300]
    whole = expand_gender_specific(emb, seed, n_train=300, max_rank=None, cv=3)
    assert whole.max_rank == 600 == whole.vocab_size and "whole vocabulary" in whole.summary()
    assert len(set(whole.added) & set(late)) >= 0.8 * len(late)
    assert len(set(whole.added) - set(late)) <= 5
    part = expand_gender_specific(emb, seed, n_train=300, max_rank=450, cv=3)
    assert part.max_rank == 450 and "450 most frequent words" in part.summary()
    assert part.threshold == whole.threshold
    assert part.added == [w for w in whole.added if emb.words.rows([w])[0] < 450]
    assert 0 < part.n_added < whole.n_added
    # default: the training words only; every specific word there is a seed already
    with pytest.warns(ExpansionWarning, match="no word outside the seed list"):
        default = expand_gender_specific(emb, seed, n_train=300, cv=3)
    assert default.max_rank == 300 and default.added == [] and default.words == seed


def test_held_out_and_late_seeds_stay_in_the_list():
    emb, specific = planted(seed=2)
    rows = emb.words.rows(specific)
    late_seed = [w for w, r in zip(specific, rows) if r >= 300]
    with pytest.warns(ExpansionWarning):
        res = expand_gender_specific(emb, specific + ["not_a_word", "another_missing"],
                                     n_train=300, cv=4)
    assert res.n_train == 300
    assert res.seed_in_training == len(specific) - len(late_seed)
    assert res.seed_found == specific and res.seed_missing == ["not_a_word", "another_missing"]
    assert res.seed_coverage == pytest.approx(len(specific) / (len(specific) + 2))
    assert res.words == specific            # vocabulary order; late seeds kept past max_rank
    assert np.all(np.diff(emb.words.rows(res.words)) > 0)


def test_labelling_pass_equals_the_classifier():
    emb, specific = planted(seed=1)
    x = emb.vectors / np.linalg.norm(emb.vectors, axis=1, keepdims=True)
    words = np.array(emb.words.tolist())
    # the SVM's own rule, no cross-validation
    res = expand_gender_specific(emb, specific[:40], n_train=400, target_precision=None, cv=None,
                                 max_rank=None, chunk_rows=37)
    assert res.cv_accuracy is None and res.cv_folds == 0 and res.threshold == 0.0
    pred = res.classifier.predict(x).astype(bool)
    assert set(res.words) == set(words[pred]) | set(specific[:40])
    assert res.n_predicted == int(pred.sum())
    # a tuned threshold
    res = expand_gender_specific(emb, specific[:40], n_train=400, target_precision=0.9, cv=3,
                                 max_rank=500, chunk_rows=37)
    d = res.classifier.decision_function(x)
    labelled = (d >= res.threshold) & (np.arange(len(words)) < 500)
    assert res.added == [w for w in words[labelled] if w not in specific[:40]]
    assert res.n_predicted == int(labelled.sum())


def test_results_repeat_with_the_same_seed():
    emb, seeds = overlapping(seed=3)
    a = expand_gender_specific(emb, seeds, n_train=800, cv=4, random_state=7, max_rank=None)
    b = expand_gender_specific(emb, seeds, n_train=800, cv=4, random_state=7, max_rank=None)
    assert a.added and a.words == b.words and a.added == b.added
    assert (a.threshold, a.cv_precision, a.cv_recall, a.cv_f1, a.cv_accuracy) == \
           (b.threshold, b.cv_precision, b.cv_recall, b.cv_f1, b.cv_accuracy)
    np.testing.assert_array_equal(a.classifier.coef_, b.classifier.coef_)
    c = expand_gender_specific(emb, seeds, n_train=800, cv=4, random_state=8, max_rank=None)
    assert c.threshold != a.threshold       # the seed does reach the folds


def test_unreachable_target_adds_nothing_with_a_warning():
    # every word has the same vector: in every fold the held-out words share one score,
    # and the stratified folds hold seeds in the proportion 10 / 100 at any threshold
    words = [f"s{i}" for i in range(10)] + [f"w{i}" for i in range(90)]
    emb = Embedding(words, np.ones((100, 4), dtype=np.float32), name="flat")
    with pytest.warns(ExpansionWarning, match="no decision threshold reaches .* 0.50"):
        res = expand_gender_specific(emb, words[:10], n_train=100, target_precision=0.5,
                                     max_rank=None)
    assert not res.target_reached and res.threshold is None
    assert res.cv_best_precision == pytest.approx(0.1)
    assert res.cv_precision is None and res.cv_recall is None and res.cv_f1 is None
    assert res.added == [] and res.n_added == 0 and res.n_predicted == 0
    assert res.words == words[:10]
    assert "no threshold reaches held-out precision 0.50" in res.summary()
    assert "nothing added" in res.summary()
    est = GenderSpecificExpander(words[:10], n_train=100, target_precision=0.5)
    with pytest.warns(ExpansionWarning):
        est.fit(emb)
    assert est.threshold_ is None and not est.predict(emb.vectors).any()


def test_no_seed_in_training_words_raises():
    emb, specific = planted(seed=4)
    with pytest.raises(MissingWordsError):
        expand_gender_specific(emb, ["nothing", "here"], n_train=100)


def test_bad_options_raise():
    emb, specific = planted(seed=4)
    for kwargs in ({"target_precision": 0.0}, {"target_precision": 1.5}, {"target_precision": "x"},
                   {"target_precision": 0.8, "cv": None}, {"max_rank": 0},
                   {"max_rank": "all"}, {"max_rank": 2.5}, {"max_rank": True}, {"max_rank": [3]}):
        with pytest.raises(EmbdebiasError):
            expand_gender_specific(emb, specific, n_train=300, **kwargs)
    # one seed in the training words cannot be cross-validated
    rows = emb.words.rows(specific)
    first = specific[int(np.argmin(rows))]
    with pytest.raises(MissingWordsError, match="cross-validation"):
        expand_gender_specific(emb, [first], n_train=int(rows.min()) + 1)


def test_estimator_mirrors_the_function_and_saves(tmp_path):
    emb, seeds = overlapping(seed=5)
    params = dict(n_train=700, target_precision=0.7, max_rank=1200, C=0.5,
                  class_weight="balanced", random_state=2, cv=4, chunk_rows=100, max_iter=5000)
    est = GenderSpecificExpander(seeds, **params)
    for k, v in params.items():
        assert getattr(est, k) == v
    est.fit(emb)
    ref = expand_gender_specific(emb, seeds, **params)
    assert est.words_ == ref.words and est.added_ == ref.added and est.added_
    assert est.threshold_ == ref.threshold
    # predict applies the chosen threshold to the candidates' vectors
    cand = emb.vectors[:1200]
    labelled = set(np.array(emb.words.tolist()[:1200])[est.predict(cand)])
    assert set(est.added_) == labelled - set(seeds)
    path = tmp_path / "gs.txt"
    est.result_.save(path)
    assert read_expanded(path) == est.words_
    from embdebias.wordlists import load_words

    assert load_words(path) == est.words_


def test_expanded_list_round_trips_verbatim(tmp_path):
    words = ["#she", "he", " padded", "w1"]
    res = ExpansionResult(words=words, seed_found=words, seed_missing=[], seed_in_training=4, n_train=10,
                          n_predicted=4, n_added=0, cv_accuracy=None, cv_f1=None, cv_folds=0, classifier=None)
    res.save(tmp_path / "x.txt")
    assert read_expanded(tmp_path / "x.txt") == words
    with pytest.raises(EmbdebiasError, match="input"):
        res.save(tmp_path / "x.txt", inputs=[tmp_path / "x.txt"])


def test_lowercase_seed_fallback():
    rng = np.random.default_rng(0)
    words = ["mary", "john"] + [f"w{i}" for i in range(200)]
    emb = Embedding(words, rng.normal(size=(len(words), 8)))
    with pytest.warns(ExpansionWarning):
        res = expand_gender_specific(emb, seed=["Mary", "John"], n_train=202, cv=None,
                                     target_precision=None)
    assert res.seed_found == ["mary", "john"] and res.seed_missing == []
    assert res.seed_in_training == 2            # not negatives
    assert set(res.words) >= {"mary", "john"}
