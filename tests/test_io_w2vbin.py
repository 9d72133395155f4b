"""The word2vec binary reader and writer: windows, hostile headers, damaged records, round trips.

Every file here is built byte by byte, and read back both directly and through gzip; a
tiny ``window_bytes`` puts record boundaries at every place relative to the windows.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import embdebias.io.word2vec_bin as w2v
from embdebias.embedding import DuplicateWordWarning, Embedding
from embdebias.errors import EmbdebiasError, VectorFileError
from embdebias.io import load, save
from embdebias.io.word2vec_bin import read_word2vec_bin
from embdebias.vocab import Vocabulary


def body(words, vectors, newline=True) -> bytes:
    end = b"\n" if newline else b""
    return b"".join(w.encode() + b" " + np.asarray(v, "<f4").tobytes() + end
                    for w, v in zip(words, vectors, strict=True))


def w2v_file(words, vectors, newline=True) -> bytes:
    d = np.asarray(vectors).shape[1]
    return f"{len(words)} {d}\n".encode() + body(words, vectors, newline)


def put(tmp_path, name, data: bytes, gz: bool = False):
    path = tmp_path / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def tricky_vectors(n, d, seed=0) -> np.ndarray:
    """Finite float32 whose bytes are often spaces (0x20) and newlines (0x0a)."""
    rng = np.random.default_rng(seed)
    raw = rng.choice(np.array([0x20, 0x0A, 0x3F, 0x41, 0x00, 0xC0], np.uint8), size=n * d * 4)
    vectors = raw.view("<f4").reshape(n, d).astype(np.float32)
    vectors[~np.isfinite(vectors)] = 1.5
    return vectors


def tricky_words(n, seed=0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [("w" * int(rng.integers(1, 30))) + ("é" if i % 7 == 0 else "") + str(i) for i in range(n)]


def assert_same(emb, words, vectors):
    assert emb.words.tolist() == list(words)
    np.testing.assert_array_equal(emb.vectors, vectors)
    assert emb.vectors.dtype == np.float32


# -- windows -------------------------------------------------------------------------------------
@pytest.mark.parametrize("newline", [True, False])
@pytest.mark.parametrize("gz", [False, True])
def test_records_straddling_every_window_boundary(tmp_path, newline, gz):
    words, vectors = tricky_words(30), tricky_vectors(30, 3)
    path = put(tmp_path, "a.bin", w2v_file(words, vectors, newline), gz)
    for window in list(range(1, 80)) + [97, 128, 500, 1 << 20]:
        assert_same(read_word2vec_bin(path, window_bytes=window), words, vectors)
    for limit in (0, 1, 2, 17, 30, 31):
        part = read_word2vec_bin(path, window_bytes=23, limit=limit)
        assert_same(part, words[:limit], vectors[:limit])


def test_words_longer_than_the_window(tmp_path):
    words = ["x" * 700, "a", "é" * 400, "b"]
    vectors = tricky_vectors(4, 2)
    for gz in (False, True):
        path = put(tmp_path, "l.bin", w2v_file(words, vectors), gz)
        assert_same(read_word2vec_bin(path, window_bytes=1), words, vectors)


@pytest.mark.parametrize("newline", [True, False])
def test_vectors_made_of_spaces(tmp_path, newline, monkeypatch):
    # 0x20202020 is a finite float: every vector byte a space (the window is cut short, and
    # chains from inside the vectors merge only slowly); then a space every other byte.
    monkeypatch.setattr(w2v, "_SCAN_BYTES", 64)  # so that small windows are cut too
    n, d = 200, 16
    vectors = np.full((n, d), np.frombuffer(b"    ", "<f4")[0], np.float32)
    vectors[1::2] = np.frombuffer(b"A A ", "<f4")[0]
    words = [f"w{i}" for i in range(n)]
    path = put(tmp_path, "s.bin", w2v_file(words, vectors, newline))
    for window in (1, 100, 3000, 1 << 20):
        assert_same(read_word2vec_bin(path, window_bytes=window), words, vectors)


def test_a_file_is_read_without_a_memory_map(tmp_path, monkeypatch):
    words, vectors = tricky_words(40), tricky_vectors(40, 3)
    path = put(tmp_path, "a.bin", w2v_file(words, vectors))

    def refuse(*args, **kwargs):
        raise AssertionError("mapped: a file that shrinks under a map kills the process (SIGBUS)")

    import mmap
    monkeypatch.setattr(mmap, "mmap", refuse)
    monkeypatch.setattr(np, "memmap", refuse)
    assert_same(read_word2vec_bin(path, window_bytes=100), words, vectors)


def test_pointer_doubling_fallback_reads_the_same(tmp_path, monkeypatch):
    words, vectors = tricky_words(300, seed=3), tricky_vectors(300, 5, seed=3)
    path = put(tmp_path, "a.bin", w2v_file(words, vectors, newline=False))
    monkeypatch.setattr(w2v, "_MERGE_SQUARINGS", 0)  # the one-step guess fails: doubling does the work
    for window in (1, 700, 1 << 20):
        assert_same(read_word2vec_bin(path, window_bytes=window), words, vectors)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(gaps=st.lists(st.integers(1, 40), min_size=1, max_size=200), step=st.integers(1, 60),
       need=st.integers(1, 250), cut=st.integers(0, 5))
def test_follow_matches_a_plain_walk(gaps, step, need, cut):
    spaces = np.cumsum(gaps)
    jump = np.full(len(spaces) + 1, len(spaces), dtype=np.int64)
    complete = max(0, len(spaces) - cut)
    jump[:complete] = np.searchsorted(spaces, spaces[:complete] + step)
    expected, i = [], 0
    while i != len(spaces) and len(expected) < need:
        expected.append(i)
        i = int(jump[i])
    assert w2v._follow(jump, need).tolist() == expected
    assert w2v._follow_doubling(jump, need).tolist() == expected


# -- hostile headers -------------------------------------------------------------------------------
_CAPPED_CHILD = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from embdebias.errors import VectorFileError
    from embdebias.io import load
    out = {}
    for path in sys.argv[1:]:
        try:
            load(path, format="word2vec-bin")
            out[path] = "read"
        except VectorFileError as exc:
            out[path] = "VectorFileError: " + str(exc)
    print(json.dumps(out))
""")


def test_hostile_headers_fail_cleanly_under_a_memory_cap(tmp_path):
    records = body([f"w{i}" for i in range(20)], np.ones((20, 3)))
    headers = [b"1000000000 3", b"999999999999999999 3", b"20 1000000", b"20 999999999999999999",
               b"1000000000 1000000", b"3000000 300"]
    paths = [put(tmp_path, f"h{i}.bin", h + b"\n" + records, gz) for i, h in enumerate(headers)
             for gz in (False, True)]
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", _CAPPED_CHILD, *map(str, paths)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    outcome = json.loads(proc.stdout)
    for path in paths:
        assert outcome[str(path)].startswith("VectorFileError"), (path, outcome[str(path)])
    assert "ends after 20" in outcome[str(paths[0])]  # the count: read to the end, which names the last record
    assert "dimension is 1000000" in outcome[str(paths[4])]  # the dimension: refused before reading


@pytest.mark.parametrize("header", [b"-1 3", b"3 -3", b"3 0", b"3.0 3", b"3 3 3", b"3", b"\xef\xbb\xbf3 3", b"0x3 3"])
def test_malformed_headers(tmp_path, header):
    path = put(tmp_path, "h.bin", header + b"\n" + body(["a", "b", "c"], np.ones((3, 3))))
    with pytest.raises(VectorFileError, match="header") as info:
        load(path, format="word2vec-bin")
    assert info.value.offset == 0


# -- damaged records -----------------------------------------------------------------------------
@pytest.mark.parametrize("newline", [True, False])
@pytest.mark.parametrize("gz", [False, True])
def test_every_truncation_is_an_error_or_loses_nothing(tmp_path, newline, gz):
    words, vectors = ["a", "bb", "c", "dé"], tricky_vectors(4, 2, seed=1)
    data = w2v_file(words, vectors, newline)
    for cut in range(len(data)):
        path = put(tmp_path, "t.bin", data[:cut], gz)
        try:
            emb = read_word2vec_bin(path, window_bytes=7)
        except VectorFileError as exc:
            assert exc.offset is not None or "empty file" in str(exc) or "header" in str(exc), str(exc)
            continue
        # Only the newline after the last vector may go.
        assert newline and cut == len(data) - 1, cut
        assert_same(emb, words, vectors)


def test_truncation_names_the_record_and_offset(tmp_path):
    words, vectors = ["a", "b", "c"], np.ones((3, 3))
    data = w2v_file(words, vectors)
    path = put(tmp_path, "t.bin", data[:-8])
    with pytest.raises(VectorFileError, match="truncated record 3") as info:
        load(path)
    assert info.value.offset == 4 + 2 * 15


@pytest.mark.parametrize("newline", [True, False])
def test_word_with_a_space_is_an_error_not_a_shift(tmp_path, newline):
    words, vectors = ["a", "new york", "b", "c"], np.full((4, 3), 0.5)
    path = put(tmp_path, "s.bin", w2v_file(words, vectors, newline))
    with pytest.raises(VectorFileError) as info:
        load(path)
    message = str(info.value)
    # with newlines: the byte after 'new''s "vector" is not the newline every record has; without:
    # 'new''s "vector" (" yo" + 0.5's bytes shifted) holds a value over 2**64, "york" + the vector a plausible one
    assert "record 2" in message and "space" in message


def test_newline_after_some_records_only_is_an_error(tmp_path):
    vectors = np.ones((3, 2))
    data = b"3 2\n" + body(["a"], vectors[:1]) + body(["b"], vectors[1:2], newline=False) + body(["c"], vectors[2:])
    with pytest.raises(VectorFileError, match="expected a newline after the 8 vector bytes of 'b'"):
        load(put(tmp_path, "m.bin", data))


@pytest.mark.parametrize("word, match", [(b"a\x00b", "control character"), (b"a\x1bb", "control character"),
                                         (b"", "empty word"), (b"\xff", "undecodable UTF-8")])
def test_bad_words(tmp_path, word, match):
    data = b"2 2\n" + body(["ok"], np.ones((1, 2))) + word + b" " + np.ones(2, "<f4").tobytes() + b"\n"
    with pytest.raises(VectorFileError, match=match) as info:
        load(put(tmp_path, "w.bin", data))
    assert info.value.offset == 4 + 12


def test_tab_and_carriage_return_in_words_are_kept(tmp_path):
    words, vectors = ["a\tb", "c\rd"], np.ones((2, 2))
    assert_same(load(put(tmp_path, "t.bin", w2v_file(words, vectors))), words, vectors)


def test_overlong_word(tmp_path, monkeypatch):
    monkeypatch.setattr(w2v, "MAX_WORD_BYTES", 50)
    words, vectors = ["a", "x" * 51], np.ones((2, 2))
    path = put(tmp_path, "l.bin", w2v_file(words, vectors))
    with pytest.raises(VectorFileError, match="51 bytes long"):
        read_word2vec_bin(path)
    with pytest.raises(VectorFileError, match="no word ends within 50 bytes"):
        read_word2vec_bin(put(tmp_path, "n.bin", b"1 2\n" + b"x" * 1000), window_bytes=1)


def test_values_whose_sum_overflows_are_finite(tmp_path):
    words, vectors = ["a", "b"], np.full((2, 4), 3e38, np.float32)
    vectors[1] *= -1
    assert_same(load(put(tmp_path, "o.bin", w2v_file(words, vectors))), words, vectors)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_named_with_its_word(tmp_path, value):
    words, vectors = tricky_words(50), tricky_vectors(50, 4)
    vectors[37, 2] = value
    path = put(tmp_path, "n.bin", w2v_file(words, vectors))
    with pytest.raises(VectorFileError, match=f"'{words[37]}' has NaN or infinite") as info:
        read_word2vec_bin(path, window_bytes=100)
    assert info.value.offset == len(b"50 4\n") + len(body(words[:37], vectors[:37])) + len(words[37].encode()) + 1


def test_after_the_last_record(tmp_path):
    words, vectors = ["a", "b"], np.ones((2, 2))
    data = w2v_file(words, vectors)
    assert_same(load(put(tmp_path, "ws.bin", data + b"\n  \n")), words, vectors)
    with pytest.raises(VectorFileError, match="header says 2 words but there are more") as info:
        load(put(tmp_path, "g.bin", data + b"junk"))
    assert info.value.offset == len(data)
    assert len(load(put(tmp_path, "g2.bin", data + b"junk"), limit=2)) == 2  # a limit stops before


# -- the writer ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("words, vectors, match", [
    (["a", "b\x00c"], np.ones((2, 2)), "control character"),
    (["a", "b\x1fc"], np.ones((2, 2)), "control character"),
    (["a", "b"], np.ones((2, 0)), "dimension 0"),
    (["a", "b"], np.array([[1, 2], [np.inf, 0]]), "NaN or infinite"),
])
def test_writer_refuses_what_the_reader_rejects(tmp_path, words, vectors, match):
    for name in ("x.bin", "x.bin.gz"):
        with pytest.raises(EmbdebiasError, match=match):
            save(Embedding(words, vectors), tmp_path / name, format="word2vec-bin")
    assert list(tmp_path.iterdir()) == []


def test_writer_refuses_an_overlong_word(tmp_path, monkeypatch):
    monkeypatch.setattr(w2v, "MAX_WORD_BYTES", 10)
    with pytest.raises(EmbdebiasError, match="more than 10 bytes"):
        save(Embedding(["a", "x" * 11], np.ones((2, 2))), tmp_path / "x.bin")
    assert list(tmp_path.iterdir()) == []


_WORD_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters=" \n").filter(
    lambda c: c in "\t\r" or not ("\x00" <= c < " "))
_RAW_FLOATS = st.binary(min_size=4, max_size=4).map(lambda b: np.frombuffer(b, "<f4")[0])


@settings(max_examples=80, deadline=None, derandomize=True)
@given(words=st.lists(st.text(_WORD_CHARS, min_size=1, max_size=12), min_size=1, max_size=8, unique=True),
       d=st.integers(1, 4), data=st.data(), window=st.integers(1, 200), gz=st.booleans())
def test_write_then_read_gives_the_same_words_and_vectors(tmp_path_factory, words, d, data, window, gz):
    values = st.one_of(st.floats(width=32, allow_nan=False, allow_infinity=False),
                       _RAW_FLOATS.filter(np.isfinite))
    vectors = np.array([[data.draw(values) for _ in range(d)] for _ in words], dtype=np.float32)
    path = tmp_path_factory.mktemp("rt") / ("e.bin.gz" if gz else "e.bin")
    save(Embedding(words, vectors), path, format="word2vec-bin")
    back = read_word2vec_bin(path, window_bytes=window)
    assert back.words.tolist() == words
    np.testing.assert_array_equal(back.vectors.view(np.uint32), vectors.view(np.uint32))  # bit for bit


# -- the duplicate check by hashes ---------------------------------------------------------------
@settings(max_examples=60, deadline=None, derandomize=True)
@given(words=st.lists(st.binary(min_size=1, max_size=40).filter(lambda w: b"\n" not in w), min_size=1,
                      max_size=30))
def test_word_hashes_are_a_function_of_the_bytes(words):
    """Equal words get equal hashes wherever they stand; words of up to 8 bytes never share one."""
    from embdebias.io._common import word_hashes
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    hashes = word_hashes(np.frombuffer(b"".join(w + b"\n" for w in words), np.uint8), lengths)
    alone = [int(word_hashes(np.frombuffer(w + b"\n", np.uint8), np.array([len(w)]))[0]) for w in words]
    assert hashes.tolist() == alone
    short = {w: h for w, h in zip(words, alone, strict=True) if len(w) <= 8}
    assert len(set(short.values())) == len(short)


@pytest.mark.parametrize("window", [23, 1 << 20])
def test_duplicates_across_windows_keep_the_first(tmp_path, window):
    """A word repeated windows apart (and words 8, 16 and 17 bytes long that differ only in their last byte)."""
    words = [f"w{i}" for i in range(40)] + ["a" * 7 + "x", "a" * 7 + "y", "b" * 15 + "x", "b" * 15 + "y",
                                           "c" * 16 + "x", "c" * 16 + "y", "w3", "c" * 16 + "x"]
    vectors = np.arange(len(words) * 2, dtype=np.float32).reshape(-1, 2)
    path = put(tmp_path, "d.bin", w2v_file(words, vectors))
    with pytest.warns(DuplicateWordWarning, match=r"2 duplicate word\(s\).*'w3'"):
        emb = read_word2vec_bin(path, window_bytes=window)
    assert_same(emb, words[:-2], vectors[:-2])


def test_equal_hashes_fall_back_to_comparing_the_words(tmp_path, monkeypatch):
    """A hash collision (forced here: every word hashes alike) costs time, never a word."""
    monkeypatch.setattr(w2v, "word_hashes", lambda joined, lengths: np.zeros(len(lengths), np.uint64))
    words, vectors = tricky_words(30), tricky_vectors(30, 3)
    path = put(tmp_path, "c.bin", w2v_file(words, vectors))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # distinct words: no "duplicate" warning
        assert_same(read_word2vec_bin(path, window_bytes=50), words, vectors)
    assert Vocabulary._hashed_if_unique(["a", "b"], [np.zeros(2, np.uint64)]) is None
    assert Vocabulary._hashed_if_unique(["a", "b"], [np.arange(2, dtype=np.uint64)]) is not None


def test_lookups_in_a_hash_indexed_vocabulary(tmp_path):
    """A strictly decoded binary file's vocabulary is indexed by its sorted word hashes, with no dict."""
    words = tricky_words(3000) + ["é" * 9, "x\t", "x\r", "a" * 30]
    vectors = np.arange(len(words), dtype=np.float32).reshape(-1, 1)
    emb = read_word2vec_bin(put(tmp_path, "h.bin", w2v_file(words, vectors)), window_bytes=4096)
    vocab = emb.words
    assert vocab._hashed is not None and vocab._index is None
    asked = [words[5], "absent", words[-1], 3, "\ud800", words[5], words[-4], "", "a" * 29, "a" * 31]
    assert vocab.rows(asked).tolist() == [5, -1, len(words) - 1, -1, -1, 5, len(words) - 4, -1, -1, -1]
    assert words[7] in emb and "nope" not in emb and emb.get("nope") == -1
    assert emb.index(words[-3]) == len(words) - 3
    np.testing.assert_array_equal(emb[words[9]], [9])
    with pytest.raises(KeyError):
        emb.index("nope")
    assert vocab._index is None  # found by the hashes alone
    for _ in range(len(words) // 64 + 1):  # many single lookups: then the dict pays off
        vocab.get(f"new{_}")
    assert vocab._index is not None and vocab.rows(asked[:3]).tolist() == [5, -1, len(words) - 1]


def test_a_hash_shared_with_another_word_is_not_a_match(monkeypatch):
    """The lookup checks the word at the row its hash finds: a colliding absent word is absent."""
    import embdebias.vocab as vocab_module
    vocab = Vocabulary._hashed_if_unique(["a", "b", "c"], [np.array([30, 10, 20], np.uint64)])
    monkeypatch.setattr(vocab_module, "word_hashes",
                        lambda joined, lengths: np.array([10, 20, 30, 25, 99][:len(lengths)], np.uint64))
    assert vocab.rows(["z", "c", "a", "q", "y"]).tolist() == [-1, 2, 0, -1, -1]


@pytest.mark.parametrize("errors", ["replace", "ignore"])
def test_distinct_bytes_decoded_alike_are_duplicates(tmp_path, errors):
    """Under 'replace' or 'ignore' two different byte strings can decode to one word: the first row is kept."""
    data = b"3 1\n" + b"".join(w + b" " + np.float32(i).tobytes() + b"\n"
                               for i, w in enumerate([b"a\xff", b"b", b"a\xfe"]))
    path = put(tmp_path, "u.bin", data)
    with pytest.warns(DuplicateWordWarning):
        emb = read_word2vec_bin(path, unicode_errors=errors)
    assert emb.words.tolist() == ["a\ufffd" if errors == "replace" else "a", "b"]
    np.testing.assert_array_equal(emb.vectors[:, 0], [0, 1])
