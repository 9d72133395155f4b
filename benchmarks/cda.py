"""Debias the corpus or the vectors? CDA, WED and both on a real corpus (Lu et al. 2020).

Run:  python benchmarks/cda.py [--workdir DIR] [--out-dir benchmarks/results]

On Debian's dict-gcide (the 1913 Webster with its quotations, about 4 million words
once extracted, male-skewed; see ``gcide.py``), for Word2Vec and for fastText:

* **original**: trained on the corpus;
* **CDA**: trained on its counterfactual augmentation (two-sided, grammatical, Lu et
  al.'s pairs; ``embdebias cda``), streamed to disk once;
* **WED**: the original, hard-debiased (Bolukbasi et al.'s algorithm, the published
  lists);
* **CDA+WED**: the CDA embedding, hard-debiased.

All four are scored by the full evaluator (WEAT, RNSB, ECT, BAT, direct bias, indirect
bias, residual tests, extrinsic probe, quality) plus Lu et al.'s aggregate occupation
bias (AOB, signed AOB) for embeddings. Every configuration's direct bias on the
original direction, AOB and their intervals go to ``<out-dir>/cda.md`` with the
per-step timings, the full reports to ``<out-dir>/cda_<family>.md`` and a figure to
``<out-dir>/cda.png``. The corpus and the trained embeddings stay in the work directory
(never committed); the originals are kept for ``reproduce.py --families``.

Every figure is measured in this invocation; training is seeded but uses both cores, so
the vectors (not the conclusions) vary a little from run to run (see embdebias.train).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import gcide  # noqa: E402

CONFIGS = ("original", "CDA", "WED", "CDA+WED")
FAMILIES = ("word2vec", "fasttext")
#: Rows of the summary table: (metric, test, statistic, label).
SUMMARY = (
    ("direct_bias", "professions", "direct_bias_original", "DirectBias (original direction)"),
    ("direct_bias", "professions", "direct_bias_own", "DirectBias (own direction)"),
    ("occupation_bias", "lu2020", "aob", "AOB (Lu et al.)"),
    ("occupation_bias", "lu2020", "signed_aob", "signed AOB (+: male)"),
    ("weat", "gender_career_family", "effect_size", "WEAT career/family d"),
    ("weat", "gender_man_roles_woman_roles", "effect_size", "WEAT man/woman roles d"),
    ("rnsb", "identity terms", "rnsb", "RNSB"),
    ("ect", "professions", "spearman", "ECT professions"),
    ("bat", "all", "definition", "BAT Definition"),
    ("bat", "all", "stereotype", "BAT Stereotype"),
    ("residual", "gender", "cluster_accuracy", "residual: clustering accuracy"),
    ("residual", "gender", "classification_accuracy", "residual: SVM accuracy"),
    ("extrinsic", "emotion", "cf_pcm", "extrinsic: counterfactual PCM (emotion)"),
    ("extrinsic", "emotion", "score_gap", "extrinsic: score gap f - m (emotion)"),
    ("similarity", "wordsim353", "spearman", "WordSim353 rho"),
    ("analogy", "google_analogy", "accuracy", "analogy accuracy"),
)


def _clock(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def augment(corpus: Path, workdir: Path, timings: dict) -> tuple[Path, dict]:
    from embdebias.cda import augment_file

    out = workdir / "gcide.cda.txt"
    if out.is_file():
        timings["cda (reused)"] = 0.0
        return out, json.loads((workdir / "cda_stats.json").read_text())
    seconds, stats = _clock(lambda: augment_file(corpus, out))
    timings["cda"] = seconds
    info = {**stats.to_dict(), "seconds": seconds, "mb_per_s": corpus.stat().st_size / 1e6 / seconds}
    (workdir / "cda_stats.json").write_text(json.dumps(info, indent=1))
    return out, info


def train_all(corpus: Path, cda: Path, workdir: Path, params: dict, timings: dict) -> dict:
    from embdebias import io
    from embdebias.train import train_embedding

    embs = {}
    for family in FAMILIES:
        for config, src in (("original", corpus), ("CDA", cda)):
            out = workdir / f"{family}-{config.lower()}.embd"
            if out.exists():
                embs[(family, config)] = io.load(out, name=config)
                timings[f"train {family} {config} (reused)"] = 0.0
                continue
            seconds, emb = _clock(lambda s=src, o=out, f=family: train_embedding(s, o, f, **params))
            timings[f"train {family} {config}"] = seconds
            embs[(family, config)] = io.load(out, name=config)
    return embs


def debias_all(embs: dict, timings: dict) -> None:
    from embdebias.debias import HardDebias

    for family in FAMILIES:
        for src, dst in (("original", "WED"), ("CDA", "CDA+WED")):
            seconds, out = _clock(lambda e=embs[(family, src)]: HardDebias().fit(e).transform(e, name=dst))
            timings[f"hard debias {family} {src}"] = seconds
            embs[(family, dst)] = out


def evaluate_all(embs: dict, timings: dict, bootstrap: int, max_missing: float) -> dict:
    from embdebias.evaluate import DEFAULT_SUITE, evaluate

    reports = {}
    for family in FAMILIES:
        columns = {c: embs[(family, c)] for c in CONFIGS}
        seconds, rep = _clock(lambda c=columns: evaluate(c, suite=(*DEFAULT_SUITE, "occupation_bias"),
                                                          bootstrap=bootstrap, max_missing=max_missing))
        timings[f"evaluate {family} (4 columns)"] = seconds
        reports[family] = rep
    return reports


def _cell(rep, metric, test, stat, config) -> str:
    v = rep.values.get((metric, test, stat), {}).get(config)
    if v is None:
        return "n/a"
    lo, hi = rep.interval(metric, test, stat, config) or (None, None)
    flat = any(c["embedding"] == config and (c["metric"], c["test"], c["statistic"]) == (metric, test, stat)
               and c["outcome"] == "no significant change" for c in rep.comparisons)
    ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else ""
    return f"{v:.3f}{ci}{' †' if flat else ''}"


def summary_table(reports: dict) -> str:
    header = "| measure | " + " | ".join(f"{f} {c}" for f in FAMILIES for c in CONFIGS) + " |"
    lines = [header, "|---" + "|---:" * (len(FAMILIES) * len(CONFIGS)) + "|"]
    for metric, test, stat, label in SUMMARY:
        cells = [_cell(reports[f], metric, test, stat, c) for f in FAMILIES for c in CONFIGS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def figure(reports: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    panels = (("occupation_bias", "lu2020", "aob", "AOB (Lu et al.)"),
              ("direct_bias", "professions", "direct_bias_own", "DirectBias, own direction"),
              ("extrinsic", "emotion", "cf_pcm", "extrinsic counterfactual PCM"))
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.4))
    x = np.arange(len(CONFIGS))
    for ax, (metric, test, stat, title) in zip(axes, panels):
        for k, family in enumerate(FAMILIES):
            rep = reports[family]
            vals = [rep.values.get((metric, test, stat), {}).get(c) for c in CONFIGS]
            intervals = [(rep.interval(metric, test, stat, c) if (metric, test, stat) in rep.cells else None)
                         or (None, None) for c in CONFIGS]
            lo, hi = [i[0] for i in intervals], [i[1] for i in intervals]
            v = np.array([np.nan if a is None else a for a in vals], dtype=float)
            err = np.array([[0 if (a is None or b is None) else a - b for a, b in zip(vals, lo)],
                            [0 if (a is None or b is None) else b - a for a, b in zip(vals, hi)]], dtype=float)
            ax.bar(x + (k - 0.5) * 0.38, v, 0.38, yerr=np.abs(err), capsize=2, label=family)
        ax.set_xticks(x, CONFIGS, fontsize=8)
        ax.set_title(title, fontsize=9)
    axes[0].legend(fontsize=8)
    fig.suptitle("GCIDE: original / CDA / WED / CDA+WED (95% bootstrap intervals)", fontsize=10)
    fig.tight_layout()
    tmp = path.with_name(path.stem + ".tmp" + path.suffix)
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default=os.path.expanduser("~/.cache/embdebias-bench/cda"),
                    help="corpus, augmented corpus and trained embeddings (reused by a re-run)")
    ap.add_argument("--out-dir", default=str(HERE / "results"))
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--min-count", type=int, default=5)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-missing", type=float, default=0.6,
                    help="largest share of a word set that may be missing (default 0.6: a 1913 dictionary "
                         "lacks many modern professions and first names; every report lists what was lost)")
    args = ap.parse_args(argv)
    workdir, out_dir = Path(args.workdir), Path(args.out_dir)
    workdir.mkdir(parents=True, exist_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    timings: dict = {}
    seconds, corpus = _clock(lambda: gcide.corpus(workdir))
    timings["extract corpus"] = seconds
    counts = gcide.word_counts(corpus)
    cda, cda_info = augment(corpus, workdir, timings)
    params = dict(vector_size=args.dim, epochs=args.epochs, min_count=args.min_count, seed=args.seed)
    embs = train_all(corpus, cda, workdir, params, timings)
    debias_all(embs, timings)
    reports = evaluate_all(embs, timings, args.bootstrap, args.max_missing)
    total = time.perf_counter() - t_start
    for family, rep in reports.items():
        _write(out_dir / f"cda_{family}.md", f"# {family} on GCIDE: original / CDA / WED / CDA+WED\n\n"
                                             + rep.to_markdown(missing=False) + "\n")
    figure(reports, out_dir / "cda.png")
    vocab = {f: len(embs[(f, "original")]) for f in FAMILIES}
    lines = [
        "# CDA vs WED on GCIDE (Lu et al. 2020's comparison, for embeddings)", "",
        f"`python benchmarks/cda.py` ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores): "
        f"{total / 60:.1f} min in all.", "",
        f"Corpus: Debian dict-gcide as plain text, {counts['words']:,} words, {corpus.stat().st_size / 1e6:.1f} MB "
        f"(he {counts['he']:,}, she {counts['she']:,}, his {counts['his']:,}, her {counts['her']:,}, "
        f"man {counts['man']:,}, woman {counts['woman']:,}).",
        f"CDA (two-sided, grammatical, Lu et al.'s pairs): {cda_info.get('lines_read', 0):,} lines read, "
        f"{cda_info.get('lines_augmented', 0):,} augmented, {cda_info.get('words_swapped', 0):,} words swapped, "
        f"{cda_info.get('mb_per_s', 0):.1f} MB/s.",
        f"Training: {args.dim} dimensions, {args.epochs} epochs, min_count {args.min_count}, skip-gram, seed "
        f"{args.seed}, both cores; vocabularies {', '.join(f'{f} {n:,}' for f, n in vocab.items())} words.",
        "WED: hard debias with Bolukbasi et al.'s published lists. Values: 95% bootstrap intervals; "
        "† no significant change from the original (paired bootstrap).",
        f"Word sets may lose up to {args.max_missing:.0%} of their words to the 1913 vocabulary (the evaluator's "
        f"default is 20%); the full reports list the words lost and the items scored per row. "
        f"The CDA columns are separately trained spaces: for them only the own-direction rows are meaningful "
        f"(the 'original direction' is another space's axis), and the residual tests use the original's word "
        f"bias only to choose their words.", "",
        summary_table(reports), "",
        "Full reports: `cda_word2vec.md`, `cda_fasttext.md`; figure: `cda.png`.", "",
        "| step | seconds |", "|---|---:|", *(f"| {k} | {v:.1f} |" for k, v in timings.items()), "",
    ]
    _write(out_dir / "cda.md", "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
