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
