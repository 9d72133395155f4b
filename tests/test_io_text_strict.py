"""Strict text parsing: headers, GloVe's dimension, BOM and CR, special files, huge lines, round trips.

Every error case asserts the error type, that the message names the file and the line,
and that it stays short (input is quoted to about 80 characters).
"""

from __future__ import annotations

import gzip
import os
import socket
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import embdebias.io.text as text
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, VectorFileError
from embdebias.io import describe, detect_format, load, save
from embdebias.io.text import MAX_WORD_BYTES, read_text

#: What an error's reason (its message without the path and place) may take at most.
REASON_LIMIT = 330

ROWS = b"a 1 2 3 4 5 6 7 8\nb 2 3 4 5 6 7 8 9\nc 3 4 5 6 7 8 9 1\n"


def write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def check_error(err: VectorFileError, path, line=None, match=None) -> VectorFileError:
    """The error names the file (and the line), says ``match`` and stays short."""
    assert isinstance(err, VectorFileError)
    assert err.path == str(path) and str(path) in str(err)
    if line is not None:
        assert err.line == line, str(err)
        assert f"line {line}" in str(err)
    if match is not None:
        assert match in str(err), str(err)
    assert len(err.reason) <= REASON_LIMIT, err.reason
    return err


def expect_error(path, *, line=None, match=None, **load_kw) -> VectorFileError:
    with pytest.raises(VectorFileError) as info:
        load(path, **load_kw)
    return check_error(info.value, path, line, match)


# -- headers ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("header", [b"3 8 3", b"-3 8", b"3.0 8", b"+3 8", b"3 8.0", b"3", b"3e0 8", b"3 -8"])
@pytest.mark.parametrize("fmt", ["auto", "word2vec-text", "fasttext-vec", "glove"])
def test_a_damaged_header_is_an_error_on_line_1_never_glove(tmp_path, header, fmt):
    path = write(tmp_path, "v.txt", header + b"\n" + ROWS)
    if fmt == "auto":
        with pytest.raises(VectorFileError) as info:
            detect_format(path)
        check_error(info.value, path, line=1, match="expected a header line 'count dim'")
    err = expect_error(path, line=1, match="expected a header line 'count dim'", format=fmt)
    assert repr(header.decode()) in str(err)


@pytest.mark.parametrize("header,match", [(b"3 0", "dimension 0"), (b"0 8", "header says 0 words"),
                                          (b"3 99999999999", "dimension 99999999999"),
                                          (b"1 " + b"9" * 5000, "expected a header line")])
def test_header_values_out_of_range(tmp_path, header, match):
    path = write(tmp_path, "v.txt", header + b"\n" + ROWS)
    err = expect_error(path, match=match, format="word2vec-text")
    assert err.line in (1, 2)


def test_an_empty_embedding_header_is_read(tmp_path):
    assert load(write(tmp_path, "e.txt", b"0 8\n")).shape == (0, 8)


@pytest.mark.parametrize("count", [10 ** 12, 10 ** 17])
@pytest.mark.parametrize("compressed", [False, True])
def test_a_header_count_beyond_the_file_size_allocates_nothing_large(tmp_path, count, compressed):
    data = f"{count} 300\n".encode() + b"a" + b" 0.5" * 300 + b"\n"
    path = write(tmp_path, "v.txt.gz" if compressed else "v.txt", gzip.compress(data) if compressed else data)
    tracemalloc.start()
    try:
        err = expect_error(path, match=f"header says {count} words but the file ends after 1")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
    assert err.line == 3


@pytest.mark.parametrize("compressed", [False, True])
def test_a_huge_header_dimension_in_a_small_file(tmp_path, compressed):
    data = b"2 1000000\na 1 2 3\nb 4 5 6\n"
    path = write(tmp_path, "v.txt.gz" if compressed else "v.txt", gzip.compress(data) if compressed else data)
    tracemalloc.start()
    try:
        expect_error(path, line=2, match="expected 1000000 values after the word (the header's dimension), found 3")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20


# -- rows ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data,line,match", [
    (b"a 1 2 x\nb 4 5 6\nc 7 8 9\n", 1, "value 3 of 'a' is not a number: 'x'"),
    (b"a 1 2\nb 4 5 6\nc 7 8 9\n", 1, "expected 3 values after the word (the most common number"),
    (b"a 1 2 3 4\nb 4 5 6\nc 7 8 9\n", 1, "found 4"),
    (b"a 1 2 3\nb 4 5 6 7\nc 7 8 9\n", 2, "found 4"),
    (b"a 1 2 3\nb 4 5\nc 7 8 9\n", 2, "found 2"),
])
def test_glove_dimension_is_not_decided_by_one_damaged_row(tmp_path, data, line, match):
    path = write(tmp_path, "g.txt", data)
    assert detect_format(path) == "glove"
    expect_error(path, line=line, match=match)
    expect_error(path, line=line, match=match, format="glove")


@pytest.mark.parametrize("fmt,data,line", [
    ("word2vec-text", b"2 3\na 1 2 3\nb 4 5 6 7\n", 3),
    ("fasttext-vec", b"2 3\na 1 2 3 4\nb 4 5 6\n", 2),
    ("glove", b"a 1 2 3\nb 4 5 6\nc 9 4 5 6\nd 1 2 3\n", 3),
])
def test_an_extra_value_is_never_glued_onto_the_word(tmp_path, fmt, data, line):
    expect_error(write(tmp_path, "x.txt", data), line=line, format=fmt, match="found 4")


@pytest.mark.parametrize("data,line", [
    (b"x 0.1 0.1.2 0.3\n", 1),  # one line: the dimension is 1, and "0.1" is glued onto the word
    (b"a 1 2\nw5 0.09 -0.457w6 1 2\nb 3 4\n", 2),  # two rows run together
])
def test_a_glove_word_with_spaces_cannot_hold_a_number(tmp_path, data, line):
    expect_error(write(tmp_path, "g.txt", data), line=line, match="contains the number", format="glove")


def test_glove_words_with_spaces_read_and_round_trip(tmp_path):
    path = write(tmp_path, "g.txt", b"new york 1 2\n1 a 3 4\nb 5 6\n")
    assert load(path).words.tolist() == ["new york", "1 a", "b"]
    with pytest.raises(EmbdebiasError, match="followed by a number"):
        save(Embedding(["a 1 b", "c"], np.ones((2, 2), np.float32)), tmp_path / "x.glove")


def test_glove_words_that_are_numbers_still_read(tmp_path):
    two = load(write(tmp_path, "n.txt", b"40 8 3\n50 1 2\n"))
    assert two.words.tolist() == ["40", "50"]
    np.testing.assert_array_equal(two.vectors, [[8, 3], [1, 2]])
    assert load(write(tmp_path, "one.txt", b"40 8 3\n")).words.tolist() == ["40"]


@pytest.mark.parametrize("value", [b"1_0", b"0x1", b"1e", b"1.5f", b"1\x0b"])
def test_values_are_decimal_numbers_in_both_parsers(tmp_path, value, monkeypatch):
    path = write(tmp_path, "v.txt", b"2 2\na 1 " + value + b"\nb 3 4\n")
    expect_error(path, line=2, match="value 2 of 'a' is not a number", format="word2vec-text")
    monkeypatch.setattr(text, "_parse_block_fast", lambda *a, **k: None)
    expect_error(path, line=2, match="value 2 of 'a' is not a number", format="word2vec-text")


# -- BOM and line ends -----------------------------------------------------------------------------
@pytest.mark.parametrize("data,fmt", [(b"2 3\na 1 2 3\nb 4 5 6\n", "word2vec-text"),
                                      (b"a 1 2 3\nb 4 5 6\n", "glove")])
@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("fast", [True, False])
def test_a_bom_and_crlf_read_the_same_as_plain_lf(tmp_path, data, fmt, compressed, fast, monkeypatch):
    if not fast:
        monkeypatch.setattr(text, "_parse_block_fast", lambda *a, **k: None)
    variants = {"plain": data, "bom": b"\xef\xbb\xbf" + data, "crlf": data.replace(b"\n", b"\r\n"),
                "bom-crlf": b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"), "cr-at-end": data + b"\r"}
    for name, content in variants.items():
        raw = gzip.compress(content) if compressed else content
        path = write(tmp_path, f"{name}.txt" + (".gz" if compressed else ""), raw)
        assert detect_format(path) == fmt, name
        emb = load(path)
        assert emb.words.tolist() == ["a", "b"], name
        np.testing.assert_array_equal(emb.vectors, [[1, 2, 3], [4, 5, 6]])


def test_error_offsets_count_the_bom(tmp_path):
    err = expect_error(write(tmp_path, "b.txt", b"\xef\xbb\xbf2 2\na 1 2\nb x 4\n"), line=3,
                       match="not a number")
    assert err.offset == 3 + len(b"2 2\na 1 2\n")


@pytest.mark.parametrize("data,fmt,line", [
    (b"2 3\ra 1 2 3\rb 4 5 6\r", "word2vec-text", 1),
    (b"a 1 2 3\rb 4 5 6\r", "glove", 1),
    (b"a 1 2 3\rb 4 5 6\rc 1 2 3\r", "glove", 1),
    (b"2 3\na 1 2 3\nb 4\r5 6\n", "word2vec-text", 3),
    (b"2 3\r\na 1 2 3\r\r\nb 4 5 6\r\n", "word2vec-text", 2),
])
@pytest.mark.parametrize("given", [False, True])
def test_cr_only_line_ends_are_refused_not_read_as_one_word(tmp_path, data, fmt, line, given):
    path = write(tmp_path, "cr.txt", data)
    if not given:
        assert detect_format(path) == fmt
    expect_error(path, line=line, match="CR-only (classic Mac OS) line ends", format=fmt if given else "auto")


def test_a_stray_cr_in_a_late_block_names_its_line(tmp_path):
    lines = [b"3000 2"] + [b"w%d 1 2" % i for i in range(3000)]
    lines[2500] = b"w2499 1\r2"
    path = write(tmp_path, "late.txt", b"\n".join(lines) + b"\n")
    with pytest.raises(VectorFileError) as info:
        read_text(path, header=True, block_bytes=1000)
    check_error(info.value, path, line=2501, match="carriage return")


# -- special files ---------------------------------------------------------------------------------
def _special_files(tmp_path):
    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    files = {"a FIFO": fifo, "a character device": "/dev/zero"}
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock.txt"))
    files["a socket"] = tmp_path / "sock.txt"
    return files, sock


@pytest.mark.parametrize("fmt", ["auto", "word2vec-text", "glove", "word2vec-bin", "gensim-kv", "fasttext-bin",
                                 "native"])
def test_special_files_are_refused_before_any_read(tmp_path, fmt):
    files, sock = _special_files(tmp_path)
    try:
        for kind, path in files.items():
            with pytest.raises(VectorFileError) as info:
                load(path, format=fmt)
            check_error(info.value, path, match=f"is {kind}")
            assert "not a regular file" in str(info.value)
    finally:
        sock.close()
        try:  # had the FIFO been opened, a writer unblocks it (and the test fails instead of hanging)
            os.close(os.open(files["a FIFO"], os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass


def test_special_files_refused_by_detection_describe_and_the_readers(tmp_path):
    files, sock = _special_files(tmp_path)
    try:
        for path in files.values():
            for call in (detect_format, describe, lambda p: read_text(p, header=True)):
                with pytest.raises(VectorFileError, match="not a regular file"):
                    call(path)
    finally:
        sock.close()


# -- huge lines ------------------------------------------------------------------------------------
@pytest.mark.parametrize("data,fmt,line,match", [
    (b"2 3\n" + b"a" * 20_000_000 + b" 1 2 3\nb 1 2 3\n", "word2vec-text", 2, "a line longer than"),
    (b"a 1 2 3\n" + b"b" * 20_000_000 + b" 1 2 3\n", "glove", 2, "a line longer than"),
    (b"a" * 20_000_000 + b" 1 2 3\nb 1 2 3\n", "glove", 1, "no line end in the first"),
    (b"2 3\na 1 2 3\nb 1 " + b"7" * 20_000_000 + b"x 3\n", "word2vec-text", 3, "a line longer than"),
    (b"a" * 20_000_000, "word2vec-text", 1, "expected a header line"),
])
def test_a_huge_line_is_neither_read_whole_nor_echoed(tmp_path, data, fmt, line, match):
    path = write(tmp_path, "huge.txt", data)
    tracemalloc.start()
    try:
        err = expect_error(path, line=line, match=match, format=fmt)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(str(err)) < len(str(path)) + REASON_LIMIT
    assert peak < 80 << 20  # the 16 MiB first-line cap of GloVe, a block and copies: not the 20 MB line twice+


def test_a_long_bad_value_is_quoted_short(tmp_path):
    path = write(tmp_path, "v.txt", b"1 3\na 1 " + b"9" * 100_000 + b"x 3\n")
    err = expect_error(path, line=2, match="value 2 of 'a' is not a number: '9999", format="word2vec-text")
    assert "..." in str(err) and len(err.reason) < 150


def test_a_long_undecodable_word_is_quoted_short(tmp_path):
    path = write(tmp_path, "v.txt", b"1 2\n" + b"\xff" * 5000 + b" 1 2\n")
    err = expect_error(path, line=2, match="undecodable UTF-8")
    assert len(err.reason) < 250


# -- writers ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["x.txt", "x.vec", "x.glove", "x.txt.gz"])
def test_writers_refuse_dimension_0(tmp_path, name):
    with pytest.raises(EmbdebiasError, match="dimension 0") as info:
        save(Embedding(["a", "b"], np.zeros((2, 0), np.float32)), tmp_path / name)
    assert str(tmp_path / name) in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_glove_writer_refuses_a_first_word_read_as_a_bom(tmp_path):
    emb = Embedding(["\ufeffa", "b"], np.ones((2, 2), np.float32))
    with pytest.raises(EmbdebiasError, match="U\\+FEFF"):
        save(emb, tmp_path / "x.glove")
    save(emb, tmp_path / "x.txt")  # after a header the word is not at the start of the file
    assert load(tmp_path / "x.txt").words.tolist() == ["\ufeffa", "b"]
    back = Embedding(["b", "\ufeffa"], np.ones((2, 2), np.float32))
    save(back, tmp_path / "y.glove")  # not first: kept
    assert load(tmp_path / "y.glove").words.tolist() == ["b", "\ufeffa"]


def test_writers_refuse_words_longer_than_the_readers_line_cap(tmp_path):
    emb = Embedding(["a", "b" * (MAX_WORD_BYTES + 1)], np.ones((2, 2), np.float32))
    for name in ("x.txt", "x.glove"):
        with pytest.raises(EmbdebiasError, match="longer than") as info:
            save(emb, tmp_path / name)
        assert len(str(info.value)) < 400  # the word is quoted short
    assert list(tmp_path.iterdir()) == []


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_TEXT_FORMATS = {"word2vec-text": "e.txt", "fasttext-vec": "e.vec", "glove": "e.glove", "glove-gz": "e.glove.gz"}
#: Words near the edges of the text formats: numbers, BOMs, CRs, separators, number-like pieces.
_EDGY = st.sampled_from(["40", "-1", "3.0", "1e5", "nan", "inf", "1_0", "\ufeff", "\ufeffa", "a\r", "\r", "a b",
                         "a 1", "1 a", "a 1 b", " a", "a ", "\t", "a\tb", "\x0b", "\x85", "\u2028", "x" * 300, "é"])
_WORDS = st.lists(st.one_of(_EDGY, st.text(min_size=1, max_size=6)), min_size=1, max_size=5, unique=True)


@pytest.mark.parametrize("fmt", list(_TEXT_FORMATS))
@SETTINGS
@given(words=_WORDS, d=st.integers(0, 4), data=st.data())
@example(words=["40", "50"], d=2, data=None)
@example(words=["5"], d=1, data=None)
@example(words=["\ufeffa"], d=2, data=None)
@example(words=["a"], d=0, data=None)
def test_text_writers_round_trip_exactly_or_refuse(tmp_path_factory, fmt, words, d, data):
    values = (data.draw(arrays(np.float32, (len(words), d),
                               elements=st.floats(width=32, allow_nan=False, allow_infinity=False)))
              if data is not None else np.arange(len(words) * d, dtype=np.float32).reshape(len(words), d) + 3)
    path = tmp_path_factory.mktemp("rt") / _TEXT_FORMATS[fmt]
    emb = Embedding(words, values)
    try:
        save(emb, path, format=fmt.removesuffix("-gz"))
    except EmbdebiasError as exc:
        assert not path.exists()
        assert any(why in str(exc) for why in ("cannot", "header", "U+FEFF")), str(exc)
        return
    back = load(path)
    assert back.words.tolist() == words
    np.testing.assert_array_equal(back.vectors, values)
