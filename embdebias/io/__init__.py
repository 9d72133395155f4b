"""Reading and writing word embeddings.

Formats (each readable and writable):

============== ==========================================================================
name           content
============== ==========================================================================
native         embdebias's cache directory (opens memory-mapped in milliseconds)
word2vec-bin   header ``"n d"``, then ``word<space>`` + d little-endian float32 per record
               (``.bin``; gzip ``.bin.gz``/``.gz`` read and written)
word2vec-text  header ``"n d"``, then ``word v1 ... vd`` lines (``.txt``)
fasttext-vec   the same as word2vec-text (``.vec``)
glove          ``word v1 ... vd`` lines without header; words may contain spaces
fasttext-bin   Facebook fastText model (read through gensim; in-vocabulary words only)
gensim-kv      gensim ``KeyedVectors.save`` pickle (``.kv``), memory-mapped when possible; read
               without running code from the file (:mod:`embdebias.io.gensim_kv`)
============== ==========================================================================

:func:`detect_format` looks at the content, not the extension.  Text and binary
readers return in-memory float32 arrays; native and gensim-kv files are memory-mapped
(``mmap=True``).  All writers are chunked over the rows and atomic.

In the text formats a tab separates fields like a space.  Every reader rejects NaN
and infinity except the native one (it opens without reading the vectors; the
writers never store them); a truncated or damaged ``.gz`` is a
:class:`~embdebias.errors.VectorFileError`.  Writers refuse what their reader would
reject (empty words, words with separators or line breaks, non-finite values, an
empty embedding in GloVe or fastText ``.bin``).  Text parsing is strict (see
:mod:`embdebias.io.text`): a header is exactly ``"count dim"``, every row has exactly
``dim`` finite numbers, a BOM is dropped and CR-only line ends are refused.
FIFOs, devices and sockets are refused before anything opens them.
"""

from __future__ import annotations

import gzip
import mmap as _mmap
import os
import struct
from pathlib import Path

import numpy as np

from ..embedding import Embedding, as_embedding
from ..errors import EmbdebiasError, UnknownFormatError, VectorFileError, quote
from ._common import (BOM, GZIP_ERRORS, GZIP_MAGIC, HEADER_LINE, UNICODE_ERRORS, bad_header_error, binary_records_ok,
                      check_limit, check_unicode_errors, damaged_header, glove_dim, gzip_errors, is_number, lone_cr,
                      require_file, sample_lines, split_fields, text_records_ok)
from .default import BUILTIN_NAMES, DEFAULT_NAME, cache_dir, load_default
from .native import is_native, read_native, write_native

FORMATS = ("native", "word2vec-bin", "word2vec-text", "fasttext-vec", "glove", "fasttext-bin", "gensim-kv")

__all__ = ["FORMATS", "EXTENSIONS", "DEFAULT_NAME", "BUILTIN_NAMES", "UNICODE_ERRORS", "load", "save", "convert",
           "describe", "detect_format", "guess_format_from_path", "output_name", "output_format", "load_default",
           "cache_dir"]

#: The file name ending of each format: what ``embdebias run`` names its outputs, and
#: what :func:`guess_format_from_path` maps back to the format (the one table the API
#: and the command line share).
EXTENSIONS = {"native": ".embd", "word2vec-bin": ".bin", "word2vec-text": ".w2v.txt", "glove": ".glove.txt",
              "fasttext-vec": ".vec", "fasttext-bin": ".ft.bin", "gensim-kv": ".kv"}
#: Every ending :func:`guess_format_from_path` knows, longest first: the table above,
#: plain ``.txt`` (word2vec text) and ``.glove``.
_ENDINGS = sorted([*((ext, fmt) for fmt, ext in EXTENSIONS.items()), (".txt", "word2vec-text"), (".glove", "glove")],
                  key=lambda item: -len(item[0]))
#: Formats whose writers can gzip-compress (a ``.gz`` name); the others are refused one.
_GZIP_FORMATS = ("word2vec-bin", "word2vec-text", "fasttext-vec", "glove")

_FASTTEXT_MAGIC = struct.pack("<i", 793712314)
_SNIFF_BYTES = 1 << 16


def _looks_like_old_fasttext(head: bytes) -> bool:
    """fastText models from before the magic number start with 12 int32 settings."""
    if len(head) < 48:
        return False
    dim, ws, epoch, min_count, neg, word_ngrams, loss, model, bucket, minn, maxn, lr_update = \
        struct.unpack("<12i", head[:48])
    return (0 < dim <= 100_000 and 0 < ws < 1000 and 0 < epoch < 100_000 and min_count >= 0
            and neg >= 0 and 0 < word_ngrams < 100 and 1 <= loss <= 4 and 1 <= model <= 3
            and bucket >= 0 and 0 <= minn <= maxn < 100 and lr_update > 0)


def _looks_like_pickle(head: bytes) -> bool:
    """gensim's ``save`` writes a pickle: protocol 2 to 5 starts with 0x80 and the protocol number."""
    return len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def _looks_like_fasttext(head: bytes) -> bool:
    return head[:4] == _FASTTEXT_MAGIC or _looks_like_old_fasttext(head)


def _detect_after_header(first: bytes, payload: bytes, suffixes: list[str], compressed: bool,
                         complete: bool) -> str:
    """word2vec text, fastText .vec or word2vec binary, from what follows a 'count dim' line.

    Both readings are tried on the first records: text lines ``word v1 ... vd`` with the
    header's ``d``, and binary records (word, space, ``4 d`` bytes).  When exactly one
    fits, that is the format; when both do (a tiny file can be valid both ways, e.g.
    ``"1 1\\nw 1234\\n"``) the extension decides; when neither does, a first line of a
    word and numbers means a damaged text file (its reader names the line).
    """
    text = "fasttext-vec" if ".vec" in suffixes else "word2vec-text"
    by_name = "word2vec-bin" if _binary_by_name(suffixes, compressed) else text
    n, d = map(int, first.split())
    if not payload.strip() or d < 1:
        return by_name  # no record to look at (or a bad header the reader reports): trust the extension
    is_text = text_records_ok(payload, d, complete)
    is_binary = binary_records_ok(payload, n, d, complete)
    if is_text == is_binary:
        # both: the extension decides; neither: a first line of a word and numbers is damaged text
        return by_name if is_text else (text if _damaged_text_row(payload.split(b"\n", 1)[0], d) else "word2vec-bin")
    return text if is_text else "word2vec-bin"


def _binary_by_name(suffixes: list[str], compressed: bool) -> bool:
    return ".bin" in suffixes or (compressed and ".txt" not in suffixes and ".vec" not in suffixes)


def _damaged_text_row(line: bytes, d: int) -> bool:
    """Whether a line that is no valid row is still text: a word and numbers, or ``d + 1`` UTF-8 fields.

    (A word2vec binary record of ``d`` float32 is all but never valid UTF-8 without NUL.)
    """
    fields = split_fields(line)  # a tab separates fields like a space
    if len(fields) >= 2 and all(is_number(f) for f in fields[1:]):
        return True
    return len(fields) == d + 1 and b"\x00" not in line and _is_utf8(line)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _text_view(head: bytes) -> bytes:
    """``head`` as the text readers see it, for sniffing: without a BOM, and with CR-only line ends as LF.

    (The readers refuse CR-only line ends, with a clear error; detecting the format
    first lets that error be the one reported.)
    """
    if head.startswith(BOM):
        head = head[len(BOM):]
    nl = head.find(b"\n")
    if lone_cr(head[:nl] if nl >= 0 else head) >= 0:
        head = head.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return head


def _looks_like_glove(text: bytes, complete: bool, path) -> bool:
    """Whether the first lines are GloVe rows (:func:`~._common.glove_dim` finds a dimension).

    A first line of numbers only that disagrees with them ("40 8 3", "-1 8", "40.0 8")
    is a damaged header: a :class:`VectorFileError`, not a GloVe row.
    """
    lines = sample_lines(text, complete)
    if not lines or not _is_utf8(lines[0][1]):
        return False
    line_no, first = lines[0]
    d = glove_dim(lines)
    if damaged_header(first, d):
        raise bad_header_error(path, first, line=line_no, offset=None)
    return d >= 1


def _detect_bytes(head: bytes, path: Path, compressed: bool) -> str:
    if _looks_like_pickle(head):
        return _detect_pickle(path)
    if head[:4] == _FASTTEXT_MAGIC:
        return "fasttext-bin"
    complete = len(head) < _SNIFF_BYTES
    text = _text_view(head)
    nl = text.find(b"\n")
    first = text[:nl] if nl >= 0 else text
    if HEADER_LINE.fullmatch(first):
        return _detect_after_header(first, text[nl + 1:] if nl >= 0 else b"", [s.lower() for s in path.suffixes],
                                    compressed, complete=complete)
    if _looks_like_old_fasttext(head):
        return "fasttext-bin"
    if _looks_like_glove(text, complete, path):
        return "glove"
    raise UnknownFormatError(
        f"{path}: unknown vector format: not a native-format directory, gzip, gensim pickle, fastText "
        f".bin, word2vec binary/text (header 'count dim') or GloVe text ('word v1 ... vd' lines); "
        f"first bytes {head[:24]!r}")


def _detect_pickle(path: Path) -> str:
    """A pickle is gensim-kv only under a gensim-like name: content alone never leads to unpickling."""
    from .gensim_kv import PICKLE_ENDINGS, is_pickle_name

    if is_pickle_name(path):
        return "gensim-kv"
    raise VectorFileError(path, f"a pickle (a gensim KeyedVectors file?) whose name does not end in "
                                f"{', '.join(PICKLE_ENDINGS)}: not unpickled on content alone; rename it, or "
                                f"name the format (--input-format gensim-kv, API: format='gensim-kv')")


def detect_format(path) -> str:
    """Detect the format of ``path`` from its content.

    Returns one of :data:`FORMATS`.  Gzip-compressed files are looked into (the
    readers decompress transparently).  ``word2vec-text`` and ``fasttext-vec`` are the
    same format; the latter is returned for a ``.vec`` file.  A pickle is ``gensim-kv``
    only when its name ends like one (``.kv``, ``.wv``, ``.model``, ``.pkl``,
    ``.pickle``, each optionally ``.gz``); any other pickle is a
    :class:`VectorFileError`, so that a file named like text is never unpickled on
    its content alone (it can still be read by naming the format).

    Raises
    ------
    UnknownFormatError
        The content matches no known format.
    VectorFileError
        The file does not exist, is empty, is not a regular file (a FIFO, a device, a
        socket), or its first line of numbers only is a damaged ``"count dim"`` header
        (``40 8 3``, ``-1 8``, ``40.0 8``); or it is a pickle not named like one.
    """
    path = Path(path)
    _check_source(path)
    if path.is_dir():
        if is_native(path):
            return "native"
        raise UnknownFormatError(f"{path}: a directory without embdebias.json, not a native-format embedding")
    with open(path, "rb") as fh:
        head = fh.read(_SNIFF_BYTES)
    compressed = head[:2] == GZIP_MAGIC
    if compressed:
        try:
            with gzip.open(path, "rb") as fh:
                head = fh.read(_SNIFF_BYTES)
        except (OSError, *GZIP_ERRORS) as exc:
            raise VectorFileError(path, f"truncated or damaged gzip data: {exc or type(exc).__name__}") from None
    if not head.removeprefix(BOM).strip():
        raise VectorFileError(path, "empty file: expected word vectors", line=1)
    return _detect_bytes(head, path, compressed)


def guess_format_from_path(path) -> str:
    """The format a file name asks for; the API (:func:`save`) and the command line both use it.

    The longest matching ending of :data:`EXTENSIONS` wins (``x.glove.txt`` is GloVe,
    ``x.ft.bin`` fastText, ``x.bin`` word2vec binary, ``x.w2v.txt`` and ``x.txt``
    word2vec text, ``x.vec`` fastText text, ``x.kv`` gensim, ``x.embd`` native), then
    ``.glove``; a trailing ``.gz`` is ignored, and a bare ``x.gz`` is word2vec binary.
    Anything else is a native-format directory.

    Parameters
    ----------
    path : path-like

    Returns
    -------
    str
        One of :data:`FORMATS`.
    """
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
        if not Path(name).suffix:
            return "word2vec-bin"
    for ending, fmt in _ENDINGS:
        if name.endswith(ending) and len(name) > len(ending):
            return fmt
    return "native"


def output_name(stem: str, format: str) -> str:
    """``stem`` with the ending of ``format`` (:data:`EXTENSIONS`), e.g. ``hard.glove.txt``.

    Parameters
    ----------
    stem : str
    format : str
        One of :data:`FORMATS` (else :class:`UnknownFormatError`).

    Returns
    -------
    str
    """
    return stem + EXTENSIONS[_check_format(format)]


def output_companions(path, format: str) -> list[Path]:
    """The files a writer of ``format`` puts beside ``path``: gensim-kv's ``PATH.vectors.npy``, else none.

    Commands check them with the output itself, so that no user's file there is replaced unasked.
    """
    path = Path(path)
    return [path.with_name(path.name + ".vectors.npy")] if format == "gensim-kv" else []


def _check_format(format: str) -> str:
    if format not in FORMATS:
        raise UnknownFormatError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    return format


def _check_source(source) -> None:
    """A missing input is an error (a bare name also lists the built-in embeddings); so is a special file.

    FIFOs, devices and sockets are refused before anything opens them
    (:func:`~._common.require_file`).
    """
    text = os.fspath(source)
    if not os.path.lexists(text) and not any(sep and sep in text for sep in (os.sep, os.altsep)):
        raise VectorFileError(text, f"no such file or directory; not a built-in embedding either "
                                    f"(built-in: {', '.join(BUILTIN_NAMES)})")
    require_file(text, allow_dir=True)


def _check_fits(path, fmt: str) -> None:
    """Refuse content that ``fmt`` cannot be, naming the file, the place and what was expected.

    Covers the formats read whole by other code (native, gensim-kv, fastText .bin);
    the text and word2vec binary readers check their own content line by line.
    """
    path = Path(path)
    if fmt == "native" and not is_native(path):
        found = "a directory without embdebias.json" if path.is_dir() else "a file"
        raise VectorFileError(path, f"expected a native-format directory (embdebias.json, vectors.npy and "
                                    f"the vocabulary files), found {found}")
    if fmt not in ("gensim-kv", "fasttext-bin") or path.is_dir():
        return
    head = _pickle_head(path) if fmt == "gensim-kv" else _head(path)
    if fmt == "gensim-kv" and not _looks_like_pickle(head):
        raise VectorFileError(path, f"expected a gensim KeyedVectors file (a pickle: byte 0x80 and a protocol "
                                    f"number 2-5), found {head[:24]!r}", offset=0)
    if fmt == "fasttext-bin" and not _looks_like_fasttext(head):
        raise VectorFileError(path, f"expected a fastText .bin model (its magic number "
                                    f"{_FASTTEXT_MAGIC!r}), found {head[:24]!r}", offset=0)


def _head(path, size: int = 64) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(size)


def _pickle_head(path) -> bytes:
    """The first bytes of a pickle, looked for inside gzip (gensim gzips the pickle of a ``NAME.gz``)."""
    head = _head(path)
    if head[:2] == GZIP_MAGIC:
        with gzip.open(path, "rb") as fh, gzip_errors(path):
            head = fh.read(64)
    return head


def _read(path, fmt: str, limit, mmap: bool, name, unicode_errors: str = "strict",
          trust_pickle: bool = False) -> Embedding:
    _check_fits(path, fmt)
    # One place for every reader: a truncated or corrupt .gz surfaces as EOFError,
    # zlib.error or BadGzipFile from deep inside the reader's loop.
    with gzip_errors(path):
        emb = _read_format(path, fmt, limit, mmap, name, unicode_errors, trust_pickle)
    if fmt in _VALIDATING_FORMATS:
        emb.assume_finite()
    return emb


#: Formats whose readers reject NaN and infinity as they parse; the others (native,
#: fastText .bin) are checked lazily by the Embedding, chunk by chunk.
_VALIDATING_FORMATS = frozenset({"word2vec-bin", "word2vec-text", "fasttext-vec", "glove", "gensim-kv"})


def _read_format(path, fmt: str, limit, mmap: bool, name, unicode_errors: str, trust_pickle: bool) -> Embedding:
    if fmt == "native":
        return read_native(path, limit=limit, mmap=mmap, name=name)
    if fmt == "word2vec-bin":
        from .word2vec_bin import read_word2vec_bin
        return read_word2vec_bin(path, limit=limit, name=name, unicode_errors=unicode_errors)
    if fmt in ("word2vec-text", "fasttext-vec", "glove"):
        from .text import read_text
        glove = fmt == "glove"
        return read_text(path, header=not glove, words_with_spaces=glove, limit=limit, name=name,
                         unicode_errors=unicode_errors)
    from . import gensim_formats
    if fmt == "fasttext-bin":
        return gensim_formats.read_fasttext_bin(path, limit=limit, name=name, unicode_errors=unicode_errors)
    from .gensim_kv import read_gensim_kv
    return read_gensim_kv(path, limit=limit, mmap=mmap, name=name, trust_pickle=trust_pickle)


def load(source=None, format: str = "auto", limit: int | None = None, mmap: bool = True,
         name: str | None = None, *, unicode_errors: str = "strict", trust_pickle: bool = False) -> Embedding:
    """Load word embeddings.

    Parameters
    ----------
    source : path-like, gensim KeyedVectors, Embedding or None
        A file or native directory; None or a built-in name (:data:`BUILTIN_NAMES`:
        ``"glove-6b-50d"``) is the built-in default embedding (see
        :mod:`embdebias.io.default`); a gensim ``KeyedVectors`` is wrapped without
        copying (a live read-only view, see :func:`~embdebias.embedding.as_embedding`).
    format : str
        ``"auto"`` (detect from the content) or one of :data:`FORMATS`.  A format the
        content cannot be is an error naming the file, the line or byte offset and
        what was expected.
    limit : int, optional
        Keep only the first ``limit`` words (file order).  Text and word2vec binary
        files stop reading there; gensim-read formats load fully, then trim.
    mmap : bool
        Memory-map native and gensim-kv vectors (read-only) instead of reading them.
    name : str, optional
        Label of the embedding (default: the file name).
    unicode_errors : {"strict", "ignore", "replace"}
        Undecodable UTF-8 bytes in a word of a word2vec, fastText or GloVe file, with
        gensim's meaning: ``"strict"`` is an error naming the file and byte offset,
        ``"ignore"`` drops the bytes, ``"replace"`` puts U+FFFD in their place (words
        that become equal are duplicates: the first row is kept, with a warning).
        Native and gensim-kv files hold decoded text and ignore it.
    trust_pickle : bool
        gensim-kv files are pickles. By default they are read by a restricted
        unpickler that admits only what a gensim ``KeyedVectors`` file (or a full
        ``Word2Vec`` model) needs, and any other content is refused
        (:mod:`embdebias.io.gensim_kv`). True loads them with gensim's own unpickler,
        which runs any code the file names: only for files you trust (needed for
        fastText ``KeyedVectors`` and gensim 3 files).

    Returns
    -------
    Embedding

    Raises
    ------
    VectorFileError
        Malformed file, or a missing one (for a bare name the message lists the
        built-in names).
    UnknownFormatError
        Undetectable content or an unknown format name.
    """
    limit = check_limit(limit)
    unicode_errors = check_unicode_errors(unicode_errors)
    if source is None or (isinstance(source, str) and source == DEFAULT_NAME):
        emb = load_default(limit=limit, mmap=mmap)
        if name:
            emb.name = name
        return emb
    if not isinstance(source, (str, os.PathLike)):
        try:
            emb = as_embedding(source, name=name)
        except TypeError as exc:
            raise EmbdebiasError(str(exc)) from None
        return emb.head(limit) if limit is not None else emb
    _check_source(source)
    fmt = detect_format(source) if format in (None, "auto") else _check_format(format)
    return _read(source, fmt, limit, mmap, name, unicode_errors, trust_pickle)


def save(emb, path, format: str | None = None, *, inputs=()) -> str:
    """Write ``emb`` to ``path`` atomically; returns the format written.

    ``format=None`` takes the format from the file name (:func:`guess_format_from_path`,
    the same rule as the command line): ``.glove.txt``/``.glove`` GloVe, ``.ft.bin``
    fastText binary, ``.bin``/``.bin.gz``/``.gz`` word2vec binary, ``.w2v.txt``/``.txt``
    word2vec text, ``.vec`` fastText text, ``.kv`` gensim; anything else (``.embd``)
    is the native format.  A ``.gz`` suffix compresses the text and word2vec binary
    formats and is refused for the others.  Writing over the embedding's own file (or
    any of ``inputs``) is refused.
    """
    emb = as_embedding(emb)
    fmt = output_format(path, format)
    _check_storable(emb, path, fmt)
    if fmt == "native":
        inputs = (*inputs, emb.path) if emb.path else inputs
        write_native(emb, path, inputs=inputs)
    elif fmt == "word2vec-bin":
        from .word2vec_bin import write_word2vec_bin
        write_word2vec_bin(emb, path, inputs=inputs)
    elif fmt in ("word2vec-text", "fasttext-vec", "glove"):
        from .text import write_text
        write_text(emb, path, header=fmt != "glove", format_name=fmt, inputs=inputs)
    elif fmt == "fasttext-bin":
        from .gensim_formats import write_fasttext_bin
        write_fasttext_bin(emb, path, inputs=inputs)
    else:
        from .gensim_kv import write_gensim_kv
        write_gensim_kv(emb, path, inputs=inputs)
    return fmt


def _check_storable(emb: Embedding, path, fmt: str) -> None:
    """Refuse, before any file is made, what no reader would read back: dimension 0, words that are not UTF-8."""
    if emb.dim < 1:
        raise EmbdebiasError(f"{path}: cannot write vectors of dimension {emb.dim}; every format's reader needs "
                             f"a dimension of at least 1")
    if fmt == "gensim-kv":
        return  # a pickle stores any str
    words = emb.words.tolist()
    joined = "\n".join(words)
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate
        r = joined.count("\n", 0, exc.start)
        raise EmbdebiasError(f"{path}: the {fmt} format stores UTF-8 and cannot encode the word "
                             f"{quote(words[r])} (row {r}: {exc.reason}); drop or rename it, or use "
                             f"'gensim-kv'") from None


def output_format(path, format: str | None = None) -> str:
    """The format :func:`save` writes ``path`` in, checked before any work is done.

    Parameters
    ----------
    path : path-like
        The output path.
    format : str, optional
        One of :data:`FORMATS`; None takes it from the name (:func:`guess_format_from_path`).

    Returns
    -------
    str

    Raises
    ------
    UnknownFormatError
        ``format`` is not a known format.
    EmbdebiasError
        The name ends in ``.gz`` and the format cannot be gzip-compressed.
    """
    fmt = guess_format_from_path(path) if format is None else _check_format(format)
    if Path(path).name.lower().endswith(".gz") and fmt not in _GZIP_FORMATS:
        raise EmbdebiasError(f"{path}: the {fmt} format cannot be gzip-compressed; drop '.gz' from the "
                             f"name or choose one of {', '.join(_GZIP_FORMATS)}")
    return fmt


def convert(src, dst, format: str | None = None, src_format: str = "auto", limit: int | None = None, *,
            unicode_errors: str = "strict", trust_pickle: bool = False) -> str:
    """Read ``src`` and write it to ``dst`` (format guessed from ``dst`` when None); returns that format.

    ``src_format``, ``limit``, ``unicode_errors`` and ``trust_pickle`` are :func:`load`'s
    ``format``, ``limit``, ``unicode_errors`` and ``trust_pickle``.
    """
    emb = load(src, format=src_format, limit=limit, unicode_errors=unicode_errors, trust_pickle=trust_pickle)
    inputs = (src,) if isinstance(src, (str, os.PathLike)) and src != DEFAULT_NAME else ()
    return save(emb, dst, format=format, inputs=inputs)


def _is_memory_mapped(array) -> bool:
    while array is not None:
        if isinstance(array, (np.memmap, _mmap.mmap)):
            return True
        array = getattr(array, "base", None)
    return False


def describe(emb_or_path, format: str = "auto", *, limit: int | None = None,
             unicode_errors: str = "strict", trust_pickle: bool = False) -> dict:
    """Summary of an embedding or a vector file, for ``embdebias info``.

    Parameters
    ----------
    emb_or_path : Embedding, KeyedVectors, path-like or None
        What to describe (None: the built-in default embedding).
    format, limit, unicode_errors, trust_pickle
        As in :func:`load` (``limit`` describes the first words only).

    Returns
    -------
    dict
        ``name, format, path, count, dim, dtype, memory_mapped, norm_min, norm_mean,
        norm_max, zero_vectors`` (norms computed in chunks).  ``format`` is None for
        an in-memory embedding.
    """
    fmt = None
    if isinstance(emb_or_path, (str, os.PathLike)) or emb_or_path is None:
        if emb_or_path is None or emb_or_path == DEFAULT_NAME:
            fmt = "native"
        elif format in (None, "auto"):
            fmt = detect_format(emb_or_path)
        else:
            fmt = _check_format(format)
        emb = load(emb_or_path, format=fmt, limit=limit, unicode_errors=unicode_errors, trust_pickle=trust_pickle)
    else:
        emb = as_embedding(emb_or_path)
        if limit is not None:
            emb = emb.head(check_limit(limit))
    # float64 norms: float32 squares overflow for components beyond ~1.8e19.
    norms = np.empty(len(emb), dtype=np.float64)
    for start, stop, block in emb.iter_chunks():
        wide = block.astype(np.float64)
        norms[start:stop] = np.sqrt(np.einsum("ij,ij->i", wide, wide))
    return {
        "name": emb.name,
        "format": fmt,
        "path": emb.path,
        "count": len(emb),
        "dim": emb.dim,
        "dtype": str(emb.vectors.dtype),
        "memory_mapped": _is_memory_mapped(emb.vectors),
        "norm_min": float(norms.min()) if len(norms) else float("nan"),
        "norm_mean": float(norms.mean()) if len(norms) else float("nan"),
        "norm_max": float(norms.max()) if len(norms) else float("nan"),
        "zero_vectors": int(np.count_nonzero(norms == 0)),
    }
