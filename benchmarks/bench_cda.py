"""Benchmark: ``embdebias cda`` throughput (MB/s of text, one core) against baselines.

Two corpora, written to a temporary directory and removed afterwards (never committed):

* **generated**: English-like sentences from a seeded vocabulary (function words, a few
  thousand content words, and gendered words at about 3 % of the words, the density of
  fiction, where he/she/her/his/him alone are 3-4 % of the words), repeated to ``--mb``;
* **gcide**: Debian's ``dict-gcide`` (the 1913 Webster dictionary with its quotations)
  as one sentence a line, made by ``benchmarks/gcide.py`` when the package is installed
  (``apt-get install dict-gcide``); skipped otherwise.

Each is timed, in the same invocation:

* the **physical floor**: copying the file block by block (read + write), and for the
  gzip input, decompressing it;
* **embdebias** ``augment_file``: two-sided grammatical (the default), naive, replace, and
  gzip in and out;
* **baselines** on a slice of the corpus (``--baseline-mb``), in memory, naive
  intervention in replace mode (less work than the default): a per-word Python loop (a
  regex finds each word, a dict says whether to swap it) and one compiled regex of the
  dictionary words (a trie, in three cases) with a dict lookup in its replacement
  callback, the usual ``re.sub`` implementation; and embdebias on the same slice, file to
  file.

MB/s is decompressed text bytes read per second of CPU time of this process
(``time.process_time``, one core: the augmentation is single-threaded) and, in the last
column, per second of wall time.

Usage::

    python benchmarks/bench_cda.py                 # 200 MB generated + gcide if installed
    python benchmarks/bench_cda.py --mb 50 --json results.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from embdebias.cda import CounterfactualAugmenter, augment_file  # noqa: E402

SEED = 2024
_FUNCTION = ("the of and to a in that it was for on as with at by from this but not be had have are "
             "were which one all they we there been when who will would an or so if out up what about "
             "into than them can only other new some could time these two may then do first any my now "
             "such like our over me even most made after also did many before must through back years "
             "where much your way well down should because each just those people how too little state "
             "good very make world still own see men work long get here between both life being under "
             "never day same another know while last might us great old year off come since against go "
             "came right used take three").split()
_GENDERED = ("he she he she his her her him he she his her himself herself man woman king queen father "
             "mother son daughter brother sister boy girl husband wife Mr. Mrs. uncle aunt").split()


def generated_text(mb: float, seed: int = SEED) -> bytes:
    """About ``mb`` MB of English-like lines (a 4 MB seeded sample, repeated)."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("etaoinshrdlcumwfgypbvk"))
    content = ["".join(rng.choice(letters, size=rng.integers(3, 11))) for _ in range(3000)]
    vocab = np.array(_FUNCTION + content + _GENDERED + ["John", "Mary", "London", "Paris"], dtype=object)
    nf, nc, ng = len(_FUNCTION), len(content), len(_GENDERED)
    weights = np.concatenate([np.full(nf, 0.55 / nf), np.full(nc, 0.41 / nc), np.full(ng, 0.03 / ng),
                              np.full(4, 0.01 / 4)])
    n_words = 700_000
    words = rng.choice(vocab, size=n_words, p=weights / weights.sum())
    lengths = rng.integers(6, 30, size=n_words // 10)
    ends = np.cumsum(lengths)
    ends = ends[ends < n_words]
    punct = rng.choice([", ", " ", " ", " ", " ", " "], size=n_words).astype(object)
    punct[ends - 1] = rng.choice([".\n", ".\n", "?\n", "!\n"], size=len(ends))
    sample = "".join((words + punct).tolist()).encode("utf-8")
    sample = b"\n".join(line[:1].upper() + line[1:] for line in sample.split(b"\n"))
    return sample * max(1, round(mb * 1e6 / len(sample)))


def gcide_text(workdir: Path) -> bytes | None:
    """dict-gcide as one sentence a line (``benchmarks/gcide.py``), or None when not installed."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import gcide

    if not gcide.DICT.is_file():
        return None
    path = gcide.corpus(workdir / "gcide-cache", install=False)
    data = path.read_bytes()
    path.unlink()
    return data


def _timed(fn) -> tuple[float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c0, time.perf_counter() - w0


def copy_floor(src: Path, dst: Path) -> None:
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        shutil.copyfileobj(fi, fo, 8 << 20)


def gunzip_floor(src: Path) -> None:
    with gzip.open(src, "rb") as fh:
        while fh.read(8 << 20):
            pass


def _word_regex():
    return re.compile(r"[0-9A-Za-z_\u00c0-\U0010ffff]+(?:-[0-9A-Za-z_\u00c0-\U0010ffff]+)*")


def per_word_loop(text: str, mapping: dict) -> str:
    """Baseline: every word of every line looked at in Python (naive intervention)."""
    word = _word_regex()
    out = []
    for line in text.splitlines(keepends=True):
        parts, pos = [], 0
        for m in word.finditer(line):
            target = mapping.get(m.group(0).lower())
            if target is not None:
                w = m.group(0)
                target = target.upper() if w.isupper() else target[:1].upper() + target[1:] if w[:1].isupper() else target
                parts += (line[pos:m.start()], target)
                pos = m.end()
        parts.append(line[pos:])
        out.append("".join(parts))
    return "".join(out)


def _trie_pattern(words) -> str:
    """A regex alternation of ``words`` factored as a trie (Python's re tries branches in order)."""
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node) -> str:
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(trie)


def regex_callback(text: str, mapping: dict) -> str:
    """Baseline: one compiled regex of the dictionary words, a dict lookup in the callback.

    The words in lower, Title and UPPER case, factored as a trie: the fastest form of
    one regex for Python's ``re`` (a plain alternation with ``re.IGNORECASE`` is ten
    times slower).
    """
    variants = {v for w in mapping for v in (w, w[:1].upper() + w[1:], w.upper())}
    pattern = re.compile(r"(?<![\w-])" + _trie_pattern(variants) + r"(?![\w-])")

    def swap(m):
        w = m.group(0)
        target = mapping[w.lower()]
        return target.upper() if w.isupper() else target[:1].upper() + target[1:] if w[:1].isupper() else target

    return pattern.sub(swap, text)


def _mapping() -> dict:
    lex = CounterfactualAugmenter().fit().lexicon_
    return {k.decode(): e.targets[0] for k, e in lex.entries.items()}


def bench_corpus(name: str, data: bytes, workdir: Path, baseline_mb: float) -> list[dict]:
    src = workdir / f"{name}.txt"
    src.write_bytes(data)
    gz = workdir / f"{name}.txt.gz"
    with open(src, "rb") as fi, gzip.open(gz, "wb", compresslevel=6) as fo:
        shutil.copyfileobj(fi, fo, 8 << 20)
    mb = len(data) / 1e6
    rows = []

    def row(case, cpu, wall, note="", size=mb):
        rows.append({"corpus": name, "case": case, "mb": size, "cpu_s": cpu, "wall_s": wall,
                     "mb_per_s": size / cpu if cpu else float("inf"), "wall_mb_per_s": size / wall, "note": note})

    row("floor: copy the file (read + write)", *_timed(lambda: copy_floor(src, workdir / "copy.txt")))
    row("floor: gunzip the .gz input", *_timed(lambda: gunzip_floor(gz)))
    for case, params, s, d in (
            ("cda two-sided grammatical (default)", {}, src, "out.txt"),
            ("cda two-sided naive", {"intervention": "naive"}, src, "out.txt"),
            ("cda replace grammatical", {"mode": "replace"}, src, "out.txt"),
            ("cda two-sided grammatical, --names", {"names": True}, src, "out.txt"),
            ("cda two-sided grammatical, .gz -> .gz", {}, gz, "out.txt.gz")):
        stats = {}
        # gcide holds a few bytes that are not UTF-8 (Latin-1 apostrophes): replaced, as gensim would.
        cpu, wall = _timed(lambda: stats.setdefault("s", augment_file(s, workdir / d, unicode_errors="replace",
                                                                      **params)))
        st = stats["s"]
        row(case, cpu, wall, f"{st.lines_augmented / max(st.lines_read, 1):.0%} of {st.lines_read:,} lines "
                             f"augmented, {st.words_swapped:,} words swapped")
    text = data[:int(baseline_mb * 1e6)].decode("utf-8", "replace")
    cut = text.rfind("\n") + 1
    text = text[:cut]
    size = len(text.encode("utf-8")) / 1e6
    mapping = _mapping()
    row("baseline: per-word Python loop (naive)", *_timed(lambda: per_word_loop(text, mapping)),
        f"on the first {size:.0f} MB, in memory", size)
    row("baseline: one regex + dict callback (naive)", *_timed(lambda: regex_callback(text, mapping)),
        f"on the first {size:.0f} MB, in memory", size)
    small = workdir / "slice.txt"
    small.write_bytes(text.encode("utf-8"))
    row("cda two-sided naive, same slice (file to file)",
        *_timed(lambda: augment_file(small, workdir / "slice.out", intervention="naive",
                                     unicode_errors="replace")), "", size)
    for p in workdir.iterdir():
        if p.is_file():
            p.unlink()
    return rows


def run(mb: float = 200, baseline_mb: float = 20, workdir=None, gcide: bool = True) -> list[dict]:
    """All rows (generated corpus, then gcide when installed)."""
    rows = []
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        rows += bench_corpus("generated", generated_text(mb), Path(tmp), baseline_mb)
        real = gcide_text(Path(tmp)) if gcide else None
        if real is not None:
            rows += bench_corpus("gcide", real, Path(tmp), baseline_mb)
    return rows


def format_rows(rows: list[dict]) -> str:
    head = f"| {'corpus':<9} | {'case':<47} | {'MB':>6} | {'CPU s':>6} | {'MB/s (CPU)':>10} | {'MB/s (wall)':>11} | note"
    lines = [head, "|" + "|".join("-" * (len(c) + 0) for c in head.split("|")[1:-1]) + "|---"]
    for r in rows:
        lines.append(f"| {r['corpus']:<9} | {r['case']:<47} | {r['mb']:>6.1f} | {r['cpu_s']:>6.2f} | "
                     f"{r['mb_per_s']:>10.1f} | {r['wall_mb_per_s']:>11.1f} | {r['note']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=200, help="size of the generated corpus (default 200 MB)")
    ap.add_argument("--baseline-mb", type=float, default=20, help="slice timed with the baselines (default 20)")
    ap.add_argument("--no-gcide", action="store_true", help="skip the dict-gcide corpus")
    ap.add_argument("--workdir", help="where the temporary corpora go (default: the system's temp dir)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    rows = run(args.mb, args.baseline_mb, args.workdir, gcide=not args.no_gcide)
    print(format_rows(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
