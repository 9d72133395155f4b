"""Embedding.most_similar against gensim's own KeyedVectors.most_similar."""

from __future__ import annotations

import numpy as np
import pytest

from embdebias.embedding import Embedding
from embdebias.errors import MissingWordsError
from embdebias.io.native import read_native, write_native

pytest.importorskip("gensim")


@pytest.fixture(scope="module")
def pair():
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(300)]
    emb = Embedding(words, rng.standard_normal((300, 16)).astype(np.float32) * 2.5, name="rand")
    return emb, emb.to_gensim()


def _same(ours, theirs):
    assert [w for w, _ in ours] == [w for w, _ in theirs]
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], rtol=0, atol=2e-6)


QUERIES = [
    dict(positive=["w1"]),
    dict(positive="w1", topn=3),
    dict(positive=["w1", "w2"], negative=["w3"], topn=7),
    dict(negative=["w4"], topn=5),
    dict(positive=[("w5", 2.0), "w6"], negative=[("w7", 0.5)], topn=4),
    dict(positive=["w8"], topn=20, restrict_vocab=50),
    dict(positive=[0, "w9"], topn=6),
    dict(positive=["w1"], topn=295),  # nearly everything: exclusions at the tail
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("chunk_rows", [7, 64, 1 << 16])
def test_agrees_with_gensim(pair, query, chunk_rows):
    emb, kv = pair
    _same(emb.most_similar(**query, chunk_rows=chunk_rows), kv.most_similar(**query))


def test_vectors_as_queries_are_used_as_given(pair):
    emb, kv = pair
    v = np.random.default_rng(1).standard_normal(16).astype(np.float32) * 4
    _same(emb.most_similar(positive=[v], topn=5), kv.most_similar(positive=[v], topn=5))
    _same(emb.most_similar(positive=v, negative=["w2"], topn=5, chunk_rows=11),
          kv.most_similar(positive=v, negative=["w2"], topn=5))


def test_topn_none_gives_every_cosine(pair):
    emb, kv = pair
    ours = emb.most_similar(["w3"], topn=None, chunk_rows=13)
    assert ours.dtype == np.float32 and ours.shape == (300,)
    np.testing.assert_allclose(ours, kv.most_similar(["w3"], topn=None), atol=2e-6)
    assert emb.most_similar(["w3"], topn=None, restrict_vocab=40).shape == (40,)
    assert emb.most_similar(["w3"], topn=0) == []


def test_query_words_left_out_and_memory_mapped_rows(pair, tmp_path):
    emb, _ = pair
    result = emb.most_similar(["w1", "w2"], topn=300)
    assert len(result) == 298 and {"w1", "w2"}.isdisjoint(w for w, _ in result)
    assert [s for _, s in result] == sorted((s for _, s in result), reverse=True)
    write_native(emb, tmp_path / "r.embd")
    mapped = read_native(tmp_path / "r.embd")
    _same(mapped.most_similar(["w1"], negative=["w9"], chunk_rows=32), emb.most_similar(["w1"], negative=["w9"]))


def test_zero_rows_have_cosine_zero_and_errors():
    emb = Embedding(["a", "b", "zero"], np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]))
    assert emb.most_similar("a") == [("b", pytest.approx(np.sqrt(0.5))), ("zero", 0.0)]
    with pytest.raises(MissingWordsError, match="'nope'") as info:
        emb.most_similar(["a", "nope"])
    assert isinstance(info.value, KeyError) and info.value.missing == ["nope"]
    with pytest.raises(ValueError, match="no input"):
        emb.most_similar()
