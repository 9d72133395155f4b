"""evaluate's ``reuse``: the first column scored once across calls gives the reports a fresh
evaluation gives, and is scored again whenever anything its scores depend on changed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from embdebias.embedding import Embedding
from embdebias.evaluate import evaluate
from embdebias.metrics import get_metric

from synthetic import synthetic_embedding

SUITE = ("direct_bias", "ect", "bat")
KW = dict(tests=SUITE, bootstrap=40, trust=False)


@pytest.fixture(scope="module")
def trio():
    a = synthetic_embedding(n_filler=300, dim=12, seed=0)
    rng = np.random.default_rng(1)
    b = Embedding(a.words, a.vectors + 0.3 * rng.normal(size=a.vectors.shape).astype(np.float32), name="b")
    c = Embedding(a.words, a.vectors + 0.6 * rng.normal(size=a.vectors.shape).astype(np.float32), name="c")
    return a, b, c


@pytest.fixture
def scored(monkeypatch):
    """``[(embedding name, metric)]`` of every unit scored."""
    calls = []
    for name in SUITE:
        cls = type(get_metric(name))
        score = cls.score
        monkeypatch.setattr(cls, "score", lambda self, emb, unit, ctx, _s=score: calls.append(
            (emb.name, self.name)) or _s(self, emb, unit, ctx))
    return calls


def _json(report) -> str:
    return json.dumps(report.to_dict(), sort_keys=True, default=repr)


def test_a_reused_first_column_gives_the_fresh_report(trio, scored):
    a, b, c = trio
    fresh = _json(evaluate({"original": a, "c": c}, **KW))
    cache: dict = {}
    evaluate({"original": a, "b": b}, reuse=cache, **KW)
    del scored[:]
    again = _json(evaluate({"original": a, "c": c}, reuse=cache, **KW))
    assert again == fresh
    assert {e for e, _ in scored} == {"c"}              # the first column was not scored again


@pytest.mark.parametrize("change", ["random_state", "subspace", "embedding"])
def test_the_first_column_is_scored_again_when_its_inputs_change(trio, scored, change):
    a, b, _ = trio
    cache: dict = {}
    evaluate({"original": a, "b": b}, reuse=cache, **KW)
    del scored[:]
    kw = dict(KW)
    first = a
    if change == "random_state":
        kw["random_state"] = 1
    elif change == "subspace":
        kw["subspace"] = np.eye(a.dim, dtype=np.float64)[0]
    else:                                               # equal values, another object: not trusted
        first = Embedding(a.words, a.vectors.copy(), name=a.name)
    report = evaluate({"original": first, "b": b}, reuse=cache, **kw)
    assert {e for e, _ in scored} == {a.name, "b"}
    assert _json(report) == _json(evaluate({"original": first, "b": b}, **kw))
