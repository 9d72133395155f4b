"""Text vector formats: word2vec text / fastText ``.vec`` (header ``"n d"``) and GloVe (no header).

Reading is block-wise: the file is read in blocks of whole lines (8 MiB), each
block is parsed at once by pyarrow's multi-threaded CSV reader (space-delimited, no
quoting, tabs turned into spaces first; column 0 is the word as raw bytes, the
others float32), and the numbers go
straight into a preallocated ``(n, d)`` float32 array: the header gives ``n``; for a
headerless GloVe file the lines are counted first (a ``bytes.count`` pass, far
cheaper than parsing), except for gzip input, whose parsed blocks are concatenated
at the end (peak memory about twice the matrix).

When a block does not fit the fast path (a row with the wrong number of values, a
value that is not a number, NaN or infinity, undecodable UTF-8, a GloVe word that
contains spaces, a tab or a doubled space) the block is parsed again line by line,
which either accepts it (GloVe words with spaces: the last ``d`` fields are the
numbers, the rest is the word) or raises a :class:`~embdebias.errors.VectorFileError`
naming the exact line.  Blank lines are skipped.  A line may end with spaces (the
word2vec C tool writes one after the last value) and ``\\r\\n`` line ends are accepted.

Fields are separated by one space or one tab each (tab-separated files are common;
gensim's own reader splits at spaces only and rejects them).  So in word2vec text a
word cannot contain a tab, and the writer refuses one; in GloVe the word is
everything before the last ``d`` separators, tabs and spaces inside it kept as
they are.  An empty word (a line starting with a separator) is an error: the
word2vec binary format cannot store it, and it is almost always a damaged line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .._atomic import atomic_file
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding
from ..errors import EmbdebiasError, VectorFileError
from ._common import (TAB_TO_SPACE, check_block_finite, check_limit, check_no_empty_word, glove_dim, is_gzip,
                      make_embedding, open_binary, open_output, require_file)

#: Bytes of whole lines parsed at once (8 MiB measured faster than 32 MiB: cache-friendlier).
BLOCK_BYTES = 8 << 20
#: pyarrow's own block size inside one of our blocks (smaller, so both cores get work).
_ARROW_BLOCK = 4 << 20
_PARSE = pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                            double_quote=False, newlines_in_values=False, ignore_empty_lines=True)
_MAX_HEADER = 1 << 16


def _parse_header(first: bytes, path) -> tuple[int, int]:
    fields = first.split()
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        shown = first[:80].decode("utf-8", "replace").rstrip("\r\n")
        raise VectorFileError(path, f"expected a header line 'count dim' (two non-negative integers), "
                                    f"found {shown!r}", line=1)
    n, d = int(fields[0]), int(fields[1])
    if d < 1:
        raise VectorFileError(path, f"header gives dimension {d}, expected at least 1", line=1)
    return n, d


def _parse_block_fast(block: bytes, d: int, trailing: bool):
    """Parse a block with pyarrow; None when anything is irregular (the slow path decides)."""
    ncols = d + 2 if trailing else d + 1
    if b"\t" in block:
        block = block.translate(TAB_TO_SPACE)
    names = [str(i) for i in range(ncols)]
    types = {"0": pa.binary(), **{str(i): pa.float32() for i in range(1, d + 1)}}
    if trailing:
        types[str(d + 1)] = pa.binary()
    try:
        table = pacsv.read_csv(
            pa.py_buffer(block),
            read_options=pacsv.ReadOptions(column_names=names, block_size=_ARROW_BLOCK, use_threads=True),
            parse_options=_PARSE,
            convert_options=pacsv.ConvertOptions(column_types=types, null_values=[],
                                                 strings_can_be_null=False,
                                                 quoted_strings_can_be_null=False))
        if trailing and table.num_rows and pc.max(pc.binary_length(table.column(d + 1))).as_py() != 0:
            return None
        if table.num_rows and pc.min(pc.binary_length(table.column(0))).as_py() == 0:
            return None  # an empty word: the slow path names its line
        words = table.column(0).cast(pa.string()).to_pylist()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    vectors = np.empty((table.num_rows, d), dtype=np.float32)
    for j in range(d):
        vectors[:, j] = table.column(j + 1).to_numpy()
    if not np.isfinite(vectors).all():
        return None
    return words, vectors


def _parse_block_slow(block: bytes, first_line: int, d: int, path, words_with_spaces: bool,
                      header_dim: bool):
    """Parse a block line by line: exact error messages, and GloVe words containing spaces."""
    words, rows = [], []
    expected = f"{d} values after the word" + (" (the header's dimension)" if header_dim else
                                              " (the number of values on the first line)")
    for k, raw in enumerate(block.split(b"\n")):
        line = first_line + k
        stripped = raw.translate(TAB_TO_SPACE).rstrip(b" \r\n")
        if not stripped.strip():
            continue
        if words_with_spaces:
            fields = stripped.rsplit(b" ", d)
            if len(fields) != d + 1:
                raise VectorFileError(path, f"expected a word and {expected}, found "
                                            f"{len(fields)} field(s)", line=line)
            fields[0] = raw[:len(fields[0])]  # the word as written: its tabs stay tabs
        else:
            fields = stripped.split(b" ")
            if len(fields) != d + 1:
                raise VectorFileError(path, f"expected {expected}, found {len(fields) - 1}", line=line)
        try:
            word = fields[0].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise VectorFileError(path, f"undecodable UTF-8 in the word {fields[0][:40]!r} "
                                        f"(byte {exc.start}: {exc.reason})", line=line) from None
        if not word:
            raise VectorFileError(path, "empty word: the line starts with a space or tab; expected "
                                        "'word v1 ... vd'", line=line)
        try:
            with np.errstate(over="ignore"):  # 1e39 becomes inf and is reported below
                values = np.array([float(f) for f in fields[1:]], dtype=np.float32)
        except ValueError:
            for j, f in enumerate(fields[1:], start=1):
                try:
                    float(f)
                except ValueError:
                    raise VectorFileError(path, f"value {j} of {word!r} is not a number: "
                                                f"{f[:40].decode('utf-8', 'replace')!r}", line=line) from None
            raise
        if not np.isfinite(values).all():
            j = int(np.flatnonzero(~np.isfinite(values))[0])
            raise VectorFileError(path, f"value {j + 1} of {word!r} is {fields[j + 1].decode('ascii', 'replace')} "
                                        f"(as float32: {values[j]}); expected finite numbers", line=line)
        words.append(word)
        rows.append(values)
    vectors = np.array(rows, dtype=np.float32) if rows else np.zeros((0, d), np.float32)
    return words, vectors


def _line_of_row(block: bytes, first_line: int, row: int) -> int:
    """Line number of the ``row``-th (0-based) non-blank line of ``block``."""
    seen = -1
    for k, raw in enumerate(block.split(b"\n")):
        if raw.strip():
            seen += 1
            if seen == row:
                return first_line + k
    return first_line + block.count(b"\n")


def _count_lines(path, stop_at: int | None) -> int:
    """Lines in a plain file (a last line without newline counts), stopping early at ``stop_at``."""
    count, last = 0, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(16 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
            if stop_at is not None and count >= stop_at:
                return count
    return count + (last != b"\n")


def _blocks(fh, carry: bytes, block_bytes: int):
    """Yield blocks of whole lines (the last one may lack its newline)."""
    while True:
        chunk = fh.read(block_bytes)
        if not chunk:
            if carry:
                yield carry
            return
        data = carry + chunk if carry else chunk
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data  # one line longer than a block: keep reading
            continue
        carry = data[cut:]
        yield data[:cut]


def read_text(path, *, header: bool, limit: int | None = None, name: str | None = None,
              words_with_spaces: bool = False, block_bytes: int = BLOCK_BYTES) -> Embedding:
    """Read a text vector file (gzip-compressed or not).

    Parameters
    ----------
    path : path-like
    header : bool
        True for word2vec text / fastText ``.vec`` (first line ``"count dim"``), False
        for GloVe (the dimension is the number of values on the first line).
    limit : int, optional
        Keep the first ``limit`` words; reading stops there.
    words_with_spaces : bool
        Take the last ``d`` fields as the numbers and the rest as the word (GloVe 840B
        has a few words with spaces).  When false, a line with more than ``d`` values
        is an error.
    """
    path = require_file(path)
    limit = check_limit(limit)
    with open_binary(path) as fh:
        first = fh.readline(_MAX_HEADER)
        if not first.strip():
            what = "a header line 'count dim'" if header else "lines 'word v1 ... vd'"
            raise VectorFileError(path, f"empty file: expected {what}", line=1)
        if header:
            n, d = _parse_header(first, path)
            first_data = fh.readline()
            carry, line_no = first_data, 2
            n_alloc = n if limit is None else min(n, limit)
        else:
            n = None
            d = glove_dim(first)
            if d < 1:
                raise VectorFileError(path, "expected a word followed by its values, found "
                                            f"{first[:80].decode('utf-8', 'replace').rstrip()!r}", line=1)
            carry, line_no, first_data = first, 1, first
            n_alloc = None if is_gzip(path) else _count_lines(path, limit)
            if limit is not None and n_alloc is not None:
                n_alloc = min(n_alloc, limit)
        trailing = first_data.rstrip(b"\r\n").endswith((b" ", b"\t"))
        want = n_alloc if n_alloc is not None else limit
        if want is not None:  # do not read far past the rows wanted
            block_bytes = min(block_bytes, max(1 << 16, int(want * len(first_data) * 1.5)))
        out = np.empty((n_alloc, d), np.float32) if n_alloc is not None else None
        parts: list[np.ndarray] = []
        words: list[str] = []
        rows = 0
        for block in _blocks(fh, carry, block_bytes):
            if want is not None and rows >= want:
                if not (n is not None and rows == n and (limit is None or limit > n)):
                    break
                if block.strip():  # all n rows read: anything but blank lines is one too many
                    raise VectorFileError(path, f"the header says {n} words but there are more rows",
                                          line=_line_of_row(block, line_no, 0))
                line_no += block.count(b"\n")
                continue
            parsed = _parse_block_fast(block, d, trailing)
            if parsed is None:
                parsed = _parse_block_slow(block, line_no, d, path, words_with_spaces, header)
            block_words, block_vectors = parsed
            k = len(block_words)
            if n is not None and rows + k > n and (limit is None or limit > n):
                extra = _line_of_row(block, line_no, n - rows)
                raise VectorFileError(path, f"the header says {n} words but there are more rows", line=extra)
            if want is not None:
                k = min(k, want - rows)
            words.extend(block_words[:k] if k < len(block_words) else block_words)
            if out is not None:
                out[rows:rows + k] = block_vectors[:k]
            else:
                parts.append(block_vectors[:k])
            rows += k
            line_no += block.count(b"\n")
    if n is not None and rows < n and (limit is None or rows < limit):
        raise VectorFileError(path, f"the header says {n} words but the file ends after {rows}",
                              line=line_no)
    if out is None:
        out = np.concatenate(parts) if parts else np.zeros((0, d), np.float32)
    elif rows < len(out):
        out = out[:rows]
    first_row_line = 2 if header else 1
    return make_embedding(words, out, path, name, line_of=lambda r: r + first_row_line)


def write_text(emb: Embedding, path, *, header: bool, format_name: str,
               chunk_rows: int = DEFAULT_CHUNK_ROWS, inputs=()) -> None:
    """Write ``emb`` as text, atomically and in chunks (gzip when ``path`` ends in ``.gz``).

    Values are written with the shortest decimal that reads back as the same float32
    (pyarrow's float-to-string cast), so a round trip is exact.
    """
    target = Path(path)
    words = emb.words.tolist()
    if not header and len(words) == 0:
        # A GloVe file's dimension is the number of values on its first line.
        raise EmbdebiasError(f"{target}: cannot write an empty embedding (0 words) in {format_name} format: "
                             f"it has no header to keep the dimension; use 'word2vec-text' or 'native'")
    array = pa.array(words, pa.string())
    check_no_empty_word(pc.equal(pc.binary_length(array), 0).to_numpy(zero_copy_only=False), target,
                        format_name)
    for bad_char, what, instead in (("\n", "a newline", "'gensim-kv'"), ("\r", "a carriage return", "'native'"),
                                    (" ", "a space", "'glove' or 'native'"), ("\t", "a tab", "'glove' or 'native'")):
        if bad_char in " \t" and not header:
            continue  # GloVe readers take the last d fields as numbers: spaces and tabs are fine
        if pc.any(pc.match_substring(array, bad_char)).as_py():
            bad = [w for w in words if bad_char in w][:5]
            raise EmbdebiasError(f"{target}: {format_name} format cannot store words containing "
                                 f"{what}: {bad!r}; use {instead}")
    inputs = (*inputs, emb.path) if emb.path else inputs
    with atomic_file(target, inputs=inputs) as tmp, open_output(tmp, target) as fh:
        if header:
            fh.write(f"{len(emb)} {emb.dim}\n".encode("ascii"))
        for start, stop, block in emb.iter_chunks(chunk_rows):
            check_block_finite(block, start, words, target)
            columns = [pa.array(words[start:stop], pa.string())]
            columns += [pa.array(block[:, j]).cast(pa.string()) for j in range(block.shape[1])]
            lines = pc.binary_join_element_wise(*columns, " ")
            listed = pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines)
            fh.write(pc.binary_join(listed, "\n")[0].as_buffer())
            fh.write(b"\n")
