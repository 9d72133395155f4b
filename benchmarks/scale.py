"""The whole ``embdebias run`` at GoogleNews scale: 3,000,000 x 300 word2vec binary.

GoogleNews itself cannot be downloaded here, so the input is a file of the same shape
and format built from data the package ships: GloVe 6B 50d's 400,000 words mapped to
300 dimensions (a fixed random 50 -> 300 map plus a little noise, so that the 300-d
space is full rank and the word lists, gender direction and occupations behave like a
real embedding), then filler words (``zq0000000`` ...) with random vectors of the same
norm distribution up to the requested size. Seeded: the same ``--seed`` builds the
same bytes. Built once into ``~/.cache/embdebias-bench/scale`` (about 3.6 GB), never
committed.

The run happens in a fresh subprocess; the table gives each step's time (from the
run's ``report.json``), the wall time, the peak resident memory (``VmHWM``) against the
matrix size, and the physical floor of the steps that stream the whole matrix:
bytes moved divided by the bandwidth measured here, and flops divided by the
float32 GEMM speed measured here.

Usage::

    python benchmarks/scale.py                    # 3,000,000 x 300
    python benchmarks/scale.py --rows 500000      # smaller
    python benchmarks/scale.py --out benchmarks/results/scale.md
    python benchmarks/scale.py --methods hard,soft all --out benchmarks/results/scale.md

``--methods`` takes one or more method sets (each as ``embdebias run --methods`` takes it,
``all`` for every registered method, optionally followed by ``:SAVE``, what that run's
``--save`` writes: ``all:none``); each set is one fresh run, one after the other, and
the output has a table per set, then one line per set with its wall time and peak memory
side by side. ``--save WHAT`` is passed on to every run without its own ``:SAVE``::

    python benchmarks/scale.py --methods hard,soft all:none --out benchmarks/results/scale.md

``--input`` measures an existing embedding instead (``--rows``/``--dim`` are then its own),
e.g. the default run and ``--methods all`` on the built-in GloVe 6B 50d against older code::

    python benchmarks/scale.py --input glove-6b-50d --methods hard,soft all --baseline ../base
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

CACHE = Path(os.environ.get("EMBDEBIAS_BENCH_CACHE", Path.home() / ".cache" / "embdebias-bench")) / "scale"
FILLER_PREFIX = "zq"


def build_file(path: Path, rows: int, dim: int, seed: int = 0, log=print) -> Path:
    """Write the ``rows x dim`` word2vec binary described in the module docstring (atomically)."""
    from embdebias import io
    from embdebias.embedding import Embedding

    glove = io.load_default()
    rng = np.random.default_rng(seed)
    base = min(rows, len(glove))
    lift = rng.standard_normal((glove.dim, dim)).astype(np.float32) / np.sqrt(glove.dim)
    vectors = np.empty((rows, dim), dtype=np.float32)
    for start, stop, block in glove.head(base).iter_chunks():
        vectors[start:stop] = block @ lift
        vectors[start:stop] += 0.05 * rng.standard_normal((stop - start, dim), dtype=np.float32)
    norms = np.linalg.norm(vectors[:base], axis=1)
    for start in range(base, rows, 1 << 18):
        stop = min(rows, start + (1 << 18))
        block = rng.standard_normal((stop - start, dim), dtype=np.float32)
        block *= (rng.choice(norms, stop - start) / np.linalg.norm(block, axis=1))[:, None]
        vectors[start:stop] = block
    words = list(glove.words.tolist()[:base]) + [f"{FILLER_PREFIX}{i:07d}" for i in range(rows - base)]
    path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    io.save(Embedding(words, vectors, name=path.name), path, format="word2vec-bin")
    log(f"built {path} ({path.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - t0:.1f} s")
    return path


def input_file(rows: int, dim: int, seed: int, log=print) -> Path:
    path = CACHE / f"scale-{rows}x{dim}-s{seed}.bin"
    return path if path.exists() else build_file(path, rows, dim, seed, log)


# -- the physical floor ---------------------------------------------------------------------


def _gflops(a: np.ndarray, b: np.ndarray, repeat: int = 3) -> float:
    a @ b  # warm up (threads, page faults)
    t0 = time.perf_counter()
    for _ in range(repeat):
        a @ b
    return 2.0 * a.shape[0] * a.shape[1] * b.shape[1] * repeat / (time.perf_counter() - t0) / 1e9


def _gram_gflops(block: np.ndarray, repeat: int = 3) -> float:
    """The Gram product as soft debias computes it: 4,096-row float32 blocks on one BLAS thread."""
    from embdebias._threads import one_thread
    from embdebias.debias.soft import GRAM_BLOCK_ROWS

    def gram():
        for at in range(0, block.shape[0], GRAM_BLOCK_ROWS):
            x = block[at:at + GRAM_BLOCK_ROWS]
            x.T @ x

    with one_thread():
        gram()
        t0 = time.perf_counter()
        for _ in range(repeat):
            gram()
    return 2.0 * block.shape[0] * block.shape[1] ** 2 * repeat / (time.perf_counter() - t0) / 1e9


def measure_machine(input_path: Path, workdir: Path) -> dict:
    """Bandwidths (GB/s) and GEMM speeds (GFLOP/s) measured here and now."""
    rng = np.random.default_rng(0)
    block = rng.standard_normal((1 << 16, 300), dtype=np.float32)
    out = {"sgemm_gflops": _gflops(block, rng.standard_normal((300, 300), dtype=np.float32)),
           "gram_gflops": _gram_gflops(block)}
    t0 = time.perf_counter()
    fresh = np.empty(1 << 30, np.uint8)
    fresh.fill(1)  # page faults of new memory: what the reader's matrix costs before any byte is read
    out["first_touch_gbs"] = fresh.nbytes / (time.perf_counter() - t0) / 1e9
    del fresh
    src, dst = np.ones(1 << 28, np.uint8), np.empty(1 << 28, np.uint8)
    np.copyto(dst, src)  # first touch
    t0 = time.perf_counter()
    for _ in range(4):
        np.copyto(dst, src)
    out["memcpy_gbs"] = 4 * src.nbytes / (time.perf_counter() - t0) / 1e9
    buf = bytearray(64 << 20)
    with open(_data_file(input_path), "rb", buffering=0) as fh:
        fh.readinto(buf)  # the file is in the page cache after the run read it
        fh.seek(0)
        t0 = time.perf_counter()
        total = 0
        while got := fh.readinto(buf):
            total += got
    out["read_gbs"] = total / (time.perf_counter() - t0) / 1e9
    probe = workdir / ".write-probe.tmp"
    try:
        t0 = time.perf_counter()
        with open(probe, "wb", buffering=0) as fh:
            for _ in range(16):
                fh.write(buf)
        out["write_gbs"] = 16 * len(buf) / (time.perf_counter() - t0) / 1e9
    finally:
        probe.unlink(missing_ok=True)
    return out


def floor_seconds(rows: int, dim: int, file_bytes: int, machine: dict, analogy_words: int = 905,
                  analogy_vocab: int = 30_000, residual_queries: int = 5_000, residual_pool: int = 45_000,
                  columns: int = 3) -> dict:
    """The least time each streaming step could take here: bytes / bandwidth + flops / GEMM speed.

    The evaluation's products, per column: the analogy test's distinct question words (905
    of the Google set) by its 30,000 candidates, and residual bias's 5,000 neighbour
    queries by its candidates (the first 50,000 words less the non-alphabetic and
    gender-specific ones: about 45,000); see ``benchmarks/bench_evaluate.py``, which counts them.
    ``columns``: the report's columns (the original and one per method).
    """
    matrix = rows * dim * 4
    gram_flops = 2.0 * rows * dim * dim
    apply_flops = 2.0 * rows * dim * dim
    evaluate_flops = columns * 2.0 * dim * (analogy_words * analogy_vocab + residual_queries * residual_pool)
    mem, gb = machine["memcpy_gbs"] * 1e9, 1e9
    write = matrix / (machine["write_gbs"] * gb)
    # Each pair below runs on two threads at once in the run (2 cores), so the floor is the longer
    # of the two, not their sum: the file's read and the new matrix's first touch (its pages are
    # populated on a thread of their own), a pass's work and the write of its output (appended by
    # a writing thread while the next chunk is computed).
    return {
        # read the file, copy the floats into a new matrix (whose pages fault in at first touch)
        "load": max(file_bytes / (machine["read_gbs"] * gb), matrix / (machine.get("first_touch_gbs", mem / gb) * gb)),
        # hard: read the rows, write the output (RAM, then the file); soft's moments: float32 Gram products
        "hard": max(2 * matrix / mem + gram_flops / (machine["gram_gflops"] * gb), write),
        # soft: one product with T, written out
        "soft": max(2 * matrix / mem + apply_flops / (machine["sgemm_gflops"] * gb), write),
        # evaluation: only its matrix products (residual bias's neighbours, the analogy test) are counted
        "evaluate": evaluate_flops / (machine["sgemm_gflops"] * gb),
    }


# -- the run ----------------------------------------------------------------------------------



def run_argv(input_path: Path, out_dir: Path, methods: str | None = None, save: str | None = None) -> list[str]:
    """The command line of one measured run (``--methods`` and ``--save`` only when given)."""
    argv = ["--quiet", "run", str(input_path), "--out-dir", str(out_dir), "--force"]
    if methods:
        argv += ["--methods", methods]
    if save:
        argv += ["--save", save]
    return argv


def run_once(input_path: Path, out_dir: Path, methods: str | None = None, save: str | None = None,
             repo: Path = REPO) -> dict:
    """``embdebias run INPUT --out-dir OUT --force [--methods M] [--save S]`` in a fresh subprocess
    (the code of ``repo``): wall and CPU time, peak memory, step times, the report's columns and
    the 1-minute load average before and after."""
    from run_all import run_measured

    # The vectors an earlier run wrote (the baseline's, run first) go to the disk now, not while
    # this run writes its own: each run starts with no dirty pages of another's.
    os.sync()
    load_before = os.getloadavg()[0]
    got = run_measured(run_argv(input_path, out_dir, methods, save), out_dir, repo)
    columns = got["report"].get("evaluation", {}).get("embeddings") or []
    return {"wall_s": got["wall_s"], "in_process_s": got["in_process_s"], "peak_bytes": got["peak_kb"] * 1024,
            "cpu_s": got.get("cpu_s"), "timings": got["report"]["timings_s"], "columns": len(columns),
            "load": (load_before, os.getloadavg()[0])}


def given_input(source: str) -> tuple[Path, int, int]:
    """``(path, rows, dim)`` of an existing embedding file, native directory or built-in name."""
    from embdebias import io

    emb = io.load(source)
    path = Path(source) if Path(source).exists() else io.default.default_cache_path()  # a built-in name
    return path, len(emb), emb.dim


def _data_file(path: Path) -> Path:
    """The file holding the vectors (a native directory's ``vectors.npy``)."""
    return path / "vectors.npy" if path.is_dir() else path


def run(rows: int = 3_000_000, dim: int = 300, seed: int = 0, workdir=None, log=print, methods: str | None = None,
        save: str | None = None, baseline: Path | None = None, source: str | None = None) -> list[dict]:
    """Rows for ``run_all.py``: one per step of the run, then the whole run against its floor.

    ``methods`` and ``save`` are passed to ``embdebias run`` (default: its own defaults).
    ``baseline``: a checkout of older code (``git worktree add DIR COMMIT``), run first with
    the same arguments in the same invocation; its step and wall times go beside ours.
    ``source``: an existing embedding (file, native directory or built-in name) instead of
    the generated file; ``rows`` and ``dim`` are then its own.
    """
    if source:
        path, rows, dim = given_input(source)
    else:
        path = input_file(rows, dim, seed, log)
    with tempfile.TemporaryDirectory(prefix="bench_scale_", dir=workdir) as tmp:
        base = run_once(path, Path(tmp) / "base", methods, save, baseline) if baseline else None
        got = run_once(path, Path(tmp) / "out", methods, save)
        machine = measure_machine(path, Path(tmp))
    load_before, load_after = got["load"]
    floor = floor_seconds(rows, dim, _data_file(path).stat().st_size, machine, columns=got["columns"] or 3)
    floor["ran"] = ran_search_flops(rows, dim) / (machine["sgemm_gflops"] * 1e9)
    floor = {step: seconds for step, seconds in floor.items()
             if step in got["timings"] and (_writes(step, save) or step in FIT_FLOORS)}
    matrix = rows * dim * 4
    size = f"{rows:,} x {dim}"
    out = []
    for step, seconds in got["timings"].items():
        if step == "total":
            continue
        out.append({"benchmark": f"run step: {step}", "size": size, "ours_s": seconds,
                    "before_s": base["timings"].get(step) if base else None,
                    "baseline": "floor" if step in floor else "", "baseline_s": floor.get(step),
                    "ratio": floor[step] / seconds if step in floor and seconds else None,
                    "note": (_FLOOR_NOTES.get(step, "") or FIT_FLOORS.get(step, "")).format(
                        columns=got["columns"] or 3)})
    total_floor = sum(seconds for step, seconds in floor.items() if step not in FIT_FLOORS or not _writes(step, save))
    before = ("" if base is None else
              f"; baseline ({baseline.name}, same arguments, run first): {base['wall_s']:.1f} s wall, "
              f"{base['cpu_s']:.1f} s CPU, peak {base['peak_bytes'] / matrix:.2f}x, load {base['load'][0]:.1f} "
              f"before, {base['load'][1]:.1f} after")
    out.append({"benchmark": "embdebias run (whole, fresh process)", "size": size, "ours_s": got["wall_s"],
                "before_s": base["wall_s"] if base else None, "cpu_s": got["cpu_s"],
                "before_cpu_s": base["cpu_s"] if base else None,
                "baseline": "floor (sum of the steps')", "baseline_s": total_floor,
                "ratio": total_floor / got["wall_s"], "peak_mb": got["peak_bytes"] / 2**20,
                "methods": methods or "(default)", "columns": got["columns"], "load": got["load"],
                "note": f"peak RSS {got['peak_bytes'] / matrix:.2f}x the {matrix / 1e9:.2f} GB matrix (limit 1.5x); "
                        f"CPU (user + system) {got['cpu_s']:.1f} s; "
                        f"1-minute load average {load_before:.1f} before, {load_after:.1f} after (2 cores){before}; "
                        f"machine: " + ", ".join(f"{k} {v:.1f}" for k, v in machine.items())})
    return out


#: The fits with a floor: RAN's neighbour search (every debias word against every row).
FIT_FLOORS = {"ran": "fit only; floor: its neighbour search, 2 m n d flops (m = 2,000 debias words) / sgemm speed"}


def ran_search_flops(rows: int, dim: int) -> float:
    """Flops of RAN's neighbour search with its default debias set (``n_words`` a side)."""
    from embdebias.debias.ran import RANDebias

    return 2.0 * 2 * RANDebias().n_words * rows * dim


def _writes(step: str, save: str | None) -> bool:
    """Whether ``step`` writes what its floor counts: a method whose vectors ``--save`` leaves out
    only fits (its floor, a pass and a write, does not apply)."""
    from embdebias.debias import DEBIASERS

    return step not in DEBIASERS or save in (None, "all") or step in save.split(",")


_FLOOR_NOTES = {
    "load": "floor: the longer of file bytes / page-cache read speed and matrix / first-touch speed of new "
            "memory (two threads)",
    "hard": "includes soft debias's moments (shared pass); floor: the longer of (matrix through RAM twice + "
            "2 n d^2 / Gram product speed, one thread) and the matrix written once (a writing thread)",
    "soft": "solve + one pass: the longer of (matrix through RAM twice + n d^2 product / sgemm speed) and the "
            "matrix written once (a writing thread)",
    "evaluate": "{columns} columns; floor counts only the GEMMs (residual neighbours, analogy; bench_evaluate.py)",
}


def _cell(value, fmt: str) -> str:
    return "" if value is None else format(value, fmt)


def markdown(rows: list[dict]) -> str:
    head = ("| step | size | seconds | before (s) | floor (s) | floor / ours | peak | note |\n"
            "|---|---|---|---|---|---|---|---|\n")
    body = [f"| {r['benchmark']} | {r['size']} | {r['ours_s']:.1f} | {_cell(r.get('before_s'), '.1f')} | "
            f"{_cell(r.get('baseline_s'), '.1f')} | "
            f"{_cell(r.get('ratio'), '.2f')} | "
            f"{'' if r.get('peak_mb') is None else format(r['peak_mb'] / 1024, '.2f') + ' GiB'} | {r['note']} |"
            for r in rows]
    return head + "\n".join(body) + "\n"


def side_by_side(runs: dict, matrix_bytes: int) -> str:
    """One line per method set: its whole run's wall time and peak memory (``runs``: set -> its rows)."""
    head = ("| --methods | report columns | wall (s) | before (s) | CPU (s) | before CPU (s) | load 1 min | "
            "peak RSS | peak / matrix |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    lines = []
    for methods, rows in runs.items():
        whole = rows[-1]
        peak = whole["peak_mb"] * 2**20
        load = whole.get("load") or (None, None)
        lines.append(f"| {methods} | {whole.get('columns', '')} | {whole['ours_s']:.1f} | "
                     f"{_cell(whole.get('before_s'), '.1f')} | {_cell(whole.get('cpu_s'), '.1f')} | "
                     f"{_cell(whole.get('before_cpu_s'), '.1f')} | {_cell(load[0], '.1f')} / {_cell(load[1], '.1f')} | "
                     f"{peak / 2**30:.2f} GiB | {peak / matrix_bytes:.2f}x |")
    return head + "\n".join(lines) + "\n"


def report_text(runs: dict, command: str, matrix_bytes: int) -> str:
    """The Markdown file: a table per method set, then the sets side by side (when more than one)."""
    parts = [f"# `embdebias run` at scale\n\n`{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"]
    for methods, table_rows in runs.items():
        if len(runs) > 1:
            parts.append(f"## `--methods {methods}`\n" if not methods.startswith("(default)")
                         else f"## the default methods{methods.removeprefix('(default)')}\n")
        parts.append(markdown(table_rows))
    if len(runs) > 1:
        parts += ["## side by side\n", side_by_side(runs, matrix_bytes)]
    return "\n".join(parts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", help="an existing embedding (file, native directory or built-in name such as "
                                    "glove-6b-50d) instead of the generated one; --rows and --dim are then its own")
    ap.add_argument("--rows", type=int, default=3_000_000)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default=None, help="directory for the run's outputs (about 2x the matrix per method)")
    ap.add_argument("--build-only", action="store_true", help="only build the input file")
    ap.add_argument("--methods", nargs="+", metavar="M,M",
                    help="method sets, one run each (as run --methods takes them; 'all': every method); "
                         "default: one run with run's default methods")
    ap.add_argument("--save", help="passed on to embdebias run --save (which outputs to write)")
    ap.add_argument("--out", help="also write the table (Markdown) here")
    ap.add_argument("--baseline", type=Path, help="a checkout of older code (git worktree add DIR COMMIT): each "
                                                  "set also runs with it first, in the same invocation")
    args = ap.parse_args(argv)
    if args.build_only:
        input_file(args.rows, args.dim, args.seed)
        return 0
    runs = {}
    for item in args.methods or [None]:
        methods, _, save = (item or "").partition(":")
        save = save or args.save
        label = (methods or "(default)") + (f" --save {save}" if save else "")
        runs[label] = run(args.rows, args.dim, args.seed, args.workdir, methods=methods or None, save=save,
                          baseline=args.baseline, source=args.input)
    from _measure import command_line, publish

    rows, dim = given_input(args.input)[1:] if args.input else (args.rows, args.dim)
    publish(report_text(runs, command_line("scale.py", argv), rows * dim * 4), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
