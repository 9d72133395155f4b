"""The analogy test's pruning by sub-block bounds keeps every contender.

:func:`analogy_answers` scores every question against the seed columns and, after them, only
the sub-blocks whose bound can reach the question's best so far. Its docstring proves that the
contenders it hands to the float64 decision are exactly those of scoring every candidate; these
tests compare the two sets (against the unpruned implementation kept below) and the answers
(against a brute-force float64 argmax), on vocabularies built for ties: few distinct
directions, exact copies, copies one or two float32 steps apart, a question's own words
where its best score would be, restricted vocabularies smaller than one block.
"""

from __future__ import annotations

import numpy as np
import pytest

import embdebias.metrics.quality as quality
from embdebias._threads import one_thread
from embdebias.errors import EmbdebiasError
from embdebias.metrics.quality import _by_question, _contenders, _near_best, _own_words, analogy_answers


def _unpruned_contenders(vocab: np.ndarray, abc: np.ndarray, batch_size: int = 512, columns: int = 1024,
                         with_best: bool = False):
    """The implementation before pruning (every candidate scored), returning its contenders (and
    with ``with_best`` each question's best float32 score ``B_q``)."""
    n, dim = vocab.shape
    words, inverse = np.unique(abc, return_inverse=True)
    inverse = inverse.reshape(abc.shape)
    pairs, pair_of = np.unique(inverse[:, :2], axis=0, return_inverse=True)
    pair_of = pair_of.reshape(-1)
    word_vectors = vocab[words]
    margin = np.float32(quality.rounding_margin(dim))
    own_question, own_column = _own_words(abc)
    best = np.full(len(abc), -np.inf, dtype=np.float32)
    found = []
    with one_thread():
        for start in range(0, n, columns):
            stop = min(n, start + columns)
            dots = word_vectors @ vocab[start:stop].T
            offsets = dots[pairs[:, 1]] - dots[pairs[:, 0]]
            lo, hi = np.searchsorted(own_column, [start, stop])
            block_question, block_column = _by_question(own_question[lo:hi], own_column[lo:hi] - start)
            for q0 in range(0, len(abc), batch_size):
                q1 = min(len(abc), q0 + batch_size)
                scores = offsets[pair_of[q0:q1]] + dots[inverse[q0:q1, 2]]
                e0, e1 = np.searchsorted(block_question, [q0, q1])
                scores[block_question[e0:e1] - q0, block_column[e0:e1]] = -np.inf
                found += _near_best(scores, best[q0:q1], margin, q0, start)
    question, candidate, score = (np.concatenate(parts) for parts in zip(*found, strict=True))
    near = score >= best[question] - margin
    return (question[near], candidate[near]) + ((best,) if with_best else ())


def _answers_float64(vocab: np.ndarray, abc: np.ndarray) -> np.ndarray:
    v = vocab.astype(np.float64)
    scores = (v[abc[:, 1]] - v[abc[:, 0]] + v[abc[:, 2]]) @ v.T
    scores[np.arange(len(abc))[:, None], abc] = -np.inf
    return scores.argmax(axis=1)                        # the first row on an exact tie


def _pairs(question, candidate) -> set:
    return set(zip(question.tolist(), candidate.tolist(), strict=True))


def _tied_vocab(n: int, dim: int, seed: int) -> np.ndarray:
    """Unit rows with few distinct directions (components in {-1, 0, 1}): scores tie exactly
    all over; a few rows are copies of others moved one or two float32 steps (near ties)."""
    rng = np.random.default_rng(seed)
    v = rng.integers(-1, 2, size=(n, dim)).astype(np.float32)
    v[~v.any(axis=1), 0] = 1
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    for row in rng.choice(np.arange(n // 2, n), n // 10, replace=False):
        v[row] = v[rng.integers(0, n // 2)]
        i = rng.integers(0, dim)
        v[row, i] = np.nextafter(v[row, i], np.float32(np.inf) * rng.choice([-1, 1]), dtype=np.float32)
    return v


def _questions(n: int, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    abc = rng.integers(0, n, size=(count, 3))
    return abc[(abc[:, 0] != abc[:, 1]) & (abc[:, 1] != abc[:, 2]) & (abc[:, 0] != abc[:, 2])]


# (batch_size, columns, sub_columns, seed_columns): the defaults; blocks that are not whole
# sub-blocks or coarse blocks; no seed at all (the first pruning starts from -inf); sub-blocks
# of one column; a seed wider than the vocabulary; a block wider than it.
SHAPES = [(512, 1024, 16, 256), (7, 64, 4, 8), (9, 33, 2, 5), (5, 40, 8, 0), (1, 100, 1, 1),
          (512, 1024, 16, 5000), (64, 5000, 32, 17)]


@pytest.mark.parametrize("batch, columns, sub, seed", SHAPES)
@pytest.mark.parametrize("n, dim", [(1600, 4), (1000, 6), (700, 20)])
def test_pruning_keeps_exactly_the_contenders_of_scoring_everything(n, dim, batch, columns, sub, seed):
    vocab = _tied_vocab(n, dim, seed=n + dim)
    abc = _questions(n, 400, seed=dim)
    got = _contenders(vocab, abc, batch, columns, sub, seed)
    assert _pairs(*got) == _pairs(*_unpruned_contenders(vocab, abc, batch, columns))
    answers = analogy_answers(vocab, abc, batch, columns, sub, seed)
    assert np.array_equal(answers, _answers_float64(vocab, abc))


@pytest.mark.parametrize("batch, columns, sub, seed", SHAPES)
def test_own_words_where_the_best_score_would_be_are_never_answers(batch, columns, sub, seed):
    """``a : b :: a' : ?`` with ``a'`` a copy of ``a`` scores ``b`` (an own word) highest, in
    a sub-block that is scored; its exact copy far after the seed wins, before a copy of it
    moved two float32 steps (float64 tells them apart)."""
    rng = np.random.default_rng(3)
    n = 2000
    vocab = rng.normal(size=(n, 12)).astype(np.float32)
    vocab /= np.linalg.norm(vocab, axis=1, keepdims=True)
    abc, expected = [], []
    for j in range(10):
        a, a_copy, b, copy, moved = 1500 + 3 * j, 1501 + 3 * j, 1502 + 3 * j, 900 + j, 300 + j
        vocab[a_copy], vocab[copy], vocab[moved] = vocab[a], vocab[b], vocab[b]
        i = int(np.argmax(np.abs(vocab[b])))
        toward = np.float32(-np.sign(vocab[b, i]) * np.inf)          # away from b: a lower score
        vocab[moved, i] = np.nextafter(np.nextafter(vocab[moved, i], toward), toward)
        abc.append([a, b, a_copy])
        expected.append(copy)
    abc = np.vstack([abc, _questions(n, 200, seed=4)])
    got = _contenders(vocab, abc, batch, columns, sub, seed)
    assert _pairs(*got) == _pairs(*_unpruned_contenders(vocab, abc, batch, columns))
    answers = analogy_answers(vocab, abc, batch, columns, sub, seed)
    assert answers[:10].tolist() == expected
    assert np.array_equal(answers, _answers_float64(vocab, abc))


@pytest.mark.parametrize("n", [4, 5, 17])
def test_one_question_and_tiny_vocabularies(n):
    vocab = _tied_vocab(n, 3, seed=n)
    abc = np.array([[0, 1, 2]])
    for columns, sub, seed in ((1024, 16, 256), (1, 1, 0), (2, 2, 1), (3, 4, 0)):
        got = _contenders(vocab, abc, 512, columns, sub, seed)
        assert _pairs(*got) == _pairs(*_unpruned_contenders(vocab, abc, 512, columns))
        assert analogy_answers(vocab, abc, 512, columns, sub, seed).tolist() == _answers_float64(vocab, abc).tolist()


def _count_scored(monkeypatch) -> list:
    """The sub-block rows each call of ``_near_best_scored`` scores, recorded as they come."""
    scored = []
    near_best_scored = quality._near_best_scored

    def counting(scores, *args):
        scored.append(scores.shape[0])
        return near_best_scored(scores, *args)

    monkeypatch.setattr(quality, "_near_best_scored", counting)
    return scored


def test_pruning_scores_a_small_share_of_the_sub_blocks(monkeypatch):
    """Not a timing: the bound must actually prune. Questions on clustered vectors (answers
    near their cluster) leave most sub-blocks after the seed unscored."""
    rng = np.random.default_rng(9)
    centres = rng.normal(size=(40, 30))
    vocab = (centres[rng.integers(0, 40, 5000)] + 0.3 * rng.normal(size=(5000, 30))).astype(np.float32)
    vocab /= np.linalg.norm(vocab, axis=1, keepdims=True)
    abc = _questions(2000, 2000, seed=10)
    scored = _count_scored(monkeypatch)
    answers = analogy_answers(vocab, abc)
    assert np.array_equal(answers, _answers_float64(vocab, abc))
    share = sum(scored) / (len(abc) * (5000 - 256) / 16)
    assert 0 < share < 0.5


def _question_word_floor(vocab, abc, batch_size=512):
    words, inverse = np.unique(abc, return_inverse=True)
    inverse = inverse.reshape(abc.shape)
    pairs, pair_of = np.unique(inverse[:, :2], axis=0, return_inverse=True)
    margin = np.float32(quality.rounding_margin(vocab.shape[1]))
    return quality._question_word_floor(vocab[words], pairs, pair_of.reshape(-1), inverse, margin, batch_size), margin


@pytest.mark.parametrize("n, dim", [(1600, 4), (700, 20), (3000, 300)])
def test_the_question_word_floor_is_below_every_best_and_close_to_it(n, dim):
    """The floor the pruning starts from never exceeds a question's best float32 score (its
    own product rounds differently from the blocks'), and where the best is a question word
    it is within three margins of it (the floor is that score less two)."""
    vocab = _tied_vocab(n, dim, seed=n) if dim < 300 else _unit(np.random.default_rng(5).normal(size=(n, dim)))
    abc = _questions(n // 2, 300, seed=dim)                  # the answers often among the question words
    floor, margin = _question_word_floor(vocab, abc, batch_size=7)
    question, candidate, best = _unpruned_contenders(vocab, abc, 64, 256, with_best=True)
    assert (floor <= best).all()
    v = vocab.astype(np.float64)
    exact = (v[abc[:, 1]] - v[abc[:, 0]] + v[abc[:, 2]]) @ v[np.unique(abc)].T
    exact[np.arange(len(abc))[:, None], np.searchsorted(np.unique(abc), abc)] = -np.inf
    np.testing.assert_allclose(floor, exact.max(axis=1) - 2 * margin, rtol=0, atol=float(margin) / 2)
    on_words = np.isin(_answers_float64(vocab, abc), abc)
    assert on_words.sum() > 20 and (best - floor <= 3 * margin)[on_words].all()


def test_the_floor_prunes_more_and_keeps_the_contenders(monkeypatch):
    """Starting from -inf instead of the floor gives the same contenders, with more sub-blocks
    scored: questions among the last words, whose best scores are far after the seed columns."""
    vocab = _unit(np.random.default_rng(9).normal(size=(5000, 30)))
    abc = 3000 + _questions(2000, 2000, seed=10)
    scored = _count_scored(monkeypatch)
    with_floor = _pairs(*_contenders(vocab, abc, 512, 1024, 16, 256))
    n_with_floor = sum(scored)
    scored.clear()
    monkeypatch.setattr(quality, "_question_word_floor", lambda _w, _p, pair_of, *_: np.full(len(pair_of), -np.inf,
                                                                                            dtype=np.float32))
    assert _pairs(*_contenders(vocab, abc, 512, 1024, 16, 256)) == with_floor
    assert sum(scored) > 1.3 * n_with_floor                # 97,177 against 57,652


def _unit(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_sub_columns_must_be_a_power_of_two():
    vocab = _tied_vocab(50, 3, seed=1)
    with pytest.raises(EmbdebiasError, match="power of two"):
        analogy_answers(vocab, np.array([[0, 1, 2]]), sub_columns=12)


def test_the_question_words_are_cached_per_version_of_the_file(tmp_path):
    """The distinct question words are sorted once per file version: a rewritten file (same
    size, same modification time) is read again."""
    import os

    from embdebias.embedding import Embedding
    from embdebias.metrics.quality import analogy

    rng = np.random.default_rng(2)
    emb = Embedding(["a", "b", "c", "d", "e", "Z"], rng.normal(size=(6, 5)).astype(np.float32))
    path = tmp_path / "q.txt"
    path.write_text(": s\na b c d\n: gram-t\nA b e d\n")
    first = analogy(emb, path)
    assert (first.n_questions, first.n_oov, first.missing["words"]) == (2, 0, [])   # "A" found as "a"
    stat = path.stat()
    path.write_text(": s\na b c d\n: gram-t\nA b e y\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    second = analogy(emb, path)
    assert (second.n_questions, second.n_oov, second.missing["words"]) == (1, 1, ["y"])
    assert second.sections == {"s": [second.sections["s"][0], 1, 0], "gram-t": [0, 0, 1]}
    assert analogy(emb, path, lowercase=False).missing["words"] == ["A", "y"]
