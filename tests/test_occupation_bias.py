"""Lu et al.'s aggregate occupation bias for embeddings (embdebias.metrics.occupation)."""

from __future__ import annotations

import numpy as np
import pytest

from embdebias.embedding import Embedding
from embdebias.errors import MissingWordsError
from embdebias.evaluate import evaluate
from embdebias.metrics.occupation import (lu_occupations, occupation_bias, occupation_bias_statistic,
                                          occupation_cosines)


def toy() -> Embedding:
    # male terms along e0, female along e1; "nurse" at 45 deg towards female, "pilot" towards male
    words = ["he", "man", "she", "woman", "nurse", "pilot", "judge"]
    c, s = np.cos(np.pi / 3), np.sin(np.pi / 3)
    vecs = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [c, s, 0], [s, c, 0], [0, 0, 1]], dtype=np.float32)
    return Embedding(words, vecs, name="toy")


def test_hand_computed_aob():
    r = occupation_bias(toy(), ["nurse", "pilot", "judge"], male=["he", "man"], female=["she", "woman"])
    c, s = np.cos(np.pi / 3), np.sin(np.pi / 3)
    assert r.per_occupation == pytest.approx({"nurse": c - s, "pilot": s - c, "judge": 0.0})
    assert r.aob == pytest.approx(2 * (s - c) / 3)
    assert r.signed_aob == pytest.approx(0.0, abs=1e-7)
    assert r.n_scored == 3 and r.value == r.aob


def test_bootstrap_statistic_equals_the_result_on_the_full_sample():
    emb = toy()
    occ, male, female = ["nurse", "pilot", "judge"], ["he", "man"], ["she", "woman"]
    r = occupation_bias(emb, occ, male=male, female=female)
    looks, cm, cf = occupation_cosines(emb, occ, male, female, max_missing=0.0, lowercase=True)
    full = {"occupations": np.arange(len(looks[0].words))[None]}
    assert occupation_bias_statistic(cm, cf, False)(full)[0] == pytest.approx(r.aob)
    assert occupation_bias_statistic(cm, cf, True)(full)[0] == pytest.approx(r.signed_aob, abs=1e-7)


def test_defaults_and_missing_words():
    occ = lu_occupations()
    assert len(occ) == 64 and "air_traffic_controller" in occ and occ.count("attorney") == 1
    with pytest.raises(MissingWordsError, match="occupations"):
        occupation_bias(toy())  # most of Lu et al.'s occupations are not in the toy vocabulary


def test_registry_metric_in_a_report():
    rep = evaluate({"toy": toy()}, suite=["occupation_bias"], bootstrap=100, max_missing=1.0)
    assert "### Occupation bias (Lu et al.)" in rep.to_markdown()
    assert rep.value("occupation_bias", "lu2020", "n_scored", "toy") == 3
