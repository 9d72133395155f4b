"""Run every benchmark in one invocation and print one table of measured figures and ratios.

Each benchmark and its baseline are measured side by side, here and now; nothing in the
table is a stored number:

``load``
    ``bench_load.run``: random word2vec text / binary / GloVe files of ``--rows`` x
    ``--dim`` loaded by embdebias and by gensim's ``load_word2vec_format``, each load in
    a fresh subprocess (time, peak resident memory above imports); the native format's
    memory-mapped open against gensim's fastest load of the same vectors.
``hard``
    ``bench_hard.run``: hard debias of ``--rows`` x ``--dim`` random vectors, vectorized
    against a per-word Python loop (timed on a prefix, scaled), and native file ->
    native file in a subprocess with its peak memory. Then ``bench_hard_wefe.run``:
    fit + transform on GloVe 6B 50d (``--hard-glove-limit`` words, all 400,000 by
    default) with the published lists against WEFE's ``HardDebias`` (skipped, and
    said so, when WEFE is not installed), interleaved, with the copy floor and the
    largest differences between the two results.
``soft``
    ``bench_soft.run``: the soft-debias problem on GloVe 6B 50d (``--soft-glove-rows``
    words, d = 50) solved by the naive dense cvxpy formulation, the elementwise cvxpy
    one and the specialised solver; then soft debias alone end to end on
    ``--soft-rows`` x ``--dim`` structured random vectors in a subprocess.
``weat``
    ``bench_weat.run``: WEAT p-values, exact (all partitions) and sampled, against a
    per-partition Python loop, on GloVe 6B 50d; with the full evaluation suite timed
    unless ``--quick``.
``run``
    The whole ``embdebias run`` on the default GloVe 6B 50d (``--run-limit`` words, all
    by default) in a fresh subprocess: a cold run (``--force``) and a warm re-run in the
    same output directory that reuses the finished steps; wall time and the child's
    peak resident memory (``VmHWM``).
``scale``
    ``scale.run``: the whole ``embdebias run`` on a GoogleNews-shaped word2vec binary
    (``--scale-rows`` x 300, 3.6 GB at 3,000,000 words, built once into
    ``~/.cache/embdebias-bench/scale``): one row per step against its physical floor
    (bytes moved / bandwidth and flops / GEMM speed, both measured here), then the whole
    run with its peak memory as a multiple of the matrix.

Usage::

    python benchmarks/run_all.py                      # 500,000 x 300 (about 10 GiB of temporary files)
    python benchmarks/run_all.py --quick              # 20,000 x 50, a smoke run
    python benchmarks/run_all.py --only hard soft --json results.json
    python benchmarks/run_all.py --rows 3000000 --soft-rows 3000000 --workdir /big/disk
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import _table  # noqa: E402
from _table import Row  # noqa: E402

BENCHMARKS = ("load", "hard", "soft", "weat", "run", "scale")

QUICK = {"rows": 20_000, "dim": 50, "soft_rows": 20_000, "soft_glove_rows": 20_000,
         "hard_baseline_rows": 5_000, "hard_glove_limit": 20_000, "scale_rows": 100_000}


# -- the full `embdebias run` ------------------------------------------------------------------

_RUN_CHILD = r"""
import json, os, sys, time
sys.path.insert(0, {repo!r})

sys.path.insert(0, {repo!r} + "/benchmarks")
from _measure import peak_kb

from embdebias.cli import main
t0 = time.perf_counter()
rc = main(sys.argv[2:])
if rc:
    sys.exit(rc)
seconds = time.perf_counter() - t0
cpu = os.times()
with open(sys.argv[1], "w") as fh:
    json.dump({{"rc": rc, "seconds": seconds, "peak_kb": peak_kb(), "cpu_s": cpu.user + cpu.system}}, fh)
"""


def run_measured(argv: list[str], out_dir: Path, repo: Path = REPO) -> dict:
    """``embdebias ARGV`` (a ``run`` writing into ``out_dir``) in a fresh subprocess.

    Returns the wall time, the seconds inside ``main``, the child's CPU time (user + system,
    ``cpu_s``), its peak resident memory (``peak_kb``, from ``VmHWM``) and the run's
    ``report.json``; ``scale.py`` uses it too. ``repo``: the checkout whose code runs (a
    worktree of an older commit measures the baseline in the same invocation).
    """
    result_file = out_dir.parent / f".{out_dir.name}.measure.json"
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", _RUN_CHILD.format(repo=str(repo)), str(result_file), *argv],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"embdebias run failed (exit {proc.returncode}): {proc.stderr.strip()[-3000:]}")
    child = json.loads(result_file.read_text())
    result_file.unlink()
    report = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    return {"wall_s": wall, "in_process_s": child["seconds"], "peak_kb": child["peak_kb"],
            "cpu_s": child.get("cpu_s"), "report": report}


def _run_once(out_dir: Path, limit, force: bool) -> dict:
    argv = ["--quiet", "run", "--out-dir", str(out_dir)]
    if limit:
        argv += ["--limit", str(limit)]
    if force:
        argv.append("--force")
    got = run_measured(argv, out_dir)
    report = got["report"]
    return {"wall_s": got["wall_s"], "in_process_s": got["in_process_s"], "peak_mb": got["peak_kb"] / 1024,
            "timings": report["timings_s"], "reused": report["reused_steps"],
            "size": f"{report['embedding']['words']:,} x {report['embedding']['dim']}"}


def run_full_pipeline(workdir=None, limit=None) -> list[dict]:
    """Time ``embdebias run`` on the default GloVe: cold (``--force``) then warm, in subprocesses."""
    with tempfile.TemporaryDirectory(prefix="bench_run_", dir=workdir) as tmp:
        out_dir = Path(tmp) / "out"
        cold = _run_once(out_dir, limit, force=True)
        warm = _run_once(out_dir, limit, force=False)
    def detail(m):  # every step the report timed, in its order
        return ", ".join(f"{s} {t:.1f}" for s, t in m["timings"].items() if s != "total")

    name = "embdebias run, glove-6b-50d" + (f" --limit {limit:,}" if limit else "")
    return [
        {"benchmark": f"{name} (cold, --force)", "size": cold["size"], "ours_s": cold["wall_s"],
         "peak_mb": cold["peak_mb"],
         "note": f"fresh subprocess, wall time incl. start-up; steps (s): {detail(cold)}; "
                 f"peak = whole process (VmHWM)"},
        {"benchmark": f"{name} (warm re-run)", "size": warm["size"], "ours_s": warm["wall_s"],
         "baseline": "the cold run", "baseline_s": cold["wall_s"],
         "ratio": cold["wall_s"] / warm["wall_s"], "peak_mb": warm["peak_mb"],
         "note": f"reused: {', '.join(warm['reused']) or 'nothing'}"},
    ]


# -- driver ------------------------------------------------------------------------------------


def collect(only=BENCHMARKS, *, rows=500_000, dim=300, soft_rows=400_000, soft_glove_rows=50_000,
            hard_baseline_rows=100_000, hard_glove_limit=None, weat_suite=True, run_limit=None, workdir=None,
            scale_rows=3_000_000, log=print) -> list[Row]:
    """Run the selected benchmarks and return their normalised rows.

    A benchmark that fails gives one row saying so (with the error), and the rest still run.
    """
    rows_out: list[Row] = []
    for name in only:
        log(f"[{name}] running ...")
        t0 = time.perf_counter()
        try:
            if name == "load":
                import bench_load

                with tempfile.TemporaryDirectory(prefix="bench_load_", dir=workdir) as tmp:
                    got = bench_load.run(rows, dim, tmp)
            elif name == "hard":
                import bench_hard
                import bench_hard_wefe

                got = bench_hard.run(rows, dim, workdir, baseline_rows=min(hard_baseline_rows, rows))
                got += bench_hard_wefe.run(limit=hard_glove_limit, workdir=workdir, log=log)
            elif name == "soft":
                import bench_soft

                got = bench_soft.run(glove_rows=soft_glove_rows, rows=soft_rows, dim=dim, workdir=workdir)
            elif name == "weat":
                import bench_weat

                got = bench_weat.run(suite=weat_suite)
            elif name == "run":
                got = run_full_pipeline(workdir, run_limit)
            elif name == "scale":
                import scale

                got = scale.run(scale_rows, 300, workdir=workdir, log=log)
            else:
                raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
            new = _table.normalise(name, got)
        except Exception as exc:  # noqa: BLE001 - report and go on with the other benchmarks
            traceback.print_exc()
            new = [Row(name, f"{name}: FAILED", note=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")]
        rows_out.extend(new)
        log(f"[{name}] done in {time.perf_counter() - t0:.1f} s")
    return rows_out


def environment() -> str:
    import numpy

    return (f"{datetime.datetime.now().isoformat(timespec='seconds')}; python {platform.python_version()}, "
            f"numpy {numpy.__version__}, {os.cpu_count()} CPU(s), {platform.machine()} {platform.system()}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=500_000, help="vocabulary size for load and hard (default 500,000)")
    ap.add_argument("--dim", type=int, default=300, help="dimension for load, hard and soft end to end (default 300)")
    ap.add_argument("--soft-rows", type=int, default=400_000, help="vocabulary size for soft end to end")
    ap.add_argument("--soft-glove-rows", type=int, default=50_000,
                    help="GloVe 6B 50d words for the d = 50 solver comparison (default 50,000)")
    ap.add_argument("--hard-baseline-rows", type=int, default=100_000,
                    help="rows the per-word hard-debias loop runs on (its time is scaled to --rows)")
    ap.add_argument("--hard-glove-limit", type=int, default=None,
                    help="GloVe 6B 50d words for hard debias against WEFE (default all 400,000)")
    ap.add_argument("--scale-rows", type=int, default=3_000_000,
                    help="words of the GoogleNews-shaped word2vec binary (x 300) of the scale run (default 3,000,000)")
    ap.add_argument("--run-limit", type=int, default=None,
                    help="words of GloVe for the full `embdebias run` (default all 400,000)")
    ap.add_argument("--workdir", default=None,
                    help="directory for temporary files (default: the system temp dir); "
                         "needs about 6x the matrix for load")
    ap.add_argument("--quick", action="store_true",
                    help="small sizes (20,000 x 50; no full WEAT suite; the run still on all of GloVe): a smoke run")
    ap.add_argument("--only", nargs="+", choices=BENCHMARKS, metavar="NAME",
                    help=f"run only these ({', '.join(BENCHMARKS)})")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args(argv)

    sizes = dict(rows=args.rows, dim=args.dim, soft_rows=args.soft_rows, soft_glove_rows=args.soft_glove_rows,
                 hard_baseline_rows=args.hard_baseline_rows, hard_glove_limit=args.hard_glove_limit,
                 run_limit=args.run_limit,
                 scale_rows=args.scale_rows)
    if args.quick:
        sizes.update(QUICK)
    only = args.only or BENCHMARKS
    env = environment()
    print(env, flush=True)
    t0 = time.perf_counter()
    rows = collect(only, weat_suite=not args.quick, workdir=args.workdir,
                   log=lambda m: print(m, file=sys.stderr, flush=True), **sizes)
    total = time.perf_counter() - t0
    print()
    print(_table.format_table(rows))
    print(f"\nratio = baseline / ours (> 1: embdebias faster); peak memory = peak resident set of the "
          f"measuring subprocess above its imports (the run rows: the whole process); total {total:.0f} s")
    if args.json:
        from embdebias._atomic import atomic_file

        with atomic_file(Path(args.json)) as tmp:
            Path(tmp).write_text(json.dumps({"environment": env, "sizes": sizes, "seconds": total,
                                             "rows": [r.to_dict() for r in rows]}, indent=2) + "\n")
    return 1 if any(r.benchmark.endswith("FAILED") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
