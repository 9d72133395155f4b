"""Issue 20, sections 2 and 3: silent misreads, crashes and memory in the readers.

Every case is built from a model of its format, with the expected outcome computed
independently of the reader (``struct``, ``decimal``, ``fractions``).
"""

from __future__ import annotations

import gzip
import pickle

import numpy as np
import pytest

from embdebias.errors import VectorFileError
from embdebias.io import _pickle
from embdebias.io.gensim_kv import read_gensim_kv


# -- pickles: tuple nesting --------------------------------------------------------------------
def _deep_key_pickle(depth: int) -> bytes:
    """A protocol-2 pickle of ``{((...(),...),): 1}``: a dict whose key nests ``depth`` tuples."""
    return pickle.PROTO + b"\x02" + pickle.EMPTY_DICT + pickle.EMPTY_TUPLE + pickle.TUPLE1 * depth \
        + pickle.BININT1 + b"\x01" + pickle.SETITEM + pickle.STOP


@pytest.mark.parametrize("safe_depth", [None, 0])  # None: the C unpickler on a large stack; 0: the Python one
def test_deeply_nested_tuple_in_a_small_kv_gz_is_a_clean_error(tmp_path, monkeypatch, safe_depth):
    path = tmp_path / "deep.kv.gz"
    path.write_bytes(gzip.compress(_deep_key_pickle(1_000_000)))
    assert path.stat().st_size < 2048  # a 1 KB file that used to crash the process (SIGSEGV)
    if safe_depth is not None:
        monkeypatch.setattr(_pickle, "_SAFE_DEPTH", safe_depth)
    with pytest.raises(VectorFileError, match="deep.kv.gz.*(nested deeper than 1000|holds a dict)"):
        read_gensim_kv(path)


def test_depth_checked_unpickler_counts_levels_exactly(tmp_path):
    import io
    ok = _pickle._DepthCheckedUnpickler(io.BytesIO(_deep_key_pickle(_pickle.MAX_TUPLE_DEPTH - 1)),
                                        encoding="latin1").load()
    assert list(ok.values()) == [1]
    with pytest.raises(_pickle.PickleTooDeep):
        _pickle._DepthCheckedUnpickler(io.BytesIO(_deep_key_pickle(_pickle.MAX_TUPLE_DEPTH)),
                                       encoding="latin1").load()


def test_tuple_depth_bound_is_an_upper_bound():
    import io
    data = _deep_key_pickle(500)
    assert _pickle.tuple_depth_bound(io.BytesIO(data), chunk=7) >= 500


# -- word lists: the byte-order mark, nesting, long integers --------------------------------------
BOM = "\ufeff"


@pytest.mark.parametrize("suffix, body", [
    (".txt", "he\nshe\nking\n"),
    (".json", '["he", "she", "king"]'),
])
def test_word_list_with_a_bom_reads_like_one_without(tmp_path, suffix, body):
    from embdebias import wordlists
    plain, marked = tmp_path / f"plain{suffix}", tmp_path / f"marked{suffix}"
    plain.write_text(body, encoding="utf-8")
    marked.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    assert wordlists.load_words(marked) == wordlists.load_words(plain) == ["he", "she", "king"]


def test_pair_list_with_a_bom_reads_like_one_without(tmp_path):
    from embdebias import wordlists
    marked = tmp_path / "pairs.txt"
    marked.write_bytes(b"\xef\xbb\xbfshe he\nwoman man\n")
    assert wordlists.load_pairs(marked) == [("she", "he"), ("woman", "man")]


def test_specific_list_with_a_bom_gives_the_same_vectors(tmp_path):
    from embdebias.debias.api import make_debiaser
    from tests.synthetic import synthetic_embedding
    emb = synthetic_embedding(n_filler=200)
    words = ["he", "she", "man", "woman", "king", "queen"]  # the BOM used to stick to "he", unexempting it
    plain, marked = tmp_path / "plain.txt", tmp_path / "marked.txt"
    plain.write_text("\n".join(words) + "\n", encoding="utf-8")
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    a = make_debiaser("hard", gender_specific=plain).fit(emb).transform(emb)
    b = make_debiaser("hard", gender_specific=marked).fit(emb).transform(emb)
    np.testing.assert_array_equal(a.vectors, b.vectors)


@pytest.mark.parametrize("body, message", [
    ("[" * 100_000 + "]" * 100_000, "nested more than 8 deep"),
    ('["he", ' + "9" * 5000 + "]", "5000 digits"),
])
def test_json_word_list_bombs_are_clean_errors(tmp_path, body, message):
    from embdebias import wordlists
    from embdebias.errors import WordListError
    path = tmp_path / "bomb.json"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(WordListError, match=f"bomb.json.*{message}"):
        wordlists.load_words(path)


# -- fairness scores: what float() takes but a decimal number is not ---------------------------
@pytest.mark.parametrize("score", ["0_5", "1_000.0", "\u0663", "0x10", "1e_5"])
def test_fairness_score_that_only_float_accepts_is_refused(tmp_path, score):
    from embdebias.errors import FairnessInputError
    from embdebias.fairness.scores_file import read_scores_csv
    path = tmp_path / "scores.csv"
    path.write_text(f"id,group,score\n1,a,0.25\n2,b,{score}\n", encoding="utf-8")
    with pytest.raises(FairnessInputError, match=r"scores.csv \(line 3, column 'score'\).*not a number"):
        read_scores_csv(path)


@pytest.mark.parametrize("score, value", [("0.5", 0.5), ("-.5e1", -5.0), ("+7.", 7.0), (" 1E-2 ", 0.01)])
def test_fairness_score_decimal_forms_are_read(tmp_path, score, value):
    from embdebias.fairness.scores_file import read_scores_csv
    path = tmp_path / "scores.csv"
    path.write_text(f"id,group,score\n1,a,0.25\n2,b,{score}\n", encoding="utf-8")
    assert list(read_scores_csv(path).scores) == [0.25, value]


# -- gensim .kv: float64, longdouble and big-endian vectors beyond the float32 range -------------
FLT_MAX = __import__("struct").unpack("<f", b"\xff\xff\x7f\x7f")[0]  # the largest float32, from its bytes


def _save_kv(path, words, vectors, separately=False):
    from gensim.models import KeyedVectors
    kv = KeyedVectors(vector_size=vectors.shape[1], dtype=vectors.dtype)
    kv.add_vectors(words, vectors)
    kv.vectors = vectors  # the exact array (add_vectors may cast)
    kv.save(str(path), sep_limit=0 if separately else 10 * 1024 ** 2)  # gensim stores large arrays apart


@pytest.mark.parametrize("dtype", ["<f8", ">f8", "longdouble", ">f4"])
@pytest.mark.parametrize("mmap", [True, False])
def test_kv_values_beyond_float32_are_an_error_naming_the_row(tmp_path, dtype, mmap):
    path = tmp_path / "big.kv"
    vectors = np.array([[1.0, 2.0], [0.5, -1.0], [1.0, 2.0]], dtype=dtype)
    if np.dtype(dtype).itemsize > 4:
        vectors[1, 1] = -float(FLT_MAX) * 2  # finite in the file, infinite as float32
    else:
        vectors[1, 1] = np.inf
    _save_kv(path, ["a", "b", "c"], vectors)
    expected = "beyond the float32 range" if np.dtype(dtype).itemsize > 4 else "NaN or infinite"
    with pytest.raises(VectorFileError, match=f"big.kv.*'b' \\(row 1\\).*{expected}"):
        read_gensim_kv(path, mmap=mmap)


def test_kv_float64_at_the_float32_maximum_is_read(tmp_path):
    path = tmp_path / "max.kv"
    _save_kv(path, ["a", "b"], np.array([[FLT_MAX, -FLT_MAX], [1.0, 0.1]], dtype="<f8"))
    emb = read_gensim_kv(path)
    assert emb.vectors.dtype == np.float32
    assert emb.vectors[0].tolist() == [FLT_MAX, -FLT_MAX]
    assert emb.vectors[1, 1] == np.float32(0.1)


# -- text: one decimal -> float32 rounding on both paths -----------------------------------------
def nearest_float32(text: str) -> float:
    """The float32 nearest to the decimal ``text`` (ties to even), computed exactly with fractions."""
    from decimal import Decimal
    from fractions import Fraction
    q = Fraction(Decimal(text))
    sign, q = (-1 if q < 0 else 1), abs(q)
    if q == 0:
        return sign * 0.0
    e = q.numerator.bit_length() - q.denominator.bit_length()  # 2**e <= q < 2**(e + 2)
    if Fraction(2) ** e > q:
        e -= 1
    e = max(e - 23, -149)  # the value is m * 2**e with a 24-bit m (fewer in the subnormal range)
    m = round(q / Fraction(2) ** e)  # Fraction rounds half to even
    if m * Fraction(2) ** e >= Fraction(2) ** 128:
        return sign * float("inf")
    return sign * float(m * Fraction(2) ** e)


def tricky_decimals(count: int, seed: int = 0) -> list[str]:
    """Decimals at and around float32 midpoints, where rounding through float64 goes wrong."""
    from decimal import Decimal, getcontext
    from fractions import Fraction
    getcontext().prec = 60
    rng = np.random.default_rng(seed)
    out = ["1.0000000596046448", "3.4028235677973366e38", "3.4028235677973362e38", "7.006492321624086e-46",
           "3.4028234663852886e38", "1.401298464324817e-45", "7.006492321624085e-46"]
    bits = rng.integers(1, 0x7F7FFFFF, size=count, dtype=np.uint32)
    for low in bits.view(np.float32):
        a, b = Fraction(float(low)), Fraction(float(np.nextafter(low, np.float32(np.inf))))
        mid = (a + b) / 2
        exact = Decimal(mid.numerator) / Decimal(mid.denominator)
        for decimal in (exact, exact.next_plus(), exact.next_minus()):
            out.append(f"{decimal:.17g}")  # 17 digits: a float64 that may sit on the midpoint
        out.append(f"{exact:.40g}")
    return out


@pytest.mark.parametrize("slow", [False, True])
def test_text_values_are_correctly_rounded_to_float32_on_both_paths(tmp_path, slow):
    from embdebias.io.text import read_text
    values = tricky_decimals(300)
    d = 4
    rows = [values[i:i + d] for i in range(0, len(values) - d + 1, d)]
    lines = [f"w{k} " + " ".join(r) for k, r in enumerate(rows)]
    if slow:  # a word with a space in the block: the block is parsed line by line
        lines.insert(1, "two words " + " ".join(["0.5"] * d))
    path = tmp_path / "tricky.txt"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    expected = np.array([[nearest_float32(v) for v in r] for r in rows], dtype=np.float32)
    emb = read_text(path, header=False, words_with_spaces=True)
    got = np.array([emb.vectors[emb.get(f"w{k}")] for k in range(len(rows))])
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


def test_nearest_float32_oracle_on_known_values():
    assert nearest_float32("1.0000000596046448") == float(np.nextafter(np.float32(1), np.float32(2)))
    assert nearest_float32("1.000000059604644775390625") == 1.0  # the exact midpoint: to even
    assert nearest_float32("3.40282356779733661637539395458142568448e38") == float("inf")
    assert nearest_float32("-3.4028235677973366e38") == -float(np.finfo(np.float32).max)


@pytest.mark.parametrize("slow", [False, True])
def test_float32_maximum_is_read_the_same_on_both_paths(tmp_path, slow):
    from embdebias.io.text import read_text
    lines = ["big 3.4028235677973366e38 -3.4028235e38", "small 1 2"]
    if slow:
        lines.append("two words 0 0")
    path = tmp_path / "max.txt"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    emb = read_text(path, header=False, words_with_spaces=True)
    assert emb.vectors[0].tolist() == [FLT_MAX, -FLT_MAX]


@pytest.mark.parametrize("lead", [" ", "\t", "  "])
@pytest.mark.parametrize("fmt", ["glove", "word2vec-text"])
def test_text_row_starting_with_a_separator_is_an_error_not_a_word(tmp_path, lead, fmt):
    from embdebias.io import load
    body = "he 1 2\n" + lead + "she 3 4\nit 5 6\n"
    path = tmp_path / "lead.txt"
    path.write_text(("3 2\n" if fmt == "word2vec-text" else "") + body, encoding="ascii")
    where = "line 3" if fmt == "word2vec-text" else "line 2.*empty word"
    with pytest.raises(VectorFileError, match=f"lead.txt.*{where}"):
        load(path, format=fmt)


# -- word2vec binary: the record boundary in both layouts ---------------------------------------
def w2v_bytes(words: list[bytes], vectors: np.ndarray, newline: bool, after: bytes = b"") -> bytes:
    """A word2vec binary file built with ``struct``: header, then word, space, d little-endian float32
    and (``newline``) a newline per record, and ``after`` after every record."""
    import struct
    n, d = vectors.shape
    out = [f"{n} {d}\n".encode("ascii")]
    for word, vector in zip(words, vectors):
        out.append(word + b" " + struct.pack(f"<{d}f", *vector.tolist()) + (b"\n" if newline else b"") + after)
    return b"".join(out)


def realistic_vectors(n: int, d: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).normal(size=(n, d)) * 0.3).astype(np.float32)


@pytest.mark.parametrize("newline", [True, False])
@pytest.mark.parametrize("d", [8, 50, 300])
def test_word2vec_bin_word_with_a_space_is_an_error_at_its_record(tmp_path, newline, d):
    from embdebias.io.word2vec_bin import read_word2vec_bin
    rng = np.random.default_rng(d)
    for trial in range(20):
        n = 30
        words = [f"w{k}".encode() for k in range(n)]
        spaced = int(rng.integers(0, n - 1))
        words[spaced] = b"new " + bytes(rng.choice(list(b"abcdefghij"), size=int(rng.integers(1, 6))).tolist())
        path = tmp_path / f"s{trial}.bin"
        path.write_bytes(w2v_bytes(words, realistic_vectors(n, d, trial), newline))
        # At the record (its vector read a few bytes off: a value over 2**64 or under 2**-60, NaN or infinity), or, when
        # all its shifted values look plausible (a chance of about 0.5**d), at the next one (its stray first bytes).
        with pytest.raises(VectorFileError, match=f"(record ({spaced + 1}|{spaced + 2})\\b|vector of 'new')"):
            read_word2vec_bin(path)


@pytest.mark.parametrize("newline", [True, False])
@pytest.mark.parametrize("after", [b"\t", b"\r", b" ", b"\n\t"])
def test_word2vec_bin_records_followed_by_white_space_are_an_error(tmp_path, newline, after):
    from embdebias.io.word2vec_bin import read_word2vec_bin
    path = tmp_path / "t.bin"
    path.write_bytes(w2v_bytes([b"he", b"she", b"it"], realistic_vectors(3, 4, 0), newline, after))
    with pytest.raises(VectorFileError, match="record 2"):
        read_word2vec_bin(path)


@pytest.mark.parametrize("newline", [True, False])
def test_word2vec_bin_valid_files_with_spaces_inside_vectors_read_exactly(tmp_path, newline):
    """Vectors whose first bytes are 0x20 (the alternative reading a word with a space would give) still read."""
    from embdebias.io.word2vec_bin import read_word2vec_bin
    n, d = 400, 6
    vectors = realistic_vectors(n, d, 5)
    raw = vectors.view(np.uint8).reshape(n, 4 * d)
    raw[::3, 0] = 0x20  # a space as the first (lowest mantissa) byte of every third vector
    raw[1::3, 1] = 0x20
    words = [f"word{k}".encode() for k in range(n)]
    path = tmp_path / "v.bin"
    path.write_bytes(w2v_bytes(words, vectors, newline))
    emb = read_word2vec_bin(path, window_bytes=4096)
    assert emb.words.tolist() == [w.decode() for w in words]
    np.testing.assert_array_equal(emb.vectors.view(np.uint32), vectors.view(np.uint32))


# -- reads that never SIGBUS: files cut while they are read ---------------------------------------
def test_word2vec_bin_cut_while_read_is_an_error_not_sigbus(tmp_path, monkeypatch):
    from embdebias.io import word2vec_bin
    n, d = 2000, 16
    words = [f"w{k}".encode() for k in range(n)]
    path = tmp_path / "cut.bin"
    path.write_bytes(w2v_bytes(words, realistic_vectors(n, d, 1), newline=False))
    first = word2vec_bin._FileWindows.window
    calls = []

    def cut_after_first(self, pos, size):
        calls.append(pos)
        if len(calls) == 2:  # another program truncates the file between two windows
            os.truncate(path, path.stat().st_size // 2)
        return first(self, pos, size)

    import os
    monkeypatch.setattr(word2vec_bin._FileWindows, "window", cut_after_first)
    with pytest.raises(VectorFileError, match="cut.bin.*(truncated record|ends after)"):
        word2vec_bin.read_word2vec_bin(path, window_bytes=4096)
    assert len(calls) > 2


def test_kv_companion_cut_while_read_is_an_error_not_sigbus(tmp_path, monkeypatch):
    import os

    from embdebias.io import gensim_kv
    path = tmp_path / "cut.kv"
    _save_kv(path, [f"w{k}" for k in range(50)], realistic_vectors(50, 8, 2), separately=True)
    load = gensim_kv._load_companion

    def cut_after_mapping(companion, *args):
        vectors = load(companion, *args)
        os.truncate(companion, companion.stat().st_size - 100)  # the map is made: now the file shrinks
        return vectors

    monkeypatch.setattr(gensim_kv, "_load_companion", cut_after_mapping)
    with pytest.raises(VectorFileError, match="cut.kv.vectors.npy.*shrank"):
        read_gensim_kv(path, mmap=True)


def test_npz_companion_larger_than_the_words_need_is_refused_before_inflating(tmp_path):
    import io
    import zipfile
    path = tmp_path / "bomb.kv.gz"
    _save_kv(path, ["a", "b", "c"], realistic_vectors(3, 4, 3), separately=True)
    companion = tmp_path / "bomb.kv.gz.vectors.npz"
    assert companion.exists()
    member = io.BytesIO()
    np.save(member, np.zeros((3_000_000, 4), np.float32))  # 48 MB of zeros: a few KB of deflate
    with zipfile.ZipFile(companion, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("val.npy", member.getvalue())
    assert companion.stat().st_size < 200_000
    with pytest.raises(VectorFileError, match="holds 3000000 rows for the pickle's 3 words"):
        read_gensim_kv(path)


# -- cda: a line longer than a block, in bounded memory ---------------------------------------------
def _long_line(words: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    vocab = ["he", "she", "her", "him", "his", "John", "Mary", "the", "king", "said", "to", "Smith", "of",
             "queen", "boy", "girl", "It", ".", ",", "her.", "Her", "HE", "mother-in-law", "actor", "actress"]
    return " ".join(rng.choice(vocab, size=words).tolist())


@pytest.mark.parametrize("mode", ["two-sided", "replace"])
@pytest.mark.parametrize("newline_at_end", [True, False])
@pytest.mark.parametrize("block_size", [1000, 9])
def test_cda_long_line_in_parts_gives_what_the_whole_line_gives(tmp_path, mode, newline_at_end, block_size):
    from embdebias.cda import CounterfactualAugmenter
    words = 20_000 if block_size > 100 else 1500  # (parts of 9 bytes: one engine call per word or two)
    text = "short first line he said\n" + _long_line(words, 1) + "\nhe and her\n" + _long_line(words // 7, 2)
    text += "\n" if newline_at_end else ""
    src = tmp_path / "corpus.txt"
    src.write_text(text, encoding="utf-8")
    whole = CounterfactualAugmenter(mode=mode, block_size=1 << 22)  # every line within one block
    parts = CounterfactualAugmenter(mode=mode, block_size=block_size)  # the long lines in many parts
    whole.augment_file(src, tmp_path / "whole.txt")
    parts.augment_file(src, tmp_path / "parts.txt")
    assert (tmp_path / "parts.txt").read_bytes() == (tmp_path / "whole.txt").read_bytes()
    assert parts.stats_.to_dict() | {"seconds": 0} == whole.stats_.to_dict() | {"seconds": 0}
    assert list(parts.iter_file(src)) == (tmp_path / "whole.txt").read_text(encoding="utf-8").splitlines()


def test_cda_memory_stays_bounded_on_one_long_line(tmp_path):
    import tracemalloc

    from embdebias.cda import CounterfactualAugmenter
    src = tmp_path / "one_line.txt.gz"
    line = _long_line(400_000, 3).encode("utf-8")  # about 1.8 MB
    src.write_bytes(gzip.compress(line * 4))  # one line of about 7 MB
    augmenter = CounterfactualAugmenter(block_size=1 << 16).fit()  # (the lexicon's tables are not the line's)
    tracemalloc.start()
    try:
        augmenter.augment_file(src, tmp_path / "out.txt")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert augmenter.stats_.lines_read == 1 and augmenter.stats_.lines_augmented == 1
    assert peak < 6 << 20, f"peak {peak / 2**20:.1f} MiB for a {len(line) * 4 / 2**20:.1f} MiB line"


# -- words are the bytes the file holds: never normalized, never merged -----------------------------
DISTINCT = ["he", "ｈｅ", "h\ufeffe", "he\ufeff", "Å", "A\u030a", "ﬁle", "file", "ＫＩＮＧ", "KING"]


@pytest.mark.parametrize("fmt, name", [("word2vec-text", "w.txt"), ("glove", "w.glove.txt"), ("word2vec-bin", "w.bin"),
                                       ("native", "w.embd"), ("gensim-kv", "w.kv"), ("fasttext-vec", "w.vec")])
def test_words_differing_only_by_compatibility_form_or_a_bom_stay_distinct(tmp_path, fmt, name):
    import warnings

    from embdebias.embedding import Embedding
    from embdebias.io import load, save
    vectors = realistic_vectors(len(DISTINCT), 3, 9)
    save(Embedding(DISTINCT, vectors), tmp_path / name, format=fmt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a "duplicate word dropped" warning fails the test
        emb = load(tmp_path / name, format=fmt)
    assert emb.words.tolist() == DISTINCT
    np.testing.assert_array_equal(emb.vectors, vectors)
    assert [emb.get(w) for w in DISTINCT] == list(range(len(DISTINCT)))


@pytest.mark.parametrize("newline", [True, False])
def test_word2vec_bin_words_differing_by_compatibility_form_stay_distinct(tmp_path, newline):
    from embdebias.io.word2vec_bin import read_word2vec_bin
    path = tmp_path / "d.bin"
    vectors = realistic_vectors(len(DISTINCT), 5, 4)
    path.write_bytes(w2v_bytes([w.encode("utf-8") for w in DISTINCT], vectors, newline))
    emb = read_word2vec_bin(path)
    assert emb.words.tolist() == DISTINCT
    np.testing.assert_array_equal(emb.vectors, vectors)
