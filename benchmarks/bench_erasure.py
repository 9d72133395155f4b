"""Fidelity and speed of the closed-form erasers (LEACE, orth, SAL) on GloVe 6B 50d.

Writes ``benchmarks/results/erasure.md``. On the default embedding, gender labels by
projection on ``he - she`` (the words INLP and RLACE are fitted on; the erasers fit on
the split's train and dev words, :mod:`embdebias.debias.leace`):

1. **Certificates**: the largest absolute cross-covariance between the fitting words'
   edited vectors and their one-hot labels, before and after unit scaling, and of the
   float32 vectors the transform writes; for the LEACE family, gender+race in one map,
   and the other linear debiasers (hard, INLP, HSR) on the same words.
2. **orth = mean projection**: ``I - u u^T`` with ``u`` the unit difference of the two
   class means (and, for race's three groups, the projection off the span of the mean
   differences), computed directly.
3. **LEACE = the paper's closed form**, written out here from the formula
   (``W = (S^{1/2})^+`` by ``scipy.linalg.sqrtm`` and ``pinv``, ``P = (W C)(W C)^+`` with all
   ``k`` one-hot columns, ``r(x) = x - W^+ P W (x - mu)``), on every word of the vocabulary.
4. **LEACE = EleutherAI's concept-erasure** (PyTorch, never a dependency): run when a
   Python that imports it is given (``--ce-python``; this script then runs itself there
   as ``--ce-worker``, which needs only numpy, torch and concept_erasure), with the same
   settings: no shrinkage, no trace constraint, float64, a negligible ``svd_tol``.
   Otherwise the figures of the last such run are copied from :data:`RECORDED`.
5. **Held-out leakage**: for 5 seeds, the eraser is fitted with ``random_state=seed``
   and probes are trained on half of that split's test words (never seen by the
   eraser) and scored on the other half: logistic regression (linear), RBF-SVM and an
   MLP (scikit-learn), before erasure and after each eraser, with and without unit
   scaling of the output (what normalization costs). Also the mean squared change of
   the vocabulary's vectors (distortion).
6. **Speed**: LEACE fit + transform of the 400,000 x 50 vectors (best of 3).
7. **The benchmark table** (``--benchmark``): every eraser of :data:`embdebias.benchmark.ERASERS`
   on the shared split, 5 seeds, with the published GloVe 42B figures beside it.

Usage::

    python benchmarks/bench_erasure.py [--out benchmarks/results/erasure.md] [--ce-python /tmp/ce-venv/bin/python]
    python benchmarks/bench_erasure.py --benchmark [--seeds 5] [--protocol split] [--workers 2]

``--benchmark`` runs only :func:`embdebias.benchmark.erasure_benchmark` on every eraser
(7. below) and rewrites that section of the page, keeping the others; a full run keeps it.

The scratch environment (outside the repository)::

    python -m venv /tmp/ce-venv && /tmp/ce-venv/bin/pip install torch==2.13.0 concept-erasure numpy
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SEEDS = (0, 1, 2, 3, 4)
#: concept-erasure's figures from the last scratch run (copied into the page when it cannot run here).
RECORDED = {
    "command": "python benchmarks/bench_erasure.py --ce-python /tmp/ce-venv/bin/python",
    "versions": "concept-erasure 0.2.4, torch 2.13.0+cpu",
    "rows": [],
}


# -- the concept-erasure worker (runs in the scratch environment: numpy, torch, concept_erasure) --------

def ce_worker(source: str, target: str) -> None:
    """Fit concept-erasure's LeaceFitter on ``source``'s ``x, z`` (each method) and apply it to ``vocab``."""
    import concept_erasure
    import torch
    from concept_erasure import LeaceFitter

    data = np.load(source)
    x, z, vocab = (torch.from_numpy(data[k]).to(torch.float64) for k in ("x", "z", "vocab"))
    out = {}
    for method in ("leace", "orth"):
        fitter = LeaceFitter.fit(x, z, method=method, shrinkage=False, constrain_cov_trace=False, svd_tol=1e-12)
        out[method] = fitter.eraser(vocab).numpy()
    version = getattr(concept_erasure, "__version__", None)
    if version is None:
        from importlib.metadata import version as dist_version

        version = dist_version("concept-erasure")
    np.savez(target, versions=np.array(f"concept-erasure {version}, torch {torch.__version__}"), **out)


# -- the measurements -------------------------------------------------------------------------------------

def fitting_words(emb, random_state: int = 0):
    """``(rows, labels)`` of the gender words LEACE fits on (train and dev parts, groups only), and the test part."""
    from embdebias.debias import _labels

    lw = _labels.gender_labels(emb, random_state=random_state)

    def part(at):
        at = np.sort(at)
        keep = lw.labels[at] >= 0
        return lw.rows[at][keep], lw.labels[at][keep]

    return part(np.concatenate([lw.train, lw.dev])), part(lw.test)


def closed_form(x: np.ndarray, labels: np.ndarray):
    """The paper's eraser transcribed from its formula (not from any code): ``r(v) = v - W^+ P W (v - mu)``."""
    import scipy.linalg

    z = (labels[:, None] == np.unique(labels)[None, :]).astype(np.float64)
    mu = x.mean(axis=0)
    xc, zc = x - mu, z - z.mean(axis=0)
    sigma_xx, sigma_xz = xc.T @ xc / len(x), xc.T @ zc / len(x)
    w = np.linalg.pinv(np.real(scipy.linalg.sqrtm(sigma_xx)))
    a = w @ sigma_xz
    p = a @ np.linalg.pinv(a)
    edit = np.linalg.pinv(w) @ p @ w
    return lambda v: v - (v - mu) @ edit.T


def certificates(emb, rows, labels) -> list[list[str]]:
    from embdebias.debias import make_debiaser
    from embdebias.debias.certificate import erasure_certificate, max_cross_covariance
    from embdebias.debias.leace import LEACE
    from embdebias.debias.sal import SAL

    fits = [("LEACE", LEACE()), ("LEACE, shrinkage oas", LEACE(shrinkage="oas")), ("orth", LEACE("orth")),
            ("SAL (all directions)", SAL()), ("SAL, 1 of 1 direction", SAL(1))]
    body = []
    for name, est in fits:
        est.fit(emb)
        c = est.certificate_
        stored = max_cross_covariance(est.transform(emb).take(rows, dtype=np.float64), labels)
        body.append([name, "gender", f"{c['before']:.3g}", f"{c['edited']:.2e}", f"{c['normalized']:.2e}",
                     f"{stored:.2e}"])
    both = LEACE(attribute="gender+race").fit(emb)
    for attr, c in both.certificate_["attributes"].items():
        body.append(["LEACE gender+race, one map", attr, f"{c['before']:.3g}", f"{c['edited']:.2e}",
                     f"{c['normalized']:.2e}", "-"])
    for name in ("hard", "inlp", "hsr"):
        est = make_debiaser(name).fit(emb)
        c = erasure_certificate(est, emb, rows, labels)
        body.append([name, "gender", f"{c.before:.3g}", "-" if c.edited is None else f"{c.edited:.2e}",
                     f"{c.normalized:.2e}", "-"])
    return body


def mean_projection_checks(emb, rows, labels) -> list[str]:
    from embdebias.debias.leace import LEACE

    out = []
    x = emb.take(rows, dtype=np.float64)
    diff = x[labels == 1].mean(axis=0) - x[labels == 0].mean(axis=0)
    u = diff / np.linalg.norm(diff)
    orth = LEACE("orth").fit(emb)
    direct = np.eye(emb.dim) - np.outer(u, u)
    out.append(f"gender (2 groups): max |map_ - (I - u u^T)| = {np.abs(orth.map_ - direct).max():.1e}; "
               f"offset_ = u u^T mu to {np.abs(orth.offset_ - np.outer(u, u) @ x.mean(axis=0)).max():.1e}")
    race = LEACE("orth", attribute="race").fit(emb)
    from embdebias.debias import _labels

    lw = _labels.protected_labels(emb, "race")
    at = np.sort(np.concatenate([lw.train, lw.dev]))
    at = at[lw.labels[at] >= 0]
    xr, yr = emb.take(lw.rows[at], dtype=np.float64), lw.labels[at]
    means = np.stack([xr[yr == g].mean(axis=0) for g in range(3)])
    q, _ = np.linalg.qr((means[1:] - means[0]).T)
    direct = np.eye(emb.dim) - q @ q.T
    out.append(f"race (3 groups): max |map_ - projection off span(m_g - m_0)| = {np.abs(race.map_ - direct).max():.1e}")
    return out


def closed_form_check(emb, rows, labels):
    from embdebias.debias.leace import LEACE

    est = LEACE().fit(emb)
    x = emb.take(rows, dtype=np.float64)
    vocab = emb.vectors.astype(np.float64)
    ours, theirs = est.transform_vectors(vocab), closed_form(x, labels)(vocab)
    return float(np.abs(ours - theirs).max()), float(np.abs(vocab).max())


def concept_erasure_check(emb, rows, labels, python: str | None):
    """``(rows, versions, ran_here)`` comparing ours with concept-erasure's on 20,000 vocabulary rows."""
    from embdebias.debias.leace import LEACE

    if not python:
        return RECORDED["rows"], RECORDED["versions"], False
    x = emb.take(rows, dtype=np.float64)
    z = (labels[:, None] == np.unique(labels)[None, :]).astype(np.float64)
    vocab = emb.take(np.arange(0, len(emb), len(emb) // 20_000), dtype=np.float64)
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp, "in.npz"), Path(tmp, "out.npz")
        np.savez(source, x=x, z=z, vocab=vocab)
        subprocess.run([python, str(Path(__file__).resolve()), "--ce-worker", str(source), str(target)], check=True,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        got = np.load(target)
        out = []
        for method in ("leace", "orth"):
            ours = LEACE(method).fit(emb).transform_vectors(vocab)
            out.append([method, f"{np.abs(ours - got[method]).max():.1e}", f"{len(vocab):,}"])
        return out, str(got["versions"]), True


def leakage(emb, seeds=SEEDS) -> tuple[list[list[str]], float]:
    """Held-out probe accuracy (mean and sd over seeds) before and after each eraser, with distortion.

    The words and probes are the package's held-out protocol (:mod:`embdebias.benchmark`): per seed,
    probes trained on half of the split's test words, scored on the other half.
    """
    from embdebias.benchmark.probes import PROBES, probe_accuracies
    from embdebias.benchmark.protocol import probe_words
    from embdebias.benchmark.run import distortion as mean_squared_change
    from embdebias.benchmark.run import labelled_words
    from embdebias.debias.leace import LEACE
    from embdebias.debias.sal import SAL

    settings = [("none", None), ("LEACE", lambda s: LEACE(random_state=s)),
                ("LEACE, unit rows", lambda s: LEACE(normalize=True, random_state=s)),
                ("orth", lambda s: LEACE("orth", random_state=s)),
                ("orth, unit rows", lambda s: LEACE("orth", normalize=True, random_state=s)),
                ("SAL", lambda s: SAL(random_state=s))]
    scores = {name: {p: [] for p in PROBES} for name, _ in settings}
    distortion = {name: [] for name, _ in settings}
    chance = []
    for seed in seeds:
        words = probe_words(labelled_words(emb, "gender", "published", seed), "heldout", seed)
        chance.append(words.chance)
        for name, make in settings:
            if make is None:
                out = emb
                distortion[name].append(0.0)
            else:
                est = make(seed).fit(emb)
                out = est.lazy_transform(emb)  # as written: with unit rows when normalize=True
                distortion[name].append(mean_squared_change(est, emb, written=True))
            got = probe_accuracies(out.take(words.train_rows, dtype=np.float64), words.train_labels,
                                   out.take(words.test_rows, dtype=np.float64), words.test_labels, seed)
            for probe in PROBES:
                scores[name][probe].append(got[probe])
    body = []
    for name, _ in settings:
        cells = [f"{np.mean(v):.3f} ± {np.std(v):.3f}" for v in scores[name].values()]
        body.append([name, *cells, f"{np.mean(distortion[name]):.4f}"])
    return body, float(np.mean(chance))


def timing(emb, repeats: int = 3) -> dict:
    """LEACE fit and transform of ``emb`` in memory (best of ``repeats``), and in the same invocation
    the baselines: the projection labels alone, the published filter word by word against the
    vectorized one (the same positions), and the floor of the transform, one float32 product of the
    matrix with the fitted map plus its offset."""
    from embdebias.data.attributes import as_attribute
    from embdebias.debias import _labels
    from embdebias.debias.leace import LEACE, projection_sample

    def best(call):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
        return min(times)

    out = {"fit": np.inf, "transform": np.inf, "fit_cpu": np.inf, "transform_cpu": np.inf}
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        est = LEACE().fit(emb)
        t1, c1 = time.perf_counter(), time.process_time()
        est.transform(emb)
        t2, c2 = time.perf_counter(), time.process_time()
        if t2 - t0 < out["fit"] + out["transform"]:
            out.update(fit=t1 - t0, transform=t2 - t1)
        if c2 - c0 < out["fit_cpu"] + out["transform_cpu"]:  # CPU time, all threads: what load does not inflate
            out.update(fit_cpu=c1 - c0, transform_cpu=c2 - c1)
    gender = as_attribute("gender")
    out["labels"] = best(lambda: projection_sample(emb, gender))
    words = emb.words[0:len(_labels.filtered_pool(emb, _labels.MAX_WORDS)) * 8 // 7]
    out["filter_words"] = len(words)
    out["filter_vectorized"] = best(lambda: _labels.kept_words(words))
    out["filter_word_by_word"] = best(lambda: np.fromiter((i for i, w in enumerate(words) if _labels._kept(w)),
                                                          dtype=np.int64))
    matrix, offset = est.map_.astype(np.float32), est.offset_.astype(np.float32)
    vectors = np.asarray(emb.vectors)
    out["product"] = best(lambda: np.add(vectors @ matrix, offset))
    out["load"] = os.getloadavg()[0]
    return out


def scale_timing() -> dict:
    """LEACE fit and transform of ``scale.py``'s 3,000,000 x 300 file (native copy, memory-mapped) into
    a native directory, in a fresh process (``bench_transform_3m.run_method``: peak resident and
    anonymous memory), against the floor of reading and writing the matrix once at the speeds
    measured in the same invocation."""
    from bench_transform_3m import CACHE, DIM, ROWS, measure_machine, native_input, run_method

    native = native_input()
    machine = measure_machine(native / "vectors.npy", CACHE)
    load = os.getloadavg()[0]
    got = run_method("leace", native, CACHE / "erasure-out")
    matrix = ROWS * DIM * 4
    floor = matrix / (machine["read_gbs"] * 1e9) + matrix / (machine["write_gbs"] * 1e9)
    return {**got, "machine": machine, "floor": floor, "matrix_bytes": matrix, "rows": ROWS, "dim": DIM,
            "load": load}


def speed_lines(emb, t: dict, scale: dict | None) -> list[str]:
    """The page's speed section."""
    lines = [
        "## Speed",
        "",
        f"LEACE fit {t['fit']:.2f} s + transform {t['transform']:.2f} s = **{t['fit'] + t['transform']:.2f} s** on "
        f"{len(emb):,} x {emb.dim} (best of 3, in memory; 2 shared cores, load average {t['load']:.1f} when "
        f"measured); CPU time (process, every thread) fit {t['fit_cpu']:.2f} s + transform "
        f"{t['transform_cpu']:.2f} s = {t['fit_cpu'] + t['transform_cpu']:.2f} s. Baselines in the same invocation (best of 3): the projection labels alone "
        f"{t['labels']:.2f} s (the published filter over the first {t['filter_words']:,} words: vectorized over "
        f"their UTF-8 bytes {t['filter_vectorized']:.3f} s, word by word {t['filter_word_by_word']:.3f} s, the "
        "same positions; then the cosines of 150,000 rows with he - she in float64); the floor of the "
        f"transform, one float32 product of the matrix with the map plus the offset, {t['product']:.2f} s.",
        "",
    ]
    if scale is None:
        return lines + ["3,000,000 x 300: not measured in this invocation (give `--scale`).", ""]
    if "error" in scale:
        return lines + [f"3,000,000 x 300: failed: {scale['error']}", ""]
    gib = scale["matrix_bytes"] / 2**30
    m = scale["machine"]
    return lines + [
        f"On {scale['rows']:,} x {scale['dim']} (`benchmarks/scale.py`'s file, converted once to the native "
        f"format and memory-mapped; a fresh process, load average {scale['load']:.1f}): fit {scale['fit_s']:.1f} s "
        f"(the projection labels read the first 171,000 or so rows, the statistics one pass over the fitting "
        f"rows, the certificate another over them), transform {scale['transform_s']:.1f} s in one pass of "
        f"chunks into a native directory, against the floor of reading the {gib:.2f} GiB matrix once at "
        f"{m['read_gbs']:.2f} GB/s and writing it once at {m['write_gbs']:.2f} GB/s, measured in the same "
        f"invocation: {scale['floor']:.1f} s (floor / transform {scale['floor'] / scale['transform_s']:.2f}). "
        f"Peak resident {scale['peak_kb'] / 2**20:.2f} GiB ({scale['peak_kb'] / 2**20 / gib:.2f}x the matrix; "
        f"it counts the mapped input's pages), anonymous {scale['anon_kb'] / 2**20:.2f} GiB.",
        "",
    ]


def render(emb, sections: dict, argv) -> str:
    from _table import markdown_table

    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows, labels = sections["words"]
    lines = [
        "# Closed-form erasure: fidelity, held-out leakage and speed",
        "",
        f"Written by `python benchmarks/bench_erasure.py{' ' + ' '.join(argv) if argv else ''}` on {now}. "
        f"Data: {emb.name} ({len(emb):,} x {emb.dim}); gender labels by projection on he - she "
        f"({len(rows):,} fitting words: the split's train and dev parts, "
        f"{int((labels == 0).sum()):,} female- and {int((labels == 1).sum()):,} male-biased). "
        "Certificates: the largest absolute cross-covariance (population) between the fitting words' vectors "
        "and their one-hot labels, float64.",
        "",
        "## Certificates",
        "",
        "*before*: the original vectors; *edited*: the map's output in float64, before any unit scaling; "
        "*unit rows*: the same scaled to unit length; *stored*: the float32 vectors `transform` writes "
        "(default `normalize=False`). hard, INLP and HSR on the same words, for comparison (hard has no "
        "edit before its unit scaling).",
        "",
        markdown_table(["eraser", "labels", "before", "edited", "unit rows", "stored (float32)"],
                       sections["certificates"]),
        "",
        "## orth is mean projection",
        "",
        *[f"- {line}" for line in sections["mean_projection"]],
        "",
        "## LEACE is the paper's closed form",
        "",
        f"- max |ours - transcription| over all {len(emb):,} words, float64: {sections['closed_form'][0]:.1e} "
        f"(largest |coordinate| {sections['closed_form'][1]:.3g})",
        "",
        "## LEACE is concept-erasure's",
        "",
    ]
    ce_rows, versions, ran_here = sections["concept_erasure"]
    if ce_rows:
        how = ("run now" if ran_here else f"recorded from the scratch run `{RECORDED['command']}`")
        lines += [f"{versions}, {how}: `LeaceFitter(method, shrinkage=False, constrain_cov_trace=False, "
                  "svd_tol=1e-12, dtype=float64)` on the same fitting words and one-hot labels, applied to every "
                  "20th word of the vocabulary; ours with `shrinkage=None`.", "",
                  markdown_table(["method", "max abs difference", "words compared"], ce_rows, left=1)]
    else:
        lines += ["Not run here, and no recorded figures (give `--ce-python`)."]
    leak_rows, chance = sections["leakage"]
    lines += [
        "",
        "## Held-out leakage (words the eraser never saw)",
        "",
        f"Per seed 0-4: the eraser fitted with that `random_state`; probes trained on half of that split's test "
        f"words (female- and male-biased, about {len(rows) * 3 // 14:,} each half) and scored on the other half. "
        f"Accuracy mean ± sd over the 5 seeds; majority class {chance:.3f}. *distortion*: mean squared change "
        "of every 20th word's vector.",
        "",
        markdown_table(["eraser", "linear (logistic)", "RBF-SVM", "MLP (100)", "distortion"], leak_rows, left=1),
        "",
        *speed_lines(emb, sections["timing"], sections.get("scale")),
    ]
    return "\n".join(lines)


#: The benchmark table's section of the page, between these lines (``--benchmark`` rewrites only it;
#: a full run keeps it).
BENCH_BEGIN, BENCH_END = "<!-- benchmark table: begin -->", "<!-- benchmark table: end -->"


def benchmark_section(seeds: int, protocol: str, argv, workers: int | None = None) -> str:
    """The benchmark of every eraser on the default embedding (:func:`embdebias.benchmark.erasure_benchmark`)
    as a section of the page, and its figure beside the page (``erasure_benchmark.png``)."""
    from embdebias._atomic import atomic_file
    from embdebias.benchmark import erasure_benchmark, plot

    t0 = time.perf_counter()
    result = erasure_benchmark(methods="all", seeds=seeds, protocol=protocol, dask=workers is not None,
                               workers=workers, progress=lambda t: print(f"[bench] {t.method} seed {t.seed} done "
                                                        f"({time.perf_counter() - t0:.0f} s)", flush=True))
    wall = time.perf_counter() - t0
    how = "serial" if workers is None else f"{workers} Dask worker processes"
    figure = HERE / "results" / "erasure_benchmark.png"
    with atomic_file(figure) as tmp:
        plot(result.summary, tmp)
    page = result.to_markdown().split("\n", 1)[1]  # its own title dropped: a section here
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join([BENCH_BEGIN, "", "## Benchmark table: every eraser on the shared split", "",
                       f"Written by `python benchmarks/bench_erasure.py {' '.join(argv)}` on {now} "
                       f"(`embdebias benchmark --seeds {seeds} --protocol {protocol}` computes the same), in "
                       f"{wall / 60:.1f} min wall time ({how}, one thread each, 2 shared cores, load average "
                       f"{os.getloadavg()[0]:.1f}). Figure: `erasure_benchmark.png` (probe accuracy against "
                       "distortion).", page.rstrip(), "", BENCH_END, ""])


def _kept_benchmark(path: Path) -> str:
    """The benchmark section of the page at ``path`` (empty when there is none)."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if BENCH_BEGIN not in text:
        return ""
    return text[text.index(BENCH_BEGIN):text.index(BENCH_END) + len(BENCH_END)] + "\n"


def _without_benchmark(text: str) -> str:
    if BENCH_BEGIN not in text:
        return text.rstrip("\n") + "\n"
    return (text[:text.index(BENCH_BEGIN)] + text[text.index(BENCH_END) + len(BENCH_END):]).rstrip("\n") + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--ce-worker"]:
        ce_worker(argv[1], argv[2])
        return 0
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(HERE))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "results" / "erasure.md"))
    ap.add_argument("--ce-python", default=None, help="a Python that imports concept_erasure and torch")
    ap.add_argument("--scale", action="store_true", help="also LEACE on scale.py's 3,000,000 x 300 file")
    ap.add_argument("--speed-only", action="store_true",
                    help="measure the speed only and replace the Speed section of --out, keeping the rest")
    ap.add_argument("--benchmark", action="store_true",
                    help="run only the benchmark of every eraser and rewrite its section of the page")
    ap.add_argument("--seeds", type=int, default=5, help="--benchmark: seeds (default 5)")
    ap.add_argument("--protocol", default="split", help="--benchmark: split or heldout (default split)")
    ap.add_argument("--workers", type=int, default=None,
                    help="--benchmark: run on a local Dask cluster of this many processes (default: serial)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.benchmark:
        section = benchmark_section(args.seeds, args.protocol, argv, args.workers)
        text = _without_benchmark(out.read_text(encoding="utf-8") if out.is_file() else "") + "\n" + section
        out.write_text(text, encoding="utf-8")
        print(section)
        return 0
    import embdebias

    emb = embdebias.load()
    if args.speed_only:
        return speed_only(emb, args, argv)
    words, _ = fitting_words(emb)
    sections = {"words": words}
    sections["certificates"] = certificates(emb, *words)
    sections["mean_projection"] = mean_projection_checks(emb, *words)
    sections["closed_form"] = closed_form_check(emb, *words)
    sections["concept_erasure"] = concept_erasure_check(emb, *words, args.ce_python)
    sections["leakage"] = leakage(emb)
    sections["timing"] = timing(emb)
    sections["scale"] = scale_timing() if args.scale else None
    text = render(emb, sections, argv)
    kept = _kept_benchmark(out)
    out.write_text(text + ("\n" + kept if kept else ""), encoding="utf-8")
    print(text)
    return 0


def speed_only(emb, args, argv) -> int:
    """Replace the Speed section of ``args.out`` (the rest of the page, the benchmark table included, as it
    is), naming the command."""
    kept = _kept_benchmark(Path(args.out))
    page = _without_benchmark(Path(args.out).read_text(encoding="utf-8"))
    head = page[:page.index("## Speed")] if "## Speed" in page else page + "\n"
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = speed_lines(emb, timing(emb), scale_timing() if args.scale else None)
    lines.insert(2, f"Measured by `python benchmarks/bench_erasure.py {' '.join(argv)}` on {now} (this section only).")
    lines.insert(3, "")
    Path(args.out).write_text(head + "\n".join(lines) + ("\n\n" + kept if kept else ""), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
