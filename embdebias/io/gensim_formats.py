"""fastText ``.bin``, read and written through gensim (gensim ``.kv`` files: :mod:`embdebias.io.gensim_kv`).

gensim is imported inside the functions so that ``import embdebias.io`` stays light.
"""

from __future__ import annotations

import codecs
import mmap
import os
import re
from pathlib import Path

import numpy as np

from .._atomic import atomic_file
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, owned
from ..errors import EmbdebiasError, VectorFileError, quote
from ._common import UNICODE_ERRORS, check_finite, check_limit, check_unicode_errors, require_file


def _embedding_of_loaded(kv, path, name, n: int) -> Embedding:
    """The first ``n`` rows of a KeyedVectors just loaded from ``path`` (its arrays are ours to keep)."""
    owned(kv.vectors)  # nothing else holds them: shared read-only (a float32 copy if another dtype)
    emb = Embedding.from_gensim(kv, name=name or Path(path).name)
    emb.path = os.fspath(path)
    return emb.head(n)


# -- fastText .bin -------------------------------------------------------------------------
# gensim decodes fastText words with the codec it is given and, when that fails, quietly
# backslash-escapes the bytes.  These codecs apply ``unicode_errors`` instead: "strict"
# raises _UndecodableWord (not a UnicodeDecodeError, so gensim lets it through).
_CODEC_PREFIX = "embdebias_fasttext_utf_8_"
_codec_registered = False


class _UndecodableWord(Exception):
    def __init__(self, raw: bytes, exc: UnicodeDecodeError):
        super().__init__(raw)
        self.raw, self.exc = raw, exc


def _find_codec(name: str):
    errors = name[len(_CODEC_PREFIX):] if name.startswith(_CODEC_PREFIX) else None
    if errors not in UNICODE_ERRORS:
        return None

    def decode(data, _errors="strict"):
        raw = bytes(data)
        try:
            return raw.decode("utf-8"), len(raw)
        except UnicodeDecodeError as exc:
            if errors == "strict":
                raise _UndecodableWord(raw, exc) from None
            return raw.decode("utf-8", errors), len(raw)

    def encode(text, _errors="strict"):
        return text.encode("utf-8", _errors), len(text)

    return codecs.CodecInfo(encode, decode, name=name)


def _word_codec(unicode_errors: str) -> str:
    """The codec name that makes gensim decode fastText words with ``unicode_errors``."""
    global _codec_registered
    if not _codec_registered:
        codecs.register(_find_codec)
        _codec_registered = True
    return _CODEC_PREFIX + unicode_errors


def _offset_of(path, raw: bytes) -> int | None:
    """Byte offset of the first NUL-terminated occurrence of the word ``raw`` in the file."""
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        at = data.find(raw + b"\x00")
    return None if at < 0 else at


def read_fasttext_bin(path, *, limit: int | None = None, name: str | None = None,
                      unicode_errors: str = "strict") -> Embedding:
    """Read the in-vocabulary word vectors of a Facebook fastText ``.bin`` model.

    The vectors are the full word vectors fastText prints (the word's own input
    vector averaged with its character n-gram vectors), as gensim computes them; the
    n-gram buckets (for out-of-vocabulary words) are not kept.  gensim reads the
    whole model, so ``limit`` only trims the result.  ``unicode_errors`` as in
    :func:`embdebias.io.load` (gensim itself always backslash-escapes undecodable
    bytes); the n-grams of a repaired word are those of its decoded text.
    """
    from gensim.models.fasttext import load_facebook_vectors

    from .fasttext_bin import check_fasttext_bin

    path = require_file(path)
    limit = check_limit(limit)
    unicode_errors = check_unicode_errors(unicode_errors)
    check_fasttext_bin(path)  # gensim trusts every size in the file: a damaged one can make it loop forever
    try:
        kv = load_facebook_vectors(os.fspath(path), encoding=_word_codec(unicode_errors))
    except _UndecodableWord as err:
        start = _offset_of(path, err.raw)
        raise VectorFileError(path, f"undecodable UTF-8 in the word {err.raw[:40]!r} (byte {err.exc.start}: "
                                    f"{err.exc.reason}); expected UTF-8 text (unicode_errors='ignore' or "
                                    f"'replace' accept it)",
                              offset=None if start is None else start + err.exc.start) from None
    except Exception as exc:  # gensim raises struct.error, ValueError, AssertionError...
        hint = (f"; with unicode_errors={unicode_errors!r} two words may have become one"
                if unicode_errors != "strict" and "vocab size" in str(exc) else "")
        raise VectorFileError(path, f"not a readable fastText .bin model ({type(exc).__name__}: {exc}){hint}") \
            from None
    n = len(kv.index_to_key) if limit is None else min(limit, len(kv.index_to_key))
    finite = np.isfinite(kv.vectors[:n]).all(axis=1)
    if not finite.all():
        r = int(np.flatnonzero(~finite)[0])
        raise VectorFileError(path, f"the vector of {kv.index_to_key[r]!r} has NaN or infinite values")
    return _embedding_of_loaded(kv, path, name, n)


def write_fasttext_bin(emb: Embedding, path, *, inputs=()) -> None:
    """Write ``emb`` as a Facebook fastText ``.bin`` model holding exactly these word vectors.

    Plain word vectors carry no sub-word information, so the model is written with
    character n-grams switched off (``minn = maxn = 0``, one unused zero bucket): fastText
    and gensim then compute each in-vocabulary word's vector as its input vector alone,
    which is the stored vector, bit for bit.  Out-of-vocabulary words get zero vectors
    (there are no n-grams), and the output layer is zeros (the model is not trained), so
    the file is for word-vector lookup, not for ``fasttext predict`` or further training.
    The word frequencies written are made-up decreasing counts that keep the row order.
    Checked once by hand with the official fastText Python bindings (``load_model`` then
    ``get_word_vector`` returned the stored vectors exactly); the tests check it with
    gensim's reader.
    Memory: gensim's model holds the input matrix and a zero output matrix of the same
    size, so about three times the matrix while writing.
    """
    from gensim.models import FastText
    from gensim.models.fasttext import save_facebook_model

    target = Path(path)
    words = emb.words.tolist()
    _check_fasttext_words(words, target)
    check_finite(emb, target)
    model = FastText(vector_size=emb.dim, min_count=1, min_n=0, max_n=0, bucket=1, workers=1)
    n = len(words)
    model.build_vocab_from_freq(dict(zip(words, range(n + 1, 1, -1), strict=True)))
    if model.wv.index_to_key != words:  # build_vocab_from_freq sorts by count: must keep our order
        raise EmbdebiasError(f"{target}: gensim reordered the vocabulary; cannot write fastText .bin")
    model.wv.vectors_vocab[:] = emb.vectors
    model.wv.vectors_ngrams[:] = 0.0
    model.wv.adjust_vectors()
    inputs = (*inputs, emb.path) if emb.path else inputs
    with atomic_file(target, inputs=inputs) as tmp:
        save_facebook_model(model, os.fspath(tmp))


_FASTTEXT_SEPARATORS = re.compile("[\x00 \t\x0b\x0c\r]")


def _check_fasttext_words(words: list[str], target: Path) -> None:
    """Refuse words a fastText ``.bin`` model cannot hold (and an empty vocabulary)."""
    if not words:
        # gensim (and fastText) cannot load a model without words.
        raise EmbdebiasError(f"{target}: cannot write an empty embedding (0 words) as a fastText .bin model; "
                             f"use 'word2vec-bin' or 'native'")
    joined = "\n".join(words)
    if "" in words:
        raise EmbdebiasError(f"{target}: fastText .bin cannot store an empty word (row {words.index('')})")
    # fastText splits tokens at these bytes, and the reader refuses words holding one
    if _FASTTEXT_SEPARATORS.search(joined) or joined.count("\n") != max(len(words) - 1, 0):
        bad = [quote(w, 30) for w in words if _FASTTEXT_SEPARATORS.search(w) or "\n" in w][:5]
        raise EmbdebiasError(f"{target}: fastText .bin cannot store words containing whitespace or NUL: "
                             f"{', '.join(bad)}")
    _check_encodable(words, joined, target)


def _check_encodable(words: list[str], joined: str, target: Path) -> None:
    """Refuse a word UTF-8 cannot encode (a lone surrogate): gensim would fail halfway through the file."""
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError as exc:
        r = joined.count("\n", 0, exc.start)
        raise EmbdebiasError(f"{target}: fastText .bin stores UTF-8 and cannot encode the word {quote(words[r])} "
                             f"(row {r}: {exc.reason}); drop or rename it, or use 'gensim-kv'") from None


def write_fasttext_model(model, path, *, inputs=()) -> None:
    """Write a trained gensim ``FastText`` model as a Facebook fastText ``.bin``, sub-words included.

    Unlike :func:`write_fasttext_bin` (plain word vectors, n-grams off), this keeps the
    model's character n-gram buckets and output layer, so fastText and gensim
    (``load_facebook_model``) give vectors to out-of-vocabulary words and can train
    further. The file holds the whole n-gram table: ``bucket x dim`` float32
    (800 MB for gensim's default 2,000,000 buckets at 100 dimensions). Written through
    gensim's ``save_facebook_model`` to a temporary name, then renamed (atomic).

    Parameters
    ----------
    model : gensim.models.FastText
        A trained model.
    path : path-like
        The output file.
    inputs : sequence of path-like
        Files being read (the corpus): writing over one is refused.
    """
    from gensim.models.fasttext import save_facebook_model

    target = Path(path)
    _check_fasttext_words(list(model.wv.index_to_key), target)
    for name in ("vectors_vocab", "vectors_ngrams"):
        array = getattr(model.wv, name)
        if not all(np.isfinite(array[i:i + DEFAULT_CHUNK_ROWS]).all()
                   for i in range(0, len(array), DEFAULT_CHUNK_ROWS)):
            raise EmbdebiasError(f"{target}: the model's {name} hold NaN or infinite values; refusing to "
                                 f"write an unreadable file")
    with atomic_file(target, inputs=inputs) as tmp:
        save_facebook_model(model, os.fspath(tmp))
