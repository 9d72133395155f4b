"""Benchmark: the native format's checked open, and the peak memory of its writer.

Two measurements, each in fresh Python subprocesses:

* **open**: a native directory of ``--open-rows`` random words (dimension 4: opening
  maps the vectors and only checks their header and size, so the dimension does not
  matter) opened with :func:`embdebias.io.native.read_native` three ways: with the
  ``vocab_crc32`` record the writer stores (the cached path: one CRC-32 over the
  vocabulary files), without it (the full vectorized validation that older caches get),
  and, as the baseline, mapping the same three vocabulary arrays with ``np.load`` and no
  check at all (what opening cost before the checks). Best of ``--repeat`` runs.
* **write**: a ``--write-rows`` x ``--dim`` float32 native file written chunk by chunk with
  :meth:`NativeWriter.append` (each block goes to the file) against the older interface,
  filling the ``NativeWriter.vectors`` memory map. Peak resident memory is ``VmHWM``
  (``benchmarks/_measure.py``): pages written through a shared memory map count in it
  until the map is closed, pages written with ``write()`` do not.

Usage::

    python benchmarks/bench_native.py --open-rows 3000000 --write-rows 1000000 --dim 300 --workdir /tmp/bn
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {repo!r})
sys.path.insert(0, {bench!r})
import numpy as np
from _measure import peak_kb
from embdebias.io.native import NativeWriter, read_native

mode, path, rows, dim, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
out = {{}}
if mode in ("append", "memmap"):
    words = [f"w{{i}}" for i in range(rows)]
    rng = np.random.default_rng(0)
    block = rng.standard_normal((1 << 16, dim), dtype=np.float32)
    base = peak_kb()
    t = time.perf_counter()
    with NativeWriter(path, words, (rows, dim)) as w:
        for start in range(0, rows, 1 << 16):
            stop = min(start + (1 << 16), rows)
            if mode == "append":
                w.append(block[:stop - start])
            else:
                w.vectors[start:stop] = block[:stop - start]
    out["seconds"] = time.perf_counter() - t
    out["base_kb"] = base
elif mode == "baseline":
    import pathlib
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        p = pathlib.Path(path)
        json.loads((p / "embdebias.json").read_text())
        np.load(p / "vectors.npy", mmap_mode="r")
        np.memmap(p / "vocab.txt", dtype=np.uint8, mode="r")
        np.load(p / "vocab_offsets.npy", mmap_mode="r")
        np.load(p / "vocab_sorted.npy", mmap_mode="r")
        times.append(time.perf_counter() - t)
    out["seconds"] = min(times)
else:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        emb = read_native(path)
        times.append(time.perf_counter() - t)
        assert len(emb) == rows
    out["seconds"] = min(times)
out["peak_kb"] = peak_kb()
print(json.dumps(out))
"""


def _child(mode: str, path: Path, rows: int, dim: int, repeat: int = 1) -> dict:
    code = _CHILD.format(repo=str(REPO), bench=str(REPO / "benchmarks"))
    proc = subprocess.run([sys.executable, "-c", code, mode, str(path), str(rows), str(dim), str(repeat)],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _random_words(n: int, seed: int = 1) -> list[str]:
    """``n`` distinct random lowercase words of 3 to 14 letters (vectorized, seeded)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 15, n)
    letters = rng.integers(97, 123, int(lengths.sum()), dtype=np.uint8)
    letters[np.cumsum(lengths)[:-1] - 1] = 10  # overwrite each word's last letter with the separator
    words = (letters.tobytes().decode("ascii") + "\n").split("\n")[:n]
    return list(dict.fromkeys(f"{w}{i}" for i, w in enumerate(words)))


def run_open(rows: int, workdir: Path, repeat: int = 5) -> list[dict]:
    """Time opening a ``rows``-word native directory with and without the CRC-32 record, and unchecked."""
    import numpy as np

    from embdebias.embedding import Embedding
    from embdebias.io.native import write_native

    target = workdir / f"open{rows}.embd"
    if not target.exists():
        words = _random_words(rows)
        write_native(Embedding(words, np.zeros((rows, 4), np.float32), copy=False), target)
    legacy = workdir / f"open{rows}-norecord.embd"
    shutil.rmtree(legacy, ignore_errors=True)
    legacy.mkdir()
    for f in target.iterdir():
        if f.name != "embdebias.json":
            os.link(f, legacy / f.name)
    meta = json.loads((target / "embdebias.json").read_text())
    meta.pop("vocab_crc32")
    (legacy / "embdebias.json").write_text(json.dumps(meta))
    rows_out = []
    for label, mode, path in (("unchecked np.load maps (baseline)", "baseline", target),
                              ("read_native, CRC-32 record", "open", target),
                              ("read_native, full validation", "open", legacy)):
        r = _child(mode, path, rows, 4, repeat)
        rows_out.append({"what": f"open {rows:,} words: {label}", "seconds": r["seconds"],
                         "peak_mb": r["peak_kb"] / 1024})
    return rows_out


def run_write(rows: int, dim: int, workdir: Path) -> list[dict]:
    """Peak memory writing ``rows`` x ``dim`` with ``append`` and with the ``vectors`` memory map."""
    out = []
    matrix_mb = rows * dim * 4 / 2**20
    for mode in ("append", "memmap"):
        path = workdir / f"write-{mode}.embd"
        r = _child(mode, path, rows, dim)
        shutil.rmtree(path, ignore_errors=True)
        out.append({"what": f"write {rows:,} x {dim} ({matrix_mb:,.0f} MB) with {mode}", "seconds": r["seconds"],
                    "peak_mb": r["peak_kb"] / 1024, "before_mb": r["base_kb"] / 1024})
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--open-rows", type=int, default=3_000_000)
    ap.add_argument("--write-rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench_native."))
    workdir.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(REPO))
    rows = run_open(args.open_rows, workdir, args.repeat) + run_write(args.write_rows, args.dim, workdir)
    for r in rows:
        extra = f", {r['before_mb']:,.0f} MB before writing" if "before_mb" in r else ""
        print(f"{r['what']:<62} {r['seconds'] * 1000:10.1f} ms   peak RSS {r['peak_mb']:8,.0f} MB{extra}")


if __name__ == "__main__":
    main()
