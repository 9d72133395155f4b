"""``embdebias sweep`` on Dask: speed-up of 2 workers over 1, the scheduler's overhead per task,
peak memory per worker.

In one invocation, the same 16-point sweep on GloVe 6B 50d (all 400,000 words; the
baseline, hard debias, and soft debias at 14 values of lambda; evaluate's default suite,
200 bootstrap resamples) runs on a local cluster of 1 worker process and on one of 2
(one thread each), each into a fresh output directory. The clusters are started before
the clock starts, so the ratio is the sweep's, not the cluster's start-up (given
separately). Then:

* overhead: the wall time x workers minus the sum of the points' own times (each task
  measures itself on its worker), per point; and the round trip of 200 no-op tasks;
* memory: each worker's peak resident memory (``VmHWM``: anonymous plus the
  file-backed pages it touched) and its anonymous memory at the end (``RssAnon``: what
  it holds itself), after the 2-worker sweep; with ``--big DIR`` (a native directory,
  e.g. ``benchmarks/scale.py``'s 3,000,000 x 300 file converted with ``embdebias
  convert``) the same for 4 baseline points on it, whose matrix is memory-mapped and so
  shared through the page cache.

Usage::

    python benchmarks/bench_sweep.py --out benchmarks/results/sweep.md
    python benchmarks/bench_sweep.py --big ~/.cache/embdebias-bench/scale/scale-3000000x300.embd
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

LAMBDAS = [0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0, 2.0, 5.0, 10.0]


def glove_config() -> dict:
    return {"embeddings": [{"path": "glove-6b-50d", "label": "GloVe 6B 50d"}], "bootstrap": 200,
            "methods": {"hard": {}, "soft": {"lam": LAMBDAS}}}


def big_config(path: str) -> dict:
    return {"embeddings": [{"path": path, "label": "big"}], "suite": ["direct_bias", "weat"], "bootstrap": 100,
            "seeds": [0, 1, 2, 3], "methods": {}}


def _memory() -> dict:
    """On a worker: its peak and current memory (KiB) from /proc/self/status."""
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key = line.split(":", 1)[0]
            if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                out[key] = int(line.split()[1])
    return out


def _cpu_seconds() -> float:
    """On a worker: the CPU time (user + system) its process has used so far."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _noop(x):
    return x


def _spin(n: int = 30_000_000) -> float:
    """Seconds of a pure-Python loop (no memory, no I/O): the CPU a process gets."""
    t0 = time.perf_counter()
    x = 0
    for i in range(n):
        x += i
    return time.perf_counter() - t0


def machine_parallelism() -> float:
    """How many times the work of one process the machine does with two at once (2.0: two free cores)."""
    import multiprocessing

    alone = min(_spin() for _ in range(2))
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        together = max(pool.map(_spin, [30_000_000] * 2))
    return 2 * alone / together


def timed_sweep(config: dict, workers: int, log=print) -> dict:
    """The sweep on a fresh local cluster of ``workers`` processes (started before the clock)."""
    import embdebias
    from distributed import Client, LocalCluster
    from distributed.system import MEMORY_LIMIT

    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, memory_limit=MEMORY_LIMIT // workers,
                           dashboard_address=None, silence_logs=40)
    client = Client(cluster)
    client.wait_for_workers(workers)
    startup = time.perf_counter() - t0
    try:
        with tempfile.TemporaryDirectory() as out:
            cpu0 = sum(client.run(_cpu_seconds).values())
            t0 = time.perf_counter()
            frame = embdebias.sweep(config, out, scheduler=cluster.scheduler_address, log=lambda *a: None)
            wall = time.perf_counter() - t0
            cpu = sum(client.run(_cpu_seconds).values()) - cpu0
        points = frame.drop_duplicates("key")
        assert points["error"].isna().all(), points["error"].dropna().tolist()
        t0 = time.perf_counter()
        client.gather(client.map(_noop, range(200), pure=False))
        noop = (time.perf_counter() - t0) / 200
        memory = client.run(_memory)
    finally:
        client.close()
        cluster.close()
    task = float(points["seconds"].sum())
    log(f"{workers} worker(s): {len(points)} points in {wall:.1f} s (tasks {task:.1f} s, workers' CPU {cpu:.1f} s, "
        f"start-up {startup:.1f} s)")
    return {"workers": workers, "points": len(points), "wall": wall, "task_seconds": task, "cpu": cpu, "startup": startup,
            "noop": noop, "memory": list(memory.values()), "frame": frame}


def _mib(kb) -> str:
    return f"{kb / 1024:,.0f}"


def markdown(runs: list[dict], big: dict | None, load: tuple, ceiling: tuple, end_load: tuple | None = None) -> str:
    """The results page; ``ceiling``: the machine's parallelism measured before and after the sweeps."""
    one, two = runs
    speedup = one["wall"] / two["wall"]
    lines = ["# `embdebias sweep` on Dask", "",
             "Measured by `python benchmarks/bench_sweep.py` (one invocation; 2 cores shared with other work: "
             f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at the start"
             + (f", {end_load[0]:.2f} / {end_load[1]:.2f} / {end_load[2]:.2f} at the end" if end_load else "")
             + "). Every worker's BLAS and OpenMP pools have one thread (`embdebias/sweep/worker.py`).", "",
             f"The sweep: {one['points']} points on GloVe 6B 50d (400,000 x 50): the baseline, hard debias, soft "
             f"debias at {len(LAMBDAS)} values of lambda; evaluate's default suite, 200 bootstrap resamples. "
             "Local clusters, one thread per worker, started before the clock.", "",
             "| workers | wall (s) | workers' CPU, user + system (s) | sum of task times (s) | overhead per point (s) "
             "| no-op task round trip (ms) | cluster start-up (s) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in runs:
        over = (r["wall"] * r["workers"] - r["task_seconds"]) / r["points"]
        lines.append(f"| {r['workers']} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['task_seconds']:.1f} | {over:.2f} "
                     f"({100 * over / (r['task_seconds'] / r['points']):.0f}% of a task) | {1000 * r['noop']:.1f} "
                     f"| {r['startup']:.1f} |")
    same = _same_values(one["frame"], two["frame"])
    slower = (two["task_seconds"] / two["points"]) / (one["task_seconds"] / one["points"])
    efficiency = two["task_seconds"] / (two["wall"] * two["workers"])
    lines += ["", f"**Speed-up of 2 workers over 1: {speedup:.2f}x** (target: at least 1.5x; the ceiling below). "
              f"Same values on 1 and 2 workers: {same}.", "",
              f"With 2 workers a point's own time was {slower:.2f}x its time with 1 (the two processes "
              f"share the cores with everything else running); the workers were busy {100 * efficiency:.0f}% "
              "of the wall time, so the speed-up is bounded by the CPU the machine gave, not by the scheduler: "
              f"at equal task times it would be {speedup * slower:.2f}x. The machine's own ceiling, measured "
              f"in the same invocation: two processes running a pure-Python loop together do {ceiling[0]:.2f}x "
              f"the work of one alone before the sweeps and {ceiling[1]:.2f}x after (two free cores: 2.0).", "",
              f"The workers used {two['cpu'] / one['cpu']:.2f}x the CPU with 2 as with 1 (user + system, read "
              "on each worker before and after the sweep): each worker loads the embedding and scores the "
              "baseline column once (`embdebias/sweep/run.py`, `reference_cache`), every other point scores "
              "only its debiased column, so two workers do one baseline more than one worker.", "",
              "Overhead per point is the wall time x workers minus the sum of the points' own times, per "
              "point: the scheduler, the transfer of each record, the client storing it, and a worker's "
              "first load of the embedding (its cache keeps it for the next points); the no-op round trip "
              "is the scheduler alone.", "",
              "Memory per worker after the 2-worker sweep (MiB): peak resident (VmHWM, with the file-backed "
              "pages it touched) and anonymous memory held at the end (RssAnon):", "",
              "| worker | peak resident | anonymous at the end |", "| --- | --- | --- |"]
    lines += [f"| {i} | {_mib(m['VmHWM'])} | {_mib(m['RssAnon'])} |" for i, m in enumerate(two["memory"])]
    if big:
        lines += ["", f"On {big['path']} ({big['shape']}, {big['bytes'] / 2**30:.2f} GiB matrix, memory-mapped): "
                  f"{big['points']} baseline points on 2 workers in {big['wall']:.1f} s:", "",
                  "| worker | peak resident (MiB) | anonymous at the end (MiB) | file-backed at the end (MiB) |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| {i} | {_mib(m['VmHWM'])} | {_mib(m['RssAnon'])} | {_mib(m['RssFile'])} |"
                  for i, m in enumerate(big["memory"])]
    return "\n".join(lines) + "\n"


def _same_values(a, b) -> str:
    cols = ["key", "metric", "test", "statistic"]
    x = a[a["metric"].notna()].set_index(cols)["value"].sort_index()
    y = b[b["metric"].notna()].set_index(cols)["value"].sort_index()
    diff = (x - y).abs().max()
    return "yes (exactly)" if diff == 0 or diff != diff else f"largest difference {diff:.2g}"


def run_big(path: str, log=print) -> dict:
    from embdebias import io

    emb = io.load(path)
    r = timed_sweep(big_config(path), 2, log)
    return {"path": path, "shape": f"{len(emb):,} x {emb.dim}", "bytes": emb.vectors.nbytes, **r}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the Markdown table here")
    parser.add_argument("--big", help="a native directory for the memory measurement (e.g. 3,000,000 x 300)")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    before = machine_parallelism()
    print(f"machine: two processes do {before:.2f}x the work of one")
    runs = [timed_sweep(glove_config(), n) for n in (1, 2)]
    after = machine_parallelism()
    print(f"machine (after): two processes do {after:.2f}x the work of one")
    end_load = os.getloadavg()
    big = run_big(args.big) if args.big else None
    text = markdown(runs, big, load, (before, after), end_load)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
