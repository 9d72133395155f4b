"""SVM expansion of the gender-specific seed list."""

from __future__ import annotations

import numpy as np
import pytest

from embdebias.debias.expand import (ExpansionResult, GenderSpecificExpander,
                                     expand_gender_specific)
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


def test_expansion_keeps_seeds_and_finds_the_planted_words():
    emb, specific = planted()
    rows = emb.words.rows(specific)
    frequent = [w for w, r in zip(specific, rows) if r < 300]     # the seeds cover these
    rare = [w for w, r in zip(specific, rows) if r >= 300]         # the SVM should find these
    seed = frequent + ["not_a_word", "another_missing"]
    res = expand_gender_specific(emb, seed, n_train=300, cv=3, random_state=0)
    assert isinstance(res, ExpansionResult)
    assert set(frequent) <= set(res.words)
    assert res.seed_found == frequent
    assert res.seed_missing == ["not_a_word", "another_missing"]
    assert res.seed_coverage == pytest.approx(len(frequent) / (len(frequent) + 2))
    found = set(res.words) & set(rare)
    assert len(found) >= 0.8 * len(rare), (len(found), len(rare))
    assert len(set(res.words) - set(specific)) <= 5
    assert 0.0 <= res.cv_accuracy <= 1.0 and 0.0 <= res.cv_f1 <= 1.0
    assert res.cv_folds == 3
    # words are in vocabulary order
    rows = emb.words.rows(res.words)
    assert np.all(np.diff(rows) > 0)
    assert res.n_added == len(set(res.words) - set(seed))
    assert "expanded list" in res.summary()


def test_labelling_pass_equals_classifier_predict():
    emb, specific = planted(seed=1)
    res = expand_gender_specific(emb, specific[:40], n_train=400, cv=None, chunk_rows=37)
    assert res.cv_accuracy is None and res.cv_folds == 0
    x = emb.vectors / np.linalg.norm(emb.vectors, axis=1, keepdims=True)
    pred = res.classifier.predict(x).astype(bool)
    expected = set(np.array(emb.words.tolist())[pred]) | set(specific[:40])
    assert set(res.words) == expected
    assert res.n_predicted == int(pred.sum())


def test_only_the_first_n_train_words_are_training_words():
    emb, specific = planted(seed=2)
    rows = emb.words.rows(specific)
    late_seed = [w for w, r in zip(specific, rows) if r >= 300]
    res = expand_gender_specific(emb, specific, n_train=300, cv=None)
    assert res.n_train == 300
    assert res.seed_in_training == len(specific) - len(late_seed)
    assert set(late_seed) <= set(res.words)      # seeds beyond n_train are still kept


def test_results_repeat_with_the_same_seed():
    emb, specific = planted(seed=3)
    a = expand_gender_specific(emb, specific[:25], n_train=500, cv=4, random_state=7)
    b = expand_gender_specific(emb, specific[:25], n_train=500, cv=4, random_state=7)
    assert a.words == b.words and a.cv_f1 == b.cv_f1 and a.cv_accuracy == b.cv_accuracy
    np.testing.assert_array_equal(a.classifier.coef_, b.classifier.coef_)


def test_no_seed_in_training_words_raises():
    emb, specific = planted(seed=4)
    with pytest.raises(MissingWordsError):
        expand_gender_specific(emb, ["nothing", "here"], n_train=100)


def test_estimator_and_save(tmp_path):
    emb, specific = planted(seed=5)
    est = GenderSpecificExpander(specific[:30], n_train=600, cv=None).fit(emb)
    assert est.words_ == est.result_.words
    np.testing.assert_array_equal(
        est.predict(emb.vectors[emb.words.rows(specific[30:])]),
        est.result_.classifier.predict(
            emb.vectors[emb.words.rows(specific[30:])]
            / np.linalg.norm(emb.vectors[emb.words.rows(specific[30:])], axis=1, keepdims=True)
        ).astype(bool))
    path = tmp_path / "gs.txt"
    est.result_.save(path)
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if not ln.startswith("#")]
    assert lines == est.words_
    from embdebias.wordlists import load_words

    assert load_words(path) == est.words_


def test_expanded_list_round_trips_verbatim(tmp_path):
    from embdebias.debias.expand import ExpansionResult, read_expanded

    words = ["#she", "he", " padded", "w1"]
    res = ExpansionResult(words=words, seed_found=words, seed_missing=[], seed_in_training=4, n_train=10,
                          n_predicted=4, n_added=0, cv_accuracy=None, cv_f1=None, cv_folds=0, classifier=None)
    res.save(tmp_path / "x.txt")
    assert read_expanded(tmp_path / "x.txt") == words
    with pytest.raises(EmbdebiasError, match="input"):
        res.save(tmp_path / "x.txt", inputs=[tmp_path / "x.txt"])


def test_lowercase_seed_fallback_and_warning_when_nothing_is_added():
    from embdebias.debias.expand import ExpansionWarning

    rng = np.random.default_rng(0)
    words = ["mary", "john"] + [f"w{i}" for i in range(200)]
    emb = Embedding(words, rng.normal(size=(len(words), 8)))
    with pytest.warns(ExpansionWarning, match="no word outside the seed list"):
        res = expand_gender_specific(emb, seed=["Mary", "John"], n_train=202, cv=None)
    assert res.seed_found == ["mary", "john"] and res.seed_missing == []
    assert res.words == ["mary", "john"]
