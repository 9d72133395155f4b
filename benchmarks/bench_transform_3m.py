"""Every debiaser's fit and transform of 3,000,000 x 300 into a native file, against the floor.

Usage::

    python benchmarks/bench_transform_3m.py [--out benchmarks/results/transform_3m.md] [--methods hard,soft]

The input is ``scale.py``'s GoogleNews-shaped word2vec binary (built once, seeded), converted
once to the native format so that every method opens it memory-mapped in milliseconds.
Each method runs in a fresh subprocess: ``make_debiaser(method).fit(emb)``, then
``transform(emb, out=DIR)``, which streams the rows chunk by chunk into a native
directory written atomically. The floor of a transform is one read of the matrix
(from the page cache) and one write of it, at the speeds measured here and now by
``scale.measure_machine``; ``floor / transform`` says how close a method comes.
Peak memory is the child's resident set (``VmHWM``), which counts the mapped input's
pages too, and the anonymous memory it really holds (``RssAnon``, sampled).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from scale import CACHE, input_file, measure_machine  # noqa: E402

ROWS, DIM = 3_000_000, 300

_CHILD = r"""
import json, sys, time, warnings
sys.path.insert(0, {repo!r}); sys.path.insert(0, {bench!r})
from _measure import PeakSampler, peak_kb
from embdebias.io import load
from embdebias.debias import make_debiaser
method, src, dst = sys.argv[1:4]
with PeakSampler() as sampler:
    t0 = time.perf_counter()
    emb = load(src)
    t1 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_debiaser(method).fit(emb)
        t2 = time.perf_counter()
        est.transform(emb, out=dst)
    t3 = time.perf_counter()
print(json.dumps({{"open_s": t1 - t0, "fit_s": t2 - t1, "transform_s": t3 - t2, "peak_kb": peak_kb(),
                  "anon_kb": sampler.peak["RssAnon"]}}))
"""


def native_input(log=print) -> Path:
    """The native copy of the scale input (converted once, then reused)."""
    src = input_file(ROWS, DIM, 0, log=log)
    native = CACHE / f"{src.stem}.native"
    if not native.exists():
        log(f"converting {src} to {native} (once)")
        subprocess.run([sys.executable, "-m", "embdebias", "--quiet", "convert", str(src), str(native),
                        "--format", "native"], check=True, cwd=REPO)
    return native


def run_method(method: str, native: Path, out: Path) -> dict:
    """Fit and transform one method in a fresh process; the output is deleted after it is measured."""
    shutil.rmtree(out, ignore_errors=True)
    child = _CHILD.format(repo=str(REPO), bench=str(HERE))
    proc = subprocess.run([sys.executable, "-c", child, method, str(native), str(out)],
                          capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    got["out_bytes"] = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    shutil.rmtree(out, ignore_errors=True)
    return got


def markdown(results: dict, machine: dict, matrix_bytes: int) -> str:
    floor = matrix_bytes / (machine["read_gbs"] * 1e9) + matrix_bytes / (machine["write_gbs"] * 1e9)
    lines = ["# Every debiaser's transform of 3,000,000 x 300 into a native file", "",
             "Written by `python benchmarks/bench_transform_3m.py`. Each method in a fresh process: open the native "
             "input (memory-mapped), fit, then transform into a native directory (chunked, atomic). Floor of a "
             f"transform: one read of the {matrix_bytes / 1e9:.2f} GB matrix at {machine['read_gbs']:.2f} GB/s "
             f"(page cache) and one write at {machine['write_gbs']:.2f} GB/s, measured in the same invocation: "
             f"**{floor:.1f} s**. Peak RSS counts the mapped input's pages; anonymous is the memory really held.",
             "", "| method | open, s | fit, s | transform, s | floor / transform | peak RSS, GiB | anonymous, GiB |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for method, r in results.items():
        if "error" in r:
            lines.append(f"| {method} | failed: {r['error']} | | | | | |")
            continue
        lines.append(f"| {method} | {r['open_s']:.2f} | {r['fit_s']:.1f} | {r['transform_s']:.1f} | "
                     f"{floor / r['transform_s']:.2f} | {r['peak_kb'] / 2**20:.2f} | {r['anon_kb'] / 2**20:.2f} |")
    lines += ["", "machine: " + ", ".join(f"{k} {v:.1f}" for k, v in machine.items()), ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    from embdebias.debias import DEBIASERS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "results" / "transform_3m.md"))
    ap.add_argument("--methods", default=",".join(DEBIASERS))
    args = ap.parse_args(argv)
    native = native_input()
    work = CACHE / "transform-out"
    machine = measure_machine(native / "vectors.npy", CACHE)  # the matrix file of the native format
    results = {}
    for method in args.methods.split(","):
        t0 = time.perf_counter()
        results[method] = run_method(method, native, work)
        print(f"{method}: {results[method]} ({time.perf_counter() - t0:.0f} s)", flush=True)
    text = markdown(results, machine, ROWS * DIM * 4)
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
