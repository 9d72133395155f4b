"""The native cache format: a directory that opens memory-mapped in milliseconds.

Layout of ``NAME/`` (by convention ``NAME.embd``, but detection reads the content)::

    embdebias.json      {"format": "embdebias-native", "version": 1, "count": n, "dim": d,
                         "dtype": "float32", "vocab_crc32": c}
    vectors.npy         the (n, d) float32 matrix, C order, opened with mmap_mode="r"
    vocab.txt           the words, UTF-8, one per line, in row order
    vocab_offsets.npy   int64 (n + 1,): byte offset of each line in vocab.txt
    vocab_sorted.npy    int64 (n,): rows sorted by word, for binary-search lookup

Nothing is trusted before it is checked.  The metadata must be a small UTF-8 JSON object
with the keys above (``vocab_crc32`` is optional: caches written before it existed lack
it); the ``.npy`` headers must give the shapes and dtypes the metadata announces, and
every file must have exactly the size they imply, before anything is mapped.  The
vocabulary is then checked against ``vocab_crc32``, the CRC-32 of the three vocabulary
arrays' data that the writer stored after building them: a match means the files are
the ones written (about 55 ms for 3,000,000 words); a mismatch is an error.  Without the
record, the vocabulary is validated in full, vectorized (about 0.3 s for 3,000,000
words): one newline per word exactly at the offsets (so no newline inside a word), valid
UTF-8, a sorted index in range and in strictly increasing word order (so the words are
unique).  The record protects against damage, not against a forger who recomputes it.

Opening maps the arrays and decodes no word, so it costs about the same for 400,000 or
3,000,000 words.  The directory is written under a temporary name and renamed into
place, so readers never see a half-written cache; an existing output directory is
replaced only when it holds nothing but the files above.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import stat
import weakref
import zlib
from pathlib import Path

import numpy as np

from .._atomic import atomic_dir
from .._lock import output_lock
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, owned
from ..errors import EmbdebiasError, VectorFileError, quote
from ..vocab import Vocabulary, duplicate_rows

MAGIC = "embdebias-native"
VERSION = 1
META = "embdebias.json"
VECTORS = "vectors.npy"
VOCAB_TEXT = "vocab.txt"
VOCAB_OFFSETS = "vocab_offsets.npy"
VOCAB_SORTED = "vocab_sorted.npy"
#: Every file the format writes: an existing output directory holding anything else is
#: not replaced (it may hold a user's files).
NATIVE_FILES = frozenset({META, VECTORS, VOCAB_TEXT, VOCAB_OFFSETS, VOCAB_SORTED})
#: The metadata is a few hundred bytes; anything much larger is not ours.
MAX_META_BYTES = 1 << 16
_REQUIRED = {"format": str, "version": int, "count": int, "dim": int, "dtype": str}
_F32 = np.dtype("<f4")
_I64 = np.dtype("<i8")


def is_native(path) -> bool:
    """Whether ``path`` is a native-format directory."""
    p = Path(path)
    return p.is_dir() and (p / META).is_file()


# -- reading --------------------------------------------------------------------------------
def _regular_size(path: Path) -> int:
    """Size of ``path``, which must be a regular file (a FIFO or device would block or never end)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise VectorFileError(path, f"missing or unreadable native-format file ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise VectorFileError(path, "not a regular file; expected a file of the native format")
    return st.st_size


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not allowed (expected finite numbers)")


def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"a key is repeated: {quote(next(k for k in keys if keys.count(k) > 1))}")
    return dict(pairs)


def read_metadata(meta_path) -> dict:
    """Parse and check ``embdebias.json``: a small UTF-8 JSON object with the required keys.

    Raises
    ------
    VectorFileError
        Too large (checked before reading), not UTF-8, not JSON, NaN or Infinity,
        nested too deeply, not an object, a repeated or missing key, a value of the
        wrong type or out of range.
    """
    meta_path = Path(meta_path)
    if _regular_size(meta_path) > MAX_META_BYTES:
        raise VectorFileError(meta_path, f"{_regular_size(meta_path)} bytes of metadata, expected a small "
                                         f"JSON object (at most {MAX_META_BYTES} bytes)")
    with open(meta_path, "rb") as fh:
        raw = fh.read(MAX_META_BYTES + 1)
    try:
        text = raw.decode("utf-8")
        meta = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
    except UnicodeDecodeError as exc:
        raise VectorFileError(meta_path, f"metadata is not UTF-8 ({exc.reason})", offset=exc.start) from None
    except RecursionError:
        raise VectorFileError(meta_path, "metadata nested too deeply; expected a flat JSON object") from None
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, repeated keys, an integer too long
        raise VectorFileError(meta_path, f"unreadable native-format metadata: {quote(exc, 120)}") from None
    return _check_metadata(meta, meta_path)


def _check_metadata(meta, meta_path: Path) -> dict:
    if not isinstance(meta, dict):
        raise VectorFileError(meta_path, f"metadata is a JSON {type(meta).__name__}, expected an object "
                                         f"with {', '.join(_REQUIRED)}")
    for key, kind in _REQUIRED.items():
        _check_type(meta, key, kind, meta_path)
    if meta["format"] != MAGIC or meta["version"] != VERSION:
        raise VectorFileError(meta_path, f"expected format {MAGIC!r} version {VERSION}, "
                                         f"got {quote(meta['format'])} version {meta['version']}")
    if meta["dtype"] != "float32" or meta["count"] < 0 or meta["dim"] < 1:
        raise VectorFileError(meta_path, f"expected a count >= 0, a dim >= 1 and dtype 'float32', got count "
                                         f"{meta['count']}, dim {meta['dim']}, dtype {quote(meta['dtype'])}")
    if meta.get("vocab_crc32") is not None:
        _check_type(meta, "vocab_crc32", int, meta_path)
        if not 0 <= meta["vocab_crc32"] < 1 << 32:
            raise VectorFileError(meta_path, f"metadata key 'vocab_crc32': expected a CRC-32 (0 to 2**32 - 1), "
                                             f"found {meta['vocab_crc32']}")
    return meta


def _check_type(meta: dict, key: str, kind: type, meta_path: Path) -> None:
    value = meta.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):  # a bool is an int to Python, not to us
        found = "missing" if key not in meta else f"{quote(value)} ({type(value).__name__})"
        raise VectorFileError(meta_path, f"metadata key {key!r}: expected {kind.__name__}, found {found}")


def _npy_header(path: Path) -> tuple[tuple, bool, np.dtype, int]:
    """``(shape, fortran_order, dtype, data offset)`` of a ``.npy`` file, read without trusting it."""
    _regular_size(path)
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f".npy version {version} (expected 1.0 or 2.0)")
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                np.lib.format.read_array_header_2_0
            shape, fortran_order, dtype = read(fh)
            return shape, fortran_order, dtype, fh.tell()
    except Exception as exc:  # numpy's header parser raises ValueError, SyntaxError, EOFError, ...
        raise VectorFileError(path, f"damaged .npy header ({type(exc).__name__}: {quote(exc, 100)})",
                              offset=0) from None


def open_npy(path, shape: tuple, dtype: np.dtype, *, mmap: bool = True) -> np.ndarray:
    """The array of a ``.npy`` file, after checking its header and size against ``shape`` and ``dtype``.

    Never unpickles (object arrays are refused by the dtype check); memory-mapped
    read-only unless ``mmap`` is false.

    Raises
    ------
    VectorFileError
        A damaged header, another shape, dtype or memory order, or a file size that
        is not the header plus exactly the data.
    """
    path = Path(path)
    found_shape, fortran_order, found_dtype, offset = _npy_header(path)
    if found_shape != shape or found_dtype != dtype or fortran_order:
        raise VectorFileError(path, f"expected a C-order {dtype} array of shape {shape}, found "
                                    f"{'Fortran-order ' if fortran_order else ''}{found_dtype} {found_shape}")
    expected = offset + int(np.prod(shape, dtype=object)) * dtype.itemsize
    size = _regular_size(path)
    if size != expected:
        raise VectorFileError(path, f"{size} bytes, expected {expected} (a {offset}-byte header and the "
                                    f"{shape} {dtype} data); truncated or padded", offset=min(size, expected))
    if expected == offset:
        return np.zeros(shape, dtype)
    if mmap:
        return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape)
    with open(path, "rb") as fh:
        fh.seek(offset)
        return np.fromfile(fh, dtype=dtype, count=int(np.prod(shape))).reshape(shape)


def vocab_crc32(text, offsets, order) -> int:
    """CRC-32 of the data of the three vocabulary arrays, in that order (the metadata's ``vocab_crc32``)."""
    crc = 0
    for array in (text, offsets, order):
        if len(array):
            crc = zlib.crc32(memoryview(np.ascontiguousarray(array)).cast("B"), crc)
    return crc


def open_vocabulary(directory, meta: dict | None = None) -> Vocabulary:
    """The vocabulary of a native-format directory, checked (see the module docstring) and memory-mapped."""
    directory = Path(directory)
    meta = read_metadata(directory / META) if meta is None else meta
    n = meta["count"]
    offsets = open_npy(directory / VOCAB_OFFSETS, (n + 1,), _I64)
    order = open_npy(directory / VOCAB_SORTED, (n,), _I64)
    text_path = directory / VOCAB_TEXT
    size = _regular_size(text_path)
    if int(offsets[0]) != 0 or int(offsets[-1]) != size:
        raise VectorFileError(directory / VOCAB_OFFSETS, f"the offsets run from {int(offsets[0])} to "
                                                         f"{int(offsets[-1])}, expected 0 to {size} (the size "
                                                         f"of {VOCAB_TEXT})")
    text = np.memmap(text_path, dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)
    crc = meta.get("vocab_crc32")
    if crc is None:
        check_vocabulary(text, offsets, order, directory)
    elif vocab_crc32(text, offsets, order) != crc:
        raise VectorFileError(directory, f"the vocabulary files ({VOCAB_TEXT}, {VOCAB_OFFSETS}, {VOCAB_SORTED}) "
                                         f"changed since they were written (their CRC-32 is not the "
                                         f"metadata's vocab_crc32); rewrite the directory")
    return Vocabulary._from_native_arrays(text, offsets, order)


def check_vocabulary(text: np.ndarray, offsets: np.ndarray, order: np.ndarray, directory) -> None:
    """Validate native vocabulary arrays in full, vectorized; raise :class:`VectorFileError` naming the fault.

    ``offsets`` must already run from 0 to ``len(text)``. Checks that the newlines of
    ``text`` are exactly at ``offsets[1:] - 1`` (one per word, none inside a word, the
    offsets increasing), that ``text`` is UTF-8, and that ``order`` lists rows in range
    whose words strictly increase (hence a permutation, and the words unique).
    """
    directory = Path(directory)
    text, offsets, order = np.asarray(text), np.asarray(offsets), np.asarray(order)
    n = len(order)
    ends = offsets[1:] - 1
    # n increasing ends that are all newlines, and n newlines in all: the newlines are exactly the ends.
    if n and not (np.all(ends[1:] > ends[:-1]) and ends[0] >= 0 and np.all(text[ends] == 10)
                  and np.count_nonzero(text == 10) == n):
        _raise_bad_lines(text, np.flatnonzero(text == 10), ends, directory)
    _check_utf8(text, offsets, directory)
    if n and (int(order.min()) < 0 or int(order.max()) >= n):
        bad = int(np.flatnonzero((order < 0) | (order >= n))[0])
        raise VectorFileError(directory / VOCAB_SORTED, f"entry {bad} is row {int(order[bad])}, expected a "
                                                        f"row from 0 to {n - 1}")
    _check_word_order(text, offsets, order, directory)


def _check_utf8(text: np.ndarray, offsets: np.ndarray, directory: Path) -> None:
    if len(text) and text.max() >= 0x80:  # ASCII is UTF-8: decode only when it is not
        try:
            codecs.utf_8_decode(memoryview(text), "strict", True)
        except UnicodeDecodeError as exc:
            row = int(np.searchsorted(offsets, exc.start, side="right")) - 1
            raise VectorFileError(directory / VOCAB_TEXT, f"undecodable UTF-8 in the word of row {row} "
                                                          f"({exc.reason}); expected UTF-8 text",
                                  offset=exc.start) from None


def _raise_bad_lines(text, newlines: np.ndarray, ends: np.ndarray, directory: Path):
    """Name the first word whose line end is not where its offsets say."""
    k = min(len(newlines), len(ends))
    mismatch = np.flatnonzero(newlines[:k] != ends[:k])
    row = int(mismatch[0]) if len(mismatch) else k
    at = int(newlines[row]) if row < len(newlines) else len(text)
    start = int(newlines[row - 1]) + 1 if row > 0 else 0
    word = bytes(text[start:min(at, start + 80)]).decode("utf-8", "replace")
    raise VectorFileError(directory / VOCAB_TEXT, f"{len(newlines)} line ends for {len(ends)} words; line "
                                                  f"{row + 1} ({quote(word)}) does not end where {VOCAB_OFFSETS} "
                                                  f"says (a newline inside a word, or damaged offsets)", offset=at)


#: ``_BYTE_MASKS[k]`` keeps the first ``k`` bytes (the high ones) of a big-endian uint64 key.
_BYTE_MASKS = np.array([0] + [(1 << 64) - (1 << (64 - 8 * k)) for k in range(1, 9)], dtype=np.uint64)


def _key8(words: np.ndarray, starts: np.ndarray, remaining: np.ndarray) -> np.ndarray:
    """The 8 bytes at ``starts`` as one uint64 in byte order, zeroed past ``remaining`` bytes.

    ``words`` is the text, padded with zero bytes to a multiple of 8 plus 8, read as
    big-endian uint64 (in native order): each key is two aligned words shifted together.
    """
    index, shift = np.divmod(starts, 8)
    shift = (shift * 8).astype(np.uint64)
    high = words[index] << shift
    low = words[index + 1] >> (np.uint64(64) - shift)  # a shift by 64 is undefined: masked below
    key = np.where(shift == 0, high, high | low)
    return key & _BYTE_MASKS[np.clip(remaining, 0, 8)]


def _check_word_order(text, offsets, order, directory: Path) -> None:
    """Raise unless the words listed by ``order`` strictly increase (as UTF-8 bytes, i.e. code points).

    Each word's first 8 bytes become one integer, computed in row order (sequential
    reads); one gather puts them in sorted order, and neighbours compare as integers.
    Only pairs equal so far go on to the next 8 bytes, so the further work is about
    the bytes that neighbours share.
    """
    n = len(order)
    if n < 2:
        return
    padded = np.zeros((len(text) + 16) // 8 * 8, np.uint8)
    padded[:len(text)] = text
    words = padded.view(">u8").astype(np.uint64)
    lengths_by_row = np.diff(offsets) - 1
    key_and_length = np.empty((n, 2), np.int64)
    key_and_length[:, 0] = _key8(words, offsets[:-1], lengths_by_row).view(np.int64)
    key_and_length[:, 1] = lengths_by_row
    in_order = np.take(key_and_length, order, axis=0)  # the one random gather: both values in one line
    keys, lengths = in_order[:, 0].view(np.uint64), in_order[:, 1]
    pair = np.arange(n - 1)
    key_a, key_b = keys[:-1], keys[1:]
    pos = 0
    while len(pair):
        rem_a, rem_b = lengths[pair] - pos, lengths[pair + 1] - pos
        tie = key_a == key_b
        decided_short = tie & ((rem_a <= 8) | (rem_b <= 8))
        wrong = (key_a > key_b) | (decided_short & (rem_a >= rem_b))
        if wrong.any():
            _raise_unsorted(text, offsets, order, int(pair[np.flatnonzero(wrong)[0]]), directory)
        pair = pair[tie & ~decided_short]
        pos += 8
        key_a = _key8(words, offsets[order[pair]] + pos, lengths[pair] - pos)
        key_b = _key8(words, offsets[order[pair + 1]] + pos, lengths[pair + 1] - pos)


def _raise_unsorted(text, offsets, order, k: int, directory: Path):
    def word(row):
        return bytes(text[offsets[row]:offsets[row + 1] - 1]).decode("utf-8", "replace")

    a, b = int(order[k]), int(order[k + 1])
    if a == b:
        raise VectorFileError(directory / VOCAB_SORTED, f"row {a} is listed twice (entries {k} and {k + 1}); "
                                                        f"expected a permutation of the rows")
    if word(a) == word(b):
        raise VectorFileError(directory / VOCAB_TEXT, f"the word {quote(word(a))} is repeated (rows {min(a, b)} "
                                                      f"and {max(a, b)}); expected unique words")
    raise VectorFileError(directory / VOCAB_SORTED, f"not in word order at entry {k}: {quote(word(a))} (row {a}) "
                                                    f"comes before {quote(word(b))} (row {b})")


def read_native(path, *, limit: int | None = None, mmap: bool = True, name: str | None = None) -> Embedding:
    """Open a native-format directory (memory-mapped unless ``mmap=False``), checked before it is mapped.

    Raises
    ------
    VectorFileError
        Bad metadata, a damaged or mismatched ``.npy`` file, or a vocabulary that fails
        its checks (see the module docstring).
    """
    path = Path(path)
    meta = read_metadata(path / META)
    n, d = meta["count"], meta["dim"]
    vectors = open_npy(path / VECTORS, (n, d), _F32, mmap=mmap)
    vocab = open_vocabulary(path, meta)
    emb = Embedding(vocab, owned(vectors), name=name or path.name, path=str(path))
    return emb.head(limit) if limit is not None and limit < n else emb


# -- writing --------------------------------------------------------------------------------
def encode_vocabulary(words, target, *, unique: bool = False) -> tuple[bytes, np.ndarray]:
    """``(vocab.txt bytes, offsets)`` of ``words``, refusing what the format cannot store.

    ``unique``: the words are known to be unique (a :class:`~embdebias.vocab.Vocabulary`'s, checked
    when it was made), so they are not checked again (on 3,000,000 words the check takes 1.5 s).

    Raises
    ------
    EmbdebiasError
        A word contains a newline (``vocab.txt`` holds one word per line; a carriage
        return is stored as it is), cannot be encoded as UTF-8 (a lone surrogate), or
        is repeated.
    """
    words = words.tolist() if isinstance(words, Vocabulary) else list(words)
    joined = "\n".join(words)
    try:
        data = (joined + "\n").encode("utf-8") if words else b""
    except UnicodeEncodeError as exc:
        r = joined.count("\n", 0, exc.start)
        raise EmbdebiasError(f"{target}: the native format stores UTF-8 and cannot encode the word "
                             f"{quote(words[r])} (row {r}: {exc.reason}); drop or rename it, or use 'gensim-kv'") \
            from None
    lines = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(lines == 10)
    if len(ends) != len(words):
        r = next(i for i, w in enumerate(words) if "\n" in w)
        raise EmbdebiasError(f"{target}: the native format cannot store words containing a newline: "
                             f"{quote(words[r])} (row {r}); drop or rename it, or use 'gensim-kv'")
    dups = np.zeros(0, np.int64) if unique else duplicate_rows(words)
    if len(dups):
        r = int(dups[0])
        raise EmbdebiasError(f"{target}: the word {quote(words[r])} is repeated (row {r}); the native format "
                             f"needs unique words")
    offsets = np.zeros(len(words) + 1, np.int64)
    offsets[1:] = ends + 1
    return data, offsets


def _native_arrays(words) -> tuple | None:
    """``(text, offsets, order)`` of a vocabulary read from the native format (checked when opened), else None."""
    return words._native if isinstance(words, Vocabulary) else None


def _code_point_order(words: list) -> np.ndarray:
    """The rows of ``words`` sorted by code point (UTF-8 byte order): ``vocab_sorted.npy``."""
    return np.array(sorted(range(len(words)), key=words.__getitem__), dtype=np.int64)


#: ``id(vocabulary) -> (text, offsets, order)``: the native arrays of a :class:`Vocabulary` not read
#: from the native format, once written (dropped with the vocabulary: ``weakref.finalize``).
_WRITTEN: dict = {}


def _written_arrays(words: Vocabulary, target) -> tuple:
    """``(text, offsets, order)`` of ``words`` (a Vocabulary), encoded and sorted once per object.

    ``embdebias run`` writes hard and soft debias's outputs with the input's vocabulary: on
    3,000,000 words, encoding and sorting it took 2 s a copy. The words of a Vocabulary cannot
    change, so the second copy writes the first one's arrays.
    """
    key = id(words)
    found = _WRITTEN.get(key)
    if found is None or found[0]() is not words:
        listed = words.tolist()
        data, offsets = encode_vocabulary(listed, target, unique=True)
        found = (weakref.ref(words), np.frombuffer(data, np.uint8), offsets, _code_point_order(listed))
        _WRITTEN[key] = found
        weakref.finalize(words, _WRITTEN.pop, key, None)
    return found[1:]


def write_vocabulary(words, directory, encoded: tuple[bytes, np.ndarray] | None = None) -> int:
    """Write ``vocab.txt``, ``vocab_offsets.npy`` and ``vocab_sorted.npy``; returns their :func:`vocab_crc32`.

    Words are sorted by code point, which is also UTF-8 byte order, so lookups can
    binary-search the sorted permutation.  ``encoded`` is :func:`encode_vocabulary`'s
    result when the caller has it already.  The vocabulary of a native-format input
    (a debiased copy's) is written as its three arrays are, with neither decoding nor
    sorting: a second's work for 400,000 words.
    """
    directory = Path(directory)
    native = _native_arrays(words)
    if native is None and encoded is None and isinstance(words, Vocabulary):
        native = _written_arrays(words, directory)
    if native is not None and encoded is None:
        text, offsets, order = native
        with open(directory / VOCAB_TEXT, "wb") as fh:
            fh.write(memoryview(np.ascontiguousarray(text)).cast("B") if len(text) else b"")
        np.save(directory / VOCAB_OFFSETS, np.asarray(offsets, dtype=np.int64))
        np.save(directory / VOCAB_SORTED, np.asarray(order, dtype=np.int64))
        return vocab_crc32(text, offsets, order)
    checked = isinstance(words, Vocabulary)  # unique by construction
    words = words.tolist() if checked else list(words)
    data, offsets = encode_vocabulary(words, directory, unique=checked) if encoded is None else encoded
    with open(directory / VOCAB_TEXT, "wb") as fh:
        fh.write(data)
    np.save(directory / VOCAB_OFFSETS, offsets)
    order = _code_point_order(words)
    np.save(directory / VOCAB_SORTED, order)
    return vocab_crc32(np.frombuffer(data, np.uint8), offsets, order)


class NativeWriter:
    """Write a native-format directory chunk by chunk, atomically.

    Use as a context manager and :meth:`append` the rows in order: each block goes
    straight to the file, so memory stays one block whatever the size.  On a clean
    exit the directory is renamed into place; on an exception nothing is left behind.

    The output is locked from the start to the rename (:func:`embdebias._lock.output_lock`,
    ``.NAME.embdebias-lock`` beside it): a second writer of the same path, in another
    process, fails at once with :class:`~embdebias.errors.OutputLockedError` naming this
    one's pid and host, so two writers never interleave. :attr:`token` is the lock's token.

    :attr:`vectors` is the older interface: a writable ``(n, d)`` float32 memory map
    of the whole matrix (rows not appended yet are zeros).  Pages written through it
    count in the process's resident memory until the file is closed, so use it only
    for the few rows that need a second look, after appending (HardDebias's equalize
    pairs).  Once it has been used, :meth:`append` is refused.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from embdebias import Embedding
    >>> emb = Embedding(["he", "she", "nurse"], np.eye(3))
    >>> out = Path(tempfile.mkdtemp()) / "doubled.embd"
    >>> with NativeWriter(out, list(emb.words), emb.shape) as w:
    ...     for start, stop, block in emb.iter_chunks(2):
    ...         w.append(2 * block)
    >>> result = w.open()
    >>> len(result), result["nurse"].tolist()
    (3, [0.0, 0.0, 2.0])
    >>> import shutil; shutil.rmtree(out.parent)
    """

    def __init__(self, path, words, shape, *, inputs=(), purpose: str = "write"):
        self.path = Path(path)
        self.words = words
        self.shape = (int(shape[0]), int(shape[1]))
        self.inputs = inputs
        self.purpose = purpose
        self.rows_written = 0
        self.token = None
        self._memmap = None
        self._fh = None
        self._stack = None

    def __enter__(self) -> "NativeWriter":
        n, d = self.shape
        if len(self.words) != n:
            raise ValueError(f"{len(self.words)} words for {n} rows")
        if d < 1:
            raise EmbdebiasError(f"{self.path}: cannot write vectors of dimension {d} (the native format, like "
                                 f"every reader, needs a dimension of at least 1)")
        # Checked before any vector is copied (a native vocabulary was checked when it was opened).
        if isinstance(self.words, Vocabulary):  # a native one's arrays, or encoded and sorted once
            if _native_arrays(self.words) is None:
                _written_arrays(self.words, self.path)
            self._word_list, self._encoded = self.words, None
        else:
            self._word_list = list(self.words)
            self._encoded = encode_vocabulary(self._word_list, self.path)
        self._stack = contextlib.ExitStack()
        try:
            self.token = self._stack.enter_context(output_lock(self.path, purpose=self.purpose))
            self._tmp = self._stack.enter_context(atomic_dir(self.path, inputs=self.inputs, contents=NATIVE_FILES))
            self._fh = open(self._tmp / VECTORS, "wb")
            np.lib.format.write_array_header_1_0(self._fh, {"descr": np.lib.format.dtype_to_descr(_F32),
                                                            "fortran_order": False, "shape": self.shape})
            self._data_offset = self._fh.tell()
        except BaseException as err:
            self._abort(err)
            raise
        return self

    def append(self, block) -> None:
        """Write the next rows (a ``(m, d)`` array, converted to float32) after those written so far."""
        if self._memmap is not None:
            raise RuntimeError("append() after the vectors memory map was used")
        block = np.ascontiguousarray(block, dtype=np.float32)
        n, d = self.shape
        if block.ndim != 2 or block.shape[1] != d or self.rows_written + block.shape[0] > n:
            raise ValueError(f"a block of shape {block.shape} after {self.rows_written} of {n} rows of "
                             f"dimension {d}")
        if block.size:
            self._fh.write(memoryview(block).cast("B"))
        self.rows_written += block.shape[0]

    @property
    def vectors(self) -> np.ndarray:
        """A writable memory map of the whole ``(n, d)`` matrix (see the class docstring)."""
        if self._memmap is None:
            n, d = self.shape
            self._fh.truncate(self._data_offset + n * d * 4)  # the rows not appended read as zeros
            self._fh.close()
            self._memmap = np.zeros(self.shape, np.float32) if n == 0 else \
                np.memmap(self._tmp / VECTORS, dtype=np.float32, mode="r+", offset=self._data_offset,
                          shape=self.shape)
        return self._memmap

    def _commit(self) -> None:
        if self._memmap is not None:
            if isinstance(self._memmap, np.memmap):
                self._memmap.flush()
        elif self.rows_written != self.shape[0]:
            raise ValueError(f"{self.path}: {self.rows_written} rows appended, expected {self.shape[0]}")
        else:
            self._fh.close()
        self._memmap = None  # drop the map before the rename
        crc = write_vocabulary(self._word_list, self._tmp, self._encoded)
        meta = {"format": MAGIC, "version": VERSION, "count": self.shape[0], "dim": self.shape[1],
                "dtype": "float32", "vocab_crc32": crc}
        (self._tmp / META).write_text(json.dumps(meta), encoding="utf-8")

    def _abort(self, err: BaseException):
        self._memmap = None
        if self._fh is not None:
            self._fh.close()
        return self._stack.__exit__(type(err), err, err.__traceback__)

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            return self._abort(exc)
        try:
            self._commit()
        except BaseException as err:
            self._abort(err)
            raise
        return self._stack.__exit__(None, None, None)

    def open(self, name: str | None = None) -> Embedding:
        """The written embedding, opened memory-mapped."""
        return read_native(self.path, name=name)


def write_native(emb: Embedding, path, *, chunk_rows: int = DEFAULT_CHUNK_ROWS, inputs=()) -> None:
    """Write ``emb`` to a native-format directory, copying in chunks."""
    if emb.path:
        inputs = (*inputs, emb.path)
    with NativeWriter(path, emb.words, emb.shape, inputs=inputs) as w:
        for _, _, block in emb.iter_chunks(chunk_rows):
            w.append(block)
