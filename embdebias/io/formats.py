"""The table of vector formats: one record per format, the one place a format is described.

Everything else about formats is derived from :data:`TABLE`: the names
(:data:`embdebias.io.FORMATS`, the command line's format list), the output endings
(:data:`embdebias.io.EXTENSIONS`) and the format a name asks for
(:func:`embdebias.io.guess_format_from_path`), which formats may be gzip-compressed, the
files a writer puts beside its output, the signatures :mod:`embdebias.io.detect` looks
for, which reader and writer :func:`embdebias.io.load` and :func:`embdebias.io.save`
call, and the README's format table (``tests/test_io_formats.py`` checks it against
:func:`markdown_table`).

A new format is one more :class:`Format` here, with its reader and writer in a module of
its own (``io/<format>.py``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from .native import read_native, write_native

#: The magic number a fastText model file starts with (int32, little-endian).
FASTTEXT_MAGIC = struct.pack("<i", 793712314)


def looks_like_pickle(head: bytes) -> bool:
    """gensim's ``save`` writes a pickle: protocol 2 to 5 starts with 0x80 and the protocol number."""
    return len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def looks_like_old_fasttext(head: bytes) -> bool:
    """fastText models from before the magic number start with 12 int32 settings."""
    if len(head) < 48:
        return False
    dim, ws, epoch, min_count, neg, word_ngrams, loss, model, bucket, minn, maxn, lr_update = \
        struct.unpack("<12i", head[:48])
    return (0 < dim <= 100_000 and 0 < ws < 1000 and 0 < epoch < 100_000 and min_count >= 0
            and neg >= 0 and 0 < word_ngrams < 100 and 1 <= loss <= 4 and 1 <= model <= 3
            and bucket >= 0 and 0 <= minn <= maxn < 100 and lr_update > 0)


def looks_like_fasttext(head: bytes) -> bool:
    return head[:4] == FASTTEXT_MAGIC or looks_like_old_fasttext(head)


# -- readers and writers, with one signature each: the modules are imported when used ---------------
def _read_native(path, *, limit, mmap, name, unicode_errors, trust_pickle):
    return read_native(path, limit=limit, mmap=mmap, name=name)


def _write_native(emb, path, *, inputs):
    write_native(emb, path, inputs=(*inputs, emb.path) if emb.path else inputs)


def _read_word2vec_bin(path, *, limit, mmap, name, unicode_errors, trust_pickle):
    from .word2vec_bin import read_word2vec_bin

    return read_word2vec_bin(path, limit=limit, name=name, unicode_errors=unicode_errors)


def _write_word2vec_bin(emb, path, *, inputs):
    from .word2vec_bin import write_word2vec_bin

    write_word2vec_bin(emb, path, inputs=inputs)


def _text_reader(glove: bool):
    def read(path, *, limit, mmap, name, unicode_errors, trust_pickle):
        from .text import read_text

        return read_text(path, header=not glove, words_with_spaces=glove, limit=limit, name=name,
                         unicode_errors=unicode_errors)
    return read


def _text_writer(format_name: str):
    def write(emb, path, *, inputs):
        from .text import write_text

        write_text(emb, path, header=format_name != "glove", format_name=format_name, inputs=inputs)
    return write


def _read_fasttext_bin(path, *, limit, mmap, name, unicode_errors, trust_pickle):
    from .gensim_formats import read_fasttext_bin

    return read_fasttext_bin(path, limit=limit, name=name, unicode_errors=unicode_errors)


def _write_fasttext_bin(emb, path, *, inputs):
    from .gensim_formats import write_fasttext_bin

    write_fasttext_bin(emb, path, inputs=inputs)


def _read_gensim_kv(path, *, limit, mmap, name, unicode_errors, trust_pickle):
    from .gensim_kv import read_gensim_kv

    return read_gensim_kv(path, limit=limit, mmap=mmap, name=name, trust_pickle=trust_pickle)


def _write_gensim_kv(emb, path, *, inputs):
    from .gensim_kv import write_gensim_kv

    write_gensim_kv(emb, path, inputs=inputs)


@dataclass(frozen=True)
class Format:
    """One vector format.

    Attributes
    ----------
    name : str
        What the API's ``format=`` and the command line's ``--format`` take.
    ending : str
        The ending of an output file of this format (``embdebias run`` names its outputs
        with it, and :func:`~embdebias.io.guess_format_from_path` maps it back).
    other_endings : tuple of str
        Further endings that ask for this format (``.txt``: word2vec text).
    detection : str
        How :func:`~embdebias.io.detect_format` recognises the content.
    read : callable
        ``read(path, *, limit, mmap, name, unicode_errors, trust_pickle) -> Embedding``.
    write : callable
        ``write(embedding, path, *, inputs)``, atomic.
    directory : bool
        The format is a directory, not a file.
    gzip : bool
        The writer gzip-compresses a name ending in ``.gz`` (the other writers refuse one).
    validates : bool
        The reader refuses NaN and infinity as it parses (the others are checked lazily,
        chunk by chunk, by the Embedding).
    companions : tuple of str
        What the writer appends to the output's name for the files it writes beside it.
    signature : callable or None
        ``signature(head) -> bool`` on the first bytes of a file, for the formats whose
        content starts with a mark of their own (checked before the text formats are).
    files, reading, writing : str
        The README table's cells (Markdown).
    """

    name: str
    ending: str
    detection: str
    read: Callable
    write: Callable
    files: str
    reading: str
    writing: str = "yes"
    other_endings: tuple[str, ...] = ()
    directory: bool = False
    gzip: bool = False
    validates: bool = False
    companions: tuple[str, ...] = ()
    signature: Callable[[bytes], bool] | None = None


#: Every format, in the order the API lists them (:data:`embdebias.io.FORMATS`).
TABLE: tuple[Format, ...] = (
    Format("native", ".embd", "a directory holding embdebias.json", _read_native, _write_native,
           files="a directory: `vectors.npy` + vocabulary files (`.embd`)", reading="memory-mapped, milliseconds",
           directory=True),
    Format("word2vec-bin", ".bin", "a 'count dim' header line, then binary records", _read_word2vec_bin,
           _write_word2vec_bin, files="word2vec binary (`.bin`, `.bin.gz`)",
           reading="yes, vectorized, in 4 MiB windows (memory: the matrix plus a window)", gzip=True,
           validates=True),
    Format("word2vec-text", ".w2v.txt", "a 'count dim' header line, then 'word v1 ... vd' lines",
           _text_reader(glove=False), _text_writer("word2vec-text"),
           files="text with an `n d` header (`.w2v.txt`, `.txt`)", reading="yes", other_endings=(".txt",),
           gzip=True, validates=True),
    Format("fasttext-vec", ".vec", "as word2vec-text, for a name with '.vec'", _text_reader(glove=False),
           _text_writer("fasttext-vec"), files="fastText `.vec` (text with header)", reading="yes", gzip=True,
           validates=True),
    Format("glove", ".glove.txt", "'word v1 ... vd' lines without a header", _text_reader(glove=True),
           _text_writer("glove"), files="text without header (`.glove.txt`, `.glove`)", reading="yes",
           other_endings=(".glove",), gzip=True, validates=True),
    Format("fasttext-bin", ".ft.bin", "fastText's magic number (or an old model's settings)", _read_fasttext_bin,
           _write_fasttext_bin, files="fastText `.bin` (`.ft.bin`, through gensim)", reading="in-vocabulary words",
           writing="yes, without sub-word n-grams (lookup only); a fastText model trained by `embdebias train` "
                   "keeps them", signature=lambda head: head[:4] == FASTTEXT_MAGIC),
    Format("gensim-kv", ".kv", "a pickle, under a gensim-like name", _read_gensim_kv, _write_gensim_kv,
           files="gensim `KeyedVectors.save` files (`.kv`, `.kv.gz`; a `Word2Vec` model's `.wv`)",
           reading="memory-mapped, no code from the file runs", validates=True, companions=(".vectors.npy",),
           signature=looks_like_pickle),
)

BY_NAME: dict[str, Format] = {f.name: f for f in TABLE}
#: The formats whose files are lines of text (a line-end fix such as ``tr`` is safe on them).
TEXT_FORMATS = ("word2vec-text", "fasttext-vec", "glove")


def same_content(a: str, b: str) -> bool:
    """Whether formats ``a`` and ``b`` hold the same bytes (fastText ``.vec`` is word2vec text)."""
    def text(name):
        return "word2vec-text" if name == "fasttext-vec" else name
    return text(a) == text(b)


def markdown_table() -> str:
    """The README's format table (``| name | files | read | write |``), from :data:`TABLE`."""
    rows = ["| name | files | read | write |", "| --- | --- | --- | --- |"]
    rows += [f"| `{f.name}` | {f.files} | {f.reading} | {f.writing} |" for f in TABLE]
    return "\n".join(rows)


__all__ = ["BY_NAME", "FASTTEXT_MAGIC", "Format", "TABLE", "TEXT_FORMATS", "looks_like_fasttext", "same_content",
           "looks_like_old_fasttext", "looks_like_pickle", "markdown_table"]
