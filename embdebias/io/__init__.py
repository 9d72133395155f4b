"""Reading and writing word embeddings.

The formats, each readable and writable, are the records of the one table of formats,
:data:`embdebias.io.formats.TABLE` (name, endings, how the content is recognised, reader,
writer, gzip, companion files); :data:`FORMATS` lists their names:

============== ==========================================================================
name           content
============== ==========================================================================
native         embdebias's cache directory (opens memory-mapped in milliseconds)
word2vec-bin   header ``"n d"``, then ``word<space>`` + d little-endian float32 per record
word2vec-text  header ``"n d"``, then ``word v1 ... vd`` lines
fasttext-vec   the same as word2vec-text (``.vec``)
glove          ``word v1 ... vd`` lines without header; words may contain spaces
fasttext-bin   Facebook fastText model (read through gensim; in-vocabulary words only)
gensim-kv      gensim ``KeyedVectors.save`` pickle, memory-mapped when possible; read
               without running code from the file (:mod:`embdebias.io.gensim_kv`)
============== ==========================================================================

(``tests/test_io_formats.py`` checks that this list names the table's formats.)

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

import mmap as _mmap
import os
from pathlib import Path

import numpy as np

from ..embedding import Embedding, as_embedding
from ..errors import EmbdebiasError, UnknownFormatError, VectorFileError, quote
from ._common import UNICODE_ERRORS, check_limit, check_unicode_errors, gzip_errors, looks_like_text
from .default import BUILTIN_NAMES, DEFAULT_NAME, cache_dir, load_default
from .detect import check_fits, check_source, detect_format
from .formats import BY_NAME, TABLE, TEXT_FORMATS, Format, same_content

#: The format names, in the order of :data:`~embdebias.io.formats.TABLE` (the one table of formats).
FORMATS = tuple(f.name for f in TABLE)

__all__ = ["FORMATS", "EXTENSIONS", "DEFAULT_NAME", "BUILTIN_NAMES", "UNICODE_ERRORS", "load", "save", "convert",
           "describe", "detect_format", "guess_format_from_path", "format_named_by", "output_name", "output_format",
           "load_default", "cache_dir"]

#: The file name ending of each format: what ``embdebias run`` names its outputs, and
#: what :func:`guess_format_from_path` maps back to the format (the one table the API
#: and the command line share).
EXTENSIONS = {f.name: f.ending for f in TABLE}
#: Every ending :func:`guess_format_from_path` knows, longest first: each format's output
#: ending and its other endings (plain ``.txt``: word2vec text; ``.glove``).
_ENDINGS = sorted(((ending, f.name) for f in TABLE for ending in (f.ending, *f.other_endings)),
                  key=lambda item: -len(item[0]))
#: Formats whose writers can gzip-compress (a ``.gz`` name); the others are refused one.
_GZIP_FORMATS = tuple(f.name for f in TABLE if f.gzip)


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
    return format_named_by(path) or "native"


def format_named_by(path) -> str | None:
    """The format whose ending ``path``'s name carries (:func:`guess_format_from_path`), or None for a name
    without one (``out``, ``vectors.dat``), which asks for no format in particular."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
        if not Path(name).suffix:
            return "word2vec-bin"
    for ending, fmt in _ENDINGS:
        if name.endswith(ending) and len(name) > len(ending):
            return fmt
    return None


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
    return [path.with_name(path.name + suffix) for suffix in _record(format).companions]


def _record(format: str) -> Format:
    """The table's record of ``format``, or an :class:`UnknownFormatError` naming the formats."""
    try:
        return BY_NAME[format]
    except (KeyError, TypeError):
        raise UnknownFormatError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}") from None


def _check_format(format: str) -> str:
    return _record(format).name


def _read(path, fmt: str, limit, mmap: bool, name, unicode_errors: str = "strict",
          trust_pickle: bool = False) -> Embedding:
    check_fits(path, fmt)
    record = _record(fmt)
    # One place for every reader: a truncated or corrupt .gz surfaces as EOFError,
    # zlib.error or BadGzipFile from deep inside the reader's loop.
    with gzip_errors(path):
        emb = record.read(path, limit=limit, mmap=mmap, name=name, unicode_errors=unicode_errors,
                          trust_pickle=trust_pickle)
    if record.validates:
        emb.assume_finite()
    return emb


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
    check_source(source)
    if format in (None, "auto"):
        return _read(source, detect_format(source), limit, mmap, name, unicode_errors, trust_pickle)
    fmt = _check_format(format)
    try:
        return _read(source, fmt, limit, mmap, name, unicode_errors, trust_pickle)
    except VectorFileError as exc:
        raise _with_detected_format(exc, source, fmt) from None


def _with_detected_format(exc: VectorFileError, source, fmt: str) -> VectorFileError:
    """``exc`` of a format named by the caller, saying what the content is when detection disagrees.

    A reader given another format's file fails somewhere in it, and its own advice (a line-end
    fix for text, say) would be wrong there: the content's format is the thing to say.
    """
    try:
        detected = detect_format(source)
    except EmbdebiasError:
        return exc
    if same_content(detected, fmt) or type(exc) is not VectorFileError:
        return exc
    # Detection falls back on a guess for a damaged file (a text row longer than its sniff looks binary):
    # say what the content is only when its bytes agree (text for a text format, not text for the others).
    if (detected in TEXT_FORMATS) != looks_like_text(source):
        return exc
    return VectorFileError(exc.path, f"{exc.reason}; read as {fmt} as asked, but the content is {detected} "
                                     f"(detected): give --input-format {detected} or leave it out "
                                     f"(API: format='{detected}' or 'auto')", line=exc.line, offset=exc.offset)


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
    _record(fmt).write(emb, path, inputs=inputs)
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
