"""Bad input: every malformed-file case raises a specific error naming the file and line / byte offset."""

from __future__ import annotations

import gzip
import struct
import warnings

import numpy as np
import pytest

from embdebias.embedding import DuplicateWordWarning, Embedding
from embdebias.errors import EmbdebiasError, VectorFileError
from embdebias.io import detect_format, load, save
from embdebias.io.text import read_text
from embdebias.io.word2vec_bin import read_word2vec_bin


def write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def expect_error(path, *, line=None, offset=None, match=None, **load_kw):
    with pytest.raises(VectorFileError) as info:
        load(path, **load_kw)
    err = info.value
    assert err.path == str(path)
    assert str(path) in str(err)
    if line is not None:
        assert err.line == line, str(err)
        assert f"line {line}" in str(err)
    if offset is not None:
        assert err.offset == offset, str(err)
        assert f"byte offset {offset}" in str(err)
    if match is not None:
        assert match in str(err), str(err)
    return err


def record(word: str, values) -> bytes:
    return word.encode() + b" " + np.asarray(values, dtype="<f4").tobytes() + b"\n"


# -- empty files ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", [None, "word2vec-text", "glove", "word2vec-bin"])
def test_empty_file(tmp_path, fmt):
    path = write(tmp_path, "empty.txt", b"")
    err = expect_error(path, match="empty file", format=fmt or "auto")
    assert err.line == 1 or err.offset == 0


def test_whitespace_only_and_empty_gzip(tmp_path):
    expect_error(write(tmp_path, "blank.txt", b"\n\n  \n"), match="empty file")
    expect_error(write(tmp_path, "e.bin.gz", gzip.compress(b"")), match="empty file")


# -- text: header disagreements -------------------------------------------------------------
def test_text_more_rows_than_header(tmp_path):
    path = write(tmp_path, "a.txt", b"2 3\na 1 2 3\nb 4 5 6\nc 7 8 9\n")
    expect_error(path, line=4, match="header says 2 words but there are more rows")


def test_text_more_rows_than_header_in_a_later_block(tmp_path):
    path = write(tmp_path, "a.txt", b"2 3\na 1 2 3\nb 4 5 6\n\nc 7 8 9\n")
    with pytest.raises(VectorFileError) as info:
        read_text(path, header=True, block_bytes=8)
    assert info.value.line == 5 and "more rows" in str(info.value)


def test_text_fewer_rows_than_header(tmp_path):
    path = write(tmp_path, "a.txt", b"3 3\na 1 2 3\nb 4 5 6\n")
    expect_error(path, match="header says 3 words but the file ends after 2")


def test_text_limit_below_a_short_header_count_is_fine(tmp_path):
    path = write(tmp_path, "a.txt", b"3 3\na 1 2 3\nb 4 5 6\n")
    assert len(load(path, limit=2)) == 2


def test_text_wrong_dimension_against_header(tmp_path):
    path = write(tmp_path, "a.txt", b"2 4\na 1 2 3\nb 4 5 6\n")
    expect_error(path, line=2, match="expected 4 values after the word (the header's dimension), found 3")


def test_text_bad_header(tmp_path):
    path = write(tmp_path, "a.txt", b"2 x\na 1 2 3\n")
    expect_error(path, line=1, match="header", format="word2vec-text")


# -- text: rows ------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt,header", [("word2vec-text", b"3 3\n"), ("glove", b"")])
def test_text_row_with_too_few_values(tmp_path, fmt, header):
    path = write(tmp_path, "a.txt", header + b"a 1 2 3\nb 4 5\nc 7 8 9\n")
    expect_error(path, line=2 + bool(header), format=fmt, match="3 values")


def test_text_row_with_too_many_values(tmp_path):
    path = write(tmp_path, "a.vec", b"3 3\na 1 2 3\nb 4 5 6 7\nc 7 8 9\n")
    expect_error(path, line=3, match="expected 3 values after the word (the header's dimension), found 4")


@pytest.mark.parametrize("bad,what", [(b"abc", "not a number"), (b"1.2.3", "not a number"),
                                      (b"nan", "NaN"), (b"-inf", "inf"), (b"1e39", "finite")])
def test_text_bad_value(tmp_path, bad, what):
    path = write(tmp_path, "a.txt", b"3 3\na 1 2 3\nb 4 " + bad + b" 6\nc 7 8 9\n")
    err = expect_error(path, line=3, match=what)
    assert "value 2" in str(err)


def test_text_undecodable_word(tmp_path):
    path = write(tmp_path, "a.txt", b"3 3\na 1 2 3\nb\xff\xfe 4 5 6\nc 7 8 9\n")
    expect_error(path, line=3, match="undecodable UTF-8")
    glove = write(tmp_path, "g.txt", b"a 1 2 3\nb 4 5 6\n\xe3\x81 7 8 9\n")
    expect_error(glove, line=3, match="undecodable UTF-8")


def test_text_error_line_found_in_a_late_block(tmp_path):
    rng = np.random.default_rng(0)
    lines = [b"5000 4"] + [f"w{i} ".encode() + b" ".join(b"%.5f" % x for x in rng.standard_normal(4))
                           for i in range(5000)]
    lines[4321] = lines[4321].rsplit(b" ", 1)[0] + b" oops"
    path = write(tmp_path, "big.txt", b"\n".join(lines) + b"\n")
    with pytest.raises(VectorFileError) as info:
        read_text(path, header=True, block_bytes=1000)
    assert info.value.line == 4322 and "'oops'" in str(info.value)
    with pytest.raises(VectorFileError) as info:
        load(path)
    assert info.value.line == 4322


def test_text_duplicates_keep_first_with_warning(tmp_path):
    path = write(tmp_path, "a.txt", b"3 2\nx 1 2\ny 3 4\nx 5 6\n")
    with pytest.warns(DuplicateWordWarning, match=r"'x' \(line 4\)"):
        emb = load(path)
    assert emb.words.tolist() == ["x", "y"]
    np.testing.assert_array_equal(emb["x"], [1, 2])


# -- binary ----------------------------------------------------------------------------------------
def binary_file(tmp_path, header: bytes, records, name="a.bin"):
    return write(tmp_path, name, header + b"".join(records))


def test_binary_truncated_record(tmp_path):
    body = record("a", [1, 2, 3]) + record("b", [4, 5, 6])
    path = write(tmp_path, "a.bin", b"2 3\n" + body[:-5])
    # The second record starts at 4 + len(record("a")) = 4 + 15.
    expect_error(path, offset=19, match="truncated record")


def test_binary_truncated_word_without_vector(tmp_path):
    path = write(tmp_path, "a.bin", b"2 3\n" + record("a", [1, 2, 3]) + b"bword")
    expect_error(path, offset=19, match="truncated record")


def test_binary_fewer_records_than_header(tmp_path):
    path = binary_file(tmp_path, b"3 3\n", [record("a", [1, 2, 3]), record("b", [4, 5, 6])])
    expect_error(path, offset=34, match="header says 3 words but the file ends after 2")


def test_binary_more_records_than_header(tmp_path):
    path = binary_file(tmp_path, b"1 3\n", [record("a", [1, 2, 3]), record("b", [4, 5, 6])])
    expect_error(path, offset=19, match="header says 1 words but there are more records")
    assert len(load(path, limit=1)) == 1


def test_binary_wrong_dimension_in_header(tmp_path):
    # The header claims 4 values but records hold 3: the reader runs off the record boundaries.
    path = binary_file(tmp_path, b"2 4\n", [record("a", [1, 2, 3]), record("b", [4, 5, 6])])
    with pytest.raises(VectorFileError) as info:
        load(path, format="word2vec-bin")
    assert info.value.offset is not None and "a.bin" in str(info.value)


def test_binary_non_finite(tmp_path):
    path = binary_file(tmp_path, b"2 3\n", [record("a", [1, 2, 3]), record("b", [4, np.nan, 6])])
    expect_error(path, offset=21, match="'b' has NaN or infinite")


def test_binary_undecodable_word(tmp_path):
    body = record("a", [1, 2, 3]) + b"\xc3\x28 " + np.array([4, 5, 6], "<f4").tobytes() + b"\n"
    path = write(tmp_path, "a.bin", b"2 3\n" + body)
    expect_error(path, offset=19, match="undecodable UTF-8")


def test_binary_word_with_newline_inside(tmp_path):
    body = record("a", [1, 2, 3]) + record("b\nc", [4, 5, 6])
    path = write(tmp_path, "a.bin", b"2 3\n" + body)
    expect_error(path, offset=19, match="newline")


def test_binary_bad_header(tmp_path):
    path = write(tmp_path, "a.bin", b"2 three\n" + record("a", [1, 2, 3]))
    expect_error(path, offset=0, match="header", format="word2vec-bin")


def test_binary_duplicates_keep_first_with_warning(tmp_path):
    path = binary_file(tmp_path, b"3 2\n", [record("x", [1, 2]), record("y", [3, 4]), record("x", [5, 6])])
    with pytest.warns(DuplicateWordWarning, match="'x'"):
        emb = load(path)
    assert emb.words.tolist() == ["x", "y"]
    np.testing.assert_array_equal(emb["x"], [1, 2])


def test_binary_errors_in_gzip_and_small_windows(tmp_path):
    records = [record(f"w{i}", [i, i, i]) for i in range(500)]
    records[321] = record("w321", [1, np.inf, 1])
    offset = 6 + sum(len(r) for r in records[:321]) + len("w321 ")
    raw = b"500 3\n" + b"".join(records)
    for name, data in (("a.bin", raw), ("a.bin.gz", gzip.compress(raw))):
        path = write(tmp_path, name, data)
        with pytest.raises(VectorFileError) as info:
            read_word2vec_bin(path, window_bytes=1)
        assert info.value.offset == offset


# -- other formats ----------------------------------------------------------------------------
def test_missing_file(tmp_path):
    with pytest.raises(VectorFileError, match="no such file"):
        load(tmp_path / "nope.txt")


def test_damaged_fasttext_bin(tmp_path):
    path = write(tmp_path, "m.bin", struct.pack("<2i", 793712314, 12) + b"\x00" * 20)
    assert detect_format(path) == "fasttext-bin"
    expect_error(path, match="fastText")


def test_damaged_gensim_pickle(tmp_path):
    path = write(tmp_path, "m.kv", b"\x80\x04garbage")
    assert detect_format(path) == "gensim-kv"
    expect_error(path, match="gensim")


def test_damaged_native_directory(tmp_path):
    emb = Embedding(["a", "b"], np.eye(2))
    save(emb, tmp_path / "n.embd")
    (tmp_path / "n.embd" / "vectors.npy").write_bytes(b"junk")
    with pytest.raises(VectorFileError, match="n.embd"):
        load(tmp_path / "n.embd")


def test_writers_refuse_non_finite_and_unrepresentable_words(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        emb = Embedding(["a b", "c"], np.ones((2, 2)))
    with pytest.raises(EmbdebiasError, match="space"):
        save(emb, tmp_path / "x.vec")
    emb = Embedding(["a\nb", "c"], np.ones((2, 2)))
    for name in ("x.bin", "x.glove"):
        with pytest.raises(EmbdebiasError, match="newline"):
            save(emb, tmp_path / name)
    assert list(tmp_path.iterdir()) == []


# -- NaN / infinity in gensim KeyedVectors --------------------------------------------------
@pytest.mark.parametrize("mmap", [True, False])
def test_gensim_kv_non_finite_names_file_word_and_row(tmp_path, monkeypatch, mmap):
    from gensim.models import KeyedVectors

    import embdebias.io.gensim_kv as gensim_kv

    monkeypatch.setattr(gensim_kv, "DEFAULT_CHUNK_ROWS", 4)  # the bad row is in a later chunk
    kv = KeyedVectors(3, count=0, dtype=np.float32)
    words = [f"w{i}" for i in range(10)]
    vectors = np.ones((10, 3), np.float32)
    vectors[6, 1] = np.nan
    kv.add_vectors(words, vectors)
    path = tmp_path / "nan.kv"
    kv.save(str(path), separately=["vectors"])  # our own writer refuses NaN
    err = expect_error(path, match="NaN or infinite", mmap=mmap)
    assert "'w6'" in str(err) and "row 6" in str(err)
    assert len(load(path, limit=6, mmap=mmap)) == 6  # rows past the limit are not looked at


# -- truncated / damaged gzip -----------------------------------------------------------------
def _big_gzip_pair(tmp_path, rng):
    """A .txt.gz and a .bin.gz of random vectors, each decompressing to far more than detection reads."""
    n, d = 3000, 12
    vectors = rng.standard_normal((n, d)).astype(np.float32)
    emb = Embedding([f"w{i}" for i in range(n)], vectors)
    save(emb, tmp_path / "big.txt.gz")
    save(emb, tmp_path / "big.bin.gz")
    return tmp_path / "big.txt.gz", tmp_path / "big.bin.gz"


@pytest.mark.parametrize("kind", ["text", "binary"])
@pytest.mark.parametrize("damage", ["truncated-late", "truncated-early", "corrupt", "bad-crc", "bad-deflate"])
@pytest.mark.parametrize("fmt", ["auto", "given"])
def test_damaged_gzip_is_a_vector_file_error(tmp_path, kind, damage, fmt):
    from embdebias.io import describe

    txt, binary = _big_gzip_pair(tmp_path, np.random.default_rng(0))
    src = txt if kind == "text" else binary
    data = bytearray(src.read_bytes())
    if damage == "truncated-late":
        data = data[:len(data) * 2 // 3]  # past what detection reads: the reader hits the end
    elif damage == "truncated-early":
        data = data[:200]
    elif damage == "corrupt":
        data[len(data) // 2:len(data) // 2 + 64] = bytes(range(64))
    elif damage == "bad-crc":
        data[-8] ^= 0xFF  # the CRC-32 in the trailer
    else:
        data[10] = 0x07  # first deflate block of the reserved type 3: zlib.error
    path = write(tmp_path, "damaged" + "".join(src.suffixes), bytes(data))
    given = {"word2vec-bin" if kind == "binary" else "word2vec-text"} if fmt == "given" else set()
    err = expect_error(path, match="truncated or damaged gzip data", format=given.pop() if given else "auto")
    assert "Traceback" not in str(err)
    with pytest.raises(VectorFileError, match="damaged"):
        describe(path)


# -- empty words --------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt,data,line", [
    ("word2vec-text", b"2 2\n 1 2\nb 3 4\n", 2),
    ("word2vec-text", b"2 2\na 1 2\n\t3 4\n", 3),
    ("glove", b" 1 2 3\nb 3 4 5\n", 1),  # (" 1 2" alone would be a word2vec header)
    ("glove", b"a 1 2\nb 3 4\n\n 5 6\n", 4),
])
def test_text_empty_word_names_the_line(tmp_path, fmt, data, line):
    path = write(tmp_path, "e.txt", data)
    assert detect_format(path) == fmt
    expect_error(path, line=line, match="empty word")


def test_writers_refuse_empty_words_native_keeps_them(tmp_path):
    emb = Embedding(["a", ""], np.ones((2, 2)))
    for name in ("x.txt", "x.vec", "x.glove", "x.bin", "x.bin.gz", "x.ftbin"):
        fmt = "fasttext-bin" if name.endswith("ftbin") else None
        with pytest.raises(EmbdebiasError, match="empty word") as info:
            save(emb, tmp_path / name, format=fmt)
        assert str(tmp_path / name) in str(info.value)
    assert list(tmp_path.iterdir()) == []
    save(emb, tmp_path / "n.embd")
    assert load(tmp_path / "n.embd").words.tolist() == ["a", ""]


# -- newlines / carriage returns in words --------------------------------------------------------
def test_native_refuses_words_with_newlines_naming_the_row(tmp_path):
    from embdebias.vocab import Vocabulary

    emb = Embedding(["a", "b\nc", "d"], np.ones((3, 2)))
    with pytest.raises(EmbdebiasError, match="newline") as info:
        save(emb, tmp_path / "n.embd")
    assert "row 1" in str(info.value) and "'b\\nc'" in str(info.value)
    assert str(tmp_path / "n.embd") in str(info.value)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "raw").mkdir()
    with pytest.raises(EmbdebiasError, match="row 1"):
        Vocabulary.write_native(["a", "b\nc"], tmp_path / "raw")
    # gensim-kv, named in the message as the way out, does store them
    save(emb, tmp_path / "n.kv")
    assert load(tmp_path / "n.kv").words.tolist() == ["a", "b\nc", "d"]


def test_carriage_return_refused_by_text_kept_by_native_and_binary(tmp_path):
    emb = Embedding(["a\rb", "c"], np.arange(4.0).reshape(2, 2))
    for name in ("x.txt", "x.glove"):
        with pytest.raises(EmbdebiasError, match="carriage return"):
            save(emb, tmp_path / name)
    for name in ("x.embd", "x.bin"):
        save(emb, tmp_path / name)
        assert load(tmp_path / name).words.tolist() == ["a\rb", "c"]


# -- empty embeddings ------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt,name", [("glove", "e.glove"), ("fasttext-bin", "e.ftbin")])
def test_empty_embedding_refused_where_it_cannot_round_trip(tmp_path, fmt, name):
    emb = Embedding([], np.zeros((0, 4), np.float32))
    with pytest.raises(EmbdebiasError, match="0 words") as info:
        save(emb, tmp_path / name, format=fmt)
    assert str(tmp_path / name) in str(info.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt,name", [("word2vec-text", "e.txt"), ("word2vec-bin", "e.bin"),
                                      ("word2vec-bin", "e.bin.gz"), ("native", "e.embd"),
                                      ("gensim-kv", "e.kv")])
def test_empty_embedding_round_trips_elsewhere(tmp_path, fmt, name):
    save(Embedding([], np.zeros((0, 4), np.float32)), tmp_path / name, format=fmt)
    back = load(tmp_path / name)
    assert back.shape == (0, 4)


# -- tabs ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("data,fmt", [
    (b"2 2\na\t1\t2\nb\t3\t4\n", "word2vec-text"),
    (b"2\t2\na\t1 2\t\nb 3\t4\t\n", "word2vec-text"),  # mixed, trailing tab
    (b"a\t1\t2\nb\t3\t4\n", "glove"),
    (b"a\t1 2\nb\t3 4", "glove"),
])
def test_tabs_separate_fields_like_spaces(tmp_path, data, fmt, monkeypatch):
    import embdebias.io.text as text

    path = write(tmp_path, "t.txt", data)
    assert detect_format(path) == fmt
    for fast in (True, False):
        if not fast:  # the line-by-line parser agrees
            monkeypatch.setattr(text, "_parse_block_fast", lambda *a: None)
        emb = load(path)
        assert emb.words.tolist() == ["a", "b"]
        np.testing.assert_array_equal(emb.vectors, [[1, 2], [3, 4]])


def test_tab_inside_words(tmp_path):
    emb = Embedding(["x\ty", "z"], np.arange(4.0).reshape(2, 2))
    with pytest.raises(EmbdebiasError, match="tab"):
        save(emb, tmp_path / "x.txt")
    for name in ("x.glove", "x.bin", "x.embd"):  # GloVe keeps everything before the last d fields
        save(emb, tmp_path / name)
        assert load(tmp_path / name).words.tolist() == ["x\ty", "z"]
    # word2vec text: a tab ends the word, so an extra field is a clear error on that line
    expect_error(write(tmp_path, "w.txt", b"2 2\nz 1 2\nx\ty 3 4\n"), line=3, match="expected 2 values")
