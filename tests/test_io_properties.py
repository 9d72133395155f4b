"""Property tests of the readers and writers: random vocabularies and values through every format.

Every format must give back exactly the words and float32 values it was given, or refuse
to write them with an EmbdebiasError (and leave nothing behind): never write a file its
reader misreads. Kept small (``max_examples=25``, a handful of words) so the suite stays fast.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError
from embdebias.io import FORMATS, detect_format, load, output_name, save

pytest.importorskip("gensim")

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

#: Words without white space: any Unicode letter, mark, number, punctuation, symbol or
#: format character (no surrogates, which UTF-8 cannot encode, and no control characters).
_PLAIN = st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"))
_plain_words = st.text(_PLAIN, min_size=1, max_size=12).filter(lambda w: not any(c.isspace() for c in w))
WORDS = st.one_of(_plain_words, _plain_words.map(lambda w: "#" + w),
                  st.text(_PLAIN, min_size=40, max_size=80).filter(lambda w: not any(c.isspace() for c in w)))
#: Characters that separate fields or end lines in some format, and some that str.split or
#: CSV parsers take for white space or line ends.
_SEPARATORS = st.one_of(st.sampled_from(" \t\n\r\x00"), st.sampled_from("\x0b\x0c\x1c\x85\u2028\ufeff"))
_NUMBERS = st.sampled_from(["0", "5", "12", "-1", "2.5", "1e5", "nan", "inf"])


def _hazard(draw, word: str) -> str:
    """``word`` changed in one way that some format cannot store, or must take care to store."""
    kind = draw(st.sampled_from(["separator", "separator", "separator", "number after a separator", "number",
                                 "empty", "#", "anything"]))
    at = draw(st.integers(0, len(word)))
    if kind == "separator":
        return word[:at] + draw(_SEPARATORS) + word[at:]
    if kind == "number after a separator":
        return word + draw(st.sampled_from(" \t")) + draw(_NUMBERS)
    if kind == "number":
        return draw(_NUMBERS)
    if kind == "empty":
        return ""
    if kind == "#":
        return "#" + word
    return draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=8))


@st.composite
def _any_vocabulary(draw):
    """Plain words, one or two of them changed by a hazard; sometimes no word at all."""
    vocab = draw(st.lists(_plain_words, min_size=0, max_size=4, unique=True))
    for _ in range(draw(st.integers(1, 2)) if vocab else 0):
        i = draw(st.integers(0, len(vocab) - 1))
        vocab[i] = _hazard(draw, vocab[i])
    return list(dict.fromkeys(vocab))


FINITE = st.floats(width=32, allow_nan=False, allow_infinity=False)


@st.composite
def embeddings(draw, vocabulary=st.lists(WORDS, min_size=1, max_size=6, unique=True)):
    vocab = draw(vocabulary)
    d = draw(st.integers(1, 5))
    vectors = draw(arrays(np.float32, (len(vocab), d), elements=FINITE))
    return vocab, vectors


def _first_line_reads_as_a_header(vocab, vectors) -> bool:
    """The one vocabulary GloVe cannot hold: a first line "5 3" is a word2vec header."""
    import pyarrow as pa

    from embdebias.io._common import HEADER_LINE

    if vectors.shape[1] != 1 or not vocab:
        return False
    value = pa.array(vectors[:1, 0]).cast(pa.string())[0].as_py()
    return bool(HEADER_LINE.fullmatch(f"{vocab[0]} {value}".encode()))


def _round_trip(fmt, vocab, vectors):
    """Write then read; returns the embedding read back, or the error that refused the write."""
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("error")  # no duplicate-word warning may hide a misread
        path = Path(tmp) / output_name("e", fmt)
        emb = Embedding(vocab, vectors)
        try:
            save(emb, path, format=fmt)
        except EmbdebiasError as exc:
            assert sorted(p.name for p in Path(tmp).iterdir()) == [], "a refused write left files behind"
            return exc
        assert detect_format(path) == fmt
        back = load(path)
        return back.words.tolist(), np.array(back.vectors)


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(data=embeddings())
def test_plain_words_and_finite_values_round_trip_exactly(fmt, data):
    vocab, vectors = data
    result = _round_trip(fmt, vocab, vectors)
    if fmt == "glove" and _first_line_reads_as_a_header(vocab, vectors):
        assert isinstance(result, EmbdebiasError) and "word2vec header" in str(result)
        return
    assert not isinstance(result, Exception), f"{fmt} refused plain words {vocab!r}: {result}"
    words, back = result
    assert words == vocab
    # exact even for the text formats: they write the shortest decimal that reads back as the same float32
    np.testing.assert_array_equal(back, vectors)
    assert back.dtype == np.float32


def _one_column(*words):
    return list(words), np.arange(len(words), dtype=np.float32)[:, None] + np.float32(3)


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(data=embeddings(_any_vocabulary()))
# Every hazard, every run (on top of what hypothesis draws):
@example(data=_one_column("a b", "c"))
@example(data=_one_column("a\tb", "c"))
@example(data=_one_column("a\nb", "c"))
@example(data=_one_column("a\rb", "c"))
@example(data=_one_column("a\x00b", "c"))
@example(data=_one_column("", "c"))
@example(data=_one_column("5", "c"))  # GloVe: "5 3" would be a header
@example(data=_one_column("c", "x 1"))  # GloVe: one value too many
@example(data=_one_column("#c", "\ufeffd", "e\x85"))
@example(data=([], np.zeros((0, 2), np.float32)))
def test_any_words_round_trip_exactly_or_are_refused(fmt, data):
    vocab, vectors = data
    result = _round_trip(fmt, vocab, vectors)
    if isinstance(result, EmbdebiasError):
        assert "cannot" in str(result) or "header" in str(result), str(result)
        return
    words, back = result
    assert words == vocab
    np.testing.assert_array_equal(back, vectors)
