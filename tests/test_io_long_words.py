"""A word longer than MAX_WORD_BYTES is an error in every format, and format detection never
depends on the length of the first word or line."""

import gzip
import tracemalloc

import numpy as np
import pytest

from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, VectorFileError
from embdebias.io import detect_format, load, save
from embdebias.io._common import MAX_WORD_BYTES
from embdebias.io.detect import SNIFF_BYTES

HEADERS = {"e.txt": b"3 2\n", "e.vec": b"3 2\n", "e.glove.txt": b"", "e.txt.gz": b"3 2\n", "e.glove.gz": b""}


def text_file(tmp_path, name, words, row=2):
    """A text file of ``words`` (bytes), the long one at data row ``row``; gzip if the name says so."""
    body = HEADERS[name] + b"".join(w + b" 0.5 0.25\n" for w in words)
    path = tmp_path / name
    path.write_bytes(gzip.compress(body) if name.endswith(".gz") else body)
    return path


@pytest.mark.parametrize("name", list(HEADERS))
@pytest.mark.parametrize("at", [0, 1, 2])
def test_a_word_over_the_limit_is_an_error_naming_its_line(tmp_path, name, at):
    words = [b"a", b"b", b"c"]
    words[at] = b"x" * (MAX_WORD_BYTES + 1)
    path = text_file(tmp_path, name, words)
    with pytest.raises(VectorFileError, match=f"a word of {MAX_WORD_BYTES + 1} bytes .*expected words of at most "
                                              f"{MAX_WORD_BYTES} bytes") as info:
        load(path)
    assert info.value.line == at + (1 if name.startswith("e.glove") else 2)
    words[at] = b"x" * MAX_WORD_BYTES  # at the limit: read
    assert len(load(text_file(tmp_path, name, words)).words[at]) == MAX_WORD_BYTES


@pytest.mark.parametrize("first", [70_000, 600_000])
@pytest.mark.parametrize("name, fmt", [("e.vec", "fasttext-vec"), ("e.txt", "word2vec-text"), ("e.x", "word2vec-text"),
                                       ("e.glove.txt", "glove")])
def test_a_first_word_past_the_sniffed_bytes_is_text_not_binary(tmp_path, first, name, fmt):
    header = b"" if fmt == "glove" else b"2 2\n"
    path = tmp_path / name
    path.write_bytes(header + b"w" * first + b" 0.5 0.25\nb 0.1 0.2\n")
    assert first > SNIFF_BYTES and detect_format(path) == fmt
    with pytest.raises(VectorFileError, match=f"a word of {first} bytes") as info:
        load(path)
    assert info.value.line == (1 if fmt == "glove" else 2)


@pytest.mark.parametrize("fmt, name", [("fasttext-vec", "e.vec"), ("word2vec-text", "e.txt"), ("glove", "e.glove"),
                                       ("fasttext-vec", "e.vec.gz")])
def test_a_file_embdebias_wrote_with_lines_past_the_sniffed_bytes_is_detected(tmp_path, fmt, name):
    """d = 10,000: the first row is about 100 kB, past the 64 KiB first look."""
    emb = Embedding(["a", "b", "c"], np.random.default_rng(0).standard_normal((3, 10_000)).astype(np.float32))
    save(emb, tmp_path / name, format=fmt)
    assert detect_format(tmp_path / name) == fmt
    np.testing.assert_array_equal(load(tmp_path / name).vectors, emb.vectors)


def test_a_binary_file_with_long_records_stays_binary(tmp_path):
    emb = Embedding(["a", "b", "c"], np.random.default_rng(0).standard_normal((3, 20_000)).astype(np.float32))
    for name in ("e.bin", "e.x", "e.bin.gz"):
        save(emb, tmp_path / name, format="word2vec-bin")
        assert detect_format(tmp_path / name) == "word2vec-bin"


def test_a_ten_megabyte_glove_word_is_refused_in_bounded_memory(tmp_path):
    path = tmp_path / "big.glove.txt"
    path.write_bytes(b"w" * (10 << 20) + b" 0.5 0.25\nb 0.1 0.2\n")
    tracemalloc.start()
    with pytest.raises(VectorFileError, match=f"line 1.*a word of {10 << 20} bytes"):
        load(path)
    assert tracemalloc.get_traced_memory()[1] < 80 << 20
    tracemalloc.stop()


def test_a_first_line_past_the_first_line_cap_is_one_error(tmp_path):
    path = tmp_path / "huge.txt"
    path.write_bytes(b"w" * (17 << 20) + b" 0.5\n")
    with pytest.raises(VectorFileError, match="no line end in the first .* bytes of text"):
        detect_format(path)


def test_a_word_over_the_limit_is_refused_in_word2vec_binary(tmp_path):
    body = b"2 2\n" + b"x" * (MAX_WORD_BYTES + 1) + b" " + np.ones(2, np.float32).tobytes() + b"\n"
    path = tmp_path / "e.bin"
    path.write_bytes(body + b"b " + np.ones(2, np.float32).tobytes() + b"\n")
    with pytest.raises(VectorFileError, match=f"{MAX_WORD_BYTES + 1} bytes long, expected at most {MAX_WORD_BYTES}"):
        load(path)


@pytest.mark.parametrize("name", ["x.txt", "x.vec", "x.glove", "x.bin"])
def test_writers_refuse_a_word_over_the_limit(tmp_path, name):
    emb = Embedding(["a", "b" * (MAX_WORD_BYTES + 1)], np.ones((2, 2), np.float32))
    with pytest.raises(EmbdebiasError, match=str(MAX_WORD_BYTES)):
        save(emb, tmp_path / name)
    assert not (tmp_path / name).exists()
