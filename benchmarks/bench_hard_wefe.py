"""Hard debias of GloVe 6B 50d (400,000 x 50) with the published lists: ours against WEFE's.

Both tools get the same input and the same lists, Bolukbasi et al.'s definitional
pairs, equalize pairs and gender-specific words (:mod:`embdebias.wordlists`), and
both are timed from the loaded vectors to the debiased ones, in one process,
interleaved, best of ``--repeats`` runs each:

* ours in memory: ``HardDebias(...).fit(emb)`` then ``.transform(emb)``;
* ours into a native file: the same with ``transform(emb, out=directory)``;
* WEFE: ``wefe.debias.hard_debias.HardDebias().fit(model, definitional_pairs=...,
  equalize_pairs=...)`` then ``.transform(model, ignore=gender_specific)`` on a
  ``WordEmbeddingModel`` of the same vectors (``emb.to_gensim()``, built once,
  outside the timing). ``copy=True`` (WEFE's default) because ours leaves its
  input alone too.

WEFE is not a dependency of embdebias: without it (``pip install wefe``) its row is
skipped and says so.

The physical floor is measured here too: copying the 80 MB matrix into an array
that was already touched (the bytes hard debias must read and write: 80 MB in, 80 MB
out) and into a fresh one (plus the page faults of a new result, which an in-memory
transform cannot avoid).

The two results are compared by kind of row: neutralized (neither gender-specific
nor equalized by either tool), gender-specific, and equalized. The last may differ
by design: WEFE equalizes the vectors as they were before neutralization, where
Bolukbasi et al. (and embdebias) equalize the neutralized ones, and WEFE equalizes
a word once for every pair it is in (the last wins), embdebias once, with its first.

Usage::

    python benchmarks/bench_hard_wefe.py                       # 400,000 x 50, 3 repeats
    python benchmarks/bench_hard_wefe.py --repeats 5 --out benchmarks/results/hard_wefe.md
    python benchmarks/bench_hard_wefe.py --limit 50000         # a smoke run
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import os
import platform
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from embdebias import wordlists  # noqa: E402
from embdebias.debias import HardDebias  # noqa: E402

WEFE_MISSING = ("WEFE not installed: pip install wefe, then reinstall numpy and scipy at the project's versions "
                "(WEFE 1.0.1 pins numpy <= 1.26.4 and scipy < 1.13, which breaks cvxpy)")


def published_lists() -> dict:
    """Bolukbasi et al.'s lists as bundled, the same for both tools."""
    return {"definitional": wordlists.definitional_pairs("published"),
            "equalize": wordlists.equalize_pairs("published"),
            "gender_specific": wordlists.gender_specific("published")}


def ours(emb, lists: dict, out=None):
    """``(seconds, fitted HardDebias, result)`` of our fit + transform."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pairs missing from GloVe are reported, not errors
        hd = HardDebias(definitional=lists["definitional"], equalize=lists["equalize"],
                        gender_specific=lists["gender_specific"]).fit(emb)
        result = hd.transform(emb, out)
    return time.perf_counter() - t0, hd, result


def ours_native(emb, lists: dict, workdir: Path) -> float:
    """Seconds of our fit + transform into a native-format directory (removed afterwards)."""
    target = workdir / "hard.embd"
    try:
        return ours(emb, lists, target)[0]
    finally:
        shutil.rmtree(target, ignore_errors=True)


def wefe_model(emb):
    """WEFE's model of the same vectors, or None when WEFE is not installed."""
    try:
        from wefe.word_embedding_model import WordEmbeddingModel
    except ImportError:
        return None
    return WordEmbeddingModel(emb.to_gensim(), emb.name)


def wefe(model, lists: dict):
    """``(seconds, fitted WEFE HardDebias, result model)``; WEFE's prints and bars silenced."""
    from wefe.debias.hard_debias import HardDebias as WefeHardDebias

    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hd = WefeHardDebias().fit(model, definitional_pairs=[list(p) for p in lists["definitional"]],
                                  equalize_pairs=[list(p) for p in lists["equalize"]])
        result = hd.transform(model, ignore=list(lists["gender_specific"]), copy=True)
    return time.perf_counter() - t0, hd, result


def floor_and_pass(vectors: np.ndarray, hd) -> dict:
    """Seconds (best of 3) of the streaming floor and of our pass over the rows alone.

    ``copy_warm``: copying the matrix into an array already touched (the bytes hard
    debias must move: every row read once and written once); ``copy_fresh``: into a
    new array (plus the page faults an in-memory result cannot avoid);
    ``neutralize``: :func:`~embdebias.debias.hard.neutralize_rows` over all rows into
    a new array, the transform without its word lookups and equalize rows.
    """
    from embdebias.debias.hard import neutralize_rows

    basis = hd.subspace_.components_.astype(np.float32)
    keep = np.zeros(len(vectors), dtype=bool)
    keep[: len(hd.gender_specific_)] = True  # as many kept rows; which ones does not change the work
    touched = np.empty_like(vectors)
    np.copyto(touched, vectors)
    times = {"copy_warm": [], "copy_fresh": [], "neutralize": []}
    for _ in range(3):
        t0 = time.perf_counter()
        np.copyto(touched, vectors)
        times["copy_warm"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        np.copyto(np.empty_like(vectors), vectors)
        times["copy_fresh"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        neutralize_rows(vectors, np.empty_like(vectors), keep, basis)
        times["neutralize"].append(time.perf_counter() - t0)
    return {k: min(v) for k, v in times.items()}


def compare(emb, hd, result, wefe_hd, wefe_result, lists: dict) -> dict:
    """Largest differences between the two results: neutralized, gender-specific and equalized rows."""
    words = emb.words.tolist()
    specific = set(lists["gender_specific"])
    wefe_equalized = {w for pair in wefe_hd.equalize_pairs_embeddings_ for w in pair}
    ours_equalized = {w for pair in hd.equalize_pairs_ for w in pair}
    equalized = wefe_equalized | ours_equalized
    eq_rows = np.array([w in equalized for w in words])
    neutral = np.array([w not in specific for w in words]) & ~eq_rows
    specific_rows = ~neutral & ~eq_rows
    theirs, mine = wefe_result.wv.vectors, np.asarray(result.vectors)
    eq_diff = np.abs(mine[eq_rows] - theirs[eq_rows]).max(axis=1)
    return {"neutral_rows": int(neutral.sum()),
            "neutral_max_diff": float(np.abs(mine[neutral] - theirs[neutral]).max()),
            "specific_rows": int(specific_rows.sum()),
            "specific_max_diff": float(np.abs(mine[specific_rows] - theirs[specific_rows]).max()),
            "equalized_rows": int(eq_rows.sum()), "equalized_max_diff": float(eq_diff.max()),
            "equalized_rows_over_1e-4": int((eq_diff > 1e-4).sum()),
            "wefe_only_equalized": len(wefe_equalized - ours_equalized),
            "direction_cosine": direction_cosine(hd, wefe_hd)}


def measure(load, repeats: int = 3, workdir=None, log=print) -> dict:
    """Every timing of the module docstring, interleaved, best of ``repeats``; with the agreement.

    ``load()`` gives the embedding. Ours gets a freshly loaded one for every run
    (loaded outside the timing), so every run pays what a user's first one does: the
    word lookups, the check for NaN and infinity, the first reads of the memory map.
    WEFE's model is built once, outside the timing, with gensim's word index.
    """
    lists = published_lists()
    emb = load()
    model = wefe_model(emb)
    times = {"ours": [], "ours_native": [], "wefe": [], "copy_warm": [], "copy_fresh": [], "neutralize": []}
    with tempfile.TemporaryDirectory(prefix="bench_hard_wefe_", dir=workdir) as tmp:
        for r in range(repeats):
            secs, hd, result = ours(load(), lists)
            times["ours"].append(secs)
            if model is not None:
                times["wefe"].append(wefe(model, lists)[0])
            times["ours_native"].append(ours_native(load(), lists, Path(tmp)))
            for key, secs in floor_and_pass(np.asarray(emb.vectors), hd).items():
                times[key].append(secs)
            log(f"  run {r + 1}/{repeats}: ours {times['ours'][-1]:.3f} s, "
                + (f"WEFE {times['wefe'][-1]:.2f} s, " if model is not None else "")
                + f"ours -> native {times['ours_native'][-1]:.3f} s, neutralize pass "
                  f"{times['neutralize'][-1]:.3f} s, copy {times['copy_warm'][-1]:.3f} s")
    out = {"rows": len(emb), "dim": emb.dim, "repeats": repeats, "times": times,
           "best": {k: min(v) for k, v in times.items() if v}}
    if model is not None:
        # Ratios of each interleaved run (WEFE / ours of the same round), the steadier figure.
        out["run_ratios"] = [w / o for w, o in zip(times["wefe"], times["ours"], strict=True)]
        out["agreement"] = agreement(emb, model, lists, log)
    return out


def agreement(emb, model, lists: dict, log=print) -> dict:
    """The two results compared (one more run of each, untimed; see :func:`compare`).

    GloVe is lower-cased, so our subspace reads the definitional pair Mary/John as
    mary/john, while WEFE drops it: the two directions differ. WEFE is therefore run
    once more, on the pairs as we resolved them, so that the neutralization itself is
    compared; the cosine of the directions on the published pairs is reported too.
    """
    _, hd, result = ours(emb, lists)
    _, wefe_published, _ = wefe(model, lists)
    same_pairs = dict(lists, definitional=hd.subspace_.pairs_used_)
    _, wefe_hd, wefe_result = wefe(model, same_pairs)
    out = compare(emb, hd, result, wefe_hd, wefe_result, lists)
    out["published_direction_cosine"] = direction_cosine(hd, wefe_published)
    log(f"  agreement: {out}")
    return out


def direction_cosine(hd, wefe_hd) -> float:
    direction = wefe_hd.bias_direction_ / np.linalg.norm(wefe_hd.bias_direction_)
    return abs(float(hd.subspace_.components_[0] @ direction))


def table_rows(m: dict) -> list[dict]:
    """The measurement as rows of the combined benchmark table (``_table.Row`` fields)."""
    size = f"{m['rows']:,} x {m['dim']}"
    best = m["best"]
    gbs = 2 * m["rows"] * m["dim"] * 4 / best["copy_warm"] / 1e9
    floor = (f"floor: copying the matrix {best['copy_warm'] * 1e3:.0f} ms ({gbs:.1f} GB/s moved), into a fresh "
             f"array {best['copy_fresh'] * 1e3:.0f} ms; our pass over the rows alone {best['neutralize'] * 1e3:.0f} ms "
             f"({best['neutralize'] / best['copy_fresh']:.1f}x the fresh copy)")
    rows = []
    if "wefe" in best:
        a = m["agreement"]
        ratios = ", ".join(f"{r:.1f}" for r in m["run_ratios"])
        note = (f"best of {m['repeats']} interleaved, ours from a fresh load each time; per-run ratios {ratios}; "
                f"{floor}; max |diff| vs WEFE (given the "
                f"definitional pairs as we read them, Mary/John as mary/john) {a['neutral_max_diff']:.1e} on "
                f"{a['neutral_rows']:,} neutralized rows, {a['specific_max_diff']:.1e} on {a['specific_rows']:,} "
                f"gender-specific rows, {a['equalized_max_diff']:.1e} on {a['equalized_rows']} equalized rows; "
                f"|cos| of the two directions "
                f"{a['direction_cosine']:.7f}, on the published pairs {a['published_direction_cosine']:.4f} "
                f"(WEFE drops Mary/John)")
        rows.append({"benchmark": "hard debias fit + transform, in memory (GloVe, published lists)", "size": size,
                     "ours_s": best["ours"], "baseline": "WEFE HardDebias fit + transform",
                     "baseline_s": best["wefe"], "ratio": best["wefe"] / best["ours"], "note": note})
    else:
        rows.append({"benchmark": "hard debias fit + transform, in memory (GloVe, published lists)", "size": size,
                     "ours_s": best["ours"], "note": f"{WEFE_MISSING}; {floor}"})
    rows.append({"benchmark": "hard debias fit + transform, into a native file", "size": size,
                 "ours_s": best["ours_native"], "baseline": "WEFE in memory" if "wefe" in best else "",
                 "baseline_s": best.get("wefe"),
                 "ratio": best["wefe"] / best["ours_native"] if "wefe" in best else None,
                 "note": f"best of {m['repeats']} interleaved; written chunk by chunk, atomically"})
    return rows


def run(repeats: int = 3, limit=None, workdir=None, log=print) -> list[dict]:
    """Load GloVe 6B 50d into memory and measure (used by benchmarks/run_all.py)."""
    from embdebias.io import load_default

    return table_rows(measure(lambda: load_default(limit=limit), repeats, workdir, log))


def markdown(rows: list[dict], m_env: str, command: str) -> str:
    from _table import _cells, markdown_table, normalise

    body = [_cells(r)[:5] + [r.note] for r in normalise("hard", rows)]
    return (f"# Hard debias: embdebias against WEFE\n\n`{command}` ({m_env})\n\n"
            + markdown_table(["benchmark", "size", "ours", "baseline", "ratio", "note"], body) + "\n")


def environment() -> str:
    try:
        from importlib.metadata import version

        wefe_version = f"WEFE {version('wefe')}"
    except Exception:  # noqa: BLE001 - not installed
        wefe_version = "WEFE not installed"
    return (f"{datetime.date.today().isoformat()}; python {platform.python_version()}, numpy {np.__version__}, "
            f"{wefe_version}, {os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3, help="interleaved runs of each (best kept)")
    ap.add_argument("--limit", type=int, default=None, help="only the first LIMIT words of GloVe")
    ap.add_argument("--workdir", default=None, help="where the native output goes (default: the temp dir)")
    ap.add_argument("--out", default=None, help="also write the table as Markdown here")
    args = ap.parse_args(argv)
    from _table import format_table, normalise

    rows = run(args.repeats, args.limit, args.workdir)
    print(format_table(normalise("hard", rows)))
    if args.out:
        from _measure import write_page

        command = "python benchmarks/bench_hard_wefe.py " + " ".join(argv if argv is not None else sys.argv[1:])
        write_page(args.out, markdown(rows, environment(), command.strip()))


if __name__ == "__main__":
    main()
