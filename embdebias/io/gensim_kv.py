"""gensim ``KeyedVectors`` files (``.kv``): read without running code from the file, written safely.

**Reading.** A ``.kv`` file is a pickle, and loading a pickle with gensim (or ``pickle``)
runs whatever code the file names. By default :func:`read_gensim_kv` unpickles through
:class:`~embdebias.io._pickle.RestrictedUnpickler`, which admits only what a gensim 4
``KeyedVectors.save`` file (or a full ``Word2Vec`` model's) needs and refuses anything
else with a :class:`~embdebias.errors.VectorFileError` naming the file and the refused
global. gensim's own step that loads the arrays stored beside the pickle
(``__numpys``: ``NAME.vectors.npy``, or ``NAME.vectors.npz`` for a gzip ``NAME.gz``) is
redone here for the word vectors only: the companion's name is built from the pickle's
own name (never taken from the file), it must be a regular file, and its ``.npy`` header
(dtype, shape) is checked against the vocabulary and the file size before it is loaded
with ``np.load(allow_pickle=False)``. ``trust_pickle=True`` (``--trust-pickle``) loads the
file with gensim's full loader instead; that is needed for files this reader refuses,
such as fastText ``KeyedVectors`` (gensim recomputes their vectors from n-grams) or
gensim 3 files.

Either way the content is validated before use: ``index_to_key`` a list of distinct
``str`` (any Python text: gensim-kv is the one format that stores a lone surrogate, which
the other writers refuse), ``key_to_index`` its exact inverse, ``vectors`` a 2-d float
array with a row for every word and ``vector_size`` columns, all finite.

**Writing.** :func:`write_gensim_kv` writes ``NAME`` and ``NAME.vectors.npy`` (always
separate, so that gensim can memory-map them), each to a temporary name then renamed.
Two renames cannot be one atomic step, so the pickle records a fingerprint of its
vectors file (shape, dtype and a hash of up to 1024 evenly spaced rows): a pair torn by
a crash between the renames, or mixed up by hand, is an error rather than words read
with another save's vectors. Plain gensim ignores the extra attribute; a file that
gensim itself re-saved (its pickle then records another save) is not checked against
the fingerprint it carried along.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import itertools
import os
import stat
import sys
import zipfile
from pathlib import Path

import numpy as np

from .._atomic import atomic_file, check_output
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, owned
from ..errors import EmbdebiasError, VectorFileError, quote
from ..vocab import Vocabulary
from ._common import GZIP_MAGIC, check_finite, check_limit, require_file
from ._pickle import KEYED_VECTORS, WORD2VEC, ArraySpec, GensimRecord, PickleRefused, load_restricted

#: The attribute of the pickle that holds the fingerprint of its vectors file.
FINGERPRINT = "embdebias_vectors_fingerprint"
#: Rows hashed by the fingerprint (evenly spaced, first and last included).
FINGERPRINT_ROWS = 1024
#: File name endings gensim's loaders are used with; a pickle with another name is not
#: unpickled unless its format is named (see ``embdebias.io.detect_format``).
PICKLE_ENDINGS = (".kv", ".wv", ".model", ".pkl", ".pickle")


def is_pickle_name(path) -> bool:
    """Whether ``path`` is named like a gensim pickle (:data:`PICKLE_ENDINGS`, optionally ``.gz``)."""
    name = Path(path).name.lower()
    name = name[:-3] if name.endswith(".gz") else name
    return any(name.endswith(ending) and len(name) > len(ending) for ending in PICKLE_ENDINGS)


# -- reading ------------------------------------------------------------------------------------
def read_gensim_kv(path, *, limit: int | None = None, mmap: bool = True, name: str | None = None,
                   trust_pickle: bool = False) -> Embedding:
    """Load a gensim ``KeyedVectors.save`` file (memory-mapped vectors when stored separately).

    A saved full ``Word2Vec`` model is accepted too: its ``.wv`` is used.

    Parameters
    ----------
    path : path-like
        The pickle (plain or gzip); its companion ``PATH.vectors.npy`` is found by name.
    limit : int, optional
        Keep the first ``limit`` words (the whole file is still read and checked).
    mmap : bool
        Memory-map a separately stored ``.npy`` (read-only).
    name : str, optional
        Label of the embedding (default: the file name).
    trust_pickle : bool
        Load with gensim's own unpickler, which runs any code the file names. Only for
        files you trust (see the module docstring).

    Returns
    -------
    Embedding

    Raises
    ------
    VectorFileError
        A refused global, a damaged pickle, a missing or mismatched companion file, or
        content that is not a valid vocabulary and matrix.
    """
    path = require_file(path)
    limit = check_limit(limit)
    with _without_cpython_bytearray_noise():
        fields = _trusted_fields(path, mmap) if trust_pickle else _restricted_fields(path, mmap)
    words = _check_words(fields, path)
    vectors = _check_vectors(fields.get("vectors"), fields.get("vector_size"), len(words), path)
    _check_fingerprint(fields, vectors, path)
    n = len(words) if limit is None else min(limit, len(words))
    vectors = _checked_float32(vectors, words, n, path)
    # The words are distinct (key_to_index is their inverse): no second duplicate scan.
    return Embedding(Vocabulary._from_unique(words[:n]), owned(vectors), name=name or path.name,
                     path=os.fspath(path)).assume_finite()


@contextlib.contextmanager
def _without_cpython_bytearray_noise():
    """Drop one spurious message while unpickling.

    When CPython (3.11) cannot allocate the huge bytearray a damaged BYTEARRAY8 opcode
    claims, it frees the half-made object with an uninitialised export count and, at
    random, prints "SystemError: deallocated bytearray object has exported buffers"
    through ``sys.excepthook``; the MemoryError itself is raised and reported as usual.
    """
    hook = sys.excepthook

    def filtered(kind, value, tb):
        if not (kind is SystemError and "deallocated bytearray" in str(value)):
            hook(kind, value, tb)

    sys.excepthook = filtered
    try:
        yield
    finally:
        sys.excepthook = hook


def _restricted_fields(path: Path, mmap: bool) -> dict:
    """The KeyedVectors attributes of ``path`` through the restricted unpickler, vectors loaded."""
    compressed = _is_gzip(path)
    try:
        with (gzip.open(path, "rb") if compressed else open(path, "rb")) as fh:
            root = load_restricted(fh)
    except PickleRefused as exc:
        raise VectorFileError(path, _refusal_message(exc)) from None
    except Exception as exc:  # a damaged pickle raises anything: UnpicklingError, EOFError, MemoryError...
        raise VectorFileError(path, f"not a loadable gensim KeyedVectors pickle ({type(exc).__name__}: "
                                    f"{quote(exc, 80)})") from None
    kv, prefix = _keyed_vectors_record(root, path)
    fields = dict(kv.state)
    if isinstance(fields.get("vectors"), ArraySpec):  # a protocol 2-4 array: built at its BUILD opcode
        fields["vectors"] = fields["vectors"].array
    if _names_attribute(fields, "__numpys", path):
        companion = _companion(path, prefix, compressed)
        fields["vectors"] = _load_companion(companion, compressed, mmap, fields, path)
    elif _names_attribute(fields, "__scipys", path) or _names_attribute(fields, "__ignoreds", path):
        raise VectorFileError(path, "the vectors were saved as a sparse matrix or left out; expected a dense "
                                    "array (load it with --trust-pickle if you trust the file)")
    return fields


def _refusal_message(exc: PickleRefused) -> str:
    what = (f"gives {exc.what}{exc.detail}" if exc.detail
            else f"names {quote(exc.what, 80)}, which a gensim KeyedVectors file does not need")
    return (f"the pickle {what}; refusing to load it, since unpickling runs the code a file names. If you "
            f"trust this file, load it with gensim's own unpickler: --trust-pickle (API: trust_pickle=True)")


def _keyed_vectors_record(root, path: Path) -> tuple[GensimRecord, str]:
    """The KeyedVectors record of the pickle's root and the name prefix of its companion files."""
    prefix = os.fspath(path)
    if isinstance(root, WORD2VEC) and hasattr(root, "state"):
        recursive = root.state.get("__recursive_saveloads", [])
        root = root.state.get("wv")
        if isinstance(recursive, list) and any(type(r) is str and r == "wv" for r in recursive):
            prefix += ".wv"  # gensim saves the model's wv arrays as NAME.wv.ATTRIBUTE.npy
    if not isinstance(root, KEYED_VECTORS) or not hasattr(root, "state"):
        found = root.gensim_class if isinstance(root, GensimRecord) else type(root).__name__
        raise VectorFileError(path, f"the pickle holds a {found}, expected gensim KeyedVectors (or a Word2Vec "
                                    f"model)")
    return root, prefix


def _names_attribute(fields: dict, key: str, path: Path) -> bool:
    """Whether gensim's list ``fields[key]`` (``__numpys``, ...) names the vectors."""
    names = fields.get(key, [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise VectorFileError(path, f"the pickle's {key} is a {type(names).__name__}, expected a list of "
                                    f"attribute names")
    return "vectors" in names


def _companion(path: Path, prefix: str, compressed: bool) -> Path:
    """The file gensim stores the vectors in: ``PREFIX.vectors.npy`` (``.npz`` beside a gzip pickle)."""
    companion = Path(f"{prefix}.vectors.{'npz' if compressed else 'npy'}")
    if companion.parent != path.parent:  # built from our own name, but say so if that ever changes
        raise VectorFileError(path, f"the vectors file {companion} is not beside the pickle")
    try:
        mode = companion.stat().st_mode
    except OSError:
        raise VectorFileError(path, f"the vectors are stored separately in {companion.name}, which does not "
                                    f"exist; copy it beside the pickle") from None
    if not stat.S_ISREG(mode):
        raise VectorFileError(companion, "not a regular file; expected the .npy array of the vectors")
    return companion


def _load_companion(companion: Path, compressed: bool, mmap: bool, fields: dict, path: Path) -> np.ndarray:
    """The vectors array of ``companion`` after checking its header against the file and the pickle."""
    expected = _expected_shape(fields, path)
    try:
        if compressed:
            with zipfile.ZipFile(companion) as archive, archive.open("val.npy") as member:
                # Before anything inflates: the array may not be larger than the pickle's words need (zipfile
                # stops inflating at the declared size, which the header check ties to the shape).
                _check_npy_header(member, archive.getinfo("val.npy").file_size, expected, companion,
                                  exact_rows=True)
            with np.load(companion, allow_pickle=False) as archive:
                return archive["val"]
        with open(companion, "rb") as fh:
            _check_npy_header(fh, os.fstat(fh.fileno()).st_size, expected, companion)
        return np.load(companion, mmap_mode="r" if mmap else None, allow_pickle=False)
    except VectorFileError:
        raise
    except Exception as exc:  # damaged zip or npy header, short read...
        raise VectorFileError(companion, f"not a readable .npy array of the vectors ({type(exc).__name__}: "
                                         f"{quote(exc, 80)})") from None


def _expected_shape(fields: dict, path: Path) -> tuple[int, int | None]:
    """``(rows at least, columns or None)`` that the pickle's vocabulary and vector_size ask of the array."""
    words, size = fields.get("index_to_key"), fields.get("vector_size")
    if not isinstance(words, list):
        raise VectorFileError(path, f"index_to_key is a {type(words).__name__}, expected a list of words")
    return len(words), size if type(size) is int else None


def _read_npy_header(fh, companion: Path) -> tuple[tuple, np.dtype]:
    """``(shape, dtype)`` from a ``.npy`` header (numpy's parser: bounded, no code runs)."""
    version = np.lib.format.read_magic(fh)
    if version not in ((1, 0), (2, 0), (3, 0)):
        raise VectorFileError(companion, f"unknown .npy format version {version}")
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _fortran, dtype = read_header(fh)
    return shape, dtype


def _check_npy_header(fh, file_size: int, expected: tuple[int, int | None], companion: Path,
                      exact_rows: bool = False) -> None:
    """Refuse a ``.npy`` whose header is not a 2-d float array of the expected shape filling the file.

    ``exact_rows``: no more rows than the pickle's words either (an ``.npz`` is inflated into
    memory: 1.6 MB of zip can declare 1.6 GB).
    """
    shape, dtype = _read_npy_header(fh, companion)
    rows, cols = expected
    if exact_rows and len(shape) == 2 and shape[0] > rows:
        raise VectorFileError(companion, f"holds {shape[0]} rows for the pickle's {rows} words; refusing to "
                                         f"inflate more than the words need")
    if dtype.kind != "f" or dtype.fields is not None or len(shape) != 2 or shape[0] < rows \
            or (cols is not None and shape[1] != cols):
        want = f"({rows}, {cols if cols is not None else 'd'})"
        raise VectorFileError(companion, f"holds a {dtype} array of shape {shape}; expected a float array of "
                                         f"shape {want} for the pickle's vocabulary")
    needed = fh.tell() + shape[0] * shape[1] * dtype.itemsize
    if needed != file_size:
        raise VectorFileError(companion, f"is {file_size} bytes; its header ({shape[0]} x {shape[1]} {dtype}) "
                                         f"needs {needed}: truncated or damaged")


def _trusted_fields(path: Path, mmap: bool) -> dict:
    """The KeyedVectors attributes of ``path`` loaded by gensim's own (code-running) unpickler."""
    from gensim import utils

    try:
        # gensim cannot memory-map the .npz arrays of a compressed pickle
        obj = utils.SaveLoad.load(os.fspath(path), mmap="r" if mmap and not _is_gzip(path) else None)
    except Exception as exc:
        raise VectorFileError(path, f"not a loadable gensim KeyedVectors file ({type(exc).__name__}: "
                                    f"{quote(exc, 80)})") from None
    kv = getattr(obj, "wv", obj)
    if not (hasattr(kv, "index_to_key") and hasattr(kv, "vectors")):
        raise VectorFileError(path, f"the pickle holds a {type(obj).__name__}, expected gensim KeyedVectors")
    return dict(vars(kv), vectors=kv.vectors)


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


# -- validation --------------------------------------------------------------------------------
def _check_words(fields: dict, path: Path) -> list[str]:
    """``index_to_key``, checked: a list of valid ``str``, and ``key_to_index`` its exact inverse."""
    words, index = fields.get("index_to_key"), fields.get("key_to_index")
    if not isinstance(words, list):
        raise VectorFileError(path, f"index_to_key is a {type(words).__name__}, expected a list of words")
    if not set(map(type, words)) <= {str}:
        r = next(i for i, w in enumerate(words) if type(w) is not str)
        raise VectorFileError(path, f"word {r} of index_to_key is a {type(words[r]).__name__}; expected str")
    if not isinstance(index, dict):
        raise VectorFileError(path, f"key_to_index is a {type(index).__name__}, expected a dict of the words")
    _check_inverse(words, index, path)
    return words


def _first_misplaced(words: list[str], index: dict) -> int | None:
    """The first row ``i`` with ``index[words[i]] != i`` (None: there is none)."""
    if not set(map(type, index.values())) <= {int}:
        return next((i for i, w in enumerate(words) if type(index.get(w)) is not int), None)
    try:
        found = np.fromiter(map(index.get, words, itertools.repeat(-1)), dtype=np.int64, count=len(words))
    except OverflowError:  # a row number beyond int64
        return next(i for i, w in enumerate(words) if index.get(w) != i)
    rows = np.flatnonzero(found != np.arange(len(words)))
    return int(rows[0]) if len(rows) else None


def _check_inverse(words: list[str], index: dict, path: Path) -> None:
    """``index[words[i]] == i`` for every row and nothing else in ``index`` (so the words are distinct)."""
    n = len(words)
    # gensim fills key_to_index in row order: then two list comparisons prove it (the keys
    # are the very str objects of index_to_key, compared by identity first).
    if len(index) == n and list(index) == words and list(index.values()) == list(range(n)):
        return
    bad = _first_misplaced(words, index)
    if bad is not None or len(index) != n:
        value = index.get(words[bad]) if bad is not None else None
        shown = repr(value)[:20] if isinstance(value, (int, str, type(None))) else f"a {type(value).__name__}"
        where = (f"maps {quote(words[bad], 40)} (row {bad}) to {shown}"
                 if bad is not None else f"has {len(index)} keys for {n} words")
        raise VectorFileError(path, f"key_to_index {where}; expected each word of index_to_key mapped to its "
                                    f"row (a repeated word or a hand-edited file?)")


def _check_vectors(vectors, vector_size, n: int, path: Path) -> np.ndarray:
    """The vectors: a 2-d float array with at least ``n`` rows and ``vector_size`` (>= 1) columns."""
    if not isinstance(vectors, np.ndarray) or vectors.ndim != 2 or vectors.dtype.kind != "f" \
            or vectors.dtype.fields is not None:
        found = (f"a {vectors.dtype} array of shape {vectors.shape}" if isinstance(vectors, np.ndarray)
                 else f"a {type(vectors).__name__}")
        raise VectorFileError(path, f"the vectors are {found}; expected a 2-d float array")
    if vectors.shape[0] < n or vectors.shape[1] < 1:
        raise VectorFileError(path, f"the vectors have shape {vectors.shape}; expected at least {n} rows "
                                    f"(one per word) and at least one column")
    _check_vector_size(vector_size, vectors.shape[1], path)
    return vectors


def _check_vector_size(vector_size, columns: int, path: Path) -> None:
    """gensim's ``vector_size`` (when given) must be the number of columns."""
    if vector_size is None or (isinstance(vector_size, (int, np.integer)) and not isinstance(vector_size, bool)
                               and vector_size == columns):
        return
    shown = repr(vector_size)[:20] if isinstance(vector_size, (int, str, float)) else type(vector_size).__name__
    raise VectorFileError(path, f"vector_size is {shown} but the vectors have {columns} columns")


def _check_map_size(vectors: np.ndarray, path: Path) -> None:
    """Before a chunk of a memory map is read: the file still holds all of it.

    Reading a mapped page past the end of a file that shrank kills the process with
    SIGBUS; checked per chunk, a file cut while it is read is an error instead.
    """
    if not isinstance(vectors, np.memmap) or vectors.filename is None:
        return
    needed = vectors.offset + vectors.nbytes  # (what the header check found at the start)
    try:
        size = os.stat(vectors.filename).st_size
    except OSError:
        size = -1
    if size < needed:
        raise VectorFileError(vectors.filename, f"the file shrank to {size} bytes while it was read (it needs "
                                                f"{needed}); was it changed meanwhile? (the vectors of {path.name})")


def _checked_float32(vectors: np.ndarray, words: list[str], n: int, path: Path) -> np.ndarray:
    """The first ``n`` rows as float32, in chunks (one pass over a memory map), checked finite.

    A float64 (or longdouble) value beyond the float32 range would become infinite: it
    is an error naming its row, like NaN and infinity in the file.
    """
    native = vectors.dtype == np.float32
    out = vectors[:n] if native else np.empty((n, vectors.shape[1]), dtype=np.float32)
    for start in range(0, n, DEFAULT_CHUNK_ROWS):
        stop = min(start + DEFAULT_CHUNK_ROWS, n)
        _check_map_size(vectors, path)
        block = vectors[start:stop]
        if not native:
            with np.errstate(over="ignore"):
                out[start:stop] = block
        finite = np.isfinite(out[start:stop]).all(axis=1)
        if not finite.all():
            r = start + int(np.flatnonzero(~finite)[0])
            beyond = bool(np.isfinite(block[r - start]).all())
            what = (f"values beyond the float32 range (|x| > {np.finfo(np.float32).max:.6g}) in its "
                    f"{vectors.dtype} vector; expected numbers that float32 holds" if beyond
                    else "NaN or infinite values; expected finite numbers")
            raise VectorFileError(path, f"the vector of {quote(words[r], 40)} (row {r}) has {what}")
    return out


# -- the fingerprint of the vectors file ----------------------------------------------------------
def vectors_fingerprint(vectors: np.ndarray, saves: int) -> dict:
    """What the pickle records of its vectors: shape, dtype, a hash of sampled rows, and its save count.

    ``saves`` is the number of ``saving`` events the pickle will hold (gensim appends one per
    save): a reader that finds another number knows the file was re-saved by another program.
    """
    n = vectors.shape[0]
    rows = np.unique(np.linspace(0, n - 1, num=min(n, FINGERPRINT_ROWS)).astype(np.int64)) if n else []
    sample = np.ascontiguousarray(vectors[rows], dtype=vectors.dtype.newbyteorder("<"))
    digest = hashlib.blake2b(sample.tobytes(), digest_size=16).hexdigest()
    return {"shape": [int(s) for s in vectors.shape], "dtype": vectors.dtype.newbyteorder("<").str,
            "sample_blake2b": digest, "saves": saves}


def _saving_events(fields: dict) -> int:
    events = fields.get("lifecycle_events")
    if not isinstance(events, list):
        return 0
    return sum(1 for e in events if isinstance(e, dict) and type(e.get("event")) is str and e["event"] == "saving")


def _is_fingerprint(value) -> bool:
    """Whether ``value`` has the form :func:`vectors_fingerprint` returns (so comparing it is safe)."""
    return (type(value) is dict and set(value) == {"shape", "dtype", "sample_blake2b", "saves"}
            and type(value["shape"]) is list and all(type(s) is int for s in value["shape"])
            and type(value["dtype"]) is str and type(value["sample_blake2b"]) is str and type(value["saves"]) is int)


def _check_fingerprint(fields: dict, vectors: np.ndarray, path: Path) -> None:
    """Refuse vectors that are not the ones the pickle was saved with (a torn or mixed-up pair)."""
    recorded = fields.get(FINGERPRINT)
    if recorded is None:
        return  # written by gensim or an older embdebias
    if not _is_fingerprint(recorded):
        raise VectorFileError(path, f"damaged {FINGERPRINT} attribute; expected the dict embdebias writes")
    if recorded["saves"] != _saving_events(fields):
        return  # re-saved by another program since: the fingerprint describes an older array
    if vectors_fingerprint(vectors, recorded["saves"]) != recorded:
        raise VectorFileError(path, f"the vectors file ({vectors.shape[0]} x {vectors.shape[1]}) is not the "
                                    f"one this pickle was saved with (fingerprint {recorded.get('shape')}, "
                                    f"{quote(recorded.get('sample_blake2b'), 40)} differs): the pair was torn by "
                                    f"an interrupted save or mixed up with another save's file; save it again")


# -- writing -------------------------------------------------------------------------------------
def companion_names(path) -> list[Path]:
    """The files gensim may store beside the pickle ``path`` (what a writer must never overwrite)."""
    path = Path(path)
    return [path.with_name(path.name + ".vectors.npy"), path.with_name(path.name + ".vectors.npz")]


def write_gensim_kv(emb: Embedding, path, *, inputs=()) -> None:
    """Save as gensim ``KeyedVectors``: ``path`` and ``path.vectors.npy``, loadable with mmap.

    The vectors are always stored in the separate ``.npy`` file so that
    ``KeyedVectors.load(path, mmap="r")`` maps them. Each file is written to a temporary
    name and renamed, the ``.npy`` first; the pickle records the ``.npy``'s fingerprint,
    so a pair torn between the two renames is refused on reading (module docstring).
    Writing over an input, or over a companion file of one, is refused.
    """
    target = Path(path)
    aux_target = companion_names(target)[0]
    inputs = (*inputs, emb.path) if emb.path else inputs
    check_output(aux_target, inputs)
    if emb.dim < 1:
        raise EmbdebiasError(f"{target}: cannot write vectors of dimension 0 as gensim KeyedVectors")
    check_finite(emb, target)
    kv = emb.to_gensim(copy=False)
    setattr(kv, FINGERPRINT, vectors_fingerprint(np.asarray(kv.vectors), _saving_events(vars(kv)) + 1))
    with atomic_file(target, inputs=inputs) as tmp:
        aux_tmp = companion_names(tmp)[0]
        try:
            kv.save(os.fspath(tmp), separately=["vectors"])
            os.replace(aux_tmp, aux_target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(aux_tmp)
            raise
