"""Word similarity and analogy: hand values and a cross-check against gensim."""

import numpy as np
import pytest
from gensim.test.utils import datapath

from embdebias.embedding import Embedding
from embdebias.metrics import analogy, word_similarity
from embdebias.metrics.quality import read_analogies, read_word_pairs


def _model_for_questions(seed=0, dim=24, noise=0.15):
    """Vectors for every word of questions-words.txt (lowercased), with a relation
    structure for the first section (capital = country + R + noise) so that some
    answers are right and some wrong; other words random. Plus the WordSim353 words."""
    rng = np.random.default_rng(seed)
    sections = read_analogies(datapath("questions-words.txt"))
    words = {}
    relation = rng.standard_normal(dim)
    for a, b, c, d in sections[0][1]:  # capital-common-countries: a=capital, b=country
        for capital, country in ((a, b), (c, d)):
            country, capital = country.lower(), capital.lower()
            if country not in words:
                words[country] = rng.standard_normal(dim)
            if capital not in words:
                words[capital] = words[country] + relation + noise * rng.standard_normal(dim)
    for _, qs in sections[1:]:
        for q in qs:
            for w in q:
                words.setdefault(w.lower(), rng.standard_normal(dim))
    for _, a, b, _ in read_word_pairs(datapath("wordsim353.tsv")):
        words.setdefault(a.lower(), rng.standard_normal(dim))
        words.setdefault(b.lower(), rng.standard_normal(dim))
    keys = list(words)
    order = rng.permutation(len(keys))  # an arbitrary "frequency" order
    keys = [keys[i] for i in order]
    return Embedding(keys, np.array([words[k] for k in keys]), name="toy")


@pytest.fixture(scope="module")
def toy():
    return _model_for_questions()


def test_word_similarity_matches_gensim(toy):
    kv = toy.to_gensim()
    pearson, spearman, oov = kv.evaluate_word_pairs(datapath("wordsim353.tsv"))
    r = word_similarity(toy, "wordsim353")
    assert r.spearman == pytest.approx(spearman.statistic, abs=1e-6)
    assert r.pearson == pytest.approx(pearson.statistic, abs=1e-6)
    assert r.n_oov == 0 and r.n_pairs == 353
    # drop two words to exercise the out-of-vocabulary accounting
    small = toy.subset([w for w in toy.words if w not in {"tiger", "love"}])
    p2, s2, oov2 = small.to_gensim().evaluate_word_pairs(datapath("wordsim353.tsv"))
    r2 = word_similarity(small, "wordsim353")
    assert r2.spearman == pytest.approx(s2.statistic, abs=1e-6)
    assert 100 * r2.oov_ratio == pytest.approx(oov2)
    assert ("tiger", "cat") in r2.oov_pairs and "tiger" in r2.missing["words"]


@pytest.mark.parametrize("restrict", [None, 400])
def test_analogy_matches_gensim(toy, restrict):
    n = len(toy) if restrict is None else restrict
    score, sections = toy.to_gensim().evaluate_word_analogies(
        datapath("questions-words.txt"), restrict_vocab=n)
    r = analogy(toy, restrict_vocab=n, batch_size=97)
    gensim_sections = {s["section"]: (len(s["correct"]), len(s["correct"]) + len(s["incorrect"]))
                       for s in sections if s["section"] != "Total accuracy"}
    ours = {k: (v[0], v[1]) for k, v in r.sections.items() if v[1] > 0}
    gensim_nonempty = {k: v for k, v in gensim_sections.items() if v[1] > 0}
    assert ours == gensim_nonempty
    assert r.accuracy == pytest.approx(score)
    # the constructed relation makes the first section mostly right: a real comparison
    first = r.sections["capital-common-countries"]
    if first[1]:
        assert first[0] > 0


def test_analogy_file_is_read_again_when_rewritten_and_bad_lines_name_the_place(tmp_path):
    """The questions are parsed once per version of the file (path, modification time, size)."""
    import os

    from embdebias.errors import WordListError

    f = tmp_path / "q.txt"
    f.write_text(": s\na b c d\n", encoding="utf-8")
    first = read_analogies(f)
    first[0][1].append(("x", "y", "z", "w"))            # the caller's copy, not the cached one
    assert read_analogies(f) == [("s", [("a", "b", "c", "d")])]
    f.write_text(": s\na b c d\n: t\ne f g h\n", encoding="utf-8")
    os.utime(f, ns=(1, 1))
    assert read_analogies(f) == [("s", [("a", "b", "c", "d")]), ("t", [("e", "f", "g", "h")])]
    f.write_text(": s\na b c\n", encoding="utf-8")
    with pytest.raises(WordListError, match=r"q\.txt:2: expected four words 'a b c d', got 'a b c'"):
        read_analogies(f)
    f.write_text("a b c d\n", encoding="utf-8")
    with pytest.raises(WordListError, match=r"q\.txt:1: question before the first ': section' line"):
        read_analogies(f)


def test_similarity_hand_value(tmp_path):
    words = ["a", "b", "c", "d"]
    vecs = np.array([[1, 0], [1, 1], [0, 1], [-1, 0.1]], float)
    emb = Embedding(words, vecs)
    f = tmp_path / "pairs.txt"
    # cosines: a-b 0.707, a-c 0, a-d -0.995; human scores in the same order -> rho = 1
    f.write_text("# comment\na\tb\t9\na\tc\t5\na\td\t1\nA\tB\t9.5\nq\ta\t3\n", encoding="utf-8")
    r = word_similarity(emb, f)
    # A, B fall back to lowercase and repeat the a-b pair with a higher score
    assert r.n_pairs == 4 and r.n_oov == 1 and r.oov_pairs == [("q", "a")]
    # by hand: similarity ranks (3.5, 2, 1, 3.5), human ranks (3, 2, 1, 4); the Pearson
    # correlation of the ranks is 4.5 / sqrt(4.5 * 5)
    assert r.spearman == pytest.approx(4.5 / np.sqrt(4.5 * 5))


def test_analogy_hand_value(tmp_path):
    # man : king :: woman : queen with exact offsets; 'king' itself is excluded
    e = np.eye(4)
    vec = {"man": e[0], "woman": e[1], "king": e[0] + e[2], "queen": e[1] + e[2], "other": e[3]}
    emb = Embedding(list(vec), np.array(list(vec.values())))
    f = tmp_path / "q.txt"
    f.write_text(": royal\nman king woman queen\nman king woman other\nman king nope queen\n"
                 ": gram-x\nwoman queen man king\n", encoding="utf-8")
    r = analogy(emb, f, restrict_vocab=10)
    assert r.n_questions == 3 and r.n_oov == 1
    assert r.n_correct == 2 and r.accuracy == pytest.approx(2 / 3)
    assert r.semantic_accuracy == pytest.approx(0.5) and r.syntactic_accuracy == pytest.approx(1.0)
    assert r.sections == {"royal": [1, 2, 1], "gram-x": [1, 1, 0]}
    assert r.missing == {"words": ["nope"]}
