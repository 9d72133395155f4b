"""Validate before trusting: the native format's metadata, .npy headers and vocabulary, the fastText
.bin layout, and writers that refuse what their readers could not read back."""

from __future__ import annotations

import json
import os
import shutil
import struct
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, VectorFileError
from embdebias.io import FORMATS, load, output_name, save
from embdebias.io.native import (
    META,
    NATIVE_FILES,
    NativeWriter,
    check_vocabulary,
    read_native,
    vocab_crc32,
    write_native,
)
from embdebias.vocab import Vocabulary

WORDS = ["the", "cat", "sat", "on", "mat", "über"]


@pytest.fixture
def native(tmp_path) -> Path:
    path = tmp_path / "e.embd"
    write_native(Embedding(WORDS, np.arange(12, dtype=np.float32).reshape(6, 2)), path)
    return path


def set_meta(path: Path, **changes) -> dict:
    meta = json.loads((path / META).read_text())
    for key, value in changes.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    (path / META).write_text(json.dumps(meta))
    return meta


def refused(path, match: str, **kw) -> VectorFileError:
    with pytest.raises(VectorFileError) as info:
        read_native(path, **kw)
    assert match in str(info.value), str(info.value)
    return info.value


# -- metadata ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text, match", [
    (b'[{"format": "embdebias-native"}]', "JSON list, expected an object"),
    (b'"embdebias-native"', "JSON str, expected an object"),
    (b'{"format": "embdebias-native", "version": 1, "count": 6, "dim": 2, "dtype": "float32"', "unreadable"),
    (b'{"format": "embdebias-native", "version": 1, "count": 6, "dim": Infinity, "dtype": "float32"}',
     "Infinity is not allowed"),
    (b'{"format": "embdebias-native", "version": 1, "count": NaN, "dim": 2, "dtype": "float32"}',
     "NaN is not allowed"),
    (b'{"format": "embdebias-native", "version": 1, "count": 6, "count": 6, "dim": 2, "dtype": "float32"}',
     "repeated"),
    (b'{"format": "embdebias-native\xff", "version": 1}', "not UTF-8"),
    (b"[" * 30_000 + b"]" * 30_000, "nested too deeply"),
    (b'{"format": "embdebias-native", "version": 1, "count": 1' + b"0" * 5000 + b', "dim": 2}', "unreadable"),
])
def test_bad_metadata_is_a_clean_error(native, text, match):
    (native / META).write_bytes(text)
    err = refused(native, match)
    assert err.path == str(native / META)


@pytest.mark.parametrize("key", ["format", "version", "count", "dim", "dtype"])
def test_a_missing_key_is_named(native, key):
    set_meta(native, **{key: None})
    refused(native, f"metadata key '{key}': expected")


@pytest.mark.parametrize("changes, match", [
    ({"count": True}, "'count': expected int"),
    ({"count": 6.0}, "'count': expected int"),
    ({"dim": "2"}, "'dim': expected int"),
    ({"count": -1}, "count >= 0"),
    ({"dim": 0}, "dim >= 1"),
    ({"dtype": "float64"}, "dtype 'float32'"),
    ({"version": 2}, "version 1"),
    ({"format": "other"}, "expected format"),
    ({"vocab_crc32": "abc"}, "'vocab_crc32': expected int"),
    ({"vocab_crc32": 1 << 40}, "CRC-32"),
    ({"count": 10**12}, "expected a C-order"),
])
def test_metadata_values_are_checked(native, changes, match):
    set_meta(native, **changes)
    refused(native, match)


def test_huge_metadata_is_refused_before_reading(native):
    with open(native / META, "r+b") as fh:
        fh.truncate(1 << 40)  # sparse: a terabyte that is never read
    refused(native, "expected a small JSON object")


def test_fifo_in_place_of_a_file_is_refused_without_blocking(native):
    os.unlink(native / "vectors.npy")
    os.mkfifo(native / "vectors.npy")
    refused(native, "not a regular file")


# -- .npy headers -----------------------------------------------------------------------------
def _npy_variants(good: bytes) -> list[bytes]:
    header_end = good.index(b"\n") + 1
    dict_start = good.index(b"{")
    return [
        b"",                                                   # empty
        b"junk",                                               # no magic
        good[:8],                                              # magic and version only
        good[:12],                                             # cut in the header
        good[:dict_start] + b"(" * (header_end - dict_start - 1) + b"\n" + good[header_end:],  # deep nesting
        good[:dict_start] + b"__import__('os').system('x')".ljust(header_end - dict_start - 1) + b"\n"
        + good[header_end:],                                   # code is not evaluated
        good[:dict_start] + b"{'descr': '\xff\xfe'}".ljust(header_end - dict_start - 1) + b"\n" + good[header_end:],
        good[:6] + b"\x03\x00" + good[8:],                     # version 3.0
        good[:6] + b"\x01\x00\xff\xff" + good[10:],            # header length beyond the file
    ]


@pytest.mark.parametrize("variant", range(9))
def test_damaged_npy_header_is_a_clean_error(native, variant):
    for name in ("vectors.npy", "vocab_offsets.npy", "vocab_sorted.npy"):
        shutil.copytree(native, native.with_name(f"{variant}-{name}.embd"))
        target = native.with_name(f"{variant}-{name}.embd")
        good = (target / name).read_bytes()
        (target / name).write_bytes(_npy_variants(good)[variant])
        with pytest.raises(VectorFileError) as info:
            read_native(target)
        assert info.value.path.startswith(str(target)), str(info.value)


@pytest.mark.parametrize("array, match", [
    (np.zeros((6, 3), np.float32), "shape (6, 2)"),
    (np.zeros((6, 2), np.float64), "float32"),
    (np.zeros((6, 2), ">f4"), "float32"),
    (np.asfortranarray(np.zeros((6, 2), np.float32)), "Fortran-order"),
    (np.array([None] * 12, dtype=object).reshape(6, 2), "float32"),
])
def test_vectors_npy_must_match_the_metadata(native, array, match):
    np.save(native / "vectors.npy", array, allow_pickle=True)
    refused(native, match)


@pytest.mark.parametrize("delta", [-4, -1, 1, 4])
def test_vectors_npy_size_must_be_header_plus_data(native, delta):
    path = native / "vectors.npy"
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size + delta)
    err = refused(native, "truncated or padded")
    assert err.offset == min(size, size + delta)


def test_mmap_false_reads_the_same_checked_vectors(native):
    a, b = read_native(native), read_native(native, mmap=False)
    np.testing.assert_array_equal(a.vectors, b.vectors)
    assert not isinstance(b.vectors, np.memmap)


# -- the vocabulary ---------------------------------------------------------------------------
def write_vocab_files(path: Path, text: bytes, offsets, order, *, count=None, crc=False):
    """Raw vocabulary files (and matching metadata and vectors) for a hand-made directory."""
    path.mkdir(exist_ok=True)
    n = len(offsets) - 1 if count is None else count
    (path / "vocab.txt").write_bytes(text)
    np.save(path / "vocab_offsets.npy", np.asarray(offsets, np.int64))
    np.save(path / "vocab_sorted.npy", np.asarray(order, np.int64))
    np.save(path / "vectors.npy", np.ones((n, 2), np.float32))
    meta = {"format": "embdebias-native", "version": 1, "count": n, "dim": 2, "dtype": "float32"}
    if crc:
        meta["vocab_crc32"] = vocab_crc32(np.frombuffer(text, np.uint8), np.asarray(offsets, np.int64),
                                          np.asarray(order, np.int64))
    (path / META).write_text(json.dumps(meta))
    return path


def test_a_newline_inside_a_word_is_not_a_silent_shift(tmp_path):
    # Three words "a", "b\nc", "d" with offsets that frame them: the old reader split the
    # text at newlines and put "c" on the vector of "b\nc" and "d" nowhere.
    path = write_vocab_files(tmp_path / "n.embd", b"a\nb\nc\nd\n", [0, 2, 6, 8], [0, 1, 2])
    err = refused(path, "4 line ends for 3 words")
    assert "line 2" in str(err) and err.offset == 3


@pytest.mark.parametrize("text, offsets, order, match", [
    (b"ab\nc\n", [0, 2, 5], [0, 1], "line 1"),                    # an offset off by one
    (b"a\nb\nc\n", [0, 4, 2, 6], [0, 1, 2], "line 1"),            # offsets not increasing
    (b"a\nb\n", [0, 2, 5], [0, 1], "the offsets run from 0 to 5"),  # beyond the file
    (b"a\nb\n", [1, 2, 4], [0, 1], "the offsets run from 1 to 4"),
    (b"a\n\xff\n", [0, 2, 4], [0, 1], "undecodable UTF-8 in the word of row 1"),
    (b"a\nb\na\n", [0, 2, 4, 6], [0, 2, 1], "the word 'a' is repeated (rows 0 and 2)"),
    (b"a\nb\n", [0, 2, 4], [0, 2], "entry 1 is row 2"),
    (b"a\nb\n", [0, 2, 4], [-1, 0], "entry 0 is row -1"),
    (b"a\nb\n", [0, 2, 4], [1, 0], "not in word order at entry 0: 'b' (row 1) comes before 'a'"),
    (b"a\nb\n", [0, 2, 4], [0, 0], "row 0 is listed twice"),     # not a permutation
    (b"ab\na\n", [0, 3, 5], [0, 1], "not in word order"),        # a prefix sorts first
    (b"a\nb\n", [0, 2, 4, 4], [0, 1], "expected a C-order"),     # n + 2 offsets for n words
])
def test_vocabulary_faults_are_found_without_a_checksum(tmp_path, text, offsets, order, match):
    path = write_vocab_files(tmp_path / "v.embd", text, offsets, order, count=len(order))
    refused(path, match)


def test_a_changed_vocabulary_fails_its_checksum(native):
    text = (native / "vocab.txt").read_bytes()
    (native / "vocab.txt").write_bytes(text.replace(b"cat", b"cau"))  # still sorted, still valid UTF-8
    refused(native, "changed since they were written")


def test_the_writer_records_the_checksum_and_the_reader_uses_it(native, monkeypatch):
    meta = json.loads((native / META).read_text())
    assert isinstance(meta["vocab_crc32"], int)
    calls = []
    import embdebias.io.native as mod

    monkeypatch.setattr(mod, "check_vocabulary", lambda *a: calls.append(a))
    read_native(native)
    assert calls == []  # the checksum matched: no full check
    set_meta(native, vocab_crc32=None)
    read_native(native)
    assert len(calls) == 1  # a cache without the record gets the full check


def test_opening_stays_lazy(native):
    vocab = read_native(native).words
    assert vocab._words is None  # no word decoded yet
    assert vocab.index("mat") == 4 and vocab._words is None
    assert Vocabulary.from_native(native).tolist() == WORDS


_WORD = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=20)


@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(_WORD, max_size=12, unique=True), data=st.data())
def test_word_order_check_agrees_with_python(tmp_path_factory, words, data):
    text = "".join(w + "\n" for w in words).encode()
    offsets = np.zeros(len(words) + 1, np.int64)
    offsets[1:] = np.cumsum([len(w.encode()) + 1 for w in words])
    order = np.array(data.draw(st.permutations(range(len(words)))), np.int64)
    ordered = all(words[a] < words[b] for a, b in zip(order[:-1], order[1:], strict=True))
    try:
        check_vocabulary(np.frombuffer(text, np.uint8), offsets, order, "v.embd")
        accepted = True
    except VectorFileError:
        accepted = False
    assert accepted == ordered
    path = tmp_path_factory.mktemp("rt") / "e.embd"
    write_native(Embedding(words, np.ones((len(words), 1), np.float32)), path)
    set_meta(path, vocab_crc32=None)  # the full check must accept what the writer wrote
    back = read_native(path)
    assert back.words.tolist() == words
    assert back.words.rows(words).tolist() == list(range(len(words)))


# -- the writer ---------------------------------------------------------------------------------
def test_rewriting_an_output_keeps_a_users_files(native):
    (native / "notes.txt").write_text("mine")
    with pytest.raises(EmbdebiasError, match=r"notes\.txt"):
        write_native(Embedding(["x"], np.ones((1, 2))), native)
    assert (native / "notes.txt").read_text() == "mine"
    assert read_native(native).words.tolist() == WORDS
    (native / "notes.txt").unlink()
    write_native(Embedding(["x"], np.ones((1, 2))), native)  # only its own files: replaced
    assert read_native(native).words.tolist() == ["x"]
    assert {p.name for p in native.iterdir()} == NATIVE_FILES


def test_append_writes_rows_in_order_and_counts_them(tmp_path):
    vecs = np.arange(10, dtype=np.float64).reshape(5, 2)
    with NativeWriter(tmp_path / "a.embd", list("abcde"), (5, 2)) as w:
        w.append(vecs[:2])
        w.append(vecs[2:2])  # an empty block is fine
        w.append(vecs[2:])
    np.testing.assert_array_equal(w.open().vectors, vecs.astype(np.float32))
    with pytest.raises(ValueError, match="shape"):
        with NativeWriter(tmp_path / "b.embd", list("abcde"), (5, 2)) as w:
            w.append(np.ones((6, 2)))
    with pytest.raises(ValueError, match="3 rows appended, expected 5"):
        with NativeWriter(tmp_path / "c.embd", list("abcde"), (5, 2)) as w:
            w.append(np.ones((3, 2)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.embd"]  # failures leave nothing


def test_the_memory_map_follows_appended_rows(tmp_path):
    with NativeWriter(tmp_path / "m.embd", list("abcd"), (4, 2)) as w:
        w.append(np.full((2, 2), 7.0))
        w.vectors[3] = 9.0
        with pytest.raises(RuntimeError):
            w.append(np.ones((1, 2)))
    np.testing.assert_array_equal(w.open().vectors, [[7, 7], [7, 7], [0, 0], [9, 9]])


@pytest.mark.parametrize("words, shape, match", [
    (["a", "b\ud800"], (2, 2), "cannot encode"),
    (["a", "a"], (2, 2), "repeated"),
    (["a", "b\nc"], (2, 2), "newline"),
    (["a", "b"], (2, 0), "dimension 0"),
])
def test_native_writer_refuses_what_it_cannot_store(tmp_path, words, shape, match):
    with pytest.raises(EmbdebiasError, match=match):
        with NativeWriter(tmp_path / "x.embd", words, shape) as w:
            w.append(np.ones(shape))
    assert list(tmp_path.iterdir()) == []


# -- every writer: round-trip or refuse -------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("words, shape", [(["a", "b"], (2, 0)), ([], (0, 3)), (["a", "b\ud800"], (2, 2))])
def test_every_writer_round_trips_or_refuses(tmp_path, fmt, words, shape):
    pytest.importorskip("gensim")
    path = tmp_path / output_name("e", fmt)
    emb = Embedding(words, np.ones(shape, np.float32))
    try:
        save(emb, path, format=fmt)
    except EmbdebiasError:
        assert list(tmp_path.iterdir()) == [], "a refused write left files behind"
        assert shape[1] == 0 or words == [] or fmt != "gensim-kv"
        return
    back = load(path)
    assert back.words.tolist() == words and back.shape == shape


# -- fastText .bin ---------------------------------------------------------------------------------
gensim = pytest.importorskip("gensim")
TEST_DATA = Path(gensim.__file__).parent / "test" / "test_data"


@pytest.mark.parametrize("name", ["lee_fasttext.bin", "lee_fasttext_new.bin", "crime-and-punishment.bin",
                                  "cp852_fasttext.bin", "non_ascii_fasttext.bin", "toy-model.bin"])
def test_real_fasttext_models_pass_the_layout_check(name):
    from embdebias.io.fasttext_bin import check_fasttext_bin

    info = check_fasttext_bin(TEST_DATA / name)
    assert info["nwords"] > 0 and info["dim"] > 0


def test_lee_fasttext_reads_through_the_check():
    emb = load(TEST_DATA / "lee_fasttext.bin")
    assert emb.shape == (1762, 10)


@pytest.fixture
def ft_model(tmp_path) -> Path:
    path = tmp_path / "m.ft.bin"
    save(Embedding(["alpha", "beta", "gamma"], np.arange(6, dtype=np.float32).reshape(3, 2)), path)
    return path


def _layout(data: bytes) -> dict:
    """Offsets of the fields of a new-format model with n-grams off (as our writer makes)."""
    vocab = 8 + 48 + 8
    words_end = vocab + 12 + 8 + 8
    for _ in range(struct.unpack_from("<i", data, vocab)[0]):
        words_end = data.index(b"\x00", words_end) + 10
    return {"size": vocab, "nwords": vocab + 4, "nlabels": vocab + 8, "prune": vocab + 20,
            "quant": words_end, "rows": words_end + 1, "cols": words_end + 9, "dim": 8, "bucket": 8 + 32}


def test_every_truncation_is_a_clean_error_before_gensim(ft_model):
    data = ft_model.read_bytes()
    start = time.perf_counter()
    for cut in range(0, len(data), max(1, len(data) // 80)):
        ft_model.write_bytes(data[:cut])
        with pytest.raises(VectorFileError):
            load(ft_model, format="fasttext-bin")
    assert time.perf_counter() - start < 60  # gensim alone would wait for a NUL forever


@pytest.mark.parametrize("field, value, match", [
    ("size", 10**9, "dictionary of 1000000000 entries"),
    ("nwords", 10**9, "dictionary of"),
    ("size", -5, "dictionary of -5"),
    ("nlabels", 2, "supervised"),
    ("prune", 10**15, "pruned-index pairs"),
    ("quant", 1, "quantized"),
    ("rows", 10**12, "input matrix of"),
    ("cols", 10**9, "input matrix of"),
    ("dim", 10**6, "input matrix of"),
    ("bucket", 2**31 - 1, "input matrix of"),
    ("dim", 0, "expected dim >= 1"),
])
def test_a_hostile_count_is_refused_quickly(ft_model, field, value, match):
    data = bytearray(ft_model.read_bytes())
    at = _layout(bytes(data))[field]
    fmt = {"rows": "<q", "cols": "<q", "prune": "<q", "quant": "<?"}.get(field, "<i")
    struct.pack_into(fmt, data, at, value)
    ft_model.write_bytes(bytes(data))
    with pytest.raises(VectorFileError, match=match):
        load(ft_model, format="fasttext-bin")


def test_trailing_bytes_are_refused(ft_model):
    ft_model.write_bytes(ft_model.read_bytes() + b"\x00" * 4)
    with pytest.raises(VectorFileError, match="4 bytes after the output matrix"):
        load(ft_model)


def test_an_undecodable_fasttext_word(ft_model):
    data = ft_model.read_bytes()
    at = data.index(b"beta\x00")
    ft_model.write_bytes(data[:at] + b"b\xffta" + data[at + 4:])
    err = pytest.raises(VectorFileError, load, ft_model).value  # strict is the default
    assert err.offset == at + 1 and "undecodable UTF-8" in str(err)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load(ft_model, unicode_errors="replace").words.tolist() == ["alpha", "b\ufffdta", "gamma"]
        assert load(ft_model, unicode_errors="ignore").words.tolist() == ["alpha", "bta", "gamma"]


def test_fasttext_writer_refuses_unencodable_words(tmp_path):
    from embdebias.io.gensim_formats import write_fasttext_bin

    with pytest.raises(EmbdebiasError, match="cannot encode"):
        write_fasttext_bin(Embedding(["a", "\udcff"], np.ones((2, 2))), tmp_path / "x.ft.bin")
    assert list(tmp_path.iterdir()) == []


def test_fasttext_word_that_lost_its_nul_is_refused(tmp_path):
    """Removing a word's NUL must not shift the words silently (the fuzzer's fastText misread)."""
    from gensim.models import FastText

    from embdebias import io
    from embdebias.errors import VectorFileError

    sentences = [["alpha", "beta", "gamma", "delta"]] * 20
    model = FastText(vector_size=4, min_count=1, epochs=1, seed=1, workers=1)
    model.build_vocab(sentences)
    model.train(sentences, total_examples=len(sentences), epochs=1)
    good = tmp_path / "good.ft.bin"
    from gensim.models.fasttext import save_facebook_model

    save_facebook_model(model, str(good))
    data = good.read_bytes()
    at = data.index(b"gamma\x00") + len(b"gamma")
    bad = tmp_path / "bad.ft.bin"
    bad.write_bytes(data[:at] + data[at + 1:])
    assert io.load(good, format="fasttext-bin").words.tolist()
    with pytest.raises(VectorFileError, match="dictionary"):
        io.load(bad, format="fasttext-bin")


def test_fasttext_words_hold_no_whitespace_either_way(tmp_path):
    """A space inserted into a fastText word is an error (fastText splits tokens there); the writer refuses one."""
    import numpy as np

    from embdebias import io
    from embdebias.embedding import Embedding
    from embdebias.errors import EmbdebiasError, VectorFileError

    good = tmp_path / "good.ft.bin"
    io.save(Embedding(["he", "she", "it"], np.eye(3, dtype=np.float32)), good, format="fasttext-bin")
    data = good.read_bytes()
    at = data.index(b"he\x00") + 2
    bad = tmp_path / "bad.ft.bin"
    bad.write_bytes(data[:at] + b" " + data[at:])
    with pytest.raises(VectorFileError, match="dictionary"):
        io.load(bad, format="fasttext-bin")
    for word in ("a b", "a\tb", "a\rb", "a\x0bb"):
        with pytest.raises(EmbdebiasError, match="whitespace"):
            io.save(Embedding([word], np.ones((1, 2), np.float32)), tmp_path / "w.ft.bin", format="fasttext-bin")


def test_a_vocabularys_words_are_not_checked_for_repeats_again_but_a_plain_lists_are(tmp_path, monkeypatch):
    """A Vocabulary is unique by construction: writing it skips the second check (1.5 s on 3M
    words); words given as a list are still checked, and a repeat refused."""
    from embdebias.io import native
    from embdebias.vocab import Vocabulary

    calls = []
    real = native.duplicate_rows
    monkeypatch.setattr(native, "duplicate_rows", lambda words: calls.append(len(words)) or real(words))
    with NativeWriter(tmp_path / "v.embd", Vocabulary(["a", "b", "c"]), (3, 2)) as w:
        w.append(np.ones((3, 2), np.float32))
    assert calls == []
    assert list(read_native(tmp_path / "v.embd").words) == ["a", "b", "c"]
    with pytest.raises(EmbdebiasError, match="the word 'a' is repeated"), \
            NativeWriter(tmp_path / "l.embd", ["a", "b", "a"], (3, 2)):
        pass
    assert calls == [3]


def test_a_vocabulary_written_twice_is_encoded_once_and_written_the_same(tmp_path, monkeypatch):
    """The second copy of a Vocabulary reuses the first one's arrays: the same files as a list's."""
    import gc

    from embdebias.io import native
    from embdebias.vocab import Vocabulary

    words = ["zeta", "alpha", "éclair", "b"]
    calls = []
    real = native.encode_vocabulary
    monkeypatch.setattr(native, "encode_vocabulary", lambda *a, **k: calls.append(1) or real(*a, **k))
    vocab = Vocabulary(words)
    for name, words_given in (("one", vocab), ("two", vocab), ("list", list(words))):
        with NativeWriter(tmp_path / f"{name}.embd", words_given, (4, 2)) as w:
            w.append(np.arange(8, dtype=np.float32).reshape(4, 2))
    assert len(calls) == 2  # once for the vocabulary, once for the list
    for file in ("vocab.txt", "vocab_offsets.npy", "vocab_sorted.npy", "embdebias.json"):
        expected = (tmp_path / "list.embd" / file).read_bytes()
        assert (tmp_path / "one.embd" / file).read_bytes() == expected
        assert (tmp_path / "two.embd" / file).read_bytes() == expected
    assert list(read_native(tmp_path / "two.embd").words) == words
    key = id(vocab)
    assert key in native._WRITTEN
    del vocab
    gc.collect()
    assert key not in native._WRITTEN
