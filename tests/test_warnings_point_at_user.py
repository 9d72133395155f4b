"""Every warning the library emits names the user's line (embdebias/_warn.py), whatever the call path.

A few representative warnings, each raised several frames below the public call the test makes:
the test asserts the warning's file is this test file, which a fixed ``stacklevel`` counted for
another path would miss (it names a file inside embdebias, or contextlib's).
"""

from __future__ import annotations

import json
import os
import socket
import warnings

import numpy as np
import pytest

from embdebias import Embedding, _lock, evaluate, metrics
from embdebias._warn import warn
from embdebias.embedding import DuplicateWordWarning
from embdebias.evaluate import UnscoredWarning


def _caught(call, category):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    found = [w for w in caught if issubclass(w.category, category)]
    assert found, f"no {category.__name__} raised"
    return found


def _toy(n=60, dim=8, words=None):
    words = words or ["she", "he", "woman", "man", "her", "his", "girl", "boy", "doctor", "nurse"]
    words = words + [f"w{i}" for i in range(n - len(words))]
    return Embedding(words, np.random.default_rng(0).normal(size=(len(words), dim)).astype("float32"), name="toy")


def test_a_duplicate_word_warning_from_the_constructor_names_the_users_line():
    found = _caught(lambda: Embedding(["a", "b", "a"], np.eye(3, dtype="float32")), DuplicateWordWarning)
    assert {w.filename for w in found} == {__file__}


def test_an_old_name_of_the_metrics_module_names_the_users_line():
    found = _caught(lambda: metrics.REGISTRY, FutureWarning)
    assert {w.filename for w in found} == {__file__}


def test_evaluates_warnings_name_the_users_line_not_the_metric_or_the_report():
    # attribute=None (deprecated) is warned three frames down, the unscored WEAT tests (a toy
    # vocabulary lacks their words) after the whole evaluation, from the report's code.
    found = _caught(lambda: evaluate(_toy(), suite=["weat"], attribute=None, bootstrap=0), Warning)
    assert {w.category for w in found} >= {FutureWarning, UnscoredWarning}
    assert {w.filename for w in found} == {__file__}


def test_a_debiasers_missing_words_are_warned_at_the_users_fit_transform():
    # HSR's definition words, a tenth of them left out (it fits on up to half missing); the
    # warning passes through scikit-learn's set_output wrapper of fit_transform on the way
    from embdebias import HalfSiblingRegression
    from embdebias.debias.hsr import definition_words
    from embdebias.subspace import MissingWordsWarning

    words = definition_words()
    emb = _toy(n=len(words), words=words[: len(words) * 9 // 10])
    found = _caught(lambda: HalfSiblingRegression().fit_transform(emb), MissingWordsWarning)
    assert {w.filename for w in found} == {__file__}


def test_taking_over_a_dead_processs_lock_is_warned_at_the_users_with(tmp_path):
    target = tmp_path / "out.embd"
    # the record of a writer on this host whose process is gone (no pid is that large)
    _lock.lock_path(target).write_text(json.dumps({"pid": 2**22 + 12345, "host": socket.gethostname(),
                                                   "purpose": "test"}))

    def take():
        with _lock.output_lock(target):  # the warning comes from the context manager's __enter__
            pass

    found = _caught(take, UserWarning)
    assert "taking over the lock left by process" in str(found[0].message)
    assert {w.filename for w in found} == {__file__}


def test_warn_called_from_outside_the_package_names_that_line():
    # stacklevel 1 would name _warn.py
    with pytest.warns(UserWarning, match="plain") as record:
        warn("plain")
    assert record[0].filename == __file__ and record[0].lineno > 0
    assert os.path.basename(record[0].filename) != "_warn.py"


def test_a_large_fasttext_bucket_is_warned_at_the_users_train_embedding_call(tmp_path):
    # warned while the options are checked, before training; the empty corpus then stops it
    from embdebias.errors import EmbdebiasError
    from embdebias.train import train_embedding

    corpus = tmp_path / "empty.txt"
    corpus.write_text("\n")

    def call():
        with pytest.raises(EmbdebiasError):
            train_embedding(corpus, tmp_path / "out.bin", model="fasttext", bucket=2_000_000)

    found = _caught(call, UserWarning)
    assert "n-gram buckets" in str(found[0].message)
    assert {w.filename for w in found} == {__file__}
