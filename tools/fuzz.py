#!/usr/bin/env python3
"""Seeded mutation fuzzer of embdebias's readers, writers and command line.

Small valid files are written in every format the library reads, then mutated
(structure-aware edits and byte-level damage); each mutant is run through
``embdebias info FILE`` and ``embdebias convert FILE OUT`` exactly as ``python -m
embdebias`` runs them, with a memory cap and a timeout, in a fresh directory.

Every run gets one outcome class:

==============  ==========================================================================
ok              exit 0 and what was read is what the mutation allows
clean           exit 2, one ``embdebias: error:`` line (warnings aside), no traceback
traceback       an uncaught exception (exit 1), or "Traceback" anywhere on stderr
abort           killed by a signal (SIGABRT, SIGSEGV, SIGKILL from the memory cap, ...)
hang            still running at the timeout
misread         exit 0, but the embedding read differs from what the mutation allows
                (the most important class: a damaged file read wrongly without a word)
code-exec       a pickle payload ran (it creates a marker file)
roundtrip       ``convert`` wrote a file that its own reader rejects or reads differently
leftover        hidden temporaries (.tmp/.work/.old/dot files) or a partial output left
                behind, or the input changed
oversize        an error message longer than 400 characters (its paths aside) or quoting > 80 of the input
unclean         any other exit status, or exit 2 with more than one error line
==============  ==========================================================================

How a silent misread is found.  The child process loads the file through the same
``embdebias.io.load`` the command calls (the function is wrapped to keep its result),
and after an exit 0 dumps the words, the vectors and the result of looking each word
up.  Each mutant carries an expectation (:class:`Expect`) derived from the baseline
(what the library reads from the unmutated seed): *must fail*, *fail or the same*, or
*the same except these rows* (rows whose bytes the mutation touched may change, every
other row must keep its word, its vector and its place; a dropped duplicate must come
with a warning).  Byte-level mutations get their expectation from a map of the seed
(header, record spans, npy header and data, fastText regions), so that their checks
are as strict as the structure-aware ones.

Runs are cheap: ``--jobs`` long-lived worker processes import embdebias once and fork
a child per run (memory cap via RLIMIT_AS, process group killed at the timeout).

Usage::

    python tools/fuzz.py --seed 0 --mutants 3000 --out fuzz-report.md --keep-failures fuzz-failures
    python tools/fuzz.py --seed 0 --only 17 --keep-failures /tmp/f   # one mutant again
    python tools/fuzz.py --structured --mutants 3200 --seed 0 --timeout 5 --out benchmarks/results/fuzz_structured.md
    python tools/fuzz.py --structured --kinds params fairness-csv --mutants 200   # some kinds only

``--structured`` builds each case from a model instead: the vector formats (an independent
oracle of words and float32 values) and the user files (fitted-parameter files, attribute
files, WEAT test files, sweep configurations, fairness CSVs; a valid one must give the
model's summary, a damaged one an error, a hostile name a refusal or a safe path component).

Exit status 1 when any bad class (all but ok and clean) occurred.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import gzip
import io
import json
import os
import pickle
import queue
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

import numpy as np

BAD = ("code-exec", "hang", "abort", "traceback", "misread", "roundtrip", "leftover", "oversize", "unclean")
CLASSES = ("ok", "clean", *BAD)
MARKER = "fuzz-pwned"
MAX_MESSAGE = 400
MAX_QUOTE = 80
DUMP_CELLS = 10_000_000

# --------------------------------------------------------------------------- seeds
WORDS = ["the", "and", "king", "queen", "café", "naïve", "日本語", "don't", "x", "2024", "he", "she"]
GLOVE_WORDS = [*WORDS[:8], "new york", *WORDS[9:]]
DIM = 6

#: format key -> (file name of the seed, words); the gz variants are the same formats compressed.
SEED_FILES = {
    "word2vec-bin": ("seed.bin", WORDS),
    "word2vec-bin-gz": ("seed.bin.gz", WORDS),
    "word2vec-text": ("seed.txt", WORDS),
    "word2vec-text-gz": ("seed.txt.gz", WORDS),
    "fasttext-vec": ("seed.vec", WORDS),
    "glove": ("seed.glove.txt", GLOVE_WORDS),
    "fasttext-bin": ("seed.ft.bin", WORDS),
    "gensim-kv": ("seed.kv", WORDS),
    "native": ("seed.embd", WORDS),
    "special": ("seed.txt", WORDS),
}
#: Inputs of other commands: a pairs file of ``debias --definitional/--specific`` and a scores CSV of
#: ``fairness``; their files, besides the mutated entry, are a valid embedding and a valid pairs file.
SIDE_EMBEDDING, SIDE_PAIRS = "emb.txt", "good_pairs.txt"
SIDE_SEEDS = {
    "pair-list": ("pairs.txt", b"she he\nqueen king\n# a comment\n\nshe\the\n"),
    "word-list": ("words.txt", b"she\nhe\n# a comment\n\nqueen\nking\ncaf\xc3\xa9\n"),
    "scores-csv": ("scores.csv", b"id,group,score,label\n1,a,0.2,0\n2,b,0.7,1\n3,a,0.9,1\n4,b,0.1,0\n"
                                 b"5,a,0.55,1\n6,b,0.35,0\n"),
}
#: "fault": a 2.6 MB word2vec binary converted while a signal arrives (SIGKILL, SIGTERM, SIGINT), then
#: converted again with --force: no temporaries may stay (SIGKILL's are cleaned by the next run).
FAULT_ROWS, FAULT_DIM = 20_000, 32
FORMATS = (*SEED_FILES, "fault", *SIDE_SEEDS)
OUTPUT_NAMES = ("out.txt", "out.bin", "out.bin.gz", "out.glove.txt", "out.vec", "out.kv", "out.embd", "out.ft.bin")


@dataclasses.dataclass
class Seed:
    """A valid file (or directory) of one format, as bytes, and what the library reads from it."""

    fmt: str
    entry: str                      # path of the input, relative to the case's input directory
    files: dict                     # relative path -> bytes
    words: list = None              # baseline: words and vectors the library reads
    vectors: np.ndarray = None

    @property
    def kind(self) -> str:
        """The format without its compression: the key of the structure-aware mutators."""
        return self.fmt[:-3] if self.fmt.endswith("-gz") else self.fmt

    @property
    def compressed(self) -> bool:
        return self.fmt.endswith("-gz")


def make_seeds(workdir: Path) -> dict:
    """Write one small valid file per format with the library's own writers; return {fmt: Seed}."""
    from embdebias import io as eio
    from embdebias.embedding import Embedding

    rng = np.random.default_rng(12345)
    vectors = rng.normal(size=(len(WORDS), DIM)).astype(np.float32)
    vectors[3, 2] = 1e-3  # small and large magnitudes, an exact zero
    vectors[4, 0] = 12345.5
    vectors[5, 5] = 0.0
    seeds = {}
    for fmt, (name, words) in SEED_FILES.items():
        where = workdir / fmt
        where.mkdir()
        eio.save(Embedding(words, vectors), where / name)
        files = {}
        for p in sorted(where.rglob("*")):
            if p.is_file():
                files[str(p.relative_to(where))] = p.read_bytes()
        seeds[fmt] = Seed(fmt, name, files)
    words = [f"w{i}" for i in range(FAULT_ROWS)]
    (workdir / "fault").mkdir()
    eio.save(Embedding(words, rng.normal(size=(FAULT_ROWS, FAULT_DIM)).astype(np.float32)),
             workdir / "fault" / "seed.bin")
    seeds["fault"] = Seed("fault", "seed.bin", {"seed.bin": (workdir / "fault" / "seed.bin").read_bytes()})
    for fmt, (name, content) in SIDE_SEEDS.items():
        files = {name: content}
        if fmt in ("pair-list", "word-list"):
            files[SIDE_EMBEDDING] = seeds["word2vec-text"].files["seed.txt"]
            files[SIDE_PAIRS] = b"she he\nqueen king\n"
        write_files(workdir / fmt, files)
        seeds[fmt] = Seed(fmt, name, files)
    return seeds


# --------------------------------------------------------------------------- expectations
@dataclasses.dataclass
class Expect:
    """What an exit 0 may have read.

    ``must_fail``: nothing may be read.  Otherwise the result must equal ``rows`` (a
    list of baseline row numbers, or (word, vector) pairs for rows the mutation sets
    exactly), except the positions in ``free`` (any word and finite vector there);
    ``drop_tail`` trailing rows may be missing (a GloVe file cut short); ``words_free``
    / ``values_free`` let every word / every vector change (pickle, fastText regions).
    """

    must_fail: bool = False
    rows: list | None = None        # None: the baseline rows unchanged
    free: frozenset = frozenset()
    drop_tail: int = 0
    words_free: bool = False
    values_free: bool = False
    note: str = ""
    check: bool = True              # False: inputs that are not embeddings (word lists, CSV): crash classes only


FAIL = Expect(must_fail=True)
UNKNOWN = Expect(check=False, note="any reading is a valid file: not checked")
NOCHECK = Expect(check=False, note="not an embedding: only crashes, hangs, leftovers and messages are checked")
SAME = Expect()


def fail(note: str) -> Expect:
    return Expect(must_fail=True, note=note)


def same(note: str = "") -> Expect:
    return Expect(note=note)


def values_free(note: str) -> Expect:
    return Expect(values_free=True, note=note + ": the words stay, vectors may change")


def free_rows(rows, note: str = "", **kw) -> Expect:
    return Expect(free=frozenset(int(r) for r in rows), note=note, **kw)


@dataclasses.dataclass
class Mutant:
    """A damaged input: files to write (bytes, or a special-file token) and its expectation."""

    index: int
    fmt: str
    mutator: str
    desc: str
    entry: str
    files: dict
    expect: Expect
    output: str = "out.txt"
    input_format: str | None = None
    fault: tuple | None = None      # (signal name, seconds): kill the first convert, then convert again


# --------------------------------------------------------------------------- file models
def split_lines(data: bytes) -> tuple[list, bool]:
    """Lines without their b'\\n' and whether the data ended with one."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        return lines[:-1], True
    return lines, False


def text_layout(data: bytes, header: bool) -> list:
    """(start, end, row) of each line, end past its newline; row -1 is the header."""
    spans, pos, row = [], 0, -1 if header else 0
    for line in data.split(b"\n"):
        end = min(pos + len(line) + 1, len(data))
        if pos < len(data):
            spans.append((pos, end, row))
        pos += len(line) + 1
        row += 1
    return spans


def bin_records(data: bytes) -> tuple[bytes, list]:
    """Header line and [(word bytes, vector bytes)] of a word2vec binary file as this writer lays it out."""
    nl = data.index(b"\n")
    header = data[:nl]
    n, d = map(int, header.split())
    pos, records = nl + 1, []
    for _ in range(n):
        sp = data.index(b" ", pos)
        word = data[pos:sp]
        records.append((word, data[sp + 1:sp + 1 + 4 * d]))
        pos = sp + 1 + 4 * d + 1  # the writer ends each record with b"\n"
    return header, records


def bin_layout(data: bytes) -> list:
    header, records = bin_records(data)
    spans, pos = [(0, len(header) + 1, -1)], len(header) + 1
    for r, (word, vec) in enumerate(records):
        end = pos + len(word) + 1 + len(vec) + 1
        # The newline ending the previous record also belongs to this one: readers may take a byte there
        # as the start of this word (the newline is optional in the format).
        spans.append((pos - (r > 0), end, r))
        pos = end
    return spans


def build_bin(header: bytes, records: list, sep: bytes = b"\n") -> bytes:
    return header + b"\n" + b"".join(w + b" " + v + sep for w, v in records)


def npy_header_len(data: bytes) -> int:
    """Bytes before the array data of an .npy file (0 when not an .npy)."""
    if data[:6] != b"\x93NUMPY":
        return 0
    if data[6] == 1:
        return 10 + struct.unpack("<H", data[8:10])[0]
    return 12 + struct.unpack("<I", data[8:12])[0]


def npy_bytes(array=None, *, header_text: str | None = None, data: bytes | None = None, version=(1, 0)) -> bytes:
    """An .npy file: numpy's own for ``array``, or a hand-made header text and data."""
    if header_text is None:
        buf = io.BytesIO()
        np.save(buf, array, allow_pickle=False)
        return buf.getvalue()
    text = header_text.encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + b" " * (pad % 64) + b"\n"
    head = b"\x93NUMPY" + bytes(version)
    head += struct.pack("<H", len(text)) if version[0] == 1 else struct.pack("<I", len(text))
    return head + text + (data or b"")


def ft_layout(data: bytes) -> dict:
    """Byte regions of a fastText .bin model written by gensim (new format)."""
    vocab_size = struct.unpack("<3i", data[64:76])[0]
    pos, words = 92, []
    for _ in range(vocab_size):
        end = data.index(b"\x00", pos)
        words.append((pos, end + 1 + 9))
        pos = end + 1 + 9
    m, n = struct.unpack("<2q", data[pos + 1:pos + 17])
    matrix = pos + 17
    out = matrix + 4 * m * n
    return {"args": (8, 64), "counts": (64, 92), "words": words, "quant": pos, "shape": (pos + 1, pos + 17),
            "matrix": (matrix, out), "output": (out, len(data)), "n": n, "m": m}


# --------------------------------------------------------------------------- byte-level mutations
INTERESTING = [b"\x00", b"\xff", b"\n", b" ", b"\r", b"\t", b"\x80", b"-", b".", b"e", b"9", b"0", b"\xc3"]


def byte_op(data: bytes, rng) -> tuple[bytes, int, int, str, str]:
    """One random byte-level edit: (new data, start, end in old coordinates, kind, description)."""
    n = len(data)
    op = rng.choice(["flip", "flip", "set", "insert", "delete", "truncate", "dup", "append"])
    if n == 0:
        op = "append"
    pos = int(rng.integers(0, max(n, 1)))
    if op == "flip":
        bit = int(rng.integers(0, 8))
        b = bytes([data[pos] ^ (1 << bit)])
        return data[:pos] + b + data[pos + 1:], pos, pos + 1, "replace", f"flip bit {bit} of byte {pos}"
    if op == "set":
        b = INTERESTING[int(rng.integers(len(INTERESTING)))]
        return data[:pos] + b + data[pos + 1:], pos, pos + 1, "replace", f"byte {pos} := {b!r}"
    if op == "insert":
        b = INTERESTING[int(rng.integers(len(INTERESTING)))] * int(rng.integers(1, 4))
        return data[:pos] + b + data[pos:], pos, pos + 1, "insert", f"insert {b!r} at {pos}"
    if op == "delete":
        k = int(rng.integers(1, 17))
        return data[:pos] + data[pos + k:], pos, min(pos + k, n), "delete", f"delete {k} bytes at {pos}"
    if op == "truncate":
        return data[:pos], pos, n, "truncate", f"truncate to {pos} of {n} bytes"
    if op == "dup":
        k = int(rng.integers(1, 33))
        return data[:pos] + data[pos:pos + k] * 2 + data[pos + k:], pos, min(pos + k, n), "insert", \
            f"duplicate {k} bytes at {pos}"
    junk = bytes(rng.integers(0, 256, int(rng.integers(1, 40)), dtype=np.uint8))
    return data + junk, n, n, "append", f"append {len(junk)} random bytes"


def spans_expect(spans: list, a: int, b: int, kind: str, *, glove: bool, n_rows: int) -> Expect:
    """The expectation of damaging bytes [a, b) of a record-structured file with these spans."""
    touched = [row for start, end, row in spans if start < max(b, a + 1) and end > a]
    if kind == "append":
        return Expect(rows=list(range(n_rows)), must_fail=False, note="trailing bytes: fail or the same") \
            if not glove else free_rows([], "trailing bytes")
    if -1 in touched:
        return fail("header damaged") if kind == "truncate" else same("header damaged: fail or the same")
    if not touched:
        return same("no record touched")
    if kind == "truncate":
        first = min(touched)
        if glove and first == 0:
            return UNKNOWN  # a GloVe file cut inside its first line may be a valid file of a smaller dimension
        if glove:
            return Expect(rows=list(range(first + 1)), free=frozenset([first]), drop_tail=1,
                          note="GloVe cut short: a prefix")
        return free_rows([first], "cut inside the last record") if first == n_rows - 1 else fail("records cut off")
    return free_rows(touched, "bytes of these rows damaged")


def byte_level(seed: Seed, rng) -> tuple[dict, str, Expect]:
    """A random byte-level edit of one member file of the seed, with its expectation."""
    members = [seed.entry] if seed.fmt in SIDE_SEEDS else sorted(seed.files)
    member = members[int(rng.integers(len(members)))]
    data = seed.files[member]
    new, a, b, kind, desc = byte_op(data, rng)
    files = dict(seed.files)
    files[member] = new
    return files, f"{member}: {desc}", byte_expect(seed, member, data, a, b, kind)


def byte_expect(seed: Seed, member: str, data: bytes, a: int, b: int, kind: str) -> Expect:
    if seed.fmt in SIDE_SEEDS:
        return NOCHECK
    n = len(seed.words)
    if seed.compressed or member.endswith(".gz"):
        return same("gzip data damaged: the CRC must catch it, or the content is unchanged")
    if seed.kind in ("word2vec-text", "fasttext-vec", "glove", "special"):
        glove = seed.kind == "glove"
        return spans_expect(text_layout(data, header=not glove), a, b, kind, glove=glove, n_rows=n)
    if seed.kind == "word2vec-bin":
        return spans_expect(bin_layout(data), a, b, kind, glove=False, n_rows=n)
    if member.endswith(".npy"):
        return npy_expect(seed, member, data, a, b, kind)
    if seed.kind == "native":
        return native_expect(seed, member, a, b, kind)
    if seed.kind == "gensim-kv":
        return Expect(words_free=True, note="pickle damaged: only words may change")
    if seed.kind == "fasttext-bin":
        return ft_expect(data, a, b, kind)
    return same()


def native_expect(seed: Seed, member: str, a: int, b: int, kind: str) -> Expect:
    """Damage to embdebias.json or vocab.txt (the .npy members go to :func:`npy_expect`)."""
    if member.endswith("vocab.txt") and kind in ("replace", "insert", "delete"):
        ends = np.cumsum([len(w.encode()) + 1 for w in seed.words])
        rows = [r for r, w in enumerate(seed.words) if ends[r] - len(w.encode()) - 1 < max(b, a + 1) and ends[r] > a]
        return free_rows(rows, "bytes of these words damaged")
    return same("native metadata or vocabulary damaged: fail or the same")


def npy_expect(seed: Seed, member: str, data: bytes, a: int, b: int, kind: str) -> Expect:
    hl = npy_header_len(data)
    if a < hl or kind in ("insert", "delete"):
        if kind == "append":
            return same("bytes after the array")
        if kind in ("insert", "delete") and a >= hl and not member.endswith("vectors.npy"):
            return same("index data shifted: fail or the same")
        return same("npy header damaged (or data shifted): fail or the same")
    if kind == "append":
        return same("bytes after the array")
    if not member.endswith("vectors.npy"):
        return same("index array damaged: fail or the same")
    if kind == "truncate":
        return fail("vectors cut short")
    row_bytes = 4 * DIM
    rows = range((a - hl) // row_bytes, (max(b, a + 1) - 1 - hl) // row_bytes + 1)
    return free_rows(rows, "vector bytes damaged")


def ft_word_row(lay: dict, data: bytes, a: int, b: int, kind: str) -> int | None:
    """The word entry that a replaced byte, or bytes inserted or deleted inside a word's text, belong to."""
    for r, (start, end) in enumerate(lay["words"]):
        if kind == "replace" and start <= a < end:
            return r
        if kind in ("insert", "delete") and start <= a and b < data.index(b"\x00", start):
            return r
    return None


def ft_expect(data: bytes, a: int, b: int, kind: str) -> Expect:
    lay = ft_layout(data)
    if kind == "truncate":
        return same("output layer cut short") if a >= lay["output"][0] else fail("fastText model cut short")
    if kind == "append":
        return same("bytes after the model")
    if a < 8 or lay["counts"][0] <= a < lay["counts"][1] or lay["shape"][0] - 1 <= a < lay["shape"][1]:
        return same("fastText magic, counts or matrix shape damaged")
    row = ft_word_row(lay, data, a, b, kind)
    if row is not None:
        return free_rows([row], "fastText word entry damaged")
    if kind != "replace":
        return same("fastText model shifted")
    if a < lay["args"][1]:
        return Expect(values_free=True, note="fastText settings damaged: vectors may change")
    if lay["matrix"][0] <= a < lay["matrix"][1]:
        return Expect(values_free=True, note="fastText input matrix damaged")
    return same("fastText output layer damaged")


# --------------------------------------------------------------------------- structure-aware: text
def text_parts(seed: Seed) -> tuple[bytes | None, list]:
    data = seed_payload(seed)
    lines, _ = split_lines(data)
    if seed.kind == "glove":
        return None, lines
    return lines[0], lines[1:]


def seed_payload(seed: Seed) -> bytes:
    data = seed.files[seed.entry]
    return gzip.decompress(data) if seed.compressed else data


def pack(seed: Seed, payload: bytes) -> dict:
    files = dict(seed.files)
    files[seed.entry] = gzip.compress(payload, mtime=0) if seed.compressed else payload
    return files


def join_text(header, lines, nl=b"\n", final=True) -> bytes:
    all_lines = ([header] if header is not None else []) + list(lines)
    return nl.join(all_lines) + (nl if final else b"")


def pick(rng, n: int) -> int:
    return int(rng.integers(n))


def word_split(word: bytes, rng) -> int:
    """An interior position of a word (between UTF-8 characters), or 1 for a one-character word."""
    text = word.decode()
    if len(text) < 2:
        return len(word)
    return len(text[:int(rng.integers(1, len(text)))].encode())


HEADER_COUNTS = [("n+1", fail, "count larger than the records"),
                 ("n-1", fail, "count smaller than the records: a record would be ignored"),
                 ("0", fail, "count 0"), ("-1", fail, "negative count"), ("1000000000", fail, "count 1e9"),
                 ("1000000000000000000", fail, "count 1e18"), ("99999999999999999999999", fail, "count > int64"),
                 ("n.0", same, "count written as a float"), ("+n", same, "count with a plus sign"),
                 ("0n", same, "count with a leading zero"), ("n ", same, "trailing space")]
HEADER_DIMS = [("d+1", fail, "dimension too large"), ("d-1", fail, "dimension too small"), ("0", fail, "dim 0"),
               ("-1", fail, "negative dim"), ("1000000", fail, "dim 1e6 in a small file"),
               ("1000000000000000000", fail, "dim 1e18"), ("d.0", same, "dim written as a float"),
               ("d\t", same, "trailing tab")]


def header_value(template: str, value: int) -> bytes:
    return template.replace("n+1", str(value + 1)).replace("n-1", str(value - 1)).replace("d+1", str(value + 1)) \
        .replace("d-1", str(value - 1)).replace("n", str(value)).replace("d", str(value)).encode()


def m_header(seed: Seed, rng):
    """Rewrite the 'count dim' header: huge, zero, negative, float, extra or missing fields, a BOM."""
    header, rest = text_or_bin_body(seed)
    n, d = map(int, header.split())
    choice = pick(rng, len(HEADER_COUNTS) + len(HEADER_DIMS) + 5)
    if choice < len(HEADER_COUNTS):
        tpl, exp, desc = HEADER_COUNTS[choice]
        new = header_value(tpl, n) + b" " + str(d).encode()
    elif choice < len(HEADER_COUNTS) + len(HEADER_DIMS):
        tpl, exp, desc = HEADER_DIMS[choice - len(HEADER_COUNTS)]
        new = str(n).encode() + b" " + header_value(tpl, d)
    else:
        tpl, exp, desc = [(b"%d %d 3", fail, "a third header field ('40 8 3')"),
                          (b"%d", fail, "only one header field"),
                          (b"\xef\xbb\xbf%d %d", same, "UTF-8 BOM before the header"),
                          (b"%d  %d", same, "two spaces in the header"),
                          (b" %d %d", same, "leading space in the header")
                          ][choice - len(HEADER_COUNTS) - len(HEADER_DIMS)]
        new = tpl % ((n, d) if tpl.count(b"%d") == 2 else (n,))
    return pack(seed, new + rest), f"header {header!r} -> {new!r}: {desc}", exp(desc)


def text_or_bin_body(seed: Seed) -> tuple[bytes, bytes]:
    data = seed_payload(seed)
    nl = data.index(b"\n")
    return data[:nl], data[nl:]


def m_line_ends(seed: Seed, rng):
    """CRLF or CR-only line ends, mixed ends, no final newline, extra blank lines."""
    header, lines = text_parts(seed)
    variants = [(b"\r\n", True, "CRLF line ends"), (b"\r", True, "CR-only line ends"),
                (b"\n", False, "no final newline"), (b"\n\n", True, "a blank line after every line")]
    nl, final, desc = variants[pick(rng, len(variants))]
    return pack(seed, join_text(header, lines, nl, final)), desc, same(desc + ": fail or the same")


def m_records(seed: Seed, rng):
    """Delete, duplicate or swap whole records (lines)."""
    header, lines = text_parts(seed)
    n = len(lines)
    k, j = pick(rng, n), pick(rng, n)
    op = ["delete", "duplicate", "swap", "blank", "trailing-ws", "leading-ws"][pick(rng, 6)]
    rows = list(range(n))
    if op == "delete":
        del lines[k]
        del rows[k]
        exp = Expect(rows=rows, note="GloVe without one line") if header is None else fail("count > records")
    elif op == "duplicate":
        lines.insert(j, lines[k])
        if j <= k:  # the first occurrence is kept: row k moves to position j
            rows.insert(j, rows.pop(k))
        exp = Expect(rows=rows, note="duplicate line: the first row kept, with a warning") if header is None \
            else fail("a duplicated record makes the count wrong")
    elif op == "swap":
        lines[j], lines[k] = lines[k], lines[j]
        rows[j], rows[k] = rows[k], rows[j]
        exp = Expect(rows=rows, note="two lines swapped")
    elif op == "blank":
        lines.insert(j, b"" if rng.random() < 0.5 else b"   ")
        exp = same("blank line: fail or skipped")
    elif op == "trailing-ws":
        lines[k] = lines[k] + b" \t "
        exp = same("trailing whitespace: fail or the same")
    else:
        lines[k] = b" " + lines[k]
        # GloVe words may hold spaces, so ' word' is a word its writer can write back; other formats: no.
        exp = free_rows([k], "a leading space in a GloVe line: that row only") if header is None else \
            same("leading space before the word: fail or the same")
    return pack(seed, join_text(header, lines)), f"{op} line {k} (with {j})", exp


BAD_VALUES = [b"nan", b"NaN", b"-nan", b"inf", b"-inf", b"Infinity", b"1e39", b"-3.5e38", b"abc", b"1.2.3",
              b"--1", b"0x10", b"1e", b".", b"", b"1,5", b"\xff"]
ODD_VALUES = [b"1e5", b"-0", b"+1.5", b".5", b"5.", b"1E-3", b"1e-50", b"00.25", b"1_0"]


def m_value(seed: Seed, rng):
    """A value replaced: NaN, inf, overflow, not a number (fail), or an unusual valid number (row free)."""
    header, lines = text_parts(seed)
    k = 0 if rng.random() < 0.3 else pick(rng, len(lines))
    fields = lines[k].split(b" ")
    j = len(fields) - DIM + pick(rng, DIM)
    if rng.random() < 0.7:
        value = BAD_VALUES[pick(rng, len(BAD_VALUES))]
        exp = fail(f"value {value!r}")
    else:
        value = ODD_VALUES[pick(rng, len(ODD_VALUES))]
        exp = free_rows([k], f"unusual number {value!r}")
    fields[j] = value
    lines[k] = b" ".join(fields)
    return pack(seed, join_text(header, lines)), f"line {k} value {j} := {value!r}", exp


def m_row_width(seed: Seed, rng):
    """One value more or fewer in a row (GloVe must not glue a number onto the word)."""
    header, lines = text_parts(seed)
    k = 0 if rng.random() < 0.3 else pick(rng, len(lines))
    fields = lines[k].split(b" ")
    if rng.random() < 0.5:
        fields.insert(len(fields) - DIM + pick(rng, DIM), b"0.5")
        desc = "an extra value"
    else:
        del fields[len(fields) - 1 - pick(rng, DIM)]
        desc = "a missing value"
    lines[k] = b" ".join(fields)
    return pack(seed, join_text(header, lines)), f"line {k}: {desc}", fail(desc)


def m_word(seed: Seed, rng):
    """A space, tab, newline, CR, NUL or bad UTF-8 inside a word; a word made equal to another."""
    header, lines = text_parts(seed)
    n = len(lines)
    k = pick(rng, n)
    fields = lines[k].split(b" ")
    word = b" ".join(fields[:len(fields) - DIM])
    at = word_split(word, rng)
    what = [b" ", b"\t", b"\n", b"\r", b"\x00", b"\xff", b"\xc3", "dup", b"\xc2\xa0"][pick(rng, 9)]
    if what == "dup":
        j = (k + 1 + pick(rng, n - 1)) % n
        other = lines[j].split(b" ")
        new_word = b" ".join(other[:len(other) - DIM])
        exp = free_rows([k, j], "a duplicate word: dropped with a warning, or an error")
    else:
        new_word = word[:at] + what + word[at:]
        exp = word_expect(seed, k, word, new_word, what)
    lines[k] = b" ".join([new_word, *fields[len(fields) - DIM:]])
    return pack(seed, join_text(header, lines)), f"line {k}: word {word!r} -> {new_word!r}", exp


def word_expect(seed: Seed, k: int, word: bytes, new_word: bytes, what: bytes) -> Expect:
    if what in (b"\n", b"\xff", b"\xc3"):
        return fail(f"{what!r} in a word")
    if what == b" " and seed.kind == "glove":
        exact = [r if r != k else (new_word.decode(), seed.vectors[k]) for r in range(len(seed.words))]
        return Expect(rows=exact, note="GloVe words may hold spaces: exactly this word")
    if what in (b" ", b"\t"):
        return fail(f"{what!r} in a word of a format with one-token words") if seed.kind != "glove" else \
            free_rows([k], "tab in a GloVe word")
    return free_rows([k], f"{what!r} in a word: fail or this row only")


def m_truncate_text(seed: Seed, rng):
    """Cut the file at a line boundary or inside a line."""
    data = seed_payload(seed)
    header, lines = text_parts(seed)
    glove = header is None
    spans = text_layout(data, header=not glove)
    start, end, row = spans[pick(rng, len(spans))]
    cut = start if rng.random() < 0.5 else int(rng.integers(start, end))
    n = len(seed.words)
    if row < 0:
        exp = fail("cut in the header") if cut < end - 1 or not glove else fail("header only")
    elif glove and row == 0:
        exp = UNKNOWN
    elif glove:
        exp = Expect(rows=list(range(row)), note="GloVe cut at a line boundary: the first lines") if cut == start \
            else Expect(rows=list(range(row + 1)), free=frozenset([row]), drop_tail=1, note="GloVe cut inside a line")
    elif row == n - 1 and cut > start:
        exp = free_rows([row], "cut inside the last record")
    else:
        exp = fail("records missing")
    if cut == 0:
        exp = fail("empty file")
    return pack(seed, data[:cut]), f"truncate at byte {cut} (line of row {row})", exp


def m_huge_line(seed: Seed, rng):
    """A 2 MB line without values (its error must not echo it)."""
    header, lines = text_parts(seed)
    k = pick(rng, len(lines) + 1)
    junk = b"a" * (2 << 20) if rng.random() < 0.5 else b"ab " * (700 << 10)
    lines.insert(k, junk)
    return pack(seed, join_text(header, lines)), f"a {len(junk)}-byte junk line at {k}", fail("junk line")


def m_header_removed(seed: Seed, rng):
    """No header: the file is a valid GloVe file with the same data (fail or the same)."""
    header, lines = text_parts(seed)
    return pack(seed, join_text(None, lines)), "header line removed", same("header removed: read as GloVe or fail")


def m_empty(seed: Seed, rng):
    """Empty, whitespace-only, header-only files; '0 d' with no records."""
    d = DIM
    variants = [(b"", fail("empty file")), (b"\n\n \n", fail("only blank lines")),
                (b"%d %d\n" % (len(seed.words), d), fail("header only")),
                (b"0 %d\n" % d, Expect(rows=[], note="an empty embedding, or an error")),
                (b"\xef\xbb\xbf", fail("a BOM only"))]
    data, exp = variants[pick(rng, len(variants))]
    return pack(seed, data), f"content {data[:20]!r}", exp


# --------------------------------------------------------------------------- structure-aware: word2vec binary
def m_bin_records(seed: Seed, rng):
    """Swap, delete, duplicate records; records without (or with CRLF) separators; trailing data."""
    header, records = bin_records(seed_payload(seed))
    n = len(records)
    k, j = pick(rng, n), pick(rng, n)
    op = ["swap", "delete", "duplicate", "no-newline", "crlf", "trailing", "extra-record"][pick(rng, 7)]
    rows, sep = list(range(n)), b"\n"
    if op == "swap":
        records[j], records[k] = records[k], records[j]
        rows[j], rows[k] = rows[k], rows[j]
        exp = Expect(rows=rows, note="two records swapped")
    elif op == "delete":
        del records[k]
        exp = fail("count > records")
    elif op == "duplicate":
        records.insert(j, records[k])
        exp = fail("a duplicated record makes the count wrong")
    elif op == "no-newline":
        sep, exp = b"", same("records without a newline (gensim's layout)")
    elif op == "crlf":
        sep, exp = b"\r\n", same("records ending in CRLF: fail or the same")
    elif op == "trailing":
        return pack(seed, build_bin(header, records) + b"\x01\x02junk"), "junk after the records", \
            fail("junk after the last record")
    else:
        return pack(seed, build_bin(header, records + [(b"extra", records[0][1])])), "one record more than the count", \
            fail("a record beyond the header count would be ignored")
    return pack(seed, build_bin(header, records, sep)), f"{op} record {k} (with {j})", exp


def m_bin_word(seed: Seed, rng):
    """A space (replacing or inserted), newline, NUL, bad UTF-8 or a duplicate in a binary word."""
    header, records = bin_records(seed_payload(seed))
    n = len(records)
    k = pick(rng, n)
    word, vec = records[k]
    at = word_split(word, rng)
    op = ["space-insert", "space-replace", "newline", "nul", "ff", "dup", "empty"][pick(rng, 7)]
    if op == "space-insert":
        new, exp = word[:at] + b" " + word[at:], fail("a space in a binary word shifts every record")
    elif op == "space-replace":
        new, exp = word[:at - 1] + b" " + word[at:] if at > 0 else b" " + word[1:], fail("space in a word")
        if len(word) == 1:
            new = b" "
    elif op == "newline":
        new, exp = word[:at] + b"\n" + word[at:], free_rows([k], "a newline inside a binary word")
    elif op == "nul":
        new, exp = word[:at] + b"\x00" + word[at:], free_rows([k], "NUL inside a word")
    elif op == "ff":
        new, exp = word[:at] + b"\xff" + word[at:], fail("undecodable UTF-8")
    elif op == "dup":
        new, exp = records[(k + 1) % n][0], free_rows([k, (k + 1) % n], "duplicate word: warning or error")
    else:
        new, exp = b"", fail("an empty word")
    records[k] = (new, vec)
    return pack(seed, build_bin(header, records)), f"record {k}: word {word!r} -> {new!r}", exp


def m_bin_value(seed: Seed, rng):
    """NaN, infinities or an arbitrary finite float in a binary vector."""
    header, records = bin_records(seed_payload(seed))
    k, j = pick(rng, len(records)), pick(rng, DIM)
    word, vec = records[k]
    value = [np.nan, np.inf, -np.inf, None][pick(rng, 4)]
    if value is None:
        raw = struct.pack("<f", float(rng.normal() * 1e3))
        exp = free_rows([k], "another finite value")
    else:
        raw = struct.pack("<f", value)
        exp = fail(f"{value} in a vector")
    vec = vec[:4 * j] + raw + vec[4 * j + 4:]
    records[k] = (word, vec)
    return pack(seed, build_bin(header, records)), f"record {k} value {j} := {raw!r}", exp


def m_truncate_bin(seed: Seed, rng):
    data = seed_payload(seed)
    spans = bin_layout(data)
    start, end, row = spans[pick(rng, len(spans))]
    cut = int(rng.integers(start, end))
    n = len(seed.words)
    if row == n - 1 and cut == end - 1:
        exp = same("only the final newline cut")
    else:
        exp = fail("records missing")
    return pack(seed, data[:cut]), f"truncate at byte {cut} (record {row})", exp


# --------------------------------------------------------------------------- structure-aware: native
NATIVE = "seed.embd/"


def native_meta(seed: Seed) -> dict:
    return json.loads(seed.files[NATIVE + "embdebias.json"])


def m_native_json(seed: Seed, rng):
    """The metadata JSON: a list, a missing or wrong key, huge or non-finite counts, deep nesting, bad UTF-8."""
    meta = native_meta(seed)
    n, d = meta["count"], meta["dim"]
    variants = [
        (json.dumps([meta]), fail("a list instead of an object")),
        (json.dumps(5), fail("a number instead of an object")),
        (json.dumps({k: v for k, v in meta.items() if k != "count"}), fail("no count")),
        (json.dumps({k: v for k, v in meta.items() if k != "dim"}), fail("no dim")),
        (json.dumps({k: v for k, v in meta.items() if k != "dtype"}), same("no dtype")),
        (json.dumps({**meta, "count": n + 1}), fail("count + 1")),
        (json.dumps({**meta, "count": n - 1}), fail("count - 1")),
        (json.dumps({**meta, "count": 10 ** 18}), fail("count 1e18")),
        (json.dumps({**meta, "count": -1}), fail("count -1")),
        (json.dumps({**meta, "dim": 10 ** 9}), fail("dim 1e9")),
        (json.dumps({**meta, "dim": d + 1}), fail("dim + 1")),
        (json.dumps({**meta, "count": float("inf")}), fail("count Infinity")),
        (json.dumps({**meta, "count": float("nan")}), fail("count NaN")),
        (json.dumps({**meta, "count": str(n)}), same("count as a string")),
        (json.dumps({**meta, "count": float(n)}), same("count as a float")),
        (json.dumps({**meta, "count": n + 0.5}), fail("count 12.5")),
        (json.dumps({**meta, "count": None}), fail("count null")),
        (json.dumps({**meta, "count": [n]}), fail("count a list")),
        (json.dumps({**meta, "dtype": "float64"}), fail("dtype float64")),
        (json.dumps({**meta, "version": 2}), fail("version 2")),
        (json.dumps({**meta, "format": "other"}), fail("another format")),
        (json.dumps({**meta, "extra": {"a": [1, 2]}}), same("an extra key")),
        ("[" * 100_000 + "]" * 100_000, fail("deep nesting")),
        ('{"a":' * 50_000 + "1" + "}" * 50_000, fail("deep nesting of objects")),
        (json.dumps(meta).encode() + b"\xff", fail("non-UTF-8 byte")),
        (b"\xef\xbb\xbf" + json.dumps(meta).encode(), same("BOM before the JSON")),
        ("", fail("empty metadata")),
        (json.dumps(meta)[:-3], fail("truncated JSON")),
        (json.dumps(meta) + " garbage", fail("garbage after the JSON")),
        (json.dumps({**meta, "count": True}), fail("count true")),
    ]
    text, exp = variants[pick(rng, len(variants))]
    files = dict(seed.files)
    files[NATIVE + "embdebias.json"] = text if isinstance(text, bytes) else text.encode()
    return files, f"embdebias.json: {exp.note}", exp


def native_vocab_files(words: list, order=None) -> dict:
    """vocab.txt, vocab_offsets.npy and vocab_sorted.npy consistent with ``words`` (bytes or str)."""
    enc = [w if isinstance(w, bytes) else w.encode() for w in words]
    offsets = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum([len(e) + 1 for e in enc], out=offsets[1:])
    if order is None:
        order = np.array(sorted(range(len(enc)), key=enc.__getitem__), dtype=np.int64)
    return {NATIVE + "vocab.txt": b"".join(e + b"\n" for e in enc),
            NATIVE + "vocab_offsets.npy": npy_bytes(offsets), NATIVE + "vocab_sorted.npy": npy_bytes(order)}


def m_native_vocab(seed: Seed, rng):
    """Vocabulary files rewritten consistently but with a bad word: newline, duplicate, bad UTF-8, empty."""
    words = [w.encode() for w in seed.words]
    n = len(words)
    k = pick(rng, n)
    op = ["newline", "duplicate", "ff", "empty", "cr", "space", "nul"][pick(rng, 7)]
    at = word_split(words[k], rng)
    old = words[k]
    if op == "newline":
        words[k], exp = old[:at] + b"\n" + old[at:], fail("a newline inside a native word")
    elif op == "duplicate":
        words[k], exp = words[(k + 1) % n], free_rows([k, (k + 1) % n], "duplicate native word: fail or warn and drop")
    elif op == "ff":
        words[k], exp = old[:at] + b"\xff" + old[at:], fail("undecodable native word")
    elif op == "empty":
        words[k], exp = b"", fail("an empty native word")
    else:
        ch = {"cr": b"\r", "space": b" ", "nul": b"\x00"}[op]
        new = old[:at] + ch + old[at:]
        words[k] = new
        exp = Expect(rows=[r if r != k else (new.decode(), seed.vectors[k]) for r in range(n)],
                     note=f"{ch!r} in a native word: exactly that word, or an error")
    files = dict(seed.files)
    files.update(native_vocab_files(words))
    return files, f"vocabulary row {k}: {old!r} -> {words[k]!r} (files consistent)", exp


def m_native_index(seed: Seed, rng):
    """vocab_offsets.npy / vocab_sorted.npy: permuted, out of range, wrong length, dtype or shape."""
    offsets = np.load(io.BytesIO(seed.files[NATIVE + "vocab_offsets.npy"]))
    order = np.load(io.BytesIO(seed.files[NATIVE + "vocab_sorted.npy"]))
    n = len(order)
    i, j = pick(rng, n), (pick(rng, n - 1) + 1)
    variants = {
        "sorted-swap": ("vocab_sorted.npy", swapped(order, i, (i + j) % n)),
        "sorted-n": ("vocab_sorted.npy", replaced(order, i, n)),
        "sorted-neg": ("vocab_sorted.npy", replaced(order, i, -1)),
        "sorted-huge": ("vocab_sorted.npy", replaced(order, i, 10 ** 18)),
        "sorted-dup": ("vocab_sorted.npy", replaced(order, i, order[(i + 1) % n])),
        "sorted-short": ("vocab_sorted.npy", order[:-1]),
        "sorted-long": ("vocab_sorted.npy", np.append(order, 0)),
        "sorted-f8": ("vocab_sorted.npy", order.astype(np.float64)),
        "sorted-i4": ("vocab_sorted.npy", order.astype(np.int32)),
        "sorted-2d": ("vocab_sorted.npy", order.reshape(1, -1)),
        "sorted-reversed": ("vocab_sorted.npy", order[::-1].copy()),
        "offsets-shift": ("vocab_offsets.npy", replaced(offsets, 1 + i % (n - 1), offsets[1 + i % (n - 1)] + 1)),
        "offsets-huge": ("vocab_offsets.npy", replaced(offsets, n, 10 ** 15)),
        "offsets-neg": ("vocab_offsets.npy", replaced(offsets, 1 + i % n, -5)),
        "offsets-decreasing": ("vocab_offsets.npy", swapped(offsets, 1 + i % (n - 1), 2 + i % (n - 1))),
        "offsets-short": ("vocab_offsets.npy", offsets[:-1]),
        "offsets-long": ("vocab_offsets.npy", np.append(offsets, offsets[-1])),
        "offsets-first": ("vocab_offsets.npy", replaced(offsets, 0, 1)),
        "offsets-f8": ("vocab_offsets.npy", offsets.astype(np.float64)),
        "offsets-i4": ("vocab_offsets.npy", offsets.astype(np.int32)),
        "offsets-u1": ("vocab_offsets.npy", offsets.astype(np.uint8)),
    }
    name = list(variants)[pick(rng, len(variants))]
    member, array = variants[name]
    files = dict(seed.files)
    files[NATIVE + member] = npy_bytes(array)
    return files, f"{member}: {name}", same(f"{name}: fail or read the same (lookups must stay right)")


def swapped(a, i, j):
    a = a.copy()
    a[i], a[j] = a[j], a[i]
    return a


def replaced(a, i, value):
    a = a.copy()
    a[i] = value
    return a


NPY_HEADERS = [
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (%(n)d, %(d)d), }", same, "numpy's own header"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (%(n1)d, %(d)d), }", fail, "one row more than stored"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (%(n)d, %(d1)d), }", fail, "dim + 1"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, %(d)d), }", fail, "1e12 rows"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (%(n)d, 1000000000000), }", fail, "dim 1e12"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, %(d)d), }", fail, "negative rows"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (%(nd)d,), }", fail, "1-d"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (%(n)d, %(d)d, 1), }", fail, "3-d"),
    ("{'descr': '<f4', 'fortran_order': True, 'shape': (%(n)d, %(d)d), }", fail, "Fortran order (values transposed)"),
    ("{'descr': '>f4', 'fortran_order': False, 'shape': (%(n)d, %(d)d), }", fail, "big-endian (values byte-swapped)"),
    ("{'descr': '<f2', 'fortran_order': False, 'shape': (%(n2)d, %(d)d), }", fail, "float16"),
    ("{'descr': '<i4', 'fortran_order': False, 'shape': (%(n)d, %(d)d), }", fail, "int32 bits"),
    ("{'descr': '|O', 'fortran_order': False, 'shape': (%(n)d, %(d)d), }", fail, "object array (pickle)"),
    ("{'descr': '<f4', 'fortran_order': False}", fail, "no shape"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (%(n)d, %(d)d), 'x': __import__('os'), }", fail,
     "an expression in the header"),
    ("[1, 2, 3]", fail, "a list header"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': ((((((((((((1,),),),),),),),),),),), }", fail, "nested shape"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (%(n)d, %(d)d), ", fail, "unterminated header"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (12.0, 6), }", fail, "float shape"),
]


def m_npy(seed: Seed, rng):
    """Damage an .npy header (shape, order, dtype, syntax) or its data (cut short, extended)."""
    members = [m for m in seed.files if m.endswith(".npy")]
    member = members[pick(rng, len(members))]
    data = seed.files[member]
    hl = npy_header_len(data)
    body = data[hl:]
    n, d = len(seed.words), DIM
    is_vectors = member.endswith("vectors.npy")
    choice = pick(rng, len(NPY_HEADERS) + 4)
    if choice >= len(NPY_HEADERS):
        k = choice - len(NPY_HEADERS)
        new, desc, exp = [(data[:hl + len(body) // 2], "data cut short", fail("data cut short")),
                          (data + b"\0" * 64, "64 bytes after the data", same("bytes after the data")),
                          (data[:hl - 1], "header cut short", fail("no data")),
                          (b"\x93NUMPY\x03\x00" + data[8:], "format version 3.0", same("unknown npy version"))][k]
        return files_with(seed, member, new), f"{member}: {desc}", exp
    tpl, exp_fn, desc = NPY_HEADERS[choice]
    if not is_vectors:
        rows = len(np.load(io.BytesIO(data)))
        tpl = tpl.replace("'<f4'", "'<i8'").replace("%(n)d, %(d)d", "%(n)d,").replace("%(n1)d, %(d)d", "%(n1)d,")
        tpl = tpl.replace("%(n)d, %(d1)d", "%(n)d, 2").replace("(%(nd)d,)", "(%(n)d, 1)")
        n, d = rows, 1
    text = tpl % {"n": n, "d": d, "n1": n + 1, "d1": d + 1, "nd": n * d, "n2": 2 * n}
    new = npy_bytes(header_text=text, data=body)
    exp = same(desc) if exp_fn is same or not is_vectors else fail(desc)
    if not is_vectors and "descr': '<i8'" in text and ("True" in text or ">" in text):
        exp = same(desc)
    return files_with(seed, member, new), f"{member}: header {desc}", exp


def files_with(seed: Seed, member: str, data) -> dict:
    files = dict(seed.files)
    if data is None:
        del files[member]
    else:
        files[member] = data
    return files


def m_native_members(seed: Seed, rng):
    """A member file missing, empty, replaced by a directory, a FIFO, /dev/zero or a symlink loop."""
    members = sorted(seed.files)
    member = members[pick(rng, len(members))]
    what = ["missing", "empty", "dir", "fifo", "devzero", "loop"][pick(rng, 6)]
    data = None if what == "missing" else b"" if what == "empty" else Special(what)
    return files_with(seed, member, data), f"{member}: {what}", fail(f"{member} {what}")


def m_native_vectors_values(seed: Seed, rng):
    """NaN or infinity in vectors.npy (the native reader checks lazily; info and convert must refuse)."""
    member = NATIVE + "vectors.npy"
    array = np.load(io.BytesIO(seed.files[member])).copy()
    k, j = pick(rng, array.shape[0]), pick(rng, array.shape[1])
    value = [np.nan, np.inf, -np.inf][pick(rng, 3)]
    array[k, j] = value
    return files_with(seed, member, npy_bytes(array)), f"vectors[{k}, {j}] := {value}", fail("non-finite value")


# --------------------------------------------------------------------------- structure-aware: gensim .kv
class Special:
    """A special file in place of a member: 'fifo', 'devzero', 'dir', 'loop', 'devnull'."""

    def __init__(self, kind: str):
        self.kind = kind

    def __repr__(self):
        return f"Special({self.kind!r})"


class _Payload:
    """Pickles to a call of ``func(*args)``: what a hostile pickle does."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def kv_object(seed: Seed):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=DIM)
    kv.add_vectors(list(seed.words), np.asarray(seed.vectors, dtype=np.float32))
    return kv


def kv_files(kv, name: str = "seed.kv", separately=("vectors",)) -> dict:
    """The files gensim's ``save`` writes for ``kv`` (pickle, and the .npy when stored apart)."""
    from unittest import mock

    if hasattr(kv, "lifecycle_events"):
        kv.lifecycle_events = None  # timestamps: mutants must be reproducible byte for byte
    with tempfile.TemporaryDirectory() as tmp, \
            mock.patch.object(type(kv), "add_lifecycle_event", lambda *a, **k: None, create=True):
        path = Path(tmp) / name
        kv.save(str(path), separately=list(separately) if separately else [])
        return {p.name: p.read_bytes() for p in Path(tmp).iterdir()}


def kv_variants(seed: Seed) -> list:
    """(attribute, value, what a reader may make of it): 'fail', 'same' (fail or the seed's data) or
    'values' (fail, or the seed's words with any vectors: the file itself holds other values)."""
    n, vectors, words = len(seed.words), seed.vectors, seed.words
    return [
        ("index_to_key", None, "fail"), ("index_to_key", "abc", "fail"), ("index_to_key", list(range(n)), "fail"),
        ("index_to_key", [b"x%d" % i for i in range(n)], "fail"), ("index_to_key", [*words[:-1], None], "fail"),
        ("index_to_key", words[:-1], "fail"), ("index_to_key", [*words, "extra"], "fail"),
        ("index_to_key", tuple(words), "same"), ("index_to_key", {w: 0 for w in words}, "same"),
        ("index_to_key", [words[0]] * n, "fail"), ("index_to_key", [*words[:3], "a\ud800b", *words[4:]], "fail"),
        ("index_to_key", np.array(words), "same"),
        ("vectors", None, "fail"), ("vectors", "abc", "fail"), ("vectors", vectors.tolist(), "same"),
        ("vectors", vectors.astype(np.float64), "same"), ("vectors", np.zeros((n, DIM), dtype=np.int64), "values"),
        ("vectors", vectors.astype(object), "same"), ("vectors", vectors.ravel(), "fail"),
        ("vectors", vectors[:-1], "fail"), ("vectors", np.vstack([vectors, np.ones((1, DIM), np.float32)]), "same"),
        ("vectors", vectors[:, :, None], "fail"), ("vectors", np.zeros((n, 0), dtype=np.float32), "fail"),
        ("vectors", np.asfortranarray(vectors), "same"), ("vectors", np.full((n, DIM), np.nan, np.float32), "fail"),
        ("key_to_index", None, "same"), ("key_to_index", {}, "same"), ("key_to_index", {w: 0 for w in words}, "same"),
        ("vector_size", "6", "same"), ("vector_size", 10 ** 18, "same"), ("expandos", None, "same"),
        ("__dict__", None, "fail"),
    ]


def m_kv_attrs(seed: Seed, rng):
    """KeyedVectors attributes set to None, strings, lists, wrong shapes or dtypes, or non-string words."""
    variants = kv_variants(seed)
    attr, value, allowed = variants[pick(rng, len(variants))]
    if attr == "__dict__":
        raw = pickle.dumps({"index_to_key": seed.words}, protocol=4)  # not a KeyedVectors at all
        return {"seed.kv": raw}, "a pickled dict instead of KeyedVectors", fail("not KeyedVectors")
    kv = kv_object(seed)
    setattr(kv, attr, value)
    separately = ("vectors",) if isinstance(value, np.ndarray) or attr != "vectors" else ()
    try:
        files = kv_files(kv, separately=separately)
    except Exception:  # gensim cannot even save it: store the plain pickle
        files = {"seed.kv": pickle.dumps(kv, protocol=4)}
    desc = f"{attr} := {short(value)}"
    exp = {"fail": fail(desc), "same": same(desc + ": fail or the same"), "values": values_free(desc)}[allowed]
    return files, desc, exp


def short(value) -> str:
    text = repr(value) if not isinstance(value, np.ndarray) else f"array{value.shape} {value.dtype}"
    return text if len(text) < 60 else text[:57] + "..."


PAYLOADS = [("os.system", os.system, (f"touch {MARKER}",)),
            ("builtins.exec", exec, (f"open({MARKER!r}, 'w').close()",)),
            ("builtins.eval", eval, (f"open({MARKER!r}, 'w')",)),
            ("subprocess.call", subprocess.call, (["touch", MARKER],)),
            ("builtins.open", open, (MARKER, "w"))]


def m_kv_evil(seed: Seed, rng):
    """A pickle that creates a marker file when loaded: bare, inside a working KeyedVectors, or renamed."""
    name, func, args = PAYLOADS[pick(rng, len(PAYLOADS))]
    how = ["bare", "attribute", "in-words", "renamed-txt", "gz", "renamed-bin", "renamed-vec"][pick(rng, 7)]
    payload = _Payload(func, *args)
    if how in ("attribute", "renamed-txt", "gz", "renamed-bin", "renamed-vec"):
        kv = kv_object(seed)
        kv.evil = payload
        files = kv_files(kv)
    elif how == "in-words":
        kv = kv_object(seed)
        kv.index_to_key = [*seed.words[:-1], payload]
        files = kv_files(kv)
    else:
        files = {"seed.kv": pickle.dumps(payload, protocol=4)}
    entry = "seed.kv"
    renames = {"renamed-txt": "evil.txt", "renamed-bin": "evil.bin", "renamed-vec": "evil.vec", "gz": "seed.kv.gz"}
    if how in renames:
        entry = renames[how]
        raw = files.pop("seed.kv")
        files[entry] = gzip.compress(raw, mtime=0) if how == "gz" else raw
        if "seed.kv.vectors.npy" in files:
            files[entry + ".vectors.npy"] = files.pop("seed.kv.vectors.npy")
    return files, f"pickle payload {name} ({how}) as {entry}", fail("code in a pickle must not run"), entry


# --------------------------------------------------------------------------- structure-aware: fastText .bin
def m_ft(seed: Seed, rng):
    """fastText header fields (counts, dim, bucket, n-gram lengths), word entries and matrix shape; cuts."""
    data = seed.files[seed.entry]
    lay = ft_layout(data)
    n = len(seed.words)
    fields = {  # offset, struct format, candidate values, expectation maker
        "dim": (8, "<i", [0, -1, DIM + 1, 10 ** 6, 2 ** 31 - 1], same),
        "bucket": (40, "<i", [10 ** 9, -1, 2 ** 31 - 1], values_free),
        "minn": (44, "<i", [-1, 1000], values_free),
        "maxn": (48, "<i", [10 ** 6, -1], values_free),
        "vocab_size": (64, "<i", [n + 1, 10 ** 9, -1, 2 ** 31 - 1, 0], fail),
        "nwords": (68, "<i", [n + 1, 10 ** 9, -1, 0], same),
        "nlabels": (72, "<i", [1, -1], same),
        "ntokens": (76, "<q", [-1, 10 ** 18], same),
        "pruneidx_size": (84, "<q", [10 ** 9, 10 ** 18, 1, -1], same),
        "matrix_rows": (lay["shape"][0], "<q", [lay["m"] + 1, 10 ** 12, -1, 0, 2 ** 62], fail),
        "matrix_dim": (lay["shape"][0] + 8, "<q", [DIM + 1, 10 ** 12, -1, 0], fail),
    }
    if rng.random() < 0.25:
        cut = int(rng.integers(1, len(data)))
        exp = same("output layer cut short") if cut >= lay["output"][0] else fail("fastText model cut short")
        return files_with(seed, seed.entry, data[:cut]), f"truncate to {cut} of {len(data)} bytes", exp
    if rng.random() < 0.2:
        k = pick(rng, n)
        start, end = lay["words"][k]
        wend = data.index(b"\x00", start)
        new = data[:start] + data[start:wend] + data[wend + 1:]  # NUL removed: word runs into its count
        return files_with(seed, seed.entry, new), f"word {k}: terminating NUL removed", fail("word without its end")
    name = list(fields)[pick(rng, len(fields))]
    offset, fmt, values, exp_fn = fields[name]
    value = values[pick(rng, len(values))]
    new = data[:offset] + struct.pack(fmt, value) + data[offset + struct.calcsize(fmt):]
    return files_with(seed, seed.entry, new), f"{name} := {value}", exp_fn(f"{name} {value}")


# --------------------------------------------------------------------------- special inputs
def m_special(seed: Seed, rng):
    """The input itself is a FIFO, /dev/zero, /dev/null, a directory, a symlink loop, or huge-line text."""
    what = ["fifo", "devzero", "devnull", "dir", "loop", "emptydir", "nul-bytes", "binary-junk"][pick(rng, 8)]
    if what == "nul-bytes":
        return {"seed.txt": b"\x00" * 100_000}, "100 kB of NUL bytes", fail("NUL bytes")
    if what == "binary-junk":
        return {"seed.txt": bytes(rng.integers(0, 256, 5000, dtype=np.uint8))}, "5 kB of random bytes", \
            fail("random bytes")
    return {"seed.txt": Special(what)}, f"the input is a {what}", fail(f"input is a {what}")


def m_side(seed: Seed, rng):
    """A word list or CSV made hostile: special files, a huge line, bad UTF-8, BOM, CR ends, NUL, JSON bombs."""
    data = seed.files[seed.entry]
    variants = [
        ("fifo", Special("fifo")), ("devzero", Special("devzero")), ("devnull", Special("devnull")),
        ("dir", Special("dir")), ("loop", Special("loop")), ("empty", b""),
        ("20 MB line", b"x" * (20 << 20) + b"\n" + data), ("2 MB line", data + b"y," * (1 << 20) + b"\n"),
        ("bad UTF-8", data.replace(b"e", b"\xff", 1)), ("BOM", b"\xef\xbb\xbf" + data),
        ("CR line ends", data.replace(b"\n", b"\r")), ("CRLF line ends", data.replace(b"\n", b"\r\n")),
        ("NUL bytes", data.replace(b"\n", b"\x00\n")), ("JSON list bomb", b"[" * 100_000 + b"]" * 100_000),
        ("JSON", b'[["she", "he"], ["queen", "king"]]'), ("NaN scores", data.replace(b"0.7", b"nan")),
        ("inf scores", data.replace(b"0.2", b"inf")), ("no header", data.split(b"\n", 1)[1]),
        ("header only", data.split(b"\n", 1)[0] + b"\n"), ("quote", data.replace(b"a,", b'"a,', 1)),
        ("many columns", data.replace(b"\n", b"," * 5000 + b"\n")), ("one column", data.replace(b",", b" ")),
        ("label 2", data.replace(b",1\n", b",2\n")), ("score -1e308", data.replace(b"0.9", b"-1e308")),
    ]
    what, content = variants[pick(rng, len(variants))]
    return files_with(seed, seed.entry, content), what, NOCHECK


#: mutator -> seed kinds it applies to; byte-level damage applies to all (weight given below).
MUTATORS = {
    m_header: ("word2vec-text", "fasttext-vec", "word2vec-bin"),
    m_line_ends: ("word2vec-text", "fasttext-vec", "glove"),
    m_records: ("word2vec-text", "fasttext-vec", "glove"),
    m_value: ("word2vec-text", "fasttext-vec", "glove"),
    m_row_width: ("word2vec-text", "fasttext-vec", "glove"),
    m_word: ("word2vec-text", "fasttext-vec", "glove"),
    m_truncate_text: ("word2vec-text", "fasttext-vec", "glove"),
    m_huge_line: ("word2vec-text", "fasttext-vec", "glove"),
    m_header_removed: ("word2vec-text", "fasttext-vec"),
    m_empty: ("word2vec-text", "fasttext-vec", "glove"),
    m_bin_records: ("word2vec-bin",),
    m_bin_word: ("word2vec-bin",),
    m_bin_value: ("word2vec-bin",),
    m_truncate_bin: ("word2vec-bin",),
    m_native_json: ("native",),
    m_native_vocab: ("native",),
    m_native_index: ("native",),
    m_npy: ("native", "gensim-kv"),
    m_native_members: ("native",),
    m_native_vectors_values: ("native",),
    m_kv_attrs: ("gensim-kv",),
    m_kv_evil: ("gensim-kv",),
    m_ft: ("fasttext-bin",),
    m_special: ("special",),
    m_side: tuple(SIDE_SEEDS),
}


def make_mutant(index: int, seeds: dict, formats: list, base_seed: int) -> Mutant:
    """Mutant number ``index`` of the campaign: a function of (base seed, index) only."""
    rng = np.random.default_rng([base_seed, index])
    fmt = formats[pick(rng, len(formats))]
    seed = seeds[fmt]
    if fmt == "fault":
        sig = ("SIGKILL", "SIGTERM", "SIGINT")[pick(rng, 3)]
        after = round(float(rng.uniform(0.0, 0.8)), 3)
        outputs = [o for o in OUTPUT_NAMES if o != "out.ft.bin"]  # gensim's fastText writer is slow on 20k words
        output = outputs[pick(rng, len(outputs))]
        return Mutant(index, fmt, "kill", f"{sig} after {after} s, then convert --force", seed.entry,
                      dict(seed.files), SAME, output=output, fault=(sig, after))
    structured = [m for m, kinds in MUTATORS.items() if seed.kind in kinds]
    if not structured or (fmt != "special" and rng.random() < 0.4):
        files, desc, exp = byte_level(seed, rng)
        name, entry = "bytes", seed.entry
    else:
        mutator = structured[pick(rng, len(structured))]
        result = mutator(seed, rng)
        files, desc, exp = result[:3]
        entry = result[3] if len(result) > 3 else seed.entry
        name = mutator.__name__[2:]
    outputs = OUTPUT_NAMES if not any(" " in w for w in seed.words or ()) else ("out.embd", "out.kv", "out.glove.txt")
    output = outputs[pick(rng, len(outputs))]
    return Mutant(index, fmt, name, desc, entry, files, exp, output=output)


# --------------------------------------------------------------------------- materializing a case
def write_files(root: Path, files: dict) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, Special):
            make_special(path, data.kind)
        else:
            path.write_bytes(data)


def make_special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "devzero":
        path.symlink_to("/dev/zero")
    elif kind == "devnull":
        path.symlink_to("/dev/null")
    elif kind in ("dir", "emptydir"):
        path.mkdir()
        if kind == "dir":
            (path / "x.txt").write_text("2 1\na 1\nb 2\n")
    elif kind == "loop":
        path.symlink_to(path.name)


def snapshot(root: Path) -> dict:
    """path -> (kind, size, mtime_ns, bytes hash) of everything under root (special files not opened)."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            try:
                st = os.lstat(p)
            except OSError:
                continue
            import stat as st_mod
            digest = None
            if st_mod.S_ISREG(st.st_mode) and st.st_size < (64 << 20):
                digest = hash(p.read_bytes())
            state[str(p.relative_to(root))] = (st.st_mode, st.st_size, digest)
    return state


# --------------------------------------------------------------------------- the worker (fork server)
PRELOAD = ["embdebias.cli", "embdebias.io", "embdebias.io.text", "embdebias.io.word2vec_bin",
           "embdebias.io.gensim_formats", "embdebias.io.native", "embdebias._atomic", "gensim.models",
           "gensim.models.fasttext", "gensim.models._fasttext_bin", "gensim.models.keyedvectors", "pyarrow",
           "pyarrow.compute", "pandas", "tarfile"]


def worker_main() -> None:
    """Serve run requests (JSON lines on stdin), forking a child per request.

    The first line names the seed directory to warm up on: the imports run while the driver writes the seeds.
    """
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    first = sys.stdin.readline()
    if not first:
        return
    warm_up(Path(json.loads(first)["seed_dir"]))
    import gc

    from embdebias import cli

    parser = cli.build_parser()
    cli.build_parser = lambda: parser  # built once: each child gets its own copy with the fork
    gc.collect()
    gc.freeze()  # the children's collections then skip (and do not copy) the worker's objects
    out = sys.stdout
    sys.stdout = sys.stderr
    out.write("{}\n")  # warmed up
    out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        res = run_forked(req)
        out.write(json.dumps(res) + "\n")
        out.flush()


def warm_up(seed_dir: Path) -> None:
    """Run the commands once in the worker itself, so that every child starts with the lazy imports done."""
    import contextlib

    from embdebias import cli

    sink = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        for fmt, (name, _) in SEED_FILES.items():
            src = seed_dir / fmt / name
            try:
                cli.main(["info", str(src)])
                for out in OUTPUT_NAMES if fmt == "word2vec-text" else OUTPUT_NAMES[:1]:
                    cli.main(["convert", str(src), str(Path(tmp) / f"{fmt}-{out}")])
            except BaseException:
                pass
        for fmt, (name, _) in SIDE_SEEDS.items():
            probe = Mutant(-1, fmt, "none", "", name, {}, NOCHECK)
            for argv, _ in commands(probe):
                argv = [str(seed_dir / fmt / a[3:]) if a.startswith("in/") else
                        str(Path(tmp) / f"{fmt}-{a[4:]}") if a.startswith("out/") else a for a in argv]
                try:
                    cli.main(argv)
                except BaseException:
                    pass


def run_forked(req: dict) -> dict:
    sys.stderr.flush()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        child(req)
    timed_out = killed = False
    delay = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if req.get("kill_after") is not None and not killed and time.monotonic() - t0 >= req["kill_after"]:
            with_suppress(os.kill, pid, signal.Signals[req["kill_signal"]])  # a fault: the user's kill or ^C
            killed = True
        if time.monotonic() - t0 > req["timeout"]:
            with_suppress(os.killpg, pid, signal.SIGKILL)
            with_suppress(os.kill, pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            timed_out = True
            break
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
    with_suppress(os.killpg, pid, signal.SIGKILL)  # nothing of the run may outlive it
    elapsed = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    return {"rc": rc, "timeout": timed_out, "elapsed": elapsed, "killed": killed}


def with_suppress(func, *args) -> None:
    try:
        func(*args)
    except OSError:
        pass


def child(req: dict) -> None:
    """In the forked child: limits, redirections, then the command as ``python -m embdebias`` runs it."""
    code = 70
    try:
        os.setsid()
        mem = req["mem"]
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))
        for sig in (signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(req["cwd"])
        sys.stdout = sys.__stdout__  # the worker points sys.stdout at stderr; the command prints to fd 1
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        for fd, name in ((1, "stdout"), (2, "stderr")):
            f = os.open(req[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(f, fd)
            os.close(f)
        sys.argv = ["embdebias", *req["argv"]]
        code = run_cli(req)
    except BaseException:
        try:
            traceback.print_exc()
        except BaseException:
            pass
        code = 71
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        os._exit(code)


def run_cli(req: dict) -> int:
    """``sys.exit(main())`` as embdebias/__main__.py does it, keeping what ``io.load`` returned."""
    import embdebias.io as eio
    from embdebias import cli

    real_load = eio.load
    loaded, read = [], []

    def keeping(func, into):
        def wrapper(*args, **kwargs):
            emb = func(*args, **kwargs)
            into.append(emb)
            return emb
        return wrapper

    eio.load = keeping(real_load, loaded)
    if hasattr(eio, "_read"):  # a fallback, should a command read without io.load
        eio._read = keeping(eio._read, read)
    try:
        code = cli.main(req["argv"])
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        traceback.print_exc()  # what the interpreter prints for an uncaught exception
        return 1
    finally:
        eio.load = real_load
    loaded = loaded or read
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    if code == 0 and loaded:
        try:  # a fault aimed at the command, arriving after it returned, must not break the check
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        except KeyboardInterrupt:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        dump(loaded[-1], req, real_load)
    return code


def dump(emb, req: dict, load) -> None:
    """What was read: words, vectors, lookups; and for convert, whether the output reads back the same."""
    result = {}
    try:
        result.update(describe_read(emb))
        if "vectors" in result:
            np.save(req["dump"] + ".npy", result.pop("vectors"))
        if req.get("output"):
            result["roundtrip"] = roundtrip(emb, req["output"], load)
    except BaseException as exc:
        result["dump_error"] = f"{type(exc).__name__}: {exc}"[:300]
    with open(req["dump"], "w") as fh:
        json.dump(result, fh)


def describe_read(emb) -> dict:
    n, d = len(emb), int(emb.dim)
    info = {"count": n, "dim": d}
    if n * max(d, 1) > DUMP_CELLS or n > 1_000_000:
        return info
    vocab = emb.words
    words = [str(w) if not isinstance(w, str) else w for w in vocab.tolist()]
    info["words"] = words
    info["word_types"] = sorted({"str" if isinstance(w, str) else type(w).__name__ for w in vocab.tolist()})
    info["word_at_mismatch"] = next((i for i in range(n) if vocab[i] != words[i]), None)
    first_row = {}
    for i, w in enumerate(words):
        first_row.setdefault(w, i)
    info["lookup_mismatch"] = next((i for i, w in enumerate(words) if vocab.get(w, -1) != first_row[w]), None)
    vectors = np.asarray(emb.vectors)
    info["dtype"] = str(vectors.dtype)
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    info["finite"] = bool(np.isfinite(vectors).all())
    info["vectors"] = vectors
    return info


def roundtrip(emb, output: str, load) -> str | None:
    """None when ``output`` reads back as ``emb``; else why not."""
    try:
        back = load(output)
    except BaseException as exc:
        return f"the output does not read back: {type(exc).__name__}: {str(exc)[:200]}"
    if back.words.tolist() != emb.words.tolist():
        return "the output reads back with other words"
    a, b = np.asarray(back.vectors, dtype=np.float32), np.asarray(emb.vectors, dtype=np.float32)
    if a.shape != b.shape or not np.array_equal(a, b):
        return f"the output reads back with other vectors ({a.shape} vs {b.shape})"
    return None


# --------------------------------------------------------------------------- the driver's side
class Worker:
    """A long-lived ``fuzz.py --worker`` process."""

    def __init__(self):
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   PYTHONHASHSEED="0")
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def warm_up(self, seed_dir: Path) -> None:
        """Start the warm-up on the seeds (answered by :meth:`ready`)."""
        self.proc.stdin.write(json.dumps({"seed_dir": str(seed_dir)}) + "\n")
        self.proc.stdin.flush()

    def ready(self) -> None:
        if not self.proc.stdout.readline():
            raise RuntimeError("fuzz worker died while warming up")

    def run(self, req: dict) -> dict:
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("fuzz worker died")
        return json.loads(line)

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


@dataclasses.dataclass
class RunResult:
    mutant: Mutant
    command: str
    cls: str
    detail: str
    rc: int | None
    stderr: str
    elapsed: float


def run_case(worker: Worker, mutant: Mutant, seed: Seed, root: Path, opts) -> list:
    """Every command of the mutant's format, each in a fresh directory; a RunResult for each."""
    case = root / f"m{mutant.index}"
    case.mkdir()
    results = []
    try:
        if mutant.fault:
            argv, output = f"in/{mutant.entry}", f"out/{mutant.output}"
            results.append(run_command(worker, mutant, seed, case / "0", ["convert", argv, output], output, opts,
                                       fault=mutant.fault))
            results.append(run_command(worker, mutant, seed, case / "0", ["convert", argv, output, "--force"],
                                       output, opts, fresh=False))
        for k, (argv, output) in enumerate(commands(mutant) if not mutant.fault else ()):
            results.append(run_command(worker, mutant, seed, case / str(k), argv, output, opts))
    finally:
        if opts.keep_failures and any(r.cls in BAD for r in results):
            keep_reproducer(mutant, results, opts)
        shutil.rmtree(case, ignore_errors=True)
    return results


def commands(mutant: Mutant) -> list:
    """(argv, output or None) of each run, paths relative to the run directory ('in/...', 'out/...')."""
    src = f"in/{mutant.entry}"
    emb, good, out = f"in/{SIDE_EMBEDDING}", f"in/{SIDE_PAIRS}", "out/out.embd"
    if mutant.fmt == "pair-list":
        return [(["debias", emb, "--definitional", src, "--out", out], out),
                (["debias", emb, "--definitional", good, "--equalize", src, "--out", out], out)]
    if mutant.fmt == "word-list":
        return [(["debias", emb, "--definitional", good, "--specific", src, "--out", out], out)]
    if mutant.fmt == "scores-csv":
        return [(["fairness", src, "--metric", "parity_gap"], None),
                (["fairness", src, "--metric", "accuracy_difference", "--json"], None)]
    extra = ["--input-format", mutant.input_format] if mutant.input_format else []
    return [(["info", src, *extra], None), (["convert", src, f"out/{mutant.output}", *extra], f"out/{mutant.output}")]


def run_command(worker, mutant: Mutant, seed: Seed, case: Path, argv: list, output: str | None, opts, *,
                fault: tuple | None = None, fresh: bool = True) -> RunResult:
    indir, outdir, rundir = case / "in", case / "out", case / "run"
    if fresh:
        for d in (indir, outdir, rundir):
            d.mkdir(parents=True)
        write_files(indir, mutant.files)
    else:
        for name in os.listdir(rundir):
            os.unlink(rundir / name)
    before = snapshot(indir)
    absolute = [str(case / a) if a.startswith(("in/", "out/")) else a for a in argv]
    req = {"argv": absolute, "cwd": str(case), "timeout": opts.timeout, "mem": opts.mem_limit,
           "stdout": str(rundir / "stdout"), "stderr": str(rundir / "stderr"), "dump": str(rundir / "dump.json"),
           "output": str(case / output) if output and argv[0] == "convert" else None}
    if fault:
        req["kill_signal"], req["kill_after"] = fault
    res = worker.run(req)
    stderr = read_text(rundir / "stderr")
    if res["killed"] and res["rc"] != 0:
        cls, detail = classify_killed(res, stderr, fault[0], case, before, output)
    else:
        cls, detail = classify(res, stderr, mutant, seed, case, before, argv[0], output)
    return RunResult(mutant, " ".join(argv), cls, detail, res["rc"], stderr[:2000], res["elapsed"])


def read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def classify(res: dict, stderr: str, mutant: Mutant, seed: Seed, case: Path, before: dict, command: str,
             output: str) -> tuple[str, str]:
    """The outcome class of one run, worst first, with a short detail."""
    rc = res["rc"]
    if (case / MARKER).exists() or (case / "in" / MARKER).exists():
        return "code-exec", "a pickle payload created the marker file"
    if res["timeout"]:
        return "hang", f"no exit within the timeout ({res['elapsed']:.0f} s)"
    if rc < 0:
        return "abort", f"killed by signal {signal.Signals(-rc).name}"
    if "Traceback (most recent call last)" in stderr or rc == 1:
        return "traceback", last_line(stderr)
    if rc == 0 and mutant.expect.check:
        verdict = check_read(case / "run" / "dump.json", mutant, seed, stderr)
        if verdict:
            return verdict
    leftover = leftovers(case, before, rc, Path(output).name if output else None)
    if leftover:
        return "leftover", leftover
    if rc == 2:
        return message_class(stderr.replace(str(case), "CASE"), mutant)
    if rc != 0:
        return "unclean", f"exit status {rc}: {last_line(stderr)}"
    return "ok", ""


def classify_killed(res: dict, stderr: str, sig: str, case: Path, before: dict, output: str | None) -> tuple[str, str]:
    """A run stopped by a signal: SIGTERM and SIGINT must clean up (SIGKILL cannot: the next run must)."""
    if res["timeout"]:
        return "hang", f"no exit within the timeout after {sig}"
    if "Traceback (most recent call last)" in stderr:
        return "traceback", f"after {sig}: {last_line(stderr)}"
    if sig == "SIGKILL":
        after = snapshot(case / "in")
        return ("leftover", "SIGKILL changed the input") if after != before else ("ok", "killed")
    # The output may exist: the signal can come after its rename (the rename makes it complete).
    leftover = leftovers(case, before, 0, Path(output).name if output else None)
    return ("leftover", f"after {sig}: {leftover}") if leftover else ("ok", f"stopped by {sig}")


def last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def message_class(stderr: str, mutant: Mutant) -> tuple[str, str]:
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("warning: ")
             and not ln.startswith("created directory")]
    errors = [ln for ln in lines if ln.startswith("embdebias: error: ")]
    if len(lines) != 1 or len(errors) != 1:
        return "unclean", f"{len(lines)} stderr lines besides warnings: {last_line(stderr)}"
    message = errors[0]
    if len(message) > MAX_MESSAGE:
        return "oversize", f"{len(message)} characters: {message[:120]}..."
    quoted = longest_quote(message, mutant)
    if quoted > MAX_QUOTE:
        return "oversize", f"quotes {quoted} characters of the input: {message[:120]}..."
    return "clean", message[:200]


def longest_quote(message: str, mutant: Mutant) -> int:
    """Length of the longest stretch of the message found verbatim in an input file (only stretches of at
    least MAX_QUOTE / 2 characters are looked for: any longer quote contains an aligned window of that size)."""
    raw = message.encode("utf-8", "replace")
    contents = [d for d in mutant.files.values() if isinstance(d, bytes)]
    step = MAX_QUOTE // 2
    best = 0

    def found(a: int, b: int) -> bool:
        return any(raw[a:b] in c for c in contents)

    for start in range(0, len(raw) - step + 1, step):
        if not found(start, start + step):
            continue
        a, b = start, start + step
        while a > 0 and found(a - 1, b):
            a -= 1
        while b < len(raw) and found(a, b + 1):
            b += 1
        best = max(best, b - a)
    return best


HIDDEN_SUFFIXES = (".tmp", ".work", ".old", ".partial", ".new")


def leftovers(case: Path, before: dict, rc: int, output_name: str | None) -> str:
    """What a run left that it should not have: a changed input, temporaries, partial or stray outputs."""
    after_in = snapshot(case / "in")
    if after_in != before:
        names = sorted({k for k, _ in set(after_in.items()) ^ set(before.items())})
        return f"the input directory changed: {', '.join(names[:5])}"
    # A successful convert leaves its output and companions named after it (x.kv.vectors.npy); nothing else.
    extra = [n for n in sorted(os.listdir(case / "out"))
             if not (rc == 0 and output_name and n.startswith(output_name))]
    if extra:
        hidden = any(n.startswith(".") or n.endswith(HIDDEN_SUFFIXES) for n in extra)
        what = "hidden temporaries" if hidden else "a partial output" if rc != 0 else "unexpected files"
        return f"{what} in the output directory: {', '.join(extra[:5])}"
    stray = sorted(n for n in os.listdir(case) if n not in ("in", "out", "run"))
    return f"files written beside the case: {', '.join(stray[:5])}" if stray else ""


def check_read(dump_path: Path, mutant: Mutant, seed: Seed, stderr: str) -> tuple[str, str] | None:
    """None when what the command read (and wrote) is what the mutation allows; else (class, why)."""
    try:
        got = json.loads(dump_path.read_text())
    except (OSError, ValueError):
        # Exit 0 without a load through embdebias.io.load: the read cannot be checked, which must not pass.
        return "misread", "exit 0 but nothing was loaded through embdebias.io.load (cannot check the read)"
    if "dump_error" in got:
        return "misread", f"the loaded embedding is broken: {got['dump_error']}"
    exp = mutant.expect
    if "words" not in got:
        return "misread", f"read {got['count']} x {got['dim']} (too large to compare); expected the seed's size"
    vectors = np.load(str(dump_path) + ".npy")
    if exp.must_fail:
        diff = compare(got, vectors, SAME, seed, False) or "the seed's data"
        return "misread", f"read {got['count']} x {got['dim']} with exit 0, expected an error ({exp.note}); " \
                          f"read: {diff}"
    why = compare(got, vectors, exp, seed, "duplicate" in stderr.lower())
    if why:
        return "misread", f"{why} ({exp.note})" if exp.note else why
    if got.get("roundtrip"):
        return "roundtrip", got["roundtrip"]
    return None


def expected_rows(exp: Expect, seed: Seed) -> list:
    rows = range(len(seed.words)) if exp.rows is None else exp.rows
    out = []
    for r in rows:
        if isinstance(r, tuple):
            out.append((r[0], np.asarray(r[1], dtype=np.float32)))
        else:
            out.append((seed.words[r], seed.vectors[r]))
    return out


def compare(got: dict, vectors: np.ndarray, exp: Expect, seed: Seed, warned_duplicate: bool) -> str | None:
    """Why the read embedding is not what ``exp`` allows (None when it is)."""
    words = got["words"]
    if got.get("word_types") not in (["str"], []):
        return f"words of type {got.get('word_types')}"
    if got.get("word_at_mismatch") is not None:
        i = got["word_at_mismatch"]
        return f"row {i}: the word list and the per-row word differ ({words[i]!r})"
    if got.get("lookup_mismatch") is not None:
        i = got["lookup_mismatch"]
        return f"looking up {words[i]!r} does not give its row {i}"
    if not got.get("finite", True):
        return "non-finite values were read"
    if got.get("dtype") not in (None, "float32"):
        return f"vectors of dtype {got['dtype']}"
    want = expected_rows(exp, seed)
    if want and got["dim"] != seed.vectors.shape[1]:
        return f"dimension {got['dim']}, expected {seed.vectors.shape[1]}"
    if exp.words_free or exp.values_free:
        return compare_loose(words, vectors, want, exp)
    return align(words, vectors, want, exp, warned_duplicate)


def compare_loose(words, vectors, want, exp: Expect) -> str | None:
    if len(words) != len(want):
        return f"{len(words)} words, expected {len(want)}"
    for i, (w, v) in enumerate(want):
        if not exp.words_free and words[i] != w:
            return f"row {i}: word {words[i]!r}, expected {w!r}"
        if not exp.values_free and not np.array_equal(vectors[i], v):
            return f"row {i} ({words[i]!r}): vector changed"
    return None


def align(words: list, vectors: np.ndarray, want: list, exp: Expect, warned_duplicate: bool) -> str | None:
    """Every fixed row in place with its vector; free rows anything; missing rows only as allowed."""
    got_n, want_n = len(words), len(want)
    missing = want_n - got_n
    if missing < 0:
        return f"{got_n} rows read, expected {want_n}: extra rows (first extra {words[want_n]!r})"
    if missing > exp.drop_tail + (len(exp.free) if warned_duplicate else 0):
        return f"{got_n} rows read, expected {want_n}" + (" (no duplicate warning)" if exp.free else "")
    i, j, why = walk(words, vectors, want, exp.free, missing)
    if why:
        return why
    if j < got_n:
        return f"row {j}: unexpected extra row {words[j]!r}"
    if len([k for k in range(i, want_n) if k not in exp.free]) > exp.drop_tail:
        return f"rows from {i} missing"
    return None


def walk(words: list, vectors: np.ndarray, want: list, free: frozenset, skips: int) -> tuple[int, int, str | None]:
    """Walk the expected and the read rows side by side; a free expected row may be absent (a dropped
    duplicate) while ``skips`` rows are missing.  Returns where both walks stopped and the first mismatch."""
    i = j = 0
    while i < len(want) and j < len(words):
        w, v = want[i]
        if i in free:
            absent = skips and words[j] != w and i + 1 < len(want) and words[j] == want[i + 1][0]
            skips -= bool(absent)
            i, j = i + 1, j + (not absent)
            continue
        if words[j] != w:
            return i, j, f"row {j}: word {words[j]!r}, expected {w!r}"
        if not np.array_equal(vectors[j], v):
            return i, j, f"row {j} ({w!r}): vector {fmt_vec(vectors[j])}, expected {fmt_vec(v)}"
        i, j = i + 1, j + 1
    return i, j, None


def fmt_vec(v) -> str:
    return "[" + " ".join(f"{x:.4g}" for x in np.asarray(v)[:4]) + (" ...]" if len(v) > 4 else "]")


def keep_reproducer(mutant: Mutant, results: list, opts) -> None:
    """Copy the input of a bad case, with a README saying what was done and what happened."""
    worst = next(r for r in results if r.cls in BAD)
    dest = Path(opts.keep_failures) / worst.cls / f"{mutant.fmt}-{mutant.index:05d}-{mutant.mutator}"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    write_files(dest / "in", mutant.files)
    lines = [f"mutant {mutant.index} (--seed {opts.seed} --only {mutant.index}) of seed format {mutant.fmt}",
             f"mutation: {mutant.mutator}: {mutant.desc}",
             f"expectation: {describe_expect(mutant.expect)}", ""]
    for r in results:
        lines += [f"$ python -m embdebias {r.command}", f"  -> {r.cls} (exit {r.rc}, {r.elapsed:.2f} s): {r.detail}",
                  "  stderr: " + r.stderr[-600:].replace("\n", "\n  | "), ""]
    (dest / "README.txt").write_text("\n".join(lines))


def describe_expect(exp: Expect) -> str:
    if exp.must_fail:
        return f"must fail ({exp.note})"
    parts = [exp.note or "the same data or an error"]
    if exp.free:
        parts.append(f"rows {sorted(exp.free)} may change")
    if exp.drop_tail:
        parts.append(f"up to {exp.drop_tail} trailing rows may be missing")
    return "; ".join(parts)


# --------------------------------------------------------------------------- campaign
def baseline(seeds: dict, workers: list, root: Path, opts) -> None:
    """Read every seed through the command line; each must succeed and round-trip (or the fuzzer is wrong)."""
    from embdebias import io as eio

    probes = []
    for fmt, seed in seeds.items():
        if fmt not in SIDE_SEEDS:
            with tempfile.TemporaryDirectory(dir=root) as tmp:
                write_files(Path(tmp), seed.files)
                emb = eio.load(str(Path(tmp) / seed.entry))
                seed.words = emb.words.tolist()
                seed.vectors = np.array(emb.vectors, dtype=np.float32)
        expect = NOCHECK if fmt in SIDE_SEEDS else SAME
        probes.append(Mutant(-1 - len(probes), fmt, "none", "the seed itself", seed.entry, seed.files, expect,
                             output="out.embd"))
    failures = []

    def probe_with(worker, mine):
        for probe in mine:
            failures.extend(r for r in run_case(worker, probe, seeds[probe.fmt], root, opts) if r.cls != "ok")

    threads = [threading.Thread(target=probe_with, args=(w, probes[k::len(workers)])) for k, w in enumerate(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        r = failures[0]
        raise SystemExit(f"fuzz: the valid {r.mutant.fmt} seed gives {r.cls} on {r.command}: {r.detail}\n{r.stderr}")


def campaign(opts) -> tuple[list, float]:
    formats = opts.formats or list(FORMATS)
    root = Path(tempfile.mkdtemp(prefix="efz-"))
    t0 = time.monotonic()
    workers = [Worker() for _ in range(max(opts.jobs, 1))]  # they import while the seeds are written
    try:
        (root / "seeds").mkdir()
        seeds = make_seeds(root / "seeds")
        for w in workers:
            w.warm_up(root / "seeds")
        for w in workers:
            w.ready()
        baseline(seeds, workers, root, opts)
        indices = opts.only if opts.only else range(opts.mutants)
        jobs = queue.Queue()
        for i in indices:
            jobs.put(i)
        results, lock = [], threading.Lock()

        errors = []

        def drive(worker):
            try:
                drive_jobs(worker)
            except BaseException:
                errors.append(traceback.format_exc())

        def drive_jobs(worker):
            while not errors:
                try:
                    i = jobs.get_nowait()
                except queue.Empty:
                    return
                mutant = make_mutant(i, seeds, formats, opts.seed)
                rs = run_case(worker, mutant, seeds[mutant.fmt], root, opts)
                with lock:
                    results.extend(rs)
                    if opts.verbose:
                        for r in rs:
                            print(f"{i:5d} {mutant.fmt:16s} {mutant.mutator:16s} {r.command:7s} {r.cls:9s} "
                                  f"{r.elapsed:6.2f}s "
                                  f"{r.detail[:90]}", flush=True)

        threads = [threading.Thread(target=drive, args=(w,)) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:  # a broken fuzzer must never report a clean campaign
            raise SystemExit(f"fuzz: internal error\n{errors[0]}")
    finally:
        for w in workers:
            w.close()
        shutil.rmtree(root, ignore_errors=True)
    return results, time.monotonic() - t0


def report(results: list, elapsed: float, opts) -> str:
    """A Markdown report: outcomes per format x class, then the bad runs grouped by (class, mutator)."""
    formats = sorted({r.mutant.fmt for r in results})
    table = collections.Counter((r.mutant.fmt, r.cls) for r in results)
    mutants = len({r.mutant.index for r in results})
    lines = ["# embdebias fuzz report", "",
             f"seed {opts.seed}, {mutants} mutants, {len(results)} runs (info and convert), timeout "
             f"{opts.timeout:g} s, memory cap {opts.mem_limit / 2**30:.1f} GiB, {opts.jobs} jobs, "
             f"{elapsed:.0f} s wall", "",
             "| format | " + " | ".join(CLASSES) + " |", "|---" * (len(CLASSES) + 1) + "|"]
    for fmt in formats:
        lines.append(f"| {fmt} | " + " | ".join(str(table[fmt, c]) for c in CLASSES) + " |")
    lines.append("| **total** | " + " | ".join(f"**{sum(table[f, c] for f in formats)}**" for c in CLASSES) + " |")
    bad = [r for r in results if r.cls in BAD]
    lines += ["", f"bad runs: {len(bad)}", ""]
    groups = collections.defaultdict(list)
    for r in bad:
        groups[r.cls, r.mutant.fmt, r.mutant.mutator].append(r)
    for (cls, fmt, mut), rs in sorted(groups.items(), key=lambda kv: (BAD.index(kv[0][0]), kv[0][1], kv[0][2])):
        lines.append(f"## {cls}: {fmt} / {mut} ({len(rs)} runs)")
        seen = set()
        for r in rs:
            key = (r.mutant.desc.split(":")[0], r.detail[:60])
            if key in seen:
                continue
            seen.add(key)
            lines.append(f"- mutant {r.mutant.index} `{r.command}`: {r.mutant.desc} -> {r.detail}")
            if len(seen) >= 6:
                break
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- structure-aware cases (--structured)
# Each case is built from a model of its format: the words (str) and, for every value, either a float32
# (binary formats) or the decimal text written (text formats).  The oracle is computed from the model
# alone, never by the reader: a word is the exact str of the model; a text value is the float32 nearest
# to its decimal (ties to even), computed with fractions; a binary value is the float32 whose bytes
# were written.  A damaged case must be an error.  Each read runs in a forked child (a crash is a class
# of its own), through ``embdebias.io.load`` with the format named.
S_KINDS = ("word2vec-text", "glove", "word2vec-bin", "word2vec-bin-gensim", "native")
S_CLASSES = ("ok", "clean", "ambiguous", "misread", "refused", "traceback", "abort", "hang")
S_BAD = ("misread", "refused", "traceback", "abort", "hang")  # ("ambiguous" is right: see SCase.alternative)
#: Every kind of --structured case: the vector formats, then the user files (:data:`U_KINDS`).
S_ALL_KINDS = (*S_KINDS, "params", "attribute", "weat-tests", "sweep-config", "fairness-csv")
#: Word pieces: ASCII, accents (composed and combining), CJK, full-width forms of ASCII words and a BOM
#: inside a word (distinct words: compared as the bytes the file holds, never normalized).
S_PIECES = ["he", "she", "king", "Queen", "café", "naïve", "日本", "ｈｅ", "ＫＩＮＧ", "h\ufeffe", "x", "don't",
            "ne\u0301", "Ωmega", "ﬁle", "Å", "Å", "_", "a-b", "ÿ"]
FLT_MAX_BITS = 0x7F7FFFFF


def nearest_float32(text: str) -> float:
    """The float32 nearest to the decimal ``text`` (ties to even), exactly, with fractions (inf beyond)."""
    from decimal import Decimal
    from fractions import Fraction
    low = text.lower().lstrip("+-")
    if low in ("nan",):
        return float("nan")
    if low in ("inf", "infinity"):
        return float("-inf") if text.startswith("-") else float("inf")
    q = Fraction(Decimal(text))
    sign, q = (-1.0 if text.startswith("-") else 1.0), abs(q)
    if q == 0:
        return sign * 0.0
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    e = max(e - 23, -149)
    m = round(q / Fraction(2) ** e)
    if m * Fraction(2) ** e >= Fraction(2) ** 128:
        return sign * float("inf")
    return sign * float(m * Fraction(2) ** e)


@dataclasses.dataclass
class SCase:
    index: int
    kind: str
    desc: str
    files: dict                     # relative path -> bytes
    entry: str
    fmt: str                        # the format named to load()
    words: list | None              # the oracle: None when the case must be an error
    vectors: np.ndarray | None
    #: a damaged file whose bytes the format's grammar reads as other, valid data (a word with a space in
    #: gensim's layout can be indistinguishable from a valid file): that reading, or an error, is right
    alternative: tuple | None = None
    #: user files (:data:`U_KINDS`): the summary the action must return, None when the case must be an
    #: error, :data:`SAFE_NAME` or :data:`ANY`
    expect: object = None

    @property
    def must_fail(self) -> bool:
        return self.expect is None if self.kind in U_KINDS else self.words is None


def s_words(rng, n: int, *, glove: bool = False) -> list:
    """``n`` distinct words from :data:`S_PIECES` (GloVe: some with a space inside)."""
    out, seen = [], set()
    while len(out) < n:
        word = "".join(rng.choice(S_PIECES, size=int(rng.integers(1, 3))))
        if rng.random() < 0.3:
            word += str(int(rng.integers(0, 100)))
        if glove and rng.random() < 0.1:
            word = word + " " + str(rng.choice(S_PIECES[:6]))
        if word not in seen and not word.startswith("\ufeff"):
            seen.add(word)
            out.append(word)
    return out


def s_value(rng) -> float:
    scale = float(rng.choice([1e-3, 0.3, 1.0, 50.0, 1e30]))
    return float(np.float32(rng.normal() * scale))


def s_decimal(rng, value: float) -> str:
    """``value`` written as a decimal in one of the forms files hold; some near float32 midpoints."""
    v = np.float32(value)
    form = int(rng.integers(0, 7))
    if form == 0:
        return repr(float(v))
    if form == 1:
        return f"{float(v):.9g}"
    if form == 2:
        return f"{float(v):.6f}"
    if form == 3:  # a decimal near the midpoint above v: where rounding through float64 goes wrong
        from decimal import Decimal, getcontext
        from fractions import Fraction
        getcontext().prec = 60
        nxt = np.nextafter(v, np.float32(np.inf) if v >= 0 else np.float32(-np.inf))
        if not np.isfinite(nxt):
            return repr(float(v))
        mid = (Fraction(float(v)) + Fraction(float(nxt))) / 2
        exact = Decimal(mid.numerator) / Decimal(mid.denominator)
        return f"{rng.choice([exact, exact.next_plus(), exact.next_minus()]):.17g}"
    if form == 4:
        return f"{float(v):.17g}"
    if form == 5:
        return f"{float(v):.3E}".replace("E+0", "E+").replace("E-0", "E-")
    return f"{float(v):.8e}"


def s_text_damage(rng, texts: list, prefix: list, glove: bool) -> tuple[str, int]:
    """Damage one row (not the first: a damaged first row may set a GloVe dimension); what, and the count change."""
    n, d = len(texts), len(texts[0])
    k = int(rng.integers(1, n))
    what = str(rng.choice(["leading separator", "underscore value", "beyond float32", "nan", "short row",
                           "long row" if glove else "count"]))
    values = {"underscore value": "0_5", "nan": "nan",
              "beyond float32": str(rng.choice(["3.4028236e38", "-1e39", "3.40282357e38"]))}
    if what == "leading separator":
        prefix[k] = bytes(rng.choice([b" ", b"\t"]))
    elif what in values:
        texts[k][int(rng.integers(0, d))] = values[what]
    elif what == "short row":
        texts[k] = texts[k][:-1]
    elif what == "long row":
        texts[k] = texts[k] + ["0.5"]
    return what, int(what == "count")


def s_text_row(rng, word: str, texts: list, prefix: bytes) -> bytes:
    """One line: the word, each value after a space (or sometimes a tab), sometimes a trailing space."""
    seps = [bytes(rng.choice([b" ", b"\t"])) if rng.random() < 0.2 else b" " for _ in texts]
    body = word.encode("utf-8") + b"".join(sep + t.encode("ascii") for sep, t in zip(seps, texts))
    return prefix + body + (b" " if rng.random() < 0.1 else b"")


def s_text_file(rng, header: bytes | None, rows: list, name: str) -> tuple[str, bytes]:
    """The file of the rows: maybe a BOM first (dropped by the reader), CRLF, blank lines, gzip."""
    lead = b"\xef\xbb\xbf" if rng.random() < 0.1 else b""
    nl = b"\r\n" if rng.random() < 0.15 else b"\n"
    lines = [] if header is None else [header]
    for row in rows:
        lines.append(row)
        if rng.random() < 0.05:
            lines.append(b"")
    data = lead + nl.join(lines) + nl
    if rng.random() < 0.15:
        return name + ".gz", gzip.compress(data, mtime=0)
    return name, data


def s_text_case(index: int, rng, glove: bool) -> SCase:
    n, d = int(rng.integers(3, 25)), int(rng.integers(1, 9))
    words = s_words(rng, n, glove=glove)
    texts = [[s_decimal(rng, s_value(rng)) for _ in range(d)] for _ in range(n)]
    prefix = [b""] * n
    damage = rng.random() < 0.35
    what, extra = s_text_damage(rng, texts, prefix, glove) if damage else ("valid", 0)
    header = None if glove else f"{n + extra} {d}".encode("ascii")
    name, data = s_text_file(rng, header, [s_text_row(rng, w, t, p) for w, t, p in zip(words, texts, prefix)],
                             "case.glove.txt" if glove else "case.txt")
    expected = np.array([[nearest_float32(t) for t in row] if len(row) == d else [np.nan] * d for row in texts],
                        dtype=np.float32)
    must_fail = damage or not np.isfinite(expected).all()
    fmt = "glove" if glove else "word2vec-text"
    return SCase(index, fmt, what, {name: data}, name, fmt, None if must_fail else words,
                 None if must_fail else expected)


def s_bin_vectors(rng, n: int, d: int) -> np.ndarray:
    if rng.random() < 0.8:
        return (rng.normal(size=(n, d)) * float(rng.choice([0.01, 0.3, 3.0]))).astype(np.float32)
    bits = rng.integers(0, 1 << 32, size=(n, d), dtype=np.uint64).astype(np.uint32)
    bits[(bits & 0x7F800000) == 0x7F800000] &= 0xBF7FFFFF  # finite
    return bits.view(np.float32)


def s_bin_damage(rng, raw: list, after: list, vectors: np.ndarray, header: tuple) -> tuple:
    """Damage one record (a word with a space, a tab after it, NaN), the count, or the end ("truncated")."""
    n, d = vectors.shape
    k = int(rng.integers(0, n - 1))
    what = str(rng.choice(["word with a space", "tab after a record", "count", "truncated", "nan"]))
    if what == "word with a space":
        raw[k] = raw[k] + b" " + str(rng.choice(S_PIECES[:6])).encode("utf-8")
    elif what == "tab after a record":
        after[k] = b"\t"
    elif what == "count":
        header = (n + 1, d)
    elif what == "nan":
        vectors = vectors.copy()
        vectors[k, int(rng.integers(0, d))] = np.nan
    return what, header, vectors


def s_bin_case(index: int, rng, newline: bool) -> SCase:
    n, d = int(rng.integers(2, 40)), int(rng.integers(1, 17))
    words = s_words(rng, n)
    raw = [w.encode("utf-8") for w in words]
    vectors = s_bin_vectors(rng, n, d)
    damage = rng.random() < 0.35
    what, after, header = "valid", [b""] * n, (n, d)
    if damage:
        what, header, vectors = s_bin_damage(rng, raw, after, vectors, header)
    parts = [f"{header[0]} {header[1]}\n".encode("ascii")]
    for k in range(n):
        parts.append(raw[k] + b" " + struct.pack(f"<{d}f", *vectors[k].tolist()) + (b"\n" if newline else b"")
                     + after[k])
    data = b"".join(parts)
    if what == "truncated":
        data = data[:-int(rng.integers(1, 4 * d)) - (1 if newline else 0)]
    name = "case.bin"
    if rng.random() < 0.15:
        data, name = gzip.compress(data, mtime=0), name + ".gz"
    kind = "word2vec-bin" if newline else "word2vec-bin-gensim"
    alternative = s_reference_bin(b"".join(parts)) if what == "word with a space" else None
    return SCase(index, kind, what, {name: data}, name, "word2vec-bin", None if damage else words,
                 None if damage else vectors, alternative)


def s_reference_word(raw: bytes) -> str | None:
    """A word of the grammar (see :func:`s_reference_bin`), or None."""
    if not raw or raw[:1] in b"\t\r\n\x0b\x0c" or any(c < 32 and c not in (9, 13) for c in raw):
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def s_reference_bin(data: bytes) -> tuple | None:
    """The word2vec binary grammar, record by record (independent of the reader): (words, vectors), or None.

    A record: a word (non-empty UTF-8 without spaces and control characters other than tab and
    CR, not starting with white space), a space, 4 d bytes of finite little-endian float32, and a
    newline when the first record has one (the last may lack it); then only white space.
    """
    head, _, rest = data.partition(b"\n")
    n, d = (int(x) for x in head.split())
    words, vectors, pos, newline = [], [], 0, None
    for _ in range(n):
        space = rest.find(b" ", pos)
        word = s_reference_word(rest[pos:space] if space >= 0 and space + 1 + 4 * d <= len(rest) else b"")
        if word is None:
            return None
        words.append(word)
        vector = struct.unpack(f"<{d}f", rest[space + 1:space + 1 + 4 * d])
        if not all(np.isfinite(vector)):
            return None
        vectors.append(vector)
        pos = space + 1 + 4 * d
        if newline is None:
            newline = rest[pos:pos + 1] == b"\n"
        if newline and rest[pos:pos + 1] == b"\n":
            pos += 1
        elif newline and pos < len(rest):
            return None
    if rest[pos:].strip(b" \t\r\n") or len(set(words)) < len(words):
        return None
    return words, np.array(vectors, dtype=np.float32).reshape(n, d)


def s_native_case(index: int, rng, root: Path) -> SCase:
    """A native directory written by the library's writer from the model; damaged by cutting a member."""
    from embdebias.embedding import Embedding
    from embdebias.io.native import write_native
    n, d = int(rng.integers(1, 30)), int(rng.integers(1, 17))
    words = s_words(rng, n)
    vectors = s_bin_vectors(rng, n, d)
    out = root / f"native{index}.embd"
    write_native(Embedding(words, vectors), out)
    files = {f"case.embd/{p.name}": p.read_bytes() for p in out.iterdir()}
    shutil.rmtree(out)
    damage = rng.random() < 0.3
    if damage:
        member = sorted(k for k in files if not k.endswith(".json"))[int(rng.integers(0, len(files) - 1))]
        files[member] = files[member][:-int(rng.integers(1, min(8, len(files[member])) + 1))]
    return SCase(index, "native", "cut member" if damage else "valid", files, "case.embd", "native",
                 None if damage else words, None if damage else vectors)


def make_structured(index: int, base_seed: int, root: Path, kinds=None) -> SCase:
    """Case ``index`` of the campaign: its kind is ``kinds[index % len(kinds)]`` (default every kind)."""
    rng = np.random.default_rng([base_seed, index, 20])
    kinds = kinds or S_ALL_KINDS
    kind = kinds[index % len(kinds)]
    if kind in U_KINDS:
        return U_MAKERS[kind](index, rng)
    if kind in ("word2vec-text", "glove"):
        return s_text_case(index, rng, kind == "glove")
    if kind == "native":
        return s_native_case(index, rng, root)
    return s_bin_case(index, rng, kind == "word2vec-bin")


def s_read_in_child(case: SCase, where: Path, timeout: float, mem: int) -> dict:
    """Load the case in a forked child; its outcome as a dict (``crash``: the signal that ended it)."""
    result = where / "result.json"
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        try:
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            import warnings

            from embdebias.errors import EmbdebiasError
            from embdebias.io import load
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if case.kind in U_KINDS:
                        out = {"ok": True, "summary": U_ACTIONS[case.kind](where / case.entry)}
                    else:
                        emb = load(str(where / case.entry), format=case.fmt)
                if case.kind not in U_KINDS:
                    np.save(str(where / "vectors.npy"), np.ascontiguousarray(emb.vectors, dtype=np.float32))
                    out = {"ok": True, "words": emb.words.tolist()}
            except EmbdebiasError as exc:
                out = {"ok": False, "error": type(exc).__name__, "message": str(exc)[:300]}
            except BaseException as exc:  # noqa: BLE001 - a traceback class
                out = {"ok": False, "error": type(exc).__name__, "message": str(exc)[:300], "traceback": True}
            result.write_text(json.dumps(out))
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"hang": True}
        time.sleep(0.002)
    if os.WIFSIGNALED(status):
        return {"crash": signal.Signals(os.WTERMSIG(status)).name}
    try:
        return json.loads(result.read_text())
    except (OSError, ValueError):
        return {"crash": f"exit {os.WEXITSTATUS(status)} without a result"}


def s_classify(case: SCase, got: dict, where: Path) -> tuple[str, str]:
    if got.get("hang"):
        return "hang", "no result within the timeout"
    if "crash" in got:
        return "abort", got["crash"]
    if got.get("traceback"):
        return "traceback", f"{got['error']}: {got['message'][:150]}"
    if not got["ok"]:
        return ("clean", "") if case.words is None else ("refused", f"{got['error']}: {got['message'][:200]}")
    if case.words is None and case.alternative is not None:
        why = s_words_differ(got["words"], case.alternative[0]) or s_values_differ(
            np.load(str(where / "vectors.npy")), case.alternative[1])
        return ("misread", f"{why} (the grammar's reading of the damaged bytes)") if why else \
            ("ambiguous", "read as the format's grammar reads the bytes")
    if case.words is None:
        return "misread", f"read {len(got['words'])} words with no error, expected one ({case.desc})"
    why = s_words_differ(got["words"], case.words) or s_values_differ(np.load(str(where / "vectors.npy")),
                                                                       case.vectors)
    return ("misread", why) if why else ("ok", "")


def s_words_differ(got: list, want: list) -> str | None:
    if got == want:
        return None
    k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return (f"{len(got)} words, expected {len(want)}; word {k}: {got[k] if k < len(got) else None!r}, "
            f"expected {want[k] if k < len(want) else None!r}")


def s_values_differ(got: np.ndarray, want: np.ndarray) -> str | None:
    """Bit for bit (so -0.0 is not 0.0)."""
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    bad = np.argwhere(got.view(np.uint32) != want.view(np.uint32))
    if not len(bad):
        return None
    r, c = (int(x) for x in bad[0])
    return f"value [{r}, {c}]: {got[r, c]!r}, expected {want[r, c]!r}"


# --------------------------------------------------------------------------- user files (--structured)
# The newest inputs: fitted-parameter files, attribute files, WEAT test files, sweep configurations and
# fairness CSVs. Each case is a model of the file (what a valid one holds, computed without the reader),
# valid or damaged in one way, and an action that reads it as the library does; the action's summary of a
# valid case must equal the model's, a damaged case must be an EmbdebiasError. ``SAFE_NAME``: a hostile
# name that may be refused or accepted, but never kept as a path component that leaves a directory.
U_KINDS = S_ALL_KINDS[len(S_KINDS):]
SAFE_NAME = "safe-name"
ANY = "any"  # crashes, hangs and tracebacks only
#: Hostile names for anything that becomes a path component (attribute names, test ids).
HOSTILE_NAMES = ["../x", "..", ".", "/tmp/abs", "a/b", "nul\x00byte", "", " ", "x" * 300, "a\\b", "~", "-rf"]


def u_safe_name(name) -> bool:
    """Whether ``name`` can be a path component that stays in its directory."""
    return (isinstance(name, str) and 0 < len(name) <= 255 and name not in (".", "..")
            and not any(c in name for c in ("/", "\\", "\x00")) and name.strip() == name and name.strip() != "")


def u_json(value) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def u_deep(depth: int):
    """JSON nested ``depth`` lists deep (as text: json.dumps recurses)."""
    return "[" * depth + "]" * depth


def u_case(index: int, kind: str, desc: str, files: dict, entry: str, expect) -> SCase:
    return SCase(index, kind, desc, files, entry, kind, None, None, expect=expect)


# -- fitted-parameter files ---------------------------------------------------------------------------------
_P_STATE: dict = {}
P_METHODS = {"hsr": {}, "oscar": {}, "hard": {}, "inlp": {"n_iterations": 2}}


def p_state() -> dict:
    """The embedding the parameter cases transform, and each method's file and transform's hash (built once,
    in the parent, before any child forks)."""
    if not _P_STATE:
        import hashlib
        import warnings

        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from debiaser_data import gendered_embedding

        from embdebias.debias import make_debiaser

        emb = gendered_embedding(n_filler=400, dim=12)
        root = Path(tempfile.mkdtemp(prefix="efz-p-"))
        files = {}
        for name, params in P_METHODS.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = make_debiaser(name, **params).fit(emb)
                out = np.ascontiguousarray(est.transform(emb).vectors, dtype=np.float32)
            path = est.save_params(root / f"{name}.npz")
            files[name] = (Path(path).read_bytes(), hashlib.sha256(out.tobytes()).hexdigest())
        shutil.rmtree(root, ignore_errors=True)
        _P_STATE.update(emb=emb, files=files)
    return _P_STATE


def p_members(data: bytes) -> dict:
    with zipfile_module().ZipFile(io.BytesIO(data)) as z:
        return {i.filename[:-4]: z.read(i) for i in z.infolist()}


def zipfile_module():
    import zipfile

    return zipfile


def p_zip(members: dict, compress: bool = False, comment: bytes = b"") -> bytes:
    zipfile = zipfile_module()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as z:
        for name, blob in members.items():
            z.writestr(f"{name}.npy", blob)
        z.comment = comment
    return buf.getvalue()


def p_meta(members: dict) -> dict:
    return json.loads(np.load(io.BytesIO(members["__meta__"])).tobytes())


def p_with_meta(members: dict, meta: dict) -> dict:
    return {**members, "__meta__": npy_bytes(np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))}


def p_npy_claiming(shape, descr: str = "<f8", data: bytes = b"\0" * 64) -> bytes:
    return npy_bytes(header_text=f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple(shape)!r}, }}",
                     data=data)


def p_array_names(members: dict) -> list:
    return sorted(k for k in members if k != "__meta__")


def p_member_edit(rng, members: dict, d: int) -> tuple[str, dict]:
    name = p_array_names(members)[int(rng.integers(0, len(p_array_names(members))))]
    what = str(rng.choice(["dtype int", "dtype big-endian", "dtype object", "shape", "huge rows", "nan",
                           "drop", "extra", "structured"]))
    arr = np.load(io.BytesIO(members[name]))
    out = dict(members)
    if what == "dtype int":
        out[name] = npy_bytes(arr.astype(np.int64))
    elif what == "dtype big-endian":
        out[name] = npy_bytes(arr.astype(">f8"))
    elif what == "dtype object":
        out[name] = p_npy_claiming(arr.shape, "|O")
    elif what == "shape":
        out[name] = npy_bytes(np.zeros((*arr.shape[:-1], arr.shape[-1] + 1)) if arr.ndim else np.zeros(2))
    elif what == "huge rows":
        out[name] = p_npy_claiming((10 ** 12, d))
    elif what == "nan":
        bad = arr.astype(np.float64).copy()
        bad.flat[int(rng.integers(0, max(bad.size, 1)))] = np.nan if bad.size else 0
        out[name] = npy_bytes(bad if bad.size else np.full((1, d), np.nan))
    elif what == "drop":
        del out[name]
    elif what == "extra":
        extra = str(rng.choice(["transform_matrix_", "map_", "n_features_in_", "components_", "x_", "__meta2__"]))
        if extra in out:
            extra = "n_features_in_"
        out[extra] = npy_bytes(np.eye(d))
    else:
        out[name] = npy_bytes(np.zeros(arr.shape[:1] or (1,), dtype=[("a", "<f4"), ("b", "<f4")]))
    return f"member {name}: {what}", out


def p_meta_edit(rng, members: dict, others: list) -> tuple[str, dict]:
    meta = p_meta(members)
    what = str(rng.choice(["extra key", "deep", "dimension string", "dimension 0", "dimension bool",
                           "another method", "version", "unknown attribute", "attribute type",
                           "unknown parameter", "bad parameter", "format", "not json"]))
    attrs = dict(meta.get("attributes", {}))
    if what == "extra key":
        meta["evil"] = 1
    elif what == "deep":  # as text: the JSON module's own recursion could not build it
        meta.pop("kinds", None)
        text = json.dumps(meta)[:-1] + f', "kinds": {{"x": {u_deep(int(rng.choice([20, 2000, 200_000])))}}}}}'
        return "meta: deep", {**members, "__meta__": npy_bytes(np.frombuffer(text.encode(), dtype=np.uint8))}
    elif what == "dimension string":
        meta["n_features_in"] = str(meta["n_features_in"])
    elif what == "dimension 0":
        meta["n_features_in"] = 0
    elif what == "dimension bool":
        meta["n_features_in"] = True
    elif what == "another method":
        meta["estimator"] = others[int(rng.integers(0, len(others)))]
    elif what == "version":
        meta["version"] = 2
    elif what == "unknown attribute":
        meta["attributes"] = {**attrs, "map_": [[1.0]]}
    elif what == "attribute type":
        key = next(iter(attrs), None)
        meta["attributes"] = {**attrs, key: "a string"} if key else {"theta_": "x"}
    elif what == "unknown parameter":
        meta["params"] = {**meta.get("params", {}), "evil_param": 1}
    elif what == "bad parameter":
        params = dict(meta.get("params", {}))
        key = next((k for k, v in params.items() if isinstance(v, (int, float)) and not isinstance(v, bool)), None)
        params[key or "chunk_rows"] = "NaN please"
        meta["params"] = params
    elif what == "format":
        meta["format"] = "something-else"
    else:
        return "meta: not json", {**members, "__meta__": npy_bytes(np.frombuffer(b"{not json", dtype=np.uint8))}
    return f"meta: {what}", p_with_meta(members, meta)


def p_container_edit(rng, data: bytes, members: dict) -> tuple[str, bytes]:
    what = str(rng.choice(["npy first", "text first", "trailing bytes", "comment", "truncated", "duplicate",
                           "flip data", "bomb", "too many members"]))
    if what == "npy first":
        return what, npy_bytes(np.zeros(3)) + data
    if what == "text first":
        return what, b"the 0.1 0.2\n" + data
    if what == "trailing bytes":
        return what, data + bytes(int(rng.integers(1, 30)))
    if what == "comment":
        return what, p_zip(members, comment=b"GIF89a")
    if what == "truncated":
        return what, data[:int(rng.integers(10, len(data) - 1))]
    if what == "duplicate":
        zipfile = zipfile_module()
        buf = io.BytesIO()
        import warnings
        with zipfile.ZipFile(buf, "w") as z, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, blob in [*members.items(), (p_array_names(members)[0], members[p_array_names(members)[0]])]:
                z.writestr(f"{name}.npy", blob)
        return what, buf.getvalue()
    if what == "flip data":
        zipfile = zipfile_module()
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            info = z.infolist()[int(rng.integers(0, len(members)))]
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
        at = start + int(rng.integers(0, max(info.compress_size, 1)))
        flipped = bytearray(data)
        flipped[at] ^= 1 << int(rng.integers(0, 8))
        return what, bytes(flipped)
    if what == "bomb":
        name = p_array_names(members)[0]
        return what, p_zip({**members, name: npy_bytes(np.zeros((1 << 22, 2)))}, compress=True)
    return what, p_zip({**members, **{f"x{i}_": npy_bytes(np.zeros(1)) for i in range(20)}})


def p_case(index: int, rng) -> SCase:
    state = p_state()
    method = list(P_METHODS)[int(rng.integers(0, len(P_METHODS)))]
    data, digest = state["files"][method]
    members, d = p_members(data), state["emb"].dim
    expect = {"method": method, "sha256": digest}
    roll = rng.random()
    if roll < 0.25:
        if rng.random() < 0.3:
            return u_case(index, "params", f"{method} valid, deflated", {"p.npz": p_zip(members, compress=True)},
                          "p.npz", expect)
        return u_case(index, "params", f"{method} valid", {"p.npz": data}, "p.npz", expect)
    if roll < 0.5:
        what, out = p_member_edit(rng, members, d)
        blob = p_zip(out)
    elif roll < 0.75:
        others = [p_meta(p_members(v[0]))["estimator"] for k, v in state["files"].items() if k != method]
        what, out = p_meta_edit(rng, members, others)
        blob = p_zip(out)
    else:
        what, blob = p_container_edit(rng, data, members)
    return u_case(index, "params", f"{method} {what}", {"p.npz": blob}, "p.npz", None)


def p_action(path: Path) -> dict:
    import hashlib

    from embdebias.debias import load_fitted

    emb = p_state()["emb"]
    name, est = load_fitted(str(path), dim=emb.dim)
    out = np.ascontiguousarray(est.transform(emb).vectors, dtype=np.float32)
    return {"method": name, "sha256": hashlib.sha256(out.tobytes()).hexdigest()}


# -- attribute files ---------------------------------------------------------------------------------------
def a_model(rng) -> dict:
    k = int(rng.integers(2, 4))
    groups = [f"group{j}" for j in range(k)]
    n_sets = int(rng.integers(2, 5))
    sets = [[f"w{s}x{j}" for j in range(k)] for s in range(n_sets)]
    return {"name": f"attr{int(rng.integers(0, 1000))}", "groups": groups, "defining_sets": sets,
            "neutral_words": ["doctor", "nurse", "engineer"][:int(rng.integers(0, 4))]}


def a_summary(attr) -> dict:
    return {"name": attr.name, "groups": list(attr.groups), "defining_sets": [list(s) for s in attr.defining_sets]}


def a_damage(rng, model: dict) -> tuple[str, object, object]:
    """(what, the JSON value or raw bytes, expectation) of one damage."""
    what = str(rng.choice(["hostile name", "words a string", "one-word equalize pair", "group twice",
                           "deep nesting", "not utf-8", "not an object", "unknown key", "set size",
                           "fifo", "empty word", "huge number"]))
    bad = json.loads(json.dumps(model))
    if what == "hostile name":
        bad["name"] = HOSTILE_NAMES[int(rng.integers(0, len(HOSTILE_NAMES)))]
        return f"name {bad['name'][:20]!r}", bad, SAFE_NAME
    if what == "words a string":
        bad["defining_sets"][0] = "".join(bad["defining_sets"][0])
    elif what == "one-word equalize pair":
        bad["equalize_sets"] = [bad["defining_sets"][0][:1]]
    elif what == "group twice":
        bad["groups"] = [bad["groups"][0]] * len(bad["groups"])
    elif what == "deep nesting":
        return what, ('{"name": "a", "groups": ["x", "y"], "defining_sets": [["a", "b"], ["c", "d"]], '
                      f'"description": {u_deep(int(rng.choice([50, 5000])))}}}').encode(), None
    elif what == "not utf-8":
        return what, u_json(model).replace(b'"groups"', b'"gr\xffoups"'), None
    elif what == "not an object":
        bad = [model]
    elif what == "unknown key":
        bad["evil"] = 1
    elif what == "set size":
        bad["defining_sets"][-1] = bad["defining_sets"][-1] + ["extra"]
    elif what == "fifo":
        return what, Special("fifo"), None
    elif what == "empty word":
        bad["defining_sets"][0][0] = ""
    else:
        bad["groups"] = [10 ** 400] * 2
        return what, json.dumps(bad).encode(), None
    return what, bad, None


def a_case(index: int, rng) -> SCase:
    model = a_model(rng)
    if rng.random() < 0.3:
        return u_case(index, "attribute", "valid", {"attr.json": u_json(model)}, "attr.json",
                      {"name": model["name"], "groups": model["groups"], "defining_sets": model["defining_sets"]})
    what, value, expect = a_damage(rng, model)
    data = value if isinstance(value, (bytes, Special)) else u_json(value)
    return u_case(index, "attribute", what, {"attr.json": data}, "attr.json", expect)


def a_action(path: Path) -> dict:
    from embdebias.data.attributes import load_attribute

    return a_summary(load_attribute(str(path)))


# -- WEAT test files ---------------------------------------------------------------------------------------
def w_model(rng) -> list:
    tests = []
    for t in range(int(rng.integers(1, 4))):
        tests.append({"id": f"mytest{t}", "title": f"test {t}",
                      **{k: {"name": f"{k.lower()}{t}", "words": [f"{k.lower()}{t}w{i}" for i in
                                                                   range(int(rng.integers(2, 6)))]}
                         for k in "XYAB"}})
    return tests


def w_damage(rng, model: list) -> tuple[str, object, object]:
    what = str(rng.choice(["words a string", "duplicate id", "missing set", "empty words", "not utf-8",
                           "deep nesting", "not a list", "hostile id", "word not a string", "fifo"]))
    bad = json.loads(json.dumps(model))
    k = str(rng.choice(list("XYAB")))
    if what == "words a string":
        bad[0][k]["words"] = " ".join(bad[0][k]["words"])
    elif what == "duplicate id":
        bad.append(json.loads(json.dumps(bad[0])))
    elif what == "missing set":
        del bad[0][k]
    elif what == "empty words":
        bad[0][k]["words"] = []
    elif what == "not utf-8":
        return what, u_json(model).replace(b'"title"', b'"ti\xfftle"'), None
    elif what == "deep nesting":
        return what, f'[{{"id": "t", "extra": {u_deep(int(rng.choice([50, 5000])))}}}]'.encode(), None
    elif what == "not a list":
        bad = "a string"
    elif what == "hostile id":
        bad[0]["id"] = HOSTILE_NAMES[int(rng.integers(0, len(HOSTILE_NAMES)))]
        return f"id {bad[0]['id'][:20]!r}", bad, ANY
    elif what == "word not a string":
        bad[0][k]["words"][0] = {"x": 1}
    else:
        return what, Special("fifo"), None
    return what, bad, None


def w_case(index: int, rng) -> SCase:
    model = w_model(rng)
    if rng.random() < 0.3:
        return u_case(index, "weat-tests", "valid", {"tests.json": u_json(model)}, "tests.json",
                      {"tests": [[t["id"], *[t[k]["words"] for k in "XYAB"]] for t in model]})
    what, value, expect = w_damage(rng, model)
    data = value if isinstance(value, (bytes, Special)) else u_json(value)
    return u_case(index, "weat-tests", what, {"tests.json": data}, "tests.json", expect)


def w_action(path: Path) -> dict:
    from embdebias.data.wordlists import load_weat_tests

    tests = load_weat_tests(str(path))
    return {"tests": [[t.id, *[list(getattr(t, k).words) for k in "XYAB"]] for t in tests]}


# -- sweep configurations ----------------------------------------------------------------------------------
SWEEP_EMBEDDING = b"3 2\nhe 0.1 0.2\nshe 0.2 0.1\nking 0.3 0.3\n"


def s_toml(model: dict) -> bytes:
    lines = [f"seeds = {model['seeds']}", f"attributes = {json.dumps(model['attributes'])}",
             f"bootstrap = {model['bootstrap']}", "", "[[embeddings]]", f'path = "{model["path"]}"', ""]
    for method, params in model["methods"].items():
        lines.append(f"[methods.{method}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in params.items()]
    return ("\n".join(lines) + "\n").encode()


def s_model(rng) -> dict:
    methods = {"hard": {}}
    if rng.random() < 0.6:
        methods["soft"] = {"lam": sorted({round(float(x), 3) for x in rng.uniform(0.05, 1, int(rng.integers(1, 4)))})}
    return {"seeds": sorted({int(x) for x in rng.integers(0, 5, int(rng.integers(1, 3)))}), "attributes": ["gender"],
            "bootstrap": int(rng.integers(0, 3)) * 10, "path": "emb.txt", "methods": methods}


def s_summary(config) -> dict:
    return {"embeddings": [e.path.rsplit("/", 1)[-1] for e in config.embeddings], "seeds": list(config.seeds),
            "methods": {m: [dict(sorted(p.items())) for p in config.grid(m)] for m in sorted(config.methods)}}


def s_expected(model: dict) -> dict:
    grids = {m: [{"lam": v} for v in p["lam"]] if p else [{}] for m, p in model["methods"].items()}
    return {"embeddings": ["emb.txt"], "seeds": model["seeds"], "methods": dict(sorted(grids.items()))}


def s_damage(rng, model: dict) -> tuple[str, dict]:
    """(what, files) of one damage (every one must be an error before any work)."""
    what = str(rng.choice(["not utf-8", "deep arrays", "huge integer", "huge grid", "directory config",
                           "fifo config", "dev zero config", "unknown key", "unknown method", "bad toml",
                           "missing embedding", "negative bootstrap"]))
    text = s_toml(model)
    files = {"emb.txt": SWEEP_EMBEDDING}
    if what == "not utf-8":
        text = text.replace(b"seeds", b"se\xffeds", 1)
    elif what == "deep arrays":
        text += f"deep = {'[' * int(rng.choice([100, 20000]))}{']' * 1}\n".encode()
        text = text.replace(b"deep = ", b"seeds = ", 1).replace(f"seeds = {model['seeds']}\n".encode(), b"", 1)
    elif what == "huge integer":
        text = text.replace(f"seeds = {model['seeds']}".encode(), b"seeds = [123456789012345678901234567890]")
    elif what == "huge grid":
        lam = ", ".join(f"{0.001 * (i + 1):.6f}" for i in range(25_000))
        seeds = ", ".join(str(i) for i in range(40_000))
        text = (f"seeds = [{seeds}]\n\n[[embeddings]]\npath = \"emb.txt\"\n\n[methods.soft]\nlam = [{lam}]\n"
                .encode())
    elif what == "directory config":
        files["config.toml"] = Special("emptydir")
        return what, files
    elif what == "fifo config":
        files["config.toml"] = Special("fifo")
        return what, files
    elif what == "dev zero config":
        files["config.toml"] = Special("devzero")
        return what, files
    elif what == "unknown key":
        text = b"evil = 1\n" + text
    elif what == "unknown method":
        text += b"[methods.nosuch]\n"
    elif what == "bad toml":
        text += b"[[[\n"
    elif what == "missing embedding":
        del files["emb.txt"]
    else:
        text = text.replace(f"bootstrap = {model['bootstrap']}".encode(), b"bootstrap = -5")
    files["config.toml"] = text
    return what, files


def s_case(index: int, rng) -> SCase:
    model = s_model(rng)
    if rng.random() < 0.3:
        return u_case(index, "sweep-config", "valid", {"emb.txt": SWEEP_EMBEDDING, "config.toml": s_toml(model)},
                      "config.toml", s_expected(model))
    what, files = s_damage(rng, model)
    return u_case(index, "sweep-config", what, files, "config.toml", None)


def s_action(path: Path) -> dict:
    from embdebias.sweep.config import load_config

    return s_summary(load_config(str(path)))


# -- fairness CSVs -----------------------------------------------------------------------------------------
def f_model(rng) -> dict:
    many = rng.random() < 0.1
    g = int(rng.integers(2_000, 20_000)) if many else int(rng.integers(2, 7))
    per = int(rng.integers(2, 5))
    groups = np.repeat(np.arange(g), per)
    labels = np.tile(np.arange(per) % 2, g)  # every group has both labels
    scores = np.round(rng.uniform(0, 1, groups.size), 3)
    return {"groups": [f"g{i}" for i in groups], "labels": labels.tolist(), "scores": scores.tolist()}


def f_oracle(model: dict) -> dict:
    """tpr_gap (PCM, |TPR_i - TPR_k| averaged over pairs) and fped (BCM, sum of |FPR - FPR_g|), from the
    model's numbers by sorting, not through the library."""
    from fractions import Fraction

    rates = {}
    for group, label, score in zip(model["groups"], model["labels"], model["scores"]):
        pos = rates.setdefault(group, [0, 0, 0, 0])  # TP, P, FP, N
        if label == 1:
            pos[0] += score >= 0.5
            pos[1] += 1
        else:
            pos[2] += score >= 0.5
            pos[3] += 1
    tpr = sorted(Fraction(tp, p) for tp, p, _, _ in rates.values())
    g = len(tpr)
    gap = sum(t * (2 * j - g + 1) for j, t in enumerate(tpr)) / (g * (g - 1) // 2)
    fp = sum(v[2] for v in rates.values())
    n = sum(v[3] for v in rates.values())
    fped = sum(abs(Fraction(fp, n) - Fraction(v[2], v[3])) for v in rates.values())
    return {"tpr_gap": float(gap), "fped": float(fped)}


def f_csv(model: dict, ids=None) -> bytes:
    ids = ids or [f"e{i}" for i in range(len(model["groups"]))]
    rows = [f"{i},{g},{s},{lab}" for i, g, s, lab in zip(ids, model["groups"], model["scores"], model["labels"])]
    return ("id,group,score,label\n" + "\n".join(rows) + "\n").encode()


def f_damage(rng, model: dict) -> tuple[str, object]:
    what = str(rng.choice(["duplicate id", "nan score", "label 2", "missing column", "ragged row", "not utf-8",
                           "empty", "header only", "fifo", "empty cell", "open quote"]))
    data = f_csv(model)
    lines = data.split(b"\n")
    k = int(rng.integers(1, len(lines) - 1))
    if what == "duplicate id":
        lines.insert(k, lines[k])
    elif what == "nan score":
        parts = lines[k].split(b",")
        parts[2] = str(rng.choice(["nan", "inf", "-inf", "1e999", "abc"])).encode()
        lines[k] = b",".join(parts)
    elif what == "label 2":
        lines[k] = lines[k].rsplit(b",", 1)[0] + b",2"
    elif what == "missing column":
        lines = [b",".join(line.split(b",")[:2] + line.split(b",")[3:]) for line in lines]
    elif what == "ragged row":
        lines[k] += b",extra"
    elif what == "not utf-8":
        lines[k] = lines[k].replace(b",", b"\xff,", 1)
    elif what == "empty":
        return what, b""
    elif what == "header only":
        return what, lines[0] + b"\n"
    elif what == "fifo":
        return what, Special("fifo")
    elif what == "empty cell":
        lines[k] = b"," + lines[k].split(b",", 1)[1]
    else:
        lines[k] = lines[k].replace(b",", b',"', 1)
    return what, b"\n".join(lines)


def f_case(index: int, rng) -> SCase:
    model = f_model(rng)
    if rng.random() < 0.35:
        desc = f"valid, {len(set(model['groups'])):,} groups"
        return u_case(index, "fairness-csv", desc, {"scores.csv": f_csv(model)}, "scores.csv", f_oracle(model))
    what, data = f_damage(rng, model)
    return u_case(index, "fairness-csv", what, {"scores.csv": data}, "scores.csv", None)


def f_action(path: Path) -> dict:
    from embdebias.fairness import read_scores_csv

    table = read_scores_csv(str(path), metrics=["tpr_gap", "fped"])
    return {name: float(table.metric(name).value) for name in ("tpr_gap", "fped")}


U_MAKERS = {"params": p_case, "attribute": a_case, "weat-tests": w_case, "sweep-config": s_case,
            "fairness-csv": f_case}
U_ACTIONS = {"params": p_action, "attribute": a_action, "weat-tests": w_action, "sweep-config": s_action,
             "fairness-csv": f_action}


def u_warm_up(kinds: list, seed: int, root: Path) -> None:
    """Run each user kind's action once on a valid case in the parent: what it imports (the debiasers,
    scikit-learn) is then imported before the children fork, so no child spends its timeout importing."""
    for kind in kinds:
        for i in range(50):
            case = U_MAKERS[kind](i, np.random.default_rng([seed, i, 21]))
            if isinstance(case.expect, dict):
                where = root / f"warm-{kind}"
                write_files(where, case.files)
                U_ACTIONS[kind](where / case.entry)
                shutil.rmtree(where, ignore_errors=True)
                break


def u_classify(case: SCase, got: dict) -> tuple[str, str]:
    """The class of a user-file case's outcome (vector cases: :func:`s_classify`)."""
    if got.get("hang"):
        return "hang", "no result within the timeout"
    if "crash" in got:
        return "abort", got["crash"]
    if got.get("traceback"):
        return "traceback", f"{got['error']}: {got['message'][:150]}"
    if case.expect == ANY:
        return ("ok", "") if got["ok"] else ("clean", "")
    if not got["ok"]:
        if case.expect is None or case.expect == SAFE_NAME:
            return "clean", ""
        return "refused", f"{got['error']}: {got['message'][:200]}"
    summary = got["summary"]
    if case.expect is None:
        return "misread", f"accepted with no error ({case.desc}): {json.dumps(summary)[:120]}"
    if case.expect == SAFE_NAME:
        return ("ok", "") if u_safe_name(summary.get("name")) else \
            ("misread", f"kept the unsafe name {summary.get('name')!r}")
    if summary == case.expect or (case.kind == "fairness-csv" and u_close(summary, case.expect)):
        return "ok", ""
    return "misread", f"read {json.dumps(summary)[:150]}, expected {json.dumps(case.expect)[:150]}"


def u_close(got: dict, want: dict) -> bool:
    return set(got) == set(want) and all(abs(got[k] - want[k]) <= 1e-9 * max(1.0, abs(want[k])) for k in want)


def structured_campaign(opts) -> tuple[list, float]:
    """``--structured``: ``--mutants`` cases from the format models, each read once in a forked child."""
    import embdebias.io  # noqa: F401 - imported once, before the children fork
    import embdebias.io.text  # noqa: F401
    import embdebias.io.word2vec_bin  # noqa: F401

    kinds = tuple(opts.kinds or S_ALL_KINDS)
    root = Path(tempfile.mkdtemp(prefix="efz-s-"))
    u_warm_up([k for k in kinds if k in U_KINDS], opts.seed, root)
    t0 = time.monotonic()
    results = []
    try:
        for i in (opts.only if opts.only else range(opts.mutants)):
            case = make_structured(i, opts.seed, root, kinds)
            where = root / f"c{i}"
            write_files(where, case.files)
            got = s_read_in_child(case, where, opts.timeout, opts.mem_limit)
            cls, detail = u_classify(case, got) if case.kind in U_KINDS else s_classify(case, got, where)
            results.append((case, cls, detail))
            if opts.verbose:
                print(f"{i:5d} {case.kind:20s} {case.desc:20s} {cls:9s} {detail[:100]}", flush=True)
            if opts.keep_failures and cls in S_BAD:
                dest = Path(opts.keep_failures) / cls / f"{case.kind}-{i:05d}"
                shutil.rmtree(dest, ignore_errors=True)
                write_files(dest, case.files)
                (dest / "README.txt").write_text(f"case {i} (--structured --seed {opts.seed} --only {i}): "
                                                 f"{case.kind}, {case.desc}\n{cls}: {detail}\n")
            shutil.rmtree(where, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return results, time.monotonic() - t0


def structured_report(results: list, elapsed: float, opts) -> str:
    table = collections.Counter((case.kind, cls) for case, cls, _ in results)
    damaged = collections.Counter(case.kind for case, _, _ in results if case.must_fail)
    kinds = [k for k in S_ALL_KINDS if any(case.kind == k for case, _, _ in results)]
    lines = ["# embdebias structure-aware fuzz report", "",
             f"seed {opts.seed}, {len(results)} cases built from models of the formats and of the user files "
             f"(expected words, float32 values and summaries computed independently), {elapsed:.0f} s wall", "",
             "| format | cases | must fail | " + " | ".join(S_CLASSES) + " |", "|---" * (len(S_CLASSES) + 3) + "|"]
    for k in kinds:
        total = sum(table[k, c] for c in S_CLASSES)
        lines.append(f"| {k} | {total} | {damaged[k]} | " + " | ".join(str(table[k, c]) for c in S_CLASSES) + " |")
    lines.append(f"| **total** | **{len(results)}** | **{sum(damaged.values())}** | "
                 + " | ".join(f"**{sum(table[k, c] for k in kinds)}**" for c in S_CLASSES) + " |")
    bad = [(case, cls, detail) for case, cls, detail in results if cls in S_BAD]
    lines += ["", f"bad cases: {len(bad)}", ""]
    by_case = collections.Counter((case.kind, case.desc if case.kind in U_KINDS else "", cls)
                                  for case, cls, _ in bad)
    if any(case.kind in U_KINDS for case, _, _ in bad):
        lines += ["| kind | case | outcome | count |", "|---|---|---|---|"]
        lines += [f"| {k} | {d} | {c} | {n} |" for (k, d, c), n in sorted(by_case.items()) if k in U_KINDS]
        lines.append("")
    for case, cls, detail in bad[:40]:
        lines.append(f"- case {case.index} {case.kind} ({case.desc}): {cls}: {detail}")
    return "\n".join(lines)


def atomic_write(path: str, text: str) -> None:
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, target)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--seed", type=int, default=0, help="campaign seed (mutant i depends only on seed and i)")
    p.add_argument("--mutants", type=int, default=300, help="number of mutants (each runs info and convert)")
    p.add_argument("--only", type=int, nargs="+", help="run only these mutant numbers (reproduce a failure)")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per run before it counts as a hang")
    p.add_argument("--mem-limit", type=float, default=3.0, help="address-space cap per run, GiB (RLIMIT_AS)")
    p.add_argument("--jobs", type=int, default=2, help="parallel worker processes")
    p.add_argument("--formats", nargs="+", choices=FORMATS, help="seed formats to mutate (default: all)")
    p.add_argument("--out", help="write the Markdown report here (atomically)")
    p.add_argument("--keep-failures", metavar="DIR", help="save the input and a README of every bad case here")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per run")
    p.add_argument("--structured", action="store_true",
                   help="structure-aware mode: --mutants cases built from a model of each format (text, GloVe,\n"
                        "word2vec-bin in both layouts, native) with an independent oracle of the words and float32\n"
                        "values, each read through embdebias.io.load in a forked child")
    p.add_argument("--kinds", nargs="+", choices=S_ALL_KINDS,
                   help="--structured: only these kinds of cases (default: all; case i is kind i mod their number)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    opts.mem_limit = int(opts.mem_limit * 2**30)
    return opts


def main(argv=None) -> int:
    opts = parse_args(argv)
    if opts.worker:
        worker_main()
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up the work directory like ^C does
    if opts.structured:
        results, elapsed = structured_campaign(opts)
        text = structured_report(results, elapsed, opts)
        print(text)
        if opts.out:
            atomic_write(opts.out, text + "\n")
        return 1 if any(cls in S_BAD for _, cls, _ in results) else 0
    results, elapsed = campaign(opts)
    text = report(results, elapsed, opts)
    print(text)
    if opts.out:
        atomic_write(opts.out, text + "\n")
    return 1 if any(r.cls in BAD for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
