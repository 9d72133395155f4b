"""``evaluate()`` on an original + soft + hard trio: seconds per metric, against a baseline
revision run alternately in the same invocation, and against the GEMM floor.

The trio is what ``embdebias run`` evaluates: the original (any readable file, e.g. the
3,000,000 x 300 word2vec binary of ``benchmarks/scale.py``) and the soft- and
hard-debiased native-format directories it wrote. ``--rows N`` builds one: the
``scale.py`` input of that size, then ``embdebias run`` on it (once; cached in
``~/.cache/embdebias-bench/evaluate``).

Every measurement runs in a fresh subprocess (load the trio, fit the original's
direction, then ``evaluate(..., progress=...)`` with the run's defaults), timing each
(embedding, metric) and the bootstrap (intervals and paired comparisons) separately,
then ``Report.to_dict()``. With ``--baseline REV`` the same subprocess is run on the
package as it was at git revision ``REV`` (exported with ``git archive``), alternating
with the current code ``--rounds`` times, so that both see the same machine load; the
table gives the best round of each, their ratio, and whether every report cell is the
same (exactly, or the largest difference).

The floor: the two metrics bound by matrix products, counted here and divided by the
float32 GEMM speed measured here (a ``1024 x dim`` by ``dim x 45,000`` product, best of
three): residual bias's neighbour step (``2 x queries x candidates x dim`` flops per
column) and the analogy test (``2 x distinct question words x restrict_vocab x dim``).

Usage::

    python benchmarks/bench_evaluate.py --original scale.bin --soft out/soft.embd --hard out/hard.embd
    python benchmarks/bench_evaluate.py --rows 500000 --baseline ac4c8ed --rounds 2
    python benchmarks/bench_evaluate.py --rows 20000 --json evaluate.json
    python benchmarks/bench_evaluate.py --original glove-6b-50d --soft run/soft.embd --hard run/hard.embd \
        --dim 50 --baseline b507547 --out benchmarks/results/evaluate.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CACHE = Path(os.environ.get("EMBDEBIAS_BENCH_CACHE", Path.home() / ".cache" / "embdebias-bench")) / "evaluate"

# The measuring subprocess: argv = repo, original, soft, hard, output json.
WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import importlib

from embdebias import io

evaluation = importlib.import_module("embdebias.evaluate")  # the module (embdebias.evaluate is the function)
from embdebias.subspace import BiasSubspace

t0 = time.perf_counter()
original = io.load(sys.argv[2])
embeddings = {"original": original, "soft": io.load(sys.argv[3]), "hard": io.load(sys.argv[4])}
load = time.perf_counter() - t0
subspace = BiasSubspace().fit(original)
times, cpu_times, current = {}, {}, [None, 0.0, 0.0]

def lap(key):
    now, cpu_now = time.perf_counter(), time.process_time()
    if current[0] is not None:
        times[current[0]] = times.get(current[0], 0.0) + now - current[1]
        cpu_times[current[0]] = cpu_times.get(current[0], 0.0) + cpu_now - current[2]
    current[:] = [key, now, cpu_now]

bootstrap = evaluation._add_uncertainty
def timed_bootstrap(*args, **kwargs):
    lap("bootstrap")
    bootstrap(*args, **kwargs)
    lap(None)
evaluation._add_uncertainty = timed_bootstrap

t0, cpu0 = time.perf_counter(), time.process_time()
report = evaluation.evaluate(embeddings, subspace=subspace, progress=lambda e, m: lap(f"{e}/{m}"))
lap(None)
total, cpu = time.perf_counter() - t0, time.process_time() - cpu0
t0, cpu0 = time.perf_counter(), time.process_time()
data = report.to_dict()
times["to_dict"], cpu_times["to_dict"] = time.perf_counter() - t0, time.process_time() - cpu0
cells = {"|".join((r["metric"], r["test"], r["statistic"], e)): v for r in data["rows"] for e, v in r["values"].items()}

# The floor's flops: residual bias's neighbour queries x candidates, the analogy test's
# distinct question words x candidates (both x dim x 2), per column.
import numpy as np
from embdebias.metrics.quality import _word_rows, dataset_path, read_analogies
questions = [list(q) for _, qs in read_analogies(dataset_path("google_analogy")) for q in qs]
flops = {"residual": 0.0, "analogy": 0.0}
for name, emb in embeddings.items():
    res = data["details"].get(name, {}).get("residual/gender")
    if res:
        queries = sum(len(v) for v in res["classify_words"].values())
        flops["residual"] += 2.0 * queries * res["n_candidates"] * emb.dim
    head = emb.head(30_000)
    quads = _word_rows(head.words, questions, True).reshape(-1, 4)
    flops["analogy"] += 2.0 * np.unique(quads[(quads >= 0).all(axis=1), :3]).size * len(head) * emb.dim
with open(sys.argv[5], "w") as fh:
    json.dump({"load": load, "evaluate": total, "evaluate_cpu": cpu, "times": times, "cpu_times": cpu_times,
               "cells": cells, "flops": flops}, fh)
"""


# The k-group measuring subprocess: argv = repo, original, output json. The metrics race's default
# suite runs, on the original alone, measuring gender, race, gender, race (3 groups); seconds per
# metric of the last of each (the first pass also reads the lists and data files and imports).
KGROUP_WORKER = r"""
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
warnings.simplefilter("ignore")
import importlib

from embdebias import io

evaluation = importlib.import_module("embdebias.evaluate")
original = io.load(sys.argv[2])
suite = evaluation.suite_for(None, attribute="race")
out = {}
for attribute in ("gender", "race", "gender", "race"):
    times, current = {}, [None, 0.0, 0.0]

    def lap(key):
        now, cpu_now = time.perf_counter(), time.process_time()
        if current[0] is not None:
            wall, cpu = times.get(current[0], (0.0, 0.0))
            times[current[0]] = (wall + now - current[1], cpu + cpu_now - current[2])
        current[:] = [key, now, cpu_now]

    bootstrap = evaluation._add_uncertainty
    def timed_bootstrap(*args, **kwargs):
        lap("bootstrap")
        bootstrap(*args, **kwargs)
        lap(None)
    evaluation._add_uncertainty = timed_bootstrap
    t0, cpu0 = time.perf_counter(), time.process_time()
    evaluation.evaluate({"original": original}, tests=suite, attribute=attribute, trust=False,
                        progress=lambda e, m: lap(m))
    lap(None)
    evaluation._add_uncertainty = bootstrap
    out[attribute] = {"times": times, "evaluate": time.perf_counter() - t0, "evaluate_cpu": time.process_time() - cpu0}
with open(sys.argv[3], "w") as fh:
    json.dump(out, fh)
"""


# -- the trio ------------------------------------------------------------------------------------


def build_trio(rows: int, dim: int, seed: int, log=print) -> tuple[Path, Path, Path]:
    """``(original, soft, hard)``: scale.py's input of ``rows x dim``, then ``embdebias run`` on it."""
    sys.path.insert(0, str(HERE))
    from scale import input_file

    original = input_file(rows, dim, seed, log)
    out = CACHE / f"run-{rows}x{dim}-s{seed}"
    if not (out / "soft.embd").is_dir() or not (out / "hard.embd").is_dir():
        log(f"embdebias run {original} -> {out} (once)")
        subprocess.run([sys.executable, "-m", "embdebias", "run", "-q", "--out-dir", str(out), str(original)],
                       check=True, cwd=REPO)
    return original, out / "soft.embd", out / "hard.embd"


def export_revision(rev: str, into: Path) -> Path:
    """The package and its word lists as they were at git revision ``rev``."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "embdebias", "wordlists"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def measure(repo: Path, trio, out: Path) -> dict:
    subprocess.run([sys.executable, "-c", WORKER, str(repo), *map(str, trio), str(out)], check=True, cwd=repo)
    return json.loads(out.read_text())


# -- the floor -------------------------------------------------------------------------------------


def sgemm_gflops(dim: int, repeat: int = 3) -> float:
    """Best of ``repeat`` float32 products of residual bias's block shape, in GFLOP/s."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, dim), dtype=np.float32)
    b = rng.standard_normal((45_000, dim), dtype=np.float32)
    out = np.empty((1024, 45_000), dtype=np.float32)
    best = np.inf
    for _ in range(repeat + 1):                      # the first one warms up threads and pages
        t0 = time.perf_counter()
        np.dot(a, b.T, out=out)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * a.size * b.shape[0] / best / 1e9


# -- the table ---------------------------------------------------------------------------------------


def per_metric(times: dict) -> dict:
    """Seconds per metric (summed over the columns), then the bootstrap and to_dict."""
    out: dict = {}
    for key, seconds in times.items():
        metric = key.split("/", 1)[1] if "/" in key else key
        out[metric] = out.get(metric, 0.0) + seconds
    return out


def compare_cells(ours: dict, base: dict) -> str:
    keys = set(ours) | set(base)
    differ = [k for k in keys if ours.get(k) != base.get(k)]
    if not differ:
        return f"all {len(keys):,} report cells identical"
    numeric = [abs(ours[k] - base[k]) for k in differ
               if isinstance(ours.get(k), float) and isinstance(base.get(k), float)]
    largest = f"; largest difference {max(numeric):.2g}" if numeric else ""
    return f"{len(differ):,} of {len(keys):,} report cells differ{largest}: {', '.join(sorted(differ)[:5])}"


def _row(metric: str, ours: tuple, base: tuple | None, compared: bool, floor: float | None) -> str:
    """One metric's row: ours (wall, CPU), the baseline's, the CPU ratio, the floor."""
    def pair(t):
        return [f"{t[0]:.2f} s", "-" if t[1] is None else f"{t[1]:.2f} s"] if t else ["-", "-"]

    cells = [metric, *pair(ours)]
    if compared:
        ratio = f"{base[1] / ours[1]:.2f}x" if base and base[1] and ours[1] else "-"
        cells += [*pair(base), ratio]
    cells += [f"{floor:.2f} s" if floor else "-", f"GEMM-bound: {ours[0] / floor:.1f}x its floor" if floor else ""]
    return "| " + " | ".join(cells) + " |"


def _both(measurement: dict) -> dict:
    """``{metric: (wall, CPU)}`` summed over the columns (CPU None for a baseline that predates it)."""
    wall, cpu = per_metric(measurement["times"]), per_metric(measurement.get("cpu_times", {}))
    return {m: (s, cpu.get(m)) for m, s in wall.items()}


def table(ours: dict, base: dict | None, floors: dict, rev: str | None) -> list[str]:
    """Markdown rows: per metric (summed over the columns) ours, the baseline, their CPU ratio, the floor."""
    ours_m, base_m = _both(ours), _both(base) if base else {}
    head = ("| metric (3 columns) | ours wall | ours CPU | "
            + (f"baseline {rev} wall | baseline CPU | CPU: baseline / ours | " if base else "") + "floor | note |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    lines += [_row(m, t, base_m.get(m), base is not None, floors.get(m))
              for m, t in sorted(ours_m.items(), key=lambda kv: -kv[1][0])]
    total = _row("**evaluate()**", (ours["evaluate"], ours.get("evaluate_cpu")),
                 (base["evaluate"], base.get("evaluate_cpu")) if base else None, base is not None,
                 sum(floors.values()))
    return lines + [total.replace("GEMM-bound:", "whole evaluation:")]


def kgroup_table(ours: dict, base: dict | None, rev: str | None) -> str:
    """Race's default suite on the original alone, measuring gender and race: CPU seconds per metric."""
    metrics = list(ours["gender"]["times"])
    head = "| metric | gender CPU | race CPU | race / gender |" + (f" baseline {rev}: race / gender |" if base else "")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]

    def ratio(m, data):
        g, r = data["gender"]["times"].get(m), data["race"]["times"].get(m)
        return f"{r[1] / g[1]:.2f}x" if g and r and g[1] > 0.005 else "-"
    for m in metrics + ["**evaluate()**"]:
        if m.startswith("**"):
            g, r = ours["gender"]["evaluate_cpu"], ours["race"]["evaluate_cpu"]
            row = [m, f"{g:.2f} s", f"{r:.2f} s", f"{r / g:.2f}x"]
            if base:
                row.append(f"{base['race']['evaluate_cpu'] / base['gender']['evaluate_cpu']:.2f}x")
        else:
            g, r = ours["gender"]["times"].get(m, (0, 0)), ours["race"]["times"].get(m, (0, 0))
            row = [m, f"{g[1]:.2f} s", f"{r[1]:.2f} s", ratio(m, ours)] + ([ratio(m, base)] if base else [])
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def measure_kgroup(repo: Path, original, out: Path) -> dict:
    subprocess.run([sys.executable, "-c", KGROUP_WORKER, str(repo), str(original), str(out)], check=True, cwd=repo)
    return json.loads(out.read_text())


def run_rounds(trio, rounds: int, baseline: str | None, kgroup=False) -> tuple[list, list, list, list]:
    """``(ours, baseline, ours k-group, baseline k-group)`` measurements, alternating, each in a
    fresh subprocess (the k-group ones only with ``kgroup``; ``kgroup="only"``: only they)."""
    ours, base, ours_k, base_k = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-evaluate-") as tmp:
        tmp = Path(tmp)
        base_repo = export_revision(baseline, tmp / "baseline") if baseline else None
        for r in range(rounds):
            if base_repo is not None and kgroup != "only":
                base.append(measure(base_repo, trio, tmp / f"base{r}.json"))
                print(f"round {r + 1}: baseline evaluate {base[-1]['evaluate']:.1f} s", flush=True)
            if kgroup != "only":
                ours.append(measure(REPO, trio, tmp / f"ours{r}.json"))
                print(f"round {r + 1}: ours evaluate {ours[-1]['evaluate']:.1f} s", flush=True)
            if kgroup and base_repo is not None:
                base_k.append(measure_kgroup(base_repo, trio[0], tmp / f"base-k{r}.json"))
                print(f"round {r + 1}: baseline k-group {base_k[-1]['race']['evaluate_cpu']:.1f} s CPU", flush=True)
            if kgroup:
                ours_k.append(measure_kgroup(REPO, trio[0], tmp / f"ours-k{r}.json"))
                print(f"round {r + 1}: ours k-group {ours_k[-1]['race']['evaluate_cpu']:.1f} s CPU", flush=True)
    return ours, base, ours_k, base_k


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--original", type=Path)
    ap.add_argument("--soft", type=Path)
    ap.add_argument("--hard", type=Path)
    ap.add_argument("--rows", type=int, help="build the trio from scale.py's input of this many rows")
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--baseline", help="git revision to compare with (run alternately)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--out", type=Path, help="write the table as markdown (benchmarks/results/evaluate.md)")
    ap.add_argument("--kgroup", action="store_true",
                    help="also race's default suite on the original, measuring gender and race (3 groups)")
    ap.add_argument("--kgroup-only", action="store_true", help="only the --kgroup measurement (not the trio's)")
    return ap


def main(argv=None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    if not args.rows and not (args.original and args.soft and args.hard):
        ap.error("give --original, --soft and --hard, or --rows")
    trio = build_trio(args.rows, args.dim, args.seed) if args.rows else (args.original, args.soft, args.hard)
    start_load = load_average()
    ours, base, ours_k, base_k = run_rounds(trio, args.rounds, args.baseline,
                                            "only" if args.kgroup_only else args.kgroup)
    gflops = sgemm_gflops(args.dim)
    text, floors = summary(ours, base, gflops, args.baseline) if ours else ("", {})
    if ours_k:
        best_k = min(ours_k, key=lambda m: m["race"]["evaluate_cpu"])
        best_base_k = min(base_k, key=lambda m: m["race"]["evaluate_cpu"]) if base_k else None
        text += ("\n\n**k groups.** Race's default suite on the original alone, measuring gender and race "
                 "(3 groups) in one process, each the second time (the first reads the lists and imports), CPU "
                 "seconds per metric (best round):\n\n" + kgroup_table(best_k, best_base_k, args.baseline))
    print(text)
    if args.out:
        args.out.write_text(markdown(text, argv if argv is not None else sys.argv[1:],
                                     (start_load, load_average()), trio))
    if args.json:
        args.json.write_text(json.dumps({"ours": ours, "baseline": base, "ours_kgroup": ours_k,
                                         "baseline_kgroup": base_k, "floors": floors, "sgemm_gflops": gflops,
                                         "trio": [str(p) for p in trio], "summary": text}, indent=1))
    return 0


def summary(ours: list, base: list, gflops: float, rev: str | None) -> tuple[str, dict]:
    """The table of the best round of each, with its note, and the floors (seconds per metric)."""
    best = min(ours, key=_cpu_key)                     # CPU: steadier than wall on a shared machine
    best_base = min(base, key=_cpu_key) if base else None
    floors = {k: v / (gflops * 1e9) for k, v in best["flops"].items() if v}
    note = f"float32 GEMM measured here: {gflops:.0f} GFLOP/s; best of {len(ours)} round(s) by CPU time"
    note += f"; evaluate's CPU time (all threads): {_cpu(best)}"
    if best_base:
        note += f" (baseline {_cpu(best_base)})"
    if best_base:
        note += "; " + compare_cells(best["cells"], best_base["cells"])
    return "\n".join(table(best, best_base, floors, rev)) + "\n\n" + note, floors


def _cpu_key(measurement: dict) -> float:
    return measurement.get("evaluate_cpu") or measurement["evaluate"]


def _cpu(measurement: dict) -> str:
    cpu = measurement.get("evaluate_cpu")  # a baseline's worker may predate it
    return "-" if cpu is None else f"{cpu:.1f} s"


def load_average() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def markdown(text: str, argv: list[str], loads: tuple[str, str], trio) -> str:
    """``benchmarks/results/evaluate.md``: the command, the machine's load, the table."""
    return "\n".join([
        "# `evaluate()` per metric, against a baseline revision and the GEMM floor", "",
        f"Measured by `python benchmarks/bench_evaluate.py {' '.join(argv)}` (one invocation; 2 cores shared "
        f"with other work: load average {loads[0]} at the start, {loads[1]} at the end).", "",
        f"The trio: {', '.join(str(p) for p in trio)} (the default run's original and its soft and hard "
        "results); each measurement in a fresh subprocess, the baseline and ours alternating.", "",
        text, ""])


if __name__ == "__main__":
    sys.exit(main())
